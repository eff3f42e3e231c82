// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "mainwindow.h"

#include "arenalayoutview.h"
#include "coloringview.h"
#include "comparisonview.h"
#include "latencylane.h"
#include "lifetimebarsview.h"
#include "memorycurveview.h"
#include "messagebanner.h"
#include "plandocument.h"
#include "planningcontroller.h"
#include "playcontroller.h"
#include "strategypanel.h"
#include "summarypanel.h"
#include "tensortablemodel.h"

#include "examples/examples.h"
#include "io/planjson.h"
#include "io/problemcsv.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "util/format.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSaveFile>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

namespace {

const auto kRecentKey = QStringLiteral("recentFiles");
const auto kPlannerKey = QStringLiteral("planner");
constexpr int kMaxRecent = 8;

// Planners that read PlanOptions::timeLimitSeconds; the time-limit control is enabled only for them.
bool plannerUsesTimeLimit(const QString& name) { return name == QLatin1String("exact"); }

QString bytesText(qint64 bytes) { return QString::fromStdString(core::formatBytes(bytes)); }

QString displayName(const QString& spec)
{
    return spec.startsWith(QLatin1String("example:")) ? spec : QFileInfo(spec).fileName();
}

bool writeFile(const QString& path, const std::string& text, QString* error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)
        || file.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size())
        || !file.commit()) {
        if (error)
            *error = QObject::tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString());
        return false;
    }
    return true;
}

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
    createToolBar();
    createRunControls();
    createStatusBar();
    connectDocument();
    connectStrategies();
    createScenarioMenu();

    connect(m_controller, &PlanningController::loadFinished, this, &MainWindow::onLoadFinished);
    connect(m_controller, &PlanningController::loadFailed, this, [this](const QString& message) {
        const QString name = displayName(m_pendingSpec);
        const QString text = message.contains(name) ? message : tr("%1: %2").arg(name, message);
        m_pendingSpec.clear();
        onFailure(tr("Could not open %1. %2").arg(name, text)
            + (m_currentSpec.isEmpty() ? QString() : tr(" — still showing %1.").arg(displayName(m_currentSpec))));
    });
    connect(m_controller, &PlanningController::planReady, this, &MainWindow::onPlanReady);
    connect(m_controller, &PlanningController::planFailed, this,
        [this](const QString& message) { onFailure(tr("Planning with %1 failed: %2").arg(plannerName(), message)); });
    connect(m_controller, &PlanningController::busyChanged, this, &MainWindow::onBusyChanged);
    connect(m_controller, &PlanningController::loadStarted, this,
        [this](const QString& spec) {
            m_busyLabel->setText(tr("Loading %1…").arg(displayName(spec)));
            onBusyChanged(m_controller->isBusy());
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

// ---------------------------------------------------------------- construction

void MainWindow::createViews()
{
    m_banner = new MessageBanner(this);
    m_memoryCurve = new MemoryCurveView(m_document, this);
    m_lifetimeBars = new LifetimeBarsView(m_document, this);
    m_arenaLayout = new ArenaLayoutView(m_document, this);
    m_coloring = new ColoringView(m_document, this);
    m_latencyLane = new LatencyLane(m_document, this);

    m_tabs = new QTabWidget(this);
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(m_lifetimeBars, tr("Lifetime bars"));
    m_tabs->addTab(m_arenaLayout, tr("Arena layout"));
    m_tabs->addTab(m_coloring, tr("Coloring (rooms)"));
    m_tabs->setTabToolTip(0, tr("One row per buffer: a bar from its start step to its end step"));
    m_tabs->setTabToolTip(1, tr("Steps × arena offset: where each buffer sits in memory while it is live"));
    m_tabs->setTabToolTip(2, tr("Interval-graph coloring: buffers that share one slot over time"));

    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(m_memoryCurve);
    splitter->addWidget(m_tabs);
    splitter->addWidget(m_latencyLane); // under the lifetime bars, on the same time axis
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);
    splitter->setStretchFactor(2, 0);

    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(4, 4, 4, 0);
    layout->setSpacing(4);
    layout->addWidget(m_banner);
    layout->addWidget(splitter, 1);
    setCentralWidget(central);
}

void MainWindow::createDocks()
{
    // Tensor table with its filter row.
    m_tableModel = new TensorTableModel(m_document, this);
    m_proxy = new TensorFilterProxyModel(this);
    m_proxy->setSourceModel(m_tableModel);

    auto* tablePane = new QWidget(this);
    auto* filterRow = new QHBoxLayout;
    m_filterEdit = new QLineEdit(tablePane);
    m_filterEdit->setPlaceholderText(tr("Filter by name…"));
    m_filterEdit->setClearButtonEnabled(true);
    m_kindCombo = new QComboBox(tablePane);
    m_kindCombo->addItem(tr("All kinds"), -1);
    for (auto kind : { core::TensorKind::Input, core::TensorKind::Output, core::TensorKind::Activation,
             core::TensorKind::Weight, core::TensorKind::Persistent })
        m_kindCombo->addItem(QString::fromUtf8(core::kindName(kind).data()), static_cast<int>(kind));
    m_minSizeCombo = new QComboBox(tablePane);
    m_minSizeCombo->setToolTip(tr("Show only buffers at least this large"));
    const std::pair<const char*, qint64> sizes[] = { { "Any size", 0 }, { "≥ 1 KiB", 1024 }, { "≥ 64 KiB", 64 * 1024 },
        { "≥ 1 MiB", 1024 * 1024 }, { "≥ 16 MiB", 16 * 1024 * 1024 }, { "≥ 256 MiB", 256LL * 1024 * 1024 } };
    for (const auto& [label, bytes] : sizes)
        m_minSizeCombo->addItem(QString::fromUtf8(label), bytes);
    filterRow->addWidget(m_filterEdit, 1);
    filterRow->addWidget(m_kindCombo);
    filterRow->addWidget(m_minSizeCombo);

    m_table = new QTableView(tablePane);
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(TensorTableModel::Start, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->setTextElideMode(Qt::ElideLeft); // exported names are paths: the distinctive part is at the end
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setHighlightSections(false);
    m_table->horizontalHeader()->setStretchLastSection(true);
    const int widths[] = { 200, 80, 160, 240, 55, 55, 80, 100, 50 };
    for (int c = 0; c < TensorTableModel::ColumnCount; ++c)
        m_table->setColumnWidth(c, widths[c]);

    auto* tableLayout = new QVBoxLayout(tablePane);
    tableLayout->setContentsMargins(4, 4, 4, 4);
    tableLayout->setSpacing(4);
    tableLayout->addLayout(filterRow);
    tableLayout->addWidget(m_table, 1);

    connect(m_filterEdit, &QLineEdit::textChanged, m_proxy, &TensorFilterProxyModel::setNameFilter);
    connect(m_kindCombo, &QComboBox::currentIndexChanged, this, [this] {
        const int kind = m_kindCombo->currentData().toInt();
        m_proxy->setKindFilter(kind < 0 ? std::nullopt : std::optional(static_cast<core::TensorKind>(kind)));
    });
    connect(m_minSizeCombo, &QComboBox::currentIndexChanged, this,
        [this] { m_proxy->setMinimumSize(m_minSizeCombo->currentData().toLongLong()); });
    // Double-click: move the step cursor to where the buffer is born, so every view shows its neighbours.
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        const core::Workload* workload = m_document->workload();
        const int buffer = index.data(TensorTableModel::BufferRole).toInt();
        if (workload && buffer >= 0 && buffer < static_cast<int>(workload->problem.buffers.size()))
            m_document->setCursorStep(workload->problem.buffers[static_cast<std::size_t>(buffer)].lifetime.start);
    });
    connect(
        m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &MainWindow::onTableCurrentChanged);

    auto* tableDock = new QDockWidget(tr("Tensors"), this);
    tableDock->setObjectName(QStringLiteral("tensorsDock"));
    tableDock->setWidget(tablePane);
    addDockWidget(Qt::BottomDockWidgetArea, tableDock);

    m_summary = new SummaryPanel(m_document, this);
    auto* summaryDock = new QDockWidget(tr("Summary"), this);
    summaryDock->setObjectName(QStringLiteral("summaryDock"));
    summaryDock->setWidget(m_summary);
    addDockWidget(Qt::LeftDockWidgetArea, summaryDock);
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);

    resizeDocks({ summaryDock }, { 320 }, Qt::Horizontal);
    resizeDocks({ tableDock }, { 250 }, Qt::Vertical);
}

