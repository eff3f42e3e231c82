// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/workload.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace core {

// An ONNX Runtime profile (SessionOptions enableProfiling; docs/FILE_FORMATS.md): a JSON array of
// Chrome-trace events. "Session" events time the load, the initialization and each run
// ("model_run"); one "Node" event "<node>_kernel_time" per executed node and run, whose args (numbers
// written as strings) give the node's op type, index, output, activation and parameter bytes and,
// from ONNX Runtime 1.17 on with the CPU memory arena, the arena's bytes in use after the node.

// One node's kernel, as the profile gives it. Bytes are -1 where the profile does not record them.
struct OrtNodeEvent {
    int event = 0;           // index of the event in the file's array
    std::string name;        // the node name: the event name without "_kernel_time"; "<op type>_<node index>" for an unnamed node
    std::string opType;      // args.op_name
    std::string provider;    // args.provider ("CPUExecutionProvider"); empty when absent
    std::int64_t nodeIndex = -1;
    std::int64_t tsUs = 0;   // start, microseconds since profiling began
    std::int64_t durUs = 0;  // kernel time
    std::int64_t outputBytes = -1;     // args.output_size: bytes of the node's outputs
    std::int64_t activationBytes = -1; // args.activation_size: bytes of its non-constant inputs
    std::int64_t parameterBytes = -1;  // args.parameter_size: bytes of its constant inputs
    std::int64_t inUse = -1;           // args.mem_bytes_in_use: the arena's bytes handed out after the node (rounded to its bins)
    std::int64_t requestedInUse = -1;  // args.mem_bytes_requested_in_use: the same as the callers asked for them
    std::int64_t arenaHeld = -1;       // args.mem_arena_held: bytes the arena holds from the system
    std::int64_t inUsePeak = -1;       // args.mem_in_use_peak: the arena's high-water mark so far (inside kernels too)
};

struct OrtProfile {
    std::string source;
    int runs = 0;             // passes found: "model_run" events, else restarts of node_index (see parseOrtProfile)
    int pass = 0;             // the pass `nodes` holds, 0-based
    bool runsFromSessionEvents = true; // false: passes were told apart by node_index restarting
    bool hasMemory = false;   // every node of the pass has the mem_* args (ORT 1.17+, CPU arena on)
    std::int64_t loadUs = -1; // "model_loading_uri" (or _array) duration; -1 when absent
    std::int64_t initUs = -1; // "session_initialization" duration
    std::int64_t runUs = -1;  // the pass's "model_run" duration
    std::vector<OrtNodeEvent> nodes; // the pass's kernels in execution order
    int skippedEvents = 0;    // events of the file neither read nor needed (fences, other categories, other passes' nodes)
    std::vector<std::string> notes;

    // Index into `nodes` of the largest value of a field (the first on ties); -1 when none is recorded.
    int peakIndex(std::int64_t OrtNodeEvent::*field) const;
    std::int64_t peak(std::int64_t OrtNodeEvent::*field) const;
    std::int64_t kernelUs() const; // sum of the pass's kernel times
};

// Whether `head` (the first bytes of a file) opens a JSON document, which `memplan trace` then reads
// as an ONNX Runtime profile (a PyTorch snapshot is a pickle, whose first byte is never '[' or '{').
bool looksLikeJson(std::string_view head);
// The first bytes of `file`, for looksLikeJson; empty when it cannot be read.
std::string fileHead(const std::filesystem::path& file, std::size_t bytes = 64);

// Reads a profile from its text. The root is the event array (or an object with "traceEvents").
// Passes: each "model_run" event holds the node events that start inside it; without model_run
// events, a pass ends where a node_index repeats. `pass` picks one (0-based; default the last,
// noted). Never throws. Refusals name the source and the event index: not JSON, not an array of
// events, no Node or Session event, a node event without a name, op_name or node_index, a size or
// time that is not a whole number or is negative or over 2^60 (kMostProblemBytes), a pass out of range.
Expected<OrtProfile> parseOrtProfile(const std::string& text, const std::string& source, std::optional<int> pass = std::nullopt);

// readFileCapped (kMaxOrtProfileBytes, core/util/readfile.h), then parseOrtProfile.
Expected<OrtProfile> loadOrtProfile(const std::filesystem::path& file, std::optional<int> pass = std::nullopt);

// One schedule step of a workload with the profile laid over it: the plain per-step record a view
// or report reads. Measured fields are -1 where no ORT node ran the step's op (or the profile has
// no memory numbers).
struct OrtStep {
    Step step = 0;
    OpIndex op = -1;
    int node = -1;                  // index into OrtProfile::nodes; -1: no ORT node ran this op
    std::int64_t kernelUs = -1;
    std::int64_t inUse = -1;
    std::int64_t requestedInUse = -1;
    std::int64_t arenaHeld = -1;
    std::int64_t ortOutputBytes = -1; // OrtNodeEvent::outputBytes
    Bytes plannedOutputBytes = 0;     // MemPlan's sizes of the op's outputs (exact, not aligned; -1 if one is unknown)
    Bytes liveBytes = 0;              // MemPlan: bytes of buffers live at this step (aligned), liveBytesCurve
    bool fused = false;               // the node is one ORT's optimizer made, named after this step's output or op (see overlayOrtProfile)
};

struct OrtOverlay {
    std::vector<OrtStep> steps;       // one per schedule step, in order
    std::vector<int> unmappedNodes;   // indices into OrtProfile::nodes that no step matched (ORT-made or fused nodes, ops MemPlan folded)
    std::vector<Step> unrunSteps;     // steps no ORT node ran (fused away by ORT's optimizer)
    std::vector<Step> typeMismatches; // mapped steps, not fused, whose ORT op type differs from the graph op's
    int mapped = 0;                   // steps with a node
    int fused = 0;                    // of them, steps whose node ORT's optimizer made (OrtStep::fused)

    // Of the mapped steps, the `top` (0: all) with the largest |inUse - liveBytes|, largest first
    // (none without memory numbers).
    std::vector<Step> largestGaps(int top) const;
};

// Matches the profile's nodes to `workload`'s schedule. A named node matches the op of its name
// (MemPlan names an op after its ONNX node); a name several ops share goes to them in schedule order.
// An unnamed node is "<op type>_<index>" on both sides, but ORT's index drops by one for every
// Constant node before it (ORT makes them initializers): so, per op type, unnamed nodes in index
// order take the unnamed ops left in index order, each the first whose index is not below its own.
// A node ORT's optimizer made keeps no op's name but is named after what it replaces: a layout
// node "<tensor>_nchwc" (a Conv with the activation after it) takes the step producing that tensor,
// a fusion "<op>/<Kind>Fusion/" the step of that op, when no node ran it under its own name (fused).
// The steps of the other ops a fused node absorbed are left unrun.
// Refused when the workload has no graph.
Expected<OrtOverlay> overlayOrtProfile(const OrtProfile& profile, const Workload& workload);

} // namespace core
