// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "qcp.h" // first: see qcp.h

#include "memorycurveview.h"

#include "comparedtrace.h"

#include "peerprofile.h"

#include "palette.h"
#include "graph/capture.h"
#include "io/breakdown.h"
#include "plandocument.h"
#include "strategymarks.h"
#include "runmeasurement.h"
#include "timelineview.h"
#include "stepenvelope.h"
#include "viewexport.h"
#include "util/format.h"

#include <QFileInfo>
#include <QSvgGenerator>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace {
QCPGraph* addLine(QCustomPlot* plot, const QColor& color, Qt::PenStyle style, double width)
{
    QCPGraph* graph = plot->addGraph();
    QPen pen(color, width, style);
    graph->setPen(pen);
    graph->setLineStyle(QCPGraph::lsStepLeft);
    return graph;
}

void setFlat(QCPGraph* graph, double from, double to, double value)
{
    graph->setData(QVector<double> { from, to }, QVector<double> { value, value }, true);
}

// Tick labels in seconds or milliseconds (whichever suits the range) for the time axis.
class SecondsTicker : public QCPAxisTicker {
protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override
    {
        const bool milli = m_span < 2.0;
        const double value = milli ? tick * 1000 : tick;
        return QString::number(std::abs(value) < 1e-9 ? 0.0 : value, 'g', 6) + (milli ? QStringLiteral(" ms") : QStringLiteral(" s"));
    }
    double getTickStep(const QCPRange& range) override
    {
        m_span = range.size();
        return QCPAxisTicker::getTickStep(range);
    }

private:
    double m_span = 1;
};
} // namespace

