// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "qcp.h" // first: see qcp.h

#include "kvcacheview.h"

#include "kvblockmapview.h"
#include "palette.h"
#include "timeaxis.h"

#include <QCoreApplication>
#include <QPointer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace {

QColor policyColor(core::KvPolicy policy)
{
    switch (policy) {
    case core::KvPolicy::Contiguous:
        return QColor(0x4E79A7); // blue
    case core::KvPolicy::Paged:
        return QColor(0xF28E2B); // orange
    case core::KvPolicy::TwoLevel:
        return QColor(0x59A14F); // green
    }
    return QColor(0x9C755F);
}

const QColor kCapacity(0xC62828);
const QColor kInUse(0x5F6368);
const QColor kArena(0xB07AA1);

// Byte ticks on a 1-2-5 grid, numbers in the unit the axis label names ("KV cache (MiB)").
class BytesTicker : public QCPAxisTicker {
public:
    ByteUnit unit { 1024.0 * 1024, QStringLiteral("MiB") };

protected:
    QVector<double> createTickVector(double, const QCPRange& range) override
    {
        QVector<double> ticks;
        for (const double t : byteTicks(std::max(0.0, range.lower), range.upper, tickCount() + 1))
            ticks.append(t);
        return ticks;
    }
    QString getTickLabel(double tick, const QLocale&, QChar, int) override
    {
        QString text = formatInUnit(tick, unit);
        return text.left(text.lastIndexOf(QLatin1Char(' ')));
    }
};

// Powers of two on a log axis, labelled in bytes.
class LogBytesTicker : public QCPAxisTickerLog {
protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override { return shortBytes(tick); }
};

// Step graph: point i holds values[i] over [i, i+1); one extra point closes the last step.
// Values <= 0 become gaps when `gapsForZero` (a log axis cannot show them).
void setSteps(QCPGraph* graph, const std::vector<double>& values, bool gapsForZero = false)
{
    QVector<double> keys, data;
    for (std::size_t i = 0; i < values.size(); ++i) {
        keys.append(static_cast<double>(i));
        data.append(gapsForZero && values[i] <= 0 ? qQNaN() : values[i]);
    }
    if (!values.empty()) {
        keys.append(static_cast<double>(values.size()));
        data.append(data.back());
    }
    graph->setData(keys, data, true);
}

} // namespace

KvCacheView::KvCacheView(QWidget* parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
    , m_blockMap(new KvBlockMapView(this))
    , m_cancel(std::make_shared<std::atomic<bool>>(false))
{
    QFont f = font();
    f.setPointSizeF(9);
    setFont(f);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_plot, 4);
    layout->addWidget(m_blockMap, 1);

    m_plot->setBackground(ViewPalette::background());
    m_plot->setPlottingHint(QCP::phCacheLabels, true);
    m_kvRect = m_plot->axisRect();
    m_arenaRect = new QCPAxisRect(m_plot);
    m_plot->plotLayout()->addElement(1, 0, m_arenaRect);
    auto* group = new QCPMarginGroup(m_plot);
    for (QCPAxisRect* rect : { m_kvRect, m_arenaRect }) {
        rect->setBackground(ViewPalette::plotBackground());
        rect->setMarginGroup(QCP::msLeft | QCP::msRight, group);
        for (QCPAxis* axis : { rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft) })
            styleAxis(axis, f);
        rect->axis(QCPAxis::atBottom)->setLabel(tr("decode step"));
    }
    m_kvRect->axis(QCPAxis::atLeft)->setLabel(tr("KV cache (MiB)"));
    m_kvRect->axis(QCPAxis::atLeft)->setTicker(QSharedPointer<QCPAxisTicker>(new BytesTicker));
    m_arenaRect->axis(QCPAxis::atLeft)->setLabel(tr("arena (log scale)"));
    m_arenaRect->axis(QCPAxis::atLeft)->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<LogBytesTicker> logTicker(new LogBytesTicker);
    logTicker->setLogBase(2);
    logTicker->setSubTickCount(0);
    logTicker->setTickCount(4);
    m_arenaRect->axis(QCPAxis::atLeft)->setTicker(logTicker);
    m_plot->plotLayout()->setRowStretchFactors({ 3.0, 1.3 });

    QFont bold = f;
    bold.setBold(true);
    // Header above the plots: title, then the legend on its own rows so it never covers a curve.
    auto* header = new QCPLayoutGrid;
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, header);
    m_plot->plotLayout()->setRowStretchFactors({ 0.001, 3.0, 1.3 });
    m_title = new QCPTextElement(m_plot, QString(), bold);
    m_title->setTextColor(ViewPalette::axisText());
    m_title->setTextFlags(Qt::AlignLeft | Qt::AlignVCenter);
    m_title->setMargins(QMargins(8, 6, 8, 2));
    header->addElement(0, 0, m_title);
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->axisRect()->insetLayout()->simplify();
    header->addElement(1, 0, m_plot->legend);
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(f);
    m_plot->legend->setTextColor(ViewPalette::axisText());
    m_plot->legend->setBrush(Qt::NoBrush);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setIconSize(22, 10);
    m_plot->legend->setColumnSpacing(16);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_plot->legend->setWrap(3);
    m_plot->legend->setMargins(QMargins(8, 2, 8, 4));
    m_plot->legend->setMaximumSize(QWIDGETSIZE_MAX, QWIDGETSIZE_MAX);

    connect(m_plot, &QCustomPlot::mousePress, this, &KvCacheView::onPress);
    m_cursor = nullptr;
    rebuild();
}

