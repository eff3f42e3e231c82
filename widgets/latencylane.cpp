// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "latencylane.h"

#include "palette.h"
#include "plandocument.h"
#include "runmeasurement.h"

#include <QActionGroup>
#include <QContextMenuEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace {
const QColor kReal(0x4E79A7);
const QColor kSynthetic(0xBAB0AC);
const QColor kTick(0x7B1FA2);
const QColor kRoofline(0xF28E2B);

QString msText(double ms) { return QStringLiteral("%1 ms").arg(ms, 0, 'f', ms < 1 ? 3 : ms < 10 ? 2 : ms < 100 ? 1 : 0); }
} // namespace

LatencyLane::LatencyLane(PlanDocument* document, QWidget* parent)
    : TimelineView(document, parent)
{
    // Shown only while there is something measured: until then the views above keep the room.
    connect(document, &PlanDocument::measurementChanged, this, [this] {
        rebuild();
        setVisible(!m_barMs.empty());
        update();
    });
    setMouseTracking(true);
    rebuild();
    setVisible(false);
}

QString LatencyLane::runName(Run run)
{
    switch (run) {
    case Run::PerTensor:
        return QStringLiteral("per-tensor");
    case Run::Pool:
        return QStringLiteral("pool");
    case Run::Arena:
        break;
    }
    return QStringLiteral("arena");
}

const core::Measurement* LatencyLane::measurementOf(Run run) const
{
    const RunMeasurement* m = document()->measurement();
    if (!m)
        return nullptr;
    switch (run) {
    case Run::PerTensor:
        return &m->perTensor;
    case Run::Pool:
        return m->pool ? &*m->pool : nullptr;
    case Run::Arena:
        break;
    }
    return &m->arena;
}

LatencyLane::Run LatencyLane::shownRun() const
{
    return m_choice == Run::Pool && !measurementOf(Run::Pool) ? Run::Arena : m_choice;
}

LatencyLane::Run LatencyLane::tickRun() const { return shownRun() == Run::Arena ? Run::PerTensor : Run::Arena; }

void LatencyLane::setRun(Run run)
{
    if (run == m_choice)
        return;
    m_choice = run;
    rebuild();
    update();
}

void LatencyLane::rebuild()
{
    m_barMs.clear();
    m_tickMs.clear();
    m_rooflineMs.clear();
    m_real.clear();
    m_maxMs = 0;
    const core::Measurement* bars = measurementOf(shownRun());
    if (!bars)
        return;
    for (const auto& op : bars->ops) {
        m_barMs.push_back(op.medianMs);
        m_real.push_back(op.real);
        m_maxMs = std::max(m_maxMs, op.medianMs);
    }
    if (const core::Measurement* ticks = measurementOf(tickRun()))
        for (const auto& op : ticks->ops) {
            m_tickMs.push_back(op.medianMs);
            m_maxMs = std::max(m_maxMs, op.medianMs);
        }
    if (const RunMeasurement* m = document()->measurement())
        for (double ms : m->rooflineStepMs) {
            m_rooflineMs.push_back(ms);
            m_maxMs = std::max(m_maxMs, ms);
        }
    m_maxMs = m_maxMs > 0 ? m_maxMs * 1.1 : 1.0;
}

QString LatencyLane::caption() const
{
    const RunMeasurement* m = document()->measurement();
    const core::Measurement* bars = measurementOf(shownRun());
    if (!m || !bars)
        return QStringLiteral("Per-op latency");
    return QStringLiteral("Per-op latency · %1 run on %2 · median of %3 runs · forward p50 %4, p99 %5")
        .arg(runName(shownRun()), QString::fromStdString(m->device))
        .arg(m->repeat)
        .arg(msText(bars->latencyMs.p50), msText(bars->latencyMs.p99));
}