MemoryCurveView::MemoryCurveView(PlanDocument* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
    , m_plot(new QCustomPlot(this))
    , m_phaseBands(m_plot)
{
    QFont f = font();
    f.setPointSizeF(9);
    setFont(f);
    setFocusPolicy(Qt::StrongFocus);
    m_plot->setFocusPolicy(Qt::NoFocus);
    // The view decides its minimum (minimumSizeHint); the plot's own hint follows the legend's current
    // wrap and would hold the view at the width of a legend laid out for a wider one.
    m_plot->setMinimumSize(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);

    m_plot->setBackground(ViewPalette::background());
    m_plot->setNoAntialiasingOnDrag(true);
    m_plot->setPlottingHint(QCP::phCacheLabels, true);
    QCPAxisRect* rect = m_plot->axisRect();
    rect->setBackground(ViewPalette::plotBackground());
    // Same left edge as the hand-painted views, so the time axes line up when stacked.
    rect->setAutoMargins(QCP::msTop | QCP::msBottom);
    rect->setMargins(QMargins(TimelineView::labelColumnRight(), 0, TimelineView::rightMarginWidth(), 0));
    for (QCPAxis* axis : { m_plot->xAxis, m_plot->yAxis })
        styleAxis(axis, f);
    m_plot->xAxis->setLabel(QStringLiteral("step"));
    m_stepTicker.reset(new StepTicker);
    m_stepTicker->setTickCount(10);
    m_secondsTicker.reset(new SecondsTicker);
    m_secondsTicker->setTickCount(8);
    m_plot->xAxis->setTicker(m_stepTicker);
    m_plot->xAxis->setSubTicks(false);
    m_plot->xAxis->setNumberFormat(QStringLiteral("f"));
    m_plot->xAxis->setNumberPrecision(0);

    QFont bold = f;
    bold.setBold(true);
    // Header row above the plot: the title on the left, the legend in one line on the right, so the
    // legend never covers the curve.
    auto* header = m_header = new QCPLayoutGrid;
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, header);
    m_plot->plotLayout()->setRowSpacing(0);
    m_plot->plotLayout()->setRowStretchFactor(0, 0.001); // the header as tall as its text, the plot the rest
    m_title = new QCPTextElement(m_plot, QString(), bold);
    m_title->setTextColor(ViewPalette::axisText());
    m_title->setTextFlags(Qt::AlignLeft | Qt::AlignVCenter);
    m_title->setMargins(QMargins(8, 6, 8, 2));
    header->addElement(0, 0, m_title);
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->axisRect()->insetLayout()->simplify();
    header->addElement(0, 1, m_plot->legend);
    header->setColumnStretchFactors({ 1.0, 0.001 });
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst); // columns as many as fit (fitHeader)
    m_plot->legend->setMargins(QMargins(4, 6, TimelineView::rightMarginWidth() - 6, 2));

    m_live = m_plot->addGraph();
    m_live->setLineStyle(QCPGraph::lsStepLeft);
    m_live->setPen(QPen(ViewPalette::kindColor(core::TensorKind::Activation), 1.5));
    QColor fill = ViewPalette::kindColor(core::TensorKind::Activation);
    fill.setAlpha(60);
    m_live->setBrush(fill);
    m_live->setName(QStringLiteral("live bytes"));
    // Zoomed out past a step per pixel the live curve draws each column's most, and this its least
    // over it in a deeper tint: the band between is how far the bytes swing inside the column.
    m_liveLeast = m_plot->addGraph();
    m_liveLeast->setLineStyle(QCPGraph::lsStepLeft);
    m_liveLeast->setPen(Qt::NoPen);
    m_liveLeast->setBrush(fill);
    m_liveLeast->removeFromLegend();
    m_liveLeast->setSelectable(QCP::stNone);
    m_liveLeast->setVisible(false);
    m_arena = addLine(m_plot, QColor(0x202124), Qt::SolidLine, 1.5);
    m_lower = addLine(m_plot, QColor(0x1A7F37), Qt::DashLine, 1.5);
    // The allocator curve first, so the measured arena curve (dashed) stays visible where they coincide.
    m_measuredAllocator = addLine(m_plot, QColor(0x7B1FA2), Qt::SolidLine, 1.5);
    m_measuredAllocator->setVisible(false);
    m_measuredAllocator->removeFromLegend();
    m_reserved = addLine(m_plot, QColor(0xB07A00), Qt::SolidLine, 1.5);
    m_reserved->setVisible(false);
    m_reserved->removeFromLegend();
    m_measuredPool = addLine(m_plot, QColor(0x00A5B5), Qt::SolidLine, 1.5);
    m_measuredPool->setVisible(false);
    m_measuredPool->removeFromLegend();
    // A peer runtime's profile: held (dotted, brown) under in use (magenta), colours no other series uses.
    m_peerHeld = addLine(m_plot, QColor(0x795548), Qt::DotLine, 1.5);
    m_peerInUse = addLine(m_plot, QColor(0xD81B60), Qt::SolidLine, 1.5);
    for (QCPGraph* g : { m_peerHeld, m_peerInUse }) {
        g->setVisible(false);
        g->removeFromLegend();
    }
    // Another snapshot or model compared with this one (File > Compare With…), on this axis: indigo (the lower bound is green).
    m_compared = addLine(m_plot, QColor(0x283593), Qt::DashDotDotLine, 1.5);
    m_compared->setVisible(false);
    m_compared->removeFromLegend();
    m_measured = addLine(m_plot, QColor(0xF28E2B), Qt::DashLine, 2.0);
    m_measured->setName(QStringLiteral("measured"));
    // What a run held beyond the plan: the arena plus the kernels' scratch (a high-water, not per step).
    m_scratch = addLine(m_plot, QColor(0xF28E2B), Qt::DotLine, 1.5);
    m_scratch->setVisible(false);
    m_scratch->removeFromLegend();
    m_budget = addLine(m_plot, QColor(0xC62828), Qt::DashDotLine, 1.5);
    m_before = addLine(m_plot, QColor(0x5F6368), Qt::DashLine, 1.5);
    m_before->setName(QStringLiteral("before strategies"));

    m_selectedBand = new QCPItemRect(m_plot);
    m_hoveredBand = new QCPItemRect(m_plot);
    for (QCPItemRect* band : { m_selectedBand, m_hoveredBand }) {
        band->setLayer(QStringLiteral("background"));
        band->topLeft->setTypeX(QCPItemPosition::ptPlotCoords);
        band->bottomRight->setTypeX(QCPItemPosition::ptPlotCoords);
        band->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
        band->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
        band->setPen(Qt::NoPen);
        band->setVisible(false);
        band->setSelectable(false);
    }
    m_selectedBand->setBrush(QColor(255, 193, 7, 45));
    m_hoveredBand->setBrush(QColor(120, 144, 156, 40));
    m_cursor = new QCPItemStraightLine(m_plot);
    m_cursor->setPen(QPen(ViewPalette::cursorLine(), 1.5));
    m_cursor->setSelectable(false);
    m_cursor->setVisible(false);

    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(f);
    m_plot->legend->setTextColor(ViewPalette::axisText());
    m_plot->legend->setBrush(Qt::NoBrush);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setIconSize(18, 10);
    m_plot->legend->setColumnSpacing(10);

    connect(m_plot, &QCustomPlot::mouseWheel, this, &MemoryCurveView::onWheel);
    connect(m_plot, &QCustomPlot::mousePress, this, &MemoryCurveView::onPress);
    connect(m_plot, &QCustomPlot::mouseMove, this, &MemoryCurveView::onMove);
    connect(m_plot, &QCustomPlot::mouseRelease, this, &MemoryCurveView::onRelease);
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent*) { m_document->fitVisibleSteps(); });
    m_plot->setMouseTracking(true);

    connect(document, &PlanDocument::workloadChanged, this, &MemoryCurveView::rebuild);
    connect(document, &PlanDocument::planChanged, this, &MemoryCurveView::rebuild);
    connect(document, &PlanDocument::overlayChanged, this, &MemoryCurveView::rebuild);
    connect(document, &PlanDocument::strategyFactsChanged, this, &MemoryCurveView::rebuild);
    connect(document, &PlanDocument::visibleStepsChanged, this, &MemoryCurveView::updateRange);
    connect(document, &PlanDocument::cursorChanged, this, &MemoryCurveView::updateHighlight);
    connect(document, &PlanDocument::selectionChanged, this, &MemoryCurveView::updateHighlight);
    connect(document, &PlanDocument::hoverChanged, this, &MemoryCurveView::updateHighlight);
    rebuild();
}

