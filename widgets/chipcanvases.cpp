// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "chipcanvases.h"

#include "palette.h"

#include "scenarios/chipunits.h"
#include "scenarios/multichipreport.h"
#include "util/format.h"
#include "util/stats.h"

#include <QPainter>

#include <algorithm>
#include <cmath>

namespace {

// Binary units (MiB), as the main window shows the same arenas; the CLI's chip report keeps the vendors' MB.
QString sizeText(core::Bytes bytes) { return QString::fromStdString(core::formatBytes(bytes)); }
QString qs(const std::string& text) { return QString::fromStdString(text); }

QColor unitColor(core::ChipUnit unit)
{
    switch (unit) {
    case core::ChipUnit::Matrix:
        return QColor(0xc4, 0x4e, 0x52);
    case core::ChipUnit::Switch:
        return QColor(0x81, 0x72, 0xb3);
    case core::ChipUnit::Memory:
        return QColor(0x4c, 0x72, 0xb0);
    case core::ChipUnit::Vector:
        break;
    }
    return QColor(0x55, 0xa8, 0x68);
}

} // namespace

void ChipArchitectureCanvas::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.fillRect(rect(), ViewPalette::background());
    painter.setPen(ViewPalette::axisText());
    if (!workload || !workload->graph || !partition || partition->stages.empty() || step >= workload->schedule.steps()) {
        painter.drawText(rect(), Qt::AlignCenter, tr("No partition yet"));
        return;
    }
    const auto& graph = *workload->graph;
    const auto& plan = *partition;
    int chip = 0;
    while (chip + 1 < plan.chips() && step >= plan.stages[chip].stage.end)
        ++chip;
    const auto& stage = plan.stages[chip];
    const auto& op = graph.ops[workload->schedule.order[step]];
    const auto unit = core::chipUnitFor(op);
    // A fused group says what it fuses ("Conv+Relu"), the type that decides its unit.
    const auto fusedTypes = op.attributes.find("fused_types");
    const QString type = fusedTypes != op.attributes.end() && !fusedTypes->second.text.empty() ? qs(fusedTypes->second.text) : qs(op.type);
    const auto local = step - stage.stage.begin;

    QFont bold = font();
    bold.setBold(true);
    painter.setFont(bold);
    painter.drawText(QRect(16, 6, width() - 32, 20), Qt::AlignLeft | Qt::AlignVCenter,
        tr("Chip %1 of %2 · step %3: %4 (%5) runs on the %6 unit")
            .arg(chip)
            .arg(plan.chips())
            .arg(step)
            .arg(qs(op.name), type, QLatin1String(core::chipUnitName(unit).data())));
    painter.setFont(font());

    // matrix | switch | memory | vector | memory | switch | matrix, as on a tensor streaming processor.
    struct Block {
        core::ChipUnit unit;
        double weight;
        QString name;
    };
    const Block blocks[] = { { core::ChipUnit::Matrix, 1.2, tr("MXM\nmatrix") }, { core::ChipUnit::Switch, 1, tr("SXM\nswitch") },
        { core::ChipUnit::Memory, 2.2, tr("MEM · weights") }, { core::ChipUnit::Vector, 1, tr("VXM\nvector") },
        { core::ChipUnit::Memory, 2.2, tr("MEM · arena") }, { core::ChipUnit::Switch, 1, tr("SXM\nswitch") },
        { core::ChipUnit::Matrix, 1.2, tr("MXM\nmatrix") } };
    const double gap = 10, left = 16, top = 50, height = std::max(270, this->height() - 190);
    const double unitWidth = (width() - 2 * left - 6 * gap) / 9.8;
    std::vector<QRectF> rects;
    double x = left;
    for (const auto& b : blocks) {
        rects.emplace_back(x, top, unitWidth * b.weight, height);
        x += unitWidth * b.weight + gap;
    }
    for (int i = 0; i < 7; ++i) {
        const bool lit = blocks[i].unit == unit && (unit == core::ChipUnit::Memory || i >= 3); // the east one computes
        const auto color = unitColor(blocks[i].unit);
        if (blocks[i].unit != core::ChipUnit::Memory) {
            painter.setPen(QPen(lit ? color.darker(140) : ViewPalette::gridLine(), lit ? 3 : 1));
            painter.setBrush(lit ? color : ViewPalette::faded(color, 0.8));
            painter.drawRoundedRect(rects[i], 6, 6);
            painter.setPen(lit ? ViewPalette::textColorOn(color) : ViewPalette::axisText());
            painter.drawText(rects[i], Qt::AlignCenter, blocks[i].name);
        }
    }
    paintWeights(painter, rects[2], stage, op, unit == core::ChipUnit::Memory);
    paintArena(painter, rects[4], stage, op, local, unit == core::ChipUnit::Memory);

    // Streams: weights and inputs from memory into the unit, outputs back to the arena.
    if (unit != core::ChipUnit::Memory) {
        const QRectF target = unit == core::ChipUnit::Vector ? rects[3] : unit == core::ChipUnit::Switch ? rects[5] : rects[6];
        const QRectF& arena = rects[4];
        const QRectF& weights = rects[2];
        auto stream = [&](const QPolygonF& path) {
            painter.setPen(QPen(ViewPalette::axisText(), 2));
            painter.setBrush(Qt::NoBrush);
            painter.drawPolyline(path);
            const QPointF tip = path.back(), from = path[path.size() - 2];
            const double angle = std::atan2(tip.y() - from.y(), tip.x() - from.x());
            for (double side : { -0.45, 0.45 })
                painter.drawLine(tip, tip - QPointF(9 * std::cos(angle + side), 9 * std::sin(angle + side)));
        };
        const double yIn = top + height * 0.4, yOut = top + height * 0.6;
        const bool east = target.left() > arena.right();
        const double arenaEdge = east ? arena.right() - 2 : arena.left() + 2;
        const double unitEdge = east ? target.left() + 2 : target.right() - 2;
        stream(QPolygonF({ QPointF(arenaEdge, yIn), QPointF(unitEdge, yIn) }));
        stream(QPolygonF({ QPointF(unitEdge, yOut), QPointF(arenaEdge, yOut) }));
        const bool readsWeights = std::any_of(op.inputs.begin(), op.inputs.end(),
            [&](auto t) { return graph.tensors[t].kind == core::TensorKind::Weight; });
        if (!readsWeights) {
            // nothing streams from the weight slices
        } else if (east) // over the top of the chip, past the vector unit and the arena
            stream(QPolygonF({ QPointF(weights.center().x(), top), QPointF(weights.center().x(), top - 10),
                QPointF(target.center().x(), top - 10), QPointF(target.center().x(), top) }));
        else
            stream(QPolygonF({ QPointF(weights.right() - 2, top + height * 0.25), QPointF(target.left() + 2, top + height * 0.25) }));
        // Labelled inside the unit: the gap between a unit and memory may be only a few pixels.
        int ins = 0;
        for (auto t : op.inputs)
            ins += graph.tensors[t].kind != core::TensorKind::Weight;
        painter.setPen(ViewPalette::textColorOn(unitColor(unit)));
        painter.drawText(QRectF(target.left(), yIn - 20, target.width(), 16), Qt::AlignCenter, tr("in: %1 tensor(s)").arg(ins));
        painter.drawText(QRectF(target.left(), yOut + 4, target.width(), 16), Qt::AlignCenter,
            tr("out: %1 tensor(s)").arg(op.outputs.size()));
    }
    paintTensorList(painter, QRectF(left, top + height + 12, width() - 2 * left, this->height() - top - height - 16), stage, op);
}

