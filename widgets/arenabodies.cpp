// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// ArenaLayoutView's control-flow blocks: a "<op> body" reservation drawn with one of its op's graphs
// inside (core::NestedPlan), the inner buffers' geometry, hits, tooltips and the block's menu.
#include "arenalayoutview.h"

#include "palette.h"
#include "plandocument.h"

#include "util/format.h"

#include <QContextMenuEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace {
constexpr double kMinBlockWidth = 6; // narrower blocks draw as plain buffers: nothing inside would show
const QColor kFrame(0x3C4043);

QString fromStd(const std::string& text) { return QString::fromStdString(text); }
} // namespace

void ArenaLayoutView::rebuildBodies()
{
    const core::Workload* workload = document()->workload();
    if (workload != m_bodiesOf.get()) { // a new workload; a new plan keeps the graphs and what is drawn
        m_bodiesOf = document()->sharedWorkload();
        m_nested = workload ? nestedGraphs(*workload) : std::vector<NestedGraph> {};
        m_blocks.clear();
        m_graphBlock.assign(m_nested.size(), -1);
        m_hoverInner = {};
        m_selectedInner = {};
        for (int g = 0; g < static_cast<int>(m_nested.size()); ++g) {
            const NestedGraph& graph = m_nested[static_cast<std::size_t>(g)];
            if (graph.reservation < 0)
                continue; // a graph without ops reserves nothing
            auto same = std::find_if(m_blocks.begin(), m_blocks.end(), [&](const BodyBlock& b) {
                return b.parent == graph.parent && b.reservation == graph.reservation;
            });
            if (same == m_blocks.end())
                same = m_blocks.insert(m_blocks.end(), BodyBlock { graph.parent, graph.reservation, {}, -1 });
            same->graphs.push_back(g);
            if (graph.plan->decides || same->shown < 0)
                same->shown = graph.plan->decides ? g : same->graphs.front();
            m_graphBlock[static_cast<std::size_t>(g)] = static_cast<int>(same - m_blocks.begin());
        }
    }
    m_outerBlock.assign(workload ? workload->problem.buffers.size() : 0, -1);
    for (int k = 0; k < static_cast<int>(m_blocks.size()); ++k)
        if (m_blocks[static_cast<std::size_t>(k)].parent < 0)
            m_outerBlock[static_cast<std::size_t>(m_blocks[static_cast<std::size_t>(k)].reservation)] = k;
}

int ArenaLayoutView::blockOf(int graph) const
{
    return graph >= 0 && graph < static_cast<int>(m_graphBlock.size()) ? m_graphBlock[static_cast<std::size_t>(graph)] : -1;
}

void ArenaLayoutView::showGraph(int graph)
{
    bool changed = false;
    for (int g = graph; g >= 0; g = m_nested[static_cast<std::size_t>(g)].parent) {
        const int block = blockOf(g);
        if (block < 0)
            return;
        changed = changed || m_blocks[static_cast<std::size_t>(block)].shown != g;
        m_blocks[static_cast<std::size_t>(block)].shown = g;
    }
    if (changed) {
        m_hoverInner = {};
        update();
    }
}

bool ArenaLayoutView::isDrawn(int graph) const
{
    for (int g = graph; g >= 0; g = m_nested[static_cast<std::size_t>(g)].parent) {
        const int block = blockOf(g);
        if (block < 0 || m_blocks[static_cast<std::size_t>(block)].shown != g)
            return false;
    }
    return graph >= 0;
}

core::Bytes ArenaLayoutView::arenaBase(int graph) const
{
    const NestedGraph& g = m_nested[static_cast<std::size_t>(graph)];
    const core::Plan* plan = document()->plan();
    if (!plan || g.outerBuffer < 0)
        return 0;
    return plan->offsets[static_cast<std::size_t>(g.outerBuffer)] + g.baseInOuter;
}

