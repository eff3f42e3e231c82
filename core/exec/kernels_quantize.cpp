// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Linear quantization (the Q and DQ ops of a QDQ model): QuantizeLinear (float32 -> uint8/int8,
// per tensor or per axis), DequantizeLinear (uint8/int8/int32 -> float32, per tensor or per axis) and
// DynamicQuantizeLinear (float32 -> uint8 with the scale and zero point it chose). Arithmetic as in
// the ONNX reference: float32 division and multiplication, round half to even, then saturation.
// Blocked quantization (opset 21 block_size) and the float8/int4 types are refused.
#include "exec/kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace core::exec {

namespace {

bool isByte(DType t) { return t == DType::UInt8 || t == DType::Int8; }

// Saturating store of an integer into a uint8 or int8 element.
void storeByte(const TensorView& y, std::int64_t i, std::int64_t v)
{
    if (y.dtype == DType::UInt8)
        reinterpret_cast<std::uint8_t*>(y.data)[i] = std::uint8_t(std::clamp<std::int64_t>(v, 0, 255));
    else
        reinterpret_cast<std::int8_t*>(y.data)[i] = std::int8_t(std::clamp<std::int64_t>(v, -128, 127));
}

// Element i of an integer tensor (uint8, int8, int32) as int64; 0 for other types.
std::int64_t integerAt(const TensorView& t, std::int64_t i)
{
    switch (t.dtype) {
    case DType::UInt8: return reinterpret_cast<const std::uint8_t*>(t.data)[i];
    case DType::Int8: return reinterpret_cast<const std::int8_t*>(t.data)[i];
    case DType::Int32: return reinterpret_cast<const std::int32_t*>(t.data)[i];
    default: return 0;
    }
}

// round(v) half to even, as an int64 clamped far outside every byte range (NaN: 0), so the later
// saturation sees the right side and the conversion is defined.
std::int64_t roundHalfEven(float v)
{
    if (std::isnan(v))
        return 0;
    const float r = std::nearbyint(std::clamp(v, -1e9f, 1e9f)); // default rounding mode: to nearest even
    return std::int64_t(r);
}

// How scale and zero point map onto the data: one value for all, or one per index along `axis`.
// `inner` is the product of the dimensions after the axis, so element i uses entry (i / inner) % channels.
struct QuantParams {
    const TensorView* scale = nullptr;
    const TensorView* zeroPoint = nullptr; // nullptr: 0
    std::int64_t channels = 1, inner = 1;

    std::int64_t entry(std::int64_t i) const { return channels == 1 ? 0 : (i / inner) % channels; }
    float scaleAt(std::int64_t i) const { return scale->f32()[entry(i)]; }
    std::int64_t zeroAt(std::int64_t i) const { return zeroPoint ? integerAt(*zeroPoint, entry(i)) : 0; }
};

// Reads the scale (slot 1) and zero point (slot 2) of a Q or DQ call on data `x`: a float32 scalar or
// 1-D scale of x's extent along `axis`; a zero point of the same shape and of type `zeroType`'s family.
bool quantParams(const KernelCall& c, const TensorView& x, QuantParams& q)
{
    if (!c.has(1) || c.in[1].dtype != DType::Float32 || c.attrInt("block_size", 0) != 0)
        return false;
    q.scale = &c.in[1];
    q.zeroPoint = c.has(2) ? &c.in[2] : nullptr;
    if (q.zeroPoint && q.zeroPoint->count != q.scale->count)
        return false;
    if (q.scale->count == 1 && q.scale->rank() <= 1)
        return true;
    if (q.scale->rank() != 1 || x.rank() == 0)
        return false;
    const int axis = normAxis(c.attrInt("axis", 1), x.rank());
    if (x.shape[std::size_t(axis)] != q.scale->count)
        return false;
    q.channels = q.scale->count;
    for (int d = axis + 1; d < x.rank(); ++d)
        q.inner *= x.shape[std::size_t(d)];
    return true;
}

bool quantizeLinear(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    QuantParams q;
    if (x.dtype != DType::Float32 || !isByte(y.dtype) || y.count != x.count || !quantParams(c, x, q))
        return false;
    if (q.zeroPoint && q.zeroPoint->dtype != y.dtype)
        return false;
    for (std::int64_t i = 0; i < x.count; ++i)
        storeByte(y, i, roundHalfEven(x.f32()[i] / q.scaleAt(i)) + q.zeroAt(i));
    return true;
}

bool dequantizeLinear(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    QuantParams q;
    if (!(isByte(x.dtype) || x.dtype == DType::Int32) || y.dtype != DType::Float32 || y.count != x.count
        || !quantParams(c, x, q))
        return false;
    if (q.zeroPoint && q.zeroPoint->dtype != x.dtype)
        return false;
    for (std::int64_t i = 0; i < x.count; ++i)
        y.f32()[i] = (float(integerAt(x, i)) - float(q.zeroAt(i))) * q.scaleAt(i);
    return true;
}

// uint8 over [min(0, min x), max(0, max x)]: scale = range / 255, zero point = round(-min / scale)
// saturated, y = saturate(round(x / scale) + zero point).
bool dynamicQuantizeLinear(const KernelCall& c)
{
    const auto& x = c.in[0];
    if (x.dtype != DType::Float32 || c.out.size() != 3 || c.out[0].dtype != DType::UInt8 || c.out[0].count != x.count
        || c.out[1].dtype != DType::Float32 || c.out[1].count != 1 || c.out[2].dtype != DType::UInt8 || c.out[2].count != 1)
        return false;
    float lo = 0, hi = 0;
    for (std::int64_t i = 0; i < x.count; ++i) {
        const float v = x.f32()[i];
        if (std::isnan(v))
            return false; // the range, and so every output, would be undefined
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
    const float zeroFloat = std::clamp(0.0f - lo / scale, 0.0f, 255.0f);
    const std::int64_t zero = roundHalfEven(zeroFloat);
    for (std::int64_t i = 0; i < x.count; ++i)
        storeByte(c.out[0], i, roundHalfEven(x.f32()[i] / scale) + zero);
    c.out[1].f32()[0] = scale;
    storeByte(c.out[2], 0, zero);
    return true;
}

} // namespace

void addQuantizeKernels(std::map<std::string, Kernel>& t)
{
    t["QuantizeLinear"] = quantizeLinear;
    t["DequantizeLinear"] = dequantizeLinear;
    t["DynamicQuantizeLinear"] = dynamicQuantizeLinear;
}

} // namespace core::exec
