// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// For tst_gpumath: whole op outputs computed on the host with the device kernels' element functions
// (gpu/elementmath.h, gpu/indexmath.h, gpu/recurrentmath.h), one call per element or row as a kernel thread makes it.
// Elementwise parameters come from gpu/elementparams.cpp, the index ops' from gpu/indexparams.cpp; broadcasting,
// windows, Pad, Resize, the reductions and ConvTranspose take their parameters from gpu/opparams.cpp,
// as the device ops do.

#include "elementmath.h"
#include "elementparams.h"
#include "indexparams.h"
#include "integerparams.h"
#include "opparams.h"

#include "exec/kernels.h"

#include <cstring>
#include <map>
#include <string>

namespace gpumath {

namespace k = gpu::kernels;
using core::exec::KernelCall;
using core::exec::Shape;
using core::exec::TensorView;

// Each returns the element functions it used, or "" when the device op would not take the call.

inline std::string unary(const KernelCall& c)
{
    k::Unary op;
    float alpha = 0, beta = 0;
    if (!gpu::unaryParams(c, op, alpha, beta))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        c.out[0].f32()[i] = k::unaryElement(op, c.in[0].f32()[i], alpha, beta);
    return "unaryElement";
}

// Element j of operand `operand` of a broadcast for output element i.
inline std::int64_t source(const k::Broadcast& s, int operand, std::int64_t i)
{
    return k::sourceIndex(i, s.rank, s.dims, s.stride[operand]);
}

inline std::string binary(const KernelCall& c)
{
    k::Binary op;
    k::Broadcast s;
    if (!gpu::binaryParams(c, op, s))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        c.out[0].f32()[i] = k::binaryElement(op, c.in[0].f32()[source(s, 0, i)], c.in[1].f32()[source(s, 1, i)]);
    return "binaryElement sourceIndex";
}

inline std::string compare(const KernelCall& c)
{
    k::Compare op;
    bool int64 = false;
    k::Broadcast s;
    if (!gpu::compareParams(c, op, int64, s))
        return {};
    auto* y = reinterpret_cast<std::uint8_t*>(c.out[0].data);
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        y[i] = int64 ? k::compareElement(op, c.in[0].i64()[source(s, 0, i)], c.in[1].i64()[source(s, 1, i)])
                     : k::compareElement(op, c.in[0].f32()[source(s, 0, i)], c.in[1].f32()[source(s, 1, i)]);
    return "compareElement sourceIndex";
}

// Not is one expression in its kernel: checked here on the parameters only.
inline std::string logicalNot(const KernelCall& c)
{
    if (!gpu::notParams(c))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        c.out[0].data[i] = std::byte(c.in[0].data[i] == std::byte(0) ? 1 : 0);
    return "notParams";
}

inline std::string special(const KernelCall& c)
{
    bool inf = false, negative = true, positive = true;
    if (!gpu::specialParams(c, inf, negative, positive))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        c.out[0].data[i] = std::byte(k::specialElement(c.in[0].f32()[i], inf, negative, positive));
    return "specialElement";
}

inline std::string where(const KernelCall& c)
{
    int width = 0;
    k::Broadcast s;
    if (!gpu::whereParams(c, width, s))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i) {
        const bool pick = c.in[0].data[source(s, 0, i)] != std::byte(0);
        const std::byte* from = pick ? c.in[1].data + source(s, 1, i) * width : c.in[2].data + source(s, 2, i) * width;
        std::memcpy(c.out[0].data + i * width, from, std::size_t(width));
    }
    return "whereParams sourceIndex";
}

inline std::string cast(const KernelCall& c)
{
    k::Scalar from, to;
    if (!gpu::castParams(c, from, to))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        k::castElement(from, c.in[0].data, to, c.out[0].data, i);
    return "castElement";
}

inline std::string quantize(const KernelCall& c)
{
    k::Scalar type;
    k::QuantAxis axis;
    if (!gpu::quantizeParams(c, type, axis))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        k::quantizeElement(c.in[0].f32(), c.in[1].f32(), c.has(2) ? c.in[2].data : nullptr, type, c.out[0].data, axis, i);
    return "quantizeElement";
}

inline std::string dequantize(const KernelCall& c)
{
    k::Scalar type;
    k::QuantAxis axis;
    if (!gpu::dequantizeParams(c, type, axis))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        k::dequantizeElement(type, c.in[0].data, c.in[1].f32(), c.has(2) ? c.in[2].data : nullptr, c.out[0].f32(), axis, i);
    return "dequantizeElement";
}

