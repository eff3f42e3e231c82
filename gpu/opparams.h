// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Kernel parameters of Pad, Resize, the reductions, ConvTranspose, broadcasting and windows from an op call, read with the CPU
// kernels' own readers (core/exec/opattrs.h). Host code without CUDA headers, so the host tests
// (tests/tst_gpumath.cpp) build the very parameters the device ops launch with. The call's
// shape-argument inputs (pads, axes, scales, the constant) must point at host memory; tensor data
// is not read. Each returns false for a configuration the device kernel does not cover (the op
// then runs on the host): other dtypes than float32, rank above kMaxRank, 3-D convolutions.

#include "elementmath.h"
#include "recurrentmath.h"
#include "samplemath.h"

#include "exec/kernels.h"
#include "exec/recurrence.h"

#include <initializer_list>
#include <map>
#include <optional>
#include <string>

namespace gpu {

bool padShape(const core::exec::KernelCall& call, kernels::PadShape& shape);
bool resizeShape(const core::exec::KernelCall& call, kernels::ResizeShape& shape);
// The Reduce* ops (mode from the op type; axes from the attribute or input 1) and GlobalMaxPool
// (a Max over every axis after the channels).
bool reduceShape(const core::exec::KernelCall& call, kernels::ReduceShape& shape);
bool globalMaxPoolShape(const core::exec::KernelCall& call, kernels::ReduceShape& shape);
bool transposedConvShape(const core::exec::KernelCall& call, kernels::TransposedConv& shape);

// Broadcast strides of the operands (at most three; operand k in stride[k]) to y, numpy rules; false
// past kMaxRank or on a mismatch.
bool broadcastShape(const core::exec::TensorView& y, std::initializer_list<const core::exec::TensorView*> operands, kernels::Broadcast& s);
// Transpose of elements of 4 or 8 bytes: output element i reads input element
// sum_d index_d * inStride[d] (the input's strides in the permuted order).
struct PermuteParams {
    int rank = 0, bytes = 0;
    std::int64_t outDims[kernels::kMaxRank] = {}; // the output seen as `rank` dimensions
    std::int64_t inStride[kernels::kMaxRank] = {};
};
bool permuteParams(const core::exec::KernelCall& call, PermuteParams& params);
// DepthToSpace (DCR, CRD) and SpaceToDepth as a permutation of 6-D views of [N, C, H, W].
bool depthSpaceParams(const core::exec::KernelCall& call, PermuteParams& params);
// Expand (x broadcast to y) and Tile (y repeats x): output element i reads tileSource(i, rank,
// y.shape, inDims, inStride); elements of 1, 2, 4 or 8 bytes.
struct TileParams {
    int rank = 0, bytes = 0;
    std::int64_t inDims[kernels::kMaxRank] = {}, inStride[kernels::kMaxRank] = {};
};
bool tileParams(const core::exec::KernelCall& call, TileParams& params);
// Gather along one axis of x seen as [outer][dim][inner], elements of 4 or 8 bytes, int64 or int32 indices.
struct GatherParams {
    int bytes = 0;
    std::int64_t outer = 1, dim = 0, inner = 1;
};
bool gatherParams(const core::exec::KernelCall& call, GatherParams& params);
// Softmax over the middle dimension of x seen as [outer][count][inner].
struct RowParams {
    std::int64_t outer = 1, count = 0, inner = 1;
};
bool softmaxParams(const core::exec::KernelCall& call, RowParams& params);
// Layer normalisation of `rows` rows of `inner` elements (the axes from `axis` on); scale and bias
// of `inner` elements; the optional Mean and InvStdDev outputs of `rows` elements.
// InstanceNormalization of x [N, C, ...] with per-channel scale and bias: channels and plane size.
bool instanceNormParams(const core::exec::KernelCall& call, std::int64_t& channels, std::int64_t& plane);
// LRN over x [N, C, ...] (rank 3 or more), the CPU kernel's attributes and defaults.
bool lrnParams(const core::exec::KernelCall& call, kernels::LrnShape& shape);
bool layerNormParams(const core::exec::KernelCall& call, std::int64_t& rows, std::int64_t& inner);
// 2-D (or 1-D as height 1) window geometry of Conv and pooling, as the CPU kernels read it.
bool window(const core::exec::KernelCall& c, const core::exec::TensorView& x, const core::exec::TensorView& y, const core::exec::Shape& kernel,
    kernels::Window& w);

// GridSample on 4-D float32 X and grid with the CPU kernel's checks: nearest, bilinear (linear),
// bicubic (cubic); zeros, border or reflection padding; align_corners.
bool gridSampleParams(const core::exec::KernelCall& call, kernels::GridSampleShape& shape);

// RNN, GRU and LSTM (the cell from the op type): the configuration the CPU kernel takes
// (core::exec::recurrence), and the step parameters of one direction at step 0.
bool recurrentParams(const core::exec::KernelCall& call, core::exec::Recurrence& r);
kernels::RecurrentStep recurrentStep(const core::exec::Recurrence& r, int direction);

} // namespace gpu
