// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"

#include <vector>

namespace core {

// Live bytes at each step 0..steps-1 (sum of sizes of buffers whose lifetime contains it).
std::vector<Bytes> liveBytesCurve(const PlanProblem& problem);

// Max over steps of live bytes: no plan can use a smaller arena.
Bytes lowerBound(const PlanProblem& problem);

// Max number of buffers live at one step = colors an optimal interval-graph coloring needs.
int maxOverlapDepth(const PlanProblem& problem);

// First step where live bytes reach the lower bound; -1 for an empty problem.
Step peakStep(const PlanProblem& problem);

// Indices of the buffers live at `step`, largest first.
std::vector<int> liveAt(const PlanProblem& problem, Step step);

Bytes sumOfSizes(const PlanProblem& problem);

// arena / lower bound − 1; 0 when the lower bound is 0.
double fragmentation(Bytes arena, Bytes lowerBound);

struct PlanMetrics {
    Bytes lowerBound = 0;
    Bytes arena = 0;
    double fragmentation = 0;
    int colors = 0; // slots the plan uses (Plan::colors), or -1 when the planner assigns none
    int maxOverlapDepth = 0;
    Step peakStep = -1;
    double seconds = 0;
};
PlanMetrics computeMetrics(const PlanProblem& problem, const Plan& plan);

} // namespace core
