// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "arenalayoutview.h"

#include "palette.h"
#include "plandocument.h"
#include "strategystyle.h"

#include <QHash>
#include <QImage>
#include <QPainter>

#include <algorithm>
#include <cmath>

ArenaLayoutView::ArenaLayoutView(PlanDocument* document, QWidget* parent)
    : TimelineView(document, parent)
{
    rebuild();
    // An inner buffer stays selected while its block's buffer is the document's selection.
    connect(document, &PlanDocument::selectionChanged, this, [this](int buffer) {
        if (m_selectedInner.valid() && buffer != m_nested[static_cast<std::size_t>(m_selectedInner.graph)].outerBuffer) {
            m_selectedInner = {};
            update();
        }
    });
}

void ArenaLayoutView::setColoring(BufferColoring coloring)
{
    if (coloring == m_coloring)
        return;
    m_coloring = coloring;
    rebuild();
    update();
}

void ArenaLayoutView::rebuild()
{
    const core::Workload* workload = document()->workload();
    m_colors.clear();
    m_index = {};
    m_grid = {};
    m_longIndex = {};
    rebuildBodies();
    if (!workload)
        return;
    m_index.build(workload->problem);
    for (int b = 0; b < static_cast<int>(workload->problem.buffers.size()); ++b)
        m_colors.push_back(bufferColor(*workload, b, m_coloring));
    const core::Bytes arena = document()->plan() ? document()->plan()->arenaSize : 0;
    // Head room above the larger line so its label fits.
    m_top = std::max<double>({ static_cast<double>(arena), static_cast<double>(document()->metrics().lowerBound), 1.0 })
        * 1.08;
    if (const core::Plan* plan = document()->plan()) {
        m_grid.build(workload->problem, plan->offsets, m_top);
        if (!m_grid.empty())
            m_longIndex.build(workload->problem, [this](int b) { return !m_grid.isShort(b); });
    }
}

OffsetAxis ArenaLayoutView::offsetAxis(const Frame& frame) const
{
    return OffsetAxis { 0, m_top, frame.plot.top(), frame.plot.bottom() + 1 };
}

QRectF ArenaLayoutView::bufferRect(const Frame& frame, int buffer) const
{
    const core::Plan* plan = document()->plan();
    const core::Workload* workload = document()->workload();
    if (!plan || !workload || buffer < 0 || buffer >= static_cast<int>(plan->offsets.size()))
        return {};
    const auto& b = workload->problem.buffers[buffer];
    const OffsetAxis y = offsetAxis(frame);
    const double x0 = frame.time.stepToX(b.lifetime.start), x1 = frame.time.stepToX(b.lifetime.end);
    const double yTop = y.valueToY(static_cast<double>(plan->offsets[buffer] + b.size));
    const double yBottom = y.valueToY(static_cast<double>(plan->offsets[buffer]));
    return QRectF(QPointF(x0, yTop), QPointF(x1, yBottom));
}

QString ArenaLayoutView::caption() const
{
    if (!document()->plan())
        return QStringLiteral("Arena layout");
    const auto& m = document()->metrics();
    return QStringLiteral("Arena layout · %1 · arena %2 · lower bound %3 · fragmentation %4 %")
        .arg(QString::fromStdString(document()->plan()->planner), shortBytes(static_cast<double>(m.arena)),
            shortBytes(static_cast<double>(m.lowerBound)))
        .arg(m.fragmentation * 100, 0, 'f', 1);
}

