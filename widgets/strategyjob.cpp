// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategyjob.h"

#include "cost/opcost.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "strategies/budget.h"

#include <algorithm>

namespace {

core::Expected<core::Plan> planChecked(const core::Planner& planner, const core::Workload& workload)
{
    auto plan = core::runPlanner(planner, workload.problem);
    if (!plan)
        return core::makeError(plan.error().code, workload.source + ": " + plan.error().message);
    const auto check = core::validatePlan(workload.problem, *plan);
    if (!check.ok())
        return core::makeError(core::ErrorCode::InvalidArgument,
            workload.source + ": planner '" + std::string(planner.name()) + "' produced an invalid plan: " + check.message);
    return plan;
}

} // namespace

double StrategyOutcome::extraFlops() const
{
    double flops = 0;
    for (const auto& r : reports)
        flops += r.extraFlops;
    return flops;
}

core::Bytes StrategyOutcome::swappedBytes() const
{
    core::Bytes bytes = 0;
    for (const auto& r : reports)
        bytes += r.swappedBytes;
    return bytes;
}

std::string strategyLabel(const std::vector<std::string>& names)
{
    std::string label;
    for (const auto& n : names)
        label += (label.empty() ? "" : "+") + n;
    return label.empty() ? "no strategy" : label;
}

core::Expected<StrategyOutcome> runStrategyJob(std::shared_ptr<const core::Workload> original, const StrategyRequest& request)
{
    if (!original)
        return core::makeError(core::ErrorCode::InvalidArgument, "no model is loaded");
    const core::Planner* planner = core::plannerByName(request.planner);
    if (!planner)
        return core::makeError(core::ErrorCode::InvalidArgument, "unknown planner '" + request.planner + "'");
    StrategyOutcome outcome;
    core::StrategyOptions options;
    options.device = request.device;
    options.alignment = original->problem.alignment;
    options.recomputePolicy = request.recomputePolicy;
    options.checkpointEvery = request.checkpointEvery;
    if (original->graph)
        outcome.baseSeconds = core::scheduleCost(*original->graph, original->schedule, request.device).seconds;

    std::optional<core::StrategyRun> run;
    if (request.point) {
        auto applied = core::applyFrontierPoint(*original, *request.point);
        if (!applied)
            return applied.error();
        outcome.point = request.point;
        if (request.budget > 0) { // the budget picked it from the frontier
            outcome.budgetMode = true;
            outcome.budget = request.budget;
            outcome.fits = request.point->peakBytes <= request.budget;
            outcome.budgetArena = request.point->peakBytes;
        }
        for (const auto& name : request.point->names)
            (std::find(applied->leftOut.begin(), applied->leftOut.end(), name) == applied->leftOut.end() ? outcome.applied
                                                                                                      : outcome.leftOut)
                .push_back(name);
        run = std::move(*applied);
    } else if (request.budget > 0) {
        auto choice = core::chooseForBudget(*original, request.budget, *planner, options);
        if (!choice)
            return choice.error();
        outcome.budgetMode = true;
        outcome.fits = choice->fits;
        outcome.budget = request.budget;
        outcome.budgetArena = choice->plan.arenaSize;
        outcome.combinationsTried = choice->combinationsTried;
        outcome.applied = choice->names;
        run = std::move(choice->run);
    } else if (!request.names.empty()) {
        auto applied = core::applyStrategies(*original, request.names, options);
        if (!applied)
            return applied.error();
        for (const auto& name : core::strategyNames())
            if (std::find(request.names.begin(), request.names.end(), name) != request.names.end())
                (std::find(applied->leftOut.begin(), applied->leftOut.end(), name) == applied->leftOut.end() ? outcome.applied
                                                                                                          : outcome.leftOut)
                    .push_back(name);
        run = std::move(*applied);
    }

    outcome.estimatedSeconds = outcome.baseSeconds;
    if (run) {
        if (request.recomputePolicy == core::RecomputePolicy::Checkpoint
            && std::find(outcome.applied.begin(), outcome.applied.end(), "recompute") != outcome.applied.end())
            outcome.checkpointEvery = request.checkpointEvery;
        outcome.reports = run->reports;
        outcome.estimatedSeconds += core::extraSeconds(outcome.reports);
        auto workload = std::make_shared<const core::Workload>(std::move(run->workload));
        outcome.facts = std::make_shared<const StrategyFacts>(computeStrategyFacts(*original, workload, run->state));
        outcome.workload = std::move(workload);
    } else {
        outcome.workload = std::move(original);
    }
    if (request.plan) {
        auto plan = planChecked(*planner, *outcome.workload);
        if (!plan)
            return plan.error();
        outcome.plan = std::move(*plan);
    }
    return outcome;
}
