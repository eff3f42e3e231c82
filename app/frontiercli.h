// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "cliargs.h"

#include "io/workload.h"

// `memplan compare MODEL --frontier [--budget SIZE] [--json FILE] [--milp-time-limit SECONDS]`: the
// frontier of peak memory against extra time (core::computeFrontier) as a table, the heuristics beside
// it, and with --budget the point with the least time that fits. Returns the exit code (1: a workload
// without a graph; 2: a bad --budget or --milp-time-limit).
int compareFrontier(const CliArgs& args, const core::Workload& workload);
