// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Parameters of the elementwise device kernels (unary and binary float math, comparisons, Not,
// Where, Cast, QuantizeLinear, DequantizeLinear) from an op call, with the CPU kernels' rules (core/exec/kernels_elementwise.cpp).
// Host code without CUDA headers, shared by the device ops (opselementwise.cpp) and the host tests
// (tests/gpumathdrivers.h). Inputs read as parameters (Clip's bounds) must point at host memory;
// tensor data is not read otherwise. Each returns false for a call the device kernel does not
// cover: the op then runs on the host.

#include "elementmath.h"

#include "exec/kernels.h"

#include <map>
#include <string>

namespace gpu {

// The ONNX op types (default domain) of each kernel family.
const std::map<std::string, kernels::Unary>& unaryOpTypes();
const std::map<std::string, kernels::Binary>& binaryOpTypes();
const std::map<std::string, kernels::Compare>& compareOpTypes();

// A unary float32 op: the kernel op and unaryElement's alpha and beta (LeakyRelu's and Elu's alpha,
// HardSigmoid's alpha and beta, Clip's bounds from its attributes or inputs 1 and 2, Gelu's
// approximation).
bool unaryParams(const core::exec::KernelCall& call, kernels::Unary& op, float& alpha, float& beta);

// A float32 op of exactly two inputs (Sum, Max and Min with two; Mod with fmod=1) and its broadcast.
bool binaryParams(const core::exec::KernelCall& call, kernels::Binary& op, kernels::Broadcast& shape);

// A comparison of two float32 or two int64 inputs (`int64`) into bool, and its broadcast.
bool compareParams(const core::exec::KernelCall& call, kernels::Compare& op, bool& int64, kernels::Broadcast& shape);

// Not of bool.
bool notParams(const core::exec::KernelCall& call);

// IsNaN and IsInf (`inf` from the type) of float32 into bool.
bool specialParams(const core::exec::KernelCall& call, bool& inf, bool& negative, bool& positive);

// Where(condition, x, y): bool condition, x and y of the output's type (1, 2, 4 or 8 bytes per
// element), the three broadcast as operands 0, 1, 2.
bool whereParams(const core::exec::KernelCall& call, int& elementBytes, kernels::Broadcast& shape);

// Cast, and CastLike (to input 1's type), between two kernels::Scalar types.
bool castParams(const core::exec::KernelCall& call, kernels::Scalar& from, kernels::Scalar& to);

// QuantizeLinear float32 -> uint8/int8 (`type`: the output's and the zero point's) and
// DequantizeLinear uint8/int8/int32 (`type`: the input's and the zero point's) -> float32, with the
// CPU kernel's checks (core/exec/kernels_quantize.cpp): a float32 scale of one element, or 1-D of the
// data's extent along `axis` (default 1); a zero point (optional) of the scale's element count and
// of `type`; no block_size. Only shapes and dtypes are read: the kernel reads scale and zero point
// through the call's views (device memory on the device).
bool quantizeParams(const core::exec::KernelCall& call, kernels::Scalar& type, kernels::QuantAxis& axis);
bool dequantizeParams(const core::exec::KernelCall& call, kernels::Scalar& type, kernels::QuantAxis& axis);
// DynamicQuantizeLinear float32 -> uint8 y, float32 y_scale and uint8 y_zero_point of one element each.
bool dynamicQuantizeParams(const core::exec::KernelCall& call);

} // namespace gpu