// Conv as the device runs it: im2col per image and group (element function), then the product.
inline std::string conv(const KernelCall& c)
{
    if (!c.allFloat() || c.out.size() != 1 || !c.has(1))
        return {};
    const auto &x = c.in[0], &wt = c.in[1], &y = c.out[0];
    k::Window w;
    if (x.rank() < 3 || wt.rank() != x.rank() || !gpu::window(c, x, y, Shape(wt.shape.begin() + 2, wt.shape.end()), w))
        return {};
    const std::int64_t groups = c.attrInt("group", 1), batch = x.shape[0], outChannels = y.shape[1], inChannels = x.shape[1];
    if (groups < 1 || inChannels % groups || outChannels % groups || wt.shape[0] != outChannels || wt.shape[1] * groups != inChannels
        || (c.has(2) && c.in[2].count != outChannels))
        return {};
    w.channels = inChannels / groups;
    const std::int64_t kk = w.channels * w.kernelSize(), plane = w.outPlane(), inPlane = w.inPlane();
    const std::int64_t mg = outChannels / groups;
    if (k::directGroupedConv(groups, kk)) {
        for (std::int64_t i = 0; i < y.count; ++i)
            y.f32()[i] = k::groupedConvElement(x.f32(), wt.f32(), c.has(2) ? c.in[2].f32() : nullptr, w, groups, outChannels, i);
        return "groupedConvElement";
    }
    std::vector<float> col(std::size_t(kk * plane));
    for (std::int64_t n = 0; n < batch; ++n)
        for (std::int64_t g = 0; g < groups; ++g) {
            const float* xg = x.f32() + (n * groups + g) * w.channels * inPlane;
            for (std::int64_t i = 0; i < kk * plane; ++i)
                col[std::size_t(i)] = k::im2colElement(xg, w, i);
            for (std::int64_t o = 0; o < mg; ++o)
                for (std::int64_t p = 0; p < plane; ++p) {
                    double acc = 0;
                    for (std::int64_t r = 0; r < kk; ++r)
                        acc += double(wt.f32()[(g * mg + o) * kk + r]) * col[std::size_t(r * plane + p)];
                    const std::int64_t ch = g * mg + o;
                    y.f32()[(n * outChannels + ch) * plane + p] = float(acc) + (c.has(2) ? c.in[2].f32()[ch] : 0.0f);
                }
        }
    return "im2colElement";
}

inline std::string pool(const KernelCall& c)
{
    const auto* kernel = c.attrInts("kernel_shape");
    k::Window w;
    if (!c.allFloat() || c.out.size() != 1 || !kernel || c.attrInt("storage_order", 0) != 0 || c.in[0].rank() < 3
        || !gpu::window(c, c.in[0], c.out[0], *kernel, w) || c.in[0].shape[0] != c.out[0].shape[0] || c.in[0].shape[1] != c.out[0].shape[1])
        return {};
    const bool max = c.op->type == "MaxPool", includePad = c.attrInt("count_include_pad", 0) != 0;
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        c.out[0].f32()[i] = k::poolElement(max, c.in[0].f32(), w, includePad, i);
    return "poolElement";
}

inline std::string globalAveragePool(const KernelCall& c)
{
    if (!c.allFloat() || c.out.size() != 1 || c.in[0].rank() < 3)
        return {};
    const std::int64_t rows = c.in[0].shape[0] * c.in[0].shape[1], inner = c.in[0].count / std::max<std::int64_t>(1, rows);
    if (c.out[0].count != rows)
        return {};
    for (std::int64_t r = 0; r < rows; ++r)
        c.out[0].f32()[r] = k::rowMean(c.in[0].f32() + r * inner, inner);
    return "rowMean";
}

inline std::string batchNorm(const KernelCall& c)
{
    if (!c.allFloat() || c.out.size() != 1 || c.attrInt("training_mode", 0) != 0 || c.in.size() < 5 || c.in[0].rank() < 2)
        return {};
    const auto& x = c.in[0];
    const std::int64_t ch = x.shape[1], inner = x.count / std::max<std::int64_t>(1, x.shape[0] * ch);
    for (int i = 1; i < 5; ++i)
        if (!c.has(i) || c.in[i].count != ch)
            return {};
    const float eps = c.attrFloat("epsilon", 1e-5f);
    for (std::int64_t i = 0; i < x.count; ++i) {
        const std::int64_t k = (i / inner) % ch;
        c.out[0].f32()[i] = k::batchNormElement(x.f32()[i], c.in[1].f32()[k], c.in[2].f32()[k], c.in[3].f32()[k], c.in[4].f32()[k], eps);
    }
    return "batchNormElement";
}

