// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "graph/graph.h"

#include <string>
#include <string_view>

namespace core {

// The functional units of a dataflow chip in the style of a tensor streaming processor (Groq LPU):
// tensors live in the memory slices (on-chip SRAM: weights and the activation arena) and stream
// across the chip through the unit that transforms them. For teaching, not a compiler model:
// - Matrix: dense multiply-accumulate (Conv, ConvTranspose, Gemm, MatMul and their fused forms);
// - Switch: data movement between streams (Transpose, Reshape, Concat, Split, Slice, Gather, Pad, Resize, ...);
// - Vector: everything else that computes (elementwise, activations, normalisation, pooling, softmax, reductions);
// - Memory: ops that only hold or forward data already in memory (Identity, Constant).
enum class ChipUnit { Memory, Vector, Matrix, Switch };

ChipUnit chipUnitFor(std::string_view opType);
// An op's unit; a fused group (--fuse: type "Fused", its ops in Op::body) runs where its heaviest
// member does: a Conv+Relu on the matrix unit (matrix > vector > switch > memory).
ChipUnit chipUnitFor(const Op& op);
std::string_view chipUnitName(ChipUnit unit); // "memory", "vector", "matrix", "switch"

} // namespace core
