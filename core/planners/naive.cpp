// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/naive.h"

#include "planners/gapfinder.h"

namespace core {

std::string_view NaivePlanner::description() const { return "no reuse: every buffer gets its own bytes"; }

Expected<Plan> NaivePlanner::plan(const PlanProblem& problem, const CancelToken&) const
{
    Plan plan;
    plan.offsets.reserve(problem.buffers.size());
    for (std::size_t i = 0; i < problem.buffers.size(); ++i) {
        plan.offsets.push_back(plan.arenaSize);
        plan.arenaSize += placedSize(problem, static_cast<int>(i));
    }
    return plan;
}

} // namespace core
