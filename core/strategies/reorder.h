// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Reorder: a memory-aware topological order as an alternative schedule.
// - List scheduling: at each step, among the ops whose inputs are all produced, run the one with the
//   largest (bytes freed - bytes allocated): it frees an input when it is that input's last reader.
//   Ties go to model order. O(ops² · degree) in the worst case.
// - The result is kept only when its lower bound is below the current schedule's; otherwise the
//   schedule stays as it was (the report says so). Either way the order is topological.
// - Cost: none (same ops, same work); the lifetimes change.
// Limits: greedy, one step of look-ahead; it can be fooled by ops that free memory only two steps later.

#include "strategies/strategy.h"

namespace core {

// The greedy order alone (always topological for a graph modelOrder accepts).
Schedule memoryAwareOrder(const Graph& graph, const Schedule& current);

class ReorderStrategy : public Strategy {
public:
    std::string_view name() const override { return "reorder"; }
    std::string_view description() const override { return "memory-aware topological order (greedy: prefer ops that free memory)"; }
    Expected<Transformed> apply(Transformed state, const StrategyOptions& options) const override;
};

} // namespace core
