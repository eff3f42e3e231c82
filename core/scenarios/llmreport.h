// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "scenarios/llmscenario.h"

#include <string>

namespace core {

// The scenario as text: the model and timeline, one row per KV policy (peak in use, peak reserved,
// internal waste %, peak external fragmentation, allocations, largest batch that fits, first
// refusal) and the activation arena's range over the steps.
std::string formatLlmReport(const LlmScenarioResult& result);

// One JSON object with exact bytes and the per-step series:
// { "scenario": "llm", "config": {..., "prompt_lengths": [..] | {min, max}, "output_lengths": ...},
//   "kv_bytes_per_token", "steps", "weight_bytes",
//   "sequences": [{id, arrival, prompt, output}],
//   "policies": [{ "name", "peak_in_use_bytes", "peak_reserved_bytes", "peak_internal_bytes",
//                  "peak_external_bytes", "waste_fraction", "allocations", "largest_batch",
//                  "largest_batch_at_limit", "refusal": null | {step, sequence, tokens, requested_bytes, free_bytes},
//                  "series": { "live", "in_use", "reserved", "internal", "external", "allocations" } }],
//   "activation": { "planner", "distinct_plans", "peak_arena_bytes",
//                   "series": { "sequences", "tokens", "context", "arena", "lower_bound" } } }
// A policy's series stop before the step of its refusal; the activation series cover every step.
std::string exportLlmJson(const LlmScenarioResult& result);

} // namespace core
