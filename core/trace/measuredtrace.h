// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/workload.h"
#include "planners/problem.h"
#include "trace/snapshot.h"
#include "trace/tracephases.h"

#include <optional>
#include <string>
#include <vector>

namespace core {

// One device's measured memory as a plan: every allocation the snapshot shows is a buffer placed
// where PyTorch put it, over the event axis. Step 0 is the state before the first event and step
// e + 1 the state after event e, so a snapshot of E events has E + 1 steps; a snapshot without a
// trace has one step, the moment it was taken.

struct TraceAllocation {
    std::int64_t address = 0;
    std::int64_t size = 0;
    int frame = -1;      // MemorySnapshot::frames; -1 when the trace gave no frames
    int allocEvent = -1; // -1: allocated before the trace began (its first event is a free, or it is a block still active)
    int freeEvent = -1;  // the free_completed (else free_requested) that ended it; -1: still live at the end
    std::int64_t stream = 0; // the CUDA stream it was allocated on (its segment's stream)
};

struct TraceOom {
    int event = 0;
    std::int64_t size = 0;       // the request that failed
    std::int64_t deviceFree = -1; // what CUDA still reported free; -1 when not recorded
};

struct MeasuredTrace {
    std::string source;
    int device = 0;
    int eventCount = 0; // of this device (0: a segment-only snapshot)
    bool hasTrace = false;
    std::vector<TraceAllocation> allocations; // same order as problem.buffers
    std::vector<StackFrame> frames;           // MemorySnapshot::frames
    // Every address range a segment covered at some point (the snapshot's segments and the trace's
    // segment_alloc/segment_map), merged and sorted: begin, end.
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
    std::vector<std::int64_t> allocated; // per step: bytes of live allocations
    std::vector<std::int64_t> reserved;  // per step: bytes of segments (cudaMalloc'd)
    Step peakAllocatedStep = 0;
    Step peakReservedStep = 0; // of the steps at the reserved peak, the one with the most allocated
    std::vector<TraceOom> ooms;
    std::vector<TracePhase> phases; // the snapshot's annotations of this device (placeAnnotations)
    std::vector<float> stepSeconds; // per step, seconds since the first event (core::stepSeconds); empty without times
    std::vector<std::string> notes;
    // The allocations as an allocation problem (lifetimes on the event axis) and where PyTorch put
    // them: each offset is the address within its range plus the sizes of the ranges below it, so
    // the gaps of the virtual address space between segments take no room.
    PlanProblem problem;
    Plan measured;

    std::int64_t peakAllocated() const { return allocated.empty() ? 0 : allocated[std::size_t(peakAllocatedStep)]; }
    std::int64_t peakReserved() const { return reserved.empty() ? 0 : reserved[std::size_t(peakReservedStep)]; }
    // Reserved bytes at the reserved peak that no allocation held.
    std::int64_t fragmentationAtPeak() const { return peakReserved() - (allocated.empty() ? 0 : allocated[std::size_t(peakReservedStep)]); }
    std::string frameName(int frame) const; // frameLabel, or "(no frames)"
};

// Replays one device's events (default: the device with the most events, else the one with the
// most segments). An allocation lives from its alloc to its free_completed, or its free_requested
// when no completion follows; a free whose address no earlier event touched frees an allocation
// made before the trace began (PyTorch keeps the last events only), which then lives from step 0.
// Refused, naming the event, segment or block: a free where nothing is live that was allocated in
// the trace, a free whose size differs from its alloc's, an alloc over a live allocation, an
// allocation outside every segment, two live allocations that overlap (the validator's check).
// `progress` hears "replaying the events"; its cancel ends the replay with ErrorCode::Cancelled.
Expected<MeasuredTrace> measureTrace(const MemorySnapshot& snapshot, const std::string& source, std::optional<int> device = std::nullopt,
    const LoadProgress& progress = {});
// The same, releasing the replayed device's events as soon as they are replayed (before the problem
// is built), so that a large snapshot's events and its problem are not held at once.
Expected<MeasuredTrace> measureTrace(MemorySnapshot&& snapshot, const std::string& source, std::optional<int> device = std::nullopt,
    const LoadProgress& progress = {});

// The measured trace as a workload the views and planners take: its problem, the segment ranges as
// regions, its notes.
Workload traceWorkload(const MeasuredTrace& trace);
// The same, taking over the trace's problem and notes instead of copying them (a large snapshot's
// problem holds millions of buffers); the rest of the trace is left as it was.
Workload traceWorkload(MeasuredTrace&& trace);


} // namespace core
