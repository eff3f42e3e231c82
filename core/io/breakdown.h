// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// What a captured training step holds, by tensor category and module (graph/capture.h), and where
// its phases run: for the `memplan plan` report, the plan JSON and the Studio's stacked memory curve.
// Every function is pure and safe on any thread.

#include "graph/capture.h"
#include "io/workload.h"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace core {

// One slot per TensorCategory (in enum order), then kOtherSlot: memory without a category (an op's
// workspace, a tensor the capture gave none, every buffer of an allocation problem).
inline constexpr int kBreakdownSlots = kCategoryCount + 1;
inline constexpr int kOtherSlot = kCategoryCount;
using CategoryBytes = std::array<Bytes, kBreakdownSlots>;
std::string_view breakdownSlotName(int slot); // categoryName(slot), or "other"

struct ModuleBytes {
    std::string module; // Tensor::module ("" at top level; a workspace: its op's module)
    Bytes bytes = 0;
};

struct PeakBreakdown {
    Step step = -1;
    OpIndex op = -1;             // the op run at `step`; -1 without a graph
    CategoryBytes categories {}; // bytes per slot
    std::vector<ModuleBytes> modules; // every module holding bytes at `step`, bytes descending, then by name
    Bytes total() const;
};

// What is held at `step`: each arena buffer live at `step` (its planned, aligned size) under its
// tensor's category and module, plus every region tensor (weights, parameters, gradients, optimizer
// state, ...; makeProblem's regions, which are held for the whole step) under its own. The total is
// the arena's live bytes at `step` plus the regions' bytes. A step outside [0, steps) counts the
// regions only.
PeakBreakdown peakBreakdown(const Workload& workload, Step step);

// Per step in [0, problem.steps), the bytes per slot as peakBreakdown counts them (the regions at
// every step): the layers of a stacked memory curve.
std::vector<CategoryBytes> categoryCurve(const Workload& workload);

// Where one phase runs: the first and last step (inclusive) of its ops in the schedule.
struct PhaseRange {
    std::string name; // phaseName: "forward", "backward", "optimizer"
    Step first = 0, last = 0;
};
// One range per phase some scheduled op has, in phase order; empty when no op has a phase. Ops a
// strategy inserts take their neighbour's phase (insertOp), so ranges stay contiguous.
std::vector<PhaseRange> phaseRanges(const Graph& graph, const Schedule& schedule);

} // namespace core
