// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <string>
#include <vector>

// `memplan trace FILE [B]`: what a PyTorch memory snapshot measured, its allocations replanned
// offline, or two snapshots compared. `words` follow "trace". Returns the exit code: 0, 1 (bad
// snapshot, unwritable file) or 2 (bad command line).
int traceCommand(const std::vector<std::string>& words);
