// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "cliargs.h"

#include <set>
#include <string>

// `memplan bench`: planner speed and quality on random problems, allocation-benchmark CSVs and models.
std::set<std::string> benchValuedOptions();
std::string benchHelp();
int runBench(const CliArgs& args);
// `memplan bench run MODEL...` (benchrun.cpp).
int benchRun(const CliArgs& args);
