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
// A captured training step (graph/capture.h) adds "capture" (Graph::capture), "phases" [{name, start,
// end}] (half-open, as a buffer's), and when it has categories "peak_breakdown" {step, op, categories {name:
// bytes}, modules [{module, bytes}] (the largest kTopModules)} and "cost_unknown" {ops, types}.
// Control-flow ops whose graphs are planned inside them (Workload::nested) add "subgraphs": per graph
// {op, op_type, body, step, steps, tensors, planner, arena_bytes, lower_bound_bytes, reserved,
// buffers (as above), regions [{name, size_bytes, tensor_count}]}, and "subgraphs" of its own when
// its ops hold graphs too; the op's "<op> body" workspace buffer reserves the arena of the one
// whose "reserved" is true.
// Sizes are exact bytes.
std::string exportPlanJson(const Workload& workload, const Plan& plan);

} // namespace core