void MemoryCurveView::rebuild()
{
    const core::Workload* workload = m_document->workload();
    const core::Plan* plan = m_document->plan();
    const auto& live = m_document->liveCurve();
    const auto& measured = m_document->measuredCurve();
    const double steps = std::max<double>(m_document->steps(), 1);
    const core::Bytes arena = plan ? plan->arenaSize : 0;
    const core::Bytes lower = workload ? core::lowerBound(workload->problem) : 0;
    const core::Bytes budget = m_document->budget();
    // A captured step is stacked with its regions at the bottom: every other series sits on them.
    const bool stacked = workload && workload->graph && core::hasCategories(*workload->graph) && !live.empty();
    core::Bytes lift = 0;
    if (stacked)
        for (const auto& region : workload->regions)
            lift += region.size;
    double top = static_cast<double>(std::max({ arena, lower, budget, core::Bytes(1) }) + lift);
    for (core::Bytes v : measured)
        top = std::max(top, static_cast<double>(v + lift));
    const StrategyFacts* facts = m_document->strategyFacts();
    const bool before = facts && !facts->beforeCurve.empty();
    if (before)
        for (core::Bytes v : facts->beforeCurve)
            top = std::max(top, static_cast<double>(v + lift));
    const auto& allocator = m_document->measuredAllocatorCurve();
    for (core::Bytes v : allocator)
        top = std::max(top, static_cast<double>(v + lift));
    const auto* recorded = workload && workload->recorded ? &*workload->recorded : nullptr;
    if (recorded)
        for (core::Bytes v : recorded->reserved)
            top = std::max(top, static_cast<double>(v));
    if (const RunMeasurement* run = m_document->measurement(); run && run->pool)
        top = std::max(top, static_cast<double>(run->pool->stepPeakBytes + lift));
    const RunMeasurement* scratchRun = m_document->measurement();
    const core::Bytes scratch = plan && scratchRun ? scratchRun->arena.scratchBytes : 0;
    const double scratchTop = static_cast<double>(arena + scratch + lift);
    // Scratch far above everything else would squash the curves into the bottom: the line then
    // stays above the range and its legend entry says so (the summary has the number too).
    const bool scratchAbove = scratch > 0 && scratchTop > 1.6 * top;
    if (scratch > 0 && !scratchAbove)
        top = std::max(top, scratchTop);
    const PeerProfile* peer = m_document->peerProfile();
    if (peer)
        for (const auto* curve : { &peer->inUse, &peer->arenaHeld })
            for (core::Bytes v : *curve)
                top = std::max(top, static_cast<double>(v));
    const ComparedTrace* compared = m_document->comparison();
    if (compared)
        for (core::Bytes v : compared->diff.aLive)
            top = std::max(top, static_cast<double>(v));
    m_unit = byteUnitFor(top);
    m_yMax = top / m_unit.divisor * 1.12;
    m_lift = lift;
    const auto lifted = [lift](std::vector<core::Bytes> curve) {
        for (auto& v : curve)
            v += lift;
        return curve;
    };

    // The x axis: the steps, or a snapshot's event times when the time axis is asked for and it has them.
    if (!(m_timeAxis && recorded && m_clock.setSeconds(live.size(), recorded->stepSeconds)))
        m_clock.setEvents(static_cast<std::size_t>(steps));
    m_plot->xAxis->setTicker(m_clock.timed() ? m_secondsTicker : m_stepTicker);
    m_plot->xAxis->setLabel(m_clock.timed() ? QStringLiteral("time since the first event") : QStringLiteral("step"));
    const double end = m_clock.key(steps);

    rebuildStack(m_unit.divisor);
    if (recorded)
        for (const auto& [step, what] : recorded->marks)
            addStepMark(static_cast<double>(step), QString::fromStdString(what), QColor(0xC62828), true);
    m_phaseBands.set(recorded ? recorded->phases : std::vector<core::TracePhase> {}, m_clock);
    setStepData(m_live, live, m_unit.divisor);
    m_live->setVisible(!stacked);
    m_liveLeast->setVisible(false); // fitSeries shows it where the live curve is drawn per column
    m_live->removeFromLegend();
    m_live->setName(recorded ? QStringLiteral("allocated (measured)") : QStringLiteral("live bytes"));
    if (!stacked)
        m_live->addToLegend();
    const bool reserved = recorded && !recorded->reserved.empty();
    m_reserved->setVisible(reserved);
    m_reserved->removeFromLegend();
    if (reserved) {
        setStepData(m_reserved, recorded->reserved, m_unit.divisor);
        m_reserved->setName(QStringLiteral("reserved by segments (measured)"));
        m_reserved->addToLegend();
    }
    const bool peerCurves = peer && !peer->inUse.empty();
    for (QCPGraph* g : { m_peerInUse, m_peerHeld }) {
        g->setVisible(peerCurves);
        g->removeFromLegend();
    }
    if (peerCurves) {
        const QString runtime = QStringLiteral("ONNX Runtime");
        setStepData(m_peerInUse, peer->inUse, m_unit.divisor);
        m_peerInUse->setName(QStringLiteral("%1 in use (measured)").arg(runtime));
        m_peerInUse->addToLegend();
        setStepData(m_peerHeld, peer->arenaHeld, m_unit.divisor);
        m_peerHeld->setName(QStringLiteral("%1 arena held").arg(runtime));
        m_peerHeld->addToLegend();
    }
    m_compared->setVisible(compared != nullptr);
    m_compared->removeFromLegend();
    if (compared) {
        setStepData(m_compared, compared->diff.aLive, m_unit.divisor);
        m_compared->setName(QStringLiteral("%1 %2 (aligned)")
                                .arg(QFileInfo(compared->file).fileName(),
                                    compared->diff.a.measured ? QStringLiteral("allocated") : QStringLiteral("planned live")));
        m_compared->addToLegend();
    }
    // An arena at the lower bound is one line, named so (the dashed bound would hide under it).
    const bool atBound = plan && arena == lower;
    const QString regionsText = lift > 0 ? QStringLiteral(" + regions %1").arg(shortBytes(static_cast<double>(lift))) : QString();
    setFlat(m_lower, 0, end, static_cast<double>(lower + lift) / m_unit.divisor);
    m_lower->setName(QStringLiteral("lower bound %1").arg(shortBytes(static_cast<double>(lower))));
    m_lower->setVisible(workload != nullptr && !atBound);
    m_lower->removeFromLegend();
    if (m_lower->visible())
        m_lower->addToLegend();
    m_arena->setVisible(plan != nullptr);
    m_arena->removeFromLegend();
    if (plan) {
        setFlat(m_arena, 0, end, static_cast<double>(arena + lift) / m_unit.divisor);
        m_arena->setName((atBound ? QStringLiteral("arena = lower bound %1%2") : QStringLiteral("arena %1%2"))
                             .arg(shortBytes(static_cast<double>(arena)), regionsText));
        m_arena->addToLegend();
    }
    m_measured->setVisible(!measured.empty());
    m_measured->removeFromLegend();
    if (!measured.empty()) {
        setStepData(m_measured, lifted(measured), m_unit.divisor);
        m_measured->addToLegend();
    }
    m_scratch->setVisible(scratch > 0);
    m_scratch->removeFromLegend();
    if (scratch > 0) {
        setFlat(m_scratch, 0, end, static_cast<double>(arena + scratch + lift) / m_unit.divisor);
        m_scratch->setName(QStringLiteral("+ kernel scratch %1 (measured, outside the plan%2)")
                               .arg(shortBytes(static_cast<double>(scratch)),
                                   scratchAbove ? QStringLiteral("; above this range") : QString()));
        m_scratch->addToLegend();
    }
    updateMeasuredSeries();
    m_budget->setVisible(budget > 0);
    m_budget->removeFromLegend();
    if (budget > 0) {
        setFlat(m_budget, 0, end, static_cast<double>(budget + lift) / m_unit.divisor);
        m_budget->setName(QStringLiteral("budget %1").arg(shortBytes(static_cast<double>(budget))));
        m_budget->addToLegend();
    }

    m_before->setVisible(before);
    m_before->removeFromLegend();
    if (before) {
        setStepData(m_before, lifted(facts->beforeCurve), m_unit.divisor);
        m_before->addToLegend();
    }

    m_plot->yAxis->setLabel(QStringLiteral("memory (%1)").arg(m_unit.name));
    m_plot->yAxis->setRange(0, m_yMax);
    if (stacked) {
        const auto peak = std::max_element(live.begin(), live.end());
        m_title->setText(QStringLiteral("Memory held · peak %1 at step %2 · arena %3%4")
                             .arg(shortBytes(static_cast<double>(*peak + lift)))
                             .arg(peak - live.begin())
                             .arg(shortBytes(static_cast<double>(plan ? arena : *peak)), regionsText));
    } else if (recorded && !live.empty()) {
        const auto peak = std::max_element(live.begin(), live.end());
        const auto reservedPeak = recorded->reserved.empty() ? core::Bytes(0) : *std::max_element(recorded->reserved.begin(), recorded->reserved.end());
        QString text = QStringLiteral("Measured memory · allocated peak %1 at event step %2")
                           .arg(shortBytes(static_cast<double>(*peak)))
                           .arg(peak - live.begin());
        if (reservedPeak > 0)
            text += QStringLiteral(" · reserved peak %1").arg(shortBytes(static_cast<double>(reservedPeak)));
        if (plan)
            text += plan->planner == recorded->plan.planner && plan->offsets == recorded->plan.offsets
                ? QStringLiteral(" · address span %1").arg(shortBytes(static_cast<double>(arena)))
                : QStringLiteral(" · re-planned arena %1").arg(shortBytes(static_cast<double>(arena)));
        m_title->setText(text);
    } else if (workload && !live.empty()) {
        const auto peak = std::max_element(live.begin(), live.end());
        m_title->setText(
            QStringLiteral("Memory curve · peak %1 live at step %2%3")
                .arg(shortBytes(static_cast<double>(*peak)))
                .arg(peak - live.begin())
                .arg(plan ? QStringLiteral(" · arena %1").arg(shortBytes(static_cast<double>(arena))) : QString()));
    } else {
        m_title->setText(QStringLiteral("Memory curve"));
    }
    fitHeader(width()); // the title and the legend entries changed
    updateRange();
    updateHighlight();
}

