// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "phasebands.h"
#include "stepclock.h"
#include "timeaxis.h"

#include "graph/graph.h"

#include <QSharedPointer>
#include <QStringList>
#include <QWidget>

#include <unordered_map>
#include <vector>

class PlanDocument;
class QCustomPlot;
class QCPGraph;
class QCPLayoutGrid;
class QCPItemRect;
class QCPItemStraightLine;
class QCPAbstractItem;
class QCPAxisTicker;
class QCPTextElement;
class QMouseEvent;
class QWheelEvent;

// Live bytes per step (a step graph) with the arena size and the lower bound as lines, and the
// measured curve and budget line when the document has them (hidden otherwise), and, after strategies,
// the untransformed curve as a dashed "before strategies" line; QCustomPlot.
// After a run (PlanDocument::measurement) two measured series join the legend: the live bytes the
// arena run tracked, and what the allocator held in the per-tensor run; a cuda run with a pool run
// (RunMeasurement::pool) adds a third, what the stream-ordered pool had in use per step.
// A captured step (a graph with tensor categories) is drawn as stacked layers, one per category
// (core/io/breakdown.h categoryCurve: the regions of parameters, gradients and optimizer state at the
// bottom, then the arena's inputs, saved activations, temporaries and outputs), so the curve shows
// all the memory the step holds; every line (arena, lower bound, measured, before strategies, budget)
// is then lifted by the regions' bytes to stay comparable, and the phases (forward, backward,
// optimizer) are marked where they start.
// Shares the document's time axis, cursor and selection: the selected/hovered buffer's lifetime is
// shaded, the cursor is a vertical line; wheel zooms, drag pans, click sets the cursor.
class MemoryCurveView : public QWidget {
    Q_OBJECT
public:
    explicit MemoryCurveView(PlanDocument* document, QWidget* parent = nullptr);

    bool exportImage(const QString& path, QString* error = nullptr);
    QSize sizeHint() const override { return { 1000, 300 }; }
    // The header (title and legend rows) plus a plot of kMinimumPlotHeight and the step axis.
    QSize minimumSizeHint() const override { return { 360, m_minimumHeight }; }