QRectF ArenaLayoutView::blockRect(const Frame& frame, int block) const
{
    if (block < 0 || block >= static_cast<int>(m_blocks.size()) || !document()->plan())
        return {};
    const BodyBlock& b = m_blocks[static_cast<std::size_t>(block)];
    if (b.parent < 0)
        return bufferRect(frame, b.reservation);
    return innerRect(frame, InnerBuffer { b.parent, b.reservation });
}

QRectF ArenaLayoutView::innerRect(const Frame& frame, InnerBuffer inner) const
{
    if (inner.graph < 0 || inner.graph >= static_cast<int>(m_nested.size()) || !isDrawn(inner.graph))
        return {};
    const core::NestedPlan& plan = *m_nested[static_cast<std::size_t>(inner.graph)].plan;
    const auto& buffers = plan.built.problem.buffers;
    if (inner.buffer < 0 || inner.buffer >= static_cast<int>(buffers.size())
        || static_cast<std::size_t>(inner.buffer) >= plan.plan.offsets.size())
        return {};
    const QRectF box = blockRect(frame, blockOf(inner.graph));
    if (box.isEmpty())
        return {};
    const core::Buffer& b = buffers[static_cast<std::size_t>(inner.buffer)];
    const double steps = std::max<double>(1, plan.built.problem.steps);
    const double x0 = box.left() + box.width() * b.lifetime.start / steps;
    const double x1 = box.left() + box.width() * b.lifetime.end / steps;
    const OffsetAxis y = offsetAxis(frame);
    const double at = static_cast<double>(arenaBase(inner.graph) + plan.plan.offsets[static_cast<std::size_t>(inner.buffer)]);
    return QRectF(QPointF(x0, y.valueToY(at + static_cast<double>(b.size))), QPointF(x1, y.valueToY(at)));
}

int ArenaLayoutView::blockAt(const Frame& frame, QPointF pos) const
{
    // Blocks nest inside their parents' blocks, and nestedGraphs() lists parents first: the last hit is the deepest.
    int hit = -1;
    for (int k = 0; k < static_cast<int>(m_blocks.size()); ++k) {
        const QRectF box = blockRect(frame, k);
        if (box.width() >= kMinBlockWidth && box.contains(pos))
            hit = k;
    }
    return hit;
}

ArenaLayoutView::InnerBuffer ArenaLayoutView::innerBufferAt(const Frame& frame, QPointF pos) const
{
    if (!frame.plot.contains(pos.toPoint()))
        return {};
    const int block = blockAt(frame, pos);
    if (block < 0)
        return {};
    const int graph = m_blocks[static_cast<std::size_t>(block)].shown;
    const auto& buffers = m_nested[static_cast<std::size_t>(graph)].plan->built.problem.buffers;
    InnerBuffer hit;
    for (int i = 0; i < static_cast<int>(buffers.size()); ++i) {
        if (buffers[static_cast<std::size_t>(i)].size <= 0)
            continue;
        // One pixel of slack, so a buffer thinner than a pixel can still be hit; the smallest wins.
        const QRectF r = innerRect(frame, { graph, i }).adjusted(-0.5, -0.5, 0.5, 0.5);
        if (r.contains(pos) && (!hit.valid() || buffers[static_cast<std::size_t>(i)].size < buffers[static_cast<std::size_t>(hit.buffer)].size))
            hit = { graph, i };
    }
    return hit;
}

void ArenaLayoutView::selectInner(InnerBuffer inner)
{
    if (inner.valid() && blockOf(inner.graph) >= 0 && !isDrawn(inner.graph))
        showGraph(inner.graph);
    m_selectedInner = inner.valid() && blockOf(inner.graph) >= 0 ? inner : InnerBuffer {};
    update();
}

