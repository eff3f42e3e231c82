// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "coloringview.h"

#include "palette.h"
#include "plandocument.h"

#include <QPainter>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <queue>

std::vector<int> leftEdgeColoring(const core::PlanProblem& problem)
{
    const auto& buffers = problem.buffers;
    std::vector<int> colors(buffers.size(), -1);
    std::vector<int> order;
    for (std::size_t i = 0; i < buffers.size(); ++i)
        if (buffers[i].size > 0 && buffers[i].lifetime.start < buffers[i].lifetime.end)
            order.push_back(static_cast<int>(i));
    std::stable_sort(order.begin(), order.end(),
        [&](int a, int b) { return buffers[a].lifetime.start < buffers[b].lifetime.start; });
    using Busy = std::pair<core::Step, int>; // (end, color)
    std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
    std::priority_queue<int, std::vector<int>, std::greater<>> free;
    int next = 0;
    for (int i : order) {
        const auto& life = buffers[i].lifetime;
        while (!busy.empty() && busy.top().first <= life.start) {
            free.push(busy.top().second);
            busy.pop();
        }
        int color;
        if (free.empty()) {
            color = next++;
        } else {
            color = free.top();
            free.pop();
        }
        colors[i] = color;
        busy.push({ life.end, color });
    }
    return colors;
}

ColoringView::ColoringView(PlanDocument* document, QWidget* parent)
    : TimelineView(document, parent)
{
    rebuild();
}

void ColoringView::rebuild()
{
    m_slots.clear();
    m_colors.clear();
    m_planColors = false;
    const core::Workload* workload = document()->workload();
    const core::Plan* plan = document()->plan();
    if (!workload || !plan)
        return;
    const auto& buffers = workload->problem.buffers;
    m_planColors = plan->colors.size() == buffers.size()
        && std::any_of(plan->colors.begin(), plan->colors.end(), [](int c) { return c >= 0; });
    m_colors = m_planColors ? plan->colors : leftEdgeColoring(workload->problem);
    int count = 0;
    for (int c : m_colors)
        count = std::max(count, c + 1);
    m_slots.resize(count);
    std::vector<int> order(buffers.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
        [&](int a, int b) { return buffers[a].lifetime.start < buffers[b].lifetime.start; });
    for (int i : order) {
        if (m_colors[i] < 0)
            continue;
        Slot& slot = m_slots[m_colors[i]];
        slot.buffers.push_back(i);
        slot.ends.push_back(buffers[i].lifetime.end);
        slot.size = std::max(slot.size, buffers[i].size);
    }
    // Guard the binary search: ends must be non-decreasing within a slot (true for a valid coloring).
    for (Slot& slot : m_slots)
        for (std::size_t k = 1; k < slot.ends.size(); ++k)
            slot.ends[k] = std::max(slot.ends[k], slot.ends[k - 1]);
}

int ColoringView::colorOf(int buffer) const
{
    return buffer >= 0 && buffer < static_cast<int>(m_colors.size()) ? m_colors[buffer] : -1;
}

int ColoringView::rowHeight(const Frame& frame) const
{
    const int line = QFontMetrics(font()).height();
    const int rows = std::max(1, slotCount());
    return std::clamp(frame.plot.height() / rows, line + 6, 5 * line);
}

int ColoringView::contentHeight(const Frame& frame) const { return slotCount() * rowHeight(frame); }

QRectF ColoringView::bufferRect(const Frame& frame, int buffer) const
{
    const int color = colorOf(buffer);
    const core::Workload* workload = document()->workload();
    if (color < 0 || !workload)
        return {};
    const auto& b = workload->problem.buffers[buffer];
    const int h = rowHeight(frame);
    const double rowTop = frame.plot.top() + color * h - scrollOffset() + 3;
    const double full = h - 6;
    const double slotSize = std::max<double>(static_cast<double>(m_slots[color].size), 1);
    const double height = std::max(3.0, full * static_cast<double>(b.size) / slotSize);
    const double x0 = frame.time.stepToX(b.lifetime.start), x1 = frame.time.stepToX(b.lifetime.end);
    return QRectF(x0, rowTop + full - height, x1 - x0, height);
}

