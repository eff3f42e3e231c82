// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planningcontroller.h"

#include "planners/planner.h"
#include "planners/validate.h"

#include <QCoreApplication>
#include <QPointer>

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
    m_planJob.drop(); // a plan still running belongs to the workload being replaced
    setBusy(true, false);
    emit loadStarted(spec);

    struct Loaded {
        std::shared_ptr<const core::Workload> workload; // null: failed with `error`
        QString error;
        std::optional<core::OpenInputs> open;
    };
    m_loadJob.start(
        this,
        [self = QPointer(this), options = core::LoadOptions(options), flag, spec = spec.toStdString()](quint64 generation) mutable
        -> std::optional<Loaded> {
            if (flag->load())
                return std::nullopt; // replaced before it began
            // A large memory snapshot reports its stages; throttled so it cannot flood the UI queue.
            options.progress.cancel = core::CancelToken(flag);
            options.progress.report = [self, generation, throttle = ProgressThrottle(100)](std::string_view stage, double fraction) mutable {
                if (!throttle.pass(false))
                    return;
                QMetaObject::invokeMethod(
                    QCoreApplication::instance(),
                    [self, generation, stage = QString::fromUtf8(stage.data(), qsizetype(stage.size())), fraction] {
                        if (self && self->m_loadJob.isCurrent(generation) && self->m_loading)
                            emit self->loadProgress(stage, fraction);
                    },
                    Qt::QueuedConnection);
            };
            auto result = core::loadWorkload(spec, options); // worker thread: pure core code
            Loaded loaded;
            if (result)
                loaded.workload = std::make_shared<const core::Workload>(std::move(*result));
            else
                loaded.error = QString::fromStdString(result.error().message);
            // What a user could fix: asked where the load failed, or where sizes were given (to change them).
            const bool sized = !options.bindings.dims.empty() || !options.bindings.inputShapes.empty() || !options.inputFiles.empty();
            if (std::filesystem::path(spec).extension() == ".onnx" && (!result || sized))
                if (auto found = core::openInputs(spec); found && !found->empty())
                    loaded.open = std::move(*found);
            return loaded;
        },
        [this, spec](const std::optional<Loaded>& loaded) {
            if (!loaded)
                return;
            setBusy(false, m_planning);
            if (loaded->open)
                emit inputsOpen(spec, *loaded->open);
            if (loaded->workload)
                emit loadFinished(loaded->workload);
            else
                emit loadFailed(loaded->error);
        });
}

void PlanningController::requestTraining(std::shared_ptr<const core::Workload> forward, const core::TrainingOptions& options)
{
    renewFlag(m_loadCancel);
    renewFlag(m_planCancel);
    m_planJob.drop(); // a plan still running belongs to the workload being replaced
    setBusy(true, false);
    emit trainingStarted(forward ? QString::fromStdString(forward->source) : QString());

    struct Derived {
        std::shared_ptr<const core::Workload> training; // null: failed with `error`
        QString error;
    };
    m_loadJob.start(
        this,
        [forward, options]() -> Derived {
            Derived derived;
            if (!forward) {
                derived.error = QStringLiteral("Nothing to train: no model is loaded.");
                return derived;
            }
            auto result = core::appendBackwardPass(*forward, options); // worker thread: pure core code
            if (result)
                derived.training = std::make_shared<const core::Workload>(std::move(*result));
            else
                derived.error = QString::fromStdString(result.error().message);
            return derived;
        },
        [this, forward](const Derived& derived) {
            setBusy(false, m_planning);
            if (derived.training)
                emit trainingReady(forward, derived.training);
            else
                emit trainingFailed(forward, derived.error);
        });
}

void PlanningController::requestPlan(
    std::shared_ptr<const core::Workload> workload, const QString& plannerName, double timeLimitSeconds)
{
    const auto flag = renewFlag(m_planCancel);
    setBusy(m_loading, true);
    emit planStarted(plannerName);

    struct Planned {
        std::optional<core::Plan> plan; // none: failed with `error`
        QString error;
    };
    m_planJob.start(
        this,
        [self = QPointer(this), workload = std::move(workload), flag, timeLimit = std::max(0.0, timeLimitSeconds),
            name = plannerName.toStdString()](quint64 generation) {
            core::PlanOptions options;
            options.timeLimitSeconds = timeLimit;
            // Called on the planning thread. Throttled here too, so a burst of improvements cannot flood the
            // UI thread's queue; the planner's final report (proven optimal) always goes through.
            options.progress = [self, generation, throttle = ProgressThrottle(200)](const core::PlanProgress& progress) mutable {
                if (!throttle.pass(progress.provenOptimal))
                    return;
                QMetaObject::invokeMethod(
                    QCoreApplication::instance(),
                    [self, generation, progress] {
                        if (!self || !self->m_planJob.isCurrent(generation) || !self->m_planning)
                            return;
                        emit self->planProgress(
                            progress.bestArena, progress.provenLowerBound, progress.seconds, progress.provenOptimal);
                    },
                    Qt::QueuedConnection);
            };
            Planned planned;
            const core::Planner* planner = core::plannerByName(name);
            if (!workload) {
                planned.error = QStringLiteral("Nothing to plan: no model is loaded.");
            } else if (!planner) {
                planned.error = QStringLiteral("Unknown planner '%1'.").arg(QString::fromStdString(name));
            } else {
                auto result = core::runPlanner(*planner, workload->problem, core::CancelToken(flag), options);
                if (!result) {
                    planned.error = QString::fromStdString(result.error().message);
                } else {
                    // An invalid plan is a bug in a planner: report it instead of drawing a wrong picture.
                    const auto check = core::validatePlan(workload->problem, *result);
                    if (check.ok())
                        planned.plan = std::move(*result);
                    else
                        planned.error = QStringLiteral("Planner '%1' produced an invalid plan: %2")
                                            .arg(QString::fromStdString(name), QString::fromStdString(check.message));
                }
            }
            return planned;
        },
        [this](const Planned& planned) {
            setBusy(m_loading, false);
            if (planned.plan)
                emit planReady(*planned.plan);
            else if (m_planJob.generation() != m_stoppedGeneration) // stopped before any plan: quiet
                emit planFailed(planned.error);
        });
}

void PlanningController::cancel()
{
    renewFlag(m_loadCancel);
    renewFlag(m_planCancel);
    m_loadJob.drop();
    m_planJob.drop();
    setBusy(false, false);
}

void PlanningController::stop()
{
    if (!m_planning)
        return;
    // Same generation: the result that comes back (the best plan so far) is published as usual.
    m_stoppedGeneration = m_planJob.generation();
    m_planCancel->store(true);
}
