// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "nestedgraphs.h"

#include "graph/graph.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

class PlanDocument;

// The lifecycle tracking table: one row per buffer of the document's problem (row == buffer index),
// with producer op and consumers taken from the graph and schedule when there is one ("—" for bare
// allocation problems), and the element type and shape of the buffer's tensor ("uint8 1×96×112×112":
// what tells a quantized model's 8-bit tensors from its float ones). Resets on a new workload; a new plan only changes the offset and color columns.
// After the workload's buffers come those of its control-flow ops' graphs (nestedGraphs(): every
// level, each graph's buffers in its problem's order), named by the Subgraph column ("If_1 /
// then_branch"), with their producers and consumers in that graph, its steps and their offsets in
// its arena; their BufferRole is the workload buffer that holds them (the "<op> body" at depth 0).
class TensorTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    // Category and Module: a captured step's tensor category and the module that made it ("—" otherwise).
    enum Column { Name, Subgraph, Kind, Category, Module, Type, Producer, Consumers, Start, End, Size, Offset, Color, ColumnCount };
    enum Role {
        SortRole = Qt::UserRole + 1, // numbers as qint64 (sizes in bytes), text as QString
        BufferRole, // buffer index (int)
        KindRole, // core::TensorKind as int
        SizeBytesRole, // size in bytes (qint64)
        CategorySlotRole, // category slot (core/io/breakdown.h; kOtherSlot without a category), int
        ModuleRole, // module path (QString, empty at top level or without a capture)
        NestedGraphRole, // a body row: its graph's index in nestedGraphs(); -1 for the workload's buffers
        NestedBufferRole, // a body row: the buffer's index in its graph's problem; -1 for the workload's buffers
    };

    explicit TensorTableModel(PlanDocument* document, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    bool captured() const { return m_captured; } // a captured step: the Category and Module columns mean something
    // A memory snapshot: the Module column is the allocation site ("Allocated at"), Type the stream.
    bool recorded() const { return m_recorded; }
    bool hasBodies() const { return !m_bodyRows.empty(); } // the Subgraph column means something
    const std::vector<NestedGraph>& nested() const { return m_nested; }
    // The row of buffer `buffer` of graph `graph` (nestedGraphs()); graph -1: the workload's buffer. -1 if none.
    int rowOf(int graph, int buffer) const;

private:
    void rebuild();
    void planUpdated();
    QVariant bodyData(const QModelIndex& index, int role) const; // a row past the workload's buffers
    // The columns a workload's and a body's rows share (Type to Offset) for `buffer` at `row`;
    // `offset` its planned offset, -1 for none.
    QVariant bufferCell(int column, int row, const core::Buffer& buffer, bool sort, core::Bytes offset) const;

    // Appends what the columns show for the `count` buffers of a graph's problem.
    void describe(const core::Graph& graph, const core::Schedule& schedule, const std::vector<core::TensorIndex>& bufferTensor,
        const std::vector<core::OpIndex>& bufferOp, int count);

    PlanDocument* m_document;
    int m_rows = 0;
    int m_outerRows = 0; // the workload's buffers; the body rows follow
    std::vector<NestedGraph> m_nested; // points into m_nestedOf
    std::shared_ptr<const core::Workload> m_nestedOf;
    struct BodyRow {
        int graph;
        int buffer;
    };
    std::vector<BodyRow> m_bodyRows; // per row past m_outerRows
    std::vector<int> m_firstRow;     // per graph in m_nested: the row of its first buffer
    QStringList m_types;     // per buffer: element type and shape, "—" when unknown
    QStringList m_producers; // per buffer
    QStringList m_consumers; // per buffer, display text
    std::vector<int> m_consumerCounts;
    bool m_captured = false; // the graph has categories: the Module column shows "(top level)" for ""
    bool m_recorded = false; // Workload::recorded
};

// Filters the table by a substring of the name, module or subgraph (case-insensitive), one kind, one category
// slot and a minimum size in bytes;
// sorts through TensorTableModel::SortRole so sizes sort by bytes, not by their text.
class TensorFilterProxyModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit TensorFilterProxyModel(QObject* parent = nullptr);

    void setNameFilter(const QString& text);
    void setKindFilter(std::optional<core::TensorKind> kind); // nullopt: every kind
    void setCategoryFilter(std::optional<int> slot); // nullopt: every category
    void setMinimumSize(core::Bytes bytes);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QString m_name;
    std::optional<core::TensorKind> m_kind;
    std::optional<int> m_category;
    core::Bytes m_minimumSize = 0;
};
