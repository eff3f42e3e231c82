// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <string>
#include <vector>

// `memplan scenario NAME ...`: built-in scenarios (`llm`: decode with a paged KV cache). `words`
// follow "scenario". Returns the exit code: 0, 1 (failed run, unwritable file) or 2 (bad command line).
int scenarioCommand(const std::vector<std::string>& words);