void MainWindow::createActions()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    m_openAction = file->addAction(style()->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open…"), QKeySequence::Open,
        this, &MainWindow::openFileDialog);
    m_openAction->setToolTip(tr("Open an ONNX model, a JSON graph or an allocation-problem CSV"));

    QMenu* examples = file->addMenu(tr("Open &Example"));
    for (const auto& example : core::exampleList()) {
        const QString spec = QStringLiteral("example:") + QString::fromStdString(example.name);
        QAction* action
            = examples->addAction(QString::fromStdString(example.name), this, [this, spec] { openFile(spec); });
        action->setToolTip(QString::fromStdString(example.description));
        action->setStatusTip(QString::fromStdString(example.description));
    }
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    rebuildRecentMenu();

    file->addSeparator();
    m_exportMenu = file->addMenu(tr("&Export"));
    const std::pair<QWidget*, QString> views[]
        = { { m_memoryCurve, tr("Memory Curve") }, { m_lifetimeBars, tr("Lifetime Bars") },
              { m_arenaLayout, tr("Arena Layout") }, { m_coloring, tr("Coloring") } };
    for (const auto& [view, title] : views) {
        QWidget* target = view;
        const QString base = title.toLower().replace(QLatin1Char(' '), QLatin1Char('-'));
        m_exportMenu->addAction(
            tr("%1 as PNG or SVG…").arg(title), this, [this, target, base] { exportViewDialog(target, base); });
    }
    m_exportMenu->addAction(tr("Window as PNG…"), this, [this] { exportViewDialog(this, QStringLiteral("window")); });
    m_exportMenu->addSeparator();
    m_exportJsonAction = m_exportMenu->addAction(tr("Plan as &JSON…"), this, [this] { exportPlanDialog(true); });
    m_exportCsvAction = m_exportMenu->addAction(tr("Plan as &CSV…"), this, [this] { exportPlanDialog(false); });

    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    m_fitAction = view->addAction(tr("&Fit"), this, &MainWindow::fit);
    m_fitAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    m_fitAction->setToolTip(tr("Show all steps (Ctrl+0)"));
    view->addSeparator();
    for (auto* dock : findChildren<QDockWidget*>())
        view->addAction(dock->toggleViewAction());

    QMenu* play = menuBar()->addMenu(tr("&Play"));
    m_playAction = play->addAction(
        style()->standardIcon(QStyle::SP_MediaPlay), tr("&Play"), m_play, &PlayController::togglePlay);
    m_playAction->setShortcut(QKeySequence(Qt::Key_Space));
    m_playAction->setToolTip(tr("Step through the schedule, narrating each allocation, free and reuse (Space)"));
    m_stepBackAction = play->addAction(
        style()->standardIcon(QStyle::SP_MediaSeekBackward), tr("Step &Back"), m_play, &PlayController::stepBack);
    m_stepBackAction->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Left));
    m_stepBackAction->setToolTip(tr("Previous step (Alt+Left)"));
    m_stepForwardAction = play->addAction(
        style()->standardIcon(QStyle::SP_MediaSeekForward), tr("Step &Forward"), m_play, &PlayController::stepForward);
    m_stepForwardAction->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Right));
    m_stepForwardAction->setToolTip(tr("Next step (Alt+Right)"));
    connect(m_play, &PlayController::playingChanged, this, [this](bool playing) {
        m_playAction->setText(playing ? tr("&Pause") : tr("&Play"));
        m_playAction->setIcon(style()->standardIcon(playing ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
    });

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About MemPlan Studio"), this, [this] {
        QMessageBox::about(this, tr("About MemPlan Studio"),
            tr("<b>MemPlan Studio</b><p>Plans how a neural network's tensors share one memory arena and shows "
               "lifetimes, arena layout, coloring and the memory curve.</p>"));
    });
}

