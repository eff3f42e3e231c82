// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "qcp.h" // first: see qcp.h

#include "comparisonview.h"

#include "palette.h"
#include "strategycontroller.h"
#include "strategymarks.h"
#include "timeaxis.h"

#include "planners/metrics.h"
#include "planners/planner.h"
#include "util/format.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QShortcut>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <array>
#include <cmath>
#include <cstdio>
#include <optional>

namespace {

const QColor kSideColor[2] = { QColor(0x4E79A7), QColor(0xF28E2B) };

QString fromView(std::string_view text) { return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size())); }

QString bytesText(core::Bytes bytes) { return QString::fromStdString(core::formatBytes(bytes)); }

// A difference's sign as a reader expects it: "+" or the typographic minus that "−2.30 MiB" uses,
// so that every signed cell of the table looks the same; zero has no sign.
QString withSign(double v, const QString& magnitude)
{
    if (v == 0)
        return QStringLiteral("0");
    return (v > 0 ? QStringLiteral("+") : QStringLiteral("−")) + magnitude;
}

QString flopsText(double flops)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", flops);
    return QString::fromLatin1(text);
}

// Numbers of one side, by row; NaN when the side has no result.
struct Numbers {
    double values[ComparisonView::RowCount];
};

Numbers numbersOf(const StrategyOutcome& o, core::Bytes originalBound)
{
    Numbers n {};
    const core::Bytes bound = core::lowerBound(o.workload->problem);
    n.values[ComparisonView::LowerBound] = static_cast<double>(bound);
    n.values[ComparisonView::Arena] = o.plan ? static_cast<double>(o.plan->arenaSize) : NAN;
    n.values[ComparisonView::Saved] = static_cast<double>(originalBound - bound);
    n.values[ComparisonView::ExtraFlops] = o.extraFlops();
    n.values[ComparisonView::Swapped] = static_cast<double>(o.swappedBytes());
    n.values[ComparisonView::EstimatedTime] = o.estimatedSeconds;
    n.values[ComparisonView::Steps] = o.workload->problem.steps;
    return n;
}

QString formatValue(int row, double v, bool difference)
{
    if (std::isnan(v))
        return QStringLiteral("—");
    switch (row) {
    case ComparisonView::LowerBound:
    case ComparisonView::Arena:
    case ComparisonView::Saved:
    case ComparisonView::Swapped:
    {
        return difference ? withSign(v, bytesText(static_cast<core::Bytes>(std::abs(v)))) : bytesText(static_cast<core::Bytes>(v));
    }
    case ComparisonView::ExtraFlops:
        return difference ? withSign(v, flopsText(std::abs(v))) : flopsText(v);
    case ComparisonView::EstimatedTime: {
        // In the unit of its size (2.83 us, 0.154 ms): fixed milliseconds rounded small models to 0.003.
        const QString text = v == 0 ? QStringLiteral("0 s") : QString::fromStdString(core::formatSeconds(std::abs(v)));
        return difference ? withSign(v, text) : text;
    }
    case ComparisonView::Steps: {
        const QString text = QString::number(static_cast<qint64>(std::abs(v)));
        return difference ? withSign(v, text) : text;
    }
    }
    return {};
}

} // namespace