inline std::string softmax(const KernelCall& c)
{
    gpu::RowParams p;
    if (!gpu::softmaxParams(c, p))
        return {};
    for (std::int64_t r = 0; r < p.outer * p.inner; ++r)
        k::softmaxRow(c.out[0].f32(), c.in[0].f32(), r, p.count, p.inner, c.op->type == "LogSoftmax");
    return "softmaxRow";
}

// The device op takes only calls without the optional Mean/InvStdDev outputs; here output 0 of any
// call is computed (the caller compares only output 0 then).
inline std::string layerNorm(const KernelCall& c)
{
    std::int64_t rows = 0, inner = 0;
    if (!gpu::layerNormParams(c, rows, inner))
        return {};
    auto statistic = [&](std::size_t k, std::int64_t r) { return k < c.out.size() && c.out[k].present() ? c.out[k].f32() + r : nullptr; };
    for (std::int64_t r = 0; r < rows; ++r)
        k::layerNormRow(c.out[0].f32() + r * inner, c.in[0].f32() + r * inner, c.in[1].f32(), c.has(2) ? c.in[2].f32() : nullptr, inner,
            c.attrFloat("epsilon", 1e-5f), statistic(1, r), statistic(2, r));
    return "layerNormRow";
}

inline void copyElement(const TensorView& y, std::int64_t o, const TensorView& x, std::int64_t i)
{
    const auto bytes = core::dtypeBytes(x.dtype);
    std::memcpy(y.data + o * bytes, x.data + i * bytes, std::size_t(bytes));
}

inline std::string transpose(const KernelCall& c)
{
    gpu::PermuteParams p;
    if (!(c.op->type == "Transpose" ? gpu::permuteParams(c, p) : gpu::depthSpaceParams(c, p)))
        return {};
    const auto &x = c.in[0], &y = c.out[0];
    for (std::int64_t i = 0; i < y.count; ++i)
        copyElement(y, i, x, k::sourceIndex(i, p.rank, p.outDims, p.inStride));
    return "sourceIndex";
}

inline std::string tile(const KernelCall& c)
{
    gpu::TileParams p;
    if (!gpu::tileParams(c, p))
        return {};
    const auto &x = c.in[0], &y = c.out[0];
    for (std::int64_t i = 0; i < y.count; ++i)
        copyElement(y, i, x, k::tileSource(i, p.rank, y.shape.data(), p.inDims, p.inStride));
    return "tileSource";
}

inline std::string instanceNorm(const KernelCall& c)
{
    std::int64_t channels = 0, plane = 0;
    if (!gpu::instanceNormParams(c, channels, plane))
        return {};
    for (std::int64_t r = 0; r < c.in[0].count / plane; ++r)
        k::instanceNormRow(c.out[0].f32() + r * plane, c.in[0].f32() + r * plane, c.in[1].f32()[r % channels], c.in[2].f32()[r % channels],
            plane, c.attrFloat("epsilon", 1e-5f));
    return "instanceNormRow";
}

inline std::string gather(const KernelCall& c)
{
    gpu::GatherParams p;
    if (!gpu::gatherParams(c, p))
        return {};
    const auto &x = c.in[0], &idx = c.in[1], &y = c.out[0];
    for (std::int64_t i = 0; i < y.count; ++i)
        copyElement(y, i, x, k::gatherSource(i, idx.data, idx.dtype == core::DType::Int64, idx.count, p.dim, p.inner));
    return "gatherSource";
}

inline std::string pad(const KernelCall& c)
{
    k::PadShape s;
    if (!gpu::padShape(c, s))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        c.out[0].f32()[i] = k::padElement(c.in[0].f32(), s, i);
    return "padElement";
}

inline std::string resize(const KernelCall& c)
{
    k::ResizeShape s;
    if (!gpu::resizeShape(c, s))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        c.out[0].f32()[i] = k::resizeElement(c.in[0].f32(), s, i);
    return "resizeElement";
}