void MainWindow::createToolBar()
{
    QToolBar* bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addAction(m_openAction);
    bar->addAction(m_fitAction);
    bar->addSeparator();

    auto label = [bar](const QString& text) {
        auto* l = new QLabel(text, bar);
        l->setContentsMargins(6, 0, 4, 0);
        bar->addWidget(l);
    };

    label(tr("Planner"));
    m_plannerCombo = new QComboBox(bar);
    for (const auto& name : core::plannerNames()) {
        m_plannerCombo->addItem(QString::fromStdString(name));
        if (const core::Planner* planner = core::plannerByName(name))
            m_plannerCombo->setItemData(m_plannerCombo->count() - 1,
                QString::fromUtf8(planner->description().data(), static_cast<qsizetype>(planner->description().size())),
                Qt::ToolTipRole);
    }
    const QString saved = QSettings().value(kPlannerKey, QStringLiteral("greedy-by-size")).toString();
    m_plannerCombo->setCurrentIndex(std::max(0, m_plannerCombo->findText(saved)));
    m_plannerCombo->setToolTip(tr("Planning algorithm; changing it re-plans"));
    bar->addWidget(m_plannerCombo);
    connect(m_plannerCombo, &QComboBox::currentTextChanged, this, [this](const QString& name) {
        QSettings().setValue(kPlannerKey, name);
        updateTimeLimitEnabled();
        replan();
    });

    label(tr("Time limit"));
    m_timeLimitSpin = new QDoubleSpinBox(bar);
    m_timeLimitSpin->setRange(0.1, 3600.0);
    m_timeLimitSpin->setDecimals(1);
    m_timeLimitSpin->setSingleStep(1.0);
    m_timeLimitSpin->setValue(5.0);
    m_timeLimitSpin->setSuffix(tr(" s"));
    bar->addWidget(m_timeLimitSpin);
    m_timeLimitTimer = new QTimer(this);
    m_timeLimitTimer->setSingleShot(true);
    m_timeLimitTimer->setInterval(600); // re-plan once typing pauses
    connect(m_timeLimitSpin, &QDoubleSpinBox::valueChanged, m_timeLimitTimer, qOverload<>(&QTimer::start));
    connect(m_timeLimitTimer, &QTimer::timeout, this, [this] {
        if (plannerUsesTimeLimit(plannerName()))
            replan();
    });
    updateTimeLimitEnabled();

    label(tr("Alignment"));
    m_alignmentSpin = new QSpinBox(bar);
    m_alignmentSpin->setRange(0, 1 << 20);
    m_alignmentSpin->setSpecialValueText(tr("default"));
    m_alignmentSpin->setSuffix(tr(" B"));
    m_alignmentSpin->setToolTip(
        tr("Activation alignment in bytes; \"default\": 256 for graphs, 1 for allocation problems"));
    bar->addWidget(m_alignmentSpin);
    m_alignmentTimer = new QTimer(this);
    m_alignmentTimer->setSingleShot(true);
    m_alignmentTimer->setInterval(400); // re-load once typing pauses, not on every digit
    connect(m_alignmentSpin, &QSpinBox::valueChanged, m_alignmentTimer, qOverload<>(&QTimer::start));
    connect(m_alignmentTimer, &QTimer::timeout, this, &MainWindow::reload);
    bar->addSeparator();

    label(tr("Bars"));
    m_sortCombo = new QComboBox(bar);
    m_sortCombo->addItem(tr("by start"), static_cast<int>(LifetimeBarsView::SortOrder::Start));
    m_sortCombo->addItem(tr("by size"), static_cast<int>(LifetimeBarsView::SortOrder::Size));
    m_sortCombo->addItem(tr("by offset"), static_cast<int>(LifetimeBarsView::SortOrder::Offset));
    m_sortCombo->setToolTip(tr("Row order of the lifetime bars"));
    bar->addWidget(m_sortCombo);
    connect(m_sortCombo, &QComboBox::currentIndexChanged, this, [this] {
        m_lifetimeBars->setSortOrder(static_cast<LifetimeBarsView::SortOrder>(m_sortCombo->currentData().toInt()));
    });
    m_colorCombo = new QComboBox(bar);
    m_colorCombo->addItem(tr("colored by kind"), static_cast<int>(LifetimeBarsView::ColorMode::Kind));
    m_colorCombo->addItem(tr("colored by slot"), static_cast<int>(LifetimeBarsView::ColorMode::Color));
    m_colorCombo->addItem(tr("colored by strategy"), static_cast<int>(LifetimeBarsView::ColorMode::Strategy));
    m_colorCombo->setToolTip(tr("Color the lifetime bars by tensor kind or by shared-object slot"));
    bar->addWidget(m_colorCombo);
    connect(m_colorCombo, &QComboBox::currentIndexChanged, this, [this] {
        m_lifetimeBars->setColorMode(static_cast<LifetimeBarsView::ColorMode>(m_colorCombo->currentData().toInt()));
    });
    bar->addSeparator();

    bar->addAction(m_stepBackAction);
    bar->addAction(m_playAction);
    bar->addAction(m_stepForwardAction);
    m_speedCombo = new QComboBox(bar);
    for (double speed : { 0.5, 1.0, 2.0, 4.0, 10.0, 30.0 })
        m_speedCombo->addItem(tr("%1 steps/s").arg(speed), speed);
    m_speedCombo->setCurrentIndex(2);
    m_speedCombo->setToolTip(tr("Play speed"));
    bar->addWidget(m_speedCombo);
    connect(m_speedCombo, &QComboBox::currentIndexChanged, this,
        [this] { m_play->setStepsPerSecond(m_speedCombo->currentData().toDouble()); });
}

