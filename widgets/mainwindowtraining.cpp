// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// MainWindow's training step, kept out of mainwindow.cpp: the Model menu (Training Step, Weight
// Gradients Outside the Arena), deriving the backward pass of the model on display in the
// background, and refusing it, with the reason, where it cannot apply. As `memplan plan --training`
// (app/strategycli.cpp: applyTrainingFlag) does for the command line.
#include "mainwindow.h"

#include "mainwindowshared.h"
#include "messagebanner.h"
#include "planningcontroller.h"
#include "playcontroller.h"

#include "strategies/training.h"

#include <QAction>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QSignalBlocker>
#include <QStatusBar>

namespace {

using mainwindow::displayName;

// Why `workload` can have no training step appended, or an empty string when it can. The same
// refusals as core::appendBackwardPass's that need no derivation; "nothing to differentiate" is
// only known by trying (trainingFailed).
QString whyNoTrainingStep(const core::Workload& workload)
{
    if (!workload.graph)
        return QObject::tr("an allocation problem has buffers but no graph: a training step needs a model (.onnx, .json or "
                           "example:NAME)");
    if (core::backwardStart(*workload.graph, workload.schedule) < workload.schedule.steps())
        return QObject::tr("it already is a training step (captured with its backward pass); the strategies, recompute "
                           "with checkpoints included, work on it as it is");
    return {};
}

} // namespace

void MainWindow::createTrainingMenu()
{
    auto* model = new QMenu(tr("&Model"), this);
    model->setToolTipsVisible(true); // a disabled entry's tooltip says why it cannot apply
    m_trainingAction = model->addAction(tr("&Training Step"));
    m_trainingAction->setObjectName(QStringLiteral("trainingStep"));
    m_trainingAction->setCheckable(true);
    m_trainingAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_T));
    m_persistentGradsAction = model->addAction(tr("Weight &Gradients Outside the Arena"));
    m_persistentGradsAction->setObjectName(QStringLiteral("persistentGradients"));
    m_persistentGradsAction->setCheckable(true);
    m_persistentGradsAction->setToolTip(
        tr("Weight gradients as persistent buffers in a region of their own, as a framework's preallocated .grad "
           "(--persistent-grads), instead of arena buffers alive from their gradient op to the end of the step; the "
           "arena then shows what checkpointing can change"));
    connect(m_trainingAction, &QAction::toggled, this, &MainWindow::setTrainingStep);
    connect(m_persistentGradsAction, &QAction::toggled, this, &MainWindow::setPersistentGradients);
    connect(m_controller, &PlanningController::trainingStarted, this, [this](const QString& source) {
        m_loadingName = displayName(source);
        m_busyLabel->setText(tr("Appending the backward pass to %1…").arg(m_loadingName));
        onBusyChanged(m_controller->isBusy());
    });
    connect(m_controller, &PlanningController::trainingReady, this, &MainWindow::onTrainingReady);
    connect(m_controller, &PlanningController::trainingFailed, this, &MainWindow::onTrainingFailed);
    // After File, before View.
    const auto menus = menuBar()->actions();
    menuBar()->insertMenu(menus.size() > 1 ? menus[1] : nullptr, model);
    updateTrainingActions();
}

bool MainWindow::isTrainingStep() const { return m_trainingAction->isChecked(); }

void MainWindow::setTrainingStep(bool on)
{
    if (m_trainingAction->isChecked() != on) {
        m_trainingAction->setChecked(on); // toggled() comes back here
        return;
    }
    if (!m_forward || !m_pendingSpec.isEmpty()) {
        updateTrainingActions(); // the model being loaded takes the setting when it arrives
        return;
    }
    applyTrainingStep();
}

void MainWindow::setPersistentGradients(bool on)
{
    if (m_persistentGradsAction->isChecked() != on) {
        m_persistentGradsAction->setChecked(on);
        return;
    }
    if (m_trainingAction->isChecked() && m_forward && m_pendingSpec.isEmpty())
        applyTrainingStep();
}

void MainWindow::applyTrainingStep()
{
    updateTrainingActions();
    if (!m_forward)
        return;
    if (m_trainingAction->isChecked()) {
        if (const QString why = whyNoTrainingStep(*m_forward); !why.isEmpty()) {
            refuseTrainingStep(why);
            return;
        }
        core::TrainingOptions options;
        options.weightGradientsInArena = !m_persistentGradsAction->isChecked();
        m_play->pause();
        m_controller->requestTraining(m_forward, options); // onTrainingReady or onTrainingFailed
        return;
    }
    // Off: the model as loaded. A file load has finished before this runs, so a load in progress is
    // a training step still deriving, no longer wanted (its plan job was dropped with it).
    const bool deriving = m_controller->isLoading();
    if (deriving)
        m_controller->cancel();
    if (deriving || m_shown != m_forward)
        showWorkload(m_forward);
}

void MainWindow::onTrainingReady(std::shared_ptr<const core::Workload> forward, std::shared_ptr<const core::Workload> training)
{
    if (forward != m_forward || !m_trainingAction->isChecked())
        return; // for a model, or a setting, no longer on display
    m_banner->hide();
    showWorkload(std::move(training));
}

void MainWindow::onTrainingFailed(std::shared_ptr<const core::Workload> forward, const QString& message)
{
    if (forward == m_forward)
        refuseTrainingStep(message);
}

void MainWindow::refuseTrainingStep(const QString& reason)
{
    {
        const QSignalBlocker block(m_trainingAction);
        m_trainingAction->setChecked(false);
    }
    updateTrainingActions();
    if (m_forward && m_shown != m_forward)
        showWorkload(m_forward); // the forward pass, as loaded
    // core's messages start with the source; the banner names the model once.
    QString why = reason;
    if (m_forward && why.startsWith(QString::fromStdString(m_forward->source) + QStringLiteral(": ")))
        why.remove(0, qsizetype(m_forward->source.size()) + 2);
    if (why.endsWith(QLatin1Char('.')))
        why.chop(1);
    const bool forwardShown = m_forward && m_forward->graph && whyNoTrainingStep(*m_forward).isEmpty();
    const QString message = tr("No training step for %1: %2.").arg(displayName(m_currentSpec), why)
        + (forwardShown ? tr(" Showing the forward pass.") : QString());
    m_banner->showMessage(message, MessageBanner::Type::Error);
    emit errorOccurred(message);
}

void MainWindow::updateTrainingActions()
{
    const QString why = m_forward ? whyNoTrainingStep(*m_forward) : QString();
    // Before the first model (memplan-studio --training) the setting can be made; it applies on load.
    const bool applies = why.isEmpty();
    m_trainingAction->setEnabled(applies);
    m_trainingAction->setToolTip(applies
            ? tr("Plan one training step: the forward pass, then the loss gradient and each op's gradient in reverse; "
                 "forward activations stay alive until the gradient that reads them (Ctrl+T)")
            : tr("No training step: %1").arg(why));
    m_trainingAction->setStatusTip(m_trainingAction->toolTip());
    m_persistentGradsAction->setEnabled(applies && m_trainingAction->isChecked());
}
