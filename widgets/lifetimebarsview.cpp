// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "lifetimebarsview.h"

#include "buffercolors.h"
#include "palette.h"
#include "plandocument.h"
#include "strategystyle.h"

#include <QPainter>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace {

// A name elided at its start, as in the tensor table and the summary: exported names are paths
// that share long prefixes ("/features/..."), so their end is what tells rows apart, and an op
// workspace's "<op> workspace" keeps its suffix and the end of the op's name.
QString elidedLabel(const QFontMetrics& metrics, const QString& name, int width)
{
    return TimelineView::elideName(metrics, name, width);
}

} // namespace

LifetimeBarsView::LifetimeBarsView(PlanDocument* document, QWidget* parent)
    : TimelineView(document, parent)
{
    rebuild();
}

void LifetimeBarsView::setSortOrder(SortOrder order)
{
    if (order == m_sortOrder)
        return;
    m_sortOrder = order;
    sortRows();
    updateScrollBar();
    update();
}

void LifetimeBarsView::setColorMode(ColorMode mode)
{
    if (mode == m_colorMode)
        return;
    m_colorMode = mode;
    computeColors();
    update();
}

void LifetimeBarsView::rebuild()
{
    const core::Workload* workload = document()->workload();
    m_names.clear();
    if (workload) {
        m_names.reserve(workload->problem.buffers.size());
        for (const auto& b : workload->problem.buffers)
            m_names.push_back(QString::fromStdString(b.name));
    }
    sortRows();
    computeColors();
}

void LifetimeBarsView::sortRows()
{
    m_rows.clear();
    m_rowOf.clear();
    const core::Workload* workload = document()->workload();
    if (!workload)
        return;
    const auto& buffers = workload->problem.buffers;
    m_rows.resize(buffers.size());
    std::iota(m_rows.begin(), m_rows.end(), 0);
    const core::Plan* plan = document()->plan();
    auto byStart = [&](int a, int b) {
        const auto &la = buffers[a].lifetime, &lb = buffers[b].lifetime;
        return la.start != lb.start ? la.start < lb.start : la.end < lb.end;
    };
    // Rows grouped by a key computed once per buffer, by start within a group.
    const auto groupBy = [&](auto keyOf) {
        std::vector<decltype(keyOf(0))> key(buffers.size());
        for (std::size_t b = 0; b < buffers.size(); ++b)
            key[b] = keyOf(static_cast<int>(b));
        std::stable_sort(m_rows.begin(), m_rows.end(), [&](int a, int b) { return key[a] != key[b] ? key[a] < key[b] : byStart(a, b); });
    };
    switch (m_sortOrder) {
    case SortOrder::Start:
        std::stable_sort(m_rows.begin(), m_rows.end(), byStart);
        break;
    case SortOrder::Size:
        std::stable_sort(m_rows.begin(), m_rows.end(), [&](int a, int b) {
            return buffers[a].size != buffers[b].size ? buffers[a].size > buffers[b].size : byStart(a, b);
        });
        break;
    case SortOrder::Offset:
        if (plan)
            std::stable_sort(m_rows.begin(), m_rows.end(), [&](int a, int b) {
                return plan->offsets[a] != plan->offsets[b] ? plan->offsets[a] < plan->offsets[b] : byStart(a, b);
            });
        else
            std::stable_sort(m_rows.begin(), m_rows.end(), byStart);
        break;
    case SortOrder::Category:
        groupBy([&](int b) { return bufferCategorySlot(*workload, b); });
        break;
    case SortOrder::Module:
        groupBy([&](int b) { return bufferModule(*workload, b); });
        break;
    }
    m_rowOf.assign(buffers.size(), -1);
    for (std::size_t row = 0; row < m_rows.size(); ++row)
        m_rowOf[m_rows[row]] = static_cast<int>(row);
}