void MainWindow::createStatusBar()
{
    m_narrationLabel = new QLabel(this);
    m_narrationLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_narrationLabel->setMinimumWidth(200);
    m_narrationLabel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    statusBar()->addWidget(m_narrationLabel, 1);

    m_cursorLabel = new QLabel(this);
    m_busyLabel = new QLabel(this);
    m_busyBar = new QProgressBar(this);
    m_busyBar->setRange(0, 0); // indeterminate: loading and planning report no progress
    m_busyBar->setMaximumWidth(120);
    m_busyBar->setMaximumHeight(14);
    m_busyBar->setTextVisible(false);
    m_cancelButton = new QToolButton(this);
    m_cancelButton->setText(tr("Cancel"));
    m_cancelButton->setToolTip(tr("Stop loading or planning"));
    connect(m_cancelButton, &QToolButton::clicked, this, [this] {
        m_controller->cancel();
        m_pendingSpec.clear();
        statusBar()->showMessage(tr("Cancelled."), 3000);
    });
    m_stopButton = new QToolButton(this);
    m_stopButton->setText(tr("Stop"));
    m_stopButton->setToolTip(tr("Stop planning and keep the best plan found so far"));
    connect(m_stopButton, &QToolButton::clicked, this, &MainWindow::stopPlanning);
    statusBar()->addPermanentWidget(m_cursorLabel);
    statusBar()->addPermanentWidget(m_busyLabel);
    statusBar()->addPermanentWidget(m_busyBar);
    statusBar()->addPermanentWidget(m_stopButton);
    statusBar()->addPermanentWidget(m_cancelButton);
    onBusyChanged(false);

    const auto showNarration = [this](const QString& line) {
        const bool hint = line.isEmpty();
        m_narrationLabel->setText(
            hint ? tr("Click the step axis, use the arrow keys or press Play to step through the schedule.") : line);
        m_narrationLabel->setStyleSheet(hint ? QStringLiteral("color: gray;") : QString());
        m_narrationLabel->setToolTip(line);
    };
    connect(m_play, &PlayController::narrationChanged, m_narrationLabel, showNarration);
    showNarration({});
}

