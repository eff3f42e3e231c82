// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "tensortablemodel.h"

#include "buffercolors.h"
#include "plandocument.h"

#include "graph/capture.h"
#include "io/breakdown.h"
#include "util/format.h"

#include <algorithm>

namespace {

const QString kNone = QStringLiteral("—");

QString fromStd(std::string_view text) { return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size())); }

QString opLabel(const core::Graph& graph, core::OpIndex op)
{
    const auto& o = graph.ops[static_cast<std::size_t>(op)];
    return o.name.empty() ? fromStd(o.type) + QLatin1Char('#') + QString::number(op) : fromStd(o.name);
}

// "float32 1×3×224×224": element type and shape; ? for a dimension (or rank) import could not
// infer, "(upper bound)" when the shape is a data-dependent estimate, "(estimate)" for a sequence's
// bytes; "—" without a tensor.
QString typeLabel(const core::Graph& graph, core::TensorIndex t)
{
    if (t < 0 || static_cast<std::size_t>(t) >= graph.tensors.size())
        return kNone;
    const auto& tensor = graph.tensors[static_cast<std::size_t>(t)];
    const QString text = fromStd(core::tensorTypeText(tensor, "\u00D7"));
    if (tensor.sequence)
        return text + QStringLiteral(" (estimate)");
    return core::sizeIsBound(tensor) ? text + QStringLiteral(" (upper bound)") : text;
}

} // namespace

TensorTableModel::TensorTableModel(PlanDocument* document, QObject* parent)
    : QAbstractTableModel(parent)
    , m_document(document)
{
    connect(document, &PlanDocument::workloadChanged, this, &TensorTableModel::rebuild);
    connect(document, &PlanDocument::planChanged, this, &TensorTableModel::planUpdated);
    rebuild();
}

void TensorTableModel::rebuild()
{
    beginResetModel();
    m_types.clear();
    m_producers.clear();
    m_consumers.clear();
    m_consumerCounts.clear();
    m_bodyRows.clear();
    m_firstRow.clear();
    const core::Workload* workload = m_document->workload();
    m_nestedOf = m_document->sharedWorkload();
    m_nested = workload ? nestedGraphs(*workload) : std::vector<NestedGraph> {};
    m_outerRows = workload ? static_cast<int>(workload->problem.buffers.size()) : 0;
    m_captured = workload && workload->graph && core::hasCategories(*workload->graph);
    m_recorded = workload && workload->recorded && workload->recorded->stream.size() == static_cast<std::size_t>(m_outerRows);
    if (workload && workload->graph && workload->bufferTensor.size() == static_cast<std::size_t>(m_outerRows)) {
        describe(*workload->graph, workload->schedule, workload->bufferTensor, workload->bufferOp, m_outerRows);
    } else {
        for (int row = 0; row < m_outerRows; ++row) {
            m_types << (m_recorded ? QStringLiteral("stream %1").arg(workload->recorded->stream[static_cast<std::size_t>(row)]) : kNone);
            m_producers << kNone;
            m_consumers << kNone;
            m_consumerCounts.push_back(0);
        }
    }
    int rows = m_outerRows;
    for (int g = 0; g < static_cast<int>(m_nested.size()); ++g) {
        const core::NestedPlan& plan = *m_nested[static_cast<std::size_t>(g)].plan;
        const int count = static_cast<int>(plan.built.problem.buffers.size());
        m_firstRow.push_back(rows);
        for (int b = 0; b < count; ++b)
            m_bodyRows.push_back({ g, b });
        rows += count;
        if (plan.graph && plan.built.bufferTensor.size() == static_cast<std::size_t>(count))
            describe(*plan.graph, plan.schedule, plan.built.bufferTensor, plan.built.bufferOp, count);
        else
            for (int b = 0; b < count; ++b) {
                m_types << kNone;
                m_producers << kNone;
                m_consumers << kNone;
                m_consumerCounts.push_back(0);
            }
    }
    m_rows = rows;
    endResetModel();
}