void LifetimeBarsView::computeColors()
{
    m_colors.clear();
    m_hasSlots = false;
    const core::Workload* workload = document()->workload();
    if (!workload)
        return;
    const auto& buffers = workload->problem.buffers;
    const core::Plan* plan = document()->plan();
    m_hasSlots = plan && plan->colors.size() == buffers.size();
    m_colors.resize(buffers.size());
    const StrategyFacts* facts = document()->strategyFacts();
    for (std::size_t i = 0; i < buffers.size(); ++i) {
        if (m_colorMode == ColorMode::Strategy) {
            m_colors[i] = StrategyStyle::markColor(StrategyStyle::primaryMark(facts ? facts->marks[i] : MarkNone));
        } else if (m_colorMode == ColorMode::Category) {
            m_colors[i] = bufferColor(*workload, static_cast<int>(i), BufferColoring::Category);
        } else if (m_colorMode == ColorMode::Module) {
            m_colors[i] = bufferColor(*workload, static_cast<int>(i), BufferColoring::Module);
        } else if (m_colorMode == ColorMode::Kind || !plan) {
            m_colors[i] = ViewPalette::kindColor(buffers[i].kind);
        } else if (m_hasSlots) {
            m_colors[i] = ViewPalette::indexColor(plan->colors[i]);
        } else {
            const double arena = std::max<core::Bytes>(plan->arenaSize, 1);
            const int band = std::min(kOffsetBands - 1, static_cast<int>(plan->offsets[i] * kOffsetBands / arena));
            m_colors[i] = ViewPalette::indexColor(band);
        }
    }
}

int LifetimeBarsView::rowOf(int buffer) const
{
    return buffer >= 0 && buffer < static_cast<int>(m_rowOf.size()) ? m_rowOf[buffer] : -1;
}

int LifetimeBarsView::rowHeight(const Frame& frame) const
{
    const int line = QFontMetrics(font()).height();
    const int rows = std::max<int>(1, static_cast<int>(m_rows.size()));
    return std::clamp(frame.plot.height() / rows, line + 4, 2 * line + 4);
}

int LifetimeBarsView::contentHeight(const Frame& frame) const
{
    return static_cast<int>(m_rows.size()) * rowHeight(frame);
}

QRectF LifetimeBarsView::barRect(const Frame& frame, int buffer) const
{
    const int row = rowOf(buffer);
    const core::Workload* workload = document()->workload();
    if (row < 0 || !workload)
        return {};
    const auto& life = workload->problem.buffers[buffer].lifetime;
    const int h = rowHeight(frame);
    const double y = frame.plot.top() + row * h - scrollOffset();
    double x0 = frame.time.stepToX(life.start), x1 = frame.time.stepToX(life.end);
    if (x1 - x0 < 2) // an empty or sub-pixel lifetime stays visible
        x1 = x0 + 2;
    const int line = QFontMetrics(font()).height();
    const double barHeight = std::min<double>(h - 4, line + 6);
    return QRectF(x0, y + (h - barHeight) / 2, x1 - x0, barHeight);
}

QString LifetimeBarsView::caption() const
{
    static constexpr const char* kOrderNames[] = { "start", "size", "offset", "category", "module" };
    const char* order = kOrderNames[static_cast<int>(m_sortOrder)];
    QString colorText;
    if (m_colorMode == ColorMode::Strategy)
        colorText = document()->strategyFacts() ? QStringLiteral("colored by strategy")
                                                : QStringLiteral("colored by strategy (none applied)");
    else if (m_colorMode == ColorMode::Kind)
        colorText = QStringLiteral("colored by kind");
    else if (m_colorMode == ColorMode::Category)
        colorText = QStringLiteral("colored by category");
    else if (m_colorMode == ColorMode::Module)
        colorText = QStringLiteral("colored by module");
    else if (m_hasSlots)
        colorText = QStringLiteral("colored by slot");
    else
        colorText = QStringLiteral("colored by offset band (plan has no slots)");
    return QStringLiteral("Lifetimes · %1 buffers · sorted by %2 · %3")
        .arg(m_rows.size())
        .arg(QLatin1String(order), colorText);
}