inline std::string reduce(const KernelCall& c)
{
    k::ReduceShape s;
    if (!(c.op->type == "GlobalMaxPool" ? gpu::globalMaxPoolShape(c, s) : gpu::reduceShape(c, s)))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        c.out[0].f32()[i] = k::reduceElement(c.in[0].f32(), s, i);
    return "reduceElement";
}

// ConvTranspose as the device runs it: per image and group the columns Wᵀ_g · x_g, then col2im.
inline std::string convTranspose(const KernelCall& c)
{
    k::TransposedConv s;
    if (!gpu::transposedConvShape(c, s))
        return {};
    const std::int64_t cg = s.inChannels / s.groups, mg = s.outChannels / s.groups, rows = mg * s.kernelSize();
    const std::int64_t inPlane = s.inPlane(), outPlane = s.outPlane();
    std::vector<float> col(std::size_t(rows * inPlane));
    for (std::int64_t n = 0; n < s.batch; ++n)
        for (std::int64_t g = 0; g < s.groups; ++g) {
            const float* x = c.in[0].f32() + (n * s.inChannels + g * cg) * inPlane;
            const float* w = c.in[1].f32() + g * cg * rows;
            for (std::int64_t r = 0; r < rows; ++r)
                for (std::int64_t p = 0; p < inPlane; ++p) {
                    double acc = 0;
                    for (std::int64_t ci = 0; ci < cg; ++ci)
                        acc += double(w[ci * rows + r]) * x[ci * inPlane + p];
                    col[std::size_t(r * inPlane + p)] = float(acc);
                }
            float* y = c.out[0].f32() + (n * s.outChannels + g * mg) * outPlane;
            const float* bias = c.has(2) ? c.in[2].f32() + g * mg : nullptr;
            for (std::int64_t i = 0; i < mg * outPlane; ++i)
                y[i] = k::col2imElement(col.data(), bias, s, i);
        }
    return "col2imElement";
}

inline std::string logical(const KernelCall& c)
{
    k::Logical op;
    k::Broadcast s;
    if (!gpu::logicalParams(c, op, s))
        return {};
    const auto* a = reinterpret_cast<const std::uint8_t*>(c.in[0].data);
    const auto* b = reinterpret_cast<const std::uint8_t*>(c.in[1].data);
    auto* y = reinterpret_cast<std::uint8_t*>(c.out[0].data);
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        y[i] = k::logicalElement(op, a[source(s, 0, i)], b[source(s, 1, i)]);
    return "logicalElement sourceIndex";
}

inline std::string argExtreme(const KernelCall& c)
{
    gpu::AxisParams a;
    bool max = true, last = false, int64 = false;
    if (!gpu::argExtremeParams(c, a, max, last, int64))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        c.out[0].i64()[i] = int64 ? k::argExtremeElement(c.in[0].i64(), i, a.extent, a.inner, max, last)
                                  : k::argExtremeElement(c.in[0].f32(), i, a.extent, a.inner, max, last);
    return "argExtremeElement";
}

inline std::string cumSum(const KernelCall& c)
{
    gpu::AxisParams a;
    bool exclusive = false, reverse = false;
    k::Scalar type;
    if (!gpu::cumSumParams(c, a, exclusive, reverse, type))
        return {};
    const auto rows = [&]<class T>(T*) {
        for (std::int64_t r = 0; r < a.outer * a.inner; ++r)
            k::cumSumRow(reinterpret_cast<T*>(c.out[0].data), reinterpret_cast<const T*>(c.in[0].data), r, a.extent, a.inner, exclusive,
                reverse);
    };
    switch (type) {
    case k::Scalar::Float32: rows(static_cast<float*>(nullptr)); break;
    case k::Scalar::Float64: rows(static_cast<double*>(nullptr)); break;
    case k::Scalar::Int32: rows(static_cast<std::int32_t*>(nullptr)); break;
    default: rows(static_cast<std::int64_t*>(nullptr)); break;
    }
    return "cumSumRow";
}

inline std::string trilu(const KernelCall& c)
{
    gpu::TriluParams p;
    if (!gpu::triluParams(c, p))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        if (k::triluKeeps(i, p.rows, p.cols, p.k, p.upper))
            copyElement(c.out[0], i, c.in[0], i);
        else
            std::memset(c.out[0].data + i * p.elementBytes, 0, std::size_t(p.elementBytes));
    return "triluKeeps";
}

