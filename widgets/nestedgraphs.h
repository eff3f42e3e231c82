// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/workload.h"

#include <QString>

#include <vector>

// One graph of a control-flow op planned inside it (core::NestedPlan), placed in the tree of graphs
// the Studio shows: the arena view draws it in its op's "<op> body" block, the tensor table lists its
// buffers under `path`, the summary its steps and arena.
struct NestedGraph {
    const core::NestedPlan* plan = nullptr; // owned by the workload
    int parent = -1;    // index of the graph around in nestedGraphs(); -1: the workload's own graph
    int depth = 0;      // 0 for an op of the workload's graph
    QString path;       // "If_1 / then_branch"; deeper: "Loop_3 / body / If_2 / else_branch"
    int reservation = -1; // the op's "<op> body" buffer in the problem around (the parent's or the workload's); -1 if none
    int outerBuffer = -1; // the workload's buffer that holds this graph: its depth-0 ancestor's reservation
    // Where this graph's arena starts, in bytes past the start of the graph's reservation at depth 0
    // (0 at depth 0; deeper, the offsets of the reservations in between added up).
    core::Bytes baseInOuter = 0;
};

// Every graph of the workload's control-flow ops, every level, depth first: a graph is followed by
// the graphs of its own control-flow ops before its sibling. Pointers into `workload`: valid while it lives.
std::vector<NestedGraph> nestedGraphs(const core::Workload& workload);

// The "<op> body" buffer that `plan` (an op of the graph the problem belongs to) is planned into, or -1.
int reservationOf(const core::PlanProblem& problem, const core::NestedPlan& plan);
