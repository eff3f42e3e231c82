// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "io/workload.h"

#include "examples/examples.h"
#include "exec/opcall.h"
#include "io/jsongraph.h"
#include "io/problemcsv.h"
#include "onnx/onnximport.h"
#include "trace/measuredtrace.h"
#include "trace/snapshot.h"
#include "util/alignment.h"
#include "util/format.h"
#include "util/readfile.h"

#include <algorithm>
#include <fstream>
#include <limits>

namespace core {

namespace {
constexpr Bytes kGraphAlignment = 256;

std::string lowerExtension(const std::string& path)
{
    auto ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext;
}

// For files without a known extension: '{' starts JSON, a header with "lower" is CSV, else try ONNX
// (whose own message then says what failed, with what the file starts with: see loadSized).
std::string sniff(const std::string& path, std::string& head)
{
    std::ifstream in(path, std::ios::binary);
    head.assign(256, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    const auto first = head.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && head[first] == '{')
        return ".json";
    // Pickle protocol 2 and later opens with PROTO (0x80); gzip with 1f 8b: a memory snapshot.
    if (head.size() >= 2 && ((static_cast<unsigned char>(head[0]) == 0x80 && head[1] >= 2 && head[1] <= 5)
                                || (static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b)))
        return ".pickle";
    if (head.find("lower") != std::string::npos && head.find("upper") != std::string::npos)
        return ".csv";
    return ".onnx";
}

// The first bytes of a file as a message shows them: printable text as it is, else hex.
std::string describeHead(const std::string& head)
{
    const auto shown = head.substr(0, 16);
    const bool text = std::all_of(shown.begin(), shown.end(), [](unsigned char c) { return c >= 0x20 && c < 0x7f; });
    if (text)
        return "'" + shown + "'";
    std::string hex;
    static constexpr char kHex[] = "0123456789abcdef";
    for (unsigned char c : shown) {
        hex += hex.empty() ? "" : " ";
        hex += kHex[c >> 4];
        hex += kHex[c & 15];
    }
    return "bytes " + hex;
}
} // namespace

Workload workloadFromProblem(PlanProblem problem, const std::string& source, const LoadOptions& options)
{
    Workload workload;
    workload.source = source;
    if (options.alignment) {
        problem.alignment = *options.alignment;
        for (auto& b : problem.buffers)
            b.size = alignUp(b.size, problem.alignment);
    }
    workload.problem = std::move(problem);
    return workload;
}

Expected<Workload> workloadFromGraph(Graph graph, const std::string& source, const LoadOptions& options)
{
    if (options.alignment)
        if (auto s = checkAlignment(*options.alignment); !s)
            return s.error();
    auto schedule = modelOrder(graph);
    if (!schedule)
        return makeError(schedule.error().code, source + ": " + schedule.error().message);
    const Bytes alignment = options.alignment.value_or(kGraphAlignment);
    auto built = makeProblem(graph, *schedule, ProblemOptions { alignment, options.workspaces });
    if (!built)
        return makeError(built.error().code, source + ": " + built.error().message);
    Workload workload;
    workload.source = source;
    workload.notes = graph.notes;
    for (std::size_t step = 0; step < schedule->order.size(); ++step)
        if (schedule->order[step] != static_cast<OpIndex>(step)) {
            workload.notes.push_back("ops are not in dependency order in the file; scheduled in dependency order");
            break;
        }
    workload.schedule = std::move(*schedule);
    workload.problem = std::move(built->problem);
    workload.regions = std::move(built->regions);
    workload.bufferTensor = std::move(built->bufferTensor);
    workload.bufferOp = std::move(built->bufferOp);
    workload.nested = std::move(built->nested);
    workload.workspaces = options.workspaces;
    workload.graph = std::move(graph);
    return workload;
}

namespace {

// Sizes given for a source whose sizes are fixed (a built-in example, an allocation problem) would
// be ignored: they are refused instead.
Status checkNoSizesGiven(const std::string& spec, const LoadOptions& options, const std::string& what)
{
    if (options.bindings.dims.empty() && options.bindings.inputShapes.empty())
        return {};
    const auto option = options.bindings.dims.empty() ? "--input-shape" : "--dim";
    return makeError(ErrorCode::InvalidArgument, spec + ": " + option + " does not apply: " + what
            + " has fixed sizes (sizes are given to ONNX models and JSON graphs)");
}

Expected<Workload> loadSized(const std::string& spec, const LoadOptions& options)
{
    static const std::string kExamplePrefix = "example:";
    if (spec.rfind(kExamplePrefix, 0) == 0) {
        auto example = buildExample(spec.substr(kExamplePrefix.size()));
        if (!example)
            return example.error();
        if (auto s = checkNoSizesGiven(spec, options, "a built-in example"); !s)
            return s.error();
        if (example->problem)
            return workloadFromProblem(std::move(*example->problem), spec, options);
        return workloadFromGraph(std::move(*example->graph), spec, options);
    }

    std::error_code ec;
    if (!std::filesystem::exists(spec, ec))
        return makeError(ErrorCode::Io, spec + ": no such file");
    if (std::filesystem::is_directory(spec, ec))
        return makeError(ErrorCode::Io, spec + ": is a folder, not a model file");
    // A device or a FIFO would be read forever or block; each reader caps the size of its kind.
    if (auto regular = checkReadableFile(spec, std::numeric_limits<std::int64_t>::max(), "a model"); !regular)
        return regular.error();

    auto ext = lowerExtension(spec);
    if (ext == ".pkl" || (ext == ".gz" && lowerExtension(spec.substr(0, spec.size() - 3)) == ".pickle"))
        ext = ".pickle";
    std::string head;
    const bool guessed = ext != ".onnx" && ext != ".json" && ext != ".csv" && ext != ".pickle";
    if (guessed)
        ext = sniff(spec, head);
    if (ext == ".pickle") {
        if (auto s = checkNoSizesGiven(spec, options, "a memory snapshot"); !s)
            return s.error();
        // The snapshot's events are dropped once replayed, and the trace's problem moves into the
        // workload: a large snapshot's load holds each stage once, not all of them at the end.
        auto trace = [&]() -> Expected<MeasuredTrace> {
            auto snapshot = loadSnapshot(spec, options.progress);
            if (!snapshot)
                return snapshot.error();
            return measureTrace(std::move(*snapshot), spec, std::nullopt, options.progress);
        }();
        if (!trace)
            return trace.error();
        auto workload = traceWorkload(std::move(*trace));
        workload.regions.clear(); // the segments are the recorded plan's arena, not memory beside it
        if (options.alignment)
            workload.notes.push_back("--alignment does not apply to a memory snapshot: its sizes are the allocator's own");
        trace->measured.planner = "as recorded"; // what the views and reports call this placement (the Studio's planner entry)
        workload.recorded.emplace();
        workload.recorded->allocator = "PyTorch's caching allocator";
        workload.recorded->plan = std::move(trace->measured);
        workload.recorded->reserved = std::move(trace->reserved);
        for (const auto& oom : trace->ooms)
            workload.recorded->marks.emplace_back(oom.event + 1,
                "OOM: " + formatBytes(oom.size) + " asked" + (oom.deviceFree >= 0 ? ", " + formatBytes(oom.deviceFree) + " free" : std::string()));
        auto& recorded = *workload.recorded;
        for (const auto& frame : trace->frames)
            recorded.siteNames.push_back(frameLabel(frame));
        recorded.site.reserve(trace->allocations.size());
        recorded.stream.reserve(trace->allocations.size());
        for (const auto& a : trace->allocations) {
            recorded.site.push_back(a.frame);
            recorded.stream.push_back(a.stream);
        }
        recorded.phases = std::move(trace->phases);
        recorded.stepSeconds = std::move(trace->stepSeconds);
        return workload;
    }
    if (ext == ".csv") {
        auto csv = importProblemCsv(spec);
        if (!csv)
            return csv.error();
        if (auto s = checkNoSizesGiven(spec, options, "an allocation problem"); !s)
            return s.error();
        return workloadFromProblem(std::move(csv->problem), spec, options);
    }
    auto graph = ext == ".json" ? importJsonGraph(spec, options.bindings) : importOnnx(spec, options.bindings);
    if (!graph && guessed && graph.error().code == ErrorCode::InvalidModel && ext == ".onnx")
        // Neither '{' nor a CSV header: the ONNX reader's verdict is about an ONNX model, which the
        // file was only guessed to be.
        return makeError(ErrorCode::InvalidModel, spec + ": not an ONNX model, a JSON graph or an allocation-problem CSV"
                + " (no .onnx, .json or .csv extension; it starts with " + describeHead(head) + "); read as ONNX: "
                + (graph.error().message.starts_with(spec + ": ") ? graph.error().message.substr(spec.size() + 2) : graph.error().message));
    if (!graph)
        return graph.error();
    return workloadFromGraph(std::move(*graph), spec, options);
}

} // namespace

Expected<Workload> loadWorkload(const std::string& spec, const LoadOptions& options)
{
    if (options.alignment)
        if (auto s = checkAlignment(*options.alignment); !s)
            return s.error();
    LoadOptions sized = options;
    auto given = readInputFiles(spec, options.inputFiles, sized.bindings);
    if (!given)
        return given.error();
    auto workload = loadSized(spec, sized);
    // A plan is only as good as the inputs it was made for: contents that a run would refuse
    // (another element type or size) are refused here too.
    if (workload && workload->graph)
        if (auto s = exec::checkGivenInputs(*workload->graph, *given); !s)
            return s.error();
    if (workload) {
        workload->bindings = std::move(sized.bindings);
        workload->givenInputs = std::move(*given);
    }
    return workload;
}

} // namespace core
