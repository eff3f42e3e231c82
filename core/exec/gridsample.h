// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// GridSample's sampling math, shared by the CPU kernel (kernels_sample.cpp) and the device kernel
// (gpu/samplemath.h, which compiles it for the GPU), so both compute the same bits, as the ONNX
// reference does (after PyTorch's grid_sampler): a grid point is denormalised in double, moved
// inside the borders by the padding mode, then interpolated one axis after the other (each row
// first, then across the rows), each tap read through the padding mode again. Plain inline
// functions, no library calls beyond <cmath>'s float functions.

#ifdef __CUDACC__
#define MEMPLAN_GRID_HD __host__ __device__
#else
#define MEMPLAN_GRID_HD
#endif

#include <math.h>

#include <cstdint>

namespace core::exec {

enum class GridPadding { Zeros, Border, Reflection };

// Reflects x by the nearer border until it lies inside [lo, hi].
MEMPLAN_GRID_HD inline double gridReflect(double x, double lo, double hi)
{
    const double range = hi - lo;
    if (range <= 0)
        return lo;
    if (x < lo) {
        const double d = lo - x;
        const auto n = std::int64_t(d / range);
        const double r = d - double(n) * range;
        return n % 2 == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        const double d = x - hi;
        const auto n = std::int64_t(d / range);
        const double r = d - double(n) * range;
        return n % 2 == 0 ? hi - r : lo + r;
    }
    return x;
}

// One image axis of `size` pixels: its borders ([0, size-1] aligned to corners, else [-0.5, size-0.5]).
struct GridAxis {
    std::int64_t size = 0;
    bool align = false;

    MEMPLAN_GRID_HD double lo() const { return align ? 0.0 : -0.5; }
    MEMPLAN_GRID_HD double hi() const { return align ? double(size) - 1.0 : double(size) - 0.5; }
    MEMPLAN_GRID_HD double denormalize(double v) const { return align ? (v + 1) / 2.0 * double(size - 1) : ((v + 1) * double(size) - 1) / 2.0; }
    // The coordinate moved inside the borders as the padding mode says (zeros leaves it).
    MEMPLAN_GRID_HD double inside(double x, GridPadding padding) const
    {
        if (x >= lo() && x <= hi())
            return x;
        if (padding == GridPadding::Border)
            return x < 0.0 ? 0.0 : x > double(size - 1) ? double(size - 1) : x;
        if (padding == GridPadding::Reflection)
            return gridReflect(x, lo(), hi());
        return x;
    }
    // The index a tap at i reads, or -1 for a zero (zeros padding outside the image).
    MEMPLAN_GRID_HD std::int64_t tap(std::int64_t i, GridPadding padding) const
    {
        if (padding == GridPadding::Zeros)
            return i >= 0 && i < size ? i : -1;
        const std::int64_t at = padding == GridPadding::Border ? i : std::int64_t(gridReflect(double(i), lo(), hi()));
        return at < 0 ? 0 : at > size - 1 ? size - 1 : at;
    }
};

// Keys' cubic convolution weights (a = -0.75) of the four taps around fraction t.
MEMPLAN_GRID_HD inline void gridCubic(float t, float c[4])
{
    constexpr float a = -0.75f;
    t = fabsf(t);
    c[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
    c[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    c[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
    c[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

// Where one grid point reads: `taps` rows and columns (-1: a zero) and their weights.
struct GridPoint {
    int taps = 1; // 1 nearest, 2 bilinear, 4 bicubic
    std::int64_t row[4] = {}, col[4] = {};
    float wx[4] = { 1, 0, 0, 0 }, wy[4] = { 1, 0, 0, 0 };
};

// The taps and weights of grid point (gx, gy).
MEMPLAN_GRID_HD inline GridPoint gridPoint(const GridAxis& rows, const GridAxis& cols, int taps, GridPadding padding, float gx, float gy)
{
    GridPoint g;
    g.taps = taps;
    double cx = cols.denormalize(gx), cy = rows.denormalize(gy);
    if (taps == 1) { // nearest: round half to even
        cx = rint(cx);
        cy = rint(cy);
    }
    const auto fx = float(cols.inside(cx, padding)), fy = float(rows.inside(cy, padding));
    std::int64_t x0 = 0, y0 = 0;
    if (taps == 1) {
        x0 = std::int64_t(fx);
        y0 = std::int64_t(fy);
    } else {
        x0 = std::int64_t(floorf(fx));
        y0 = std::int64_t(floorf(fy));
        if (taps == 2) {
            g.wx[0] = 1 - (fx - float(x0));
            g.wx[1] = fx - float(x0);
            g.wy[0] = 1 - (fy - float(y0));
            g.wy[1] = fy - float(y0);
        } else {
            gridCubic(fx - float(x0), g.wx);
            gridCubic(fy - float(y0), g.wy);
            x0 -= 1;
            y0 -= 1;
        }
    }
    for (int k = 0; k < taps; ++k) {
        g.col[k] = cols.tap(x0 + k, padding);
        g.row[k] = rows.tap(y0 + k, padding);
    }
    return g;
}

// The sample of one image plane (`width` columns) at a grid point: each row first, then across rows.
MEMPLAN_GRID_HD inline float gridSum(const GridPoint& g, const float* plane, std::int64_t width)
{
    float sum = 0;
    for (int i = 0; i < g.taps; ++i) {
        float line = 0;
        if (g.row[i] >= 0)
            for (int j = 0; j < g.taps; ++j)
                line += g.wx[j] * (g.col[j] >= 0 ? plane[g.row[i] * width + g.col[j]] : 0.0f);
        sum += g.wy[i] * line;
    }
    return sum;
}

} // namespace core::exec
