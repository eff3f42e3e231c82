// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/workload.h"

#include <string>
#include <vector>

namespace core {

// The `memplan plan` report: counts, lower bound, arena, fragmentation, colors, time, regions,
// notes, and the largest buffers alive at the peak step (at most `topAtPeak`).
std::string formatReport(const Workload& workload, const Plan& plan, int topAtPeak = 5);

// The `memplan compare` table: one row per plan (planner, arena, ratio to lower bound, colors, time).
std::string formatComparison(const Workload& workload, const std::vector<Plan>& plans);

} // namespace core