inline std::string gatherElements(const KernelCall& c)
{
    k::GatherElementsShape s;
    bool indices64 = false;
    int width = 0;
    if (!gpu::gatherElementsParams(c, s, indices64, width))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        copyElement(c.out[0], i, c.in[0], k::gatherElementsSource(i, c.in[1].data, indices64, s));
    return "gatherElementsSource";
}

inline std::string hardmax(const KernelCall& c)
{
    gpu::AxisParams a;
    if (!gpu::hardmaxParams(c, a))
        return {};
    for (std::int64_t r = 0; r < a.outer * a.inner; ++r)
        k::hardmaxRow(c.in[0].f32(), c.out[0].f32(), a.extent, a.inner, r);
    return "hardmaxRow";
}

inline std::string oneHot(const KernelCall& c)
{
    k::OneHotShape s;
    int width = 0;
    if (!gpu::oneHotParams(c, s, width))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        std::memcpy(c.out[0].data + i * width, c.in[2].data + (k::oneHotHit(i, c.in[0].data, s) ? width : 0), std::size_t(width));
    return "oneHotHit";
}

inline std::string scatterElements(const KernelCall& c)
{
    k::GatherElementsShape s;
    k::Reduction reduction;
    bool indices64 = false;
    int width = 0;
    if (!gpu::scatterElementsParams(c, s, reduction, indices64, width))
        return {};
    std::memcpy(c.out[0].data, c.in[0].data, std::size_t(c.out[0].bytes()));
    const std::int64_t along = s.idxDims[s.axis], lines = along > 0 ? c.in[1].count / along : 0;
    for (std::int64_t l = 0; l < lines; ++l)
        for (std::int64_t kk = 0; kk < along; ++kk) {
            const std::int64_t i = k::scatterElementsIndex(l, kk, s), at = k::gatherElementsSource(i, c.in[1].data, indices64, s);
            if (reduction == k::Reduction::None)
                copyElement(c.out[0], at, c.in[2], i);
            else
                c.out[0].f32()[at] = k::scatterCombine(reduction, c.out[0].f32()[at], c.in[2].f32()[i]);
        }
    return reduction == k::Reduction::None ? "scatterElementsIndex" : "scatterElementsIndex scatterCombine";
}

inline std::string gatherND(const KernelCall& c)
{
    k::GatherNDShape s;
    int width = 0;
    if (!gpu::gatherNDParams(c, s, width))
        return {};
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        copyElement(c.out[0], i, c.in[0], k::gatherNDSource(i, c.in[1].i64(), s));
    return "gatherNDSource";
}

// As the device op: the copy of data, then per update element (no reduction) or per slice element
// through the tuples in order.
inline std::string scatterND(const KernelCall& c)
{
    gpu::ScatterNDParams p;
    if (!gpu::scatterNDParams(c, p))
        return {};
    const auto& s = p.shape;
    std::memcpy(c.out[0].data, c.in[0].data, std::size_t(c.out[0].bytes()));
    if (p.reduction == k::Reduction::None) {
        for (std::int64_t i = 0; i < s.tuples * s.slice; ++i)
            if (const auto at = k::scatterNDTarget(i / s.slice, c.in[1].data, p.indices64, s); at >= 0)
                copyElement(c.out[0], at + i % s.slice, c.in[2], i);
        return "scatterNDTarget";
    }
    const auto combine = [&](auto* y, const auto* u) {
        for (std::int64_t j = 0; j < s.slice; ++j)
            for (std::int64_t t = 0; t < s.tuples; ++t)
                if (const auto at = k::scatterNDTarget(t, c.in[1].data, p.indices64, s); at >= 0)
                    y[at + j] = k::scatterCombine(p.reduction, y[at + j], u[t * s.slice + j]);
    };
    if (p.int64)
        combine(c.out[0].i64(), c.in[2].i64());
    else
        combine(c.out[0].f32(), c.in[2].f32());
    return "scatterNDTarget scatterCombine";
}

inline std::string topK(const KernelCall& c)
{
    k::TopKShape s;
    if (!gpu::topKParams(c, s))
        return {};
    for (std::int64_t r = 0; r < s.outer * s.inner; ++r)
        k::topKRow(c.in[0].f32(), c.out[0].f32(), c.out[1].i64(), s, r);
    return "topKRow";
}

