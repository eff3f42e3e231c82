// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// One "apply strategies (or choose for a budget), optionally plan" job: plain C++ on shared
// immutable inputs, run on a worker thread by StrategyController and read by the strategy panel
// and the A/B comparison.

#include "strategymarks.h"

#include "cost/device.h"
#include "io/workload.h"
#include "planners/planner.h"
#include "planners/problem.h"
#include "strategies/frontier.h"
#include "strategies/strategy.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

struct StrategyRequest {
    std::vector<std::string> names; // strategies to apply (any order; run in pipeline order); ignored with a budget
    core::DeviceProfile device = core::defaultDevice();
    core::Bytes budget = 0;           // > 0: core::chooseForBudget picks the strategies, planning with `planner`
    std::string planner { core::kDefaultPlanner };
    // Recompute's policy (with a budget too), as `memplan plan --checkpoint` sets it: Checkpoint keeps the
    // outputs of every checkpointEvery-th forward op (0: round(sqrt(forward ops))); it needs a backward pass.
    core::RecomputePolicy recomputePolicy = core::RecomputePolicy::Greedy;
    int checkpointEvery = 0;
    bool plan = false; // also plan the result with `planner` (validated); the panel leaves this to the window
    // A frontier point to apply (core::applyFrontierPoint: its strategies and options); names, budget and
    // the recompute policy are then ignored.
    std::shared_ptr<const core::FrontierPoint> point;
};

struct StrategyOutcome {
    std::shared_ptr<const core::Workload> workload; // after the strategies; the original when none applies
    std::shared_ptr<const StrategyFacts> facts;     // null when no strategy was applied
    std::vector<std::string> applied;               // strategies applied, pipeline order (budget: the choice)
    std::vector<std::string> leftOut;               // named but left out: inplace did as well without them
    std::vector<core::StrategyReport> reports;
    std::optional<int> checkpointEvery; // recompute ran with the checkpoint policy: every N forward ops (0: sqrt)
    double baseSeconds = 0;      // roofline time of the original schedule on the device (0 without a graph)
    double estimatedSeconds = 0; // baseSeconds plus every report's extra time
    std::optional<core::Plan> plan; // when requested
    // Budget mode only.
    bool budgetMode = false;
    bool fits = false;
    core::Bytes budget = 0;
    core::Bytes budgetArena = 0; // arena of the chosen combination (the smallest reached when it does not fit)
    int combinationsTried = 0;
    std::shared_ptr<const core::FrontierPoint> point; // the frontier point applied (StrategyRequest::point)

    double extraFlops() const;
    core::Bytes swappedBytes() const;
};

// "fuse+inplace", or "no strategy".
std::string strategyLabel(const std::vector<std::string>& names);

// Runs the request on `original`. Errors (as values, messages naming the model): unknown strategy or
// planner, a workload without a graph asked for strategies, a planner failure or an invalid plan.
// A request with no strategy and no budget returns the original workload (planned when asked).
core::Expected<StrategyOutcome> runStrategyJob(std::shared_ptr<const core::Workload> original, const StrategyRequest& request);