void TensorTableModel::describe(const core::Graph& graph, const core::Schedule& schedule,
    const std::vector<core::TensorIndex>& bufferTensor, const std::vector<core::OpIndex>& bufferOp, int count)
{
    // Step of each op in the schedule, so consumers read in execution order.
    std::vector<core::Step> stepOf(graph.ops.size(), -1);
    for (std::size_t s = 0; s < schedule.order.size(); ++s)
        stepOf[static_cast<std::size_t>(schedule.order[s])] = static_cast<core::Step>(s);
    std::vector<std::vector<core::OpIndex>> readers(graph.tensors.size());
    for (std::size_t op = 0; op < graph.ops.size(); ++op) {
        for (const auto* list : { &graph.ops[op].inputs, &graph.ops[op].captured })
            for (core::TensorIndex t : *list)
                if (t >= 0 && static_cast<std::size_t>(t) < readers.size())
                    readers[static_cast<std::size_t>(t)].push_back(static_cast<core::OpIndex>(op));
    }
    const auto producerOf = core::producers(graph);
    for (int row = 0; row < count; ++row) {
        const core::TensorIndex t = bufferTensor[static_cast<std::size_t>(row)];
        m_types << typeLabel(graph, t);
        const core::OpIndex owner = static_cast<std::size_t>(row) < bufferOp.size() ? bufferOp[static_cast<std::size_t>(row)] : -1;
        if (t < 0 && owner >= 0 && static_cast<std::size_t>(owner) < graph.ops.size()) {
            // An op's workspace: the op writes and reads it while it runs, and nothing else does.
            m_producers << opLabel(graph, owner);
            m_consumers << opLabel(graph, owner);
            m_consumerCounts.push_back(1);
            continue;
        }
        if (t < 0 || static_cast<std::size_t>(t) >= graph.tensors.size()) {
            m_producers << kNone;
            m_consumers << kNone;
            m_consumerCounts.push_back(0);
            continue;
        }
        const core::OpIndex producer = producerOf[static_cast<std::size_t>(t)];
        m_producers << (producer >= 0 ? opLabel(graph, producer) : QStringLiteral("(graph input)"));
        auto ops = readers[static_cast<std::size_t>(t)];
        std::sort(ops.begin(), ops.end(), [&](core::OpIndex a, core::OpIndex b) { return stepOf[a] < stepOf[b]; });
        ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
        QStringList names;
        constexpr int kShown = 4;
        for (std::size_t i = 0; i < ops.size() && i < kShown; ++i)
            names << opLabel(graph, ops[i]);
        QString text = ops.empty() ? kNone : names.join(QStringLiteral(", "));
        if (ops.size() > kShown)
            text += QStringLiteral(" +%1 more").arg(ops.size() - kShown);
        m_consumers << text;
        m_consumerCounts.push_back(static_cast<int>(ops.size()));
    }
}

int TensorTableModel::rowOf(int graph, int buffer) const
{
    if (graph < 0)
        return buffer >= 0 && buffer < m_outerRows ? buffer : -1;
    if (graph >= static_cast<int>(m_firstRow.size()) || buffer < 0
        || buffer >= static_cast<int>(m_nested[static_cast<std::size_t>(graph)].plan->built.problem.buffers.size()))
        return -1;
    return m_firstRow[static_cast<std::size_t>(graph)] + buffer;
}

void TensorTableModel::planUpdated()
{
    if (m_rows > 0)
        emit dataChanged(index(0, Offset), index(m_rows - 1, Color));
}

int TensorTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : m_rows; }

int TensorTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant TensorTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const core::Workload* workload = m_document->workload();
    if (!workload)
        return {};
    if (index.row() >= m_outerRows)
        return bodyData(index, role);
    if (index.row() >= static_cast<int>(workload->problem.buffers.size()))
        return {};
    const int row = index.row();
    const core::Buffer& buffer = workload->problem.buffers[static_cast<std::size_t>(row)];
    const core::Plan* plan = m_document->plan();
    const bool hasOffset = plan && static_cast<std::size_t>(row) < plan->offsets.size();
    const int color = plan && static_cast<std::size_t>(row) < plan->colors.size() ? plan->colors[row] : -1;

    switch (role) {
    case BufferRole:
        return row;
    case NestedGraphRole:
    case NestedBufferRole:
        return -1;
    case KindRole:
        return static_cast<int>(buffer.kind);
    case SizeBytesRole:
        return static_cast<qint64>(buffer.size);
    case CategorySlotRole:
        return bufferCategorySlot(*workload, row);
    case ModuleRole:
        return bufferModule(*workload, row);
    case Qt::TextAlignmentRole:
        if (index.column() >= Start)
            return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        return QVariant::fromValue(Qt::Alignment(Qt::AlignLeft | Qt::AlignVCenter));
    case Qt::ToolTipRole:
        if (index.column() == Consumers || index.column() == Name) {
            QString tip = fromStd(buffer.name);
            if (buffer.tensors.size() > 1) {
                QStringList names;
                for (const auto& t : buffer.tensors)
                    names << fromStd(t);
                tip += QStringLiteral("\nshares its buffer with: ") + names.join(QStringLiteral(", "));
            }
            if (index.column() == Consumers)
                tip = QStringLiteral("%1 consumer(s): %2").arg(m_consumerCounts[row]).arg(m_consumers[row]);
            return tip;
        }
        if (index.column() == Size)
            return QStringLiteral("%L1 bytes").arg(buffer.size);
        if (index.column() == Offset && hasOffset)
            return QStringLiteral("at byte %L1 of the arena").arg(plan->offsets[row]);
        if (index.column() == Type || index.column() == Producer || (index.column() == Module && m_recorded))
            return data(index, Qt::DisplayRole); // the whole text where the column shortens it
        return {};
    case Qt::DisplayRole:
    case SortRole:
        break;
    default:
        return {};
    }

    const bool sort = role == SortRole;
    switch (index.column()) {
    case Name:
        return fromStd(buffer.name);
    case Subgraph:
        return QString(); // the workload's own graph
    case Kind:
        return fromStd(core::kindName(buffer.kind));
    case Category: {
        const int slot = bufferCategorySlot(*workload, row);
        return slot == core::kOtherSlot ? kNone : fromStd(core::breakdownSlotName(slot));
    }
    case Module: {
        if (!m_captured && !m_recorded)
            return kNone;
        const QString module = bufferModule(*workload, row);
        return module.isEmpty() ? (m_recorded ? QStringLiteral("(no frames)") : QStringLiteral("(top level)")) : module;
    }
    case Type:
    case Producer:
    case Consumers:
    case Start:
    case End:
    case Size:
    case Offset:
        return bufferCell(index.column(), row, buffer, sort, hasOffset ? plan->offsets[row] : -1);
    case Color:
        if (color < 0)
            return sort ? QVariant(-1) : QVariant(kNone);
        return color;
    default:
        return {};
    }
}