// The data of input `slot`, null when the optional input is absent.
inline const void* optionalData(const KernelCall& c, std::size_t slot) { return c.has(slot) ? c.in[slot].data : nullptr; }

inline std::string intMatMul(const KernelCall& c)
{
    k::IntMatMulShape s;
    if (!gpu::intMatMulParams(c, s))
        return {};
    const bool q = s.y != k::Scalar::Int32;
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        k::intMatMulElement(s, c.in[0].data, c.in[q ? 3 : 1].data, optionalData(c, 2), optionalData(c, q ? 5 : 3),
            q ? c.in[1].f32() : nullptr, q ? c.in[4].f32() : nullptr, q ? c.in[6].f32() : nullptr, q ? optionalData(c, 7) : nullptr,
            c.out[0].data, i);
    return "intMatMulElement";
}

inline std::string intConv(const KernelCall& c)
{
    k::IntConvShape s;
    if (!gpu::intConvParams(c, s))
        return {};
    const bool q = s.y != k::Scalar::Int32;
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        k::intConvElement(s, c.in[0].data, c.in[q ? 3 : 1].data, optionalData(c, 2), optionalData(c, q ? 5 : 3), q ? c.in[1].f32() : nullptr,
            q ? c.in[4].f32() : nullptr, q ? c.in[6].f32() : nullptr, q ? optionalData(c, 7) : nullptr,
            q ? static_cast<const std::int32_t*>(optionalData(c, 8)) : nullptr, c.out[0].data, i);
    return "intConvElement";
}

using Driver = std::string (*)(const KernelCall&);

// c[m][n] = a[m][kk]·b[n][kk]ᵀ in double, as the device op's cuBLAS GEMMs (transposed B).
inline void gemmTransposedB(std::int64_t m, std::int64_t n, std::int64_t kk, const float* a, const float* b, float* c)
{
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (std::int64_t q = 0; q < kk; ++q)
                acc += double(a[i * kk + q]) * b[j * kk + q];
            c[i * n + j] = float(acc);
        }
}

// RNN, GRU, LSTM: the device op's sequence (gpu/opsrecurrent.cpp) with host GEMMs.
inline std::string recurrent(const KernelCall& c)
{
    core::exec::Recurrence r;
    if (!gpu::recurrentParams(c, r))
        return {};
    const std::int64_t H = r.hidden, G = r.gates * H, B = r.batch;
    std::vector<float> xw(std::size_t(r.seq * B * G)), hr(std::size_t(B * G)), rh(std::size_t(B * H)), masked(std::size_t(B * H));
    std::vector<float> hs(std::size_t(B * H)), cs(std::size_t(B * H));
    const auto* lengths = c.has(4) ? reinterpret_cast<const std::int32_t*>(c.in[4].data) : nullptr;
    float* y = core::exec::recurrentOutput(c, 0);
    float* yh = core::exec::recurrentOutput(c, 1);
    float* yc = core::exec::recurrentOutput(c, 2);
    const bool lstm = r.cell == core::exec::Cell::Lstm, resetFirst = r.cell == core::exec::Cell::Gru && !r.linearBeforeReset;
    for (int dir = 0; dir < r.dirs; ++dir) {
        auto s = gpu::recurrentStep(r, dir);
        const float* rw = c.in[2].f32() + dir * G * H;
        const float* bias = c.has(3) ? c.in[3].f32() + dir * 2 * G : nullptr;
        const float* peep = lstm && c.has(7) ? c.in[7].f32() + dir * 3 * H : nullptr;
        gemmTransposedB(r.seq * B, G, r.input, c.in[0].f32(), c.in[1].f32() + dir * G * r.input, xw.data());
        for (std::int64_t i = 0; i < B * H; ++i)
            k::recurrentStartElement(s, c.has(5) ? c.in[5].f32() : nullptr, lstm && c.has(6) ? c.in[6].f32() : nullptr, hs.data(), cs.data(),
                i / H, i % H);
        for (s.step = 0; s.step < r.seq; ++s.step) {
            gemmTransposedB(B, G, H, hs.data(), rw, hr.data());
            if (resetFirst) {
                for (std::int64_t i = 0; i < B * H; ++i)
                    masked[std::size_t(i)] = k::gruResetElement(s, xw.data(), hr.data(), bias, lengths, hs.data(), i / H, i % H);
                gemmTransposedB(B, H, H, masked.data(), rw + 2 * H * H, rh.data());
            }
            for (std::int64_t i = 0; i < B * H; ++i)
                k::recurrentCellElement(s, xw.data(), hr.data(), rh.data(), bias, peep, lengths, hs.data(), cs.data(), y, yh, yc, i / H, i % H);
        }
    }
    return resetFirst ? "recurrentStartElement gruResetElement recurrentCellElement" : "recurrentStartElement recurrentCellElement";
}

