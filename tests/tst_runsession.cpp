// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The executors by device name (core/exec/backend.h) and the one run path over them
// (core/exec/runsession.h): the CPU session, the roofline it carries, the arena-only scope, a broken
// plan caught, a device session (pool run, CPU reference, tolerance check) on a stand-in device, and
// the command line without its modules.
#include "clirun.h"

#include "cost/opcost.h"
#include "exec/backend.h"
#include "exec/runsession.h"
#include "planners/planner.h"
#include "planners/validate.h"

#include <QFile>

#include <atomic>
#include <cmath>
#include <memory>
#include <QTemporaryDir>
#include <QTest>

namespace {

constexpr const char* kMissingPlugin = "/nonexistent/libmemplan-cuda.so";

struct Loaded {
    core::Workload workload;
    core::Plan plan;
};

Loaded load(const std::string& spec)
{
    auto w = core::loadWorkload(spec, {});
    if (!w)
        qFatal("%s", w.error().message.c_str());
    auto plan = core::runPlanner(*core::plannerByName("greedy-by-size"), w->problem);
    if (!plan || !core::validatePlan(w->problem, *plan).ok())
        qFatal("no valid plan for %s", spec.c_str());
    return { std::move(*w), std::move(*plan) };
}

// A device for the session's device path: the CPU executor under the name cuda, with a "pool"
// (per-tensor allocation); it counts its runs by allocation.
class StandInDevice final : public core::ExecutorBackend {
public:
    mutable int runs[3] = { 0, 0, 0 };
    std::string_view name() const override { return "cuda"; }
    bool available(std::string*) const override { return true; }
    std::string description() const override { return "stand-in device"; }
    bool hasPool() const override { return true; }
    core::Expected<core::Measurement> run(const core::Graph& graph, const core::Schedule& schedule, const core::PlanProblem& problem,
        const core::Plan& plan, const std::vector<core::TensorIndex>& bufferTensor, const core::RunOptions& options,
        core::DeviceAllocation allocation) const override
    {
        ++runs[int(allocation)];
        return core::cpuExecutor().run(graph, schedule, problem, plan, bufferTensor, options,
            allocation == core::DeviceAllocation::Pool ? core::DeviceAllocation::PerTensor : allocation);
    }
};

// `plan` with one activation moved onto another that is still live when it is written: outputs change.
core::Plan corrupted(const core::Workload& w, const core::Plan& plan)
{
    const auto& buffers = w.problem.buffers;
    for (std::size_t a = 0; a < buffers.size(); ++a)
        for (std::size_t b = 0; b < buffers.size(); ++b)
            if (buffers[a].kind == core::TensorKind::Activation && buffers[a].lifetime.start < buffers[b].lifetime.start
                && buffers[b].lifetime.start + 1 < buffers[a].lifetime.end && buffers[b].size <= buffers[a].size) {
                auto bad = plan;
                bad.offsets[b] = plan.offsets[a];
                return bad;
            }
    qFatal("no pair of buffers to overlap");
}

} // namespace

