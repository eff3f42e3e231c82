// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"
#include "util/cancel.h"
#include "util/expected.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace core {

// What a long-running planner reports while it works: the best arena so far against the proven
// lower bound. Sent from the planning thread; the receiver must be thread safe (e.g. queue it).
struct PlanProgress {
    Bytes bestArena = 0;        // arena of the best plan found so far (0 before the first)
    Bytes provenLowerBound = 0; // no plan below this exists
    double seconds = 0;         // since the planner started
    std::int64_t nodes = 0;     // search nodes visited
    bool provenOptimal = false;
};

// Knobs for planners that search; the others ignore them.
struct PlanOptions {
    double timeLimitSeconds = 0; // 0: the planner's default (exact: ExactPlanner::kDefaultTimeLimit)
    Bytes capacity = 0;          // > 0: stop at the first plan that fits in this many bytes ("fits in C")
    std::function<void(const PlanProgress&)> progress; // optional; called at most ~10 times a second
};

// Places every buffer of a problem in one arena. Keeps no state between calls, so one
// instance serves any thread. Returns ErrorCode::Cancelled when `cancel` fires.
class Planner {
public:
    virtual ~Planner() = default;
    virtual std::string_view name() const = 0;
    virtual std::string_view description() const = 0;
    virtual Expected<Plan> plan(const PlanProblem& problem, const CancelToken& cancel) const = 0;
    // With a time limit, capacity and progress; planners that have no use for them forward to plan().
    virtual Expected<Plan> planWith(const PlanProblem& problem, const CancelToken& cancel, const PlanOptions& options) const
    {
        (void)options;
        return plan(problem, cancel);
    }
};

// The planner the CLI, the Studio and the scenarios use when none is named: best-of-greedy reaches
// the lower bound on every exported test model with --fuse --inplace, where greedy-by-size leaves
// 10-25 % on several (docs/BENCHMARKS.md), for a few milliseconds per model.
inline constexpr std::string_view kDefaultPlanner = "best-of-greedy";

// Every built-in planner, in the order the CLI and the Studio list them.
const std::vector<std::unique_ptr<Planner>>& planners();
std::vector<std::string> plannerNames();
const Planner* plannerByName(std::string_view name);

// Runs the planner and fills Plan::seconds and Plan::planner.
Expected<Plan> runPlanner(const Planner& planner, const PlanProblem& problem, const CancelToken& cancel = {});
Expected<Plan> runPlanner(const Planner& planner, const PlanProblem& problem, const CancelToken& cancel,
    const PlanOptions& options);

} // namespace core
