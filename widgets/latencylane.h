// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "timelineview.h"

#include <vector>

// Per-op latency of the last run, one bar per step on the shared time axis (so it lines up with the
// lifetime bars and the memory curve above it): the bar is the op's median time in the planned-arena
// run, colored by kernel (real or synthetic); a dark tick marks the same op's median in the
// per-tensor allocator run. Value axis in milliseconds on the left. Hover shows the op's numbers.
// Hidden until the document has a measurement (it then shows itself), so it takes no room before a run.
class LatencyLane : public TimelineView {
    Q_OBJECT
public:
    explicit LatencyLane(PlanDocument* document, QWidget* parent = nullptr);

    QSize sizeHint() const override { return { 1000, 150 }; }
    QSize minimumSizeHint() const override { return { 360, 120 }; }

    int entryCount() const { return static_cast<int>(m_arenaMs.size()); } // one per op (step) when measured
    double maxMs() const { return m_maxMs; } // top of the value axis
    // Tooltip text for the op at `step` ("" when there is none).
    QString stepToolTip(int step) const;

protected:
    void rebuild() override;
    QString caption() const override;
    int paintLegend(QPainter& painter, const QRect& area) const override;
    void paintPlot(QPainter& painter, const Frame& frame) const override;
    void paintLabels(QPainter& painter, const Frame& frame) const override;
    int bufferAt(const Frame& frame, QPointF pos) const override;
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    std::vector<double> m_arenaMs, m_perTensorMs; // per step, milliseconds
    std::vector<bool> m_real;                     // per step: a real kernel ran
    double m_maxMs = 0;
};
