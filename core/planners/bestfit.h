// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/planner.h"

namespace core {

// best-fit: a classic allocator replayed over the schedule.
// - buffers in order of start; buffers whose end <= the next start are freed first;
// - free blocks are coalesced with free neighbours; a buffer takes the smallest free block that fits
//   (lowest offset among equals); if none fits but the topmost block is free, it is extended upward;
//   otherwise the buffer goes on top. O(n log n).
// Limits: decisions are online (no look-ahead), so long-lived buffers can pin fragments.
class BestFitPlanner final : public Planner {
public:
    std::string_view name() const override { return "best-fit"; }
    std::string_view description() const override;
    Expected<Plan> plan(const PlanProblem& problem, const CancelToken& cancel) const override;
};

} // namespace core
