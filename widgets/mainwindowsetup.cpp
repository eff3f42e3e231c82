// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// MainWindow's construction: the views and docks, the menus and actions, the main toolbar and the
// status bar. Kept apart from mainwindow.cpp (what the window does) so the layout changes on its own.
#include "mainwindow.h"

#include "helptexts.h"

#include "arenalayoutview.h"
#include "coloringview.h"
#include "elidedlabel.h"
#include "latencylane.h"
#include "lifetimebarsview.h"
#include "mainwindowshared.h"
#include "memorycurveview.h"
#include "messagebanner.h"
#include "plandocument.h"
#include "planningcontroller.h"
#include "playcontroller.h"
#include "summarypanel.h"
#include "tensortablemodel.h"
#include "timelineview.h"

#include "examples/examples.h"
#include "graph/capture.h"
#include "io/breakdown.h"
#include "planners/planner.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QSpinBox>
#include <QStyle>
#include <QSplitter>
#include <QStatusBar>
#include <QStyledItemDelegate>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <bit>

namespace {

using mainwindow::plannerUsesTimeLimit;

// Alignment in bytes: 0 ("default") or a power of two, the only values core accepts. The arrows
// double and halve; a typed value that is not a power of two is rounded to the nearest one.
class PowerOfTwoSpinBox : public QSpinBox {
public:
    using QSpinBox::QSpinBox;

    void stepBy(int steps) override
    {
        int value = this->value();
        for (; steps > 0; --steps)
            value = value == 0 ? 1 : std::min(value * 2, maximum());
        for (; steps < 0; ++steps)
            value = value <= 1 ? 0 : value / 2;
        setValue(value);
    }

protected:
    QValidator::State validate(QString& text, int& pos) const override
    {
        const auto state = QSpinBox::validate(text, pos);
        if (state != QValidator::Acceptable)
            return state;
        const int value = valueFromText(text);
        return value == 0 || std::has_single_bit(unsigned(value)) ? state : QValidator::Intermediate;
    }
    void fixup(QString& text) const override
    {
        const int value = valueFromText(text);
        if (value <= 0)
            return QSpinBox::fixup(text);
        const unsigned below = std::bit_floor(unsigned(value)), above = below * 2;
        const unsigned nearest = unsigned(value) - below <= above - unsigned(value) ? below : above;
        text = prefix() + textFromValue(int(std::min<unsigned>(nearest, unsigned(maximum())))) + suffix();
    }
};


// A type reads from its start ("optional float32 sequence (estimate)"): where the table elides
// names on the left, this column elides on the right.
class ElideRightDelegate : public QStyledItemDelegate {
public:
    explicit ElideRightDelegate(QObject* parent, Qt::TextElideMode mode = Qt::ElideRight)
        : QStyledItemDelegate(parent)
        , m_mode(mode)
    {
    }

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        option->textElideMode = m_mode;
    }

private:
    Qt::TextElideMode m_mode;
};

