// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// `memplan trace`: PyTorch memory snapshots from the command line.
#include "tracecli.h"

#include "cliargs.h"

#include "io/problemcsv.h"
#include "io/workload.h"
#include "trace/ortreport.h"
#include "trace/tracediff.h"
#include "trace/tracereport.h"

#include "util/printable.h"

#include <climits>
#include <fstream>
#include <iostream>

namespace {

constexpr int kOk = 0, kError = 1, kUsage = 2;

const char* const kTraceHelp = R"(usage: memplan trace SNAPSHOT [--json FILE] [--csv FILE] [--replan PLANNER] [--device N] [--top N]
       memplan trace A B [--json FILE] [--device N] [--replan PLANNER] [--top N]
       memplan trace PROFILE.json [--model MODEL.onnx] [--json FILE] [--run N] [--replan PLANNER] [--top N]

Reads a PyTorch CUDA memory snapshot, as written by
    torch.cuda.memory._record_memory_history(); ...; torch.cuda.memory._dump_snapshot("x.pickle")
(a pickle, gzip-compressed or not; nothing in it is executed) and replays one device's allocator
events. Prints the peak of allocated bytes, the peak of reserved (cudaMalloc'd) bytes, the reserved
bytes no allocation held at that peak, the event, allocation and OOM counts, the largest allocations
live at the allocated peak with the Python frame that made them, and the same allocations as an
allocation problem: its lower bound (the most bytes live at once) and the arena an offline planner
packs them in, checked by the independent validator. A snapshot without a trace (recorded without
_record_memory_history) is read as one step: the allocator's state when it was taken.

With two files A and B, each a snapshot or anything `memplan plan` reads (an ONNX model, a JSON graph,
a captured training step, example:NAME; planned by --replan's planner and validated): a diff. The
allocations of both sides, in order of birth, are matched (same size after the allocator's 512-byte
rounding and, where both sides name them alike, the same frame or tensor; then the same name at
another size), and B's step axis mapped onto A's through the matched births. It prints both peaks,
how the axis was made (an exact diff; a greedy windowed match when the exact one passes its bound;
a purely proportional axis when almost nothing matches), what makes B's peak differ from A's as
ranked rows that add up to the change (allocations with no counterpart, rounding, resized
allocations, allocations that live longer on one side, peaks at other moments), and the bytes live
at each peak by category and by allocation site. --json adds both curves on B's step axis.

An ONNX Runtime profile (SessionOptions enableProfiling; scripts/ort_profile.js writes one) is told
by its content, a JSON array of trace events. Prints the peaks of the CPU arena's bytes in use,
requested and held, each with the node (and step) after which it was measured, and the kernel time;
without --model also the kernel time by op type. With --model, the same model is planned as
`memplan plan` does (validated) and the profile laid over its schedule by node name: MemPlan's lower
bound and planned arena beside ORT's peaks, how many steps ran as an ORT node, the ORT nodes that map
to no step (made by ORT's optimizer, or folded by MemPlan at import) and the steps ORT fused away,
and the steps with the largest gap between ORT's bytes in use and MemPlan's live bytes. A profile of
several runs is read by its last run unless --run says otherwise.

  --model MODEL         the ONNX model the profile ran, to plan and compare with
  --run N               the run of a profile to read, 1 for the first (default: the last)
  --json FILE           write the report (or the comparison) as JSON, exact bytes
  --csv FILE            write the allocations as an allocation-problem CSV (id,lower,upper,size; steps
                        are events), which `memplan plan FILE.csv` reads
  --replan PLANNER      planner for the offline plan, of --model's plan, or of a model compared with
                        `trace A B` (default best-of-greedy)
  --device N            the device to replay, of every snapshot (default: the one with the most events)
  --top N               allocations (sites, with two files; steps or op types of a profile) to
                        list (default 10; 20 with two)
)";

int fail(const std::string& message, int code)
{
    std::cerr << "memplan: " << core::printable(message) << "\n";
    return code;
}

bool writeText(const std::string& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary);
    out << text;
    return bool(out);
}

// `memplan trace PROFILE.json [--model MODEL]`: an ONNX Runtime profile, alone or laid over the plan
// of the model it ran.
int ortProfileCommand(const std::string& file, const CliArgs& args, const core::Planner& planner, int top)
{
    std::optional<int> run;
    if (const auto text = args.value("run")) {
        const auto value = parseInteger(*text);
        if (!value || *value < 1 || *value > INT_MAX)
            return fail("trace: --run '" + *text + "': expected a run number (1 for the first)", kUsage);
        run = int(*value - 1);
    }
    auto profile = core::loadOrtProfile(file, run);
    if (!profile)
        return fail(profile.error().message, kError);
    std::string text, json;
    if (const auto model = args.value("model")) {
        auto workload = core::loadWorkload(*model, core::LoadOptions {});
        if (!workload)
            return fail(workload.error().message, kError);
        auto overlay = core::overlayOrtProfile(*profile, *workload);
        if (!overlay)
            return fail(overlay.error().message, kError);
        auto plan = core::planForProfile(*workload, planner);
        if (!plan)
            return fail(plan.error().message, kError);
        const core::OrtComparison with { &*workload, &*overlay, &*plan };
        text = core::formatOrtReport(*profile, with, top);
        if (args.has("json"))
            json = core::ortReportJson(*profile, with, top);
    } else {
        text = core::formatOrtReport(*profile, {}, top);
        if (args.has("json"))
            json = core::ortReportJson(*profile, {}, top);
    }
    std::cout << text;
    if (const auto path = args.value("json"); path && !writeText(*path, json))
        return fail(*path + ": cannot write the file", kError);
    return kOk;
}

} // namespace

int traceCommand(const std::vector<std::string>& words)
{
    auto args = parseCliArgs(words, { "json", "csv", "replan", "device", "top", "model", "run" }, { "help" });
    if (!args)
        return fail("trace: " + args.error().message + " (see memplan trace --help)", kUsage);
    if (args->has("help")) {
        std::cout << kTraceHelp;
        return kOk;
    }
    const auto& files = args->positional;
    if (files.empty() || files.size() > 2)
        return fail("trace: expected one SNAPSHOT, or two to compare, got " + std::to_string(files.size()) + " (see memplan trace --help)", kUsage);
    const bool diff = files.size() == 2;
    // A PyTorch snapshot is a pickle (gzip-compressed or not): a file opening like JSON is a profile.
    // Two files: a JSON object is a graph to plan, and only a JSON array (a profile's trace events) is a profile.
    bool profile = args->has("model") || args->has("run");
    for (const auto& file : files) {
        const auto head = core::fileHead(file);
        const auto first = head.find_first_not_of(" \t\r\n");
        profile = profile || (diff ? first != std::string::npos && head[first] == '[' : core::looksLikeJson(head));
    }
    if (profile && diff)
        return fail("trace: an ONNX Runtime profile is read alone (with --model MODEL to compare it with MemPlan's plan); two files compare "
                    "snapshots and models",
            kUsage);
    if (profile && (args->has("csv") || args->has("device")))
        return fail(std::string("trace: --") + (args->has("csv") ? "csv" : "device") + " applies to PyTorch snapshots, not to an ONNX Runtime profile", kUsage);
    if (diff && args->has("csv"))
        return fail("trace: --csv takes one snapshot; two files are compared", kUsage);
    std::optional<int> device;
    if (const auto text = args->value("device")) {
        const auto value = parseInteger(*text);
        if (!value || *value > INT_MAX)
            return fail("trace: --device '" + *text + "': expected a device index (0, 1, ...)", kUsage);
        device = int(*value);
    }
    int top = diff ? 20 : 10;
    if (const auto text = args->value("top")) {
        const auto value = parseInteger(*text);
        if (!value || *value > 1000000)
            return fail("trace: --top '" + *text + "': expected a whole number from 0 to 1000000", kUsage);
        top = int(*value);
    }
    const auto plannerName = args->value("replan").value_or(std::string(core::kDefaultPlanner));
    const auto* planner = core::plannerByName(plannerName);
    if (!planner) {
        std::string names;
        for (const auto& name : core::plannerNames())
            names += (names.empty() ? "" : ", ") + name;
        return fail("trace: unknown planner '" + plannerName + "' for --replan; choose one of " + names, kUsage);
    }

    if (profile)
        return ortProfileCommand(files[0], *args, *planner, top);

    if (diff) {
        // Each side a snapshot or a model planned by `planner` (loadDiffSide's messages name the file).
        std::vector<core::DiffSide> sides;
        for (const auto& file : files) {
            auto side = core::loadDiffSide(file, device, *planner);
            if (!side)
                return fail(side.error().message, kError);
            sides.push_back(std::move(*side));
        }
        const auto result = core::diffTraces(std::move(sides[0]), std::move(sides[1]));
        std::cout << core::formatTraceDiff(result, top);
        if (const auto path = args->value("json"); path && !writeText(*path, core::traceDiffJson(result)))
            return fail(*path + ": cannot write the file", kError);
        return kOk;
    }
    std::vector<core::MeasuredTrace> traces;
    for (const auto& file : files) {
        auto snapshot = core::loadSnapshot(file);
        if (!snapshot)
            return fail(snapshot.error().message, kError);
        auto trace = core::measureTrace(*snapshot, file, device);
        if (!trace)
            return fail(trace.error().message, kError);
        traces.push_back(std::move(*trace));
    }
    const auto replan = core::replanTrace(traces[0], *planner);
    if (!replan)
        return fail(replan.error().message, kError);
    std::cout << core::formatTraceReport(traces[0], *replan, top);
    if (const auto path = args->value("json"); path && !writeText(*path, core::traceReportJson(traces[0], *replan, top)))
        return fail(*path + ": cannot write the file", kError);
    if (const auto path = args->value("csv"); path && !writeText(*path, core::exportProblemCsv(traces[0].problem)))
        return fail(*path + ": cannot write the file", kError);
    return kOk;
}
