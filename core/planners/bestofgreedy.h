// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/planner.h"

namespace core {

// best-of-greedy: the fast heuristic for when there is no time to search.
// - Offset-calculation passes (GapFinder, as greedy-by-size) in several orders: size, area
//   (size x lifetime), lifetime length, conflict degree; then local improvement on the best order:
//   buffers that reach the top of the arena move to the front and the pass is replayed while the
//   arena does not grow (at most 24 passes, fewer above ~17k buffers).
// - Skyline dives (skyline.h): fill the lowest plateau with the longest / largest-area / largest
//   buffer that fits inside it.
// - Short bounded runs of the exact planner's search (exactsearch.h): one dive per ranking, then
//   capacities of 1.10, 1.06, 1.03 and 1.00 x the lower bound with 2 nodes per buffer each; with a
//   few percent of slack the search usually packs on its first dive.
// Keeps the smallest arena; deterministic. Skyline work is skipped above ~2e7 buffers x sections
// (large problems get the offset passes only). Cancellable between and within passes.
// Limits: no optimality claim. On the public benchmarks 0-10 % over the lower bound on 8 of 11
// problems, 19-23 % on D, I and K; 15-200 ms per problem (docs/BENCHMARKS.md), above the 10 ms goal.
// About 8 greedy-by-size passes on 100k buffers (seconds).
class BestOfGreedyPlanner final : public Planner {
public:
    std::string_view name() const override { return "best-of-greedy"; }
    std::string_view description() const override;
    Expected<Plan> plan(const PlanProblem& problem, const CancelToken& cancel) const override;
};

// The same, for other planners to start from (exact): the plan, or Cancelled.
Expected<Plan> bestOfGreedyPlan(const PlanProblem& problem, const CancelToken& cancel);

} // namespace core
