// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// `memplan trace`: PyTorch memory snapshots from the command line.
#include "tracecli.h"

#include "cliargs.h"

#include "io/problemcsv.h"
#include "trace/tracereport.h"

#include "util/printable.h"

#include <climits>
#include <fstream>
#include <iostream>

namespace {

constexpr int kOk = 0, kError = 1, kUsage = 2;

const char* const kTraceHelp = R"(usage: memplan trace SNAPSHOT [--json FILE] [--csv FILE] [--replan PLANNER] [--device N] [--top N]
       memplan trace A B [--json FILE] [--device N] [--top N]

Reads a PyTorch CUDA memory snapshot, as written by
    torch.cuda.memory._record_memory_history(); ...; torch.cuda.memory._dump_snapshot("x.pickle")
(a pickle, gzip-compressed or not; nothing in it is executed) and replays one device's allocator
events. Prints the peak of allocated bytes, the peak of reserved (cudaMalloc'd) bytes, the reserved
bytes no allocation held at that peak, the event, allocation and OOM counts, the largest allocations
live at the allocated peak with the Python frame that made them, and the same allocations as an
allocation problem: its lower bound (the most bytes live at once) and the arena an offline planner
packs them in, checked by the independent validator. A snapshot without a trace (recorded without
_record_memory_history) is read as one step: the allocator's state when it was taken.

With two snapshots: both peaks, and per allocation site the bytes live at each one's allocated peak,
largest change first.

  --json FILE           write the report (or the comparison) as JSON, exact bytes
  --csv FILE            write the allocations as an allocation-problem CSV (id,lower,upper,size; steps
                        are events), which `memplan plan FILE.csv` reads
  --replan PLANNER      planner for the offline plan (default best-of-greedy)
  --device N            the device to replay (default: the one with the most events)
  --top N               allocations (sites, with two snapshots) to list (default 10; 20 with two)
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

} // namespace

int traceCommand(const std::vector<std::string>& words)
{
    auto args = parseCliArgs(words, { "json", "csv", "replan", "device", "top" }, { "help" });
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
    if (diff && (args->has("csv") || args->has("replan")))
        return fail(std::string("trace: --") + (args->has("csv") ? "csv" : "replan") + " takes one snapshot; two are compared by their peaks", kUsage);
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
    if (diff) {
        std::cout << core::formatTraceDiff(traces[0], traces[1], top);
        if (const auto path = args->value("json"); path && !writeText(*path, core::traceDiffJson(traces[0], traces[1])))
            return fail(*path + ": cannot write the file", kError);
        return kOk;
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
