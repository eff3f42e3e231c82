// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Budget: the combination of strategies that fits a memory budget with the least estimated time.
// - Tries every subset of the strategies (2^6 = 64 runs of the pipeline), plans each result with
//   `planner`, and keeps those whose arena fits the budget; among them the one with the least
//   estimated time (the schedule's roofline time plus each strategy's extra time), then the smallest arena.
// - When none fits, says so and returns the combination with the smallest arena.
// Limits: recompute and swap stop when they no longer lower the peak, not when the budget is met,
//   so a budget between two of their steps is met by the next lower step.

#include "planners/planner.h"
#include "strategies/strategy.h"
#include "util/cancel.h"

#include <functional>

namespace core {

// One combination of strategies run through the pipeline, planned and checked.
struct CombinationResult {
    unsigned mask = 0;              // bit i: strategyNames()[i]
    std::vector<std::string> names; // pipeline order (empty: no strategy)
    StrategyRun run;
    Plan plan;                      // validatePlan accepted it
    double estimatedSeconds = 0;    // the schedule's roofline time plus the reports' extra time
};

// Every subset of the strategies (2^6 = 64), each run exactly as named (leaveOutOutdone off),
// planned with `planner` and checked with validatePlan; `visit` gets each in mask order (0: no
// strategy). Shared by chooseForBudget and the frontier's heuristic points (strategies/frontier.h).
// Errors: a workload without a graph, a planner failure, an invalid plan, `cancel` set (Cancelled).
Status forEachCombination(const Workload& workload, const Planner& planner, const StrategyOptions& options,
    const std::function<void(CombinationResult&&)>& visit, const CancelToken& cancel = {});

struct BudgetChoice {
    bool fits = false;
    std::vector<std::string> names; // the chosen combination, pipeline order (empty: no strategy)
    StrategyRun run;
    Plan plan;
    double estimatedSeconds = 0;
    int combinationsTried = 0;
};

// Errors: a workload without a graph, a planner failure.
Expected<BudgetChoice> chooseForBudget(const Workload& workload, Bytes budget, const Planner& planner, const StrategyOptions& options);

} // namespace core
