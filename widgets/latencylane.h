// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "timelineview.h"

#include <vector>

namespace core {
struct Measurement;
}

// Per-op latency of the last run, one bar per step on the shared time axis (so it lines up with the
// lifetime bars and the memory curve above it): the bar is the op's median time in the run chosen
// (planned arena by default; per-tensor, or on cuda the stream-ordered pool, from the context menu),
// colored by kernel (real or synthetic); a tick marks the same op's median in the run it is compared
// with (the arena run; for the arena run itself, the per-tensor run), and an orange tick the op's
// roofline bound on the run's cost profile (RunMeasurement::rooflineStepMs). Value axis in
// milliseconds on the left, shared by all so bars and ticks compare. Hover shows the op's numbers in every run.
// Hidden until the document has a measurement (it then shows itself), so it takes no room before a run.
class LatencyLane : public TimelineView {
    Q_OBJECT
public:
    enum class Run { Arena, PerTensor, Pool };

    explicit LatencyLane(PlanDocument* document, QWidget* parent = nullptr);

    // The run the bars show. Pool is kept as the choice without a pool run, but the arena is drawn
    // (shownRun()) until a measurement with one arrives.
    void setRun(Run run);
    Run chosenRun() const { return m_choice; }
    Run shownRun() const;
    static QString runName(Run run); // "arena", "per-tensor", "pool"

    QSize sizeHint() const override { return { 1000, 150 }; }
    QSize minimumSizeHint() const override { return { 360, 120 }; }

    int entryCount() const { return static_cast<int>(m_barMs.size()); } // one per op (step) when measured
    double maxMs() const { return m_maxMs; } // top of the value axis
    double barMs(int step) const { return step >= 0 && step < entryCount() ? m_barMs[static_cast<std::size_t>(step)] : 0; }
    // The op's roofline bound (0 when the run carries none).
    double rooflineMs(int step) const
    {
        return step >= 0 && step < static_cast<int>(m_rooflineMs.size()) ? m_rooflineMs[static_cast<std::size_t>(step)] : 0;
    }
    // Tooltip text for the op at `step` ("" when there is none).
    QString stepToolTip(int step) const;

protected:
    void rebuild() override;
    QString caption() const override;
    int paintLegend(QPainter& painter, const QRect& area, const Frame& frame) const override;
    void paintPlot(QPainter& painter, const Frame& frame) const override;
    void paintLabels(QPainter& painter, const Frame& frame) const override;
    int bufferAt(const Frame& frame, QPointF pos) const override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;

private:
    Run tickRun() const; // the run the ticks show
    const core::Measurement* measurementOf(Run run) const; // null when the document has no such run

    Run m_choice = Run::Arena;
    std::vector<double> m_barMs, m_tickMs, m_rooflineMs; // per step, milliseconds
    std::vector<bool> m_real;              // per step: a real kernel ran (in the run the bars show)
    double m_maxMs = 0;
};
