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
#include "exec/kernels.h"
#include "exec/opattrs.h"

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

// ---- MatMul ---------------------------------------------------------------------------------------

// Shapes of a (broadcast, batched) matrix product A[.., M, K] · B[.., K, N] as numpy.matmul reads
// them; batch strides counted in matrices (0 where broadcast).
struct MatMulSetup {
    std::int64_t m = 0, k = 0, n = 0, total = 1;
    Shape batch, sa, sb, aBatch, bBatch; // aBatch, bBatch: the operands' own batch dimensions
};

bool matmulSetup(const TensorView& a, const TensorView& b, const TensorView& y, MatMulSetup& s)
{
    Shape as = a.shape, bs = b.shape;
    if (as.empty() || bs.empty())
        return false;
    if (as.size() == 1)
        as.insert(as.begin(), 1);
    if (bs.size() == 1)
        bs.push_back(1);
    s.m = as[as.size() - 2];
    s.k = as.back();
    s.n = bs.back();
    if (bs[bs.size() - 2] != s.k)
        return false;
    s.aBatch.assign(as.begin(), as.end() - 2);
    s.bBatch.assign(bs.begin(), bs.end() - 2);
    const int rank = int(std::max(s.aBatch.size(), s.bBatch.size()));
    s.batch.assign(rank, 1);
    s.sa.assign(rank, 0);
    s.sb.assign(rank, 0);
    std::int64_t strideA = 1, strideB = 1;
    for (int d = rank - 1; d >= 0; --d) {
        const int ia = d - (rank - int(s.aBatch.size())), ib = d - (rank - int(s.bBatch.size()));
        const std::int64_t da = ia >= 0 ? s.aBatch[ia] : 1, db = ib >= 0 ? s.bBatch[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return false;
        s.batch[d] = std::max(da, db);
        s.sa[d] = da == 1 ? 0 : strideA;
        s.sb[d] = db == 1 ? 0 : strideB;
        strideA *= da;
        strideB *= db;
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

// Where a per-row (of A) or per-column (of B) parameter is read: one element for the tensor, one per
// row/column shared by every matrix, or one per row/column of each of the operand's matrices.
struct VecParam {
    const TensorView* t = nullptr; // null: an absent zero point, 0
    bool perIndex = false, batched = false;

    std::int64_t index(std::int64_t matrix, std::int64_t extent, std::int64_t i) const
    {
        return !perIndex ? 0 : batched ? matrix * extent + i : i;
    }
    std::int32_t zeroPoint(std::int64_t matrix, std::int64_t extent, std::int64_t i) const
    {
        return t ? q8(*t, index(matrix, extent, i)) : 0;
    }
    float scale(std::int64_t matrix, std::int64_t extent, std::int64_t i) const { return t->f32()[index(matrix, extent, i)]; }
};

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

// Runs every output element's exact sum: emit(outIndex, acc, matrixA, matrixB, row, column).
template <typename TA, typename TB, typename Emit>
void matmulSums(const MatMulSetup& s, const TensorView& a, const TensorView& b, const VecParam& az, const VecParam& bz, Emit&& emit)
{
    const std::int64_t m = s.m, k = s.k, n = s.n;
    const int rank = int(s.batch.size());
    std::vector<std::int64_t> acc(static_cast<std::size_t>(n));
    std::vector<std::int32_t> colZero(static_cast<std::size_t>(n));
    Shape counter(rank, 0);
    std::int64_t ia = 0, ib = 0; // matrix indices into A and B
    for (std::int64_t t = 0; t < s.total; ++t) {
        const TA* am = reinterpret_cast<const TA*>(a.data) + ia * m * k;
        const TB* bm = reinterpret_cast<const TB*>(b.data) + ib * k * n;
        for (std::int64_t j = 0; j < n; ++j)
            colZero[std::size_t(j)] = bz.zeroPoint(ib, n, j);
        for (std::int64_t r = 0; r < m; ++r) {
            std::fill(acc.begin(), acc.end(), 0);
            const std::int64_t rowZero = az.zeroPoint(ia, m, r);
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

// Inputs: A, B, a_zero_point?, b_zero_point? (each zero point the dtype of its operand).
bool matmulInteger(const KernelCall& c)
{
    if (!c.has(0) || !c.has(1) || c.out.size() != 1 || c.out[0].dtype != DType::Int32)
        return false;
    const auto &a = c.in[0], &b = c.in[1], &y = c.out[0];
    MatMulSetup s;
    if (!isQ8(a.dtype) || !isQ8(b.dtype) || !matmulSetup(a, b, y, s))
        return false;
    VecParam az, bz;
    if (c.has(2) && (c.in[2].dtype != a.dtype || !vecParam(c.in[2], s.aBatch, s.m, true, az)))
        return false;
    if (c.has(3) && (c.in[3].dtype != b.dtype || !vecParam(c.in[3], s.bBatch, s.n, false, bz)))
        return false;
    auto* out = reinterpret_cast<std::int32_t*>(y.data);
    with8(a.dtype, b.dtype, [&](auto ta, auto tb) {
        matmulSums<typename decltype(ta)::type, typename decltype(tb)::type>(
            s, a, b, az, bz, [&](std::int64_t at, std::int32_t acc, auto...) { out[at] = acc; });
    });
    return true;
}

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point. The output has
// y_zero_point's dtype.
bool qlinearMatMul(const KernelCall& c)
{
    if (!c.has(0) || !c.has(3) || !c.has(1) || !c.has(4) || c.out.size() != 1)
        return false;
    const auto &a = c.in[0], &b = c.in[3], &y = c.out[0];
    MatMulSetup s;
    if (!isQ8(a.dtype) || !isQ8(b.dtype) || !isQ8(y.dtype) || !matmulSetup(a, b, y, s))
        return false;
    VecParam az, bz, as, bs;
    if (c.in[1].dtype != DType::Float32 || !vecParam(c.in[1], s.aBatch, s.m, true, as) || c.in[4].dtype != DType::Float32
        || !vecParam(c.in[4], s.bBatch, s.n, false, bs))
        return false;
    if (c.has(2) && (c.in[2].dtype != a.dtype || !vecParam(c.in[2], s.aBatch, s.m, true, az)))
        return false;
    if (c.has(5) && (c.in[5].dtype != b.dtype || !vecParam(c.in[5], s.bBatch, s.n, false, bz)))
        return false;
    if (!scalarParam(c, 6, DType::Float32) || !scalarParam(c, 7, y.dtype))
        return false;
    const float ys = c.in[6].f32()[0];
    const std::int32_t yz = q8(c.in[7], 0);
    const bool isSigned = y.dtype == DType::Int8;
    with8(a.dtype, b.dtype, [&](auto ta, auto tb) {
        matmulSums<typename decltype(ta)::type, typename decltype(tb)::type>(s, a, b, az, bz,
            [&](std::int64_t at, std::int32_t acc, std::int64_t ia, std::int64_t ib, std::int64_t r, std::int64_t j) {
                const float scale = combinedScale(as.scale(ia, s.m, r), bs.scale(ib, s.n, j), ys);
                y.data[at] = requantize(acc, scale, yz, isSigned);
            });
    });
    return true;
}

// ---- Conv -----------------------------------------------------------------------------------------

struct IntConvSetup {
    ConvGeometry g;
    std::int64_t groups = 1, n = 0, cin = 0, m = 0, cg = 0, mg = 0;
};

// x [N, C, spatial..] and w [M, C/group, kernel..] (8-bit) into y [N, M, out..]. False for shapes
// that do not fit, kernel_shape other than w's, non-positive strides or dilations, unknown auto_pad.
bool intConvSetup(const KernelCall& c, const TensorView& x, const TensorView& w, const TensorView& y, IntConvSetup& s)
{
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
    return true;
}

// Per output channel values of a zero point or scale: one element for every channel, or [M].
bool perChannel(const TensorView& p, std::int64_t m) { return p.count == 1 || (p.rank() == 1 && p.shape[0] == m); }

// Every output element's exact sum of (x - xZero) * (w - wZero[channel]) over its window, window
// positions in the padding skipped (they hold xZero): emit(outIndex, acc, channel).
template <typename TX, typename TW, typename Emit>
void convSums(const IntConvSetup& s, const TensorView& x, const TensorView& w, std::int32_t xZero, const std::vector<std::int32_t>& wZero, Emit&& emit)
{
    const auto& g = s.g;
    const std::int64_t window = g.window(), plane = g.outPlane();
    const TX* xs = reinterpret_cast<const TX*>(x.data);
    const TW* ws = reinterpret_cast<const TW*>(w.data);
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

// Inputs: x, w, x_zero_point? (per tensor), w_zero_point? (per tensor or per output channel).
bool convInteger(const KernelCall& c)
{
    if (!c.has(0) || !c.has(1) || c.out.size() != 1 || c.out[0].dtype != DType::Int32)
        return false;
    const auto &x = c.in[0], &w = c.in[1], &y = c.out[0];
    IntConvSetup s;
    if (!intConvSetup(c, x, w, y, s))
        return false;
    if (c.has(2) && !scalarParam(c, 2, x.dtype))
        return false;
    if (c.has(3) && (c.in[3].dtype != w.dtype || !perChannel(c.in[3], s.m)))
        return false;
    const std::int32_t xz = c.has(2) ? q8(c.in[2], 0) : 0;
    const auto wz = channelZeroPoints(c.has(3) ? &c.in[3] : nullptr, s.m);
    auto* out = reinterpret_cast<std::int32_t*>(y.data);
    with8(x.dtype, w.dtype, [&](auto tx, auto tw) {
        convSums<typename decltype(tx)::type, typename decltype(tw)::type>(
            s, x, w, xz, wz, [&](std::int64_t at, std::int32_t acc, std::int64_t) { out[at] = acc; });
    });
    return true;
}

// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B? (int32 [M],
// added to the int32 sum before requantization). The output has y_zero_point's dtype.
bool qlinearConv(const KernelCall& c)
{
    if (!c.has(0) || !c.has(3) || c.out.size() != 1)
        return false;
    const auto &x = c.in[0], &w = c.in[3], &y = c.out[0];
    IntConvSetup s;
    if (!isQ8(y.dtype) || !intConvSetup(c, x, w, y, s))
        return false;
    if (!scalarParam(c, 1, DType::Float32) || (c.has(2) && !scalarParam(c, 2, x.dtype)))
        return false;
    if (!c.has(4) || c.in[4].dtype != DType::Float32 || !perChannel(c.in[4], s.m))
        return false;
    if (c.has(5) && (c.in[5].dtype != w.dtype || !perChannel(c.in[5], s.m)))
        return false;
    if (!scalarParam(c, 6, DType::Float32) || !scalarParam(c, 7, y.dtype))
        return false;
    if (c.has(8) && (c.in[8].dtype != DType::Int32 || c.in[8].count != s.m))
        return false;
    const std::int32_t xz = c.has(2) ? q8(c.in[2], 0) : 0, yz = q8(c.in[7], 0);
    const auto wz = channelZeroPoints(c.has(5) ? &c.in[5] : nullptr, s.m);
    std::vector<float> scale(std::size_t(s.m));
    for (std::int64_t o = 0; o < s.m; ++o)
        scale[std::size_t(o)] = combinedScale(c.in[1].f32()[0], c.in[4].f32()[c.in[4].count == 1 ? 0 : o], c.in[6].f32()[0]);
    const auto* bias = c.has(8) ? reinterpret_cast<const std::int32_t*>(c.in[8].data) : nullptr;
    const bool isSigned = y.dtype == DType::Int8;
    with8(x.dtype, w.dtype, [&](auto tx, auto tw) {
        convSums<typename decltype(tx)::type, typename decltype(tw)::type>(s, x, w, xz, wz, [&](std::int64_t at, std::int32_t acc, std::int64_t o) {
            if (bias)
                acc = wrap32(std::int64_t(acc) + bias[o]);
            y.data[at] = requantize(acc, scale[std::size_t(o)], yz, isSigned);
        });
    });
    return true;
}

} // namespace

void addIntegerKernels(std::map<std::string, Kernel>& t)
{
    t["MatMulInteger"] = matmulInteger;
    t["ConvInteger"] = convInteger;
    t["QLinearMatMul"] = qlinearMatMul;
    t["QLinearConv"] = qlinearConv;
}

} // namespace core::exec
