// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// MainWindow: loading and planning, the document's selection and cursor kept in step with the table,
// the title and actions. Its construction (views, docks, menus, toolbar, status bar) is in
// mainwindowsetup.cpp, files and exports in mainwindowfiles.cpp, the Run toolbar in mainwindowrun.cpp,
// strategies and scenarios in mainwindowstrategies.cpp and mainwindowscenarios.cpp.
#include "mainwindow.h"
#include "arenalayoutview.h"
#include "memorycurveview.h"

#include "comparisonview.h"
#include "mainwindowshared.h"
#include "messagebanner.h"
#include "plandocument.h"
#include "planningcontroller.h"
#include "playcontroller.h"
#include "strategypanel.h"
#include "tensortablemodel.h"

#include "strategies/training.h"
#include "util/format.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QProgressBar>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QToolButton>

#include <algorithm>

namespace {

using mainwindow::displayName;
using mainwindow::plannerUsesTimeLimit;

QString bytesText(qint64 bytes) { return QString::fromStdString(core::formatBytes(bytes)); }

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_document(new PlanDocument(this))
    , m_controller(new PlanningController(this))
    , m_play(new PlayController(m_document, this))
{
    setWindowTitle(tr("MemPlan Studio"));
    setAcceptDrops(true);
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);

    createViews();
    createDocks();
    createStrategyDock();
    createActions();
    createTrainingMenu();
    createToolBar();
    createRunControls();
    createPlayControls();
    createStatusBar();
    connectDocument();
    connectStrategies();
    createScenarioMenu();

    connect(m_controller, &PlanningController::loadFinished, this, &MainWindow::onLoadFinished);
    connect(m_controller, &PlanningController::inputsOpen, this, [this](const QString& spec, const core::OpenInputs& open) {
        m_openInputsSpec = spec;
        m_openInputs = open;
    });
    connect(m_controller, &PlanningController::loadFailed, this, [this](const QString& message) {
        const QString name = displayName(m_pendingSpec);
        const QString text = message.contains(name) ? message : tr("%1: %2").arg(name, message);
        const bool sizable = !m_openInputsSpec.isEmpty() && m_openInputsSpec == m_pendingSpec;
        m_pendingSpec.clear();
        // The model still on display keeps its sizes to change.
        m_inputSizesAction->setEnabled(sizable || (!m_openInputsSpec.isEmpty() && m_openInputsSpec == m_currentSpec));
        const QString still = m_currentSpec.isEmpty() ? QString() : tr(" — still showing %1.").arg(displayName(m_currentSpec));
        // A model that leaves its input sizes open, opened without sizes, is not broken: it asks for
        // them, in the window's words (the import's own message quotes the command line's flags).
        const bool asksForSizes = sizable && m_bindingsSpec != m_openInputsSpec
            && (!m_openInputs.symbols.empty() || !m_openInputs.inputs.empty());
        QString full = asksForSizes
            ? tr("%1 leaves %2 open: give %3 in Input Sizes to plan it.")
                  .arg(name, openSizesText(m_openInputs), m_openInputs.symbols.size() + m_openInputs.inputs.size() > 1 ? tr("them") : tr("it"))
            : tr("Could not open %1. %2").arg(name, text) + (sizable ? tr(" Input Sizes… gives them here.") : QString());
        full += still;
        m_banner->showMessage(full, asksForSizes ? MessageBanner::Type::Information : MessageBanner::Type::Error,
            sizable ? m_inputSizesAction : nullptr);
        m_banner->setToolTip(asksForSizes ? text : QString());
        emit errorOccurred(full);
    });
    connect(m_controller, &PlanningController::planReady, this, &MainWindow::onPlanReady);
    connect(m_controller, &PlanningController::planFailed, this,
        [this](const QString& message) { onFailure(tr("Planning with %1 failed: %2").arg(plannerName(), message)); });
    connect(m_controller, &PlanningController::busyChanged, this, &MainWindow::onBusyChanged);
    connect(m_controller, &PlanningController::loadStarted, this,
        [this](const QString& spec) {
            m_loadingName = displayName(spec);
            m_busyLabel->setText(tr("Loading %1…").arg(m_loadingName));
            onBusyChanged(m_controller->isBusy());
        });
    connect(m_controller, &PlanningController::loadProgress, this, [this](const QString& stage, double fraction) {
        m_busyLabel->setText(tr("Loading %1: %2, %3 %").arg(m_loadingName, stage).arg(100.0 * fraction, 0, 'f', 0));
        m_busyBar->setRange(0, 100);
        m_busyBar->setValue(static_cast<int>(100.0 * fraction));
    });
    connect(m_controller, &PlanningController::planStarted, this, [this](const QString& planner) {
        m_planningWith = planner;
        m_busyLabel->setText(tr("Planning with %1…").arg(planner));
        onBusyChanged(m_controller->isBusy());
    });
    connect(m_controller, &PlanningController::planProgress, this, &MainWindow::onPlanProgress);

