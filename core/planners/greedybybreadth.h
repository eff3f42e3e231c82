// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/planner.h"

namespace core {

// greedy-by-breadth (Pisarchyk & Lee 2020): steps by breadth (live bytes), widest first; at each step the
// buffers alive there that are still unplaced, largest first, take the smallest fitting gap (GapFinder).
// Equivalently each buffer is keyed by the widest step of its lifetime. Good when one step dominates
// the peak. O(n log n) plus the gap queries.
class GreedyByBreadthPlanner final : public Planner {
public:
    std::string_view name() const override { return "greedy-by-breadth"; }
    std::string_view description() const override;
    Expected<Plan> plan(const PlanProblem& problem, const CancelToken& cancel) const override;
};

} // namespace core
