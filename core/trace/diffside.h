// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/workload.h"
#include "planners/planner.h"
#include "trace/measuredtrace.h"

#include <optional>
#include <string>
#include <vector>

namespace core {

// One side of a memory diff (`memplan trace A B`): what a PyTorch snapshot measured, or what the
// default planner planned for a model, reduced to what a diff compares: a live-bytes curve on the
// side's own step axis and its allocations in order of birth.

struct DiffAllocation {
    Lifetime lifetime; // on the side's step axis
    Bytes size = 0;
    std::string site;     // the per-site rows: a snapshot's frame (frameLabel); a plan's module, else its producing op's type
    // What matching compares: `key` between sides of one kind (a frame's label, a tensor's name),
    // `shortKey` between a snapshot and a plan (a frame's function name, a tensor's name).
    std::string key;
    std::string shortKey;
    std::string category; // a plan's tensor category ("saved", "temporary", ...) or kind; empty for a snapshot
    int buffer = -1;      // the side's problem buffer (a snapshot: its MeasuredTrace::allocations index)
};

struct DiffSide {
    std::string source;
    bool measured = false; // a PyTorch snapshot; else the plan of a model
    std::string planner;   // the plan's planner (validated); "pytorch" for a snapshot
    int device = 0;        // a snapshot's device
    int events = 0;        // a snapshot's events (0 for a plan)
    std::vector<Bytes> live; // per step: bytes of live allocations (a plan: planned live bytes)
    std::vector<Bytes> held; // per step: bytes reserved (a snapshot's segments; a plan's arena at every step)
    Step peakStep = 0;       // first step at the most live bytes
    Bytes peak = 0;
    Bytes heldPeak = 0;      // peak reserved, or the planned arena
    Bytes outside = 0;       // a plan's regions (weights, persistent state): memory beside the arena, not in `live`
    // Sorted by lifetime.start, then by buffer: the order the allocations were born in.
    std::vector<DiffAllocation> allocations;
    std::vector<std::string> notes;
};

// A snapshot's side: its allocated curve and reserved curve, its allocations keyed by their frame.
DiffSide measuredSide(const MeasuredTrace& trace);
// A model's side: `workload.problem` planned by `planner` and checked by the validator (planValidated);
// refused, with the planner's or validator's message, when that fails. A workload that is itself a
// snapshot (Workload::recorded) is refused: measure it with measuredSide to keep its frames.
Expected<DiffSide> plannedSide(const Workload& workload, const Planner& planner);

// Whether `spec` names a PyTorch snapshot: a .pickle/.pkl/.pickle.gz file, or a file opening with a
// pickle PROTO or gzip header (what loadWorkload reads as one).
bool isSnapshotFile(const std::string& spec);
// A snapshot (measureTrace of `device`, default its busiest) or anything loadWorkload takes, planned.
// Errors name `spec`.
Expected<DiffSide> loadDiffSide(const std::string& spec, std::optional<int> device, const Planner& planner);

} // namespace core
