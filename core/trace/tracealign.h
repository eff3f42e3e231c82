// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/workload.h"
#include "planners/planner.h"
#include "trace/measuredtrace.h"

#include <optional>
#include <string>
#include <utility>
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

// The aligned axis. Allocations are matched in order of birth: first an exact diff (Myers' O(ND)
// algorithm) on "same size class and, where the sides' keys are comparable, same key", then within
// each unmatched gap by key alone (allocations resized between the sides). The step axes are mapped
// through the matched allocations' birth steps, proportionally between them.
struct AlignOptions {
    // The exact diff gives up past this many unmatched allocations (its memory grows as the square)
    // or this much work (diagonals visited plus comparisons); the sequences are then matched by a
    // greedy scan that takes the nearest next match within `window` allocations summed over both
    // sides, O((n + m) * window) comparisons at worst.
    int maxEdits = 2000;
    std::int64_t maxWork = 50'000'000;
    int window = 32;
    // Fewer matches than this fraction of the smaller side: the axis is purely proportional.
    double fewMatches = 0.1;
};

enum class AlignMethod { Exact, Windowed, Proportional };
std::string_view alignMethodName(AlignMethod method); // "exact", "windowed", "proportional"

struct TraceAlignment {
    // Matched allocations (indices into a.allocations, b.allocations), strictly increasing in both.
    std::vector<std::pair<int, int>> pairs;
    int exactPairs = 0;         // of those, matched by size class (and key)
    bool keysCompared = false;  // the sides' keys overlap enough to require them (else size alone)
    AlignMethod method = AlignMethod::Exact;
    // Per B step: the A step it corresponds to (fractional), non-decreasing, from 0 to A's last step.
    std::vector<double> aStepAt;
    std::string summary; // one line: how the axis was made, what fell back and why
    double matchedFraction(std::size_t a, std::size_t b) const;
};

// The 512-byte rounding of PyTorch's caching allocator (at least 512 bytes).
inline Bytes roundedTo512(Bytes size) { return size <= 512 ? 512 : (size + 511) / 512 * 512; }
// Same size class: equal after the 512-byte rounding, or both in the large pool (over 1 MiB) with
// the larger at most 1 MiB more (the allocator does not split off a remainder of 1 MiB or less).
bool sameSizeClass(Bytes a, Bytes b);

TraceAlignment alignTraces(const DiffSide& a, const DiffSide& b, const AlignOptions& options = {});

} // namespace core
