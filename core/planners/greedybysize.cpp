// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/greedybysize.h"

#include "planners/gapfinder.h"

#include <algorithm>
#include <numeric>

namespace core {

std::string_view GreedyBySizePlanner::description() const
{
    return "largest first, each in the smallest gap among buffers live at the same time";
}

Expected<Plan> GreedyBySizePlanner::plan(const PlanProblem& problem, const CancelToken& cancel) const
{
    std::vector<int> order(problem.buffers.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const auto& x = problem.buffers[a];
        const auto& y = problem.buffers[b];
        if (x.size != y.size)
            return x.size > y.size;
        return x.lifetime.start < y.lifetime.start;
    });
    return placeInOrder(problem, order, cancel);
}

} // namespace core