void MainWindow::connectDocument()
{
    connect(m_document, &PlanDocument::selectionChanged, this, &MainWindow::onDocumentSelection);
    connect(m_document, &PlanDocument::cursorChanged, this, &MainWindow::updateCursorLabel);
    connect(m_document, &PlanDocument::planChanged, this, &MainWindow::updateCursorLabel);
    connect(m_document, &PlanDocument::workloadChanged, this, &MainWindow::updateCursorLabel);
    connect(m_document, &PlanDocument::planChanged, this, &MainWindow::updateActions);
    connect(m_document, &PlanDocument::workloadChanged, this, &MainWindow::updateActions);
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

void MainWindow::openFile(const QString& spec)
{
    QString resolved = spec.trimmed();
    if (resolved.isEmpty())
        return;
    if (!resolved.startsWith(QLatin1String("example:")))
        resolved = QFileInfo(resolved).absoluteFilePath();
    m_pendingSpec = resolved;
    core::LoadOptions options;
    if (m_alignmentSpin->value() > 0)
        options.alignment = m_alignmentSpin->value();
    m_play->pause();
    m_controller->requestLoad(resolved, options);
}

void MainWindow::reload()
{
    if (!m_currentSpec.isEmpty())
        openFile(m_currentSpec);
}

void MainWindow::replan()
{
    if (auto workload = m_document->sharedWorkload())
        m_controller->requestPlan(std::move(workload), plannerName(),
            plannerUsesTimeLimit(plannerName()) ? m_timeLimitSpin->value() : 0.0);
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
    m_busyLabel->setText(text);
}

void MainWindow::onLoadFinished(std::shared_ptr<const core::Workload> workload)
{
    m_currentSpec = m_pendingSpec.isEmpty() ? QString::fromStdString(workload->source) : m_pendingSpec;
    m_pendingSpec.clear();
    m_banner->hide();
    m_document->setWorkload(workload);
    addRecentFile(m_currentSpec);
    updateTitle();
    if (!workload->notes.empty()) {
        QStringList notes;
        for (const auto& note : workload->notes)
            notes << QString::fromStdString(note);
        statusBar()->showMessage(notes.join(QStringLiteral("; ")), 8000);
    }
    if (m_comparison && m_comparison->isVisible())
        m_comparison->setOriginal(workload);
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
    m_syncingSelection = false;
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
    m_cursorLabel->setText(tr("step %1 / %2 · %3 live")
                               .arg(step)
                               .arg(workload->problem.steps)
                               .arg(QString::fromStdString(core::formatBytes(live))));
}

void MainWindow::updateTitle()
{
    if (m_currentSpec.isEmpty()) {
        setWindowTitle(tr("MemPlan Studio"));
        return;
    }
    QString title = displayName(m_currentSpec);
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
    m_playAction->setEnabled(plan);
    m_stepBackAction->setEnabled(plan);
    m_stepForwardAction->setEnabled(plan);
}

void MainWindow::fit() { m_document->fitVisibleSteps(); }

// ---------------------------------------------------------------- files

void MainWindow::openFileDialog()
{
    const QString dir
        = m_currentSpec.startsWith(QLatin1String("example:")) ? QString() : QFileInfo(m_currentSpec).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Model"), dir,
        tr("Models (*.onnx *.json *.csv);;ONNX models (*.onnx);;JSON graphs (*.json);;Allocation problems (*.csv);;All "
           "files (*)"));
    if (!path.isEmpty())
        openFile(path);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    const auto urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const auto urls = event->mimeData()->urls();
    if (urls.isEmpty() || !urls.first().isLocalFile())
        return;
    event->acceptProposedAction();
    openFile(urls.first().toLocalFile());
}

