// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "schedule/schedule.h"
#include "trace/snapshot.h"

#include <string>
#include <vector>

namespace core {

// A snapshot's annotations on its event axis (core/trace/measuredtrace.h: step e + 1 is the state
// after event e). PyTorch's record_function, with memory history on, records a START and an END
// annotation around each named region ("forward", "## optimizer step ##"); such a pair is a phase.
struct TracePhase {
    std::string name;
    // The state when it started and the state when it ended: events begin .. end - 1 ran inside it
    // (a point annotation: begin == end).
    Step begin = 0;
    Step end = 0;
    int depth = 0;  // phases open around it when it started: 0 outermost
    bool cut = false; // started before the trace's first event or still open at its last
    // When it started and ended (the annotations' time_us; a cut end: the trace's first or last event's).
    std::int64_t startUs = 0, endUs = 0;
};

struct TracePhases {
    std::vector<TracePhase> phases; // by begin, outer before inner
    std::vector<std::string> notes; // what could not be placed, and why
};

// Places the annotations of `device` (and those that name no device) on the axis of `events`, by
// time: an annotation at time t sits at the step after the last event recorded at or before t.
// Each END closes the latest open START of the same name; a START never closed runs to the end, an
// END without its START (the START fell out of PyTorch's ring buffer) from step 0; a phase over
// before the trace's first event (a trace that keeps the last events only) is left out. Annotations
// without a time, or a trace whose events have none, cannot be placed: the notes say how many. At
// most kMostTracePhases phases are kept (the first by time).
inline constexpr std::size_t kMostTracePhases = 100000;
TracePhases placeAnnotations(const std::vector<SnapshotAnnotation>& annotations, const std::vector<TraceEvent>& events, int device);

// Seconds since the trace's first event at each step (step e + 1: event e's time; step 0: the first
// event's), as float: the readouts' precision; empty when the events have no times.
std::vector<float> stepSeconds(const std::vector<TraceEvent>& events);

// The most bytes `curve` (per step) holds within a phase: max over the steps begin..end.
std::int64_t phasePeak(const TracePhase& phase, const std::vector<std::int64_t>& curve);

} // namespace core