int ArenaLayoutView::paintLegend(QPainter& painter, const QRect& fullArea, const Frame& frame) const
{
    // Strategy marks first (rightmost), then the free-space swatch when there is room.
    int used = 0;
    if (const StrategyFacts* facts = document()->strategyFacts())
        used = StrategyStyle::paintLegend(painter, fullArea, facts->presentMarks(), !facts->trips.empty());
    if (document()->anyBounded())
        if (const int bounded = paintBoundedLegend(painter, used > 0 ? fullArea.adjusted(0, 0, -used - 12, 0) : fullArea); bounded > 0)
            used += (used > 0 ? 12 : 0) + bounded;
    // The kinds the fills stand for, then the hatch of free space, each when there is room.
    if (const int kinds = paintSwatches(painter, used > 0 ? fullArea.adjusted(0, 0, -used - 12, 0) : fullArea,
            bufferLegend(*document()->workload(), m_coloring));
        kinds > 0)
        used += (used > 0 ? 12 : 0) + kinds;
    if (anyTooSmall(frame))
        if (const int dense = paintDenseLegend(painter, used > 0 ? fullArea.adjusted(0, 0, -used - 12, 0) : fullArea); dense > 0)
            used += (used > 0 ? 12 : 0) + dense;
    const QRect area = used > 0 ? fullArea.adjusted(0, 0, -used - 12, 0) : fullArea;
    const QFontMetrics fm(font());
    const QString text = QStringLiteral("free space in the arena");
    const int w = fm.horizontalAdvance(text);
    if (area.width() < w + 20)
        return used;
    const QRect swatch(area.right() - w - 18, area.center().y() - 6, 12, 12);
    painter.fillRect(swatch, QColor(0xE9ECF0));
    painter.fillRect(swatch, QBrush(QColor(0xAEB4BD), Qt::BDiagPattern));
    painter.setPen(QColor(0xAEB4BD));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(QRectF(swatch).adjusted(0.5, 0.5, -0.5, -0.5));
    painter.setPen(ViewPalette::axisText());
    painter.drawText(QRect(area.right() - w, area.top(), w, area.height()), Qt::AlignVCenter, text);
    return fullArea.right() - area.right() + w + 18;
}

std::optional<QRectF> ArenaLayoutView::shownRect(const Frame& frame, int buffer) const
{
    if (document()->workload()->problem.buffers[buffer].size <= 0)
        return std::nullopt;
    const QRectF plot(frame.plot);
    QRectF r = bufferRect(frame, buffer);
    if (r.right() < plot.left() || r.left() > plot.right() + 1 || r.bottom() < plot.top())
        return std::nullopt;
    r.setLeft(std::max(r.left(), plot.left() - 1));
    r.setRight(std::min(r.right(), plot.right() + 2));
    return r;
}

bool ArenaLayoutView::anyTooSmall(const Frame& frame) const
{
    if (m_grid.covers(frame.time))
        return true; // the grid holds buffers, each under a pixel wide now
    return m_index.any(frame.time.first, frame.time.last, [&](int i) {
        const auto r = shownRect(frame, i);
        return r && tooSmall(*r);
    });
}

