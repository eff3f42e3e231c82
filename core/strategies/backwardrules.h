// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The backward-pass rules of training mode (strategies/training.h), one row per forward op type:
// whether its outputs carry a gradient, which of its forward tensors its gradient op reads (and so
// keeps alive until the backward pass), and which inputs are settings that no gradient flows into.
// What a gradient op writes is the same for every type, so it has no column: one gradient per
// distinct input that needs one, with that input's dtype and shape; no gradient op has a workspace.
// Slots are positions in Op::inputs / Op::outputs (not ONNX slots when optional inputs are left out).

#include <limits>
#include <string_view>

namespace core {

// Slots first..last, inclusive; empty when first > last. kLastSlot: up to the op's last slot.
inline constexpr int kLastSlot = std::numeric_limits<int>::max();
struct SlotRange {
    int first = 0;
    int last = -1;
    constexpr bool contains(int slot) const { return slot >= first && slot <= last; }
};

enum class GradientFlow {
    Rule,       // outputs carry a gradient; the gradient op reads readsInputs and readsOutputs
    NoGradient, // outputs carry none (shapes, indices, comparisons, constants, random values, rounding)
    NoRule,     // outputs carry a gradient but the type has no rule: it reads every input (conservative)
};

struct BackwardRule {
    std::string_view type;
    GradientFlow flow = GradientFlow::NoRule;
    SlotRange readsInputs;  // forward inputs the gradient op reads besides the output gradients
    SlotRange readsOutputs; // forward outputs it reads
    SlotRange settings;     // inputs that get no gradient even when they are float
};

// The row of `opType`; a type without a row gets NoRule, reading every input, no settings.
const BackwardRule& backwardRule(std::string_view opType);

} // namespace core