int LatencyLane::paintLegend(QPainter& painter, const QRect& area, const Frame&) const
{
    if (m_barMs.empty())
        return 0;
    const QFontMetrics fm(font());
    struct Item {
        QColor color;
        QString text;
        bool tick;
    };
    std::vector<Item> items { { kReal, QStringLiteral("%1 run, real kernel").arg(runName(shownRun())), false } };
    if (std::find(m_real.begin(), m_real.end(), false) != m_real.end()) // only what the bars show
        items.push_back({ kSynthetic, QStringLiteral("synthetic kernel"), false });
    if (!m_tickMs.empty())
        items.push_back({ kTick, QStringLiteral("%1 run").arg(runName(tickRun())), true });
    if (const RunMeasurement* m = document()->measurement(); m && !m_rooflineMs.empty())
        items.push_back({ kRoofline, QStringLiteral("roofline (%1)").arg(QString::fromStdString(m->costProfile)), true });
    const int count = static_cast<int>(items.size());
    int x = area.right();
    for (int i = count - 1; i >= 0; --i) {
        const int w = fm.horizontalAdvance(items[i].text);
        if (x - w - 18 < area.left())
            break;
        x -= w;
        painter.setPen(ViewPalette::axisText());
        painter.drawText(QRect(x, area.top(), w, area.height()), Qt::AlignVCenter | Qt::AlignLeft, items[i].text);
        x -= 16;
        if (items[i].tick)
            painter.fillRect(QRect(x, area.center().y() - 1, 12, 3), items[i].color);
        else
            painter.fillRect(QRect(x + 1, area.center().y() - 5, 10, 10), items[i].color);
        x -= 12;
    }
    return area.right() - x;
}

void LatencyLane::paintPlot(QPainter& painter, const Frame& frame) const
{
    if (m_barMs.empty()) {
        painter.setPen(ViewPalette::axisText());
        painter.drawText(frame.plot, Qt::AlignCenter,
            QStringLiteral("Not measured yet: press Run in the toolbar to execute the plan on the CPU"));
        return;
    }
    const auto& time = frame.time;
    const double scale = frame.plot.height() / m_maxMs;
    const int first = std::max(0, static_cast<int>(std::floor(time.first)));
    const int last = std::min(static_cast<int>(m_barMs.size()) - 1, static_cast<int>(std::ceil(time.last)));
    const double gap = time.pixelsPerStep() >= 4 ? 1 : 0;
    for (int s = first; s <= last; ++s) {
        const double x0 = time.stepToX(s), x1 = time.stepToX(s + 1);
        const double h = std::max(1.0, m_barMs[static_cast<std::size_t>(s)] * scale);
        const QColor color = m_real[static_cast<std::size_t>(s)] ? kReal : kSynthetic;
        painter.fillRect(QRectF(x0, frame.plot.bottom() + 1 - h, std::max(1.0, x1 - x0 - gap), h), color);
        if (static_cast<std::size_t>(s) < m_tickMs.size()) {
            const double y = frame.plot.bottom() + 1 - m_tickMs[static_cast<std::size_t>(s)] * scale;
            painter.fillRect(QRectF(x0, y - 1, std::max(1.0, x1 - x0 - gap), 2), kTick);
        }
        if (static_cast<std::size_t>(s) < m_rooflineMs.size()) { // at least a pixel up, so a tiny bound stays visible
            const double y = frame.plot.bottom() + 1 - std::max(2.0, m_rooflineMs[static_cast<std::size_t>(s)] * scale);
            painter.fillRect(QRectF(x0, y - 1, std::max(1.0, x1 - x0 - gap), 2), kRoofline);
        }
    }
}

void LatencyLane::paintLabels(QPainter& painter, const Frame& frame) const
{
    if (m_barMs.empty())
        return;
    const QFontMetrics fm(font());
    painter.setPen(ViewPalette::axisText());
    const int right = frame.labels.right() - 6;
    const OffsetAxis y { 0, m_maxMs, frame.plot.top(), frame.plot.bottom() + 1 };
    int widest = 0;
    for (double t : niceTicks(0, m_maxMs, std::max(3, frame.plot.height() / 22))) {
        const double yy = std::floor(y.valueToY(t)) + 0.5;
        painter.drawLine(QPointF(right + 1, yy), QPointF(right + 5, yy));
        const QString text = QString::number(t, 'g', 3);
        painter.drawText(QRectF(frame.labels.left(), yy - fm.height() / 2.0, right - 3 - frame.labels.left(), fm.height()),
            Qt::AlignRight | Qt::AlignVCenter, text);
        widest = std::max(widest, fm.horizontalAdvance(text));
    }
    const int titleX = std::max(frame.labels.left(), right - 3 - widest - 8 - fm.height());
    painter.save();
    painter.translate(titleX, frame.labels.center().y());
    painter.rotate(-90);
    // A short lane has room for the unit only (the full title was cut to "me (m").
    const QString full = QStringLiteral("time (ms)");
    painter.drawText(QRect(-frame.labels.height() / 2, 0, frame.labels.height(), fm.height()), Qt::AlignCenter,
        fm.horizontalAdvance(full) <= frame.labels.height() ? full : QStringLiteral("ms"));
    painter.restore();
}