void ArenaLayoutView::paintPlot(QPainter& painter, const Frame& frame) const
{
    const core::Workload* workload = document()->workload();
    const core::Plan* plan = document()->plan();
    const auto& buffers = workload->problem.buffers;
    const OffsetAxis y = offsetAxis(frame);
    const double arenaY = y.valueToY(static_cast<double>(plan->arenaSize));
    const QRectF plotF(frame.plot);

    // Free space of the arena: hatched, so gaps between rectangles read as waste.
    const QRectF arenaRect(QPointF(plotF.left(), arenaY), plotF.bottomRight() + QPointF(1, 1));
    painter.fillRect(arenaRect, QColor(0xE9ECF0));
    painter.fillRect(arenaRect, QBrush(QColor(0xD3D7DD), Qt::BDiagPattern));
    painter.setPen(QPen(ViewPalette::gridLine(), 1));
    for (double t : byteTicks(0, m_top, std::max(3, frame.plot.height() / 40))) {
        const double yy = std::floor(y.valueToY(t)) + 0.5;
        painter.drawLine(QPointF(plotF.left(), yy), QPointF(plotF.right() + 1, yy));
    }

    const bool dim = hasHighlight();
    // Batch rectangles by fill color; merge sub-pixel ones into a coverage image.
    QHash<QRgb, QVector<QRectF>> bordered, plain;
    QImage coverage;
    int covered = 0;
    const double first = frame.time.first, last = frame.time.last;
    const IntervalIndex& drawn = drawnIndex(frame);
    if (&drawn != &m_index) {
        coverage = QImage(frame.plot.size(), QImage::Format_ARGB32_Premultiplied);
        coverage.fill(Qt::transparent);
        m_grid.paint(coverage, frame.plot.left(), frame.plot.top(), frame.time, y, ViewPalette::denseFill().rgba());
        covered = 1;
    }
    drawn.forEach(first, last, [&](int i) {
        const auto shown = shownRect(frame, i);
        if (!shown)
            return;
        const QRectF r = *shown;
        if (tooSmall(r)) {
            if (coverage.isNull()) {
                coverage = QImage(frame.plot.size(), QImage::Format_ARGB32_Premultiplied);
                coverage.fill(Qt::transparent);
            }
            const int x0
                = std::clamp(static_cast<int>(std::floor(r.left())) - frame.plot.left(), 0, coverage.width() - 1);
            const int x1
                = std::clamp(static_cast<int>(std::ceil(r.right())) - frame.plot.left(), x0 + 1, coverage.width());
            const int y0
                = std::clamp(static_cast<int>(std::floor(r.top())) - frame.plot.top(), 0, coverage.height() - 1);
            const int y1
                = std::clamp(static_cast<int>(std::ceil(r.bottom())) - frame.plot.top(), y0 + 1, coverage.height());
            const QRgb value = ViewPalette::denseFill().rgba();
            for (int yy = y0; yy < y1; ++yy) {
                auto* line = reinterpret_cast<QRgb*>(coverage.scanLine(yy));
                std::fill(line + x0, line + x1, value);
            }
            ++covered;
            return;
        }
        const QColor color = dim && !isHighlighted(i) ? ViewPalette::faded(m_colors[i], kDim) : m_colors[i];
        (r.width() >= 6 && r.height() >= 6 ? bordered : plain)[color.rgba()].append(r);
    });
    painter.setPen(Qt::NoPen);
    for (auto it = plain.cbegin(); it != plain.cend(); ++it) {
        painter.setBrush(QColor::fromRgba(it.key()));
        painter.drawRects(it.value());
    }
    for (auto it = bordered.cbegin(); it != bordered.cend(); ++it) {
        const QColor fill = QColor::fromRgba(it.key());
        painter.setBrush(fill);
        painter.setPen(QPen(fill.darker(135), 1));
        QVector<QRectF> inset;
        inset.reserve(it.value().size());
        for (const QRectF& r : it.value())
            inset.append(r.adjusted(0.5, 0.5, -0.5, -0.5));
        painter.drawRects(inset);
    }
    if (covered > 0)
        painter.drawImage(frame.plot.topLeft(), coverage);
    // Control-flow ops' reservations: framed, with the graph they hold drawn inside.
    for (int k = 0; k < static_cast<int>(m_blocks.size()); ++k)
        if (m_blocks[static_cast<std::size_t>(k)].parent < 0)
            paintBlock(painter, frame, k, dim);
    if (document()->anyBounded())
        m_index.forEach(first, last, [&](int i) {
            if (document()->boundedBuffers()[i] && buffers[i].size > 0)
                paintBounded(painter, bufferRect(frame, i).intersected(plotF));
        });

    // What strategies did: hatch and outline on touched buffers, a dashed host trip between the two
    // device buffers of a swapped value (it holds no device memory in between).
    if (const StrategyFacts* facts = document()->strategyFacts()) {
        m_index.forEach(first, last, [&](int i) {
            if (facts->marks[i] != MarkNone && buffers[i].size > 0)
                StrategyStyle::paintMarked(painter, bufferRect(frame, i).intersected(plotF), facts->marks[i]);
        });
        std::vector<QRectF> labels;
        for (const HostTrip& trip : facts->trips) {
            const QRectF out = bufferRect(frame, trip.outBuffer), in = bufferRect(frame, trip.inBuffer);
            StrategyStyle::paintHostTrip(
                painter, QPointF(out.right(), out.center().y()), QPointF(in.left(), in.center().y()), &labels);
        }
    }

    // Names inside rectangles large enough to hold them.
    const QFontMetrics fm(font());
    if (!bordered.isEmpty()) {
        int named = 0;
        drawn.any(first, last, [&](int i) {
            if (named > 400)
                return true;
            if (m_outerBlock[static_cast<std::size_t>(i)] >= 0)
                return false; // a block carries its own label
            const QRectF r = bufferRect(frame, i).intersected(plotF);
            if (r.height() < fm.height() + 2 || r.width() < 40)
                return false;
            const QString name = fitName(fm, QString::fromStdString(buffers[i].name), static_cast<int>(r.width()) - 8);
            if (name.isEmpty())
                return false;
            const QColor color = dim && !isHighlighted(i) ? ViewPalette::faded(m_colors[i], kDim) : m_colors[i];
            painter.setPen(ViewPalette::textColorOn(color));
            painter.drawText(r.adjusted(4, 1, -4, -1), Qt::AlignLeft | Qt::AlignVCenter, name);
            ++named;
            return false;
        });
    }

    for (int buffer : { document()->hoveredBuffer(), document()->selectedBuffer() })
        if (buffer >= 0)
            paintOutline(painter, bufferRect(frame, buffer), buffer == document()->selectedBuffer());

    // Arena and lower bound lines with labels at the right end; labels never overlap each other.
    const core::Bytes lower = document()->metrics().lowerBound;
    const double lowerY = y.valueToY(static_cast<double>(lower));
    const int lineH = fm.height();
    // Whether a label box would cover no buffer (the lower bound's line runs through them).
    const auto coversNothing = [&](const QRectF& box) {
        return !m_index.any(frame.time.xToStep(box.left()), frame.time.xToStep(box.right()),
            [&](int i) { return buffers[i].size > 0 && bufferRect(frame, i).intersects(box); });
    };
    auto label = [&](double atY, const QString& text, bool above, const QColor& color) {
        const int w = fm.horizontalAdvance(text) + 8;
        const auto boxAt = [&](bool over) {
            QRectF box(plotF.right() - w - 6, over ? atY - lineH - 3 : atY + 3, w, lineH + 1);
            box.moveTop(std::clamp(box.top(), plotF.top() + 1, plotF.bottom() - box.height()));
            return box;
        };
        QRectF box = boxAt(above);
        // At the right end when that is free, else the free place along the line nearest to it, on
        // the side asked for, then on the other.
        for (const bool over : { above, !above }) {
            for (QRectF at = boxAt(over); at.left() >= plotF.left() + 4 && !coversNothing(box); at.translate(-w / 2.0, 0))
                if (coversNothing(at))
                    box = at;
        }
        // Nowhere free along the line (a dense layout): above the arena line at the left, where no
        // buffer can be, in the line's colour.
        if (const QRectF top(plotF.left() + 6, std::max(plotF.top() + 1, arenaY - lineH - 3), w, lineH + 1);
            !coversNothing(box) && coversNothing(top))
            box = top;
        painter.setPen(Qt::NoPen);
        painter.setBrush(QColor(255, 255, 255, 225));
        painter.drawRoundedRect(box, 2, 2);
        painter.setPen(color);
        painter.drawText(box, Qt::AlignCenter, text);
    };
    const QColor arenaColor(0x202124), lowerColor(0x1A7F37);
    painter.setPen(QPen(arenaColor, 1.5));
    painter.drawLine(QPointF(plotF.left(), arenaY), QPointF(plotF.right() + 1, arenaY));
    if (lower == plan->arenaSize) {
        label(arenaY, QStringLiteral("arena = lower bound %1").arg(shortBytes(static_cast<double>(lower))), true,
            arenaColor);
        return;
    }
    painter.setPen(QPen(lowerColor, 1.5, Qt::DashLine));
    painter.drawLine(QPointF(plotF.left(), lowerY), QPointF(plotF.right() + 1, lowerY));
    label(arenaY, QStringLiteral("arena %1").arg(shortBytes(static_cast<double>(plan->arenaSize))), true, arenaColor);
    // The lower bound sits below the arena line; its label goes under its line when they are close.
    label(lowerY, QStringLiteral("lower bound %1").arg(shortBytes(static_cast<double>(lower))),
        std::abs(lowerY - arenaY) > lineH + 6, lowerColor);
}

