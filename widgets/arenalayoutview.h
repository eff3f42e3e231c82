// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "densitygrid.h"
#include "intervalindex.h"
#include "nestedgraphs.h"
#include "timelineview.h"

#include <QColor>

#include <memory>
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
// A control-flow op's "<op> body" buffer is drawn as a framed block holding one of its graphs'
// arenas (core::NestedPlan): the graph's buffers at the block's offset plus theirs, in the same
// bytes per pixel, its steps spread over the block's width; the deciding graph until the user picks
// another (context menu); graphs inside graphs the same way, in the block of their op. Hovering an
// inner buffer shows its tooltip, clicking it selects it (and the block); double-click on a block
// zooms the step axis to it.
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

    // One control-flow op's reservation, drawn as a block holding one of its graphs.
    struct BodyBlock {
        int parent = -1;         // the graph the op is in (index in nested()); -1: the workload's
        int reservation = -1;    // its "<op> body" buffer in that graph's problem
        std::vector<int> graphs; // its graphs (indices in nested()), in the op's order
        int shown = -1;          // the graph drawn: the deciding one until showGraph picks another
    };
    // An inner buffer: buffer `buffer` of the problem of graph `graph` (index in nested()).
    struct InnerBuffer {
        int graph = -1;
        int buffer = -1;
        bool valid() const { return graph >= 0 && buffer >= 0; }
        bool operator==(const InnerBuffer&) const = default;
    };
    const std::vector<NestedGraph>& nested() const { return m_nested; }
    const std::vector<BodyBlock>& bodyBlocks() const { return m_blocks; }
    int blockOf(int graph) const; // the block `graph` is drawn in, -1 for a bad index
    // Draws `graph` in its block, and the graphs around it in theirs, so it shows.
    void showGraph(int graph);
    bool isDrawn(int graph) const; // `graph` is its block's shown graph, and so up to depth 0
    // The block's rectangle (unclipped) in widget pixels; empty when it is not drawn.
    QRectF blockRect(const Frame& frame, int block) const;
    // An inner buffer's rectangle in widget pixels; empty unless its graph is drawn.
    QRectF innerRect(const Frame& frame, InnerBuffer inner) const;
    InnerBuffer innerBufferAt(const Frame& frame, QPointF pos) const; // the deepest drawn one
    int blockAt(const Frame& frame, QPointF pos) const; // the deepest drawn block under pos, or -1
    // Outlines an inner buffer as selected (showing its graph); an invalid one clears.
    void selectInner(InnerBuffer inner);
    InnerBuffer selectedInner() const { return m_selectedInner; }
    InnerBuffer hoveredInner() const { return m_hoverInner; } // under the mouse, its tooltip shown
    // The step axis centred on the block, as close as it zooms (a one-step block: half the plot).
    void zoomToBlock(int block);
    // Tooltip of an inner buffer: name, graph, kind, body steps, size, offset in its graph's arena and in the arena.
    QString innerToolTip(InnerBuffer inner) const;
    // The label a block carries: "If_1 · then_branch · decides".
    QString blockLabel(int block) const;

signals:
    void innerBufferSelected(int graph, int buffer); // clicked in the view; -1, -1: none

protected:
    void rebuild() override;
    QString caption() const override;
    int paintLegend(QPainter& painter, const QRect& area, const Frame& frame) const override;
    void paintPlot(QPainter& painter, const Frame& frame) const override;
    void paintLabels(QPainter& painter, const Frame& frame) const override;
    int bufferAt(const Frame& frame, QPointF pos) const override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;

private:
    void rebuildBodies(); // m_nested and m_blocks, when the workload changed
    // Bytes from the arena's start to where the graph's arena starts.
    core::Bytes arenaBase(int graph) const;
    void paintBlock(QPainter& painter, const Frame& frame, int block, bool dim) const;
    // The workload m_nested was made for, held so the graphs it points into live as long as it.
    std::shared_ptr<const core::Workload> m_bodiesOf;
    std::vector<NestedGraph> m_nested;
    std::vector<BodyBlock> m_blocks;
    std::vector<int> m_graphBlock;  // per graph in m_nested: its block
    std::vector<int> m_outerBlock;  // per buffer of the workload: the block it is drawn as, or -1
    InnerBuffer m_hoverInner;
    InnerBuffer m_selectedInner;

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
