// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "runcontroller.h"

#include "cudadevice.h"
#include "exec/runsession.h"
#include "onnx/onnximport.h"

#include <QCoreApplication>
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

// Worker thread: the run session (core/exec/runsession.h) on `device`'s executor, as a RunMeasurement.
// `progress` gets ops done over all its runs.
core::Expected<RunMeasurement> runJob(std::shared_ptr<const core::Workload> workload, const core::Plan& plan, int repeat,
    RunDevice device, double tolerance, const core::DeviceProfile* costProfile, const core::CancelToken& cancel,
    const std::function<void(int, int)>& progress)
{
    if (!workload || !workload->graph)
        return core::makeError(core::ErrorCode::InvalidArgument,
            "an allocation problem has no ops to run; open a model (.onnx, .json) or a graph example");
    const auto& w = *workload;
    auto modelData = modelDataFor(w);
    if (!modelData)
        return modelData.error();
    core::RunSessionRequest request;
    request.workload = &w;
    request.plan = &plan;
    request.options.modelData = *modelData;
    request.options.inputs = w.givenInputs;
    request.options.cancel = cancel;
    request.options.repeat = repeat;
    request.options.progress = progress;
    request.tolerance = tolerance;
    request.costProfile = costProfile;
    if (device == RunDevice::Cuda) {
        if (!cudaDeviceStatus().available)
            return core::makeError(core::ErrorCode::NoGpu,
                "device cuda: no CUDA device (" + cudaDeviceStatus().reason.toStdString() + ")");
        auto backend = core::executorBackend("cuda");
        if (!backend)
            return backend.error();
        request.backend = *backend;
    }
    auto session = core::runSession(request);
    if (!session)
        return session.error();

    RunMeasurement m;
    m.device = session->device;
    m.deviceName = session->deviceName;
    m.workload = std::move(workload);
    m.plan = plan;
    m.repeat = repeat;
    m.arenaMatches = session->arenaMismatch.empty();
    m.perTensorMatches = session->perTensorMismatch.empty();
    m.poolMatches = session->poolMismatch.empty();
    m.mismatch = session->firstMismatch();
    m.tolerance = tolerance;
    if (device == RunDevice::Cuda) {
        m.cpuCheck = session->cpuCheck;
        if (!m.cpuCheck)
            m.cpuCheckNote = "not compared: " + std::to_string(session->syntheticOps)
                + " synthetic kernels hash their inputs' bits, so float rounding changes their outputs entirely";
    }
    m.arena = std::move(session->arena);
    m.perTensor = std::move(session->perTensor);
    m.pool = std::move(session->pool);
    m.costProfile = session->costProfile;
    for (const double seconds : session->rooflineStepSeconds)
        m.rooflineStepMs.push_back(seconds * 1e3);
    m.rooflineMs = session->rooflineSeconds * 1e3;
    return m;
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
    setRunning(true);
    emit started();

    struct Outcome {
        std::shared_ptr<const RunMeasurement> measurement; // null: failed with `error`
        QString error;
        bool cancelled = false;
    };
    m_job.start(
        this,
        [self = QPointer(this), workload = std::move(workload), plan, repeat = std::max(1, repeat), device, tolerance,
            costProfile = std::move(costProfile), token = core::CancelToken(m_cancel)](quint64 generation) mutable {
            // Called on the worker after every op: throttled so a fast model cannot flood the UI queue.
            auto progress = [self, generation, throttle = ProgressThrottle(50)](int done, int total) mutable {
                if (!throttle.pass(done >= total))
                    return;
                QMetaObject::invokeMethod(
                    QCoreApplication::instance(),
                    [self, generation, done, total] {
                        if (self && self->m_job.isCurrent(generation) && self->m_running)
                            emit self->progress(done, total);
                    },
                    Qt::QueuedConnection);
            };
            auto result = runJob(std::move(workload), plan, repeat, device, tolerance, costProfile ? &*costProfile : nullptr, token, progress);
            Outcome outcome;
            if (result) {
                outcome.measurement = std::make_shared<const RunMeasurement>(std::move(*result));
            } else {
                outcome.cancelled = result.error().code == core::ErrorCode::Cancelled;
                outcome.error = QString::fromStdString(result.error().message);
            }
            return outcome;
        },
        [this](const Outcome& outcome) {
            setRunning(false);
            if (outcome.measurement)
                emit finished(outcome.measurement);
            else if (outcome.cancelled)
                emit cancelled();
            else
                emit failed(outcome.error);
        },
        m_pool);
}

void RunController::cancel()
{
    if (!m_running)
        return;
    if (m_cancel)
        m_cancel->store(true);
    m_job.drop(); // whatever the job still reports is dropped
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