int LatencyLane::bufferAt(const Frame&, QPointF) const { return -1; }

QString LatencyLane::stepToolTip(int step) const
{
    const RunMeasurement* m = document()->measurement();
    if (!m || step < 0 || step >= static_cast<int>(m->arena.ops.size()))
        return {};
    const auto& op = m->arena.ops[static_cast<std::size_t>(step)];
    QString text = QStringLiteral("<b>step %1</b> %2 (%3)")
                       .arg(step)
                       .arg(QString::fromStdString(op.name).toHtmlEscaped(), QString::fromStdString(op.type).toHtmlEscaped());
    for (Run run : { Run::Arena, Run::PerTensor, Run::Pool }) {
        const core::Measurement* measured = measurementOf(run);
        if (!measured || static_cast<std::size_t>(step) >= measured->ops.size())
            continue;
        const auto& o = measured->ops[static_cast<std::size_t>(step)];
        text += QStringLiteral("<br/>%1%2 run: median %3, p99 %4%5")
                    .arg(run == shownRun() ? QStringLiteral("<b>") : QString(), runName(run), msText(o.medianMs), msText(o.p99Ms),
                        run == shownRun() ? QStringLiteral("</b>") : QString());
    }
    if (static_cast<std::size_t>(step) < m->rooflineStepMs.size()) {
        const double bound = m->rooflineStepMs[static_cast<std::size_t>(step)];
        const core::Measurement* shown = measurementOf(shownRun());
        text += QStringLiteral("<br/>roofline bound on %1: %2").arg(QString::fromStdString(m->costProfile).toHtmlEscaped(), msText(bound));
        if (bound > 0 && shown && static_cast<std::size_t>(step) < shown->ops.size())
            text += QStringLiteral(" (%1 run: %2×)").arg(runName(shownRun())).arg(shown->ops[static_cast<std::size_t>(step)].medianMs / bound, 0, 'f', 1);
    }
    text += op.real ? QStringLiteral("<br/>real kernel") : QStringLiteral("<br/>synthetic kernel (no real kernel for this op)");
    if (op.host && op.hostWaited)
        text += QStringLiteral("<br/>ran on the host (no device kernel, or shapes only the data gives): both streams synchronised, "
                               "inputs copied back, outputs copied to the device");
    else if (op.host)
        text += QStringLiteral("<br/>ran on the host (no device kernel, or shapes only the data gives) on what host ops before it "
                               "wrote: no synchronisation, outputs copied to the device");
    else if (op.precomputed)
        text += QStringLiteral("<br/>precomputed (constant inputs): computed once before the runs, its outputs copied in");
    text += QStringLiteral("<br/><span style='color:gray'>right-click: show another run's bars</span>");
    return text;
}

void LatencyLane::contextMenuEvent(QContextMenuEvent* event)
{
    if (!document()->measurement())
        return TimelineView::contextMenuEvent(event);
    QMenu menu(this);
    menu.setToolTipsVisible(true);
    auto* group = new QActionGroup(&menu);
    const std::pair<Run, QString> entries[] = { { Run::Arena, tr("Show the arena run") },
        { Run::PerTensor, tr("Show the per-tensor run") }, { Run::Pool, tr("Show the stream-ordered pool run") } };
    for (const auto& [run, text] : entries) {
        QAction* action = menu.addAction(text);
        action->setCheckable(true);
        action->setChecked(run == shownRun());
        action->setEnabled(measurementOf(run) != nullptr);
        if (run == Run::Pool && !action->isEnabled())
            action->setToolTip(tr("Only a cuda run has a pool run"));
        group->addAction(action);
        connect(action, &QAction::triggered, this, [this, chosen = run] { setRun(chosen); });
    }
    menu.exec(event->globalPos());
}

void LatencyLane::mouseMoveEvent(QMouseEvent* event)
{
    TimelineView::mouseMoveEvent(event);
    const Frame f = frame();
    if (event->buttons() != Qt::NoButton || !f.plot.contains(event->position().toPoint()))
        return;
    const QString text = stepToolTip(static_cast<int>(std::floor(f.time.xToStep(event->position().x()))));
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, this);
}