QString ColoringView::caption() const
{
    if (!document()->plan())
        return QStringLiteral("Coloring");
    const int depth = document()->metrics().maxOverlapDepth;
    // A slot is a row of buffers that never live at the same time and so can share memory; the
    // fewest slots possible is the most buffers live at once.
    QString text = QStringLiteral("Coloring · %1 shared slots").arg(slotCount());
    text += slotCount() == depth ? QStringLiteral(" (the fewest possible: %1 buffers live at once)").arg(depth)
                                 : QStringLiteral(" (at least %1: buffers live at once)").arg(depth);
    // Offset planners (best-of-greedy, first-fit, exact) place each buffer at a byte offset and share
    // no slots; the rows are then the view's own grouping, not the plan's.
    if (!m_planColors)
        text += QStringLiteral(" · %1 places buffers by offset, not in slots: rows grouped for this view")
                    .arg(QString::fromStdString(document()->plan()->planner));
    return text;
}

std::pair<int, int> ColoringView::rowsInView(const Frame& frame) const
{
    const int h = rowHeight(frame), scroll = scrollOffset();
    return { std::max(0, scroll / h), std::min(slotCount() - 1, (scroll + frame.plot.height()) / h) };
}

int ColoringView::paintLegend(QPainter& painter, const QRect& area, const Frame& frame) const
{
    // A buffer under a pixel wide joins the grey run paintPlot merges; only when steps are that narrow.
    if (frame.time.pixelsPerStep() >= 1.0)
        return 0;
    const auto& buffers = document()->workload()->problem.buffers;
    const auto [firstRow, lastRow] = rowsInView(frame);
    for (int row = firstRow; row <= lastRow; ++row)
        for (int i : m_slots[row].buffers) {
            const auto& life = buffers[i].lifetime;
            if (life.end > frame.time.first && life.start <= frame.time.last && bufferRect(frame, i).width() < 1.0)
                return paintDenseLegend(painter, area);
        }
    return 0;
}

void ColoringView::paintPlot(QPainter& painter, const Frame& frame) const
{
    const core::Workload* workload = document()->workload();
    const auto& buffers = workload->problem.buffers;
    const int h = rowHeight(frame);
    const int scroll = scrollOffset();
    const auto [firstRow, lastRow] = rowsInView(frame);
    const bool dim = hasHighlight();
    const QFontMetrics fm(font());
    const double left = frame.plot.left() - 2, right = frame.plot.right() + 2;
    const double first = frame.time.first, last = frame.time.last;

    for (int row = firstRow; row <= lastRow; ++row) {
        const Slot& slot = m_slots[row];
        const int y = frame.plot.top() + row * h - scroll;
        if (row % 2 == 1)
            painter.fillRect(QRect(frame.plot.left(), y, frame.plot.width(), h),
                QColor(30, 50, 80, 12)); // translucent: the cursor band shows through
        // Room outline: the slot's full height.
        painter.setPen(QPen(QColor(0xDADDE2), 1));
        painter.drawLine(QPointF(frame.plot.left(), y + 2.5), QPointF(frame.plot.right() + 1, y + 2.5));
        // Buffers that can be visible: ends are sorted, so skip to the first that ends after `first`.
        auto it
            = std::upper_bound(slot.ends.begin(), slot.ends.end(), first, [](double v, core::Step e) { return v < e; });
        double denseStart = -1, denseEnd = -1; // run of merged sub-pixel buffers, x pixels
        auto flushDense = [&] {
            if (denseEnd > denseStart)
                painter.fillRect(
                    QRectF(denseStart, y + 3, std::max(1.0, denseEnd - denseStart), h - 6), ViewPalette::denseFill());
            denseStart = denseEnd = -1;
        };
        for (auto k = static_cast<std::size_t>(it - slot.ends.begin()); k < slot.buffers.size(); ++k) {
            const int i = slot.buffers[k];
            if (buffers[i].lifetime.start > last)
                break;
            QRectF r = bufferRect(frame, i);
            if (r.width() < 1.0) {
                if (denseEnd >= 0 && r.left() > denseEnd + 1)
                    flushDense();
                if (denseStart < 0)
                    denseStart = r.left();
                denseEnd = std::max(denseEnd, r.right());
                continue;
            }
            flushDense();
            r.setLeft(std::max(r.left(), left));
            r.setRight(std::min(r.right(), right));
            const QColor base = ViewPalette::indexColor(row);
            const QColor color = dim && !isHighlighted(i) ? ViewPalette::faded(base, kDim) : base;
            painter.fillRect(r, color);
            if (r.width() >= 4) {
                painter.setPen(QPen(color.darker(150), 1));
                painter.setBrush(Qt::NoBrush);
                painter.drawRect(r.adjusted(0.5, 0.5, -0.5, -0.5));
            }
            if (r.width() > 40 && r.height() >= fm.height()) {
                const QString name
                    = fitName(fm, QString::fromStdString(buffers[i].name), static_cast<int>(r.width()) - 8);
                if (!name.isEmpty()) {
                    painter.setPen(ViewPalette::textColorOn(color));
                    painter.drawText(r.adjusted(4, 0, -4, 0), Qt::AlignLeft | Qt::AlignVCenter, name);
                }
            }
        }
        flushDense();
    }
    for (int buffer : { document()->hoveredBuffer(), document()->selectedBuffer() }) {
        const int color = colorOf(buffer);
        if (color >= firstRow && color <= lastRow)
            paintOutline(painter, bufferRect(frame, buffer), buffer == document()->selectedBuffer());
    }
}