void MainWindow::addRecentFile(const QString& spec)
{
    if (spec.startsWith(QLatin1String("example:")))
        return;
    QSettings settings;
    QStringList recent = settings.value(kRecentKey).toStringList();
    recent.removeAll(spec);
    recent.prepend(spec);
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    settings.setValue(kRecentKey, recent);
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(kRecentKey).toStringList();
    for (const QString& spec : recent) {
        QAction* action = m_recentMenu->addAction(QFileInfo(spec).fileName(), this, [this, spec] { openFile(spec); });
        action->setToolTip(spec);
        action->setStatusTip(spec);
    }
    if (recent.isEmpty())
        m_recentMenu->addAction(tr("(none)"))->setEnabled(false);
    else {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear"), this, [] { QSettings().remove(kRecentKey); });
    }
}

// ---------------------------------------------------------------- export

bool MainWindow::exportPlanJson(const QString& path, QString* error) const
{
    if (!m_document->hasPlan()) {
        if (error)
            *error = tr("There is no plan to export yet.");
        return false;
    }
    return writeFile(path, core::exportPlanJson(*m_document->workload(), *m_document->plan()), error);
}

bool MainWindow::exportProblemCsv(const QString& path, QString* error) const
{
    if (!m_document->hasPlan()) {
        if (error)
            *error = tr("There is no plan to export yet.");
        return false;
    }
    return writeFile(path, core::exportProblemCsv(m_document->workload()->problem, m_document->plan()), error);
}

