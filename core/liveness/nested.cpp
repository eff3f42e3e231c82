// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The graphs of control-flow ops planned inside them (NestedPlan, liveness/lifetimes.h).
#include "liveness/lifetimes.h"

#include "planners/planner.h"
#include "planners/validate.h"

#include <map>

namespace core {

Expected<std::vector<NestedPlan>> planBodies(const Op& op, const ProblemOptions& options)
{
    std::vector<NestedPlan> plans;
    for (const auto& body : op.bodies) {
        const std::string where = op.type + " '" + op.name + "' " + body.attribute;
        NestedPlan nested;
        nested.op = op.name;
        nested.type = op.type;
        nested.body = body.attribute;
        nested.graph = body.graph;
        nested.built.problem.alignment = options.alignment;
        if (!body.graph->ops.empty()) {
            auto schedule = modelOrder(*body.graph);
            if (!schedule)
                return makeError(schedule.error().code, where + ": " + schedule.error().message);
            nested.schedule = std::move(*schedule);
            auto inside = options;
            inside.resultsOutside = op.type == "If"; // a branch's results are the If's outputs
            auto built = makeProblem(*body.graph, nested.schedule, inside);
            if (!built)
                return makeError(built.error().code, where + ": " + built.error().message);
            nested.built = std::move(*built);
        }
        const auto* planner = plannerByName(kDefaultPlanner);
        if (!planner)
            return makeError(ErrorCode::InvalidArgument, where + ": no planner " + std::string(kDefaultPlanner));
        if (!nested.built.problem.buffers.empty()) {
            auto plan = runPlanner(*planner, nested.built.problem);
            if (!plan)
                return makeError(plan.error().code, where + ": " + plan.error().message);
            nested.plan = std::move(*plan);
        } else {
            nested.plan.planner = std::string(kDefaultPlanner);
        }
        if (const auto check = validatePlan(nested.built.problem, nested.plan); !check.ok())
            return makeError(ErrorCode::InvalidModel, where + ": its plan is invalid: " + check.message);
        plans.push_back(std::move(nested));
    }
    std::size_t largest = 0;
    for (std::size_t k = 1; k < plans.size(); ++k)
        if (plans[k].plan.arenaSize > plans[largest].plan.arenaSize)
            largest = k;
    if (!plans.empty())
        plans[largest].decides = true;
    return plans;
}

Bytes reservedBytes(const std::vector<NestedPlan>& plans)
{
    for (const auto& plan : plans)
        if (plan.decides)
            return plan.plan.arenaSize;
    return 0;
}

namespace {
void addRegions(const std::vector<NestedPlan>& plans, std::map<std::string, Region>& totals)
{
    for (const auto& n : plans) {
        for (const auto& region : n.built.regions) {
            auto& total = totals[region.name];
            total.name = region.name;
            total.size += region.size;
            total.tensorCount += region.tensorCount;
        }
        addRegions(n.built.nested, totals);
    }
}
} // namespace

std::vector<Region> nestedRegions(const std::vector<NestedPlan>& plans)
{
    std::map<std::string, Region> totals;
    addRegions(plans, totals);
    std::vector<Region> out;
    for (auto& [name, region] : totals)
        out.push_back(std::move(region));
    return out;
}

} // namespace core
