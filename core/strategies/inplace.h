// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// In-place: an elementwise or view op writes its output into an input's buffer.
// - Ops: elementwise (Relu, Add, Mul, ...) and views (Reshape, Flatten, Squeeze, Unsqueeze, Identity).
// - The input X and output Y may share one buffer when: X is an activation (not a graph input or
//   output, not on host), X's last read is this op (no later op reads X, so overwriting it is safe),
//   Y is an activation or graph output of X's byte size, and Y is not already sharing.
//   For a binary op the first qualifying input is taken.
// - X and Y become ONE buffer (lifetime = union, tensors = both); chains (conv -> relu -> reshape)
//   collapse into one buffer. Cost: none (an elementwise kernel can write over its input).
// Limits: runs last in the pipeline (it depends on the final lifetimes); a broadcasting binary op
// aliases only the input of the output's size.

#include "strategies/strategy.h"

namespace core {

class InPlaceStrategy : public Strategy {
public:
    std::string_view name() const override { return "inplace"; }
    std::string_view description() const override { return "elementwise and view ops write into an input that dies there"; }
    Expected<Transformed> apply(Transformed state, const StrategyOptions& options) const override;
};

} // namespace core
