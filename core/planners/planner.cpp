// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/planner.h"

#include "planners/bestfit.h"
#include "planners/bestofgreedy.h"
#include "planners/coloring.h"
#include "planners/exact.h"
#include "planners/firstfit.h"
#include "planners/greedybybreadth.h"
#include "planners/greedybysize.h"
#include "planners/naive.h"

#include <chrono>

namespace core {

const std::vector<std::unique_ptr<Planner>>& planners()
{
    static const auto list = [] {
        std::vector<std::unique_ptr<Planner>> result;
        result.push_back(std::make_unique<NaivePlanner>());
        result.push_back(std::make_unique<FirstFitPlanner>());
        result.push_back(std::make_unique<BestFitPlanner>());
        result.push_back(std::make_unique<GreedyBySizePlanner>());
        result.push_back(std::make_unique<GreedyByBreadthPlanner>());
        result.push_back(std::make_unique<ColoringPlanner>());
        result.push_back(std::make_unique<BestOfGreedyPlanner>());
        result.push_back(std::make_unique<ExactPlanner>());
        return result;
    }();
    return list;
}

std::vector<std::string> plannerNames()
{
    std::vector<std::string> names;
    for (const auto& p : planners())
        names.emplace_back(p->name());
    return names;
}

const Planner* plannerByName(std::string_view name)
{
    for (const auto& p : planners())
        if (p->name() == name)
            return p.get();
    return nullptr;
}

Expected<Plan> runPlanner(const Planner& planner, const PlanProblem& problem, const CancelToken& cancel)
{
    return runPlanner(planner, problem, cancel, PlanOptions {});
}

Expected<Plan> runPlanner(const Planner& planner, const PlanProblem& problem, const CancelToken& cancel,
    const PlanOptions& options)
{
    const auto begin = std::chrono::steady_clock::now();
    auto result = planner.planWith(problem, cancel, options);
    if (result) {
        result->planner = std::string(planner.name());
        result->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    }
    return result;
}

} // namespace core
