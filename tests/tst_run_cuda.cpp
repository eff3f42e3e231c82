// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The Studio's Run on device cuda (RunController, off the UI thread): the GPU reference, arena,
// per-tensor and pool runs, the CPU comparison, progress and cancel. tst_run_cuda uses the Studio's
// own build and skips without a CUDA device; tst_run_cuda_emulated links the executor built against
// the test emulation of CUDA (tests/cudaemu) and registers it, so it always runs.
#include "cudadevice.h"
#include "runcontroller.h"

#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"

#ifdef MEMPLAN_CUDA_EMULATION
#include "cudabackend.h"
#include "cudaemu.h"
#endif

#include <QSignalSpy>
#include <QTest>

namespace {
constexpr int kTimeoutMs = 300000;

struct Loaded {
    std::shared_ptr<const core::Workload> workload;
    core::Plan plan;
};

Loaded load(const std::string& spec)
{
    auto w = core::loadWorkload(spec, {});
    if (!w)
        qFatal("%s", w.error().message.c_str());
    Loaded l;
    l.workload = std::make_shared<const core::Workload>(std::move(*w));
    auto plan = core::runPlanner(*core::plannerByName("greedy-by-size"), l.workload->problem);
    if (!plan || !core::validatePlan(l.workload->problem, *plan).ok())
        qFatal("no valid plan for %s", spec.c_str());
    l.plan = std::move(*plan);
    return l;
}
} // namespace

class TestRunCuda : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
#ifdef MEMPLAN_CUDA_EMULATION
        core::registerExecutorBackend(&gpu::cudaBackend()); // linked in: no plugin to load
#endif
        const auto& status = cudaDeviceStatus();
        if (!status.available)
            QSKIP(qPrintable(QStringLiteral("no CUDA device: ") + status.reason));
        qInfo("device: %s", qPrintable(status.description));
    }

#ifdef MEMPLAN_CUDA_EMULATION
    // Every run and every cancel leaves nothing allocated, and nothing touched memory it should not.
    void cleanup()
    {
        const auto live = cudaemu::live();
        QCOMPARE(live.deviceBlocks + live.pinnedBlocks + live.streams + live.events + live.blasHandles, 0);
        QVERIFY(cudaemu::violations().empty());
    }
#endif

    // Four GPU runs and a CPU run of example:cnn, reported as one measurement with progress on the way.
    void runsOnTheDevice()
    {
        const auto l = load("example:cnn");
        RunController controller;
        QSignalSpy finished(&controller, &RunController::finished);
        QSignalSpy failed(&controller, &RunController::failed);
        QSignalSpy progress(&controller, &RunController::progress);
        controller.start(l.workload, l.plan, 2, RunDevice::Cuda);
        QVERIFY(controller.isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, kTimeoutMs);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
        QVERIFY(!controller.isRunning());
        const auto m = finished.at(0).at(0).value<std::shared_ptr<const RunMeasurement>>();
        QVERIFY(m);
        QCOMPARE(m->device, std::string("cuda"));
        QVERIFY(!m->deviceName.empty());
        QCOMPARE(m->repeat, 2);
        QVERIFY2(m->arenaMatches && m->perTensorMatches && m->poolMatches, m->mismatch.c_str());
        QVERIFY(m->pool.has_value());
        QVERIFY2(m->cpuCheck && m->cpuCheck->firstOff.empty(), m->cpuCheckNote.c_str());
        QCOMPARE(m->arena.opsHost, 0);
        QCOMPARE(m->arena.stepPeakBytes, core::lowerBound(l.workload->problem));
        QCOMPARE(m->perTensor.stepPeakBytes, core::lowerBound(l.workload->problem));
        QVERIFY(m->pool->stepPeakBytes >= core::lowerBound(l.workload->problem));
        QVERIFY(!progress.isEmpty());
        int last = 0;
        for (const auto& p : progress) {
            QVERIFY(p.at(0).toInt() >= last);
            last = p.at(0).toInt();
        }
        QCOMPARE(last, progress.last().at(1).toInt());
    }

    // Cancel at the first progress: cancelled(), no result, and the controller is idle.
    void cancelStopsTheRun()
    {
        const auto l = load("example:transformer");
        RunController controller;
        QSignalSpy finished(&controller, &RunController::finished);
        QSignalSpy cancelled(&controller, &RunController::cancelled);
        connect(&controller, &RunController::progress, &controller, [&controller] { controller.cancel(); });
        controller.start(l.workload, l.plan, 3, RunDevice::Cuda);
        QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, kTimeoutMs);
        controller.waitForIdle();
        QCoreApplication::processEvents();
        QCOMPARE(finished.count(), 0);
        QVERIFY(!controller.isRunning());
    }
};

QTEST_GUILESS_MAIN(TestRunCuda)
#include "tst_run_cuda.moc"
