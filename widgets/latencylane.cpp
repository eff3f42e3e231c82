// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "latencylane.h"

#include "palette.h"
#include "plandocument.h"
#include "runmeasurement.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace {
const QColor kReal(0x4E79A7);
const QColor kSynthetic(0xBAB0AC);
const QColor kPerTensor(0x7B1FA2);

QString msText(double ms) { return QStringLiteral("%1 ms").arg(ms, 0, 'f', ms < 1 ? 3 : ms < 10 ? 2 : ms < 100 ? 1 : 0); }
} // namespace

LatencyLane::LatencyLane(PlanDocument* document, QWidget* parent)
    : TimelineView(document, parent)
{
    // Shown only while there is something measured: until then the views above keep the room.
    connect(document, &PlanDocument::measurementChanged, this, [this] {
        rebuild();
        setVisible(!m_arenaMs.empty());
        update();
    });
    setMouseTracking(true);
    rebuild();
    setVisible(false);
}

void LatencyLane::rebuild()
{
    m_arenaMs.clear();
    m_perTensorMs.clear();
    m_real.clear();
    m_maxMs = 0;
    const RunMeasurement* m = document()->measurement();
    if (!m)
        return;
    for (const auto& op : m->arena.ops) {
        m_arenaMs.push_back(op.medianMs);
        m_real.push_back(op.real);
        m_maxMs = std::max(m_maxMs, op.medianMs);
    }
    for (const auto& op : m->perTensor.ops) {
        m_perTensorMs.push_back(op.medianMs);
        m_maxMs = std::max(m_maxMs, op.medianMs);
    }
    m_maxMs = m_maxMs > 0 ? m_maxMs * 1.1 : 1.0;
}

QString LatencyLane::caption() const
{
    const RunMeasurement* m = document()->measurement();
    if (!m)
        return QStringLiteral("Per-op latency");
    return QStringLiteral("Per-op latency · measured on %1 · median of %2 runs · forward p50 %3, p99 %4")
        .arg(QString::fromStdString(m->device))
        .arg(m->repeat)
        .arg(msText(m->arena.latencyMs.p50), msText(m->arena.latencyMs.p99));
}

int LatencyLane::paintLegend(QPainter& painter, const QRect& area) const
{
    if (m_arenaMs.empty())
        return 0;
    const QFontMetrics fm(font());
    struct Item {
        QColor color;
        QString text;
        bool tick;
    };
    const Item items[] = { { kReal, QStringLiteral("arena run, real kernel"), false },
        { kSynthetic, QStringLiteral("synthetic kernel"), false }, { kPerTensor, QStringLiteral("per-tensor run"), true } };
    int x = area.right();
    for (int i = 2; i >= 0; --i) {
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
    if (m_arenaMs.empty()) {
        painter.setPen(ViewPalette::axisText());
        painter.drawText(frame.plot, Qt::AlignCenter,
            QStringLiteral("Not measured yet: press Run in the toolbar to execute the plan on the CPU"));
        return;
    }
    const auto& time = frame.time;
    const double scale = frame.plot.height() / m_maxMs;
    const int first = std::max(0, static_cast<int>(std::floor(time.first)));
    const int last = std::min(static_cast<int>(m_arenaMs.size()) - 1, static_cast<int>(std::ceil(time.last)));
    const double gap = time.pixelsPerStep() >= 4 ? 1 : 0;
    for (int s = first; s <= last; ++s) {
        const double x0 = time.stepToX(s), x1 = time.stepToX(s + 1);
        const double h = std::max(1.0, m_arenaMs[static_cast<std::size_t>(s)] * scale);
        const QColor color = m_real[static_cast<std::size_t>(s)] ? kReal : kSynthetic;
        painter.fillRect(QRectF(x0, frame.plot.bottom() + 1 - h, std::max(1.0, x1 - x0 - gap), h), color);
        if (static_cast<std::size_t>(s) < m_perTensorMs.size()) {
            const double y = frame.plot.bottom() + 1 - m_perTensorMs[static_cast<std::size_t>(s)] * scale;
            painter.fillRect(QRectF(x0, y - 1, std::max(1.0, x1 - x0 - gap), 2), kPerTensor);
        }
    }
}

void LatencyLane::paintLabels(QPainter& painter, const Frame& frame) const
{
    if (m_arenaMs.empty())
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
    painter.drawText(QRect(-frame.labels.height() / 2, 0, frame.labels.height(), fm.height()), Qt::AlignCenter,
        QStringLiteral("time (ms)"));
    painter.restore();
}

int LatencyLane::bufferAt(const Frame&, QPointF) const { return -1; }

QString LatencyLane::stepToolTip(int step) const
{
    const RunMeasurement* m = document()->measurement();
    if (!m || step < 0 || step >= static_cast<int>(m->arena.ops.size()))
        return {};
    const auto& op = m->arena.ops[static_cast<std::size_t>(step)];
    QString text = QStringLiteral("<b>step %1</b> %2 (%3)<br/>arena run: median %4, p99 %5")
                       .arg(step)
                       .arg(QString::fromStdString(op.name).toHtmlEscaped(), QString::fromStdString(op.type).toHtmlEscaped(),
                           msText(op.medianMs), msText(op.p99Ms));
    if (static_cast<std::size_t>(step) < m->perTensor.ops.size())
        text += QStringLiteral("<br/>per-tensor run: median %1").arg(msText(m->perTensor.ops[static_cast<std::size_t>(step)].medianMs));
    text += op.real ? QStringLiteral("<br/>real kernel") : QStringLiteral("<br/>synthetic kernel (no real kernel for this op)");
    return text;
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