    resize(1400, 900);
    updateActions();
}

MainWindow::~MainWindow() = default;

void MainWindow::connectDocument()
{
    connect(m_document, &PlanDocument::selectionChanged, this, &MainWindow::onDocumentSelection);
    connect(m_document, &PlanDocument::cursorChanged, this, &MainWindow::updateCursorLabel);
    connect(m_document, &PlanDocument::planChanged, this, &MainWindow::updateCursorLabel);
    connect(m_document, &PlanDocument::workloadChanged, this, &MainWindow::updateCursorLabel);
    connect(m_document, &PlanDocument::planChanged, this, &MainWindow::updateActions);
    connect(m_document, &PlanDocument::workloadChanged, this, &MainWindow::updateActions);
    connect(m_document, &PlanDocument::workloadChanged, this, &MainWindow::layPeerProfile);
    connect(m_document, &PlanDocument::measurementChanged, this, &MainWindow::updateActions);
}

// ---------------------------------------------------------------- loading and planning

QString MainWindow::plannerName() const { return m_plannerCombo->currentText(); }

void MainWindow::setPlannerName(const QString& name)
{
    const int index = m_plannerCombo->findText(name);
    if (index >= 0)
        m_plannerCombo->setCurrentIndex(index);
}

void MainWindow::setAlignment(core::Bytes alignment)
{
    m_alignmentSpin->setValue(static_cast<int>(alignment));
    m_alignmentTimer->stop();
    reload();
}

void MainWindow::setWorkspaces(bool on)
{
    if (m_workspacesCheck->isChecked() == on)
        return;
    m_workspacesCheck->setChecked(on); // toggled() re-loads
}

namespace {
QString resolvedSpec(const QString& spec)
{
    const QString s = spec.trimmed();
    return s.isEmpty() || s.startsWith(QLatin1String("example:")) ? s : QFileInfo(s).absoluteFilePath();
}
} // namespace

QString MainWindow::openSizesText(const core::OpenInputs& open)
{
    QStringList parts;
    if (!open.symbols.empty()) {
        QStringList names;
        for (std::size_t k = 0; k < open.symbols.size() && k < 4; ++k)
            names << QString::fromStdString(open.symbols[k]);
        if (open.symbols.size() > 4)
            names << tr("%1 more").arg(open.symbols.size() - 4);
        parts << (open.symbols.size() == 1 ? tr("dimension %1") : tr("dimensions %1")).arg(names.join(QStringLiteral(", ")));
    }
    if (!open.inputs.empty()) {
        QStringList names;
        for (std::size_t k = 0; k < open.inputs.size() && k < 3; ++k)
            names << QString::fromStdString(open.inputs[k].name);
        if (open.inputs.size() > 3)
            names << tr("%1 more").arg(open.inputs.size() - 3);
        parts << (open.inputs.size() == 1 ? tr("the shape of input %1") : tr("the shapes of inputs %1")).arg(names.join(QStringLiteral(", ")));
    }
    return parts.join(tr(" and "));
}

void MainWindow::openFile(const QString& spec)
{
    const QString resolved = resolvedSpec(spec);
    if (resolved.isEmpty())
        return;
    // A JSON array is an ONNX Runtime profile (MemPlan's JSON graphs are objects): it lays over the model on display.
    if (resolved.endsWith(QLatin1String(".json"), Qt::CaseInsensitive)) {
        const std::string head = core::fileHead(resolved.toStdString());
        const auto first = head.find_first_not_of(" \t\r\n");
        if (first != std::string::npos && head[first] == '[') {
            openPeerProfile(resolved);
            return;
        }
    }
    m_pendingSpec = resolved;
    core::LoadOptions options;
    if (resolved == m_bindingsSpec) {
        options.bindings = m_bindings;
        options.inputFiles = m_inputFiles;
    }
    if (m_alignmentSpin->value() > 0)
        options.alignment = m_alignmentSpin->value();
    options.workspaces = m_workspacesCheck->isChecked();
    m_play->pause();
    m_controller->requestLoad(resolved, options);
}

