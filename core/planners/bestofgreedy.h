// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/planner.h"

namespace core {

// best-of-greedy: the fast heuristic for when there is no time to search.
// - Short capacity-bounded dives of the exact planner's search (exactsearch.h), little more than one
//   dive each: capacities from 1.10 x the lower bound down in steps of 1 %, four rankings per
//   capacity (two of them perturbed with a fixed seed), until a budget of 4 x (buffers + sections)
//   search nodes is spent. The capacity bound's section inference steers a dive around the dead ends
//   where plain greedy passes lose 20-40 %.
// - When no dive packs, or the problem is too large for the skyline (buffers x sections above
//   ~2e7): offset-calculation passes (GapFinder, as greedy-by-size) in several orders (size, area,
//   lifetime, conflict degree), local improvement that moves the buffers on the top of the arena to
//   the front while the arena does not grow (at most 24 passes, fewer above ~17k buffers), and
//   plain skyline dives where the skyline fits.
// Keeps the smallest arena. Deterministic: node budgets, not the clock, end the work. Cancellable
// between and within passes and dives.
// Never worse than greedy-by-size (one of its passes is always compared).
// Limits: no optimality claim; the first capacity is what makes "within 10 %" likely, not a
// guarantee. On the public benchmarks 2.9-10.0 % over the lower bound (D 9.97 %), 1.5-14 ms per
// problem on a loaded 2-core machine (docs/BENCHMARKS.md): J and K above 10 ms. About 8
// greedy-by-size passes on 100k buffers (seconds).
class BestOfGreedyPlanner final : public Planner {
public:
    std::string_view name() const override { return "best-of-greedy"; }
    std::string_view description() const override;
    Expected<Plan> plan(const PlanProblem& problem, const CancelToken& cancel) const override;
};

// The same, for other planners to start from (exact): the plan, or Cancelled.
Expected<Plan> bestOfGreedyPlan(const PlanProblem& problem, const CancelToken& cancel);

} // namespace core
