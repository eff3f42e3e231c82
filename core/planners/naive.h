// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/planner.h"

namespace core {

// naive: every buffer gets its own bytes, in input order; no reuse.
// The arena is the sum of all sizes: the baseline every other planner is measured against. O(n).
class NaivePlanner final : public Planner {
public:
    std::string_view name() const override { return "naive"; }
    std::string_view description() const override;
    Expected<Plan> plan(const PlanProblem& problem, const CancelToken& cancel) const override;
};

} // namespace core
