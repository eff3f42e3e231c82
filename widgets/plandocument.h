// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/workload.h"
#include "planners/metrics.h"
#include "planners/problem.h"

#include <QObject>
#include <QString>

#include <memory>
#include <optional>

struct StrategyFacts;
struct RunMeasurement;
struct PeerProfile;
struct ComparedTrace;

// The one state every Studio view reads (docs/ARCHITECTURE.md: "a view never recomputes a plan"): the loaded
// workload, the current plan with its metrics, the shared selection, hover, step cursor and the
// shared visible step range (one time axis for all views). Lives on the UI thread; views connect to
// its signals and repaint. Buffer indices refer to workload()->problem.buffers.
class PlanDocument : public QObject {
    Q_OBJECT
public:
    explicit PlanDocument(QObject* parent = nullptr);

    bool hasPlan() const { return m_workload && m_plan; }
    const core::Workload* workload() const { return m_workload.get(); }
    std::shared_ptr<const core::Workload> sharedWorkload() const { return m_workload; }
    const core::Plan* plan() const { return m_plan ? &*m_plan : nullptr; }
    const core::PlanMetrics& metrics() const { return m_metrics; }
    const std::vector<core::Bytes>& liveCurve() const { return m_liveCurve; } // live bytes per step
    core::Step steps() const { return m_workload ? m_workload->problem.steps : 0; }
    // Per buffer: its size is an upper bound (a tensor's shape depends on the data: NonZero, NMS, ...).
    const std::vector<bool>& boundedBuffers() const { return m_bounded; }
    bool anyBounded() const { return m_anyBounded; }

    int selectedBuffer() const { return m_selected; } // -1: none
    int hoveredBuffer() const { return m_hovered; }   // -1: none
    core::Step cursorStep() const { return m_cursor; } // -1: none
    // Visible part of the shared time axis, in steps (fractional while zooming): [first, last].
    double firstVisibleStep() const { return m_firstVisible; }
    double lastVisibleStep() const { return m_lastVisible; }

    // A measured per-step memory curve and a budget line, filled by later features; empty/0 when absent.
    const std::vector<core::Bytes>& measuredCurve() const { return m_measured; }
    core::Bytes budget() const { return m_budget; }

    // Strategies (StrategyPanel): what they did to the workload on display, for the views' marks and
    // the before/after memory curve. Null unless the facts belong to the current workload, so a newly
    // loaded or an untransformed model never shows stale marks.
    const StrategyFacts* strategyFacts() const;
    // --- Measured run (see RunController) ---
    // The latest run of the plan on display, or null. Its arena run's step bytes are the measured
    // curve; its per-tensor run's are the allocator curve. Dropped when the workload or plan changes.
    const RunMeasurement* measurement() const { return m_measurement.get(); }
    std::shared_ptr<const RunMeasurement> sharedMeasurement() const { return m_measurement; }
    // Bytes the C allocator held per step in the per-tensor run; empty without a measurement.
    const std::vector<core::Bytes>& measuredAllocatorCurve() const { return m_measuredAllocator; }
    // What a peer runtime (ONNX Runtime) measured for this model, laid over the workload on display;
    // null when none is, or it was laid over another workload. Kept across plans, dropped with the workload.
    const PeerProfile* peerProfile() const;
    // Another snapshot or model diffed against the workload on display (File > Compare With…); null
    // when there is none or it was made for another workload.
    const ComparedTrace* comparison() const;

public slots:
    // A new workload drops the plan, selection, cursor and measurement, and resets the visible range to all steps.
    void setWorkload(std::shared_ptr<const core::Workload> workload);
    // The plan must belong to the current workload (same buffer count); selection and cursor are kept,
    // a measurement of the previous plan is dropped.
    void setPlan(core::Plan plan);
    void selectBuffer(int buffer);
    void hoverBuffer(int buffer);
    void setCursorStep(core::Step step); // clamped to [0, steps); -1 clears
    void setVisibleSteps(double first, double last);
    void fitVisibleSteps();
    void setMeasuredCurve(std::vector<core::Bytes> curve);
    void setBudget(core::Bytes budget);
    // Set before setWorkload(facts->workload) so views rebuilding on workloadChanged see them; null clears.
    void setStrategyFacts(std::shared_ptr<const StrategyFacts> facts);
    // A measurement of the plan on display (same workload); null clears it.
    void setMeasurement(std::shared_ptr<const RunMeasurement> measurement);
    // A peer profile laid over the workload on display (PeerProfile::workload); null clears it.
    void setPeerProfile(std::shared_ptr<const PeerProfile> profile);
    // A comparison made for the workload on display (ComparedTrace::workload); null clears it.
    void setComparison(std::shared_ptr<const ComparedTrace> comparison);

signals:
    void workloadChanged();
    void planChanged();
    void selectionChanged(int buffer);
    void hoverChanged(int buffer);
    void cursorChanged(core::Step step);
    void visibleStepsChanged(double first, double last);
    void overlayChanged(); // measured curve, budget or peer profile
    void strategyFactsChanged();
    void measurementChanged(); // set, or dropped with a new workload/plan

private:
    void clearMeasurement(); // without signals

    std::shared_ptr<const core::Workload> m_workload;
    std::optional<core::Plan> m_plan;
    core::PlanMetrics m_metrics;
    std::vector<core::Bytes> m_liveCurve;
    std::vector<bool> m_bounded;
    bool m_anyBounded = false;
    std::vector<core::Bytes> m_measured;
    core::Bytes m_budget = 0;
    std::shared_ptr<const StrategyFacts> m_strategyFacts;
    std::shared_ptr<const RunMeasurement> m_measurement;
    std::vector<core::Bytes> m_measuredAllocator;
    std::shared_ptr<const PeerProfile> m_peer;
    std::shared_ptr<const ComparedTrace> m_comparison;
    int m_selected = -1;
    int m_hovered = -1;
    core::Step m_cursor = -1;
    double m_firstVisible = 0;
    double m_lastVisible = 0;
};
