// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"
#include "schedule/schedule.h"

#include <vector>

namespace core {

// Per tensor, its half-open lifetime under `schedule`:
// - produced at step s, last read at step t: [s, t + 1); never read: [s, s + 1);
// - graph inputs start at 0; graph outputs live to the end (steps);
// - a tensor captured by a subgraph op is read at that op's step;
// - weights and persistent tensors span [0, steps); tensors no op touches get {0, 0}.
// Pure; safe on any thread.
std::vector<Lifetime> computeLifetimes(const Graph& graph, const Schedule& schedule);

struct ProblemOptions {
    Bytes alignment = 256; // activation buffers are rounded up to this and placed at multiples of it
    // Plan op workspaces (exec/workspace.h) as buffers of their own; off: kernels keep them in scratch.
    bool workspaces = false;
};

struct GraphProblem {
    PlanProblem problem;
    std::vector<Region> regions;            // weights and persistent state, outside the arena (graph/capture.h regionOf)
    std::vector<TensorIndex> bufferTensor; // the tensor behind each buffer of problem.buffers; -1 for a workspace
    std::vector<OpIndex> bufferOp;         // per buffer: the op whose workspace it is; -1 for a tensor's buffer
};

// Weight and persistent tensors some op touches go to the region regionOf names (graph/capture.h), in
// the order of kRegionNames; a region lists only when it holds a tensor (version tokens do not count).
// One buffer per input, output and activation tensor with a non-zero size; with options.workspaces,
// then one per op that needs a workspace, in schedule order: named "<op> workspace", kind Workspace,
// lifetime [step, step + 1), no tensors. Fails, naming the tensors, when any of them has no known
// size, and on a graph without ops.
Expected<GraphProblem> makeProblem(const Graph& graph, const Schedule& schedule, const ProblemOptions& options);

} // namespace core
