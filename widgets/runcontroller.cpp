// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "runcontroller.h"

#include "cudadevice.h"
#include "cost/opcost.h"
#include "onnx/onnximport.h"

#ifdef MEMPLAN_HAVE_CUDA
#include "cudaexecutor.h"
#endif

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QPointer>
#include <QThreadPool>

#include <filesystem>
#include <optional>

namespace {

bool isOnnxSource(const std::string& source)
{
    if (source.rfind("example:", 0) == 0)
        return false;
    const auto ext = std::filesystem::path(source).extension().string();
    return ext != ".json" && ext != ".csv";
}

// The model file's weights for `graph` (which strategies may have rewritten): read against a fresh
// import of the file, then matched by tensor and op name.
core::Expected<std::shared_ptr<const core::ModelData>> modelDataFor(const core::Workload& workload)
{
    if (!isOnnxSource(workload.source))
        return std::shared_ptr<const core::ModelData>();
    auto imported = core::importOnnx(workload.source, workload.bindings); // the sizes the workload was loaded with
    if (!imported)
        return imported.error();
    auto data = core::loadTensorData(workload.source, *imported);
    if (!data)
        return data.error();
    return std::make_shared<const core::ModelData>(core::remapModelData(*data, *imported, *workload.graph));
}

// Worker thread, device cuda: the GPU's no-reuse reference, then the arena, per-tensor and pool runs,
// then the CPU executor's no-reuse run for the tolerance check. The CUDA executor reports progress
// over its timed passes only, so each run counts repeat · steps.
core::Expected<RunMeasurement> runCudaJob(std::shared_ptr<const core::Workload> workload, const core::Plan& plan, int repeat,
    double tolerance, core::RunOptions options, const std::function<void(int, int)>& progress)
{
#ifdef MEMPLAN_HAVE_CUDA
    const auto& w = *workload;
    const int steps = w.schedule.steps();
    const int total = steps * (2 + 3 * repeat);
    auto phase = [&](int offset) {
        return [&progress, offset, total](int done, int) { progress(offset + done, total); };
    };
    options.repeat = 1;
    options.progress = phase(0);
    const auto reference = gpu::runOnCuda(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, options,
        gpu::CudaAllocation::Arena);
    if (!reference)
        return reference.error();
    options.repeat = repeat;
    std::optional<core::Measurement> runs[3];
    const gpu::CudaAllocation modes[3] = { gpu::CudaAllocation::Arena, gpu::CudaAllocation::PerTensor, gpu::CudaAllocation::Pool };
    for (int i = 0; i < 3; ++i) {
        options.progress = phase(steps * (1 + i * repeat));
        auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, options, modes[i]);
        if (!run)
            return run.error();
        runs[i] = std::move(*run);
    }
    RunMeasurement m;
    m.device = "cuda";
    m.deviceName = gpu::cudaDeviceDescription();
    m.workload = std::move(workload);
    m.plan = plan;
    m.repeat = repeat;
    std::string mismatch[3];
    for (int i = 0; i < 3; ++i)
        mismatch[i] = core::compareOutputs(*w.graph, reference->outputs, runs[i]->outputs);
    m.arenaMatches = mismatch[0].empty();
    m.perTensorMatches = mismatch[1].empty();
    m.poolMatches = mismatch[2].empty();
    for (int i = 0; i < 3 && m.mismatch.empty(); ++i)
        if (!mismatch[i].empty())
            m.mismatch = std::string(gpu::cudaAllocationName(modes[i])) + " run: " + mismatch[i];
    m.tolerance = tolerance;
    if (runs[0]->opsSynthetic > 0) {
        m.cpuCheckNote = "not compared: " + std::to_string(runs[0]->opsSynthetic)
            + " synthetic kernels hash their inputs' bits, so float rounding changes their outputs entirely";
    } else {
        options.repeat = 1;
        options.progress = phase(steps * (1 + 3 * repeat));
        const auto cpu = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, options);
        if (!cpu)
            return cpu.error();
        m.cpuCheck = core::checkTolerance(*w.graph, cpu->outputs, runs[0]->outputs, tolerance);
    }
    m.arena = std::move(*runs[0]);
    m.perTensor = std::move(*runs[1]);
    m.pool = std::move(runs[2]);
    return m;
#else
    (void)workload, (void)plan, (void)repeat, (void)tolerance, (void)options, (void)progress;
    return core::makeError(core::ErrorCode::NoGpu, "device cuda: this build has no CUDA executor");
#endif
}