void ArenaLayoutView::zoomToBlock(int block)
{
    int top = block;
    while (top >= 0 && m_blocks[static_cast<std::size_t>(top)].parent >= 0)
        top = blockOf(m_blocks[static_cast<std::size_t>(top)].parent);
    if (top < 0 || !document()->workload())
        return;
    const auto& lifetime = document()->workload()->problem.buffers[static_cast<std::size_t>(m_blocks[static_cast<std::size_t>(top)].reservation)].lifetime;
    // Centred; the document shows at least two steps, so a one-step block takes half the plot.
    const double centre = (lifetime.start + lifetime.end) / 2.0, half = 0.6 * (lifetime.end - lifetime.start);
    document()->setVisibleSteps(centre - std::max(1.0, half), centre + std::max(1.0, half));
}

QString ArenaLayoutView::blockLabel(int block) const
{
    const BodyBlock& b = m_blocks[static_cast<std::size_t>(block)];
    const core::NestedPlan& plan = *m_nested[static_cast<std::size_t>(b.shown)].plan;
    QString text = fromStd(plan.op) + QStringLiteral(" · ") + fromStd(plan.body);
    if (b.graphs.size() > 1)
        text += plan.decides ? QStringLiteral(" · decides") : QStringLiteral(" · does not decide");
    if (plan.plan.arenaSize == 0)
        text += QStringLiteral(" · empty arena"); // nothing inside to draw, and that is no bug
    return text;
}

QString ArenaLayoutView::innerToolTip(InnerBuffer inner) const
{
    if (!inner.valid() || inner.graph >= static_cast<int>(m_nested.size()))
        return {};
    const NestedGraph& graph = m_nested[static_cast<std::size_t>(inner.graph)];
    const core::NestedPlan& plan = *graph.plan;
    if (inner.buffer >= static_cast<int>(plan.built.problem.buffers.size()) || static_cast<std::size_t>(inner.buffer) >= plan.plan.offsets.size())
        return {};
    const core::Buffer& b = plan.built.problem.buffers[static_cast<std::size_t>(inner.buffer)];
    const core::Bytes offset = plan.plan.offsets[static_cast<std::size_t>(inner.buffer)];
    const auto bytes = [](core::Bytes value) { return QString::fromStdString(core::formatBytes(value)); };
    QString text = QStringLiteral("<b>%1</b><br/>in %2 (%3 steps)<br/>%4 · body steps [%5, %6)<br/>size %7 · offset %8 in the body's arena")
                       .arg(fromStd(b.name).toHtmlEscaped(), graph.path.toHtmlEscaped())
                       .arg(plan.built.problem.steps)
                       .arg(fromStd(std::string(core::kindName(b.kind))))
                       .arg(b.lifetime.start)
                       .arg(b.lifetime.end)
                       .arg(bytes(b.size), bytes(offset));
    if (document()->plan())
        text += QStringLiteral(", %1 in the arena").arg(bytes(arenaBase(inner.graph) + offset));
    if (b.tensors.size() > 1) {
        QStringList names;
        for (std::size_t i = 0; i < b.tensors.size() && i < 6; ++i)
            names << fromStd(b.tensors[i]).toHtmlEscaped();
        if (b.tensors.size() > 6)
            names << QStringLiteral("…");
        text += QStringLiteral("<br/>tensors: ") + names.join(QStringLiteral(", "));
    }
    if (!plan.decides)
        text += QStringLiteral("<br/><i>this graph does not decide the reservation: a larger one of its op does</i>");
    return text;
}

namespace {
// Whether buffer `buffer` of the graph holds a tensor whose size is an upper bound (a data-dependent shape).
bool boundedIn(const core::NestedPlan& graph, int buffer)
{
    const auto& tensors = graph.built.bufferTensor;
    if (!graph.graph || buffer >= static_cast<int>(tensors.size()) || tensors[static_cast<std::size_t>(buffer)] < 0)
        return false;
    const auto t = static_cast<std::size_t>(tensors[static_cast<std::size_t>(buffer)]);
    return t < graph.graph->tensors.size() && core::sizeIsBound(graph.graph->tensors[t]);
}
} // namespace

