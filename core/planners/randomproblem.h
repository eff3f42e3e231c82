// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"

namespace core {

// A random allocation problem shaped like a network's activations, for benchmarks and tests of how
// planners scale: most buffers die within a few steps, a tenth live for dozens (branches), one in a
// hundred for up to 500 (skip connections); sizes log-uniform from 256 B to 16 MiB, aligned to 256;
// n / 2 steps, so the density (buffers live per step) does not depend on n. Deterministic for a seed
// (std::mt19937_64 and the standard distributions of libstdc++).
PlanProblem networkShapedProblem(int n, unsigned seed);

} // namespace core
