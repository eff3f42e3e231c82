// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <string>
#include <vector>

// `memplan run MODEL --device cpu`: executes the plan on the CPU executor, checks it against a
// no-reuse run and prints predicted vs measured arena, peak and latency. `words` follow "run".
int runCommand(const std::vector<std::string>& words);
