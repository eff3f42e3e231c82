// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Where a control-flow op's graphs keep their values in a run (issue #49): each graph's plan
// (NestedPlan, liveness/lifetimes.h) read as value name -> offset and bytes inside the op's region
// (its "<op> body" buffer), and the regions of the control-flow ops inside it, recursively.
// - A value lives at region + offset when the plan holds it and its run-time bytes fit the planned
//   buffer; otherwise (a size the data decided larger than planned, a value the plan does not hold,
//   a list or an optional) it gets an allocation of its own, counted as kernel scratch, and the run
//   gets one note naming the op, the graph and the value.
// - A Loop's or Scan's body reuses the region every iteration: its results are copied out before
//   the next iteration runs, its formals copied in at their planned offsets.
// Built once per run from the plans and the graphs the executor runs (exec/branch.h Branch); a
// graph whose ops do not match its plan's (count, names, order) keeps every value on its own.

#include "exec/branch.h"
#include "liveness/lifetimes.h"

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace core::exec {

// One value's place: bytes [offset, offset + bytes) of its graph's region.
struct Slot {
    Bytes offset = 0;
    Bytes bytes = 0;
};

// One graph's plan as a run places its values.
struct GraphSlots {
    std::string where; // "Loop 'loop0' body", "Loop 'loop0' body, If 'inner' then_branch": what notes name
    std::unordered_map<std::string, Slot> values;
    // Values the plan holds nowhere because no op reads them (a Loop's unused iteration number):
    // an allocation of their own without a note.
    std::unordered_set<std::string> unread;
    // An If branch's results, which its plan leaves to the If's outputs (ProblemOptions::
    // resultsOutside): result name -> output index. Written there when the op's output has room
    // (GraphPlace::outputs), else an allocation of their own without a note (a nested If's outputs
    // get their place once it has run).
    std::unordered_map<std::string, std::size_t> outputs;
    std::map<std::size_t, std::shared_ptr<const OpSlots>> ops; // its control-flow ops' regions, by op position (Branch::nested)
};

// A control-flow op's region: where it lies in the enclosing graph's region (the top level's: 0, at
// its own buffer) and the plan of each of its graphs, by attribute ("then_branch", "else_branch", "body").
struct OpSlots {
    Bytes offset = 0;
    Bytes bytes = 0;
    std::map<std::string, GraphSlots> graphs;
};

// The slots of a control-flow op (`where`: its type and name, "If 'if0'", as notes name it) from its
// graphs' plans (`plans`, each NestedPlan::body an attribute of `graphs`), in a region of
// `regionBytes`. A graph whose plan does not fit the region, or whose ops are not the ones the run
// runs, gets no slots and a line in `notes` saying why.
std::shared_ptr<const OpSlots> bodySlots(const std::string& where, const std::vector<const NestedPlan*>& plans, const Subgraphs& graphs,
    Bytes regionBytes, std::vector<std::string>& notes);

// Adds `note` to arena.notes, in place of the note that starts with `key` (one note per value: a
// Loop's carried value that grows past its buffer keeps the note of its last overrun, its largest).
void addBodyNote(const BodyArena& arena, const std::string& key, const std::string& note);

} // namespace core::exec
