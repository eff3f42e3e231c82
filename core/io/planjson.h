// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/workload.h"
#include "planners/problem.h"

#include <string>

namespace core {

// The plan JSON of docs/FILE_FORMATS.md: model, planner, alignment, steps, arena_bytes, lower_bound_bytes,
// buffers [{name, kind, start, end, size_bytes, offset, tensors}], regions [{name, size_bytes, tensors}].
// A buffer with tensors that start inside it (in-place Concat inputs) also has "tensor_offsets":
// per tensor, its start in bytes from the buffer's offset.
// An op's workspace buffer has kind "workspace", "tensors": [] and "op": the op's name.
// Sizes are exact bytes.
std::string exportPlanJson(const Workload& workload, const Plan& plan);

} // namespace core
