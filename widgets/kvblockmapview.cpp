// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "kvblockmapview.h"

#include "palette.h"
#include "timeaxis.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace {
constexpr int kMargin = 8;
constexpr int kTitleHeight = 20;
constexpr int kLegendHeight = 20;
constexpr int kMaxLegendSequences = 12;
} // namespace

KvBlockMapView::KvBlockMapView(QWidget* parent)
    : QWidget(parent)
{
    QFont f = font();
    f.setPointSizeF(9);
    setFont(f);
    setMouseTracking(true);
    setAutoFillBackground(true);
    QPalette p = palette();
    p.setColor(QPalette::Window, ViewPalette::background());
    setPalette(p);
}

void KvBlockMapView::setBlockMap(const core::KvBlockMap& map, int sequences)
{
    m_map = map;
    m_sequences = sequences;
    update();
}

KvBlockMapView::Grid KvBlockMapView::grid() const
{
    Grid g;
    g.area = rect().adjusted(kMargin, kMargin + kTitleHeight, -kMargin, -kMargin - kLegendHeight);
    g.shown = static_cast<std::int64_t>(m_map.owners.size());
    if (g.shown == 0 || g.area.width() < 4 || g.area.height() < 4)
        return g;
    // Largest square cell that fits every block, at most 24 pixels; 1 pixel when there are too many.
    const double area = static_cast<double>(g.area.width()) * g.area.height();
    int cell = std::clamp(static_cast<int>(std::floor(std::sqrt(area / static_cast<double>(g.shown)))), 1, 24);
    while (cell > 1
        && static_cast<std::int64_t>(g.area.width() / cell) * static_cast<std::int64_t>(g.area.height() / cell) < g.shown)
        --cell;
    g.cell = cell;
    g.columns = std::max(1, g.area.width() / cell);
    g.shown = std::min<std::int64_t>(g.shown, static_cast<std::int64_t>(g.columns) * std::max(1, g.area.height() / cell));
    return g;
}

std::int64_t KvBlockMapView::blockAt(QPoint position) const
{
    const Grid g = grid();
    if (g.shown == 0 || !g.area.contains(position))
        return -1;
    const int column = (position.x() - g.area.left()) / g.cell;
    const int row = (position.y() - g.area.top()) / g.cell;
    if (column >= g.columns)
        return -1;
    const std::int64_t block = static_cast<std::int64_t>(row) * g.columns + column;
    return block < g.shown ? block : -1;
}

void KvBlockMapView::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.fillRect(rect(), ViewPalette::background());
    const Grid g = grid();
    std::int64_t used = 0;
    for (const int owner : m_map.owners)
        used += owner >= 0;
    QFont bold = font();
    bold.setBold(true);
    painter.setFont(bold);
    painter.setPen(ViewPalette::axisText());
    const QRect titleRect(kMargin, kMargin, width() - 2 * kMargin, kTitleHeight);
    QString title = tr("Paged KV pool");
    if (m_map.blockCount > 0) {
        title = tr("Paged KV pool at step %1 · %2 of %3 blocks in use (%4 each)")
                    .arg(m_map.step)
                    .arg(used)
                    .arg(m_map.blockCount)
                    .arg(shortBytes(static_cast<double>(m_map.blockBytes)));
        if (g.shown < static_cast<std::int64_t>(m_map.owners.size()))
            title += tr(" · first %1 blocks shown").arg(g.shown);
        else if (g.shown > 0)
            title += tr(" · blocks 0–%1 shown (the rest never used yet)").arg(g.shown - 1);
    }
    painter.drawText(titleRect, Qt::AlignLeft | Qt::AlignVCenter, title);
    painter.setFont(font());

    const int gap = g.cell >= 6 ? 1 : 0;
    const QColor freeColor(0xE6E8EB);
    for (std::int64_t b = 0; b < g.shown; ++b) {
        const int owner = m_map.owners[static_cast<std::size_t>(b)];
        const int row = static_cast<int>(b / g.columns), column = static_cast<int>(b % g.columns);
        const QRect cell(g.area.left() + column * g.cell, g.area.top() + row * g.cell, g.cell - gap, g.cell - gap);
        painter.fillRect(cell, owner >= 0 ? ViewPalette::indexColor(owner) : freeColor);
    }

    // Legend: the first sequences' colours, then "free".
    int x = kMargin;
    const int y = height() - kMargin - kLegendHeight + 4;
    auto swatch = [&](const QColor& color, const QString& label) {
        const int textWidth = painter.fontMetrics().horizontalAdvance(label);
        if (x + 16 + textWidth > width() - kMargin)
            return false;
        painter.fillRect(QRect(x, y + 3, 10, 10), color);
        painter.setPen(ViewPalette::axisText());
        painter.drawText(QRect(x + 14, y, textWidth + 2, 16), Qt::AlignLeft | Qt::AlignVCenter, label);
        x += 14 + textWidth + 12;
        return true;
    };
    const int listed = std::min(m_sequences, kMaxLegendSequences);
    for (int s = 0; s < listed; ++s)
        if (!swatch(ViewPalette::indexColor(s), tr("seq %1").arg(s)))
            break;
    if (m_sequences > listed)
        swatch(Qt::transparent, tr("… %1 more").arg(m_sequences - listed));
    swatch(freeColor, tr("free"));
}

void KvBlockMapView::mouseMoveEvent(QMouseEvent* event)
{
    const auto block = blockAt(event->position().toPoint());
    if (block < 0) {
        QToolTip::hideText();
        return;
    }
    const int owner = m_map.owners[static_cast<std::size_t>(block)];
    QToolTip::showText(event->globalPosition().toPoint(),
        owner >= 0 ? tr("block %1 · sequence %2").arg(block).arg(owner) : tr("block %1 · free").arg(block), this);
}