void MainWindow::openFileWithSizes(const QString& spec, const core::ShapeBindings& bindings,
    const std::vector<std::pair<std::string, std::filesystem::path>>& inputFiles)
{
    m_bindingsSpec = resolvedSpec(spec);
    m_bindings = bindings;
    m_inputFiles = inputFiles;
    openFile(spec);
}

core::ShapeBindings MainWindow::shapeBindings() const
{
    const QString spec = m_pendingSpec.isEmpty() ? m_currentSpec : m_pendingSpec;
    return !spec.isEmpty() && spec == m_bindingsSpec ? m_bindings : core::ShapeBindings {};
}

std::vector<std::pair<std::string, std::filesystem::path>> MainWindow::inputFiles() const
{
    const QString spec = m_pendingSpec.isEmpty() ? m_currentSpec : m_pendingSpec;
    return !spec.isEmpty() && spec == m_bindingsSpec ? m_inputFiles : std::vector<std::pair<std::string, std::filesystem::path>> {};
}

void MainWindow::reload()
{
    if (!m_currentSpec.isEmpty())
        openFile(m_currentSpec);
}

void MainWindow::replan()
{
    if (plannerName() == mainwindow::recordedPlannerName()) { // a snapshot's own placement: nothing to plan
        if (const core::Workload* workload = m_document->workload(); workload && workload->recorded) {
            m_controller->cancel();
            onPlanReady(workload->recorded->plan);
        }
        return;
    }
    m_planTimeLimit = plannerUsesTimeLimit(plannerName()) ? m_timeLimitSpin->value() : 0.0;
    if (auto workload = m_document->sharedWorkload())
        m_controller->requestPlan(std::move(workload), plannerName(), m_planTimeLimit);
}

void MainWindow::syncRecordedPlanner(const core::Workload& workload)
{
    const QSignalBlocker block(m_plannerCombo);
    const int index = m_plannerCombo->findText(mainwindow::recordedPlannerName());
    if (workload.recorded) {
        if (index < 0) {
            m_plannerCombo->insertItem(0, mainwindow::recordedPlannerName());
            m_plannerCombo->setItemData(0,
                tr("Where %1 put each allocation: the snapshot's own addresses; the other planners re-plan the same allocations")
                    .arg(QString::fromStdString(workload.recorded->allocator)),
                Qt::ToolTipRole);
        }
        m_plannerCombo->setCurrentIndex(0);
    } else if (index >= 0) {
        m_plannerCombo->removeItem(index);
        setPlannerName(mainwindow::savedPlannerName());
    }
    updateTimeLimitEnabled();
}

void MainWindow::stopPlanning()
{
    if (!m_controller->isPlanning())
        return;
    m_controller->stop();
    statusBar()->showMessage(tr("Stopped; keeping the best plan found so far."), 3000);
}

void MainWindow::updateTimeLimitEnabled()
{
    const bool uses = plannerUsesTimeLimit(plannerName());
    m_timeLimitSpin->setEnabled(uses);
    m_timeLimitSpin->setToolTip(uses ? tr("How long %1 searches before it returns the best plan found").arg(plannerName())
                                     : tr("Only search planners (exact) use a time limit"));
}