QVariant TensorTableModel::bufferCell(int column, int row, const core::Buffer& buffer, bool sort, core::Bytes offset) const
{
    switch (column) {
    case Type:
        return m_types.value(row);
    case Producer:
        return m_producers.value(row);
    case Consumers:
        return sort ? QVariant(m_consumerCounts[row]) : QVariant(m_consumers.value(row));
    case Start:
        return buffer.lifetime.start;
    case End:
        return buffer.lifetime.end;
    case Size:
        return sort ? QVariant(static_cast<qint64>(buffer.size))
                    : QVariant(QString::fromStdString(core::formatBytes(buffer.size)));
    case Offset:
        if (offset < 0)
            return sort ? QVariant(qint64(-1)) : QVariant(kNone);
        // In the units of the Size column beside it; the exact bytes are in the tooltip.
        return sort ? QVariant(static_cast<qint64>(offset)) : QVariant(QString::fromStdString(core::formatBytes(offset)));
    default:
        return {};
    }
}

QVariant TensorTableModel::bodyData(const QModelIndex& index, int role) const
{
    const std::size_t at = static_cast<std::size_t>(index.row() - m_outerRows);
    if (at >= m_bodyRows.size())
        return {};
    const int row = index.row();
    const BodyRow body = m_bodyRows[at];
    const NestedGraph& graph = m_nested[static_cast<std::size_t>(body.graph)];
    const core::NestedPlan& plan = *graph.plan;
    const core::Buffer& buffer = plan.built.problem.buffers[static_cast<std::size_t>(body.buffer)];
    const bool hasOffset = static_cast<std::size_t>(body.buffer) < plan.plan.offsets.size();
    const core::Bytes offset = hasOffset ? plan.plan.offsets[static_cast<std::size_t>(body.buffer)] : -1;
    switch (role) {
    case BufferRole:
        return graph.outerBuffer; // the block that holds it, for the views' selection
    case NestedGraphRole:
        return body.graph;
    case NestedBufferRole:
        return body.buffer;
    case KindRole:
        return static_cast<int>(buffer.kind);
    case SizeBytesRole:
        return static_cast<qint64>(buffer.size);
    case CategorySlotRole:
        return core::kOtherSlot;
    case ModuleRole:
        return QString();
    case Qt::TextAlignmentRole:
        if (index.column() >= Start)
            return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        return QVariant::fromValue(Qt::Alignment(Qt::AlignLeft | Qt::AlignVCenter));
    case Qt::ToolTipRole:
        switch (index.column()) {
        case Name:
            return fromStd(buffer.name);
        case Subgraph:
            return QStringLiteral("%1: %2 steps, arena %3%4")
                .arg(graph.path)
                .arg(plan.built.problem.steps)
                .arg(QString::fromStdString(core::formatBytes(plan.plan.arenaSize)),
                    plan.decides ? QStringLiteral(", decides its op's reservation") : QString());
        case Consumers:
            return QStringLiteral("%1 consumer(s): %2").arg(m_consumerCounts[row]).arg(m_consumers[row]);
        case Size:
            return QStringLiteral("%L1 bytes").arg(buffer.size);
        case Start:
        case End:
            return QStringLiteral("a step of %1 (%2 steps), which runs at step %3 of the graph around")
                .arg(graph.path)
                .arg(plan.built.problem.steps)
                .arg(plan.step);
        case Offset: {
            if (!hasOffset)
                return {};
            QString tip = QStringLiteral("at byte %L1 of the arena of %2").arg(offset).arg(graph.path);
            if (const core::Plan* outer = m_document->plan(); outer && graph.outerBuffer >= 0)
                tip += QStringLiteral("; byte %L1 of the arena").arg(outer->offsets[static_cast<std::size_t>(graph.outerBuffer)] + graph.baseInOuter + offset);
            return tip;
        }
        case Type:
        case Producer:
            return bodyData(index, Qt::DisplayRole);
        default:
            return {};
        }
    case Qt::DisplayRole:
    case SortRole:
        break;
    default:
        return {};
    }
    const bool sort = role == SortRole;
    switch (index.column()) {
    case Name:
        return fromStd(buffer.name);
    case Subgraph:
        return graph.path;
    case Kind:
        return fromStd(core::kindName(buffer.kind));
    case Category:
    case Module:
        return kNone;
    case Type:
    case Producer:
    case Consumers:
    case Start:
    case End:
    case Size:
    case Offset:
        return bufferCell(index.column(), row, buffer, sort, hasOffset ? offset : -1);
    case Color:
        return sort ? QVariant(-1) : QVariant(kNone);
    default:
        return {};
    }
}

