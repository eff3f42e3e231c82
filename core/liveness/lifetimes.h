// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"
#include "schedule/schedule.h"

#include <memory>
#include <string>
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
    // Plan the graphs of control-flow ops (Op::bodies) inside them (NestedPlan); off: an If, Loop or
    // Scan holds nothing beyond its inputs and outputs, as when import could not size its graphs.
    bool bodies = true;
    // The graph's results (tensors of kind Output) get no buffer: they are written into the outputs
    // of the op around it, planned there (an If's branch results are the If's outputs). Set by
    // planBodies for an If's branches.
    bool resultsOutside = false;
};

struct NestedPlan;

struct GraphProblem {
    PlanProblem problem;
    std::vector<Region> regions;            // weights and persistent state, outside the arena (graph/capture.h regionOf)
    std::vector<TensorIndex> bufferTensor; // the tensor behind each buffer of problem.buffers; -1 for a workspace
    std::vector<OpIndex> bufferOp;         // per buffer: the op whose workspace it is; -1 for a tensor's buffer
    std::vector<NestedPlan> nested;        // the plans of the control-flow ops' graphs, in schedule order
};

// One graph of a control-flow op (Op::bodies) planned as a problem of its own: makeProblem over it
// (its formal inputs, values and results in its arena, its weights in regions; a Loop's or Scan's
// body for one iteration, which its next iteration reuses) with kDefaultPlanner, the plan validated.
// An If's branch results are not in its arena: they are the If's outputs, which the graph around
// plans (ProblemOptions::resultsOutside), so they are not held twice.
// The op's reservation in the problem around it is a Workspace buffer named "<op> body" at the op's
// step, as large as its largest graph's arena: an If's branches run one or the other; a body's
// control-flow ops reserve theirs in its problem in turn (GraphProblem::nested).
struct NestedPlan {
    std::string op;   // the control-flow op's name in the graph around
    std::string type; // its type: "If", "Loop", "Scan", "SequenceMap"
    std::string body; // its attribute: "then_branch", "else_branch", "body"
    Step step = 0;    // the op's step in the graph around
    std::shared_ptr<const Graph> graph;
    Schedule schedule;
    GraphProblem built; // empty problem (arena 0) for a graph without ops
    Plan plan;
    bool decides = false; // the op's reservation is this graph's arena (the first such one when they tie)
};

// The plans of `op`'s graphs (none when it has no Op::bodies), each validated; an error names the
// op, the graph and what failed.
Expected<std::vector<NestedPlan>> planBodies(const Op& op, const ProblemOptions& options);

// Bytes `op` reserves for its graphs: the arena of the plan that decides, 0 when none.
Bytes reservedBytes(const std::vector<NestedPlan>& plans);

// The regions (weights, ...) of every graph in `plans`, nested ones too, added up by region name in
// name order: an If's branches both count, as a runtime loads every initializer of a model.
std::vector<Region> nestedRegions(const std::vector<NestedPlan>& plans);

// Weight and persistent tensors some op touches go to the region regionOf names (graph/capture.h), in
// the order of kRegionNames; a region lists only when it holds a tensor (version tokens do not count).
// One buffer per input, output and activation tensor with a non-zero size; with options.workspaces,
// then one per op that needs a workspace, in schedule order: named "<op> workspace", kind Workspace,
// lifetime [step, step + 1), no tensors; with options.bodies, then one per control-flow op whose
// graphs hold anything, the same way: named "<op> body" (NestedPlan). Fails, naming the tensors,
// when any of them has no known size, and on a graph without ops.
Expected<GraphProblem> makeProblem(const Graph& graph, const Schedule& schedule, const ProblemOptions& options);

} // namespace core
