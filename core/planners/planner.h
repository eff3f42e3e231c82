// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"
#include "util/cancel.h"
#include "util/expected.h"

#include <memory>
#include <string_view>
#include <vector>

namespace core {

// Places every buffer of a problem in one arena. Keeps no state between calls, so one
// instance serves any thread. Returns ErrorCode::Cancelled when `cancel` fires.
class Planner {
public:
    virtual ~Planner() = default;
    virtual std::string_view name() const = 0;
    virtual std::string_view description() const = 0;
    virtual Expected<Plan> plan(const PlanProblem& problem, const CancelToken& cancel) const = 0;
};

// Every built-in planner, in the order the CLI and the Studio list them.
const std::vector<std::unique_ptr<Planner>>& planners();
std::vector<std::string> plannerNames();
const Planner* plannerByName(std::string_view name);

// Runs the planner and fills Plan::seconds and Plan::planner.
Expected<Plan> runPlanner(const Planner& planner, const PlanProblem& problem, const CancelToken& cancel = {});

} // namespace core
