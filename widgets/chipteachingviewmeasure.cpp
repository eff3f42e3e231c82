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

namespace {

// Worker thread, pure core code: the default planner's plan, then up to `runs` timed arena runs
// through the run session (RunScope::ArenaOnly: timings, no reference), fewer once `cancel` is set;
// each run's median latency in milliseconds. An error message, or "" and the runs.
QString measureRuns(const core::Workload& workload, RunDevice device, int runs, const std::shared_ptr<std::atomic<bool>>& cancel,
    std::vector<double>& ms)
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
        ms.push_back(session->arena.latencyMs.median);
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
    (cuda ? m_measureGpu : m_measure)->setText(tr("Measuring…"));
    updateMeasureButtons();
    QThreadPool::globalInstance()->start([self = QPointer(this), generation, workload = m_workload, device, runs, flag = m_cancel] {
        std::vector<double> ms;
        const QString error = measureRuns(*workload, device, runs, flag, ms);
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, generation, device, ms = std::move(ms), error]() mutable {
                if (!self)
                    return;
                const bool cuda = device == RunDevice::Cuda;
                (cuda ? self->m_gpuBusy : self->m_cpuBusy) = false;
                (cuda ? self->m_measureGpu : self->m_measure)->setText(cuda ? tr("Measure on GPU") : tr("Measure on CPU"));
                self->updateMeasureButtons();
                if (generation != (cuda ? self->m_gpuGeneration : self->m_generation))
                    return;
                if (!error.isEmpty()) {
                    emit self->measureFailed(error);
                    return;
                }
                if (cuda) {
                    self->setGpuMeasuredRuns(tr("cuda: %1").arg(cudaDeviceStatus().description), std::move(ms));
                    emit self->gpuMeasuredRunsReady();
                } else {
                    self->setMeasuredRuns(tr("CPU executor (cached, measured)"), std::move(ms));
                    emit self->measuredRunsReady();
                }
            },
            Qt::QueuedConnection);
    });
}

void ChipTeachingView::updateMeasureButtons()
{
    const bool idle = !m_cpuBusy && !m_gpuBusy;
    m_measure->setEnabled(idle);
    m_measureGpu->setEnabled(idle && cudaDeviceStatus().available);
}
