// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "scenarios/multichip.h"

#include <nlohmann/json.hpp>

#include <string>

namespace core {

// Sizes in decimal megabytes, as chip vendors quote SRAM: "230 MB", "920 MB", "1.15 GB".
std::string formatDecimalBytes(Bytes bytes);

// The stage table of `memplan plan --chips`: one row per chip (ops range, weights, arena, received
// bytes, fill against capacity, transfers in/out, estimated compute and transfer time), then the
// totals (chips, pooled capacity, whether the count is proven fewest, pipeline latency and throughput).
std::string formatMultiChipReport(const Graph& graph, const Schedule& schedule, const MultiChipPlan& plan);

// {"device", "chips", "chip_capacity_bytes", "pooled_capacity_bytes", "proven_min_chips", "optimal",
//  "pipeline_latency_ms", "bottleneck_ms", "throughput_per_s", "chip_link_gb_s", "chip_link_latency_us",
//  "stages": [{chip, first_step, end_step, first_op, last_op, ops, weights_bytes, arena_bytes, used_bytes,
//              capacity_bytes, fill, received_bytes, sent_bytes, compute_ms, transfer_in_ms,
//              transfers_in, transfers_out (indices into "transfers"),
//              buffers: [{name, role (local|received|sent), start, end (local steps), size_bytes, offset}]}],
//  "transfers": [{tensor, bytes, from_chip, to_chip (-1: host), produced_at, first_use, ms}]}
// Sizes are exact bytes, steps global unless said otherwise.
nlohmann::ordered_json multiChipJson(const Graph& graph, const Schedule& schedule, const MultiChipPlan& plan);

// `planJson` (an exportPlanJson object) with the fields of multiChipJson added at its end.
std::string addMultiChipToPlanJson(const std::string& planJson, const nlohmann::ordered_json& multiChip);

} // namespace core