// Worker thread: the three runs and the comparison. `progress` gets ops done over all three runs.
core::Expected<RunMeasurement> runJob(std::shared_ptr<const core::Workload> workload, const core::Plan& plan, int repeat,
    RunDevice device, double tolerance, const core::CancelToken& cancel, const std::function<void(int, int)>& progress)
{
    if (!workload || !workload->graph)
        return core::makeError(core::ErrorCode::InvalidArgument,
            "an allocation problem has no ops to run; open a model (.onnx, .json) or a graph example");
    const auto& w = *workload;
    auto modelData = modelDataFor(w);
    if (!modelData)
        return modelData.error();
    core::RunOptions options;
    options.modelData = *modelData;
    options.inputs = w.givenInputs;
    options.cancel = cancel;
    if (device == RunDevice::Cuda) {
        if (!cudaDeviceStatus().available)
            return core::makeError(core::ErrorCode::NoGpu,
                "device cuda: no CUDA device (" + cudaDeviceStatus().reason.toStdString() + ")");
        return runCudaJob(std::move(workload), plan, repeat, tolerance, std::move(options), progress);
    }
    const int steps = w.schedule.steps();
    const int total = steps * (1 + 2 * repeat);
    auto phase = [&](int offset) {
        return [&progress, offset, total](int done, int) { progress(offset + done, total); };
    };

    options.repeat = 1;
    options.progress = phase(0);
    const auto reference = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, options);
    if (!reference)
        return reference.error();
    options.repeat = repeat;
    options.progress = phase(steps);
    auto arena = core::runOnCpu(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, options);
    if (!arena)
        return arena.error();
    options.allocation = core::Allocation::PerTensor;
    options.progress = phase(steps * (1 + repeat));
    auto perTensor = core::runOnCpu(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, options);
    if (!perTensor)
        return perTensor.error();

    RunMeasurement m;
    m.workload = std::move(workload);
    m.plan = plan;
    m.repeat = repeat;
    const auto arenaMismatch = core::compareOutputs(*w.graph, reference->outputs, arena->outputs);
    const auto perTensorMismatch = core::compareOutputs(*w.graph, reference->outputs, perTensor->outputs);
    m.arenaMatches = arenaMismatch.empty();
    m.perTensorMatches = perTensorMismatch.empty();
    m.mismatch = !arenaMismatch.empty() ? "arena run: " + arenaMismatch
        : !perTensorMismatch.empty()    ? "per-tensor run: " + perTensorMismatch
                                        : std::string();
    m.arena = std::move(*arena);
    m.perTensor = std::move(*perTensor);
    return m;
}

void addRoofline(RunMeasurement& m, const core::DeviceProfile& profile)
{
    const auto& w = *m.workload;
    m.costProfile = profile.name;
    for (const auto op : w.schedule.order) {
        m.rooflineStepMs.push_back(core::opSeconds(*w.graph, w.graph->ops[static_cast<std::size_t>(op)], profile) * 1e3);
        m.rooflineMs += m.rooflineStepMs.back();
    }
}

} // namespace

RunController::RunController(QObject* parent)
    : QObject(parent)
    , m_pool(new QThreadPool(this))
{
    m_pool->setMaxThreadCount(1); // the executor's kernel scratch is shared: one run at a time
}

RunController::~RunController()
{
    if (m_cancel)
        m_cancel->store(true);
    m_pool->waitForDone();
}

void RunController::start(std::shared_ptr<const core::Workload> workload, const core::Plan& plan, int repeat, RunDevice device,
    double tolerance, std::optional<core::DeviceProfile> costProfile)
{
    if (m_cancel)
        m_cancel->store(true); // the older job stops at its next op
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    const quint64 generation = ++m_generation;
    setRunning(true);
    emit started();

    // Called on the worker after every op: throttled so a fast model cannot flood the UI queue.
    auto progress = [self = QPointer(this), generation, clock = std::optional<QElapsedTimer>()](
                        int done, int total) mutable {
        if (clock && clock->elapsed() < 50 && done < total)
            return;
        if (!clock)
            clock.emplace();
        clock->start();
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, generation, done, total] {
                if (self && generation == self->m_generation && self->m_running)
                    emit self->progress(done, total);
            },
            Qt::QueuedConnection);
    };
    m_pool->start([self = QPointer(this), generation, workload = std::move(workload), plan, repeat = std::max(1, repeat), device,
                      tolerance, costProfile = std::move(costProfile), token = core::CancelToken(m_cancel),
                      progress = std::move(progress)]() mutable {
        auto result = runJob(std::move(workload), plan, repeat, device, tolerance, token, progress);
        if (result && costProfile)
            addRoofline(*result, *costProfile);
        std::shared_ptr<const RunMeasurement> measurement;
        QString error;
        bool wasCancelled = false;
        if (result)
            measurement = std::make_shared<const RunMeasurement>(std::move(*result));
        else {
            wasCancelled = result.error().code == core::ErrorCode::Cancelled;
            error = QString::fromStdString(result.error().message);
        }
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, generation, measurement, error, wasCancelled] {
                if (!self || generation != self->m_generation)
                    return; // stale, or the window is gone
                self->setRunning(false);
                if (measurement)
                    emit self->finished(measurement);
                else if (wasCancelled)
                    emit self->cancelled();
                else
                    emit self->failed(error);
            },
            Qt::QueuedConnection);
    });
}

void RunController::cancel()
{
    if (!m_running)
        return;
    if (m_cancel)
        m_cancel->store(true);
    ++m_generation; // whatever the job still reports is dropped
    setRunning(false);
    emit cancelled();
}

void RunController::waitForIdle() { m_pool->waitForDone(); }

void RunController::setRunning(bool running)
{
    if (running == m_running)
        return;
    m_running = running;
    emit runningChanged(running);
}
