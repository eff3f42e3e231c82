// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "trace/measuredtrace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace core {

// What a measured trace holds at one step, grouped: the questions after "what is the peak?" are
// "which code allocated it?", "on which stream?" and "in which phase of the step?".

struct SiteShare {
    std::string site; // MeasuredTrace::frameName
    std::int64_t bytes = 0;
    int allocations = 0;
};
// Allocations live at `step` by allocation site (distinct frames with one label are one site),
// most bytes first.
std::vector<SiteShare> liveBySite(const MeasuredTrace& trace, Step step);

struct StreamShare {
    std::int64_t stream = 0;
    int allocations = 0;           // over the whole trace
    std::int64_t bytesAtPeak = 0;  // live at the allocated peak
};
// Every stream the trace's allocations were made on, by the allocations made there (most first).
std::vector<StreamShare> streamShares(const MeasuredTrace& trace);

struct PhasePeak {
    const TracePhase* phase = nullptr;
    std::int64_t peakAllocated = 0; // the most allocated within it (core::phasePeak)
};
// The phases at depth at most `maxDepth` with their allocated peaks, in order; at most `top` (0: all).
std::vector<PhasePeak> phasePeaks(const MeasuredTrace& trace, int maxDepth, std::size_t top);

struct PhaseName {
    std::string name;
    int times = 0;                  // phases of this name
    std::int64_t peakAllocated = 0; // the most allocated within any of them
    std::int64_t totalUs = 0;       // their durations added up (TracePhase::endUs - startUs)
};
// The phases grouped by name, the one holding the highest peak first: which region of the step
// the peak belongs to.
std::vector<PhaseName> phaseNames(const std::vector<TracePhase>& phases, const std::vector<std::int64_t>& allocated);

} // namespace core
