// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Quantized integer ops on 8-bit operands (uint8 or int8, each operand its own), summed exactly in
// 64-bit integers and wrapped to int32 as the spec's 32-bit accumulation wraps:
// - MatMulInteger -> int32, and QLinearMatMul -> uint8/int8: numpy.matmul batching and broadcasting;
//   zero points (and scales) per tensor, per row of A / column of B shared by every batch ([M],
//   [1.., M, 1] / [N], [1.., 1, N]), or per row/column of each matrix ([batch.., M, 1] / [batch.., 1, N]).
// - ConvInteger -> int32, and QLinearConv -> uint8/int8 (optional int32 bias): 1-D, 2-D and 3-D,
//   groups, strides, dilations, pads, auto_pad; the input's zero point per tensor, the weights' zero
//   point and scale per tensor or per output channel ([M]). Padding holds the input's zero point, so
//   it adds nothing.
// Requantization follows the ONNX reference: the combined scale a_scale * b_scale / y_scale in float32
// (one rounding per operation, left to right), the int32 sum times it in float64, plus y_zero_point,
// rounded half to even and saturated. Scales must be float32; y_scale and y_zero_point per tensor.
#include "exec/integer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace core::exec {

namespace {

bool isQ8(DType t) { return t == DType::UInt8 || t == DType::Int8; }

// Element i of an 8-bit tensor as an integer; 0 for other dtypes (callers check dtypes first).
std::int32_t q8(const TensorView& t, std::int64_t i)
{
    if (t.dtype == DType::UInt8)
        return std::int32_t(reinterpret_cast<const std::uint8_t*>(t.data)[i]);
    if (t.dtype == DType::Int8)
        return std::int32_t(reinterpret_cast<const std::int8_t*>(t.data)[i]);
    return 0;
}

// Calls f(type_identity<A>, type_identity<B>) with the C++ types of two 8-bit dtypes, so the inner
// loops read their operands without a dtype test per element.
template <typename F>
void with8(DType a, DType b, F&& f)
{
    using U = std::type_identity<std::uint8_t>;
    using S = std::type_identity<std::int8_t>;
    if (a == DType::UInt8)
        b == DType::UInt8 ? f(U {}, U {}) : f(U {}, S {});
    else
        b == DType::UInt8 ? f(S {}, U {}) : f(S {}, S {});
}

// Wraps a 64-bit sum to int32, as a 32-bit accumulator would (modular conversion since C++20).
std::int32_t wrap32(std::int64_t v) { return static_cast<std::int32_t>(v); }

// saturate(round_half_to_even(acc * scale + zeroPoint)) into [lo, hi], the byte of the result as
// uint8 or int8 (two's complement) stores it. The product and the sum are float64, as numpy gives
// for an int32 array times a float32 one; x86-64 without -march has no FMA to fuse them. NaN (a NaN
// or infinite scale) saturates to lo instead of being undefined.
std::byte requantize(std::int32_t acc, float scale, std::int32_t zeroPoint, bool isSigned)
{
    const double lo = isSigned ? -128.0 : 0.0, hi = isSigned ? 127.0 : 255.0;
    double v = std::nearbyint(double(acc) * double(scale) + double(zeroPoint)); // default mode: ties to even
    v = v > hi ? hi : v >= lo ? v : lo;
    return std::byte(std::uint8_t(std::int32_t(v)));
}

// The combined scale of one output element, in float32 as the reference evaluates
// a_scale * b_scale / y_scale.
float combinedScale(float a, float b, float y)
{
    const float ab = a * b;
    return ab / y;
}

// A per-tensor parameter (zero point, scale): present with exactly one element of the given dtype.
bool scalarParam(const KernelCall& c, std::size_t slot, DType dtype) { return c.has(slot) && c.in[slot].count == 1 && c.in[slot].dtype == dtype; }

std::int32_t zeroPointAt(const VecParam& v, std::int64_t matrix, std::int64_t extent, std::int64_t i)
{
    return v.t ? q8(*v.t, v.index(matrix, extent, i)) : 0;
}

float scaleAt(const VecParam& v, std::int64_t matrix, std::int64_t extent, std::int64_t i) { return v.t->f32()[v.index(matrix, extent, i)]; }

// Runs every output element's exact sum: emit(outIndex, acc, matrixA, matrixB, row, column).
template <typename TA, typename TB, typename Emit>
void matmulSums(const IntMatMulArgs& p, Emit&& emit)
{
    const auto& s = p.s;
    const std::int64_t m = s.m, k = s.k, n = s.n;
    const int rank = int(s.batch.size());
    std::vector<std::int64_t> acc(static_cast<std::size_t>(n));
    std::vector<std::int32_t> colZero(static_cast<std::size_t>(n));
    Shape counter(rank, 0);
    std::int64_t ia = 0, ib = 0; // matrix indices into A and B
    for (std::int64_t t = 0; t < s.total; ++t) {
        const TA* am = reinterpret_cast<const TA*>(p.a->data) + ia * m * k;
        const TB* bm = reinterpret_cast<const TB*>(p.b->data) + ib * k * n;
        for (std::int64_t j = 0; j < n; ++j)
            colZero[std::size_t(j)] = zeroPointAt(p.bZero, ib, n, j);
        for (std::int64_t r = 0; r < m; ++r) {
            std::fill(acc.begin(), acc.end(), 0);
            const std::int64_t rowZero = zeroPointAt(p.aZero, ia, m, r);
            for (std::int64_t kk = 0; kk < k; ++kk) {
                const std::int64_t av = std::int64_t(am[r * k + kk]) - rowZero;
                if (av == 0)
                    continue;
                const TB* brow = bm + kk * n;
                for (std::int64_t j = 0; j < n; ++j)
                    acc[std::size_t(j)] += av * (std::int64_t(brow[j]) - colZero[std::size_t(j)]);
            }
            for (std::int64_t j = 0; j < n; ++j)
                emit((t * m + r) * n + j, wrap32(acc[std::size_t(j)]), ia, ib, r, j);
        }
        for (int d = rank - 1; d >= 0; --d) {
            ia += s.sa[d];
            ib += s.sb[d];
            if (++counter[d] < s.batch[d])
                break;
            ia -= s.sa[d] * s.batch[d];
            ib -= s.sb[d] * s.batch[d];
            counter[d] = 0;
        }
    }
}

bool intMatMul(const KernelCall& c)
{
    IntMatMulArgs p;
    if (!intMatMulArgs(c, p))
        return false;
    const auto& y = c.out[0];
    if (!p.requantized) {
        auto* out = reinterpret_cast<std::int32_t*>(y.data);
        with8(p.a->dtype, p.b->dtype, [&](auto ta, auto tb) {
            matmulSums<typename decltype(ta)::type, typename decltype(tb)::type>(p, [&](std::int64_t at, std::int32_t acc, auto...) { out[at] = acc; });
        });
        return true;
    }
    const float ys = c.in[6].f32()[0];
    const std::int32_t yz = q8(c.in[7], 0);
    const bool isSigned = y.dtype == DType::Int8;
    with8(p.a->dtype, p.b->dtype, [&](auto ta, auto tb) {
        matmulSums<typename decltype(ta)::type, typename decltype(tb)::type>(
            p, [&](std::int64_t at, std::int32_t acc, std::int64_t ia, std::int64_t ib, std::int64_t r, std::int64_t j) {
                const float scale = combinedScale(scaleAt(p.aScale, ia, p.s.m, r), scaleAt(p.bScale, ib, p.s.n, j), ys);
                y.data[at] = requantize(acc, scale, yz, isSigned);
            });
    });
    return true;
}

// Every output element's exact sum of (x - xZero) * (w - wZero[channel]) over its window, window
// positions in the padding skipped (they hold xZero): emit(outIndex, acc, channel).
template <typename TX, typename TW, typename Emit>
void convSums(const IntConvArgs& s, std::int32_t xZero, const std::vector<std::int32_t>& wZero, Emit&& emit)
{
    const auto& g = s.g;
    const std::int64_t window = g.window(), plane = g.outPlane();
    const TX* xs = reinterpret_cast<const TX*>(s.x->data);
    const TW* ws = reinterpret_cast<const TW*>(s.w->data);
    for (std::int64_t b = 0; b < s.n; ++b)
        for (std::int64_t o = 0; o < s.m; ++o) {
            const TX* xg = xs + (b * s.cin + (o / s.mg) * s.cg) * g.inPlane();
            const TW* wo = ws + o * s.cg * window;
            const std::int64_t wz = wZero[std::size_t(o)];
            std::int64_t at = (b * s.m + o) * plane;
            for (std::int64_t od = 0; od < g.outD; ++od)
                for (std::int64_t oh = 0; oh < g.outH; ++oh)
                    for (std::int64_t ow = 0; ow < g.outW; ++ow, ++at) {
                        std::int64_t acc = 0;
                        for (std::int64_t ci = 0; ci < s.cg; ++ci)
                            for (std::int64_t a = 0; a < g.kD; ++a) {
                                const std::int64_t id = od * g.strideD - g.padFront + a * g.dilD;
                                if (id < 0 || id >= g.inD)
                                    continue;
                                for (std::int64_t i = 0; i < g.kH; ++i) {
                                    const std::int64_t ih = oh * g.strideH - g.padTop + i * g.dilH;
                                    if (ih < 0 || ih >= g.inH)
                                        continue;
                                    const TX* xrow = xg + (ci * g.inD + id) * g.inH * g.inW + ih * g.inW;
                                    const TW* wrow = wo + ((ci * g.kD + a) * g.kH + i) * g.kW;
                                    for (std::int64_t j = 0; j < g.kW; ++j) {
                                        const std::int64_t iw = ow * g.strideW - g.padLeft + j * g.dilW;
                                        if (iw >= 0 && iw < g.inW)
                                            acc += (std::int64_t(xrow[iw]) - xZero) * (std::int64_t(wrow[j]) - wz);
                                    }
                                }
                            }
                        emit(at, wrap32(acc), o);
                    }
        }
}

std::vector<std::int32_t> channelZeroPoints(const TensorView* p, std::int64_t m)
{
    std::vector<std::int32_t> z(std::size_t(m), 0);
    for (std::int64_t o = 0; p && o < m; ++o)
        z[std::size_t(o)] = q8(*p, p->count == 1 ? 0 : o);
    return z;
}

bool intConv(const KernelCall& c)
{
    IntConvArgs s;
    if (!intConvArgs(c, s))
        return false;
    const auto& y = c.out[0];
    const std::int32_t xz = s.xZero ? q8(*s.xZero, 0) : 0;
    const auto wz = channelZeroPoints(s.wZero, s.m);
    if (!s.requantized) {
        auto* out = reinterpret_cast<std::int32_t*>(y.data);
        with8(s.x->dtype, s.w->dtype, [&](auto tx, auto tw) {
            convSums<typename decltype(tx)::type, typename decltype(tw)::type>(
                s, xz, wz, [&](std::int64_t at, std::int32_t acc, std::int64_t) { out[at] = acc; });
        });
        return true;
    }
    const std::int32_t yz = q8(c.in[7], 0);
    std::vector<float> scale(std::size_t(s.m));
    for (std::int64_t o = 0; o < s.m; ++o)
        scale[std::size_t(o)] = combinedScale(s.xScale->f32()[0], s.wScale->f32()[s.wScale->count == 1 ? 0 : o], c.in[6].f32()[0]);
    const auto* bias = s.bias ? reinterpret_cast<const std::int32_t*>(s.bias->data) : nullptr;
    const bool isSigned = y.dtype == DType::Int8;
    with8(s.x->dtype, s.w->dtype, [&](auto tx, auto tw) {
        convSums<typename decltype(tx)::type, typename decltype(tw)::type>(s, xz, wz, [&](std::int64_t at, std::int32_t acc, std::int64_t o) {
            if (bias)
                acc = wrap32(std::int64_t(acc) + bias[o]);
            y.data[at] = requantize(acc, scale[std::size_t(o)], yz, isSigned);
        });
    });
    return true;
}

} // namespace