KvCacheView::~KvCacheView() { m_cancel->store(true); }

core::Step KvCacheView::defaultBlockMapStep(const core::LlmScenarioResult& result)
{
    for (const auto& p : result.policies) {
        if (p.run.policy != core::KvPolicy::Paged || p.run.steps.empty())
            continue;
        const auto& steps = p.run.steps;
        const auto peak = std::max_element(steps.begin(), steps.end(),
            [](const core::KvStepStats& a, const core::KvStepStats& b) { return a.reserved < b.reserved; });
        return static_cast<core::Step>(peak - steps.begin());
    }
    return 0;
}

void KvCacheView::requestScenario(const core::LlmConfig& config, const QString& planner)
{
    m_cancel->store(true); // the older run stops at its next check
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_busy = true;
    struct Outcome {
        std::shared_ptr<const core::LlmScenarioResult> result; // null: failed with `error`
        core::KvBlockMap map;
        QString error;
    };
    m_job.start(
        this,
        [self = QPointer(this), config, planner = planner.toStdString(), flag = m_cancel](quint64 generation) {
            core::LlmRunOptions options;
            options.planner = planner;
            options.cancel = core::CancelToken(flag);
            // Called on the worker after each decode step; throttled so the UI thread's queue stays short.
            options.progress = [self, generation, throttle = ProgressThrottle(100)](core::Step done, core::Step total) mutable {
                if (!throttle.pass(done == total))
                    return;
                QMetaObject::invokeMethod(
                    QCoreApplication::instance(),
                    [self, generation, done, total] {
                        if (self && self->m_job.isCurrent(generation) && self->m_busy)
                            emit self->scenarioProgress(static_cast<int>(done), static_cast<int>(total));
                    },
                    Qt::QueuedConnection);
            };
            auto result = core::runLlmScenario(config, options); // worker thread: pure core code
            Outcome outcome;
            if (result) {
                outcome.map = core::pagedBlockMap(config, defaultBlockMapStep(*result));
                outcome.result = std::make_shared<const core::LlmScenarioResult>(std::move(*result));
            } else {
                outcome.error = QString::fromStdString(result.error().message);
            }
            return outcome;
        },
        [this](const Outcome& outcome) {
            m_busy = false;
            if (outcome.result) {
                setResult(outcome.result, outcome.map);
                emit scenarioReady();
            } else {
                emit scenarioFailed(outcome.error);
            }
        });
}

void KvCacheView::cancelScenario()
{
    if (!m_busy)
        return;
    m_cancel->store(true);
    m_job.drop(); // its result, if it still arrives, is not shown
    m_busy = false;
    emit scenarioCancelled();
}

void KvCacheView::setStale(bool stale)
{
    if (m_stale == stale)
        return;
    m_stale = stale;
    rebuild();
}

void KvCacheView::setBlockMapStep(core::Step step)
{
    if (!m_result)
        return;
    placeCursor(step);
    m_mapJob.start(
        this, [result = m_result, step] { return core::pagedBlockMap(result->config, step); },
        [this, result = m_result](const core::KvBlockMap& map) {
            if (result != m_result)
                return; // a map of a result no longer shown
            m_blockMap->setBlockMap(map, result->config.batch);
            placeCursor(map.step);
            emit blockMapReady();
        });
}