void MainWindow::onPlanProgress(qint64 bestArena, qint64 lowerBound, double seconds, bool provenOptimal)
{
    const QString time = QStringLiteral("%1 s").arg(seconds, 0, 'f', 1);
    QString text;
    if (bestArena <= 0)
        text = tr("%1: searching, lower bound %2, %3").arg(m_planningWith, bytesText(lowerBound), time);
    else if (provenOptimal)
        text = tr("%1: best %2, proven optimal, %3").arg(m_planningWith, bytesText(bestArena), time);
    else if (lowerBound > 0)
        text = tr("%1: best %2, lower bound %3 (+%4 %), %5")
                   .arg(m_planningWith, bytesText(bestArena), bytesText(lowerBound))
                   .arg(100.0 * static_cast<double>(bestArena - lowerBound) / static_cast<double>(lowerBound), 0, 'f', 1)
                   .arg(time);
    else
        text = tr("%1: best %2, %3").arg(m_planningWith, bytesText(bestArena), time);
    // The search ends at its time limit at the latest (or sooner, with a proof): that is the estimate.
    if (m_planTimeLimit > 0 && !provenOptimal) {
        text += tr(" · at most %1 s left (time limit)").arg(std::max(0.0, m_planTimeLimit - seconds), 0, 'f', 1);
        m_busyBar->setRange(0, 1000);
        m_busyBar->setValue(static_cast<int>(std::clamp(seconds / m_planTimeLimit, 0.0, 1.0) * 1000));
    }
    m_busyLabel->setText(text);
}

void MainWindow::onLoadFinished(std::shared_ptr<const core::Workload> workload)
{
    const QString previousSpec = m_currentSpec;
    m_currentSpec = m_pendingSpec.isEmpty() ? QString::fromStdString(workload->source) : m_pendingSpec;
    m_pendingSpec.clear();
    m_banner->hide();
    if (m_openInputsSpec != m_currentSpec) { // another model: its own sizes, if any, come with its next load
        m_openInputs = {};
        m_openInputsSpec.clear();
        // A model file that loads as it is leaves nothing open, but its inputs may still be given files.
        if (workload->graph && !workload->graph->inputs.empty() && !m_currentSpec.startsWith(QLatin1String("example:"))) {
            for (const auto t : workload->graph->inputs)
                m_openInputs.names.push_back(workload->graph->tensors[static_cast<std::size_t>(t)].name);
            m_openInputsSpec = m_currentSpec;
        }
    }
    m_inputSizesAction->setEnabled(!m_openInputsSpec.isEmpty());
    addRecentFile(m_currentSpec);
    // The training step belongs to a model, as strategies do: another model starts without it, a
    // reload of the same one keeps it (and derives it again from what was loaded).
    if (!previousSpec.isEmpty() && previousSpec != m_currentSpec) {
        const QSignalBlocker blockTraining(m_trainingAction), blockGrads(m_persistentGradsAction);
        m_trainingAction->setChecked(false);
        m_persistentGradsAction->setChecked(false);
    }
    m_forward = std::move(workload);
    m_shown.reset();
    applyTrainingStep();
}

void MainWindow::showWorkload(std::shared_ptr<const core::Workload> workload)
{
    m_shown = workload;
    updateTrainingActions();
    syncRecordedPlanner(*workload);
    m_document->setWorkload(workload);
    updateTitle();
    if (!workload->notes.empty()) {
        QStringList notes;
        for (const auto& note : workload->notes)
            notes << QString::fromStdString(note);
        statusBar()->showMessage(notes.join(QStringLiteral("; ")), 8000);
    }
    if (m_comparison && m_comparison->isVisible())
        m_comparison->setOriginal(workload);
    // Strategies and the budget belong to a model: another model starts without them, a reload of
    // the same one (alignment, workspaces, input sizes) keeps them.
    if (m_strategyPanel->original() && m_strategyPanel->original()->source != workload->source) {
        m_strategyPanel->resetForAnotherModel();
        m_document->setBudget(0);
    }
    // With strategies on, the panel delivers the workload to plan (onStrategyWorkload).
    if (!m_strategyPanel->setOriginal(workload))
        replan();
}

void MainWindow::onPlanReady(const core::Plan& plan)
{
    m_document->setPlan(plan);
    updateTitle();
    emit planDisplayed();
}

void MainWindow::onFailure(const QString& message)
{
    m_banner->showMessage(message, MessageBanner::Type::Error);
    emit errorOccurred(message);
}

void MainWindow::onBusyChanged(bool busy)
{
    m_busyLabel->setVisible(busy);
    m_busyBar->setVisible(busy);
    if (!busy)
        m_busyBar->setRange(0, 0); // indeterminate again until a load reports its stages
    // Stop keeps the best plan (planning only); Cancel drops whatever runs (a load, or a plan when loading too).
    m_stopButton->setVisible(busy && m_controller->isPlanning() && !m_controller->isLoading());
    m_cancelButton->setVisible(busy);
    if (!busy)
        m_busyLabel->clear();
}

