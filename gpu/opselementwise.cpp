// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "opselementwise.h"

#include "elementparams.h"
#include "kernels.h"

namespace gpu {

namespace {

const Outcome kUnsupported { false, {} };

std::uint8_t* bytes(const core::exec::TensorView& v) { return reinterpret_cast<std::uint8_t*>(v.data); }

// Clip's bounds may be inputs: read from their host copies.
Outcome unary(const DeviceCall& d)
{
    core::exec::KernelCall host;
    kernels::Unary op;
    float alpha = 0, beta = 0;
    if (!hostArguments(d, { 1, 2 }, host) || !unaryParams(host, op, alpha, beta))
        return kUnsupported;
    const auto& c = d.call;
    return launched(kernels::unary(op, c.out[0].f32(), c.in[0].f32(), c.out[0].count, alpha, beta, d.stream), "kernels::unary");
}

Outcome binary(const DeviceCall& d)
{
    const auto& c = d.call;
    kernels::Binary op;
    kernels::Broadcast s;
    if (!binaryParams(c, op, s))
        return kUnsupported;
    return launched(kernels::binary(op, c.out[0].f32(), c.in[0].f32(), c.in[1].f32(), s, c.out[0].count, d.stream), "kernels::binary");
}

Outcome compare(const DeviceCall& d)
{
    const auto& c = d.call;
    kernels::Compare op;
    bool int64 = false;
    kernels::Broadcast s;
    if (!compareParams(c, op, int64, s))
        return kUnsupported;
    return launched(kernels::compare(op, bytes(c.out[0]), c.in[0].data, c.in[1].data, int64, s, c.out[0].count, d.stream), "kernels::compare");
}

Outcome logicalNot(const DeviceCall& d)
{
    const auto& c = d.call;
    if (!notParams(c))
        return kUnsupported;
    return launched(kernels::logicalNot(bytes(c.out[0]), bytes(c.in[0]), c.out[0].count, d.stream), "kernels::logicalNot");
}

Outcome special(const DeviceCall& d)
{
    const auto& c = d.call;
    bool inf = false, negative = true, positive = true;
    if (!specialParams(c, inf, negative, positive))
        return kUnsupported;
    return launched(kernels::special(bytes(c.out[0]), c.in[0].f32(), inf, negative, positive, c.out[0].count, d.stream), "kernels::special");
}

Outcome where(const DeviceCall& d)
{
    const auto& c = d.call;
    int elementBytes = 0;
    kernels::Broadcast s;
    if (!whereParams(c, elementBytes, s))
        return kUnsupported;
    return launched(kernels::where(c.out[0].data, bytes(c.in[0]), c.in[1].data, c.in[2].data, elementBytes, s, c.out[0].count, d.stream),
        "kernels::where");
}

Outcome cast(const DeviceCall& d)
{
    const auto& c = d.call;
    kernels::Scalar from, to;
    if (!castParams(c, from, to))
        return kUnsupported;
    return launched(kernels::cast(from, c.in[0].data, to, c.out[0].data, c.out[0].count, d.stream), "kernels::cast");
}

// Scale and zero point are read by the kernel through their device views (one entry, or one per
// index along the axis), so they may be weights or computed at run time.
Outcome quantize(const DeviceCall& d)
{
    const auto& c = d.call;
    kernels::Scalar type;
    kernels::QuantAxis axis;
    if (!quantizeParams(c, type, axis))
        return kUnsupported;
    return launched(kernels::quantize(c.in[0].f32(), c.in[1].f32(), c.has(2) ? c.in[2].data : nullptr, type, c.out[0].data, axis,
                        c.out[0].count, d.stream),
        "kernels::quantize");
}

Outcome dequantize(const DeviceCall& d)
{
    const auto& c = d.call;
    kernels::Scalar type;
    kernels::QuantAxis axis;
    if (!dequantizeParams(c, type, axis))
        return kUnsupported;
    return launched(kernels::dequantize(type, c.in[0].data, c.in[1].f32(), c.has(2) ? c.in[2].data : nullptr, c.out[0].f32(), axis,
                        c.out[0].count, d.stream),
        "kernels::dequantize");
}

// The range kernel writes y_scale and y_zero_point, which QuantizeLinear's kernel then reads.
Outcome dynamicQuantize(const DeviceCall& d)
{
    const auto& c = d.call;
    if (!dynamicQuantizeParams(c))
        return kUnsupported;
    auto* zeroPoint = reinterpret_cast<std::uint8_t*>(c.out[2].data);
    if (auto o = launched(kernels::dynamicRange(c.in[0].f32(), c.in[0].count, c.out[1].f32(), zeroPoint, d.stream), "kernels::dynamicRange");
        !o.failure.empty())
        return o;
    return launched(kernels::quantize(c.in[0].f32(), c.out[1].f32(), zeroPoint, kernels::Scalar::UInt8, c.out[0].data, {}, c.out[0].count, d.stream),
        "kernels::quantize");
}

} // namespace

void addElementwiseKernels(std::map<std::string, DeviceKernel>& t)
{
    for (const auto& u : unaryOpTypes())
        t[u.first] = unary;
    for (const auto& b : binaryOpTypes())
        t[b.first] = binary;
    for (const auto& c : compareOpTypes())
        t[c.first] = compare;
    t["Not"] = logicalNot;
    t["Where"] = where;
    t["Cast"] = cast;
    t["CastLike"] = cast;
    t["IsNaN"] = special;
    t["IsInf"] = special;
    t["QuantizeLinear"] = quantize;
    t["DequantizeLinear"] = dequantize;
    t["DynamicQuantizeLinear"] = dynamicQuantize;
}

} // namespace gpu