void KvCacheView::setResult(std::shared_ptr<const core::LlmScenarioResult> result, const core::KvBlockMap& blockMap)
{
    m_result = std::move(result);
    m_stale = false; // a new result is what the settings asked for
    m_mapJob.drop(); // a block map still being computed belongs to the old result
    m_blockMap->setBlockMap(blockMap, m_result ? m_result->config.batch : 0);
    rebuild();
    placeCursor(blockMap.step);
}

void KvCacheView::rebuild()
{
    m_plot->clearGraphs();
    m_plot->clearItems();
    m_cursor = new QCPItemStraightLine(m_plot);
    m_cursor->setClipAxisRect(m_kvRect);
    m_cursor->point1->setAxes(m_kvRect->axis(QCPAxis::atBottom), m_kvRect->axis(QCPAxis::atLeft));
    m_cursor->point2->setAxes(m_kvRect->axis(QCPAxis::atBottom), m_kvRect->axis(QCPAxis::atLeft));
    m_cursor->setPen(QPen(ViewPalette::cursorLine(), 1.2, Qt::DotLine));
    m_cursor->setVisible(false);
    QCPAxis* kvX = m_kvRect->axis(QCPAxis::atBottom);
    QCPAxis* kvY = m_kvRect->axis(QCPAxis::atLeft);
    QCPAxis* arenaX = m_arenaRect->axis(QCPAxis::atBottom);
    QCPAxis* arenaY = m_arenaRect->axis(QCPAxis::atLeft);
    if (!m_result) {
        m_title->setText(tr("KV cache over decode steps"));
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const auto& r = *m_result;
    const auto& c = r.config;
    const double steps = std::max<double>(r.steps, 1);
    // Tokens stored: every policy stores the same tokens; take the longest series (one that did not refuse).
    const core::KvPolicyRun* longest = nullptr;
    for (const auto& p : r.policies)
        if (!longest || p.run.steps.size() > longest->steps.size())
            longest = &p.run;
    double reservedPeak = 0;
    for (const auto& p : r.policies)
        reservedPeak = std::max(reservedPeak, static_cast<double>(p.run.peakReserved));
    // A capacity far above every policy's peak would flatten the curves at the bottom: the range
    // then ends above the peaks and the capacity is named at the top instead of drawn.
    const double capacityBytes = static_cast<double>(c.capacity);
    const bool capacityAbove = reservedPeak > 0 && capacityBytes > 1.6 * reservedPeak;
    const double top = capacityAbove ? reservedPeak : std::max(capacityBytes, reservedPeak);
    const ByteUnit unit = byteUnitFor(top * 1.08);
    static_cast<BytesTicker*>(kvY->ticker().data())->unit = unit;
    kvY->setLabel(tr("KV cache (%1)").arg(unit.name));
    const auto inUnit = [&unit](double bytes) { return formatInUnit(bytes, unit); };
    m_title->setText(tr("KV cache over decode steps · %1 layers, %2 per token, batch %3 · capacity %4%5")
                         .arg(c.layers)
                         .arg(shortBytes(static_cast<double>(c.kvBytesPerToken())))
                         .arg(c.batch)
                         .arg(capacityAbove ? shortBytes(capacityBytes) : inUnit(capacityBytes),
                             m_stale ? tr(" · settings changed since this run: Run to update") : QString()));
    auto* inUse = m_plot->addGraph(kvX, kvY);
    inUse->setLineStyle(QCPGraph::lsStepLeft);
    inUse->setPen(QPen(kInUse, 1.5));
    QColor fill = kInUse;
    fill.setAlpha(50);
    inUse->setBrush(fill);
    if (longest) {
        std::vector<double> values;
        for (const auto& s : longest->steps)
            values.push_back(static_cast<double>(s.inUse));
        setSteps(inUse, values);
        inUse->setName(tr("in use: tokens stored · peak %1").arg(inUnit(static_cast<double>(longest->peakInUse))));
    }
    for (const auto& p : r.policies) {
        const QColor color = policyColor(p.run.policy);
        auto* reserved = m_plot->addGraph(kvX, kvY);
        reserved->setLineStyle(QCPGraph::lsStepLeft);
        reserved->setPen(QPen(color, 2.0));
        std::vector<double> values;
        for (const auto& s : p.run.steps)
            values.push_back(static_cast<double>(s.reserved));
        setSteps(reserved, values);
        const auto name = QString::fromLatin1(core::kvPolicyName(p.run.policy).data());
        reserved->setName(tr("%1 reserved · peak %2").arg(name, inUnit(static_cast<double>(p.run.peakReserved))));
        if (p.run.refusal) {
            auto* mark = new QCPItemStraightLine(m_plot);
            mark->setClipAxisRect(m_kvRect);
            mark->point1->setAxes(kvX, kvY);
            mark->point2->setAxes(kvX, kvY);
            mark->point1->setCoords(p.run.refusal->step, 0);
            mark->point2->setCoords(p.run.refusal->step, 1);
            mark->setPen(QPen(color, 1.5, Qt::DashLine));
            auto* label = new QCPItemText(m_plot);
            label->setClipAxisRect(m_kvRect);
            label->position->setAxes(kvX, kvY);
            label->position->setType(QCPItemPosition::ptPlotCoords);
            label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
            label->setPadding(QMargins(4, 2, 4, 2));
            label->setColor(color.darker(140));
            label->setFont(font());
            label->setText(tr("%1 refused: step %2, sequence %3").arg(name).arg(p.run.refusal->step).arg(p.run.refusal->sequence));
            // Stacked above the axis, one line per policy, so two refusals never overlap.
            label->position->setCoords(p.run.refusal->step, top * (0.04 + 0.07 * static_cast<int>(p.run.policy)));
        }
    }
    auto* capacity = m_plot->addGraph(kvX, kvY);
    capacity->setPen(QPen(kCapacity, 1.5, Qt::DashDotLine));
    if (capacityAbove) {
        capacity->setName(tr("capacity %1, above this range").arg(shortBytes(capacityBytes)));
        auto* above = new QCPItemText(m_plot);
        above->setClipAxisRect(m_kvRect);
        above->position->setType(QCPItemPosition::ptAxisRectRatio);
        above->position->setAxisRect(m_kvRect);
        above->position->setCoords(0.995, 0.01);
        above->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
        above->setPadding(QMargins(4, 2, 4, 2));
        above->setColor(kCapacity);
        above->setFont(font());
        above->setText(tr("↑ capacity %1 (%2× the highest peak)").arg(shortBytes(capacityBytes)).arg(capacityBytes / reservedPeak, 0, 'f', 1));
    } else {
        capacity->setData(QVector<double> { 0, steps }, QVector<double> { capacityBytes, capacityBytes }, true);
        capacity->setName(tr("capacity %1").arg(inUnit(capacityBytes)));
    }
    kvX->setRange(0, steps);
    kvY->setRange(0, top * 1.08);

    auto* arena = m_plot->addGraph(arenaX, arenaY);
    arena->setLineStyle(QCPGraph::lsStepLeft);
    arena->setPen(QPen(kArena, 1.5));
    QColor arenaFill = kArena;
    arenaFill.setAlpha(60);
    arena->setBrush(arenaFill);
    std::vector<double> arenaValues;
    double low = 0, high = 0;
    for (const auto& a : r.arenas) {
        const auto v = static_cast<double>(a.arena);
        arenaValues.push_back(v);
        if (v > 0) {
            low = low > 0 ? std::min(low, v) : v;
            high = std::max(high, v);
        }
    }
    setSteps(arena, arenaValues, true);
    arena->setName(tr("activation arena (%1) · %2 .. %3").arg(QString::fromStdString(r.planner), shortBytes(low), shortBytes(high)));
    arenaX->setRange(0, steps);
    if (high > 0)
        arenaY->setRange(std::exp2(std::floor(std::log2(low))), std::exp2(std::ceil(std::log2(high)) + 0.2));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void KvCacheView::placeCursor(core::Step step)
{
    if (!m_cursor)
        return;
    m_cursor->setVisible(m_result != nullptr);
    m_cursor->point1->setCoords(step + 0.5, 0);
    m_cursor->point2->setCoords(step + 0.5, 1);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void KvCacheView::onPress(QMouseEvent* event)
{
    if (!m_result || event->button() != Qt::LeftButton)
        return;
    QCPAxisRect* rect = m_plot->axisRectAt(event->position());
    if (rect != m_kvRect && rect != m_arenaRect)
        return;
    const double step = rect->axis(QCPAxis::atBottom)->pixelToCoord(event->position().x());
    if (step >= 0 && step < m_result->steps)
        setBlockMapStep(static_cast<core::Step>(step));
}

bool KvCacheView::exportImage(const QString& path, QString* error)
{
    if (!(isVisible() || testAttribute(Qt::WA_Resized)))
        resize(sizeHint());
    if (QLayout* l = layout())
        l->activate();
    m_plot->replot(QCustomPlot::rpImmediateRefresh);
    if (!grab().save(path, "PNG")) {
        if (error)
            *error = tr("%1: cannot write the image file").arg(path);
        return false;
    }
    return true;
}