void ArenaLayoutView::paintBlock(QPainter& painter, const Frame& frame, int block, bool dim) const
{
    const BodyBlock& b = m_blocks[static_cast<std::size_t>(block)];
    const QRectF box = blockRect(frame, block);
    if (box.width() < kMinBlockWidth || box.height() < 2 || !box.intersects(QRectF(frame.plot)))
        return;
    const bool faded = dim && !isHighlighted(m_nested[static_cast<std::size_t>(b.shown)].outerBuffer);
    // The block's free space as the arena's: hatched, so the inner buffers read as its layout.
    painter.fillRect(box, QColor(0xF4F5F7));
    painter.fillRect(box, QBrush(QColor(0xD3D7DD), Qt::BDiagPattern));
    const core::NestedPlan& graph = *m_nested[static_cast<std::size_t>(b.shown)].plan;
    const auto& buffers = graph.built.problem.buffers;
    const QFontMetrics fm(font());
    std::vector<QRectF> drawn; // where the label should not go
    for (int i = 0; i < static_cast<int>(buffers.size()); ++i) {
        const core::Buffer& buffer = buffers[static_cast<std::size_t>(i)];
        if (buffer.size <= 0)
            continue;
        const QRectF r = innerRect(frame, { b.shown, i });
        if (r.isNull())
            continue;
        drawn.push_back(r);
        QColor fill = ViewPalette::kindColor(buffer.kind);
        if (faded)
            fill = ViewPalette::faded(fill, kDim);
        if (r.width() < 1 || r.height() < 1) { // merged into grey where it lies, as in the arena
            painter.fillRect(r.adjusted(0, 0, std::max(0.0, 1 - r.width()), std::max(0.0, 1 - r.height())), ViewPalette::denseFill());
            continue;
        }
        painter.setBrush(fill);
        painter.setPen(r.width() >= 6 && r.height() >= 6 ? QPen(fill.darker(135), 1) : QPen(Qt::NoPen));
        painter.drawRect(r.width() >= 6 && r.height() >= 6 ? r.adjusted(0.5, 0.5, -0.5, -0.5) : r);
        if (boundedIn(graph, i)) // stippled as the arena's: its size is an upper bound
            paintBounded(painter, r);
        if (r.height() >= fm.height() + 2 && r.width() >= 40)
            if (const QString name = fitName(fm, fromStd(buffer.name), static_cast<int>(r.width()) - 8); !name.isEmpty()) {
                painter.setPen(ViewPalette::textColorOn(fill));
                painter.drawText(r.adjusted(4, 1, -4, -1), Qt::AlignLeft | Qt::AlignVCenter, name);
            }
    }
    // The graphs of this graph's own control-flow ops, in their blocks.
    for (int k = 0; k < static_cast<int>(m_blocks.size()); ++k)
        if (m_blocks[static_cast<std::size_t>(k)].parent == b.shown)
            paintBlock(painter, frame, k, dim);
    for (const InnerBuffer inner : { m_hoverInner, m_selectedInner })
        if (inner.valid() && inner.graph == b.shown)
            paintOutline(painter, innerRect(frame, inner), inner == m_selectedInner);

    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(kFrame, 1.5));
    painter.drawRect(box.adjusted(0.75, 0.75, -0.75, -0.75));
    // The label: whole, else without whether it decides, else cut; in the first corner of the
    // block's visible part where it covers no inner buffer (top left first), else top left over them
    // unless that hides much of the block.
    const QRectF visible = box.intersected(QRectF(frame.plot));
    const int room = static_cast<int>(visible.width()) - 10;
    QString label = blockLabel(block);
    if (fm.horizontalAdvance(label) > room)
        label = label.section(QStringLiteral(" · "), 0, 1);
    if (fm.horizontalAdvance(label) > room)
        label = fm.elidedText(label, Qt::ElideRight, room);
    if (visible.height() < fm.height() + 6 || label.size() < 5)
        return;
    const QSizeF size(fm.horizontalAdvance(label) + 8, fm.height() + 2);
    const QRectF corners[] = { QRectF(visible.topLeft() + QPointF(3, 3), size),
        QRectF(QPointF(visible.right() - 3 - size.width(), visible.top() + 3), size),
        QRectF(QPointF(visible.left() + 3, visible.bottom() - 3 - size.height()), size),
        QRectF(visible.bottomRight() - QPointF(3 + size.width(), 3 + size.height()), size) };
    const auto free = [&](const QRectF& corner) {
        return std::none_of(drawn.begin(), drawn.end(), [&](const QRectF& r) { return r.intersects(corner); });
    };
    const auto corner = std::find_if(std::begin(corners), std::end(corners), free);
    // Over the buffers it would hide much of a small block: the frame and the tooltips say enough then.
    if (corner == std::end(corners) && size.width() * size.height() > 0.3 * visible.width() * visible.height())
        return;
    const QRectF tag = corner != std::end(corners) ? *corner : corners[0];
    painter.setPen(QPen(kFrame, 1));
    painter.setBrush(QColor(255, 255, 255, 235));
    painter.drawRoundedRect(tag, 2, 2);
    painter.setPen(kFrame);
    painter.drawText(tag, Qt::AlignCenter, label);
}

