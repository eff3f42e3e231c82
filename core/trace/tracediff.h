// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "trace/tracealign.h"

#include <string>
#include <vector>

namespace core {

// `memplan trace A B`: two sides (tracealign.h: snapshots or plans) on one axis, their bytes at each
// one's peak by site and by category, and what makes B's peak differ from A's.

// Bytes live at each side's own peak under one name, with how many allocations they are.
struct DiffRow {
    std::string name;
    Bytes a = 0, b = 0;
    int aCount = 0, bCount = 0;
    Bytes change() const { return b - a; }
};

enum class PeakCause {
    OnlyInB,      // live at B's peak, no counterpart in A
    OnlyInA,      // live at A's peak, no counterpart in B (negative)
    Rounding,     // matched, live at both peaks: A's and B's distance to the 512-byte rounding
    Resized,      // matched, live at both peaks, of another size class (or a larger unsplit block)
    LongerInB,    // matched, live at B's peak; its counterpart was not live at that moment of A either
    LongerInA,    // matched, live at A's peak; its counterpart was not live at that moment of B either
    PeakMoment,   // matched, live at one side's peak and at the same moment on the other: the peaks fall elsewhere
};
std::string_view peakCauseName(PeakCause cause); // "only_in_b", "only_in_a", "rounding", "resized", "longer_in_b", ...

// One row of the explanation: its share of b.peak - a.peak (signed), over how many allocations, and
// the sites that carry most of it.
struct PeakExplanation {
    PeakCause cause = PeakCause::OnlyInB;
    Bytes bytes = 0;
    int allocations = 0;
    std::string detail;
};

struct TraceDiff {
    DiffSide a, b;
    TraceAlignment alignment;
    // The common axis is B's steps. Per B step, A's curves over the A steps that map to it (from
    // its aligned A step to the next B step's): the most bytes over them, so A's peak shows whole.
    std::vector<Bytes> aLive, bLive, aHeld, bHeld;
    Step aPeakOnAxis = 0; // the first B step at which aLive reaches A's peak
    std::vector<DiffRow> sites;      // by site (a matched snapshot allocation under its plan counterpart's site); largest change first
    std::vector<DiffRow> categories; // by category (a snapshot's: its plan counterpart's, else its pool); largest change first
    // Non-zero rows, largest magnitude first; they add up to peakChange() (unexplained() is 0 unless
    // a curve disagrees with its allocations).
    std::vector<PeakExplanation> explanation;
    Bytes peakChange() const { return b.peak - a.peak; }
    Bytes unexplained() const;
};

TraceDiff diffTraces(DiffSide a, DiffSide b, const AlignOptions& options = {});

// One explanation row's cause in words, as the report prints it (it says when the axis is proportional).
std::string peakCauseText(const TraceDiff& diff, PeakCause cause);

// The text report (at most `top` site rows; 0: all) and the JSON (docs/FILE_FORMATS.md#trace-diff-json).
std::string formatTraceDiff(const TraceDiff& diff, int top = 20);
std::string traceDiffJson(const TraceDiff& diff);

} // namespace core