core::Bytes MemoryCurveView::rebuildStack(double divisor)
{
    for (QCPGraph* layer : m_layers) {
        m_stepValues.erase(layer);
        m_plot->removeGraph(layer);
    }
    m_layers.clear();
    for (QCPAbstractItem* item : m_markItems)
        m_plot->removeItem(item);
    m_markItems.clear();
    const core::Workload* workload = m_document->workload();
    if (!workload || !workload->graph || !core::hasCategories(*workload->graph) || m_document->liveCurve().empty())
        return 0;
    if (!m_plot->layer(QStringLiteral("stack")))
        m_plot->addLayer(QStringLiteral("stack"), m_plot->layer(QStringLiteral("main")), QCustomPlot::limBelow);

    // Regions first (flat along the step), then the arena's categories, so the changing part is on top.
    const auto curve = core::categoryCurve(*workload);
    using C = core::TensorCategory;
    const int order[] = { int(C::Parameter), int(C::Buffer), int(C::OptimizerState), int(C::Gradient), int(C::Input),
        int(C::Saved), int(C::Temporary), int(C::Output), core::kOtherSlot };
    std::vector<core::Bytes> running(curve.size(), 0);
    QCPGraph* below = nullptr;
    for (int slot : order) {
        core::Bytes most = 0;
        for (const auto& step : curve)
            most = std::max(most, step[static_cast<std::size_t>(slot)]);
        if (most == 0)
            continue;
        for (std::size_t i = 0; i < curve.size(); ++i)
            running[i] += curve[i][static_cast<std::size_t>(slot)];
        QCPGraph* layer = m_plot->addGraph();
        layer->setLayer(QStringLiteral("stack"));
        layer->setLineStyle(QCPGraph::lsStepLeft);
        const QColor color = ViewPalette::categoryColor(slot);
        layer->setPen(QPen(color.darker(130), 1));
        QColor fill = color;
        fill.setAlpha(190);
        layer->setBrush(fill);
        if (below)
            layer->setChannelFillGraph(below);
        setStepData(layer, running, divisor);
        const auto name = core::breakdownSlotName(slot);
        layer->setName(QString::fromUtf8(name.data(), static_cast<int>(name.size())).replace(QLatin1Char('_'), QLatin1Char(' ')));
        layer->setSelectable(QCP::stNone);
        m_layers.push_back(layer);
        below = layer;
    }
    // Legend: the top layer first, as the stack reads from the top.
    for (QCPGraph* layer : m_layers)
        layer->removeFromLegend();
    for (auto it = m_layers.rbegin(); it != m_layers.rend(); ++it)
        (*it)->addToLegend();

    const auto phases = core::phaseRanges(*workload->graph, workload->schedule);
    for (std::size_t k = 0; k < phases.size(); ++k)
        addStepMark(phases[k].first, QString::fromStdString(phases[k].name), ViewPalette::axisText(), k > 0);
    core::Bytes lift = 0;
    for (const auto& region : workload->regions)
        lift += region.size;
    return lift;
}