// Tensor and op names as the views shorten them ("layer3.2/conv1/Conv" for
// "/layer3/layer3.2/conv1/Conv_output_0"): the table's own left elision cuts every row of a block
// to the same "…r3.2/conv1/Conv_output_0". The tooltip keeps the whole name.
class NameDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        const QWidget* widget = option->widget;
        const QStyle* style = widget ? widget->style() : QApplication::style();
        const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, widget) + 1;
        option->text = TimelineView::elideName(option->fontMetrics, option->text, option->rect.width() - 2 * margin);
    }
};

} // namespace

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
    m_filterEdit->setObjectName(QStringLiteral("tensorFilter"));
    m_filterEdit->setPlaceholderText(tr("Filter by name or module…"));
    m_filterEdit->setClearButtonEnabled(true);
    m_kindCombo = new QComboBox(tablePane);
    m_kindCombo->addItem(tr("All kinds"), -1);
    for (auto kind : { core::TensorKind::Input, core::TensorKind::Output, core::TensorKind::Activation,
             core::TensorKind::Weight, core::TensorKind::Persistent, core::TensorKind::Workspace })
        m_kindCombo->addItem(QString::fromUtf8(core::kindName(kind).data()), static_cast<int>(kind));
    m_minSizeCombo = new QComboBox(tablePane);
    m_minSizeCombo->setToolTip(tr("Show only buffers at least this large"));
    const std::pair<const char*, qint64> sizes[] = { { "Any size", 0 }, { "≥ 1 KiB", 1024 }, { "≥ 64 KiB", 64 * 1024 },
        { "≥ 1 MiB", 1024 * 1024 }, { "≥ 16 MiB", 16 * 1024 * 1024 }, { "≥ 256 MiB", 256LL * 1024 * 1024 } };
    for (const auto& [label, bytes] : sizes)
        m_minSizeCombo->addItem(QString::fromUtf8(label), bytes);
    m_categoryCombo = new QComboBox(tablePane);
    m_categoryCombo->setToolTip(tr("Show only one category of a captured step"));
    m_categoryCombo->addItem(tr("All categories"), -1);
    for (int slot = 0; slot < core::kBreakdownSlots; ++slot)
        m_categoryCombo->addItem(QString::fromUtf8(core::breakdownSlotName(slot).data()), slot);
    m_categoryCombo->setVisible(false);
    filterRow->addWidget(m_filterEdit, 1);
    filterRow->addWidget(m_kindCombo);
    filterRow->addWidget(m_categoryCombo);
    filterRow->addWidget(m_minSizeCombo);

    m_table = new QTableView(tablePane);
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(TensorTableModel::Start, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    // Names cut in the middle, as in the views: the start tells enc1 from dec1, the end the op.
    m_table->setTextElideMode(Qt::ElideMiddle);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setHighlightSections(false);
    m_table->horizontalHeader()->setStretchLastSection(true);
    // Steps need room for 7 digits: the public allocation problems run to ~1M steps. The widths add
    // up to the table's width in a 1400 px window, so Offset and Color show without scrolling.
    const int stepWidth = std::max(50, m_table->fontMetrics().horizontalAdvance(QStringLiteral("0000000")) + 14);
    const int widths[] = { 180, 150, 72, 100, 140, 172, 125, 130, stepWidth, stepWidth, 72, 90, 40 };
    for (int c = 0; c < TensorTableModel::ColumnCount; ++c)
        m_table->setColumnWidth(c, widths[c]);
    m_table->setItemDelegateForColumn(TensorTableModel::Type, new ElideRightDelegate(m_table));
    // A subgraph's path cut at its start: its innermost graph tells rows apart (the tooltip has it whole).
    m_table->setItemDelegateForColumn(TensorTableModel::Subgraph, new ElideRightDelegate(m_table, Qt::ElideLeft));
    m_table->setItemDelegateForColumn(TensorTableModel::Name, new NameDelegate(m_table));
    m_table->setItemDelegateForColumn(TensorTableModel::Producer, new NameDelegate(m_table));

    auto* tableLayout = new QVBoxLayout(tablePane);
    tableLayout->setContentsMargins(4, 4, 4, 4);
    tableLayout->setSpacing(4);
    tableLayout->addLayout(filterRow);
    tableLayout->addWidget(m_table, 1);

    connect(m_filterEdit, &QLineEdit::textChanged, this,
        [this](const QString& text) { refilter([&] { m_proxy->setNameFilter(text); }); });
    connect(m_kindCombo, &QComboBox::currentIndexChanged, this, [this] {
        const int kind = m_kindCombo->currentData().toInt();
        refilter([&] { m_proxy->setKindFilter(kind < 0 ? std::nullopt : std::optional(static_cast<core::TensorKind>(kind))); });
    });
    connect(m_categoryCombo, &QComboBox::currentIndexChanged, this, [this] {
        const int slot = m_categoryCombo->currentData().toInt();
        refilter([&] { m_proxy->setCategoryFilter(slot < 0 ? std::nullopt : std::optional(slot)); });
    });
    // The Category and Module columns and the category filter only for captured steps.
    // A memory snapshot's allocation sites take the Module column and the "by module" entries.
    const auto showCaptureColumns = [this] {
        const bool captured = m_tableModel->captured();
        const bool recorded = m_tableModel->recorded();
        m_table->setColumnHidden(TensorTableModel::Category, !captured);
        m_table->setColumnHidden(TensorTableModel::Module, !captured && !recorded);
        // The graphs of control-flow ops planned inside them: their buffers' rows say which graph.
        m_table->setColumnHidden(TensorTableModel::Subgraph, !m_tableModel->hasBodies());
        if (m_sortCombo && m_colorCombo) { // made with the toolbars, which may come after the table
            m_sortCombo->setItemText(m_sortCombo->findData(static_cast<int>(LifetimeBarsView::SortOrder::Module)),
                recorded ? tr("by allocation site") : tr("by module"));
            m_colorCombo->setItemText(m_colorCombo->findData(static_cast<int>(LifetimeBarsView::ColorMode::Module)),
                recorded ? tr("colored by allocation site") : tr("colored by module"));
        }
        m_categoryCombo->setVisible(captured);
        if (!captured)
            m_categoryCombo->setCurrentIndex(0);
    };
    connect(m_document, &PlanDocument::workloadChanged, this, showCaptureColumns);
    showCaptureColumns();
    connect(m_minSizeCombo, &QComboBox::currentIndexChanged, this,
        [this] { refilter([&] { m_proxy->setMinimumSize(m_minSizeCombo->currentData().toLongLong()); }); });
    // Double-click: move the step cursor to where the buffer is born, so every view shows its neighbours.
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        const core::Workload* workload = m_document->workload();
        const int buffer = index.data(TensorTableModel::BufferRole).toInt();
        if (workload && buffer >= 0 && buffer < static_cast<int>(workload->problem.buffers.size()))
            m_document->setCursorStep(workload->problem.buffers[static_cast<std::size_t>(buffer)].lifetime.start);
    });
    connect(
        m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &MainWindow::onTableCurrentChanged);
    // A buffer clicked inside a control-flow op's block: its own row, not the block's.
    connect(m_arenaLayout, &ArenaLayoutView::innerBufferSelected, this, [this](int graph, int buffer) {
        const int row = graph >= 0 ? m_tableModel->rowOf(graph, buffer) : -1;
        const QModelIndex index = row >= 0 ? m_proxy->mapFromSource(m_tableModel->index(row, 0)) : QModelIndex();
        if (!index.isValid())
            return;
        m_syncingSelection = true;
        m_table->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        m_table->scrollTo(index, QAbstractItemView::EnsureVisible);
        m_syncingSelection = false;
    });

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
    m_inputSizesAction = file->addAction(tr("&Input Sizes…"), this, &MainWindow::showInputSizes);
    m_inputSizesAction->setToolTip(
        tr("Give the sizes the model's inputs leave open (symbolic dimensions, open shapes) and files for their contents"));
    m_inputSizesAction->setEnabled(false);
    m_peerProfileAction = file->addAction(tr("Open ONNX Runtime &Profile…"), this, &MainWindow::openPeerProfileDialog);
    m_peerProfileAction->setToolTip(
        tr("Lay an ONNX Runtime profile (enableProfiling) of the model on display over its plan: the memory ONNX Runtime's arena held"));
    m_peerProfileAction->setEnabled(false);
    m_compareAction = file->addAction(tr("&Compare With Snapshot or Plan…"), this, &MainWindow::openCompareDialog);
    m_compareAction->setToolTip(tr("Set another PyTorch memory snapshot, or a model planned, beside what is on display: its memory "
                                   "curve on this axis (allocations matched in order of birth) and what makes the peaks differ"));
    m_compareAction->setEnabled(false);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    m_recentMenu->setObjectName(QStringLiteral("recentMenu"));
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
    // The lane has bars only after a run (updateActions enables it then).
    m_exportLatencyAction = m_exportMenu->addAction(
        tr("Per-op Latency as PNG or SVG…"), this, [this] { exportViewDialog(m_latencyLane, QStringLiteral("latency-lane")); });
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
    m_timeAxisAction = view->addAction(tr("Memory Curve Against &Time"));
    m_timeAxisAction->setCheckable(true);
    m_timeAxisAction->setToolTip(tr("Draw a memory snapshot's curve against the time of its events instead of their order"));
    connect(m_timeAxisAction, &QAction::toggled, m_memoryCurve, &MemoryCurveView::setTimeAxis);
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
    help->addAction(tr("Keyboard &Shortcuts"), this, [this] {
        QMessageBox::information(this, tr("Keyboard Shortcuts"), shortcutsHtml(this));
    });
    help->addAction(tr("Colour &Legend"), this, [this] { QMessageBox::information(this, tr("Colour Legend"), legendHtml()); });
    help->addAction(tr("&About MemPlan Studio"), this, [this] { QMessageBox::about(this, tr("About MemPlan Studio"), aboutHtml()); });
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
    const QString saved = mainwindow::savedPlannerName();
    m_plannerCombo->setCurrentIndex(std::max(0, m_plannerCombo->findText(saved)));
    m_plannerCombo->setToolTip(tr("Planning algorithm; changing it re-plans"));
    bar->addWidget(m_plannerCombo);
    connect(m_plannerCombo, &QComboBox::currentTextChanged, this, [this](const QString& name) {
        if (name != mainwindow::recordedPlannerName()) // a snapshot's own entry is not a planner to reopen with
            QSettings().setValue(mainwindow::plannerSettingsKey(), name);
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
    m_alignmentSpin = new PowerOfTwoSpinBox(bar);
    m_alignmentSpin->setObjectName(QStringLiteral("alignment"));
    m_alignmentSpin->setCorrectionMode(QAbstractSpinBox::CorrectToNearestValue); // typed values go through fixup
    m_alignmentSpin->setRange(0, 1 << 20);
    m_alignmentSpin->setSpecialValueText(tr("default"));
    m_alignmentSpin->setSuffix(tr(" B"));
    m_alignmentSpin->setToolTip(
        tr("Activation alignment in bytes, a power of two (the arrows double and halve it); \"default\": 256 for "
           "graphs, 1 for allocation problems"));
    bar->addWidget(m_alignmentSpin);
    m_alignmentTimer = new QTimer(this);
    m_alignmentTimer->setSingleShot(true);
    m_alignmentTimer->setInterval(400); // re-load once typing pauses, not on every digit
    connect(m_alignmentSpin, &QSpinBox::valueChanged, m_alignmentTimer, qOverload<>(&QTimer::start));
    connect(m_alignmentTimer, &QTimer::timeout, this, &MainWindow::reload);
    m_workspacesCheck = new QCheckBox(tr("Workspaces"), bar);
    m_workspacesCheck->setToolTip(tr("Plan each convolution's im2col workspace as a buffer of its own, live only while "
                                     "its op runs, instead of leaving it to kernel scratch (models only)"));
    bar->addWidget(m_workspacesCheck);
    connect(m_workspacesCheck, &QCheckBox::toggled, this, &MainWindow::reload);
    bar->addSeparator();

    label(tr("Bars"));
    m_sortCombo = new QComboBox(bar);
    m_sortCombo->addItem(tr("by start"), static_cast<int>(LifetimeBarsView::SortOrder::Start));
    m_sortCombo->addItem(tr("by size"), static_cast<int>(LifetimeBarsView::SortOrder::Size));
    m_sortCombo->addItem(tr("by offset"), static_cast<int>(LifetimeBarsView::SortOrder::Offset));
    m_sortCombo->addItem(tr("by category"), static_cast<int>(LifetimeBarsView::SortOrder::Category));
    m_sortCombo->addItem(tr("by module"), static_cast<int>(LifetimeBarsView::SortOrder::Module));
    m_sortCombo->setToolTip(tr("Row order of the lifetime bars (by category or module: grouped, a captured step's)"));
    bar->addWidget(m_sortCombo);
    connect(m_sortCombo, &QComboBox::currentIndexChanged, this, [this] {
        m_lifetimeBars->setSortOrder(static_cast<LifetimeBarsView::SortOrder>(m_sortCombo->currentData().toInt()));
    });
    m_colorCombo = new QComboBox(bar);
    m_colorCombo->addItem(tr("colored by kind"), static_cast<int>(LifetimeBarsView::ColorMode::Kind));
    m_colorCombo->addItem(tr("colored by slot"), static_cast<int>(LifetimeBarsView::ColorMode::Color));
    m_colorCombo->addItem(tr("colored by strategy"), static_cast<int>(LifetimeBarsView::ColorMode::Strategy));
    m_colorCombo->addItem(tr("colored by category"), static_cast<int>(LifetimeBarsView::ColorMode::Category));
    m_colorCombo->addItem(tr("colored by module"), static_cast<int>(LifetimeBarsView::ColorMode::Module));
    m_colorCombo->setToolTip(tr("Color the lifetime bars (and, by kind, category or module, the arena) by tensor kind, "
                                "shared-object slot, strategy, or a captured step's category or module"));
    bar->addWidget(m_colorCombo);
    connect(m_colorCombo, &QComboBox::currentIndexChanged, this, [this] {
        const auto mode = static_cast<LifetimeBarsView::ColorMode>(m_colorCombo->currentData().toInt());
        m_lifetimeBars->setColorMode(mode);
        m_arenaLayout->setColoring(mode == LifetimeBarsView::ColorMode::Category ? BufferColoring::Category
                : mode == LifetimeBarsView::ColorMode::Module                    ? BufferColoring::Module
                                                                                 : BufferColoring::Kind);
    });
    // A captured step opens colored by category (what a user debugging an OOM asks first); other
    // models go back to kind, since they have no categories or modules.
    connect(m_document, &PlanDocument::workloadChanged, this, [this] {
        const core::Workload* workload = m_document->workload();
        const bool captured = workload && workload->graph && core::hasCategories(*workload->graph);
        const auto mode = static_cast<LifetimeBarsView::ColorMode>(m_colorCombo->currentData().toInt());
        const bool byCapture = mode == LifetimeBarsView::ColorMode::Category || mode == LifetimeBarsView::ColorMode::Module;
        if (captured && mode == LifetimeBarsView::ColorMode::Kind)
            m_colorCombo->setCurrentIndex(m_colorCombo->findData(static_cast<int>(LifetimeBarsView::ColorMode::Category)));
        else if (!captured && byCapture)
            m_colorCombo->setCurrentIndex(m_colorCombo->findData(static_cast<int>(LifetimeBarsView::ColorMode::Kind)));
    });
}

void MainWindow::createPlayControls()
{
    // Playback has its own toolbar on the Run row: on the main row it was pushed behind "»" at the
    // default 1400 px width.
    QToolBar* bar = addToolBar(tr("Play"));
    bar->setObjectName(QStringLiteral("playToolBar"));
    bar->setMovable(false);
    bar->addAction(m_stepBackAction);
    bar->addAction(m_playAction);
    bar->addAction(m_stepForwardAction);
    m_speedCombo = new QComboBox(bar);
    for (double speed : { 0.5, 1.0, 2.0, 4.0, 10.0, 30.0 })
        m_speedCombo->addItem(speed == 1.0 ? tr("1 step/s") : tr("%1 steps/s").arg(speed), speed);
    m_speedCombo->setCurrentIndex(2);
    m_speedCombo->setToolTip(tr("Play speed"));
    m_speedCombo->setObjectName(QStringLiteral("playSpeed"));
    bar->addWidget(m_speedCombo);
    connect(m_speedCombo, &QComboBox::currentIndexChanged, this,
        [this] { m_play->setStepsPerSecond(m_speedCombo->currentData().toDouble()); });
}

void MainWindow::createStatusBar()
{
    m_narrationLabel = new ElidedLabel(this);
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
        const bool deriving = m_controller->isLoading() && m_pendingSpec.isEmpty(); // a training step
        m_controller->cancel();
        m_pendingSpec.clear();
        if (deriving)
            setTrainingStep(false); // back to the forward pass, as loaded
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
        m_narrationLabel->setFullText(
            hint ? tr("Click the step axis, use the arrow keys or press Play to step through the schedule.") : line);
        m_narrationLabel->setStyleSheet(hint ? QStringLiteral("color: gray;") : QString());
    };
    connect(m_play, &PlayController::narrationChanged, m_narrationLabel, showNarration);
    showNarration({});
}
