// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"
#include "timelineview.h"

#include <QColor>

#include <utility>
#include <vector>

// Left-edge interval-graph coloring: buffers in order of start (ties: input order) take the lowest
// color whose previous buffer has ended. Uses exactly maxOverlapDepth() colors. Buffers of size 0
// or with an empty lifetime get -1 (they take no slot), as in Plan::colors. O(n log n). Pure.
std::vector<int> leftEdgeColoring(const core::PlanProblem& problem);

// The shared-objects view: one row ("room") per color, each holding its buffers over time; a
// buffer's bar height is its share of the slot (a slot is as large as its largest guest), so the
// waste inside a slot is visible. Uses Plan::colors; for plans without slots, computes a left-edge
// coloring for display only and says so in the caption.
class ColoringView : public TimelineView {
    Q_OBJECT
public:
    explicit ColoringView(PlanDocument* document, QWidget* parent = nullptr);

    bool usesPlanColors() const { return m_planColors; }
    int slotCount() const { return static_cast<int>(m_slots.size()); }
    int colorOf(int buffer) const;
    int rowHeight(const Frame& frame) const;
    QRectF bufferRect(const Frame& frame, int buffer) const; // widget pixels; empty if it has no slot

protected:
    void rebuild() override;
    QString caption() const override;
    int paintLegend(QPainter& painter, const QRect& area, const Frame& frame) const override;
    void paintPlot(QPainter& painter, const Frame& frame) const override;
    void paintLabels(QPainter& painter, const Frame& frame) const override;
    int bufferAt(const Frame& frame, QPointF pos) const override;
    int contentHeight(const Frame& frame) const override;
    int rowCount() const override;
    void revealBuffer(int buffer) override;

private:
    struct Slot {
        std::vector<int> buffers; // by start; lifetimes do not overlap, so also by end
        std::vector<core::Step> ends;
        core::Bytes size = 0; // largest member
    };
    std::vector<int> m_colors; // per buffer
    std::pair<int, int> rowsInView(const Frame& frame) const; // first and last row at least partly shown
    std::vector<Slot> m_slots;
    bool m_planColors = false;
};