void ArenaLayoutView::mousePressEvent(QMouseEvent* event)
{
    TimelineView::mousePressEvent(event);
    if (event->button() != Qt::LeftButton || !document()->hasPlan())
        return;
    const InnerBuffer hit = innerBufferAt(frame(), event->position());
    if (hit == m_selectedInner)
        return;
    m_selectedInner = hit;
    emit innerBufferSelected(hit.graph, hit.buffer);
    update();
}

void ArenaLayoutView::mouseMoveEvent(QMouseEvent* event)
{
    TimelineView::mouseMoveEvent(event); // pans, moves the cursor or hovers the outer buffer
    if (event->buttons() != Qt::NoButton || !document()->hasPlan())
        return;
    const InnerBuffer hit = innerBufferAt(frame(), event->position());
    if (hit == m_hoverInner)
        return;
    m_hoverInner = hit;
    // The inner buffer's tooltip over the block's own, which the hover of the outer buffer showed.
    const QPoint global = event->globalPosition().toPoint();
    if (hit.valid())
        QToolTip::showText(global, innerToolTip(hit), this);
    else if (document()->hoveredBuffer() >= 0)
        QToolTip::showText(global, bufferToolTip(document(), document()->hoveredBuffer()), this);
    update();
}

void ArenaLayoutView::mouseDoubleClickEvent(QMouseEvent* event)
{
    // On a block: zoom to it, unless it is as wide as zooming makes it already; else fit all.
    const Frame f = frame();
    const int block = event->button() == Qt::LeftButton ? blockAt(f, event->position()) : -1;
    if (block >= 0 && blockRect(f, block).width() < 0.4 * f.plot.width()) {
        zoomToBlock(block);
        event->accept();
        return;
    }
    TimelineView::mouseDoubleClickEvent(event);
}

void ArenaLayoutView::contextMenuEvent(QContextMenuEvent* event)
{
    const int block = blockAt(frame(), event->pos());
    if (block < 0) {
        TimelineView::contextMenuEvent(event);
        return;
    }
    QMenu menu(this);
    const BodyBlock& b = m_blocks[static_cast<std::size_t>(block)];
    for (int g : b.graphs) {
        const core::NestedPlan& plan = *m_nested[static_cast<std::size_t>(g)].plan;
        QAction* action = menu.addAction(tr("Draw %1%2").arg(fromStd(plan.body), plan.decides ? tr(" (decides)") : QString()));
        action->setCheckable(true);
        action->setChecked(g == b.shown);
        connect(action, &QAction::triggered, this, [this, g] { showGraph(g); });
    }
    menu.addSeparator();
    const QString op = fromStd(m_nested[static_cast<std::size_t>(b.shown)].plan->op);
    QAction* zoom = menu.addAction(tr("Zoom to %1").arg(op));
    connect(zoom, &QAction::triggered, this, [this, block] { zoomToBlock(block); });
    menu.exec(event->globalPos());
}