class TestRunSession : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        // Before any lookup of cuda in this process: the first one decides.
        qputenv("MEMPLAN_CUDA_PLUGIN", kMissingPlugin);
    }

    void backendsByName()
    {
        const auto cpu = core::executorBackend("cpu");
        QVERIFY(cpu);
        QCOMPARE(*cpu, &core::cpuExecutor());
        QVERIFY((*cpu)->available());
        QVERIFY(!(*cpu)->hasPool());
        const auto unknown = core::executorBackend("tpu");
        QVERIFY(!unknown);
        QCOMPARE(unknown.error().code, core::ErrorCode::InvalidArgument);
        const auto cuda = core::executorBackend("cuda");
        QVERIFY(!cuda);
        QCOMPARE(cuda.error().code, core::ErrorCode::NoGpu);
        QCOMPARE(QString::fromStdString(cuda.error().message), QStringLiteral("MEMPLAN_CUDA_PLUGIN=%1: no such file").arg(kMissingPlugin));
    }

    void cpuSession()
    {
        const auto l = load("example:cnn");
        core::RunSessionRequest request;
        request.workload = &l.workload;
        request.plan = &l.plan;
        request.options.repeat = 2;
        std::vector<std::pair<int, int>> progress;
        request.options.progress = [&progress](int done, int total) { progress.emplace_back(done, total); };
        const auto session = core::runSession(request);
        QVERIFY2(session, session ? "" : session.error().message.c_str());
        QCOMPARE(session->device, std::string("cpu"));
        QVERIFY2(session->allMatch(), session->firstMismatch().c_str());
        QCOMPARE(session->arena.allocation, core::Allocation::Arena);
        QCOMPARE(session->perTensor.allocation, core::Allocation::PerTensor);
        QCOMPARE(session->arena.arenaBytes, l.plan.arenaSize);
        QVERIFY(!session->pool);
        QVERIFY(session->cpuReference);
        QVERIFY(!session->cpuCheck);
        // Progress over the three runs: one reference pass, then two timed passes of each mode.
        const int steps = l.workload.schedule.steps();
        QVERIFY(!progress.empty());
        QCOMPARE(progress.back(), std::make_pair(steps * 5, steps * 5));
        for (std::size_t i = 1; i < progress.size(); ++i)
            QVERIFY(progress[i].first >= progress[i - 1].first);
    }

    // The roofline prediction rides on the session: one time per step, summing to scheduleCost's.
    void rooflineOnTheSession()
    {
        const auto l = load("example:cnn");
        const auto profile = core::defaultDevice();
        core::RunSessionRequest request;
        request.workload = &l.workload;
        request.plan = &l.plan;
        auto session = core::runSession(request);
        QVERIFY2(session, session ? "" : session.error().message.c_str());
        QVERIFY(session->rooflineStepSeconds.empty()); // none asked for
        QCOMPARE(session->rooflineSeconds, 0.0);
        request.costProfile = &profile;
        session = core::runSession(request);
        QVERIFY2(session, session ? "" : session.error().message.c_str());
        QCOMPARE(session->costProfile, profile.name);
        QCOMPARE(int(session->rooflineStepSeconds.size()), l.workload.schedule.steps());
        const double whole = core::scheduleCost(*l.workload.graph, l.workload.schedule, profile).seconds;
        QVERIFY(whole > 0);
        QVERIFY(std::abs(session->rooflineSeconds - whole) <= 1e-12 * whole);
        for (const double seconds : session->rooflineStepSeconds)
            QVERIFY(seconds >= 0);
    }

    // RunScope::ArenaOnly (the chip view's timings): the arena runs alone, repeated; nothing else runs.
    void arenaOnlyScope()
    {
        static StandInDevice device; // counts runs by allocation
        const auto l = load("example:cnn");
        core::RunSessionRequest request;
        request.workload = &l.workload;
        request.plan = &l.plan;
        request.backend = &device;
        request.scope = core::RunScope::ArenaOnly;
        request.options.repeat = 3;
        int lastDone = 0, lastTotal = 0;
        request.options.progress = [&](int done, int total) { lastDone = done, lastTotal = total; };
        auto session = core::runSession(request);
        QVERIFY2(session, session ? "" : session.error().message.c_str());
        QCOMPARE(device.runs[int(core::DeviceAllocation::Arena)], 1);
        QCOMPARE(device.runs[int(core::DeviceAllocation::PerTensor)], 0);
        QCOMPARE(device.runs[int(core::DeviceAllocation::Pool)], 0);
        QCOMPARE(session->arena.arenaBytes, l.plan.arenaSize);
        QVERIFY(session->arena.latencyMs.median > 0);
        QVERIFY(session->reference.outputs.empty()); // no reference run
        QVERIFY(!session->cpuReference);
        QCOMPARE(lastDone, lastTotal);
        QCOMPARE(lastTotal, 3 * l.workload.schedule.steps());
        // Cancelled before it starts: the run says so.
        auto flag = std::make_shared<std::atomic<bool>>(true);
        request.options.cancel = core::CancelToken(flag);
        session = core::runSession(request);
        QVERIFY(!session);
        QCOMPARE(session.error().code, core::ErrorCode::Cancelled);
    }

    void brokenPlanCaught()
    {
        const auto l = load("example:cnn");
        const auto bad = corrupted(l.workload, l.plan);
        QVERIFY(!core::validatePlan(l.workload.problem, bad).ok());
        core::RunSessionRequest request;
        request.workload = &l.workload;
        request.plan = &bad;
        const auto session = core::runSession(request);
        QVERIFY2(session, session ? "" : session.error().message.c_str());
        QVERIFY(!session->arenaMismatch.empty());
        QVERIFY(session->perTensorMismatch.empty()); // per tensor ignores the offsets
        QVERIFY2(session->firstMismatch().rfind("arena run: ", 0) == 0, session->firstMismatch().c_str());
    }

    void deviceSession()
    {
        static StandInDevice device;
        core::registerExecutorBackend(&device);
        const auto found = core::executorBackend("cuda");
        QVERIFY(found);
        QCOMPARE(*found, &device);
        const auto l = load("example:cnn");
        core::RunSessionRequest request;
        request.workload = &l.workload;
        request.plan = &l.plan;
        request.backend = *found;
        request.options.repeat = 1;
        const auto session = core::runSession(request);
        QVERIFY2(session, session ? "" : session.error().message.c_str());
        QCOMPARE(session->device, std::string("cuda"));
        QCOMPARE(session->deviceName, std::string("stand-in device"));
        QVERIFY2(session->allMatch(), session->firstMismatch().c_str());
        QVERIFY(session->pool);
        // The device's own reference and arena run, its per-tensor run, its pool run.
        QCOMPARE(device.runs[int(core::DeviceAllocation::Arena)], 2);
        QCOMPARE(device.runs[int(core::DeviceAllocation::PerTensor)], 1);
        QCOMPARE(device.runs[int(core::DeviceAllocation::Pool)], 1);
        QVERIFY(session->cpuReference);
        QVERIFY(session->cpuCheck);
        QVERIFY(session->cpuCheck->within());
        QCOMPARE(session->cpuCheck->maxRelativeError, 0.0);
    }

    // memplan alone, without the render module and the CUDA plugin next to it: one clear line each.
    void commandLineWithoutModules()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString alone = dir.filePath(QStringLiteral("memplan"));
        QVERIFY(QFile::copy(QStringLiteral(MEMPLAN_CLI), alone));
        QFile::setPermissions(alone, QFileDevice::ReadOwner | QFileDevice::ExeOwner);
        auto environment = QProcessEnvironment::systemEnvironment();
        environment.remove(QStringLiteral("MEMPLAN_CUDA_PLUGIN"));
        const auto render = runProgram(alone, { QStringLiteral("render"), QStringLiteral("example:hotel"), QStringLiteral("--out"),
                                                  dir.filePath(QStringLiteral("views")) },
            environment);
        QCOMPARE(render.exitCode, 1);
        QVERIFY2(render.err.startsWith(QStringLiteral("memplan: render: the views' drawing module %1/libmemplan-render.so is missing")
                                           .arg(dir.path())),
            qPrintable(render.err));
        QCOMPARE(render.err.count(QLatin1Char('\n')), 1);
        const auto run = runProgram(alone, { QStringLiteral("run"), QStringLiteral("example:cnn"), QStringLiteral("--device"),
                                               QStringLiteral("cuda"), QStringLiteral("--repeat"), QStringLiteral("1") },
            environment);
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.err.contains(QStringLiteral("no CUDA device: running on the CPU executor instead (this build has no CUDA executor)")),
            qPrintable(run.err));
        environment.insert(QStringLiteral("MEMPLAN_CUDA_PLUGIN"), QString::fromLatin1(kMissingPlugin));
        const auto named = runProgram(QStringLiteral(MEMPLAN_CLI), { QStringLiteral("run"), QStringLiteral("example:cnn"),
                                                                       QStringLiteral("--device"), QStringLiteral("cuda"),
                                                                       QStringLiteral("--repeat"), QStringLiteral("1") },
            environment);
        QCOMPARE(named.exitCode, 0);
        QVERIFY2(named.err.contains(QStringLiteral("(MEMPLAN_CUDA_PLUGIN=%1: no such file)").arg(kMissingPlugin)), qPrintable(named.err));
    }
};

QTEST_GUILESS_MAIN(TestRunSession)
#include "tst_runsession.moc"