int LifetimeBarsView::paintLegend(QPainter& painter, const QRect& fullArea, const Frame&) const
{
    // Strategy marks first (rightmost), then the kinds in what room is left.
    int used = 0;
    if (const StrategyFacts* facts = document()->strategyFacts())
        used = StrategyStyle::paintLegend(painter, fullArea, facts->presentMarks(), !facts->trips.empty());
    if (document()->anyBounded())
        if (const int bounded = paintBoundedLegend(painter, used > 0 ? fullArea.adjusted(0, 0, -used - 12, 0) : fullArea); bounded > 0)
            used += (used > 0 ? 12 : 0) + bounded;
    if (m_colorMode != ColorMode::Kind && m_colorMode != ColorMode::Category && m_colorMode != ColorMode::Module)
        return used;
    const QRect area = used > 0 ? fullArea.adjusted(0, 0, -used - 12, 0) : fullArea;
    const BufferColoring coloring = m_colorMode == ColorMode::Category ? BufferColoring::Category
        : m_colorMode == ColorMode::Module                              ? BufferColoring::Module
                                                                        : BufferColoring::Kind;
    const int kinds = paintSwatches(painter, area, bufferLegend(*document()->workload(), coloring));
    return kinds > 0 ? fullArea.right() - area.right() + kinds : used;
}

void LifetimeBarsView::paintPlot(QPainter& painter, const Frame& frame) const
{
    const core::Workload* workload = document()->workload();
    const auto& buffers = workload->problem.buffers;
    const int h = rowHeight(frame);
    const int scroll = scrollOffset();
    const int firstRow = std::max(0, scroll / h);
    const int lastRow = std::min<int>(static_cast<int>(m_rows.size()) - 1, (scroll + frame.plot.height()) / h);
    const bool dim = hasHighlight();
    const QFontMetrics fm(font());
    const double left = frame.plot.left() - 2, right = frame.plot.right() + 2;
    const StrategyFacts* facts = document()->strategyFacts();

    for (int row = firstRow; row <= lastRow; ++row) {
        const int y = frame.plot.top() + row * h - scroll;
        if (row % 2 == 1)
            painter.fillRect(QRect(frame.plot.left(), y, frame.plot.width(), h),
                QColor(30, 50, 80, 12)); // translucent: the cursor band shows through
        const int buffer = m_rows[row];
        if (document()->cursorStep() >= 0) {
            const auto& life = buffers[buffer].lifetime;
            if (life.start <= document()->cursorStep() && document()->cursorStep() < life.end)
                painter.fillRect(QRect(frame.plot.left(), y, frame.plot.width(), h), QColor(255, 230, 180, 90));
        }
        QRectF bar = barRect(frame, buffer);
        if (bar.right() < left || bar.left() > right)
            continue;
        bar.setLeft(std::max(bar.left(), left));
        bar.setRight(std::min(bar.right(), right));
        const QColor color
            = dim && !isHighlighted(buffer) ? ViewPalette::faded(m_colors[buffer], kDim) : m_colors[buffer];
        painter.fillRect(bar, color);
        if (document()->boundedBuffers()[buffer])
            paintBounded(painter, bar);
        if (facts && facts->marks[buffer] != MarkNone)
            StrategyStyle::paintMarked(painter, bar, facts->marks[buffer]);
        if (bar.width() > 60) {
            const QString text = shortBytes(static_cast<double>(buffers[buffer].size));
            if (fm.horizontalAdvance(text) + 10 < bar.width()) {
                painter.setPen(ViewPalette::textColorOn(color));
                painter.drawText(bar.adjusted(5, 0, -5, 0), Qt::AlignVCenter | Qt::AlignLeft, text);
            }
        }
    }
    // Host trips: on the swap-in row, from where the value left the device to where it comes back.
    if (facts)
        for (const HostTrip& trip : facts->trips) {
            const int row = rowOf(trip.inBuffer);
            if (row < firstRow || row > lastRow)
                continue;
            const QRectF in = barRect(frame, trip.inBuffer);
            const double x0 = frame.time.stepToX(buffers[trip.outBuffer].lifetime.end);
            StrategyStyle::paintHostTrip(painter, QPointF(x0, in.center().y()), QPointF(in.left(), in.center().y()));
        }
    for (int buffer : { document()->hoveredBuffer(), document()->selectedBuffer() }) {
        const int row = rowOf(buffer);
        if (row >= firstRow && row <= lastRow)
            paintOutline(painter, barRect(frame, buffer), buffer == document()->selectedBuffer());
    }
}

