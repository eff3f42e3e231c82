// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The per-element math of the integer product ops on the device (MatMulInteger, QLinearMatMul,
// ConvInteger, QLinearConv), as the CPU kernels compute it (core/exec/kernels_integer.cpp): each
// output element's exact sum of zero-point-shifted 8-bit products in 64 bits, wrapped to int32; for
// the QLinear ops the combined scale a_scale * b_scale / y_scale in float32, the sum times it plus
// y_zero_point in float64, rounded half to even and saturated. One thread per output element: a
// direct sum, no im2col. Compiles for the host too (tests/tst_gpumath.cpp).

#include "elementmath.h"

namespace gpu::kernels {

// How a zero point or scale of an operand is read (core::exec::VecParam): one element for the
// tensor, one per row of A / column of B (or per output channel) shared by every matrix, or one
// per row/column of each of the operand's matrices. present false: an absent zero point (0).
struct IntParam {
    bool present = false, perIndex = false, batched = false;

    MEMPLAN_HD std::int64_t index(std::int64_t matrix, std::int64_t extent, std::int64_t i) const
    {
        return !perIndex ? 0 : batched ? matrix * extent + i : i;
    }
};

// A (broadcast, batched) product A[.., M, K] · B[.., K, N]: the output's batch dimensions and each
// operand's stride per batch dimension in matrices (0 where it broadcasts).
struct IntMatMulShape {
    std::int64_t m = 0, k = 0, n = 0;
    int rank = 0;
    std::int64_t batch[kMaxRank] = {}, strideA[kMaxRank] = {}, strideB[kMaxRank] = {};
    Scalar a = Scalar::UInt8, b = Scalar::UInt8, y = Scalar::Int32; // y Int32: MatMulInteger
    IntParam aZero, bZero, aScale, bScale;
};

// x [N, C, spatial..] * w [M, C/groups, kernel..] -> y [N, M, out..]; window.channels is C/groups.
struct IntConvShape {
    Window window;
    std::int64_t images = 0, outChannels = 0, groupChannels = 0; // groupChannels: output channels per group
    Scalar x = Scalar::UInt8, w = Scalar::UInt8, y = Scalar::Int32; // y Int32: ConvInteger
    IntParam xZero, wZero, wScale; // x's per tensor; w's per tensor or per output channel
    bool bias = false;
};

// Wraps a 64-bit sum to int32 as a 32-bit accumulator would.
MEMPLAN_HD inline std::int32_t wrap32(std::int64_t v) { return std::int32_t(std::uint32_t(std::uint64_t(v))); }

// saturate(round_half_even(acc * scale + zeroPoint)) into uint8 or int8 (`type`) at y[i]. The
// product and the sum in float64, never fused: the CPU has no FMA. NaN saturates to the low end.
MEMPLAN_HD inline void requantizeElement(std::int32_t acc, float scale, std::int64_t zeroPoint, Scalar type, void* y, std::int64_t i)
{
    const bool isSigned = type == Scalar::Int8;
    const double lo = isSigned ? -128.0 : 0.0, hi = isSigned ? 127.0 : 255.0;
#ifdef __CUDA_ARCH__
    double v = rint(__dadd_rn(__dmul_rn(double(acc), double(scale)), double(zeroPoint)));
#else
    double v = rint(double(acc) * double(scale) + double(zeroPoint));
#endif
    v = v > hi ? hi : v >= lo ? v : lo;
    static_cast<std::uint8_t*>(y)[i] = std::uint8_t(std::int32_t(v));
}

// a_scale * b_scale / y_scale in float32, one rounding per operation, left to right.
MEMPLAN_HD inline float combinedScale(float a, float b, float y)
{
    const float ab = a * b;
    return ab / y;
}

// Output element i of MatMulInteger (y int32) or QLinearMatMul (y uint8/int8). Zero points have their
// operand's type; scales are float32; yScale and yZero one element each (QLinearMatMul only).
MEMPLAN_HD inline void intMatMulElement(const IntMatMulShape& s, const void* a, const void* b, const void* aZero, const void* bZero,
    const float* aScale, const float* bScale, const float* yScale, const void* yZero, void* y, std::int64_t i)
{
    const std::int64_t j = i % s.n, r = (i / s.n) % s.m;
    std::int64_t t = i / (s.n * s.m), ia = 0, ib = 0;
    for (int d = s.rank - 1; d >= 0; --d) {
        const std::int64_t at = t % s.batch[d];
        t /= s.batch[d];
        ia += at * s.strideA[d];
        ib += at * s.strideB[d];
    }
    const std::int64_t az = s.aZero.present ? integerElement(s.a, aZero, s.aZero.index(ia, s.m, r)) : 0;
    const std::int64_t bz = s.bZero.present ? integerElement(s.b, bZero, s.bZero.index(ib, s.n, j)) : 0;
    const std::int64_t rowA = (ia * s.m + r) * s.k, columnB = ib * s.k * s.n + j;
    std::int64_t acc = 0;
    for (std::int64_t q = 0; q < s.k; ++q)
        acc += (integerElement(s.a, a, rowA + q) - az) * (integerElement(s.b, b, columnB + q * s.n) - bz);
    if (s.y == Scalar::Int32) {
        static_cast<std::int32_t*>(y)[i] = wrap32(acc);
        return;
    }
    const float scale = combinedScale(aScale[s.aScale.index(ia, s.m, r)], bScale[s.bScale.index(ib, s.n, j)], yScale[0]);
    requantizeElement(wrap32(acc), scale, integerElement(s.y, yZero, 0), s.y, y, i);
}

// Output element i of ConvInteger (y int32) or QLinearConv (y uint8/int8, optional int32 bias [M]).
// Window positions in the padding add nothing (they hold x's zero point).
MEMPLAN_HD inline void intConvElement(const IntConvShape& s, const void* x, const void* w, const void* xZero, const void* wZero,
    const float* xScale, const float* wScale, const float* yScale, const void* yZero, const std::int32_t* bias, void* y, std::int64_t i)
{
    const Window& g = s.window;
    const std::int64_t plane = g.outPlane();
    const std::int64_t p = i % plane, o = (i / plane) % s.outChannels, image = i / (plane * s.outChannels);
    const std::int64_t ow = p % g.outWidth, oh = (p / g.outWidth) % g.outHeight, od = p / (g.outWidth * g.outHeight);
    const std::int64_t groups = s.outChannels / s.groupChannels;
    const std::int64_t xBase = (image * groups + o / s.groupChannels) * g.channels * g.inPlane();
    const std::int64_t wBase = o * g.channels * g.kernelSize();
    const std::int64_t xz = s.xZero.present ? integerElement(s.x, xZero, 0) : 0;
    const std::int64_t wz = s.wZero.present ? integerElement(s.w, wZero, s.wZero.perIndex ? o : 0) : 0;
    std::int64_t acc = 0;
    for (std::int64_t c = 0; c < g.channels; ++c)
        for (int a = 0; a < g.kernelD; ++a) {
            const std::int64_t id = od * g.strideD - g.padFront + std::int64_t(a) * g.dilationD;
            if (id < 0 || id >= g.depth)
                continue;
            for (int ki = 0; ki < g.kernelH; ++ki) {
                const std::int64_t ih = oh * g.strideH - g.padTop + std::int64_t(ki) * g.dilationH;
                if (ih < 0 || ih >= g.height)
                    continue;
                const std::int64_t xRow = xBase + (c * g.depth + id) * g.height * g.width + ih * g.width;
                const std::int64_t wRow = wBase + ((c * g.kernelD + a) * g.kernelH + ki) * g.kernelW;
                for (int kj = 0; kj < g.kernelW; ++kj) {
                    const std::int64_t iw = ow * g.strideW - g.padLeft + std::int64_t(kj) * g.dilationW;
                    if (iw >= 0 && iw < g.width)
                        acc += (integerElement(s.x, x, xRow + iw) - xz) * (integerElement(s.w, w, wRow + kj) - wz);
                }
            }
        }
    if (s.y == Scalar::Int32) {
        static_cast<std::int32_t*>(y)[i] = wrap32(acc);
        return;
    }
    std::int32_t sum = wrap32(acc);
    if (s.bias)
        sum = wrap32(std::int64_t(sum) + bias[o]);
    const float scale = combinedScale(xScale[0], wScale[s.wScale.perIndex ? o : 0], yScale[0]);
    requantizeElement(sum, scale, integerElement(s.y, yZero, 0), s.y, y, i);
}

} // namespace gpu::kernels
