// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/workload.h"
#include "planners/problem.h"

#include <string>

namespace core {

// The plan JSON of DESIGN.md: model, planner, alignment, steps, arena_bytes, lower_bound_bytes,
// buffers [{name, kind, start, end, size_bytes, offset, tensors}], regions [{name, size_bytes, tensors}].
// Sizes are exact bytes.
std::string exportPlanJson(const Workload& workload, const Plan& plan);

} // namespace core