void ColoringView::paintLabels(QPainter& painter, const Frame& frame) const
{
    const int h = rowHeight(frame);
    const int scroll = scrollOffset();
    const int firstRow = std::max(0, scroll / h);
    const int lastRow = std::min(slotCount() - 1, (scroll + frame.plot.height()) / h);
    const QFontMetrics fm(font());
    const int selectedColor = colorOf(document()->selectedBuffer());
    painter.setClipRect(frame.labels.adjusted(-8, 0, 0, 0)); // rows scrolled half out stay inside
    for (int row = firstRow; row <= lastRow; ++row) {
        const QRect r(frame.labels.left(), frame.plot.top() + row * h - scroll, frame.labels.width() - 8, h);
        if (row == selectedColor)
            painter.fillRect(r.adjusted(0, 0, 8, 0), QColor(0xE4ECF7));
        painter.fillRect(QRect(r.left() + 2, r.center().y() - 4, 8, 8), ViewPalette::indexColor(row));
        painter.setPen(ViewPalette::axisText());
        const QString text
            = QStringLiteral("slot %1 · %2").arg(row).arg(shortBytes(static_cast<double>(m_slots[row].size)));
        painter.drawText(r.adjusted(16, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft,
            fm.elidedText(text, Qt::ElideRight, r.width() - 16));
    }
}

int ColoringView::bufferAt(const Frame& frame, QPointF pos) const
{
    if (!frame.plot.contains(pos.toPoint()) || m_slots.empty())
        return -1;
    const int row = static_cast<int>((pos.y() - frame.plot.top() + scrollOffset()) / rowHeight(frame));
    if (row < 0 || row >= slotCount())
        return -1;
    const Slot& slot = m_slots[row];
    const double step = frame.time.xToStep(pos.x());
    const double slack = 2 / frame.time.pixelsPerStep(); // thin bars stay clickable
    auto it = std::upper_bound(
        slot.ends.begin(), slot.ends.end(), step - slack, [](double v, core::Step e) { return v < e; });
    if (it == slot.ends.end())
        return -1;
    const int buffer = slot.buffers[static_cast<std::size_t>(it - slot.ends.begin())];
    const auto& life = document()->workload()->problem.buffers[buffer].lifetime;
    return life.start <= step + slack ? buffer : -1;
}

void ColoringView::revealBuffer(int buffer)
{
    const int row = colorOf(buffer);
    if (row < 0)
        return;
    const Frame f = frame();
    const int h = rowHeight(f);
    if (row * h < scrollOffset())
        setScrollOffset(row * h);
    else if ((row + 1) * h > scrollOffset() + f.plot.height())
        setScrollOffset((row + 1) * h - f.plot.height());
}

int ColoringView::rowCount() const { return slotCount(); }
