// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"

#include <string>

namespace core {

enum class PlanCheck { Ok, WrongCount, Negative, Misaligned, OutsideArena, Overlap, BelowLowerBound, OverCapacity };

struct PlanValidation {
    PlanCheck check = PlanCheck::Ok;
    std::string message; // names the buffers involved; empty when Ok
    bool ok() const { return check == PlanCheck::Ok; }
};

// Independent checker, shares no code with the planners: every offset non-negative and aligned,
// every buffer inside the arena, no two buffers with conflicting lifetimes overlap in memory,
// arena >= lower bound, arena <= capacity when the problem has one. O(n log n) sweep.
PlanValidation validatePlan(const PlanProblem& problem, const Plan& plan);

// Time × offset picture of a small plan, one letter per buffer (for test failure messages).
std::string renderAsciiPlan(const PlanProblem& problem, const Plan& plan, int rows = 24);

} // namespace core
