// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/budget.h"

#include "cost/opcost.h"
#include "planners/validate.h"

namespace core {

Status forEachCombination(const Workload& workload, const Planner& planner, const StrategyOptions& options,
    const std::function<void(CombinationResult&&)>& visit, const CancelToken& cancel)
{
    if (!workload.graph)
        return makeError(ErrorCode::InvalidArgument,
            workload.source + ": an allocation problem has no graph; a budget needs strategies, which need a model");
    const auto names = strategyNames();
    const double baseSeconds = scheduleCost(*workload.graph, workload.schedule, options.device).seconds;
    auto exact = options;
    exact.leaveOutOutdone = false; // every combination is tried here anyway
    for (unsigned mask = 0; mask < (1u << names.size()); ++mask) {
        if (cancel.isCancelled())
            return makeError(ErrorCode::Cancelled, "cancelled");
        CombinationResult result;
        result.mask = mask;
        for (std::size_t i = 0; i < names.size(); ++i)
            if (mask & (1u << i))
                result.names.push_back(names[i]);
        auto run = applyStrategies(workload, result.names, exact);
        if (!run)
            return run.error();
        auto plan = runPlanner(planner, run->workload.problem);
        if (!plan)
            return makeError(plan.error().code, workload.source + ": " + plan.error().message);
        if (const auto check = validatePlan(run->workload.problem, *plan); !check.ok())
            return makeError(ErrorCode::Infeasible, workload.source + ": invalid plan after strategies: " + check.message);
        result.estimatedSeconds = baseSeconds + extraSeconds(run->reports);
        result.run = std::move(*run);
        result.plan = std::move(*plan);
        visit(std::move(result));
    }
    return {};
}

Expected<BudgetChoice> chooseForBudget(const Workload& workload, Bytes budget, const Planner& planner, const StrategyOptions& options)
{
    std::optional<BudgetChoice> best;
    int tried = 0;
    const auto status = forEachCombination(workload, planner, options, [&](CombinationResult&& c) {
        ++tried;
        const double seconds = c.estimatedSeconds;
        const bool fits = c.plan.arenaSize <= budget;
        const bool better = !best || (fits && !best->fits)
            || (fits && best->fits
                && (seconds < best->estimatedSeconds || (seconds == best->estimatedSeconds && c.plan.arenaSize < best->plan.arenaSize)))
            || (!fits && !best->fits && c.plan.arenaSize < best->plan.arenaSize);
        if (better)
            best = BudgetChoice { fits, std::move(c.names), std::move(c.run), std::move(c.plan), seconds, 0 };
    });
    if (!status)
        return status.error();
    best->combinationsTried = tried;
    return std::move(*best);
}

} // namespace core
