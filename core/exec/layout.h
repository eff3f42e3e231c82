// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Where a run's tensors live, before any memory exists: the placement both executors (CPU and CUDA)
// start from, so that a plan means the same bytes on every device. Each executor only turns
// offsets into pointers (host allocations, cudaMalloc, per-buffer allocations).
// - Buffer tensors: every buffer's own tensor (Workload::bufferTensor) and the tensors it lists by
//   name (views aliasing their input, in-place outputs, Concat inputs in their slice of the output)
//   share the buffer, each at its Buffer::tensorOffsets entry; a tensor that would end past its
//   buffer is not placed there. In arena mode the offset is the plan's offset of the buffer plus that.
// - Side tensors: every other tensor of known, non-zero size (weights, persistent state, tensors
//   without a buffer) gets its own slot in a side region, in tensor order, each slot aligned.
// - Excluded tensors (a mask the executor gives: fused ops' internals, which live in kernel
//   scratch; swapped-out host tensors the CUDA executor pins) get a slot only through a buffer.
// Bad input (a plan for another problem, a buffer outside the arena) is an error, never a crash.

#include "planners/problem.h"
#include "schedule/schedule.h"

#include <vector>

namespace core::exec {

enum class PlaceKind {
    None,   // no memory from the placement (size 0 outside a buffer, unknown size, or excluded)
    Buffer, // a buffer of the problem (arena: at the plan's offset; per-tensor: the buffer's own allocation)
    Side,   // a slot of the side region
};

struct TensorPlace {
    PlaceKind kind = PlaceKind::None;
    int buffer = -1;       // PlaceKind::Buffer: the buffer; else -1
    Bytes offset = -1;     // Buffer: offset in the arena (without an arena: inBuffer); Side: offset in the side region
    Bytes inBuffer = 0;    // Buffer: where the tensor starts inside its buffer (Buffer::tensorOffsets); else 0
    Bytes bytes = 0;       // the tensor's size (0 when unknown)
    TensorIndex aliasOf = -1; // Buffer: the buffer's own tensor when this is another tensor sharing it; else -1
    bool stored = false;   // has memory of its own bytes in this run (Buffer with size > 0, or a side slot)
};

struct Placement {
    std::vector<TensorPlace> tensors; // per graph tensor
    Bytes arenaBytes = 0;             // plan.arenaSize in arena mode, else 0
    Bytes sideBytes = 0;              // the side region: sum of the aligned slots
};

struct PlacementOptions {
    bool arena = true;        // false: per-tensor allocation, the plan's offsets unused (and unchecked)
    Bytes sideAlignment = 64; // every side slot starts at a multiple of this
    const std::vector<bool>* excluded = nullptr; // per tensor; null: none
};

Expected<Placement> placeTensors(const Graph& g, const PlanProblem& problem, const Plan& plan, const std::vector<TensorIndex>& bufferTensor,
    const PlacementOptions& options);

// Per buffer (0 .. buffers - 1): the stored tensors placed in it, in tensor order. Per-tensor
// allocation points these at the buffer's allocation plus their inBuffer.
std::vector<std::vector<TensorIndex>> storedTensorsByBuffer(const Placement& placement, std::size_t buffers);

// When the run first needs each buffer and when it reads it for the last time, from the ops' inputs,
// outputs and captured tensors, not from the plan's lifetimes; an op's workspace (`workspaceAt`: per
// step, its buffer or -1, as core::workspaceAtStep gives) only at its op's step.
struct BufferUse {
    std::vector<Step> first; // -1: a graph input, written before step 0; steps: never used
    std::vector<Step> last;  // step after which the value is dead; steps - 1 for graph outputs
};
BufferUse bufferUse(const Graph& g, const Schedule& schedule, const Placement& placement, std::size_t buffers,
    const std::vector<int>& workspaceAt = {});

} // namespace core::exec
