// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "densitygrid.h"
#include "intervalindex.h"
#include "timelineview.h"

#include <QColor>

#include <optional>
#include <vector>

// The plan in time × memory: x = step, y = offset in bytes; each buffer is the rectangle
// [start, end) × [offset, offset + size). The arena [0, arena) is hatched so the free space between
// rectangles (fragmentation) shows; the arena size and the lower bound are labelled lines. After
// strategies, touched buffers are hatched and outlined by strategy and a swapped value's two device
// buffers are joined by a dashed host trip (StrategyStyle), with a legend in the caption.
// Painting visits only buffers overlapping the visible steps (IntervalIndex); rectangles thinner
// or flatter than a pixel are merged into one per-pixel coverage image instead of drawn one by one,
// and zoomed out on a long trace the short-lived ones come from a grid binned once (DensityGrid).
class ArenaLayoutView : public TimelineView {
    Q_OBJECT
public:
    explicit ArenaLayoutView(PlanDocument* document, QWidget* parent = nullptr);

    // Kind (the default), captured category or module (buffercolors.h).
    void setColoring(BufferColoring coloring);
    BufferColoring coloring() const { return m_coloring; }

    OffsetAxis offsetAxis(const Frame& frame) const;
    // The buffer's rectangle in widget pixels (empty without a plan).
    QRectF bufferRect(const Frame& frame, int buffer) const;

protected:
    void rebuild() override;
    QString caption() const override;
    int paintLegend(QPainter& painter, const QRect& area, const Frame& frame) const override;
    void paintPlot(QPainter& painter, const Frame& frame) const override;
    void paintLabels(QPainter& painter, const Frame& frame) const override;
    int bufferAt(const Frame& frame, QPointF pos) const override;

private:
    // Drawn merged into one grey coverage image, not one by one (paintPlot).
    static bool tooSmall(const QRectF& r) { return r.width() < 1.0 || r.height() < 1.0; }
    bool anyTooSmall(const Frame& frame) const; // some buffer in view is tooSmall
    // The buffer's rectangle clipped to the plot's width, or none when it is empty or out of view.
    std::optional<QRectF> shownRect(const Frame& frame, int buffer) const;
    IntervalIndex m_index;
    // Zoomed out on many buffers: the short-lived ones binned (painted as coverage from the grid), and
    // an index of the rest, drawn one by one (m_grid.covers()).
    DensityGrid m_grid;
    IntervalIndex m_longIndex;
    const IntervalIndex& drawnIndex(const Frame& frame) const { return m_grid.covers(frame.time) ? m_longIndex : m_index; }
    std::vector<QColor> m_colors; // per buffer
    BufferColoring m_coloring = BufferColoring::Kind;
    double m_top = 1; // bytes at the top of the plot
};