ComparisonView::ComparisonView(QWidget* parent)
    : QWidget(parent)
{
    setWindowTitle(tr("Compare A/B — MemPlan Studio"));
    m_header = new QLabel(this);
    QFont bold = font();
    bold.setBold(true);
    m_header->setFont(bold);

    auto* sides = new QHBoxLayout;
    sides->addWidget(createSide(A));
    sides->addWidget(createSide(B));

    m_table = new QTableWidget(RowCount, 3, this);
    m_table->setHorizontalHeaderLabels({ tr("A"), tr("B"), tr("B − A") });
    m_table->setVerticalHeaderLabels({ tr("Lower bound"), tr("Arena"), tr("Saved (vs. no strategy)"), tr("Extra FLOPs"),
        tr("Swapped to host"), tr("Estimated time"), tr("Steps") });
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    for (int r = 0; r < RowCount; ++r)
        for (int c = 0; c < 3; ++c) {
            auto* item = new QTableWidgetItem(QStringLiteral("—"));
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(r, c, item);
        }
    const int tableHeight = m_table->verticalHeader()->length() + m_table->horizontalHeader()->sizeHint().height() + 4;
    m_table->setMinimumHeight(tableHeight);
    m_table->setMaximumHeight(tableHeight);

    m_plot = new QCustomPlot(this);
    m_plot->setBackground(ViewPalette::background());
    m_plot->axisRect()->setBackground(ViewPalette::plotBackground());
    m_plot->xAxis->setLabel(tr("step"));
    QSharedPointer<QCPAxisTicker> steps(new StepTicker);
    steps->setTickCount(10); // as the memory curve: QCustomPlot's five left 0, 50, 100 on a 122-step chart
    m_plot->xAxis->setTicker(steps);
    m_plot->legend->setVisible(true);
    // The legend in a row above the plot, right-aligned, so it never covers a curve (A's peak sat
    // under it in the plot's corner).
    auto* header = new QCPLayoutGrid;
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, header);
    m_plot->plotLayout()->setRowSpacing(0);
    header->addElement(0, 0, new QCPTextElement(m_plot, QString()));
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->axisRect()->insetLayout()->simplify();
    header->addElement(0, 1, m_plot->legend);
    header->setColumnStretchFactors({ 1.0, 0.001 });
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_plot->legend->setWrap(4);
    m_plot->legend->setBrush(Qt::NoBrush);
    m_plot->legend->setBorderPen(Qt::NoPen);
    for (int s = 0; s < 2; ++s) {
        QCPGraph* live = m_plot->addGraph();
        live->setLineStyle(QCPGraph::lsStepLeft);
        live->setPen(QPen(kSideColor[s], 1.8));
        QCPGraph* arena = m_plot->addGraph();
        arena->setPen(QPen(kSideColor[s].darker(130), 1.2, Qt::DashLine));
    }
    m_plot->setMinimumHeight(260);

    // A window of its own: a Close button (and Esc) so it closes without a window manager's title bar.
    auto* close = new QPushButton(tr("Close"), this);
    close->setObjectName(QStringLiteral("closeComparison"));
    connect(close, &QPushButton::clicked, this, &QWidget::close);
    auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), this);
    connect(escape, &QShortcut::activated, this, &QWidget::close);
    auto* top = new QHBoxLayout;
    top->addWidget(m_header, 1);
    top->addWidget(close);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 8, 8, 8);
    layout->addLayout(top);
    layout->addLayout(sides);
    layout->addWidget(m_table);
    layout->addWidget(m_plot, 1);

    // Defaults that show a difference: A as loaded, B with every strategy that lowers the bound without host traffic.
    const QString defaultPlanner = QString::fromUtf8(core::kDefaultPlanner.data(), qsizetype(core::kDefaultPlanner.size()));
    setConfiguration(A, {}, defaultPlanner, QString());
    setConfiguration(B, { QStringLiteral("fuse"), QStringLiteral("recompute"), QStringLiteral("inplace") },
        defaultPlanner, QString());
    refresh();
}

QWidget* ComparisonView::createSide(Side side)
{
    SideWidgets& w = m_sides[side];
    auto* box = new QGroupBox(side == A ? tr("Configuration A") : tr("Configuration B"), this);
    box->setStyleSheet(QStringLiteral("QGroupBox { color: %1; font-weight: bold; }").arg(kSideColor[side].name()));
    auto* grid = new QGridLayout(box);
    auto* checks = new QHBoxLayout;
    for (const auto& strategy : core::strategies()) {
        auto* check = new QCheckBox(fromView(strategy->name()), box);
        check->setObjectName(fromView(strategy->name()));
        check->setToolTip(fromView(strategy->description()));
        check->setStyleSheet(QStringLiteral("font-weight: normal;"));
        checks->addWidget(check);
        w.checks.push_back(check);
    }
    checks->addStretch(1);
    grid->addLayout(checks, 0, 0, 1, 4);
    w.planner = new QComboBox(box);
    for (const auto& name : core::plannerNames())
        if (name != "exact") // a search with no time limit would keep the side busy
            w.planner->addItem(QString::fromStdString(name));
    w.device = new QComboBox(box);
    for (const auto& device : core::builtinDevices())
        w.device->addItem(QString::fromStdString(device.name));
    w.device->setCurrentIndex(std::max(0, w.device->findText(QString::fromStdString(core::defaultDevice().name))));
    auto* plannerLabel = new QLabel(tr("Planner"), box);
    auto* deviceLabel = new QLabel(tr("Device"), box);
    for (QLabel* l : { plannerLabel, deviceLabel })
        l->setStyleSheet(QStringLiteral("font-weight: normal;"));
    grid->addWidget(plannerLabel, 1, 0);
    grid->addWidget(w.planner, 1, 1);
    grid->addWidget(deviceLabel, 1, 2);
    grid->addWidget(w.device, 1, 3);
    w.status = new QLabel(box);
    w.status->setStyleSheet(QStringLiteral("font-weight: normal; color: gray;"));
    w.status->setWordWrap(true);
    grid->addWidget(w.status, 2, 0, 1, 4);
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(3, 1);

    w.controller = new StrategyController(this);
    w.debounce = new QTimer(this);
    w.debounce->setSingleShot(true);
    w.debounce->setInterval(150);
    connect(w.debounce, &QTimer::timeout, this, [this, side] { recompute(side); });
    for (QCheckBox* check : w.checks)
        connect(check, &QCheckBox::toggled, w.debounce, qOverload<>(&QTimer::start));
    connect(w.planner, &QComboBox::currentIndexChanged, w.debounce, qOverload<>(&QTimer::start));
    connect(w.device, &QComboBox::currentIndexChanged, w.debounce, qOverload<>(&QTimer::start));
    connect(w.controller, &StrategyController::finished, this, [this, side](std::shared_ptr<const StrategyOutcome> o) {
        m_sides[side].outcome = std::move(o);
        m_sides[side].status->setText(
            tr("%1, %2 on %3")
                .arg(QString::fromStdString(strategyLabel(m_sides[side].outcome->applied)),
                    m_sides[side].planner->currentText(), m_sides[side].device->currentText()));
        refresh();
        emit updated();
    });
    connect(w.controller, &StrategyController::failed, this, [this, side](const QString& message) {
        m_sides[side].outcome.reset();
        m_sides[side].status->setText(tr("failed: %1").arg(message));
        refresh();
        emit failed(message);
        emit updated();
    });
    return box;
}

