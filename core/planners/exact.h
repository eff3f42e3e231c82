// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/planner.h"

namespace core {

// exact: branch and bound for the smallest arena, anytime, in the spirit of MiniMalloc
// (Moffitt 2023, google/minimalloc); our own implementation.
// - Starts from the best-of-greedy plan, so a usable plan exists at once.
// - Solves "fits in capacity C?" with a complete skyline search (exactsearch.h): buffers go
//   bottom-up on the lowest plateau, gap-free packings only, twins in order, section bounds.
// - Searches by capacity: first C = lower bound (most real problems pack there); a proof that C
//   does not fit raises the proven bound; then halves the gap between bound and best plan, each try
//   with a share of the remaining time.
// - Stops at the time limit (PlanOptions::timeLimitSeconds, default kDefaultTimeLimit) or on cancel
//   (within a few milliseconds) and returns the best plan found, with Plan::provenOptimal and
//   Plan::provenLowerBound. With PlanOptions::capacity (or PlanProblem::capacity) it stops at the
//   first plan that fits and returns Infeasible when it proves none does.
// Limits: exponential in the worst case; problems over kMaxSearchBuffers buffers get the greedy plan
// and the lower bound only. Sizes count rounded up to the alignment.
class ExactPlanner final : public Planner {
public:
    static constexpr double kDefaultTimeLimit = 5.0; // seconds
    static constexpr int kMaxSearchBuffers = 2000; // recursion depth stays below ~4n + 2 x sections frames

    std::string_view name() const override { return "exact"; }
    std::string_view description() const override;
    Expected<Plan> plan(const PlanProblem& problem, const CancelToken& cancel) const override;
    Expected<Plan> planWith(const PlanProblem& problem, const CancelToken& cancel, const PlanOptions& options) const override;
};

} // namespace core