void ChipArchitectureCanvas::paintWeights(QPainter& painter, const QRectF& area, const core::ChipStage& stage, const core::Op& op, bool lit) const
{
    const auto& graph = *workload->graph;
    painter.setPen(QPen(lit ? unitColor(core::ChipUnit::Memory).darker(140) : ViewPalette::gridLine(), lit ? 3 : 1));
    painter.setBrush(ViewPalette::plotBackground());
    painter.drawRect(area);
    const QRectF inner = area.adjusted(6, 22, -6, -6);
    const double capacity = static_cast<double>(std::max<core::Bytes>(stage.capacity, 1));
    painter.setPen(ViewPalette::axisText());
    painter.drawText(QRectF(area.left(), area.top() + 2, area.width(), 18), Qt::AlignCenter,
        tr("MEM · weights %1").arg(sizeText(stage.stage.weightBytes)));
    const auto weightColor = unitColor(core::ChipUnit::Memory);
    double offset = 0;
    for (auto t : stage.stage.weights) {
        const double size = static_cast<double>(std::max<core::Bytes>(graph.tensors[t].size, 0));
        const double y1 = inner.bottom() - inner.height() * offset / capacity;
        const double y0 = inner.bottom() - inner.height() * (offset + size) / capacity;
        const bool used = std::any_of(op.inputs.begin(), op.inputs.end(), [&](auto in) { return in == t; });
        painter.fillRect(QRectF(inner.left(), used ? std::min(y0, y1 - 3) : y0, inner.width(), std::max(used ? 3.0 : 1.0, y1 - y0)),
            used ? weightColor.darker(150) : ViewPalette::faded(weightColor, 0.45));
        offset += size;
    }
    QStringList read;
    for (auto t : op.inputs)
        if (graph.tensors[t].kind == core::TensorKind::Weight || graph.tensors[t].kind == core::TensorKind::Persistent)
            read << tr("%1 (%2)").arg(qs(graph.tensors[t].name), sizeText(std::max<core::Bytes>(graph.tensors[t].size, 0)));
    if (!read.isEmpty()) {
        painter.setPen(ViewPalette::axisText());
        QStringList lines { tr("this op reads:") };
        for (const auto& r : read)
            lines << painter.fontMetrics().elidedText(r, Qt::ElideMiddle, static_cast<int>(inner.width()) - 6);
        painter.drawText(inner.adjusted(3, 24, -3, 0), Qt::AlignLeft | Qt::AlignTop, lines.join(QLatin1Char('\n')));
    }
    painter.setPen(QPen(ViewPalette::gridLine(), 1, Qt::DashLine));
    painter.drawLine(inner.topLeft(), inner.topRight());
    painter.setPen(ViewPalette::axisText());
    painter.drawText(QRectF(inner.left(), inner.top() - 1, inner.width(), 14), Qt::AlignRight | Qt::AlignTop,
        tr("capacity %1").arg(sizeText(stage.capacity)));
}