void LifetimeBarsView::paintLabels(QPainter& painter, const Frame& frame) const
{
    const int h = rowHeight(frame);
    const int scroll = scrollOffset();
    const int firstRow = std::max(0, scroll / h);
    const int lastRow = std::min<int>(static_cast<int>(m_rows.size()) - 1, (scroll + frame.plot.height()) / h);
    const QFontMetrics fm(font());
    QFont bold = font();
    bold.setBold(true);
    painter.setClipRect(frame.labels.adjusted(-8, 0, 0, 0)); // rows scrolled half out stay inside
    for (int row = firstRow; row <= lastRow; ++row) {
        const int buffer = m_rows[row];
        const QRect r(frame.labels.left(), frame.plot.top() + row * h - scroll, frame.labels.width() - 8, h);
        const bool selected = buffer == document()->selectedBuffer();
        if (isHighlighted(buffer))
            painter.fillRect(r.adjusted(0, 0, 8, 0), QColor(0xE4ECF7));
        // Small kind/color swatch, then the name elided in the middle (names share long prefixes).
        painter.fillRect(QRect(r.left() + 2, r.center().y() - 3, 6, 6), m_colors[buffer]);
        painter.setFont(selected ? bold : font());
        painter.setPen(ViewPalette::axisText());
        const QRect textRect = r.adjusted(14, 0, 0, 0);
        painter.drawText(textRect, Qt::AlignVCenter | Qt::AlignLeft, elidedLabel(QFontMetrics(painter.font()), m_names[buffer], textRect.width()));
    }
    painter.setFont(font());
}

int LifetimeBarsView::bufferAt(const Frame& frame, QPointF pos) const
{
    if (m_rows.empty() || pos.y() < frame.plot.top() || pos.y() > frame.plot.bottom())
        return -1;
    const int row = static_cast<int>((pos.y() - frame.plot.top() + scrollOffset()) / rowHeight(frame));
    if (row < 0 || row >= static_cast<int>(m_rows.size()))
        return -1;
    const int buffer = m_rows[row];
    if (frame.labels.contains(pos.toPoint()))
        return buffer; // the row label stands for its buffer
    if (!frame.plot.contains(pos.toPoint()))
        return -1;
    const QRectF bar = barRect(frame, buffer);
    // A little slack so thin bars can still be hit.
    return pos.x() >= bar.left() - 2 && pos.x() <= bar.right() + 2 ? buffer : -1;
}

void LifetimeBarsView::revealBuffer(int buffer)
{
    const int row = rowOf(buffer);
    if (row < 0)
        return;
    const Frame f = frame();
    const int h = rowHeight(f);
    const int top = row * h;
    if (top < scrollOffset())
        setScrollOffset(std::max(0, top - h));
    else if (top + h > scrollOffset() + f.plot.height())
        setScrollOffset(((top + 2 * h - f.plot.height()) / h + 1) * h); // whole rows at the top
}

int LifetimeBarsView::rowCount() const { return static_cast<int>(m_rows.size()); }
