// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Pooling over 1-D, 2-D and 3-D windows: MaxPool (float32, float64, int8, uint8, with the optional
// Indices output), AveragePool (float32, float64), GlobalAveragePool, GlobalMaxPool, and MaxUnpool,
// which scatters pooled values back to the positions MaxPool's indices name.
#include "exec/kernels.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace core::exec {

namespace {

// Depth (D), height (H) and width (W) of a 1-D, 2-D or 3-D window; the dimensions a lower-dimensional
// one lacks have length 1.
struct PoolGeometry {
    std::int64_t channels = 0, inD = 1, inH = 1, inW = 1, outD = 1, outH = 1, outW = 1, kD = 1, kH = 1, kW = 1;
    std::int64_t sD = 1, sH = 1, sW = 1, dD = 1, dH = 1, dW = 1;
    std::int64_t padFront = 0, padTop = 0, padLeft = 0, padBack = 0, padBottom = 0, padRight = 0;
};

bool poolGeometry(const KernelCall& c, PoolGeometry& g)
{
    const auto &x = c.in[0], &y = c.out[0];
    const int spatial = x.rank() - 2;
    const auto* kernel = c.attrInts("kernel_shape");
    if (spatial < 1 || spatial > 3 || y.rank() != x.rank() || !kernel || int(kernel->size()) != spatial)
        return false;
    const Shape in(x.shape.begin() + 2, x.shape.end()), out(y.shape.begin() + 2, y.shape.end());
    WindowAttrs a;
    if (!windowAttrs(c, in, out, *kernel, a))
        return false;
    const auto &strides = a.strides, &dil = a.dilations, &pads = a.pads;
    g.channels = x.shape[0] * x.shape[1];
    const auto set = [&](int i, std::int64_t& inLen, std::int64_t& outLen, std::int64_t& k, std::int64_t& stride, std::int64_t& dilation,
                         std::int64_t& begin, std::int64_t& end) {
        inLen = in[i]; outLen = out[i]; k = (*kernel)[i]; stride = strides[i]; dilation = dil[i];
        begin = pads[i]; end = pads[i + spatial];
    };
    set(spatial - 1, g.inW, g.outW, g.kW, g.sW, g.dW, g.padLeft, g.padRight);
    if (spatial >= 2)
        set(spatial - 2, g.inH, g.outH, g.kH, g.sH, g.dH, g.padTop, g.padBottom);
    if (spatial == 3)
        set(0, g.inD, g.outD, g.kD, g.sD, g.dD, g.padFront, g.padBack);
    return x.shape[0] == y.shape[0] && x.shape[1] == y.shape[1];
}

// Calls visit(inputIndex, inside) for every window element of output (od, oh, ow) within the padded
// input, inside telling whether it is in the input itself (inputIndex is then valid).
template <typename Visit>
void forWindow(const PoolGeometry& g, std::int64_t od, std::int64_t oh, std::int64_t ow, Visit&& visit)
{
    for (std::int64_t a = 0; a < g.kD; ++a) {
        const std::int64_t id = od * g.sD - g.padFront + a * g.dD;
        if (id < -g.padFront || id >= g.inD + g.padBack)
            continue;
        for (std::int64_t i = 0; i < g.kH; ++i) {
            const std::int64_t ih = oh * g.sH - g.padTop + i * g.dH;
            if (ih < -g.padTop || ih >= g.inH + g.padBottom)
                continue;
            for (std::int64_t j = 0; j < g.kW; ++j) {
                const std::int64_t iw = ow * g.sW - g.padLeft + j * g.dW;
                if (iw < -g.padLeft || iw >= g.inW + g.padRight)
                    continue;
                const bool inside = id >= 0 && id < g.inD && ih >= 0 && ih < g.inH && iw >= 0 && iw < g.inW;
                visit((id * g.inH + ih) * g.inW + iw, inside);
            }
        }
    }
}

// Calls pool(x, od, oh, ow, at) for every output element and stores its result there: x the
// channel's input, at the element's flat index in the output.
template <typename T, typename Pool>
void forOutputs(const KernelCall& c, const PoolGeometry& g, Pool&& pool)
{
    const std::int64_t inPlane = g.inD * g.inH * g.inW, outPlane = g.outD * g.outH * g.outW;
    for (std::int64_t ch = 0; ch < g.channels; ++ch) {
        const T* x = reinterpret_cast<const T*>(c.in[0].data) + ch * inPlane;
        T* y = reinterpret_cast<T*>(c.out[0].data) + ch * outPlane;
        std::int64_t at = ch * outPlane;
        for (std::int64_t od = 0; od < g.outD; ++od)
            for (std::int64_t oh = 0; oh < g.outH; ++oh)
                for (std::int64_t ow = 0; ow < g.outW; ++ow)
                    *y++ = pool(x, od, oh, ow, at++);
    }
}

// The first largest element of each window (a later equal one does not replace it, as in the ONNX
// reference). Indices, when given, holds its flat index in X: channel plane (N·C) offset plus the
// position in the plane, row-major (storage_order 0) or column-major (1, 1-D and 2-D windows);
// -1 for a window wholly inside the padding.
template <typename T>
void maxPoolAs(const KernelCall& c, const PoolGeometry& g, bool columnMajor)
{
    const std::int64_t inPlane = g.inD * g.inH * g.inW, outPlane = g.outD * g.outH * g.outW;
    std::int64_t* indices = c.out.size() == 2 ? c.out[1].i64() : nullptr;
    const T lowest = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    forOutputs<T>(c, g, [&](const T* x, std::int64_t od, std::int64_t oh, std::int64_t ow, std::int64_t at) {
        T best = lowest;
        std::int64_t where = -1;
        forWindow(g, od, oh, ow, [&](std::int64_t i, bool inside) {
            if (inside && (where < 0 || x[i] > best)) {
                best = x[i];
                where = i;
            }
        });
        if (indices) {
            const std::int64_t plane = at / outPlane;
            const std::int64_t inPlaneAt = columnMajor && where >= 0 ? (where % g.inW) * g.inH + where / g.inW : where;
            indices[at] = where < 0 ? -1 : plane * inPlane + inPlaneAt;
        }
        return best;
    });
}

bool maxPool(const KernelCall& c)
{
    PoolGeometry g;
    const auto& x = c.in[0];
    if (c.out.empty() || c.out.size() > 2 || c.out[0].dtype != x.dtype || !poolGeometry(c, g))
        return false;
    if (c.out.size() == 2 && (c.outSlot(0) != 0 || c.out[1].dtype != DType::Int64 || c.out[1].shape != c.out[0].shape))
        return false;
    const std::int64_t order = c.attrInt("storage_order", 0);
    if (order != 0 && (order != 1 || x.rank() > 4))
        return false;
    switch (x.dtype) {
    case DType::Float32: maxPoolAs<float>(c, g, order == 1); return true;
    case DType::Float64: maxPoolAs<double>(c, g, order == 1); return true;
    case DType::Int8: maxPoolAs<std::int8_t>(c, g, order == 1); return true;
    case DType::UInt8: maxPoolAs<std::uint8_t>(c, g, order == 1); return true;
    default: return false;
    }
}

// Divisor: window elements inside the padded input (count_include_pad) or inside the input.
template <typename T>
void averagePoolAs(const KernelCall& c, const PoolGeometry& g)
{
    const bool includePad = c.attrInt("count_include_pad", 0) != 0;
    forOutputs<T>(c, g, [&](const T* x, std::int64_t od, std::int64_t oh, std::int64_t ow, std::int64_t) {
        T sum = 0;
        std::int64_t inside = 0, padded = 0;
        forWindow(g, od, oh, ow, [&](std::int64_t at, bool in) {
            ++padded;
            if (in) {
                sum += x[at];
                ++inside;
            }
        });
        const std::int64_t n = includePad ? padded : inside;
        return n > 0 ? sum / T(n) : T(0);
    });
}

bool averagePool(const KernelCall& c)
{
    PoolGeometry g;
    const auto dtype = c.in[0].dtype;
    if (c.out.size() != 1 || c.out[0].dtype != dtype || !poolGeometry(c, g))
        return false;
    if (dtype == DType::Float32)
        averagePoolAs<float>(c, g);
    else if (dtype == DType::Float64)
        averagePoolAs<double>(c, g);
    else
        return false;
    return true;
}

template <bool Max>
bool globalPool(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    if (!c.allFloat() || x.rank() < 2 || y.count != x.shape[0] * x.shape[1])
        return false;
    const std::int64_t plane = x.count / y.count;
    for (std::int64_t ch = 0; ch < y.count; ++ch) {
        const float* p = x.f32() + ch * plane;
        float acc = Max ? -std::numeric_limits<float>::infinity() : 0.0f;
        for (std::int64_t i = 0; i < plane; ++i)
            acc = Max ? std::max(acc, p[i]) : acc + p[i];
        y.f32()[ch] = Max ? acc : acc / float(plane);
    }
    return true;
}

// Y = zeros, then each X element at the place its index names. The indices count positions in the
// input MaxPool pooled from, whose spatial size follows from kernel, strides and pads; Y may be larger
// (the output_shape input), each position keeping its coordinates. Any element size: values are
// copied, not computed. False, nothing written, for an index outside that input or outside Y.
bool maxUnpool(const KernelCall& c)
{
    const auto &x = c.in[0], &indices = c.in[1], &y = c.out[0];
    const int spatial = x.rank() - 2;
    const auto* kernel = c.attrInts("kernel_shape");
    if (spatial < 1 || !kernel || int(kernel->size()) != spatial || c.out.size() != 1 || indices.dtype != DType::Int64
        || indices.shape != x.shape || y.dtype != x.dtype || y.rank() != x.rank() || y.shape[0] != x.shape[0] || y.shape[1] != x.shape[1])
        return false;
    const auto strides = c.attrIntsOr("strides", 1, std::size_t(spatial)), pads = c.attrIntsOr("pads", 0, std::size_t(2 * spatial));
    Shape pooledFrom(spatial);
    std::int64_t fromPlane = 1, outPlane = 1;
    for (int i = 0; i < spatial; ++i) {
        pooledFrom[i] = (x.shape[i + 2] - 1) * strides[i] + (*kernel)[i] - pads[i] - pads[i + spatial];
        if (pooledFrom[i] < 1)
            return false;
        fromPlane *= pooledFrom[i];
        outPlane *= y.shape[i + 2];
    }
    const std::int64_t planes = x.shape[0] * x.shape[1];
    // Y's flat index for the index `from`, or -1 when it lies outside.
    const auto target = [&](std::int64_t from) -> std::int64_t {
        if (from < 0 || from >= planes * fromPlane)
            return -1;
        std::int64_t rest = from % fromPlane, at = 0, scale = 1;
        for (int i = spatial - 1; i >= 0; --i) {
            const std::int64_t coord = rest % pooledFrom[i];
            rest /= pooledFrom[i];
            if (coord >= y.shape[i + 2])
                return -1;
            at += coord * scale;
            scale *= y.shape[i + 2];
        }
        return from / fromPlane * outPlane + at;
    };
    for (std::int64_t k = 0; k < x.count; ++k)
        if (target(indices.i64()[k]) < 0)
            return false;
    const std::size_t size = std::size_t(dtypeBytes(x.dtype));
    std::memset(y.data, 0, std::size_t(y.bytes()));
    for (std::int64_t k = 0; k < x.count; ++k)
        std::memcpy(y.data + std::size_t(target(indices.i64()[k])) * size, x.data + std::size_t(k) * size, size);
    return true;
}

} // namespace

void addPoolKernels(std::map<std::string, Kernel>& t)
{
    t["MaxPool"] = maxPool;
    t["AveragePool"] = averagePool;
    t["GlobalAveragePool"] = globalPool<false>;
    t["GlobalMaxPool"] = globalPool<true>;
    t["MaxUnpool"] = maxUnpool;
}

} // namespace core::exec
