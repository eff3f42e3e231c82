// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Parameters of the integer product device kernels (integermath.h) from an op call, through the CPU
// kernels' call reader (core/exec/integer.h), so both take exactly the same calls. Host code without
// CUDA headers, shared by the device ops (opsinteger.cpp) and the host tests (tests/gpumathdrivers.h);
// no tensor data is read. False for a call the device kernel does not cover: the op then runs on the host.

#include "integermath.h"

#include "exec/kernels.h"

namespace gpu {

// MatMulInteger or QLinearMatMul; batch rank up to kernels::kMaxRank.
bool intMatMulParams(const core::exec::KernelCall& call, kernels::IntMatMulShape& shape);
// ConvInteger or QLinearConv, 1-D to 3-D.
bool intConvParams(const core::exec::KernelCall& call, kernels::IntConvShape& shape);

} // namespace gpu
