// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The configuration of a MatMulInteger, QLinearMatMul, ConvInteger or QLinearConv call as its kernels
// take it, shared by the CPU kernels (kernels_integer.cpp) and the CUDA executor's, so both accept
// exactly the same calls. The readers check shapes and dtypes only: they never read tensor data,
// so the views may point at device memory.

#include "exec/opattrs.h"

namespace core::exec {

// Shapes of a (broadcast, batched) matrix product A[.., M, K] · B[.., K, N] as numpy.matmul reads
// them; batch strides counted in matrices (0 where broadcast).
struct MatMulSetup {
    std::int64_t m = 0, k = 0, n = 0, total = 1;
    Shape batch, sa, sb, aBatch, bBatch; // aBatch, bBatch: the operands' own batch dimensions
};

// Where a per-row (of A) or per-column (of B) parameter is read: one element for the tensor, one per
// row/column shared by every matrix, or one per row/column of each of the operand's matrices.
struct VecParam {
    const TensorView* t = nullptr; // null: an absent zero point, 0
    bool perIndex = false, batched = false;

    std::int64_t index(std::int64_t matrix, std::int64_t extent, std::int64_t i) const
    {
        return !perIndex ? 0 : batched ? matrix * extent + i : i;
    }
};

// MatMulInteger (A, B, a_zero_point?, b_zero_point? -> int32) or QLinearMatMul (a, a_scale,
// a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point -> y_zero_point's dtype; y_scale
// and y_zero_point per tensor). Operands uint8 or int8, each its own; scales float32.
struct IntMatMulArgs {
    MatMulSetup s;
    const TensorView *a = nullptr, *b = nullptr;
    VecParam aZero, bZero, aScale, bScale; // scales: QLinearMatMul only
    bool requantized = false;              // QLinearMatMul
};
bool intMatMulArgs(const KernelCall& c, IntMatMulArgs& args);

// ConvInteger (x, w, x_zero_point?, w_zero_point? -> int32) or QLinearConv (x, x_scale,
// x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B? -> y_zero_point's dtype): 1-D,
// 2-D and 3-D, groups, strides, dilations, pads, auto_pad. x's zero point and scale per tensor, w's
// per tensor or per output channel ([M]); y's per tensor; the bias int32 [M].
struct IntConvArgs {
    ConvGeometry g;
    std::int64_t groups = 1, n = 0, cin = 0, m = 0, cg = 0, mg = 0;
    const TensorView *x = nullptr, *w = nullptr;
    const TensorView *xZero = nullptr, *wZero = nullptr, *xScale = nullptr, *wScale = nullptr, *bias = nullptr; // null: absent
    bool requantized = false; // QLinearConv
};
bool intConvArgs(const KernelCall& c, IntConvArgs& args);

} // namespace core::exec
