// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "graph/graph.h"

#include <vector>

namespace core {

// Execution order of ops: order[step] is the op that runs at that step.
struct Schedule {
    std::vector<OpIndex> order;
    Step steps() const { return static_cast<Step>(order.size()); }
};

// The model's own order when it is topological (every op after the producers of its inputs).
// Otherwise a stable topological sort that keeps model order where it can (noted in graph notes
// by the caller). A cycle is an error naming the ops on it; a tensor produced twice is an error.
Expected<Schedule> modelOrder(const Graph& graph);

// True when every op runs after the producers of its inputs and each op appears exactly once.
bool isTopological(const Graph& graph, const Schedule& schedule);

} // namespace core