inline const std::map<std::string, Driver>& drivers()
{
    static const std::map<std::string, Driver> t = [] {
        std::map<std::string, Driver> m {
            { "Conv", conv }, { "MaxPool", pool }, { "AveragePool", pool }, { "GlobalAveragePool", globalAveragePool },
            { "BatchNormalization", batchNorm }, { "Softmax", softmax }, { "LogSoftmax", softmax }, { "LayerNormalization", layerNorm },
            { "Transpose", transpose }, { "DepthToSpace", transpose }, { "SpaceToDepth", transpose }, { "Gather", gather }, { "Expand", tile }, { "Tile", tile },
            { "InstanceNormalization", instanceNorm },
            { "Pad", pad }, { "Resize", resize }, { "Upsample", resize }, { "GlobalMaxPool", reduce }, { "ConvTranspose", convTranspose },
        };
        for (const char* type : { "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum",
                 "ReduceLogSumExp" })
            m[type] = reduce;
        for (const auto& u : gpu::unaryOpTypes())
            m[u.first] = unary;
        for (const auto& b : gpu::binaryOpTypes())
            m[b.first] = binary;
        for (const auto& t : gpu::compareOpTypes())
            m[t.first] = compare;
        for (const auto& t : gpu::logicalOpTypes())
            m[t.first] = logical;
        for (const char* type : { "ArgMax", "ArgMin" })
            m[type] = argExtreme;
        m["CumSum"] = cumSum;
        m["Trilu"] = trilu;
        m["GatherElements"] = gatherElements;
        m["GatherND"] = gatherND;
        m["ScatterElements"] = scatterElements;
        m["Scatter"] = scatterElements;
        m["ScatterND"] = scatterND;
        m["TopK"] = topK;
        m["DynamicQuantizeLinear"] = [](const KernelCall& c) -> std::string {
            if (!gpu::dynamicQuantizeParams(c))
                return {};
            auto* zeroPoint = reinterpret_cast<std::uint8_t*>(c.out[2].data);
            k::dynamicRange(c.in[0].f32(), c.in[0].count, c.out[1].f32(), zeroPoint);
            for (std::int64_t i = 0; i < c.out[0].count; ++i)
                k::quantizeElement(c.in[0].f32(), c.out[1].f32(), zeroPoint, k::Scalar::UInt8, c.out[0].data, {}, i);
            return "dynamicRange quantizeElement";
        };
        m["GridSample"] = [](const KernelCall& c) -> std::string {
            k::GridSampleShape s;
            if (!gpu::gridSampleParams(c, s))
                return {};
            for (std::int64_t i = 0; i < c.out[0].count; ++i)
                c.out[0].f32()[i] = k::gridSampleElement(s, c.in[0].f32(), c.in[1].f32(), i);
            return "gridSampleElement";
        };
        m["MatMulInteger"] = intMatMul;
        m["QLinearMatMul"] = intMatMul;
        m["ConvInteger"] = intConv;
        m["QLinearConv"] = intConv;
        m["Hardmax"] = hardmax;
        m["OneHot"] = oneHot;
        m["Not"] = logicalNot;
        m["IsNaN"] = special;
        m["IsInf"] = special;
        m["Where"] = where;
        m["Cast"] = cast;
        m["LRN"] = [](const KernelCall& c) -> std::string {
            k::LrnShape s;
            if (!gpu::lrnParams(c, s))
                return {};
            for (std::int64_t i = 0; i < c.out[0].count; ++i)
                c.out[0].f32()[i] = k::lrnElement(c.in[0].f32(), s, i);
            return "lrnElement";
        };
        m["CastLike"] = cast;
        m["QuantizeLinear"] = quantize;
        m["DequantizeLinear"] = dequantize;
        for (const char* type : { "RNN", "GRU", "LSTM" })
            m[type] = recurrent;
        return m;
    }();
    return t;
}

} // namespace gpumath
