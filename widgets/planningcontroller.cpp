// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planningcontroller.h"

#include "planners/planner.h"
#include "planners/validate.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QPointer>
#include <QThreadPool>

#include <algorithm>
#include <filesystem>
#include <optional>

PlanningController::PlanningController(QObject* parent)
    : QObject(parent)
    , m_loadCancel(std::make_shared<std::atomic<bool>>(false))
    , m_planCancel(std::make_shared<std::atomic<bool>>(false))
{
    qRegisterMetaType<std::shared_ptr<const core::Workload>>();
    qRegisterMetaType<core::Plan>();
}

PlanningController::~PlanningController()
{
    // Running jobs see the flag at their next check; their results find `self` null and are dropped.
    m_loadCancel->store(true);
    m_planCancel->store(true);
}

std::shared_ptr<std::atomic<bool>> PlanningController::renewFlag(std::shared_ptr<std::atomic<bool>>& flag)
{
    flag->store(true); // the older job stops at its next check
    flag = std::make_shared<std::atomic<bool>>(false);
    return flag;
}

void PlanningController::setBusy(bool loading, bool planning)
{
    const bool wasBusy = isBusy();
    m_loading = loading;
    m_planning = planning;
    if (wasBusy != isBusy())
        emit busyChanged(isBusy());
}

void PlanningController::requestLoad(const QString& spec, const core::LoadOptions& options)
{
    const auto flag = renewFlag(m_loadCancel);
    renewFlag(m_planCancel);
    const quint64 generation = ++m_loadGeneration;
    ++m_planGeneration; // a plan still running belongs to the workload being replaced
    setBusy(true, false);
    emit loadStarted(spec);

    QThreadPool::globalInstance()->start([self = QPointer(this), generation, options, flag, spec = spec.toStdString()] {
        if (flag->load())
            return;
        auto result = core::loadWorkload(spec, options); // worker thread: pure core code
        std::shared_ptr<const core::Workload> workload;
        QString error;
        if (result)
            workload = std::make_shared<const core::Workload>(std::move(*result));
        else
            error = QString::fromStdString(result.error().message);
        // What a user could fix: asked where the load failed, or where sizes were given (to change them).
        std::optional<core::OpenInputs> open;
        const bool sized = !options.bindings.dims.empty() || !options.bindings.inputShapes.empty() || !options.inputFiles.empty();
        if (std::filesystem::path(spec).extension() == ".onnx" && (!result || sized))
            if (auto found = core::openInputs(spec); found && !found->empty())
                open = std::move(*found);
        // Posted to the application object so a controller deleted meanwhile is noticed on the UI thread.
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, generation, workload = std::move(workload), error, open = std::move(open), spec] {
                if (!self || generation != self->m_loadGeneration)
                    return; // stale, or the window is gone
                self->setBusy(false, self->m_planning);
                if (open)
                    emit self->inputsOpen(QString::fromStdString(spec), *open);
                if (workload)
                    emit self->loadFinished(workload);
                else
                    emit self->loadFailed(error);
            },
            Qt::QueuedConnection);
    });
}

void PlanningController::requestPlan(
    std::shared_ptr<const core::Workload> workload, const QString& plannerName, double timeLimitSeconds)
{
    const auto flag = renewFlag(m_planCancel);
    const quint64 generation = ++m_planGeneration;
    setBusy(m_loading, true);
    emit planStarted(plannerName);

    core::PlanOptions options;
    options.timeLimitSeconds = std::max(0.0, timeLimitSeconds);
    // Called on the planning thread. Throttled here too, so a burst of improvements cannot flood the
    // UI thread's queue; the planner's final report (proven optimal) always goes through.
    options.progress = [self = QPointer(this), generation, clock = std::optional<QElapsedTimer>()](
                           const core::PlanProgress& progress) mutable {
        if (clock && clock->elapsed() < 200 && !progress.provenOptimal)
            return;
        if (!clock)
            clock.emplace();
        clock->start();
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, generation, progress] {
                if (!self || generation != self->m_planGeneration || !self->m_planning)
                    return;
                emit self->planProgress(
                    progress.bestArena, progress.provenLowerBound, progress.seconds, progress.provenOptimal);
            },
            Qt::QueuedConnection);
    };

    QThreadPool::globalInstance()->start(
        [self = QPointer(this), generation, workload = std::move(workload), flag, options = std::move(options),
            name = plannerName.toStdString()] {
            std::optional<core::Plan> plan;
            QString error;
            const core::Planner* planner = core::plannerByName(name);
            if (!workload) {
                error = QStringLiteral("Nothing to plan: no model is loaded.");
            } else if (!planner) {
                error = QStringLiteral("Unknown planner '%1'.").arg(QString::fromStdString(name));
            } else {
                auto result = core::runPlanner(*planner, workload->problem, core::CancelToken(flag), options);
                if (!result) {
                    error = QString::fromStdString(result.error().message);
                } else {
                    // An invalid plan is a bug in a planner: report it instead of drawing a wrong picture.
                    const auto check = core::validatePlan(workload->problem, *result);
                    if (check.ok())
                        plan = std::move(*result);
                    else
                        error = QStringLiteral("Planner '%1' produced an invalid plan: %2")
                                    .arg(QString::fromStdString(name), QString::fromStdString(check.message));
                }
            }
            QMetaObject::invokeMethod(
                QCoreApplication::instance(),
                [self, generation, plan = std::move(plan), error] {
                    if (!self || generation != self->m_planGeneration)
                        return;
                    self->setBusy(self->m_loading, false);
                    if (plan)
                        emit self->planReady(*plan);
                    else if (generation != self->m_stoppedGeneration) // stopped before any plan: quiet
                        emit self->planFailed(error);
                },
                Qt::QueuedConnection);
        });
}

void PlanningController::cancel()
{
    renewFlag(m_loadCancel);
    renewFlag(m_planCancel);
    ++m_loadGeneration;
    ++m_planGeneration;
    setBusy(false, false);
}

void PlanningController::stop()
{
    if (!m_planning)
        return;
    // Same generation: the result that comes back (the best plan so far) is published as usual.
    m_stoppedGeneration = m_planGeneration;
    m_planCancel->store(true);
}
