// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/workload.h"

#include <string>
#include <vector>

namespace core {

// The `memplan plan` report: counts, lower bound, arena, fragmentation, colors, time, regions,
// notes, capturedSummary, and the largest buffers alive at the peak step (at most `topAtPeak`).
std::string formatReport(const Workload& workload, const Plan& plan, int topAtPeak = 5);

// How many modules the captured summary and the plan JSON's peak_breakdown list, the largest first.
inline constexpr std::size_t kTopModules = 10;

// The report lines of a captured training step (graph/capture.h): "captured from" (Graph::capture),
// "phases" (step ranges), and when the graph has categories "cost unknown" (captured ops without
// FLOPs) and the bytes held at step `peak` per category and per module (io/breakdown.h). Empty
// for a graph that is not captured; formatReport includes it.
std::string capturedSummary(const Workload& workload, Step peak);

// The `memplan compare` table: one row per plan (planner, arena, ratio to lower bound, colors, time).
std::string formatComparison(const Workload& workload, const std::vector<Plan>& plans);

} // namespace core