void ChipArchitectureCanvas::paintArena(QPainter& painter, const QRectF& area, const core::ChipStage& stage, const core::Op& op, int local, bool lit) const
{
    painter.setPen(QPen(lit ? unitColor(core::ChipUnit::Memory).darker(140) : ViewPalette::gridLine(), lit ? 3 : 1));
    painter.setBrush(ViewPalette::plotBackground());
    painter.drawRect(area);
    painter.setPen(ViewPalette::axisText());
    painter.drawText(QRectF(area.left(), area.top() + 2, area.width(), 18), Qt::AlignCenter,
        tr("MEM · arena %1").arg(sizeText(stage.arenaBytes())));
    const QRectF inner = area.adjusted(6, 22, -6, -6);
    const auto& problem = stage.stage.problem;
    const double top = static_cast<double>(std::max<core::Bytes>(stage.arenaBytes(), 1));
    for (std::size_t b = 0; b < problem.buffers.size(); ++b) {
        const auto& buffer = problem.buffers[b];
        if (local < buffer.lifetime.start || local >= buffer.lifetime.end)
            continue;
        const auto t = stage.stage.bufferTensor[b];
        const bool in = std::find(op.inputs.begin(), op.inputs.end(), t) != op.inputs.end();
        const bool out = std::find(op.outputs.begin(), op.outputs.end(), t) != op.outputs.end();
        const double y1 = inner.bottom() - inner.height() * static_cast<double>(stage.plan.offsets[b]) / top;
        const double y0 = inner.bottom() - inner.height() * static_cast<double>(stage.plan.offsets[b] + buffer.size) / top;
        const QColor color = out ? unitColor(core::ChipUnit::Matrix) : in ? unitColor(core::ChipUnit::Vector) : ViewPalette::denseFill();
        const QRectF r(inner.left(), y0, inner.width(), std::max(2.0, y1 - y0 - 1));
        painter.fillRect(r, color);
        if ((in || out) && r.height() >= 13) {
            painter.setPen(ViewPalette::textColorOn(color));
            painter.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignLeft | Qt::AlignVCenter,
                painter.fontMetrics().elidedText(qs(buffer.name), Qt::ElideMiddle, static_cast<int>(r.width()) - 6));
        }
    }
}