void ComparisonView::setOriginal(std::shared_ptr<const core::Workload> original)
{
    m_original = std::move(original);
    for (auto& side : m_sides)
        side.outcome.reset();
    const QString source = m_original ? QString::fromStdString(m_original->source) : QString();
    m_header->setText(m_original ? tr("Comparing two configurations of %1")
                                       .arg(source.startsWith(QLatin1String("example:")) ? source : QFileInfo(source).fileName())
                                 : tr("No model loaded"));
    refresh();
    recompute(A);
    recompute(B);
}

void ComparisonView::setConfiguration(Side side, const QStringList& strategies, const QString& planner, const QString& device)
{
    SideWidgets& w = m_sides[side];
    for (QCheckBox* check : w.checks) {
        const QSignalBlocker block(check);
        check->setChecked(strategies.contains(check->objectName()));
    }
    {
        const QSignalBlocker blockPlanner(w.planner), blockDevice(w.device);
        if (const int i = w.planner->findText(planner); i >= 0)
            w.planner->setCurrentIndex(i);
        if (const int i = w.device->findText(device); i >= 0)
            w.device->setCurrentIndex(i);
    }
    if (m_original)
        recompute(side);
}

QStringList ComparisonView::strategies(Side side) const
{
    QStringList names;
    for (QCheckBox* check : m_sides[side].checks)
        if (check->isChecked())
            names << check->objectName();
    return names;
}

QString ComparisonView::plannerName(Side side) const { return m_sides[side].planner->currentText(); }

bool ComparisonView::isBusy() const
{
    return m_sides[A].controller->isBusy() || m_sides[B].controller->isBusy() || m_sides[A].debounce->isActive()
        || m_sides[B].debounce->isActive();
}

void ComparisonView::recompute(Side side)
{
    SideWidgets& w = m_sides[side];
    w.debounce->stop();
    if (!m_original)
        return;
    if (!m_original->graph && !strategies(side).isEmpty()) {
        w.status->setText(tr("strategies need a model graph; this is an allocation problem"));
        w.outcome.reset();
        refresh();
        return;
    }
    StrategyRequest request;
    for (const QString& name : strategies(side))
        request.names.push_back(name.toStdString());
    request.planner = w.planner->currentText().toStdString();
    if (auto device = core::findDevice(w.device->currentText().toStdString()))
        request.device = std::move(*device);
    request.plan = true;
    w.status->setText(tr("computing…"));
    w.controller->request(m_original, request);
}

QString ComparisonView::cellText(Row row, int column) const
{
    const QTableWidgetItem* item = m_table->item(row, column);
    return item ? item->text() : QString();
}

