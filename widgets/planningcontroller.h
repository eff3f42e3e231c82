// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "latestjob.h"

#include "io/workload.h"
#include "onnx/onnximport.h"
#include "planners/problem.h"
#include "strategies/training.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

// Loads workloads (and derives a loaded model's training step) and runs planners on
// QThreadPool::globalInstance(), never on the UI thread
// (docs/ARCHITECTURE.md, background work). Each request starts a LatestJob of its kind (a new
// generation) and cancels the previous job; a result whose generation is no longer current is dropped
// on arrival, so only the latest request's signal is ever emitted. A new load also drops any pending plan (it would belong to the
// old workload). Search planners (exact) report progress as planProgress, throttled, guarded by the
// same generation; stop() ends the search early and keeps the best plan it found. Every plan is checked with core::validatePlan in the worker: an invalid plan
// arrives as planFailed, never as planReady. Lives on the UI thread; signals are emitted there.
class PlanningController : public QObject {
    Q_OBJECT
public:
    explicit PlanningController(QObject* parent = nullptr);
    ~PlanningController() override;

    bool isLoading() const { return m_loading; }
    bool isPlanning() const { return m_planning; }
    bool isBusy() const { return m_loading || m_planning; }

public slots:
    // `spec`: a file path or "example:NAME" (core::loadWorkload).
    void requestLoad(const QString& spec, const core::LoadOptions& options);
    // The training step of `forward` (core::appendBackwardPass with `options`), derived on a worker as
    // a load is: it is one (a new generation of the load job, so a later load drops it, and any pending
    // plan is dropped too) and ends in trainingReady or trainingFailed. `forward` comes back with the
    // result, so the window can tell which model it belongs to.
    void requestTraining(std::shared_ptr<const core::Workload> forward, const core::TrainingOptions& options);
    // Plans `workload` with the planner registered as `plannerName` (core::plannerByName).
    // `timeLimitSeconds`: PlanOptions::timeLimitSeconds for search planners (0: the planner's default).
    void requestPlan(
        std::shared_ptr<const core::Workload> workload, const QString& plannerName, double timeLimitSeconds = 0);
    // Stops and forgets whatever is running; no result signal follows for it.
    void cancel();
    // Stops the running plan but keeps its result: a search planner returns the best plan found so
    // far, which arrives as planReady. A planner that had no plan yet ends quietly (no planFailed).
    // Loads are not affected.
    void stop();

signals:
    void loadStarted(const QString& spec);
    // A long load's stage ("parsing the pickle") and the fraction of it done, at most ~10 times a second.
    void loadProgress(const QString& stage, double fraction);
    void loadFinished(std::shared_ptr<const core::Workload> workload);
    void loadFailed(const QString& message);
    // Before loadFinished or loadFailed of an ONNX file whose load failed or was given sizes
    // (LoadOptions::bindings): what its inputs leave open (core::openInputs), read in the worker.
    void inputsOpen(const QString& spec, const core::OpenInputs& open);
    void trainingStarted(const QString& source);
    void trainingReady(std::shared_ptr<const core::Workload> forward, std::shared_ptr<const core::Workload> training);
    // The reason, naming the model: an allocation problem, a graph already in training mode, nothing to differentiate.
    void trainingFailed(std::shared_ptr<const core::Workload> forward, const QString& message);
    void planStarted(const QString& plannerName);
    void planReady(const core::Plan& plan);
    void planFailed(const QString& message);
    // Live progress of a search planner, at most ~5 times a second; `bestArena` 0 before the first plan.
    void planProgress(qint64 bestArena, qint64 lowerBound, double seconds, bool provenOptimal);
    void busyChanged(bool busy);

private:
    void setBusy(bool loading, bool planning);
    std::shared_ptr<std::atomic<bool>> renewFlag(std::shared_ptr<std::atomic<bool>>& flag);

    std::shared_ptr<std::atomic<bool>> m_loadCancel;
    std::shared_ptr<std::atomic<bool>> m_planCancel;
    LatestJob m_loadJob;
    LatestJob m_planJob;
    quint64 m_stoppedGeneration = 0; // the m_planJob generation stop() ended, 0: none
    bool m_loading = false;
    bool m_planning = false;
};
