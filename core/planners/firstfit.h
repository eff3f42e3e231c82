// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/planner.h"

namespace core {

// first-fit: the seed algorithm (lowest offset that clears the placed buffers), exactly.
// - buffers in order of start (ties: input order);
// - before placing one, every placed buffer whose end <= its start is freed, in order of end (ties: input
//   order), and its block appended to the free list; neighbours are never merged;
// - the first block in free-list order that is large enough takes the buffer at its low end; a remainder
//   is appended to the free list; if none fits, the buffer goes on top and the arena grows.
// The free list is a max segment tree over list positions, so "first block >= size" is O(log n) and the
// whole plan O(n log n), with the same answer as scanning the list.
class FirstFitPlanner final : public Planner {
public:
    std::string_view name() const override { return "first-fit"; }
    std::string_view description() const override;
    Expected<Plan> plan(const PlanProblem& problem, const CancelToken& cancel) const override;
};

} // namespace core
