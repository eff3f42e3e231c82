// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "exec/tensordata.h"
#include "liveness/lifetimes.h"
#include "planners/problem.h"
#include "schedule/schedule.h"
#include "trace/tracephases.h"
#include "util/cancel.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace core {

struct LoadOptions {
    // Activation alignment. Unset: 256 bytes for graphs, 1 for allocation problems (CSV, hotel, five-tensors).
    std::optional<Bytes> alignment;
    ShapeBindings bindings;
    // Plan op workspaces as buffers (ProblemOptions::workspaces). Graphs only: an allocation problem
    // has no ops, so it loads as it is (Workload::workspaces stays false).
    bool workspaces = false;
    // Graph inputs given as files (input name -> .pb file, as `--input NAME=FILE.pb`): read by
    // readInputFiles, which adds to `bindings` what they fix; the workload keeps their contents.
    std::vector<std::pair<std::string, std::filesystem::path>> inputFiles;
    // Memory snapshots report their stages here and stop when it is cancelled (the Studio's
    // progress and Cancel); other sources load in about a second and do not.
    LoadProgress progress;
};

// Everything loaded from one source, ready to plan.
struct Workload {
    std::string source; // file path or "example:NAME"
    std::optional<Graph> graph; // absent for allocation problems (CSV, hand-written examples)
    Schedule schedule;
    PlanProblem problem;
    std::vector<Region> regions;
    std::vector<TensorIndex> bufferTensor; // per buffer, its tensor in graph (empty without a graph); -1 for a workspace
    std::vector<OpIndex> bufferOp;         // per buffer, the op whose workspace it is, else -1 (empty without a graph)
    bool workspaces = false;               // the problem plans op workspaces; re-planning keeps them
    // The control-flow ops' graphs planned inside them, in schedule order (liveness/lifetimes.h
    // NestedPlan): each op's "<op> body" buffer reserves the arena of the one that decides.
    std::vector<NestedPlan> nested;
    std::vector<std::string> notes;        // facts the report should mention
    // What the load was given for the graph's inputs: the sizes (LoadOptions::bindings with what the
    // input files fixed) and the files' contents by input name. A run of this workload takes the
    // contents as its inputs, and an import of its model for the run's data the sizes.
    ShapeBindings bindings;
    std::map<std::string, HostTensor> givenInputs;
    // What a measured allocator did with these buffers (a PyTorch memory snapshot, core/trace):
    // absent for models and problems. Planners replan the same problem; this is the placement to
    // hold their plans against.
    struct Recorded {
        std::string allocator;       // who placed the buffers ("PyTorch's caching allocator")
        Plan plan;                   // where it put each buffer, validated against `problem`
        std::vector<Bytes> reserved; // per step: bytes its segments held (the plan's arena counts the address ranges)
        // Events to mark on the step axis (out-of-memory errors), by the step they end: what happened.
        std::vector<std::pair<Step, std::string>> marks;
        // Where each buffer was allocated: an index in `siteNames` ("model.py:213 forward"), -1 when
        // the allocator recorded no stack; and the stream it was allocated on.
        std::vector<int> site;
        std::vector<std::string> siteNames;
        std::vector<std::int64_t> stream;
        // Named regions the framework annotated (record_function), on the step axis (core/trace/tracephases.h).
        std::vector<TracePhase> phases;
        // Seconds since the first event at each step (core::stepSeconds); empty without event times.
        std::vector<float> stepSeconds;
    };
    std::optional<Recorded> recorded;
};

// `spec` is a path (.onnx, .json, .csv, a PyTorch memory snapshot .pickle/.pkl/.pickle.gz; chosen by
// extension, then by content) or "example:NAME". A snapshot loads as its allocations on the event
// axis with Workload::recorded set (core/trace/measuredtrace.h: its busiest device).
// Input files (LoadOptions::inputFiles) are read first; their errors name the input or the file.
Expected<Workload> loadWorkload(const std::string& spec, const LoadOptions& options);

// Schedules (model order), computes lifetimes and builds the problem for an already-imported graph.
Expected<Workload> workloadFromGraph(Graph graph, const std::string& source, const LoadOptions& options);

// Wraps a bare allocation problem; applies options.alignment when set.
Workload workloadFromProblem(PlanProblem problem, const std::string& source, const LoadOptions& options);

} // namespace core