    QCustomPlot* plot() const { return m_plot; }
    ByteUnit unit() const { return m_unit; } // unit of the y axis
    double yMax() const { return m_yMax; }   // top of the y range, in unit()
    bool showsMeasured() const; // the measured curve is drawn (the document has one)
    bool showsKernelScratch() const; // the arena + kernel scratch line of a run with scratch outside the plan
    QStringList legendNames() const; // the legend's entries, top to bottom
    bool showsMeasuredAllocator() const; // the per-tensor allocator curve of a run is drawn
    bool showsMeasuredPool() const; // the pool run's curve is drawn (a measurement with `pool`)
    bool showsReserved() const; // a memory snapshot's reserved curve is drawn (Workload::recorded)
    QCPGraph* comparedGraph() const { return m_compared; } // the compared side's curve (for tests)
    // The pool run's series: its step data, one point per step plus one closing the last (for tests).
    QCPGraph* measuredPoolGraph() const { return m_measuredPool; }
    // Points of the peer profile's in-use curve on display (steps + 1); 0 when it is hidden.
    int peerInUsePoints() const;
    bool showsBudget() const; // the budget line is drawn (the document has one)
    bool showsBefore() const; // the untransformed curve is drawn (strategies were applied)
    // The stacked category layers drawn (a captured step), bottom first; their names (for tests).
    QStringList stackedLayers() const;
    // The labels marked on the step axis, in step order: a captured step's phases ("forward", ...),
    // a memory snapshot's events ("OOM: 2.00 GiB asked, ...").
    QStringList stepMarks() const;
    // A memory snapshot's annotated phases drawn as bands, and how many are named at the current zoom.
    QStringList phaseBands() const { return m_phaseBands.names(); }
    int phaseNamesShown() const { return m_phaseBands.labelsShown(); }
    // Mapping of the plot's x axis to widget pixels (for tests): steps, or seconds on the time axis.
    TimeAxis timeAxis() const;
    // The x axis in seconds since the first event instead of steps (a memory snapshot with event
    // times: canShowTime()); the other views keep the step axis, the cursor and selection still follow.
    void setTimeAxis(bool on);
    bool canShowTime() const;
    bool showsTime() const { return m_clock.timed(); } // on the time axis now
    const StepClock& clock() const { return m_clock; }

protected:
    void keyPressEvent(QKeyEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void fitMemoryTicks(int pixels); // memory ticks for a plot `pixels` high
    // The legend in one row beside the title when both fit in `pixels` of width, else under it in
    // as few rows as fit.
    void fitHeader(int pixels);
    static int plotWidth(int pixels); // the plot's width in a view `pixels` wide

private:
    void rebuild();
    void updateOverlay();
    void updateMeasuredSeries();
    void updateRange();
    void setStepData(QCPGraph* graph, const std::vector<core::Bytes>& curve, double divisor);
    // Hands each step series to its graph for the visible steps drawn `plotPixels` wide (stepEnvelope);
    // -1: the plot's width in the widget.
    void fitSeries(int plotPixels = -1);
    static constexpr int kMinimumColumns = 1024;
    void updateHighlight();
    // Draws the category layers and phase marks of a captured step, or removes them; the bytes the
    // other series are lifted by (the regions), 0 when not stacked.
    core::Bytes rebuildStack(double divisor);
    void onWheel(QWheelEvent* event);
    void onPress(QMouseEvent* event);
    void onMove(QMouseEvent* event);
    void onRelease(QMouseEvent* event);
    double stepAt(double x) const;

    PlanDocument* m_document;
    QCustomPlot* m_plot;
    QCPTextElement* m_title;
    QCPLayoutGrid* m_header; // the title, then the legend beside it or under it (fitHeader)
    QCPGraph* m_live;
    QCPGraph* m_liveLeast; // zoomed out: the least live bytes of each pixel column (fitSeries)
    QCPGraph* m_arena;
    QCPGraph* m_lower;
    QCPGraph* m_scratch = nullptr;
    QCPGraph* m_measured;
    QCPGraph* m_measuredAllocator; // per-tensor run: bytes malloc held per step
    QCPGraph* m_reserved;          // memory snapshot: bytes the allocator's segments reserved per step
    QCPGraph* m_measuredPool;      // cuda pool run: bytes in use from the stream-ordered pool per step
    QCPGraph* m_peerInUse;         // peer profile (ONNX Runtime): its arena's bytes in use per step
    QCPGraph* m_peerHeld;          // and the bytes its arena held
    QCPGraph* m_compared;          // another snapshot or model's live bytes on this axis (PlanDocument::comparison)
    QCPGraph* m_budget;
    QCPGraph* m_before; // live bytes before strategies, on the new schedule's steps (alignBeforeCurve)
    StepClock m_clock; // where steps sit on the x axis
    bool m_timeAxis = false; // asked for (setTimeAxis); shown when the workload has event times
    QSharedPointer<QCPAxisTicker> m_stepTicker, m_secondsTicker;
    std::unordered_map<QCPGraph*, std::vector<double>> m_stepValues; // each step series, in m_unit, whole
    std::vector<QCPGraph*> m_layers; // stacked category layers, bottom first (a captured step)
    // Draws a dashed line at step x (when `line`) and a label "text ▸" at the top of the plot.
    void addStepMark(double step, const QString& text, const QColor& color, bool line);
    std::vector<QCPAbstractItem*> m_markItems; // step marks: their lines and labels
    PhaseBands m_phaseBands; // a memory snapshot's annotated phases, behind the curves
    QCPItemStraightLine* m_cursor;
    QCPItemRect* m_selectedBand;
    QCPItemRect* m_hoveredBand;
    ByteUnit m_unit;
    double m_yMax = 1;
    static constexpr int kMinimumPlotHeight = 72; // pixels of curve the header may never take
    static constexpr int kStepAxisHeight = 70;    // the step axis (ticks, labels, its title) and the plot's margins
    int m_minimumHeight = 160;
    core::Bytes m_lift = 0; // bytes every series is lifted by (the regions of a stacked captured step)
    enum class Drag { None, Pan, Cursor } m_drag = Drag::None;
    QPointF m_pressPos;
    double m_pressFirst = 0, m_pressLast = 0;
    bool m_moved = false;
};
