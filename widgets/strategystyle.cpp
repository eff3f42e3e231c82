// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategystyle.h"

#include <algorithm>

#include "palette.h"
#include "plandocument.h"

#include <QFontMetrics>
#include <QPainter>

#include <cmath>

namespace StrategyStyle {

namespace {
constexpr StrategyMark kPriority[] = { MarkSwapIn, MarkSwapOut, MarkRecomputed, MarkInPlace, MarkFused };
} // namespace

StrategyMark primaryMark(unsigned marks)
{
    for (StrategyMark m : kPriority)
        if (marks & m)
            return m;
    return MarkNone;
}

QColor markColor(StrategyMark mark)
{
    switch (mark) {
    case MarkRecomputed:
        return QColor(0xF28E2B); // orange
    case MarkSwapOut:
        return QColor(0xB07AA1); // light purple: before the trip
    case MarkSwapIn:
        return QColor(0x6A3D9A); // dark purple: after the trip
    case MarkInPlace:
        return QColor(0xE377C2); // magenta (green is the input kind's)
    case MarkFused:
        return QColor(0x17BECF); // cyan
    case MarkNone:
        break;
    }
    return QColor(0xC9CED6);
}

Qt::BrushStyle markPattern(StrategyMark mark)
{
    switch (mark) {
    case MarkRecomputed:
        return Qt::BDiagPattern;
    case MarkSwapOut:
    case MarkSwapIn:
        return Qt::FDiagPattern;
    case MarkInPlace:
        return Qt::HorPattern;
    case MarkFused:
        return Qt::VerPattern;
    case MarkNone:
        break;
    }
    return Qt::NoBrush;
}

QColor hostTripColor() { return markColor(MarkSwapIn); }

void paintMarked(QPainter& painter, const QRectF& rect, unsigned marks)
{
    const StrategyMark mark = primaryMark(marks);
    if (mark == MarkNone || rect.isEmpty())
        return;
    painter.save();
    const QColor color = markColor(mark);
    painter.fillRect(rect, QBrush(color.darker(160), markPattern(mark)));
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(color.darker(115), 2));
    painter.drawRect(rect.adjusted(1, 1, -1, -1));
    painter.restore();
}

void paintHostTrip(QPainter& painter, QPointF from, QPointF to, std::vector<QRectF>* labels)
{
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setPen(QPen(hostTripColor(), 1.5, Qt::DashLine));
    painter.drawLine(from, to);
    const QFontMetrics fm(painter.font());
    const QString text = QStringLiteral("host");
    const QPointF mid = (from + to) / 2;
    if (std::abs(to.x() - from.x()) > fm.horizontalAdvance(text) + 12) {
        const QRectF box(mid.x() - fm.horizontalAdvance(text) / 2.0 - 3, mid.y() - fm.height() - 1,
            fm.horizontalAdvance(text) + 6, fm.height());
        const QRectF room = box.adjusted(-8, -4, 8, 4); // labels keep apart, so each reads alone
        const bool clear = !labels
            || std::none_of(labels->begin(), labels->end(), [&](const QRectF& other) { return other.intersects(room); });
        if (clear) {
            QColor backdrop = ViewPalette::background();
            backdrop.setAlpha(220); // readable over the buffers it crosses
            painter.setPen(Qt::NoPen);
            painter.setBrush(backdrop);
            painter.drawRoundedRect(box, 3, 3);
            painter.setPen(hostTripColor());
            painter.drawText(box, Qt::AlignCenter, text);
            if (labels)
                labels->push_back(box);
        }
    }
    painter.restore();
}

int paintLegend(QPainter& painter, const QRect& area, unsigned present, bool trips)
{
    const QFontMetrics fm(painter.font());
    int x = area.right();
    auto room = [&](int w) { return x - w >= area.left(); };
    if (trips) {
        const QString text = QStringLiteral("host trip");
        const int w = fm.horizontalAdvance(text);
        if (!room(w + 28))
            return area.right() - x;
        x -= w;
        painter.setPen(ViewPalette::axisText());
        painter.drawText(QRect(x, area.top(), w, area.height()), Qt::AlignVCenter | Qt::AlignLeft, text);
        x -= 22;
        painter.setPen(QPen(hostTripColor(), 1.5, Qt::DashLine));
        painter.drawLine(QPointF(x, area.center().y() + 0.5), QPointF(x + 16, area.center().y() + 0.5));
        x -= 14;
    }
    for (int i = kStrategyMarkCount - 1; i >= 0; --i) {
        const StrategyMark mark = kPriority[i];
        if (!(present & mark))
            continue;
        const QString text = QString::fromLatin1(strategyMarkName(mark));
        const int w = fm.horizontalAdvance(text);
        if (!room(w + 20))
            break;
        x -= w;
        painter.setPen(ViewPalette::axisText());
        painter.drawText(QRect(x, area.top(), w, area.height()), Qt::AlignVCenter | Qt::AlignLeft, text);
        x -= 16;
        const QRect swatch(x, area.center().y() - 6, 12, 12);
        painter.fillRect(swatch, markColor(mark));
        paintMarked(painter, swatch, mark);
        x -= 14;
    }
    return area.right() - x;
}

const StrategyFacts* factsOf(const PlanDocument* document) { return document ? document->strategyFacts() : nullptr; }

} // namespace StrategyStyle
