// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Kernel parameters of Pad, Resize, ReduceMean and ConvTranspose from an op call, read with the CPU
// kernels' own readers (core/exec/opattrs.h). Host code without CUDA headers, so the host tests
// (tests/tst_gpumath.cpp) build the very parameters the device ops launch with. The call's
// shape-argument inputs (pads, axes, scales, the constant) must point at host memory; tensor data
// is not read. Each returns false for a configuration the device kernel does not cover (the op
// then runs on the host): other dtypes than float32, rank above kMaxRank, 3-D convolutions.

#include "elementmath.h"

#include "exec/kernels.h"

namespace gpu {

bool padShape(const core::exec::KernelCall& call, kernels::PadShape& shape);
bool resizeShape(const core::exec::KernelCall& call, kernels::ResizeShape& shape);
bool reduceMeanShape(const core::exec::KernelCall& call, kernels::ReduceShape& shape);
bool transposedConvShape(const core::exec::KernelCall& call, kernels::TransposedConv& shape);

} // namespace gpu