QVariant TensorTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole) {
        static const char* const titles[]
            = { "Name", "Subgraph", "Kind", "Category", "Module", "Type", "Producer", "Consumers", "Start", "End", "Size", "Offset", "Color" };
        if (m_recorded && section == Module)
            return QStringLiteral("Allocated at");
        if (m_recorded && section == Type)
            return QStringLiteral("Stream");
        return QString::fromLatin1(titles[section]);
    }
    if (role == Qt::ToolTipRole) {
        if (m_recorded && section == Module)
            return QStringLiteral("Where the allocation was made: its most recent Python frame (file:line function)");
        if (m_recorded && section == Type)
            return QStringLiteral("The CUDA stream the allocation was made on");
        static const char* const tips[] = { "Buffer (tensor) name",
            "The control-flow op's graph the buffer is planned in (op / attribute; deeper: Loop_3 / body / If_2 / "
            "else_branch); empty for the model's own graph. Such a buffer's Start and End are steps of that graph, its "
            "Offset is in that graph's arena",
            "input, output, weight, activation or persistent",
            "A captured step's category: input, parameter, buffer, gradient, optimizer_state, saved, temporary or output",
            "The module that made the tensor (a captured step)",
            "Element type and shape of the tensor (? for a dimension import could not infer)", "Op that produces the tensor", "Ops that read the tensor, in schedule order",
            "First step the buffer is live (inclusive)", "Step the buffer is freed (exclusive: live over [start, end))",
            "Size after alignment",
            "Offset in the arena; for a buffer of a control-flow op's graph, in that graph's arena (exact bytes, and where "
            "it lies in the arena, in the tooltip)", "Shared-object slot (coloring planner)" };
        return QString::fromLatin1(tips[section]);
    }
    return QAbstractTableModel::headerData(section, orientation, role);
}

TensorFilterProxyModel::TensorFilterProxyModel(QObject* parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(TensorTableModel::SortRole);
    setSortCaseSensitivity(Qt::CaseInsensitive);
}

void TensorFilterProxyModel::setNameFilter(const QString& text)
{
    if (text == m_name)
        return;
    m_name = text;
    invalidateFilter();
}

void TensorFilterProxyModel::setKindFilter(std::optional<core::TensorKind> kind)
{
    if (kind == m_kind)
        return;
    m_kind = kind;
    invalidateFilter();
}

void TensorFilterProxyModel::setCategoryFilter(std::optional<int> slot)
{
    if (slot == m_category)
        return;
    m_category = slot;
    invalidateFilter();
}

void TensorFilterProxyModel::setMinimumSize(core::Bytes bytes)
{
    if (bytes == m_minimumSize)
        return;
    m_minimumSize = bytes;
    invalidateFilter();
}

bool TensorFilterProxyModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    const QModelIndex index = sourceModel()->index(sourceRow, TensorTableModel::Name, sourceParent);
    if (m_kind && index.data(TensorTableModel::KindRole).toInt() != static_cast<int>(*m_kind))
        return false;
    if (m_category && index.data(TensorTableModel::CategorySlotRole).toInt() != *m_category)
        return false;
    if (m_minimumSize > 0 && index.data(TensorTableModel::SizeBytesRole).toLongLong() < m_minimumSize)
        return false;
    return m_name.isEmpty() || index.data(Qt::DisplayRole).toString().contains(m_name, Qt::CaseInsensitive)
        || index.data(TensorTableModel::ModuleRole).toString().contains(m_name, Qt::CaseInsensitive)
        || index.siblingAtColumn(TensorTableModel::Subgraph).data(Qt::DisplayRole).toString().contains(m_name, Qt::CaseInsensitive);
}
