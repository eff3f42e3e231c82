// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/budget.h"

#include "cost/opcost.h"

namespace core {

Expected<BudgetChoice> chooseForBudget(const Workload& workload, Bytes budget, const Planner& planner, const StrategyOptions& options)
{
    if (!workload.graph)
        return makeError(ErrorCode::InvalidArgument,
            workload.source + ": an allocation problem has no graph; a budget needs strategies, which need a model");
    const auto names = strategyNames();
    const double baseSeconds = scheduleCost(*workload.graph, workload.schedule, options.device).seconds;
    std::optional<BudgetChoice> best;
    int tried = 0;
    auto exact = options;
    exact.leaveOutOutdone = false; // every combination is tried here anyway
    for (unsigned mask = 0; mask < (1u << names.size()); ++mask) {
        std::vector<std::string> chosen;
        for (std::size_t i = 0; i < names.size(); ++i)
            if (mask & (1u << i))
                chosen.push_back(names[i]);
        auto run = applyStrategies(workload, chosen, exact);
        if (!run)
            return run.error();
        auto plan = runPlanner(planner, run->workload.problem);
        if (!plan)
            return makeError(plan.error().code, workload.source + ": " + plan.error().message);
        ++tried;
        const double seconds = baseSeconds + extraSeconds(run->reports);
        const bool fits = plan->arenaSize <= budget;
        const bool better = !best || (fits && !best->fits)
            || (fits && best->fits
                && (seconds < best->estimatedSeconds || (seconds == best->estimatedSeconds && plan->arenaSize < best->plan.arenaSize)))
            || (!fits && !best->fits && plan->arenaSize < best->plan.arenaSize);
        if (better)
            best = BudgetChoice { fits, std::move(chosen), std::move(*run), std::move(*plan), seconds, 0 };
    }
    best->combinationsTried = tried;
    return std::move(*best);
}

} // namespace core
