// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/planner.h"
#include "trace/measuredtrace.h"

#include <string>

namespace core {

// The measured allocations posed again as an allocation problem: its lower bound (the most bytes
// live at one step, which is the measured allocated peak) and an offline plan of them, checked by
// the independent validator.
struct TraceReplan {
    std::string planner;
    Bytes lowerBound = 0;
    Plan plan;
};
Expected<TraceReplan> replanTrace(const MeasuredTrace& trace, const Planner& planner);
// The same for any problem: its lower bound and `planner`'s validated plan; messages start with `source`.
Expected<TraceReplan> planValidated(const PlanProblem& problem, const std::string& source, const Planner& planner);

// The `memplan trace FILE` report: peaks, fragmentation at the reserved peak, counts, OOM events,
// the largest allocations live at the allocated peak with their sites (at most `top`), the lower
// bound and the replanned arena, and the notes.
std::string formatTraceReport(const MeasuredTrace& trace, const TraceReplan& replan, int top = 10);
// The same as JSON (exact bytes; docs/FILE_FORMATS.md).
std::string traceReportJson(const MeasuredTrace& trace, const TraceReplan& replan, int top = 10);

// `memplan trace A B` is core/trace/tracediff.h.

} // namespace core
