// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to gpu/: device ops MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv (the
// operators of QOperator-format quantized models), added to the op table of ops.cpp. One thread
// per output element sums its products exactly (integermath.h): bit for bit the CPU kernels'
// results. Zero points, scales and the bias are read on the device, weights or computed alike.

#include "ops.h"

#include <map>

namespace gpu {

void addIntegerKernels(std::map<std::string, DeviceKernel>& table);

} // namespace gpu