void ArenaLayoutView::paintLabels(QPainter& painter, const Frame& frame) const
{
    const OffsetAxis y = offsetAxis(frame);
    const QFontMetrics fm(font());
    painter.setPen(ViewPalette::axisText());
    const int right = frame.labels.right() - 6;
    const ByteUnit unit = byteUnitFor(m_top);
    int widest = 0;
    for (double t : byteTicks(0, m_top, std::max(3, frame.plot.height() / 40))) {
        const double yy = std::floor(y.valueToY(t)) + 0.5;
        painter.drawLine(QPointF(right + 1, yy), QPointF(right + 5, yy));
        const QString text = formatInUnit(t, unit);
        const QRectF r(frame.labels.left(), yy - fm.height() / 2.0, right - 3 - frame.labels.left(), fm.height());
        if (r.top() < frame.labels.top() - fm.height() / 2 || r.bottom() > frame.labels.bottom() + fm.height())
            continue;
        painter.drawText(r, Qt::AlignRight | Qt::AlignVCenter, text);
        widest = std::max(widest, fm.horizontalAdvance(text));
    }
    // Vertical axis title just left of the tick labels.
    const int titleX = std::max(frame.labels.left(), right - 3 - widest - 8 - fm.height());
    painter.save();
    painter.translate(titleX, frame.labels.center().y());
    painter.rotate(-90);
    painter.drawText(QRect(-frame.labels.height() / 2, 0, frame.labels.height(), fm.height()), Qt::AlignCenter,
        QStringLiteral("offset (%1)").arg(unit.name));
    painter.restore();
}

