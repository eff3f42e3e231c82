// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"

#include <string>
#include <string_view>
#include <vector>

namespace core {

// What happens to the arena at one step of the schedule, for teaching (play mode).
// With half-open lifetimes [start, end), a buffer is allocated at step `start` and freed at step
// `end` (its block is free from that step on), exactly the order the seed's first-fit works in.
struct StepEvent {
    enum class Kind { Free, Allocate };
    Kind kind = Kind::Allocate;
    int buffer = -1; // index into PlanProblem::buffers
    Bytes offset = 0;
    Bytes size = 0;
    // Allocate only: buffers that died before this step (end <= step) and last occupied part of this
    // buffer's block, most recent first. Empty: the block was never used before.
    std::vector<int> reuses;
    // Allocate only: the block reaches above every block allocated at earlier steps (the arena's
    // high-water mark grows to `highWater`).
    bool grows = false;
    Bytes highWater = 0;
};

// Frees first (input order), then allocations (input order). Buffers with an empty lifetime are left out.
// O(n log n + k·m) for k allocations at the step and m buffers that died before it. Pure; any thread.
std::vector<StepEvent> stepEvents(const PlanProblem& problem, const Plan& plan, Step step);

// One line for the step, e.g. "step 3: w1 and a2 die, their blocks at 0 and 512 return to the free
// list; out (64 B) reuses w1's block at 0". `opName`, when given, follows the step number in parentheses.
// Long lists are shortened ("+3 more").
std::string narrateStep(const PlanProblem& problem, const Plan& plan, Step step, std::string_view opName = {});

} // namespace core