// ---- Call readers (integer.h) -----------------------------------------------------------------------

namespace {

bool matmulSetup(const TensorView& a, const TensorView& b, const TensorView& y, MatMulSetup& s)
{
    MatMulDims dims; // numpy's promotion and broadcasting, as the float MatMul reads them
    if (!matmulDims(a.shape, b.shape, dims))
        return false;
    s.m = dims.m;
    s.k = dims.k;
    s.n = dims.n;
    // The operands' own batch dimensions (a 1-D operand has none), before padding to one rank.
    s.aBatch.assign(a.shape.begin(), a.shape.end() - std::min<std::ptrdiff_t>(2, std::ptrdiff_t(a.shape.size())));
    s.bBatch.assign(b.shape.begin(), b.shape.end() - std::min<std::ptrdiff_t>(2, std::ptrdiff_t(b.shape.size())));
    const int rank = int(dims.y.size()) - 2;
    s.batch.assign(dims.y.begin(), dims.y.begin() + rank);
    s.sa.assign(rank, 0);
    s.sb.assign(rank, 0);
    std::int64_t strideA = 1, strideB = 1; // in matrices
    for (int d = rank - 1; d >= 0; --d) {
        s.sa[d] = dims.a[d] == 1 ? 0 : strideA;
        s.sb[d] = dims.b[d] == 1 ? 0 : strideB;
        strideA *= dims.a[d];
        strideB *= dims.b[d];
    }
    // The output numpy gives: the batch, then M unless A is a vector, then N unless B is one.
    Shape expected = s.batch;
    if (a.rank() > 1)
        expected.push_back(s.m);
    if (b.rank() > 1)
        expected.push_back(s.n);
    for (auto d : s.batch)
        s.total *= d;
    return y.shape == expected && a.count == strideA * s.m * s.k && b.count == strideB * s.k * s.n;
}

Shape withoutLeadingOnes(const Shape& s)
{
    auto it = std::find_if(s.begin(), s.end(), [](std::int64_t d) { return d != 1; });
    return Shape(it, s.end());
}

// p describes `extent` rows of A (rows) or columns of B (!rows) of an operand with batch dimensions
// operandBatch. False for any other shape.
bool vecParam(const TensorView& p, const Shape& operandBatch, std::int64_t extent, bool rows, VecParam& v)
{
    v = { &p, false, false };
    if (p.count == 1)
        return true;
    v.perIndex = true;
    const int r = p.rank();
    if (r == 1)
        return p.shape[0] == extent;
    if (r < 2 || p.shape[r - 2] != (rows ? extent : 1) || p.shape[r - 1] != (rows ? 1 : extent))
        return false;
    const Shape lead = withoutLeadingOnes(Shape(p.shape.begin(), p.shape.end() - 2));
    if (lead.empty())
        return true;
    v.batched = lead == withoutLeadingOnes(operandBatch);
    return v.batched;
}

// Per output channel values of a zero point or scale: one element for every channel, or [M].
bool perChannel(const TensorView& p, std::int64_t m) { return p.count == 1 || (p.rank() == 1 && p.shape[0] == m); }

} // namespace

