// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to gpu/: elementwise device ops, added to the op table of ops.cpp: unary float math,
// binary float math with broadcasting, comparisons of float32 or int64 into bool, Not, Where (any
// element of 1 to 8 bytes), Cast, QuantizeLinear and DequantizeLinear. Parameters from
// elementparams.h, the CPU kernels' rules, so the two executors agree (bit for bit but for the
// float library's rounding; quantization is bit for bit).

#include "ops.h"

#include <map>

namespace gpu {

void addElementwiseKernels(std::map<std::string, DeviceKernel>& table);

} // namespace gpu