void ChipArchitectureCanvas::paintTensorList(QPainter& painter, const QRectF& area, const core::ChipStage& stage, const core::Op& op) const
{
    const auto& graph = *workload->graph;
    QStringList lines { tr("Arena at this step: green = read by this op, red = written by it, gray = other live buffers.") };
    auto describe = [&](core::TensorIndex t, bool output) {
        const auto& tensor = graph.tensors[t];
        QString where;
        const auto& tensors = stage.stage.bufferTensor;
        const auto it = std::find(tensors.begin(), tensors.end(), t);
        if (tensor.kind == core::TensorKind::Weight || tensor.kind == core::TensorKind::Persistent)
            where = tr("weights in MEM");
        else if (it == tensors.end())
            where = tr("not stored (empty)");
        else {
            const auto b = static_cast<std::size_t>(it - tensors.begin());
            where = tr("arena offset %1").arg(sizeText(stage.plan.offsets[b]));
            if (stage.stage.roles[b] == core::StageBufferRole::Received)
                where += tr(", received before the stage");
            else if (stage.stage.roles[b] == core::StageBufferRole::Sent)
                where += tr(", held to send on");
        }
        lines << tr("%1 %2 (%3): %4").arg(output ? tr("writes") : tr("reads "), qs(tensor.name), sizeText(std::max<core::Bytes>(tensor.size, 0)), where);
    };
    for (auto t : op.inputs)
        describe(t, false);
    for (auto t : op.outputs)
        describe(t, true);
    const int maxLines = std::max(1, static_cast<int>(area.height() / 17) - 1);
    if (lines.size() > maxLines) {
        const auto more = lines.size() - maxLines + 1;
        lines = lines.mid(0, maxLines - 1);
        lines << tr("… and %1 more").arg(more);
    }
    painter.setPen(ViewPalette::axisText());
    painter.drawText(area, Qt::AlignLeft | Qt::AlignTop, lines.join(QLatin1Char('\n')));
}