bool intMatMulArgs(const KernelCall& c, IntMatMulArgs& p)
{
    if (!c.op || c.out.size() != 1)
        return false;
    p = {};
    p.requantized = c.op->type == "QLinearMatMul";
    if (!p.requantized && c.op->type != "MatMulInteger")
        return false;
    const std::size_t aSlot = 0, bSlot = p.requantized ? 3 : 1;
    const std::size_t aZeroSlot = 2, bZeroSlot = p.requantized ? 5 : 3; // a_zero_point is input 2 of both
    if (!c.has(aSlot) || !c.has(bSlot))
        return false;
    p.a = &c.in[aSlot];
    p.b = &c.in[bSlot];
    const auto& y = c.out[0];
    if (!isQ8(p.a->dtype) || !isQ8(p.b->dtype) || !matmulSetup(*p.a, *p.b, y, p.s))
        return false;
    if (p.requantized ? !isQ8(y.dtype) : y.dtype != DType::Int32)
        return false;
    if (c.has(aZeroSlot) && (c.in[aZeroSlot].dtype != p.a->dtype || !vecParam(c.in[aZeroSlot], p.s.aBatch, p.s.m, true, p.aZero)))
        return false;
    if (c.has(bZeroSlot) && (c.in[bZeroSlot].dtype != p.b->dtype || !vecParam(c.in[bZeroSlot], p.s.bBatch, p.s.n, false, p.bZero)))
        return false;
    if (!p.requantized)
        return true;
    if (!c.has(1) || !c.has(4) || c.in[1].dtype != DType::Float32 || !vecParam(c.in[1], p.s.aBatch, p.s.m, true, p.aScale)
        || c.in[4].dtype != DType::Float32 || !vecParam(c.in[4], p.s.bBatch, p.s.n, false, p.bScale))
        return false;
    return scalarParam(c, 6, DType::Float32) && scalarParam(c, 7, y.dtype);
}