QStringList MemoryCurveView::stackedLayers() const
{
    QStringList names;
    for (QCPGraph* layer : m_layers)
        names << layer->name();
    return names;
}

void MemoryCurveView::addStepMark(double step, const QString& text, const QColor& color, bool line)
{
    const double x = m_clock.key(step);
    if (line) {
        auto* mark = new QCPItemStraightLine(m_plot);
        mark->setPen(QPen(color, 1, Qt::DashLine));
        mark->point1->setCoords(x, 0);
        mark->point2->setCoords(x, 1);
        mark->setSelectable(false);
        m_markItems.push_back(mark);
    }
    auto* label = new QCPItemText(m_plot);
    label->position->setTypeX(QCPItemPosition::ptPlotCoords);
    label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(x, 0.0);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    label->setPadding(QMargins(4, 2, 4, 2));
    label->setText(text + QStringLiteral(" ▸"));
    label->setColor(color);
    label->setBrush(QColor(255, 255, 255, 200));
    label->setClipToAxisRect(true);
    label->setSelectable(false);
    m_markItems.push_back(label);
}

QStringList MemoryCurveView::stepMarks() const
{
    QStringList names;
    for (QCPAbstractItem* item : m_markItems)
        if (auto* text = qobject_cast<QCPItemText*>(item))
            names << text->text().chopped(2);
    return names;
}

// Step-graph data: step i holds curve[i] until step i+1; what QCustomPlot gets is fitted to the zoom
// (fitSeries).
void MemoryCurveView::setStepData(QCPGraph* graph, const std::vector<core::Bytes>& curve, double divisor)
{
    auto& values = m_stepValues[graph];
    values.resize(curve.size());
    for (std::size_t i = 0; i < curve.size(); ++i)
        values[i] = static_cast<double>(curve[i]) / divisor;
    fitSeries();
}

void MemoryCurveView::fitSeries(int plotPixels)
{
    const double first = m_document->firstVisibleStep(), last = m_document->lastVisibleStep();
    // Never fewer columns than kMinimumColumns: a view not laid out yet (or hidden) is narrow, and its
    // series must still be whole when it is shown or exported at another size before a resize.
    const int pixels = std::max(plotPixels >= 0 ? plotPixels : plotWidth(width()), kMinimumColumns);
    for (const auto& [graph, values] : m_stepValues) {
        if (!graph->visible())
            continue; // rebuild() ends in updateRange(): a series shown again is fitted then
        const bool timed = m_clock.starts().size() == values.size() + 1;
        const StepPoints points = timed
            ? stepEnvelope(values, m_clock.key(first), m_clock.key(last), pixels, m_clock.starts())
            : stepEnvelope(values, first, last, pixels);
        graph->setData(points.keys, points.values, true);
        if (graph == m_live) {
            m_liveLeast->setVisible(!points.lows.isEmpty());
            if (points.lows.isEmpty())
                m_liveLeast->data()->clear();
            else
                m_liveLeast->setData(points.keys, points.lows, true);
        }
    }
}