int ArenaLayoutView::bufferAt(const Frame& frame, QPointF pos) const
{
    const core::Workload* workload = document()->workload();
    const core::Plan* plan = document()->plan();
    if (!workload || !plan || !frame.plot.contains(pos.toPoint()))
        return -1;
    const double step = frame.time.xToStep(pos.x());
    const double bytes = offsetAxis(frame).yToValue(pos.y());
    // With one pixel of slack in bytes, so one-pixel-high buffers can still be hit.
    const double slack = 1.5 / offsetAxis(frame).pixelsPerByte();
    int hit = -1;
    bool hitInside = false;
    core::Bytes hitSize = 0;
    m_index.forEach(step, step, [&](int i) {
        const auto& b = workload->problem.buffers[i];
        if (b.size <= 0 || step < b.lifetime.start)
            return;
        const double lo = static_cast<double>(plan->offsets[i]), hi = lo + static_cast<double>(b.size);
        if (bytes < lo - slack || bytes >= hi + slack)
            return;
        // Prefer a buffer that really contains the point, then the smallest one the slack reaches.
        const bool inside = bytes >= lo && bytes < hi;
        if (hit < 0 || (inside && !hitInside) || (inside == hitInside && b.size < hitSize)) {
            hit = i;
            hitInside = inside;
            hitSize = b.size;
        }
    });
    return hit;
}