bool intConvArgs(const KernelCall& c, IntConvArgs& s)
{
    if (!c.op || c.out.size() != 1)
        return false;
    s = {};
    s.requantized = c.op->type == "QLinearConv";
    if (!s.requantized && c.op->type != "ConvInteger")
        return false;
    const std::size_t wSlot = s.requantized ? 3 : 1;
    if (!c.has(0) || !c.has(wSlot))
        return false;
    s.x = &c.in[0];
    s.w = &c.in[wSlot];
    const auto &x = *s.x, &w = *s.w, &y = c.out[0];
    if (s.requantized ? !isQ8(y.dtype) : y.dtype != DType::Int32)
        return false;
    if (!isQ8(x.dtype) || !isQ8(w.dtype) || !convGeometry(c, x, w, y, false, s.g))
        return false;
    const auto& g = s.g;
    if (const auto* ks = c.attrInts("kernel_shape"); ks && !ks->empty() && *ks != Shape(w.shape.begin() + 2, w.shape.end()))
        return false;
    if (std::min({ g.strideD, g.strideH, g.strideW, g.dilD, g.dilH, g.dilW }) < 1)
        return false;
    s.groups = c.attrInt("group", 1);
    s.n = x.shape[0];
    s.cin = x.shape[1];
    s.m = y.shape[1];
    if (s.groups <= 0 || s.cin % s.groups || s.m % s.groups || w.shape[0] != s.m || w.shape[1] != s.cin / s.groups || y.shape[0] != s.n)
        return false;
    s.cg = s.cin / s.groups;
    s.mg = s.m / s.groups;
    const std::size_t xZeroSlot = 2, wZeroSlot = s.requantized ? 5 : 3;
    if (c.has(xZeroSlot)) {
        if (!scalarParam(c, xZeroSlot, x.dtype))
            return false;
        s.xZero = &c.in[xZeroSlot];
    }
    if (c.has(wZeroSlot)) {
        if (c.in[wZeroSlot].dtype != w.dtype || !perChannel(c.in[wZeroSlot], s.m))
            return false;
        s.wZero = &c.in[wZeroSlot];
    }
    if (!s.requantized)
        return true;
    if (!scalarParam(c, 1, DType::Float32) || !c.has(4) || c.in[4].dtype != DType::Float32 || !perChannel(c.in[4], s.m))
        return false;
    if (!scalarParam(c, 6, DType::Float32) || !scalarParam(c, 7, y.dtype))
        return false;
    if (c.has(8) && (c.in[8].dtype != DType::Int32 || c.in[8].count != s.m))
        return false;
    s.xScale = &c.in[1];
    s.wScale = &c.in[4];
    s.bias = c.has(8) ? &c.in[8] : nullptr;
    return true;
}

void addIntegerKernels(std::map<std::string, Kernel>& t)
{
    t["MatMulInteger"] = intMatMul;
    t["ConvInteger"] = intConv;
    t["QLinearMatMul"] = intMatMul;
    t["QLinearConv"] = intConv;
}

} // namespace core::exec