// ---------------------------------------------------------------- selection and cursor

void MainWindow::onTableCurrentChanged()
{
    if (m_syncingSelection)
        return;
    const QModelIndex current = m_table->selectionModel()->currentIndex();
    const int buffer = current.isValid() ? current.data(TensorTableModel::BufferRole).toInt() : -1;
    m_syncingSelection = true;
    m_document->selectBuffer(buffer);
    // A buffer of a control-flow op's graph: its block is selected, the buffer outlined inside it.
    if (current.isValid())
        m_arenaLayout->selectInner({ current.data(TensorTableModel::NestedGraphRole).toInt(),
            current.data(TensorTableModel::NestedBufferRole).toInt() });
    m_syncingSelection = false;
}

void MainWindow::refilter(const std::function<void()>& change)
{
    // Rows the filter hides move the table's current row; that is not the user choosing a tensor, so
    // the selection every view shares stays, and the table shows it again when its row is visible.
    m_syncingSelection = true;
    change();
    m_syncingSelection = false;
    onDocumentSelection(m_document->selectedBuffer());
}

void MainWindow::onDocumentSelection(int buffer)
{
    if (m_syncingSelection)
        return;
    m_syncingSelection = true;
    const QModelIndex index = buffer >= 0 ? m_proxy->mapFromSource(m_tableModel->index(buffer, 0)) : QModelIndex();
    if (index.isValid()) {
        m_table->selectionModel()->setCurrentIndex(
            index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        m_table->scrollTo(index, QAbstractItemView::EnsureVisible);
    } else {
        m_table->selectionModel()->clear(); // none, or filtered out
    }
    m_syncingSelection = false;
}

void MainWindow::updateCursorLabel()
{
    const core::Step step = m_document->cursorStep();
    const core::Workload* workload = m_document->workload();
    if (!workload || step < 0) {
        m_cursorLabel->setText(workload ? tr("%1 steps").arg(workload->problem.steps) : QString());
        return;
    }
    const auto& curve = m_document->liveCurve();
    const core::Bytes live = step < static_cast<core::Step>(curve.size()) ? curve[step] : 0;
    // A snapshot with event times says when the step happened, counted from its first event.
    QString when;
    if (workload->recorded && step < static_cast<core::Step>(workload->recorded->stepSeconds.size()))
        when = QStringLiteral(" · +") + QString::fromStdString(core::formatSeconds(workload->recorded->stepSeconds[static_cast<std::size_t>(step)]));
    m_cursorLabel->setText(tr("step %1 / %2%3 · %4 live")
                               .arg(step)
                               .arg(workload->problem.steps)
                               .arg(when, QString::fromStdString(core::formatBytes(live))));
}

void MainWindow::updateTitle()
{
    if (m_currentSpec.isEmpty()) {
        setWindowTitle(tr("MemPlan Studio"));
        return;
    }
    QString title = displayName(m_currentSpec);
    if (const core::Workload* workload = m_document->workload();
        workload && workload->graph && core::backwardStart(*workload->graph, workload->schedule) < workload->schedule.steps())
        title += tr(" — training step");
    if (const core::Plan* plan = m_document->plan())
        title += QStringLiteral(" — %1, arena %2")
                     .arg(QString::fromStdString(plan->planner),
                         QString::fromStdString(core::formatBytes(plan->arenaSize)));
    setWindowTitle(title + QStringLiteral(" — MemPlan Studio"));
}

void MainWindow::updateActions()
{
    const bool plan = m_document->hasPlan();
    m_exportJsonAction->setEnabled(plan);
    m_exportCsvAction->setEnabled(plan);
    m_exportLatencyAction->setEnabled(plan && m_document->measurement());
    m_playAction->setEnabled(plan);
    m_stepBackAction->setEnabled(plan);
    m_stepForwardAction->setEnabled(plan);
    m_peerProfileAction->setEnabled(m_document->workload() && m_document->workload()->graph);
    m_compareAction->setEnabled(m_document->workload() != nullptr);
    m_timeAxisAction->setEnabled(m_memoryCurve->canShowTime());
}

void MainWindow::fit() { m_document->fitVisibleSteps(); }

void MainWindow::showTimeAxis(bool on) { m_timeAxisAction->setChecked(on); }
