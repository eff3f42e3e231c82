// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/planner.h"

namespace core {

// greedy-by-size ("offset calculation", Pisarchyk & Lee 2020; TFLite's greedy planner):
// - buffers by size, largest first (ties: earlier start, then input order);
// - each takes the smallest gap, between already-placed buffers whose lifetimes conflict with it, that
//   fits; otherwise it goes just above the highest of them.
// Usually within a few percent of the lower bound on real networks. O(n log n + sum of k log k), k =
// conflicting buffers per query (see GapFinder).
class GreedyBySizePlanner final : public Planner {
public:
    std::string_view name() const override { return "greedy-by-size"; }
    std::string_view description() const override;
    Expected<Plan> plan(const PlanProblem& problem, const CancelToken& cancel) const override;
};

// Its placement order: largest first, ties by earlier start, then by index.
std::vector<int> greedyBySizeOrder(const PlanProblem& problem);

} // namespace core
