// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/planner.h"

namespace core {

// coloring (shared objects): interval-graph coloring by the left-edge algorithm.
// - buffers in order of start; colors whose buffer ended are free again;
// - a buffer takes the free color whose slot is the smallest that fits, else the largest free slot (which
//   grows to fit), else a new color;
// - each color is one slot sized by its largest member; slots are stacked in color order.
// Uses exactly max-overlap-depth colors (interval graphs are perfect), so it shows the minimum number of
// "rooms"; the arena is usually larger than greedy-by-size's because a slot is as large as its largest guest.
class ColoringPlanner final : public Planner {
public:
    std::string_view name() const override { return "coloring"; }
    std::string_view description() const override;
    Expected<Plan> plan(const PlanProblem& problem, const CancelToken& cancel) const override;
};

} // namespace core
