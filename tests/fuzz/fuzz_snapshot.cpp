// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// A PyTorch memory snapshot (a pickle, maybe gzip-compressed): parse, read the snapshot, replay its
// trace. A snapshot that loads must be a plan the validator accepts (PyTorch's own placement), its
// allocated peak must be the problem's lower bound, its problem must survive the CSV export, and
// every planner's plan of it must pass the validator; the report must not fail.
#include "fuzzcommon.h"

#include "io/gunzip.h"
#include "io/pickle.h"
#include "planners/metrics.h"
#include "trace/tracereport.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    auto bytes = fuzz::text(data, size);
    if (core::isGzip(bytes)) {
        // A small cap: a fuzzer's bomb must end in the message, quickly.
        auto plain = core::gunzip(bytes, 16 << 20, "fuzz.pickle.gz");
        if (!plain) {
            fuzz::checkError(plain.error(), "gunzip");
            return 0;
        }
        bytes = std::move(*plain);
    }
    const auto document = core::parsePickle(std::move(bytes), "fuzz.pickle");
    if (!document) {
        fuzz::checkError(document.error(), "parsePickle");
        return 0;
    }
    const auto snapshot = core::snapshotFromPickle((*document)->root(), "fuzz.pickle");
    if (!snapshot) {
        fuzz::checkError(snapshot.error(), "snapshotFromPickle");
        return 0;
    }
    const auto trace = core::measureTrace(*snapshot, "fuzz.pickle");
    if (!trace) {
        fuzz::checkError(trace.error(), "measureTrace");
        return 0;
    }
    const auto& problem = trace->problem;
    if (trace->allocated.size() != std::size_t(problem.steps) || trace->reserved.size() != std::size_t(problem.steps))
        fuzz::fail("the curves have " + std::to_string(trace->allocated.size()) + " points for " + std::to_string(problem.steps) + " steps");
    if (const auto check = core::validatePlan(problem, trace->measured); !check.ok())
        fuzz::fail("the measured placement fails validation: " + check.message);
    if (core::lowerBound(problem) != trace->peakAllocated())
        fuzz::fail("the allocated peak " + std::to_string(trace->peakAllocated()) + " is not the lower bound "
            + std::to_string(core::lowerBound(problem)));
    fuzz::checkCsvRoundTrip(problem);
    fuzz::planAndValidate(problem, "snapshot");
    if (problem.buffers.size() <= fuzz::kMostPlannedBuffers) {
        const auto replan = core::replanTrace(*trace, *core::plannerByName(core::kDefaultPlanner));
        if (!replan)
            fuzz::checkError(replan.error(), "replanTrace");
        else if (core::formatTraceReport(*trace, *replan).empty() || core::traceReportJson(*trace, *replan).empty())
            fuzz::fail("an empty report");
    }
    return 0;
}
