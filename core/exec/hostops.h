// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Host-side pieces of the CPU executor that another executor (the CUDA one) reuses so that both
// start from the same bits and run ops without a device kernel exactly as the CPU does:
// - fillRandom, inputContents: the deterministic contents of a weight or input nobody gave;
// - weightContents: a weight's or persistent tensor's contents as the CPU executor loads them;
// - runHostOp: one op on host views, with the CPU executor's rules (exec/opcall.h: Constant,
//   ConstantOfShape, the real kernel, constant values import folded, else the synthetic kernel);
//   a fused op runs its body on those rules, so it is real exactly when it is on the CPU.

#include "exec/executor.h"
#include "exec/kernels.h"

namespace core::exec {

// Per tensor its own stream (seed ^ hash(name)): float in [-1, 1) (weights scaled by 1/sqrt(fan-in),
// 1-D weights near 1), integers in [0, 4) (weights 0).
void fillRandom(const Tensor& t, std::byte* p, std::uint64_t seed, bool isWeight);

// A graph input nobody gave: the values given by file when the plan was made (Tensor::values; the
// plan holds for them only), else fillRandom.
void inputContents(const Tensor& t, std::byte* p, std::uint64_t seed);

// Writes tensor t's contents (t.size bytes) to p: the model's data, the values import folded
// (Tensor::values, any integer or bool type), else fillRandom.
void weightContents(const Graph& g, TensorIndex t, std::byte* p, const RunOptions& options);

// Runs op `opIndex` (whose views `call` holds) on the host. `kernel` may be null. True when a real
// kernel (or known contents) produced the outputs, false when the synthetic kernel ran.
// A fused op (call.op->body) ignores `kernel`: its body runs on the CPU executor's code with the
// internal tensors in a scratch allocated for the call; `call` holds the fused op's inputs (in the
// slots the model's data gives op `opIndex`) and outputs. True when every body op was real; a body
// op naming an outer tensor that `call` does not hold makes the whole op synthetic.
bool runHostOp(const Graph& g, const KernelCall& call, OpIndex opIndex, Kernel kernel, const RunOptions& options);

} // namespace core::exec
