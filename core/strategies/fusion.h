// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Fusion: runs a chain of ops as one op so the tensors between them never exist.
// - A chain starts at a Conv, ConvTranspose, Gemm, MatMul, pooling (MaxPool, AveragePool, GlobalAveragePool,
//   GlobalMaxPool), BatchNormalization or elementwise op and grows while the
//   current output has exactly one reader, is not a graph output, and that reader is an epilogue:
//   BatchNormalization or an elementwise op (bias Add, activation, residual Add, scale Mul,
//   QuantizeLinear, Cast, ...). Two anchors (Conv then MatMul) never fuse: a fused op has at most one
//   heavy or pooling op, first.
// - Quantized (QDQ) models: a DequantizeLinear whose float output only one chain op reads joins that
//   chain as a prologue, run just before its reader; a DequantizeLinear never starts or extends a
//   chain. So DQ(x), DQ(w), DQ(bias) -> Conv -> Relu -> QuantizeLinear becomes one op that reads and
//   writes the 8-bit tensors, and the float ones never take arena memory, as in a runtime's
//   quantized kernel. (The CPU executor still computes them, one group at a time, in kernel scratch.)
// - The fused op (type "Fused", name "a+b+c" of the chain's ops; prologues are counted in the
//   `fused_types` attribute, "DequantizeLinear x3+Conv+Relu+QuantizeLinear") takes the chain's outside inputs and writes the last
//   op's outputs; it runs at the last op's step, so every outside input is already produced.
//   Op::body keeps the chain's ops (attributes included), so an executor computes exactly what the
//   unfused ops computed, the intermediates in kernel scratch.
//   The intermediates disappear from every op; nothing else changes.
// - Cost: no extra FLOPs; the intermediates are not written and read back, which saves
//   2 × their bytes of memory traffic (reported as negative extra time on the device profile).
// Limits: only single-output ops; no vertical fusion across branches, no Concat/Softmax fusion.

#include "strategies/strategy.h"

namespace core {

class FusionStrategy : public Strategy {
public:
    std::string_view name() const override { return "fuse"; }
    std::string_view description() const override
    {
        return "fuse Conv/Gemm/MatMul with BatchNorm, bias and activation, elementwise chains, and quantized "
               "(QDQ) groups";
    }
    Expected<Transformed> apply(Transformed state, const StrategyOptions& options) const override;
};

} // namespace core