void MainWindow::exportViewDialog(QWidget* view, const QString& baseName)
{
    const bool window = view == this;
    const QString path = QFileDialog::getSaveFileName(this, tr("Export Image"), baseName + QStringLiteral(".png"),
        window ? tr("PNG image (*.png)") : tr("PNG image (*.png);;SVG image (*.svg)"));
    if (path.isEmpty())
        return;
    QString error;
    bool ok = false;
    if (window)
        ok = grab().save(path) || (error = tr("Cannot write %1").arg(path), false);
    else if (view == m_memoryCurve)
        ok = m_memoryCurve->exportImage(path, &error);
    else if (view == m_lifetimeBars)
        ok = m_lifetimeBars->exportImage(path, &error);
    else if (view == m_arenaLayout)
        ok = m_arenaLayout->exportImage(path, &error);
    else if (view == m_coloring)
        ok = m_coloring->exportImage(path, &error);
    if (ok)
        statusBar()->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), 5000);
    else
        m_banner->showMessage(error, MessageBanner::Type::Error);
}

void MainWindow::exportPlanDialog(bool json)
{
    const QString base = displayName(m_currentSpec).section(QLatin1Char('.'), 0, 0).remove(QStringLiteral("example:"));
    const QString path = QFileDialog::getSaveFileName(this, json ? tr("Export Plan as JSON") : tr("Export Plan as CSV"),
        base + (json ? QStringLiteral("-plan.json") : QStringLiteral("-plan.csv")),
        json ? tr("Plan JSON (*.json)") : tr("Allocation CSV (*.csv)"));
    if (path.isEmpty())
        return;
    QString error;
    if (json ? exportPlanJson(path, &error) : exportProblemCsv(path, &error))
        statusBar()->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), 5000);
    else
        m_banner->showMessage(error, MessageBanner::Type::Error);
}

bool MainWindow::renderScreenshots(const QString& dir, QString* error)
{
    if (!QDir().mkpath(dir)) {
        if (error)
            *error = tr("Cannot create the folder %1").arg(QDir::toNativeSeparators(dir));
        return false;
    }
    if (!isVisible())
        show();
    QCoreApplication::processEvents();
    const QDir out(dir);
    const int shownTab = m_tabs->currentIndex();
    bool ok = true;
    auto record = [&](bool success, const QString& message) {
        if (!success && ok && error)
            *error = message;
        ok = ok && success;
    };
    QString message;
    record(m_memoryCurve->exportImage(out.filePath(QStringLiteral("memory-curve.png")), &message), message);
    // Tabs are shown one at a time so each view renders at its laid-out size.
    m_tabs->setCurrentWidget(m_lifetimeBars);
    QCoreApplication::processEvents();
    record(m_lifetimeBars->exportImage(out.filePath(QStringLiteral("lifetime-bars.png")), &message), message);
    m_tabs->setCurrentWidget(m_arenaLayout);
    QCoreApplication::processEvents();
    record(m_arenaLayout->exportImage(out.filePath(QStringLiteral("arena-layout.png")), &message), message);
    m_tabs->setCurrentWidget(m_coloring);
    QCoreApplication::processEvents();
    record(m_coloring->exportImage(out.filePath(QStringLiteral("coloring.png")), &message), message);
    if (m_document->measurement()) // after a run only
        record(m_latencyLane->exportImage(out.filePath(QStringLiteral("latency-lane.png")), &message), message);
    m_tabs->setCurrentIndex(shownTab);
    QCoreApplication::processEvents();
    const QString windowPath = out.filePath(QStringLiteral("window.png"));
    record(grab().save(windowPath), tr("Cannot write %1").arg(QDir::toNativeSeparators(windowPath)));
    if (ok)
        record(renderStrategyScreenshots(dir, &message), message);
    return ok;
}
