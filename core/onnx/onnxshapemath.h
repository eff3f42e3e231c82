// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to core/onnx: reading folded values for the shape rules; the shape arithmetic itself
// (broadcast, Slice, Reshape) is graph/shapemath.h, which the executor's run-time shapes share.

#include "graph/shapemath.h"
#include "onnx/onnxvalue.h"

#include <optional>
#include <vector>

namespace core::onnxdetail {

// Integer values of a folded input (reals truncated), nullopt when the input is not constant.
std::optional<std::vector<std::int64_t>> constInts(const ValueFacts* facts);
std::optional<std::vector<double>> constReals(const ValueFacts* facts);

} // namespace core::onnxdetail
