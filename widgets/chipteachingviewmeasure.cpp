// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// ChipTeachingView's measuring part: repeated runs of the model on the CPU or the CUDA executor in
// the background, and the two measured series they fill. Kept apart from chipteachingview.cpp (the
// modes, the canvases) so drawing and measuring change independently.
#include "chipteachingview.h"

#include "cudadevice.h"

#include "exec/runsession.h"
#include "planners/planner.h"
#include "planners/validate.h"

#include <QCoreApplication>
#include <QPointer>
#include <QPushButton>
#include <QThreadPool>

#include <functional>

namespace {

// Worker thread, pure core code: the default planner's plan, then up to `runs` timed arena runs
// through the run session (RunScope::ArenaOnly: timings, no reference), fewer once `cancel` is set
// (a run in progress stops at its next op); `ran(ms)` hears each run's median latency as it ends.
// An error message, or "".
QString measureRuns(const core::Workload& workload, RunDevice device, int runs, const std::shared_ptr<std::atomic<bool>>& cancel,
    const std::function<void(double)>& ran)
{
    auto plan = core::runPlanner(*core::plannerByName(core::kDefaultPlanner), workload.problem);
    if (!plan)
        return QString::fromStdString(plan.error().message);
    if (const auto check = core::validatePlan(workload.problem, *plan); !check.ok())
        return ChipTeachingView::tr("invalid plan: %1").arg(QString::fromStdString(check.message));
    auto backend = core::executorBackend(device == RunDevice::Cpu ? "cpu" : "cuda");
    if (!backend)
        return QString::fromStdString(backend.error().message);
    core::RunSessionRequest request;
    request.workload = &workload;
    request.plan = &*plan;
    request.backend = *backend;
    request.scope = core::RunScope::ArenaOnly;
    request.options.cancel = core::CancelToken(cancel); // the same seed every run: only the timing varies
    for (int i = 0; i < runs && !cancel->load(); ++i) {
        auto session = core::runSession(request);
        if (!session && session.error().code == core::ErrorCode::Cancelled)
            break;
        if (!session)
            return QString::fromStdString(session.error().message);
        ran(session->arena.latencyMs.median);
    }
    return {};
}

} // namespace

void ChipTeachingView::setMeasuredRuns(const QString& label, std::vector<double> milliseconds)
{
    m_runsLabel = label;
    m_runs = std::move(milliseconds);
    refresh();
}

void ChipTeachingView::setGpuMeasuredRuns(const QString& label, std::vector<double> milliseconds)
{
    m_gpuRunsLabel = label;
    m_gpuRuns = std::move(milliseconds);
    refresh();
}

void ChipTeachingView::measure(RunDevice device, int runs)
{
    const bool cuda = device == RunDevice::Cuda;
    if (!m_workload || !m_workload->graph || m_cpuBusy || m_gpuBusy || (cuda && !cudaDeviceStatus().available))
        return;
    // Each series has its own generation: a new model bumps both, so a late result is dropped.
    const quint64 generation = cuda ? ++m_gpuGeneration : ++m_generation;
    (cuda ? m_gpuBusy : m_cpuBusy) = true;
    m_cancel = std::make_shared<std::atomic<bool>>(false); // this measurement's: Cancel and a new model set it
    m_measureRuns = runs;
    // The series fills run by run; the old one goes now, so the plot never shows a finished series mid-measurement.
    if (cuda) {
        m_gpuRuns.clear();
        m_gpuRunsLabel = tr("cuda: %1").arg(cudaDeviceStatus().description);
    } else {
        m_runs.clear();
        m_runsLabel = tr("CPU executor (cached, measured)");
    }
    updateMeasureButtons();
    refresh();
    const auto ran = [self = QPointer(this), generation, cuda](double ms) {
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, generation, cuda, ms] {
                if (!self || generation != (cuda ? self->m_gpuGeneration : self->m_generation))
                    return;
                (cuda ? self->m_gpuRuns : self->m_runs).push_back(ms);
                self->updateMeasureButtons();
                self->refresh();
            },
            Qt::QueuedConnection);
    };
    QThreadPool::globalInstance()->start([self = QPointer(this), generation, workload = m_workload, device, runs, flag = m_cancel, ran] {
        const QString error = measureRuns(*workload, device, runs, flag, ran);
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, generation, device, error, cancelled = flag->load()] {
                if (!self)
                    return;
                const bool cuda = device == RunDevice::Cuda;
                (cuda ? self->m_gpuBusy : self->m_cpuBusy) = false; // the run has ended, current or not
                self->updateMeasureButtons();
                if (generation != (cuda ? self->m_gpuGeneration : self->m_generation))
                    return;
                if (!error.isEmpty()) {
                    emit self->measureFailed(error);
                    return;
                }
                const auto& series = cuda ? self->m_gpuRuns : self->m_runs;
                if (cancelled)
                    (cuda ? self->m_gpuRunsLabel : self->m_runsLabel) += tr(" · cancelled after %n run(s)", nullptr, int(series.size()));
                self->refresh();
                if (series.empty())
                    return;
                if (cuda)
                    emit self->gpuMeasuredRunsReady();
                else
                    emit self->measuredRunsReady();
            },
            Qt::QueuedConnection);
    });
}

void ChipTeachingView::cancelMeasurement()
{
    if (m_cpuBusy || m_gpuBusy)
        m_cancel->store(true);
}

void ChipTeachingView::updateMeasureButtons()
{
    // The busy one's button cancels, saying how far it got; the other waits.
    const bool idle = !m_cpuBusy && !m_gpuBusy;
    const auto cancelText = [this](std::size_t done) {
        return m_cancel->load() ? tr("Cancelling…") : tr("Cancel (run %1 of %2)").arg(done + 1).arg(m_measureRuns);
    };
    m_measure->setText(m_cpuBusy ? cancelText(m_runs.size()) : tr("Measure on CPU"));
    m_measureGpu->setText(m_gpuBusy ? cancelText(m_gpuRuns.size()) : tr("Measure on GPU"));
    m_measure->setEnabled(idle || (m_cpuBusy && !m_cancel->load()));
    m_measureGpu->setEnabled((idle && cudaDeviceStatus().available) || (m_gpuBusy && !m_cancel->load()));
}