void MemoryCurveView::updateRange()
{
    m_plot->xAxis->setRange(m_clock.key(m_document->firstVisibleStep()), m_clock.key(m_document->lastVisibleStep()));
    fitStepTicks(m_plot->xAxis, plotWidth(width()));
    m_phaseBands.fit(plotWidth(width()));
    fitSeries();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void MemoryCurveView::updateHighlight()
{
    const core::Step cursor = m_document->cursorStep();
    m_cursor->setVisible(cursor >= 0);
    if (cursor >= 0) {
        m_cursor->point1->setCoords(m_clock.key(cursor + 0.5), 0);
        m_cursor->point2->setCoords(m_clock.key(cursor + 0.5), 1);
    }
    const core::Workload* workload = m_document->workload();
    auto place = [workload, this](QCPItemRect* band, int buffer) {
        band->setVisible(workload && buffer >= 0);
        if (!band->visible())
            return;
        const auto& life = workload->problem.buffers[buffer].lifetime;
        band->topLeft->setCoords(m_clock.key(life.start), 0);
        band->bottomRight->setCoords(m_clock.key(std::max(life.end, life.start + 1)), 1);
    };
    place(m_selectedBand, m_document->selectedBuffer());
    place(
        m_hoveredBand, m_document->hoveredBuffer() != m_document->selectedBuffer() ? m_document->hoveredBuffer() : -1);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

TimeAxis MemoryCurveView::timeAxis() const
{
    const QRect r = m_plot->axisRect()->rect();
    const QPoint offset = m_plot->pos();
    return TimeAxis { m_plot->xAxis->range().lower, m_plot->xAxis->range().upper, r.left() + offset.x(),
        r.right() + 1 + offset.x() };
}

bool MemoryCurveView::showsMeasured() const { return m_measured->visible(); }

bool MemoryCurveView::showsKernelScratch() const { return m_scratch->visible(); }

QStringList MemoryCurveView::legendNames() const
{
    QStringList names;
    for (int i = 0; i < m_plot->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(m_plot->legend->item(i)))
            names << item->plottable()->name();
    return names;
}

bool MemoryCurveView::showsReserved() const { return m_reserved->visible(); }

int MemoryCurveView::peerInUsePoints() const { return m_peerInUse->visible() ? m_peerInUse->data()->size() : 0; }

bool MemoryCurveView::showsMeasuredAllocator() const { return m_measuredAllocator->visible(); }

// Names and shows the run's two measured series; called from rebuild() after the data is set.
void MemoryCurveView::updateMeasuredSeries()
{
    const RunMeasurement* run = m_document->measurement();
    const auto& allocator = m_document->measuredAllocatorCurve();
    m_measuredAllocator->setVisible(run && !allocator.empty());
    m_measuredAllocator->removeFromLegend();
    const bool pool = run && run->pool && !run->pool->stepBytes.empty();
    m_measuredPool->setVisible(pool);
    m_measuredPool->removeFromLegend();
    if (pool) {
        auto pool = run->pool->stepBytes;
        for (auto& v : pool)
            v += m_lift;
        setStepData(m_measuredPool, pool, m_unit.divisor);
        m_measuredPool->setName(QStringLiteral("measured: stream-ordered pool %1")
                                    .arg(shortBytes(static_cast<double>(run->pool->stepPeakBytes))));
        m_measuredPool->addToLegend();
    }
    if (!run) {
        m_measured->setName(QStringLiteral("measured"));
        return;
    }
    const QString device = QString::fromStdString(run->device);
    m_measured->setName(QStringLiteral("measured (%1, arena)").arg(device));
    if (!allocator.empty()) {
        auto held = allocator;
        for (auto& v : held)
            v += m_lift;
        setStepData(m_measuredAllocator, held, m_unit.divisor);
        m_measuredAllocator->setName(QStringLiteral("%1 (%2, per tensor) %3")
                                         .arg(run->device == "cuda" ? QStringLiteral("cudaMalloc") : QStringLiteral("malloc"), device,
                                             shortBytes(static_cast<double>(run->perTensor.stepPeakBytes))));
        m_measuredAllocator->addToLegend();
    }
}

bool MemoryCurveView::showsMeasuredPool() const { return m_measuredPool->visible(); }

bool MemoryCurveView::showsBudget() const { return m_budget->visible(); }

bool MemoryCurveView::showsBefore() const { return m_before->visible(); }

double MemoryCurveView::stepAt(double x) const { return m_clock.step(m_plot->xAxis->pixelToCoord(x)); }

bool MemoryCurveView::canShowTime() const
{
    const core::Workload* workload = m_document->workload();
    return workload && workload->recorded && !workload->recorded->stepSeconds.empty();
}

void MemoryCurveView::setTimeAxis(bool on)
{
    if (on == m_timeAxis)
        return;
    m_timeAxis = on;
    rebuild();
}

void MemoryCurveView::onWheel(QWheelEvent* event)
{
    const QPoint delta = event->angleDelta();
    const double first = m_document->firstVisibleStep(), last = m_document->lastVisibleStep();
    if (std::abs(delta.x()) > std::abs(delta.y())) {
        const double shift = -delta.x() / 120.0 * (last - first) * 0.1;
        m_document->setVisibleSteps(first + shift, last + shift);
    } else if (delta.y() != 0) {
        double anchor = stepAt(event->position().x());
        if (anchor < first || anchor > last)
            anchor = (first + last) / 2;
        TimelineView::zoomSteps(m_document, anchor, std::pow(0.8, delta.y() / 120.0));
    }
    event->accept();
}

void MemoryCurveView::onPress(QMouseEvent* event)
{
    setFocus(Qt::MouseFocusReason);
    m_pressPos = event->position();
    m_pressFirst = m_document->firstVisibleStep();
    m_pressLast = m_document->lastVisibleStep();
    m_moved = false;
    const QRect rect = m_plot->axisRect()->rect();
    const bool onAxis = event->position().y() > rect.bottom() && event->position().x() >= rect.left();
    if (event->button() == Qt::MiddleButton || (event->button() == Qt::LeftButton && !onAxis)) {
        m_drag = Drag::Pan;
    } else if (event->button() == Qt::LeftButton) {
        m_drag = Drag::Cursor;
        m_document->setCursorStep(static_cast<core::Step>(std::floor(std::max(0.0, stepAt(event->position().x())))));
    }
}

void MemoryCurveView::onMove(QMouseEvent* event)
{
    const QPointF pos = event->position();
    if (m_drag == Drag::Pan) {
        if (std::abs(pos.x() - m_pressPos.x()) > 3)
            m_moved = true;
        if (!m_moved)
            return;
        const double perStep = m_plot->axisRect()->width() / std::max(1e-9, m_pressLast - m_pressFirst);
        const double shift = -(pos.x() - m_pressPos.x()) / perStep;
        m_document->setVisibleSteps(m_pressFirst + shift, m_pressLast + shift);
        m_plot->setCursor(Qt::ClosedHandCursor);
        return;
    }
    if (m_drag == Drag::Cursor) {
        m_document->setCursorStep(static_cast<core::Step>(std::floor(std::max(0.0, stepAt(pos.x())))));
        return;
    }
    const QRect rect = m_plot->axisRect()->rect();
    const auto& live = m_document->liveCurve();
    const double step = stepAt(pos.x());
    if (!rect.contains(pos.toPoint()) || step < 0 || step >= static_cast<double>(live.size())) {
        QToolTip::hideText();
        return;
    }
    const auto s = static_cast<std::size_t>(step);
    QString text
        = QStringLiteral("<b>step %1</b><br/>live %2").arg(s).arg(QString::fromStdString(core::formatBytes(live[s])));
    if (const core::Workload* workload = m_document->workload(); workload && workload->recorded && s < workload->recorded->stepSeconds.size())
        text.replace(QStringLiteral("</b>"), QStringLiteral("</b> at +%1").arg(QString::fromStdString(core::formatSeconds(workload->recorded->stepSeconds[s]))));
    const auto& measured = m_document->measuredCurve();
    if (s < measured.size())
        text += QStringLiteral("<br/>measured %1").arg(QString::fromStdString(core::formatBytes(measured[s])));
    if (const StrategyFacts* facts = m_document->strategyFacts(); facts && s < facts->beforeCurve.size())
        text += QStringLiteral("<br/>before strategies %1")
                    .arg(QString::fromStdString(core::formatBytes(facts->beforeCurve[s])));
    if (const PeerProfile* peer = m_document->peerProfile(); peer && s < peer->overlay.steps.size()) {
        const auto& step = peer->overlay.steps[s];
        if (step.node < 0)
            text += QStringLiteral("<br/>ONNX Runtime: no node ran this op (fused away)");
        else if (step.inUse >= 0)
            text += QStringLiteral("<br/>ONNX Runtime in use %1, arena held %2")
                        .arg(QString::fromStdString(core::formatBytes(step.inUse)), QString::fromStdString(core::formatBytes(step.arenaHeld)));
    }
    if (const core::Workload* workload = m_document->workload(); workload && workload->recorded && s < workload->recorded->reserved.size())
        text += QStringLiteral("<br/>reserved by segments %1").arg(QString::fromStdString(core::formatBytes(workload->recorded->reserved[s])));
    const auto& allocator = m_document->measuredAllocatorCurve();
    if (s < allocator.size())
        text += QStringLiteral("<br/>malloc in use (per-tensor run) %1")
                    .arg(QString::fromStdString(core::formatBytes(allocator[s])));
    if (const RunMeasurement* run = m_document->measurement(); run && run->pool && s < run->pool->stepBytes.size())
        text += QStringLiteral("<br/>stream-ordered pool in use %1")
                    .arg(QString::fromStdString(core::formatBytes(run->pool->stepBytes[s])));
    QToolTip::showText(event->globalPosition().toPoint(), text, m_plot);
}

void MemoryCurveView::onRelease(QMouseEvent* event)
{
    // A click without drag in the plot sets the cursor (there are no buffers to pick here).
    if (m_drag == Drag::Pan && !m_moved && event->button() == Qt::LeftButton)
        m_document->setCursorStep(static_cast<core::Step>(std::floor(std::max(0.0, stepAt(event->position().x())))));
    m_drag = Drag::None;
    m_plot->unsetCursor();
}

void MemoryCurveView::keyPressEvent(QKeyEvent* event)
{
    switch (event->key()) {
    case Qt::Key_Left:
    case Qt::Key_Right:
        TimelineView::moveCursor(m_document, event->key() == Qt::Key_Left ? -1 : 1);
        return;
    case Qt::Key_F:
    case Qt::Key_Home:
        m_document->fitVisibleSteps();
        return;
    case Qt::Key_Escape:
        m_document->selectBuffer(-1);
        return;
    default:
        QWidget::keyPressEvent(event);
    }
}

void MemoryCurveView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    fitHeader(width());
    fitMemoryTicks(height());
    fitStepTicks(m_plot->xAxis, plotWidth(width()));
    m_phaseBands.fit(plotWidth(width()));
    fitSeries();
}

int MemoryCurveView::plotWidth(int pixels) { return pixels - TimelineView::labelColumnRight() - TimelineView::rightMarginWidth(); }

// The header in as few rows as the width allows: the legend in one row beside the title; else on
// its own row under the title, with as many columns as fit.
void MemoryCurveView::fitHeader(int pixels)
{
    QCPLegend* legend = m_plot->legend;
    const auto widthAt = [legend](int columns) {
        legend->setWrap(columns);
        legend->setFillOrder(QCPLegend::foColumnsFirst, true); // re-lays the items out at the new wrap
        return legend->minimumOuterSizeHint().width(); // public in the base
    };
    int columns = 0; // the entries (itemCount() counts a grid's empty cells too)
    for (int i = 0; i < legend->itemCount(); ++i)
        columns += legend->item(i) != nullptr;
    columns = std::max(columns, 1);
    const int title = static_cast<const QCPLayoutElement*>(m_title)->minimumOuterSizeHint().width();
    const bool beside = title + widthAt(columns) <= pixels;
    while (!beside && columns > 1 && widthAt(columns) > pixels)
        --columns;
    const bool wasBeside = m_header->hasElement(0, 1) && m_header->element(0, 1) == legend;
    if (beside != wasBeside) {
        m_header->take(legend);
        m_header->simplify();
        if (beside) {
            m_header->addElement(0, 1, legend);
            m_header->setColumnStretchFactors({ 1.0, 0.001 });
        } else {
            m_header->addElement(1, 0, legend);
        }
    }
    // However many rows the legend takes, the plot under it keeps a readable height: the splitter
    // cannot squeeze the curve to a strip (or the legend's rows into each other).
    const int header = static_cast<const QCPLayoutElement*>(m_header)->minimumOuterSizeHint().height();
    const int minimum = header + kMinimumPlotHeight + kStepAxisHeight;
    if (minimum != m_minimumHeight) {
        m_minimumHeight = minimum;
        updateGeometry();
    }
}

void MemoryCurveView::fitMemoryTicks(int pixels)
{
    // About one memory tick per 30 pixels of plot (the header and the step axis take the rest):
    // QCustomPlot's five crowd the labels of a short curve into each other.
    const int header = m_header->minimumOuterSizeHint().height(); // public in the base
    m_plot->yAxis->ticker()->setTickCount(std::clamp((pixels - header - 56) / 30, 2, 5));
}

bool MemoryCurveView::exportImage(const QString& path, QString* error)
{
    auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    QSize s = size();
    if (!(isVisible() || testAttribute(Qt::WA_Resized)) || s.width() < 200 || s.height() < 120)
        s = sizeHint();
    const QString suffix = QFileInfo(path).suffix().toLower();
    fitHeader(s.width()); // a view never shown has had no resize event
    fitMemoryTicks(s.height());
    fitStepTicks(m_plot->xAxis, plotWidth(s.width()));
    fitSeries(plotWidth(s.width()));
    m_plot->replot(QCustomPlot::rpImmediateRefresh);
    struct Refit { // back to the widget's own width after the export
        MemoryCurveView* view;
        ~Refit() { view->fitSeries(); }
    } refit { this };
    if (suffix == QLatin1String("png")) {
        if (!m_plot->savePng(path, s.width(), s.height()))
            return fail(QStringLiteral("%1: cannot write the image file").arg(path));
        return true;
    }
    if (suffix == QLatin1String("svg")) {
        QSvgGenerator generator;
        generator.setFileName(path);
        generator.setSize(s);
        generator.setViewBox(QRect(QPoint(0, 0), s));
        generator.setTitle(m_title->text());
        generator.setResolution(logicalDpiY()); // point-sized text as on screen (the default is 72 dpi)
        QCPPainter painter;
        if (!painter.begin(&generator))
            return fail(QStringLiteral("%1: cannot write the SVG file").arg(path));
        painter.setMode(QCPPainter::pmVectorized);
        painter.setMode(QCPPainter::pmNoCaching);
        m_plot->toPainter(&painter, s.width(), s.height());
        painter.end();
        if (QFileInfo(path).size() <= 0)
            return fail(QStringLiteral("%1: the SVG file is empty").arg(path));
        return portableSvgFonts(path) || fail(QStringLiteral("%1: cannot write the SVG file").arg(path));
    }
    return fail(QStringLiteral("%1: unknown image format '%2'; use .png or .svg").arg(path, suffix));
}
