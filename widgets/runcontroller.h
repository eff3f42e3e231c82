// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "latestjob.h"
#include "runmeasurement.h"

#include "cost/device.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <optional>

class QThreadPool;

// Runs a plan off the UI thread: the run session of `memplan run` (core/exec/runsession.h): a no-reuse
// reference run, the planned-arena run and the per-tensor allocator run (RunOptions::repeat timed
// runs each), then compares outputs with the reference.
// - Device cpu: the CPU executor. Device cuda (only when cudaDeviceStatus().available): the CUDA
//   executor plugin, with a fourth run from the stream-ordered pool; the reference is the GPU's own
//   no-reuse run, so the bit-for-bit check stays on one device. Then a CPU executor no-reuse run of
//   the same inputs, which the GPU's outputs must match within `tolerance` (as `memplan
//   run --device cuda --tolerance`); skipped when a synthetic kernel ran (it hashes its inputs' bits).
// - One run at a time: its own one-thread pool, because the executor's kernel scratch is shared.
// - start() cancels the previous run (it stops at its next op) and starts a LatestJob on that pool:
//   a result whose generation is stale is dropped, so only the latest request's signal is emitted.
// - Weights: for an ONNX source the model's own weights (matched by tensor and op name, so a
//   graph rewritten by strategies still finds them); random with a fixed seed otherwise.
// Lives on the UI thread; signals are emitted there.
class RunController : public QObject {
    Q_OBJECT
public:
    explicit RunController(QObject* parent = nullptr);
    ~RunController() override;

    bool isRunning() const { return m_running; }

    // `repeat` >= 1 timed runs per allocation mode. Cuda without a usable device fails (failed()).
    // `tolerance`: cuda only, relative, for the GPU vs CPU comparison. `costProfile`: the profile
    // whose roofline times the measurement carries (RunMeasurement::rooflineStepMs).
    void start(std::shared_ptr<const core::Workload> workload, const core::Plan& plan, int repeat, RunDevice device = RunDevice::Cpu,
        double tolerance = core::kDefaultGpuTolerance, std::optional<core::DeviceProfile> costProfile = std::nullopt);
    // Stops the running job at its next op; emits cancelled() and no result.
    void cancel();
    // Blocks until no job runs (for tests and shutdown).
    void waitForIdle();

signals:
    void started();
    void progress(int done, int total); // ops executed so far, over all runs of this job
    void finished(std::shared_ptr<const RunMeasurement> measurement);
    void failed(const QString& message);
    void cancelled();
    void runningChanged(bool running);

private:
    void setRunning(bool running);

    QThreadPool* m_pool;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    LatestJob m_job;
    bool m_running = false;
};
