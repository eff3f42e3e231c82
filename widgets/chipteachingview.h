// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "cost/device.h"
#include "io/workload.h"
#include "runmeasurement.h"

#include <QWidget>

#include <atomic>
#include <memory>
#include <vector>

class QButtonGroup;
class QLabel;
class QPushButton;
class QSlider;
class QStackedWidget;
class StagesView;
class ChipArchitectureCanvas;
class ChipPerformanceCanvas;

// A fixed-memory accelerator explained in three modes, one click apart:
// - Architecture: the chip's functional units (memory slices, vector, matrix and switch units, laid
//   out as a tensor streaming processor: matrix | switch | memory | vector | memory | switch | matrix);
//   a step slider runs the schedule: the op's unit lights up, its tensors stream from and to memory,
//   and the memory slices show what is resident at that step (weights, and the arena buffers alive,
//   at their planned offsets on the chip that runs the step);
// - Performance: the latency of repeated runs (p50, p99, max) of the deterministic chip, an estimate
//   that is the same every run, next to two measured series: the CPU executor (a cached processor,
//   or any list given) and the CUDA executor on the GPU (when the build has it and a device is
//   found; otherwise its button is greyed with the reason), and the estimated pipelined throughput;
// - Multi-chip: the stage partition and pooled memory (StagesView).
// Partitioning and measuring run on QThreadPool::globalInstance(); the UI thread never waits.
class ChipTeachingView : public QWidget {
    Q_OBJECT
public:
    enum class Mode { Architecture, Performance, MultiChip };

    explicit ChipTeachingView(QWidget* parent = nullptr);
    ~ChipTeachingView() override;

    // The model and the chip; partitions it (StagesView) and resets the measurements.
    void setWorkload(std::shared_ptr<const core::Workload> workload, const core::DeviceProfile& device);
    void setMode(Mode mode);
    Mode mode() const;
    void setStep(int step);
    int step() const;

    // Latencies of repeated runs in milliseconds, measured elsewhere (e.g. `memplan run`, the CUDA executor).
    void setMeasuredRuns(const QString& label, std::vector<double> milliseconds);
    const std::vector<double>& measuredRuns() const { return m_runs; }
    // The second measured series, the GPU's (label e.g. "cuda: NVIDIA H100 …").
    void setGpuMeasuredRuns(const QString& label, std::vector<double> milliseconds);
    const std::vector<double>& gpuMeasuredRuns() const { return m_gpuRuns; }
    // Runs the model `runs` times on `device`'s executor in the background (default planner's plan, the
    // same inputs every run), each run's median latency one point of that device's series, plotted as
    // it ends; then measuredRunsReady (cpu) or gpuMeasuredRunsReady (cuda) (also after a cancel, when
    // a run ended), or measureFailed. While it runs, that device's button reads "Cancel (run k of N)".
    // Does nothing while a measurement runs, and for cuda without a usable device (cudaDeviceStatus()).
    void measure(RunDevice device, int runs);
    // Stops the measurement in progress (the run under way stops at its next op); the runs done stay
    // plotted, their label says it was cancelled. Nothing when none runs.
    void cancelMeasurement();

    StagesView* stagesView() const { return m_stages; }

signals:
    void measuredRunsReady();
    void gpuMeasuredRunsReady();
    void measureFailed(const QString& message);

private:
    void refresh();
    void updateMeasureButtons(); // (chipteachingviewmeasure.cpp, with measure())

    QButtonGroup* m_modes = nullptr;
    QStackedWidget* m_pages = nullptr;
    QSlider* m_step = nullptr;
    QLabel* m_stepLabel = nullptr;
    QPushButton* m_measure = nullptr;
    QPushButton* m_measureGpu = nullptr;
    ChipArchitectureCanvas* m_architecture = nullptr;
    ChipPerformanceCanvas* m_performance = nullptr;
    StagesView* m_stages = nullptr;
    std::shared_ptr<const core::Workload> m_workload;
    core::DeviceProfile m_device;
    QString m_runsLabel;
    std::vector<double> m_runs;
    QString m_gpuRunsLabel;
    std::vector<double> m_gpuRuns;
    // One measurement at a time (the executors share kernel scratch): both buttons wait for it. A new
    // model bumps both generations, so a late result is dropped; but its arrival still clears the busy
    // flag (the run has ended), which is why this is not a LatestJob (it drops stale results unseen).
    bool m_cpuBusy = false, m_gpuBusy = false;
    quint64 m_gpuGeneration = 0;
    std::shared_ptr<std::atomic<bool>> m_cancel; // the current measurement's; set by Cancel and by a new model
    quint64 m_generation = 0;
    int m_measureRuns = 0; // runs the current measurement asked for
};
