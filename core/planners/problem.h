// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "graph/graph.h"

#include <string>
#include <vector>

namespace core {

// Half-open step interval [start, end). Two lifetimes conflict when they intersect.
struct Lifetime {
    Step start = 0;
    Step end = 0;
    bool overlaps(const Lifetime& other) const { return start < other.end && other.start < end; }
    bool operator==(const Lifetime&) const = default;
};

// One item to place in the arena: the tensors that share it live over `lifetime`.
struct Buffer {
    std::string name;
    Lifetime lifetime;
    Bytes size = 0; // already rounded up to the problem's alignment
    TensorKind kind = TensorKind::Activation;
    std::vector<std::string> tensors; // names of the tensors stored here
    // Parallel to `tensors` when a tensor starts inside the buffer (a Concat input written straight
    // into its slice of the output, by the inplace strategy); empty: every tensor starts at 0.
    std::vector<Bytes> tensorOffsets {};
};

// Memory outside the activation arena (weights, persistent state), reported but not planned.
struct Region {
    std::string name; // "weights", "persistent"
    Bytes size = 0;
    int tensorCount = 0;
};

// What a planner solves: place every buffer so that buffers whose lifetimes conflict do not
// overlap in memory, every offset a multiple of `alignment`.
struct PlanProblem {
    std::vector<Buffer> buffers;
    Bytes alignment = 1;
    Step steps = 0;    // every lifetime lies within [0, steps)
    Bytes capacity = 0; // 0: unbounded; otherwise the arena the problem was posed with
};

// An offset for every buffer (same order as PlanProblem::buffers) and the arena size.
struct Plan {
    std::string planner;
    std::vector<Bytes> offsets;
    Bytes arenaSize = 0;
    // Shared-objects view: slot of each buffer, when the planner assigns slots (coloring); else empty.
    // -1 for an empty buffer, which takes no slot.
    std::vector<int> colors;
    double seconds = 0; // wall time the planner took
    // Search planners (exact) only; the others leave these at their defaults.
    bool provenOptimal = false; // no plan with a smaller arena exists (for the aligned sizes)
    Bytes provenLowerBound = 0; // no plan below this arena exists; 0 when the planner proves nothing
    std::string details;        // one line on how the search ended, for reports ("" when nothing to say)
};

Bytes alignUp(Bytes value, Bytes alignment);

// The most bytes a problem's buffers may need in all: 2^60 (an exbibyte), far beyond any memory,
// so that no offset plus size a planner computes can overflow 64 bits.
constexpr Bytes kMostProblemBytes = Bytes(1) << 60;
// InvalidModel when the buffers' sizes (aligned) add up to more than kMostProblemBytes, naming the
// largest buffer; planners may then add offsets and sizes freely.
Status checkProblemSize(const PlanProblem& problem);

} // namespace core
