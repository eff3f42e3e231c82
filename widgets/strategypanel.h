// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "strategyjob.h"

#include <QStringList>
#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSlider;
class QSpinBox;
class QTimer;
class QTreeWidget;
class StrategyController;

// The strategy dock: one checkbox per registered strategy (core::strategies(), descriptions as
// tooltips), the device profile (built-in, or a file), a memory budget (off by default; when on,
// core::chooseForBudget picks the strategies and the panel says which, or that nothing fits), and
// each strategy's report (saved bytes, extra FLOPs, swapped bytes, extra time, details). Under
// recompute, its policy: greedy, or on a graph with a backward pass (a training step, core::backwardStart)
// the checkpoint policy, every √n or every N forward ops, as `memplan plan --checkpoint sqrt|N`.
// Every change re-runs the strategies on the original workload in the background (StrategyController:
// stale results dropped, the UI thread never waits) and emits workloadReady with the workload to show;
// with nothing checked and no budget that is the original workload again. Errors go out as `failed`.
class StrategyPanel : public QWidget {
    Q_OBJECT
public:
    explicit StrategyPanel(QWidget* parent = nullptr);

    // The untransformed workload of the model on display. Returns true when the panel will deliver the
    // workload to show (strategies are on and the workload has a graph); false: show `original` as is.
    bool setOriginal(std::shared_ptr<const core::Workload> original);
    // Strategies and the budget belong to one model: before another model's setOriginal, every
    // strategy is unchecked and the budget turned off, its value to be taken again from the
    // slider's share of the new model's lower bound. No rerun, no signal.
    void resetForAnotherModel();
    std::shared_ptr<const core::Workload> original() const { return m_original; }
    // Any strategy checked, or the budget on (and a graph to work on).
    bool isActive() const;

    QStringList checkedStrategies() const;
    void setStrategyChecked(const QString& name, bool checked); // re-runs (debounced)
    QCheckBox* strategyCheckBox(const QString& name) const;
    // Recompute's policy: nullopt greedy; 0 checkpoints every round(sqrt(forward ops)); N every N forward
    // ops. Choosing checkpoints checks recompute (as --checkpoint implies --recompute). It applies only
    // on a graph with a backward pass; elsewhere the controls are disabled and recompute is greedy.
    std::optional<int> checkpointEvery() const;
    void setCheckpointEvery(std::optional<int> every); // re-runs (debounced)
    bool checkpointApplies() const; // the original has a backward pass
    QComboBox* recomputePolicyCombo() const { return m_policyCombo; }
    QSpinBox* checkpointEverySpin() const { return m_everySpin; }
    QComboBox* deviceCombo() const { return m_deviceCombo; }
    bool setDeviceFile(const QString& path, QString* error = nullptr); // adds the profile to the combo and selects it
    core::DeviceProfile device() const { return m_device; }

    void setBudgetEnabled(bool enabled);
    bool budgetEnabled() const;
    void setBudget(core::Bytes bytes);
    core::Bytes budget() const { return m_budget; }

    StrategyController* controller() const { return m_controller; }
    // The frontier of the model on display (FrontierView): while it is set, the budget picks the
    // frontier's fastest point that fits instead of searching the 64 combinations. Dropped with the model.
    void setFrontier(std::shared_ptr<const core::Frontier> frontier);
    std::shared_ptr<const core::Frontier> frontier() const { return m_frontier; }
    // Applies one frontier point (its strategies and their options, e.g. the checkpoints the dynamic
    // program chose); the budget turns off, and checking a strategy by hand drops the point.
    void applyFrontierPoint(std::shared_ptr<const core::FrontierPoint> point);
    std::shared_ptr<const core::FrontierPoint> frontierPoint() const { return m_point; }
    std::shared_ptr<const StrategyOutcome> outcome() const { return m_outcome; } // last result shown; null when none
    QString statusText() const;  // the status line: busy, the budget's choice, "cannot fit: …", or an error
    QString reportText() const;  // the reports as plain text, one strategy per line, details indented

public slots:
    void setPlannerName(const QString& name); // the budget plans with it
    void rerun();

signals:
    // The workload to show and its facts (null: untransformed), and the budget line to draw (0: none).
    void workloadReady(std::shared_ptr<const core::Workload> workload, std::shared_ptr<const StrategyFacts> facts,
        core::Bytes budget);
    void failed(const QString& message);

private:
    void scheduleRerun();
    void onFinished(std::shared_ptr<const StrategyOutcome> outcome);
    void onFailed(const QString& message);
    void onDeviceChosen(int index);
    void syncBudgetControls();
    void syncPolicyControls();
    void onPolicyChosen();
    void showReports();
    void setStatus(const QString& text, bool error = false);

    StrategyController* m_controller;
    QTimer* m_debounce;
    // Checks exactly `names` (signals blocked: no rerun).
    void showChecked(const QStringList& names);

    std::vector<QCheckBox*> m_checks; // registry order
    QStringList m_manualChecks;       // the user's choice, kept while the budget search chooses
    QComboBox* m_policyCombo = nullptr; // recompute: greedy, checkpoints every √n, every N
    QSpinBox* m_everySpin = nullptr;    // N
    QComboBox* m_deviceCombo = nullptr;
    QCheckBox* m_budgetCheck = nullptr;
    QSlider* m_budgetSlider = nullptr;
    QDoubleSpinBox* m_budgetSpin = nullptr; // MiB
    QLabel* m_status = nullptr;
    QTreeWidget* m_reports = nullptr;
    QLabel* m_totals = nullptr;

    std::shared_ptr<const core::Workload> m_original;
    std::shared_ptr<const StrategyOutcome> m_outcome;
    std::shared_ptr<const core::Frontier> m_frontier;    // of m_original (setFrontier)
    std::shared_ptr<const core::FrontierPoint> m_point; // applied by hand (applyFrontierPoint)
    core::DeviceProfile m_device;
    int m_deviceIndex = 0; // last good combo index, restored when a file fails to load
    core::Bytes m_budget = 0;
    std::string m_planner { core::kDefaultPlanner };
    bool m_showingTransformed = false; // the last workload emitted was transformed
    bool m_owesWorkload = false;       // setOriginal() returned true and nothing was emitted since
};
