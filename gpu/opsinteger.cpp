// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "opsinteger.h"

#include "integerparams.h"
#include "kernels.h"

namespace gpu {

using core::exec::KernelCall;

namespace {

const Outcome kUnsupported { false, {} };

// The data of input `slot`, null when the optional input is absent.
const void* optional(const KernelCall& c, std::size_t slot) { return c.has(slot) ? c.in[slot].data : nullptr; }
const float* optionalFloats(const KernelCall& c, std::size_t slot) { return static_cast<const float*>(optional(c, slot)); }

Outcome intMatMul(const DeviceCall& d)
{
    const auto& c = d.call;
    kernels::IntMatMulShape s;
    if (!intMatMulParams(c, s))
        return kUnsupported;
    const bool q = s.y != kernels::Scalar::Int32; // QLinearMatMul: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
    const std::size_t b = q ? 3 : 1, aZero = 2, bZero = q ? 5 : 3;
    return launched(kernels::intMatMul(s, c.in[0].data, c.in[b].data, optional(c, aZero), optional(c, bZero), q ? optionalFloats(c, 1) : nullptr,
                        q ? optionalFloats(c, 4) : nullptr, q ? optionalFloats(c, 6) : nullptr, q ? optional(c, 7) : nullptr, c.out[0].data,
                        c.out[0].count, d.stream),
        "kernels::intMatMul");
}

Outcome intConv(const DeviceCall& d)
{
    const auto& c = d.call;
    kernels::IntConvShape s;
    if (!intConvParams(c, s))
        return kUnsupported;
    const bool q = s.y != kernels::Scalar::Int32; // QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
    const std::size_t w = q ? 3 : 1, xZero = 2, wZero = q ? 5 : 3;
    return launched(kernels::intConv(s, c.in[0].data, c.in[w].data, optional(c, xZero), optional(c, wZero), q ? optionalFloats(c, 1) : nullptr,
                        q ? optionalFloats(c, 4) : nullptr, q ? optionalFloats(c, 6) : nullptr, q ? optional(c, 7) : nullptr,
                        q ? static_cast<const std::int32_t*>(optional(c, 8)) : nullptr, c.out[0].data, c.out[0].count, d.stream),
        "kernels::intConv");
}

} // namespace

void addIntegerKernels(std::map<std::string, DeviceKernel>& t)
{
    t["MatMulInteger"] = intMatMul;
    t["QLinearMatMul"] = intMatMul;
    t["ConvInteger"] = intConv;
    t["QLinearConv"] = intConv;
}

} // namespace gpu