void ComparisonView::refresh()
{
    const core::Bytes originalBound = m_original ? core::lowerBound(m_original->problem) : 0;
    std::array<std::optional<Numbers>, 2> numbers;
    for (int s = 0; s < 2; ++s)
        if (m_sides[s].outcome)
            numbers[s] = numbersOf(*m_sides[s].outcome, originalBound);
    for (int r = 0; r < RowCount; ++r) {
        for (int s = 0; s < 2; ++s)
            m_table->item(r, s)->setText(numbers[s] ? formatValue(r, numbers[s]->values[r], false) : QStringLiteral("—"));
        QString diff = QStringLiteral("—");
        QColor color = ViewPalette::axisText();
        if (numbers[A] && numbers[B]) {
            const double d = numbers[B]->values[r] - numbers[A]->values[r];
            diff = formatValue(r, d, true);
            // Less memory is better; more FLOPs, traffic and time are costs. Saved: more is better.
            const bool lowerIsBetter = r != Saved;
            if (!std::isnan(d) && d != 0 && r != Steps)
                color = (d < 0) == lowerIsBetter ? QColor(0x1A7F37) : QColor(0xB3261E);
        }
        m_table->item(r, 2)->setText(diff);
        m_table->item(r, 2)->setForeground(color);
    }

    // Both memory curves on the step axis of the model as loaded, so the same op sits at the same x
    // on both (fusion removes steps, recompute and swap insert some); a side that cannot be aligned
    // (no graph) keeps its own steps. Each with its arena as a dashed line.
    double top = 1, steps = 1;
    std::array<std::vector<double>, 2> axis;
    bool aligned = m_original && m_original->graph;
    for (int s = 0; s < 2; ++s)
        if (const auto& o = m_sides[s].outcome) {
            const auto curve = core::liveBytesCurve(o->workload->problem);
            for (core::Bytes v : curve)
                top = std::max(top, static_cast<double>(v));
            if (o->plan)
                top = std::max(top, static_cast<double>(o->plan->arenaSize));
            if (aligned)
                axis[s] = stepsOnOriginalAxis(*m_original, *o->workload);
            aligned = aligned && axis[s].size() == curve.size();
            steps = std::max(steps, static_cast<double>(curve.size()));
        }
    if (aligned)
        steps = static_cast<double>(m_original->problem.steps);
    const ByteUnit unit = byteUnitFor(top);
    for (int s = 0; s < 2; ++s) {
        QCPGraph* live = m_plot->graph(2 * s);
        QCPGraph* arena = m_plot->graph(2 * s + 1);
        const auto& o = m_sides[s].outcome;
        live->setVisible(o != nullptr);
        arena->setVisible(o && o->plan);
        live->removeFromLegend();
        arena->removeFromLegend();
        if (!o) {
            live->data()->clear();
            arena->data()->clear();
            continue;
        }
        const auto curve = core::liveBytesCurve(o->workload->problem);
        // (x, value) per step, in x order: a reordered op is drawn at its place in the original order.
        std::vector<std::pair<double, double>> points;
        for (std::size_t i = 0; i < curve.size(); ++i)
            points.emplace_back(aligned ? axis[s][i] : static_cast<double>(i), static_cast<double>(curve[i]) / unit.divisor);
        std::stable_sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        QVector<double> keys, values;
        for (const auto& [x, v] : points) {
            keys.append(x);
            values.append(v);
        }
        if (!points.empty()) {
            keys.append(aligned ? std::max(points.back().first + 1.0, steps) : static_cast<double>(curve.size()));
            values.append(values.back());
        }
        live->setData(keys, values, true);
        live->setName(tr("%1: %2 (%3 steps)")
                          .arg(s == A ? QStringLiteral("A") : QStringLiteral("B"),
                              QString::fromStdString(strategyLabel(o->applied)))
                          .arg(curve.size()));
        live->addToLegend();
        if (o->plan) {
            const double a = static_cast<double>(o->plan->arenaSize) / unit.divisor;
            arena->setData(QVector<double> { 0, aligned ? steps : static_cast<double>(curve.size()) }, QVector<double> { a, a }, true);
            arena->setName(tr("%1 arena %2")
                               .arg(s == A ? QStringLiteral("A") : QStringLiteral("B"),
                                   shortBytes(static_cast<double>(o->plan->arenaSize))));
            arena->addToLegend();
        }
    }
    m_plot->yAxis->setLabel(tr("live memory (%1)").arg(unit.name));
    m_plot->xAxis->setLabel(aligned ? tr("step of the model as loaded (ops line up; inserted ops share their neighbour's step)")
                                    : tr("step"));
    m_plot->xAxis->setRange(0, steps);
    fitStepTicks(m_plot->xAxis, m_plot->axisRect()->width()); // the last layout's width: close enough for labels
    m_plot->yAxis->setRange(0, top / unit.divisor * 1.15);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}