void ChipPerformanceCanvas::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.fillRect(rect(), ViewPalette::background());
    painter.setPen(ViewPalette::axisText());
    struct Row {
        QString label;
        std::vector<double> runs;
        QColor color;
        QString emptyText;
    };
    std::vector<Row> rows { { chipLabel, { chipMs }, QColor(0x4c, 0x72, 0xb0), QString() } };
    for (const auto& series : measured) {
        auto sorted = series.runs;
        std::sort(sorted.begin(), sorted.end());
        rows.push_back({ series.label, std::move(sorted), series.color, series.emptyText });
    }
    // Log axis in ms: the chip's microseconds and the processor's milliseconds both stay readable.
    double lo = chipMs > 0 ? chipMs : 1, hi = chipMs > 0 ? chipMs : 1;
    for (std::size_t r = 1; r < rows.size(); ++r)
        for (double v : rows[r].runs)
            if (v > 0) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
    const double firstDecade = std::floor(std::log10(lo)), lastDecade = std::max(firstDecade + 1, std::ceil(std::log10(hi) + 0.05));
    const QRectF plot(250, 40, width() - 290, std::max(180.0, 66.0 * static_cast<double>(rows.size())));
    auto xOf = [&](double ms) {
        const double d = std::log10(std::max(ms, std::pow(10.0, firstDecade)));
        return plot.left() + plot.width() * (d - firstDecade) / (lastDecade - firstDecade);
    };
    painter.drawText(QRectF(16, 8, width() - 32, 22), Qt::AlignLeft | Qt::AlignVCenter, throughputText);
    for (double d = firstDecade; d <= lastDecade + 1e-9; d += 1) {
        const double ms = std::pow(10.0, d);
        for (int k = 2; k < 10 && d < lastDecade; ++k) { // minor ticks
            painter.setPen(QPen(ViewPalette::gridLine().lighter(110), 1, Qt::DotLine));
            painter.drawLine(QPointF(xOf(ms * k), plot.top()), QPointF(xOf(ms * k), plot.bottom()));
        }
        painter.setPen(QPen(ViewPalette::gridLine(), 1));
        painter.drawLine(QPointF(xOf(ms), plot.top()), QPointF(xOf(ms), plot.bottom()));
        painter.setPen(ViewPalette::axisText());
        painter.drawText(QRectF(xOf(ms) - 40, plot.bottom() + 4, 80, 16), Qt::AlignCenter, QString::number(ms, 'g', 6));
    }
    painter.drawText(QRectF(plot.left(), plot.bottom() + 22, plot.width(), 18), Qt::AlignCenter,
        tr("latency per run (ms, log scale)"));
    // Legend: one swatch per row, below the axis title.
    double legendX = plot.left();
    const QFontMetricsF metrics(painter.font());
    for (const auto& row : rows) {
        painter.setPen(Qt::NoPen);
        painter.setBrush(row.color);
        painter.drawEllipse(QPointF(legendX + 5, plot.bottom() + 52), 4.5, 4.5);
        painter.setPen(ViewPalette::axisText());
        const double textWidth = metrics.horizontalAdvance(row.label) + 4;
        painter.drawText(QRectF(legendX + 14, plot.bottom() + 43, textWidth, 18), Qt::AlignLeft | Qt::AlignVCenter, row.label);
        legendX += 14 + textWidth + 18;
    }
    for (std::size_t r = 0; r < rows.size(); ++r) {
        // The dots and tick lines sit above the row's centre, its statistics line below them.
        const double y = plot.top() + plot.height() * (r + 0.5) / rows.size() - 8;
        painter.setPen(ViewPalette::axisText());
        painter.drawText(QRectF(16, y - 24, plot.left() - 26, 48), Qt::AlignRight | Qt::AlignVCenter | Qt::TextWordWrap, rows[r].label);
        if (rows[r].runs.empty()) {
            painter.drawText(QRectF(plot.left() + 8, y - 10, plot.width() - 16, 20), Qt::AlignLeft | Qt::AlignVCenter,
                rows[r].emptyText);
            continue;
        }
        const auto& runs = rows[r].runs;
        painter.setPen(Qt::NoPen);
        painter.setBrush(rows[r].color);
        for (std::size_t i = 0; i < runs.size(); ++i) // a strip of dots, spread vertically so repeats stay visible
            painter.drawEllipse(QPointF(xOf(runs[i]), y - 14 + 28.0 * static_cast<double>(i % 7) / 6.0), 3.5, 3.5);
        const double p50 = core::percentile(runs, 0.5), p99 = core::percentile(runs, 0.99), max = runs.back();
        painter.setPen(QPen(rows[r].color.darker(150), 2));
        for (double v : { p50, p99, max })
            painter.drawLine(QPointF(xOf(v), y - 20), QPointF(xOf(v), y + 20));
        painter.setPen(ViewPalette::axisText());
        // Three digits in ms, s or us as the size asks ("3.64 s", not "3.64e+03 ms").
        const auto time = [](double ms) { return QString::fromStdString(core::formatSeconds(ms / 1e3)); };
        const QString stats = r == 0 ? tr("p50 = p99 = max = %1 (same every run)").arg(time(p50))
                                     : tr("p50 %1 · p99 %2 · max %3 (%4 runs)").arg(time(p50), time(p99), time(max)).arg(runs.size());
        painter.drawText(QRectF(plot.left() + 6, y + 21, plot.width() - 12, 18), Qt::AlignLeft | Qt::AlignVCenter, stats);
    }
    painter.setPen(QPen(ViewPalette::axisText(), 1));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(plot);
}
