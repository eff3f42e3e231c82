// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Parameters of the index device kernels (indexmath.h) from an op call, with the CPU kernels' rules.
// Host code without CUDA headers, shared by the device ops (opsindex.cpp) and the host tests
// (tests/gpumathdrivers.h). CumSum's axis, Trilu's k and TopK's k are read from the call's input 1, which must
// point at host memory; tensor data is not read otherwise. Each returns false for a call the device
// kernel does not cover: the op then runs on the host.

#include "indexmath.h"

#include "exec/kernels.h"

#include <map>
#include <string>

namespace gpu {

const std::map<std::string, kernels::Logical>& logicalOpTypes();

// And, Or, Xor of two bool inputs into bool, and their broadcast.
bool logicalParams(const core::exec::KernelCall& call, kernels::Logical& op, kernels::Broadcast& shape);

// [outer][extent][inner] around an op's axis.
struct AxisParams {
    std::int64_t outer = 1, extent = 1, inner = 1;
};

// ArgMax, ArgMin (`max` from the type) over float32 or int64 (`int64`) into int64.
bool argExtremeParams(const core::exec::KernelCall& call, AxisParams& axis, bool& max, bool& last, bool& int64);

// CumSum of float32, float64, int32 or int64 (`type`); the axis from input 1.
bool cumSumParams(const core::exec::KernelCall& call, AxisParams& axis, bool& exclusive, bool& reverse, kernels::Scalar& type);

// Trilu over the last two dimensions; k from input 1 when present; elements of 1, 2, 4 or 8 bytes.
struct TriluParams {
    std::int64_t rows = 0, cols = 0, k = 0;
    bool upper = true;
    int elementBytes = 4;
};
bool triluParams(const core::exec::KernelCall& call, TriluParams& params);

// GatherElements with int64 or int32 (`indices64`) indices; elements of 1, 2, 4 or 8 bytes.
bool gatherElementsParams(const core::exec::KernelCall& call, kernels::GatherElementsShape& shape, bool& indices64, int& elementBytes);

// ScatterElements (and Scatter) with int64 or int32 indices; without reduction any element of 1, 2,
// 4 or 8 bytes, with add, mul, max or min float32 (the CPU kernel's set). `shape` as for
// GatherElements, over the indices' (and updates') dims.
bool scatterElementsParams(const core::exec::KernelCall& call, kernels::GatherElementsShape& shape, kernels::Reduction& reduction, bool& indices64,
    int& elementBytes);

// Hardmax of float32 around its axis (default -1).
bool hardmaxParams(const core::exec::KernelCall& call, AxisParams& axis);

// OneHot: depth from input 1 (which must point at host memory), values [off, on] from input 2 (read
// on the device), of 1, 2, 4 or 8 bytes.
bool oneHotParams(const core::exec::KernelCall& call, kernels::OneHotShape& shape, int& elementBytes);

// GatherND with int64 indices (the CPU kernel's); elements of 1, 2, 4 or 8 bytes.
bool gatherNDParams(const core::exec::KernelCall& call, kernels::GatherNDShape& shape, int& elementBytes);

// ScatterND with int64 or int32 (`indices64`) indices: without reduction any element of 1, 2, 4 or
// 8 bytes; add, mul, max and min over float32 or int64 (`int64`).
struct ScatterNDParams {
    kernels::ScatterNDShape shape;
    kernels::Reduction reduction = kernels::Reduction::None;
    bool indices64 = true, int64 = false;
    int elementBytes = 4;
};
bool scatterNDParams(const core::exec::KernelCall& call, ScatterNDParams& params);

// TopK of float32 into float32 values and int64 indices; k from input 1, which must point at host memory.
bool topKParams(const core::exec::KernelCall& call, kernels::TopKShape& shape);

} // namespace gpu
