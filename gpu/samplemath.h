// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// GridSample's per-element math on the device, as the CPU kernel computes it
// (core/exec/kernels_sample.cpp, after the ONNX reference and PyTorch's grid_sampler): the grid's
// (x, y) denormalised in double, moved inside the borders by the padding mode, then interpolated
// one axis after the other (each row first, then across the rows), each tap read through the
// padding mode again. Compiles for the host too (tests/tst_gpumath.cpp).

#include "elementmath.h"

namespace gpu::kernels {

enum class GridPadding { Zeros, Border, Reflection };

// X [N, C, H, W] sampled at grid [N, Hout, Wout, 2] into Y [N, C, Hout, Wout].
struct GridSampleShape {
    std::int64_t images = 0, channels = 0, height = 0, width = 0, outHeight = 0, outWidth = 0;
    int taps = 2; // 1 nearest, 2 bilinear, 4 bicubic
    GridPadding padding = GridPadding::Zeros;
    bool alignCorners = false;
};

// Reflects x by the nearer border until it lies inside [lo, hi].
MEMPLAN_HD inline double gridReflect(double x, double lo, double hi)
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
    std::int64_t size;
    bool align;

    MEMPLAN_HD double lo() const { return align ? 0.0 : -0.5; }
    MEMPLAN_HD double hi() const { return align ? double(size) - 1.0 : double(size) - 0.5; }
    MEMPLAN_HD double denormalize(double v) const { return align ? (v + 1) / 2.0 * double(size - 1) : ((v + 1) * double(size) - 1) / 2.0; }
    // The coordinate moved inside the borders as the padding mode says (zeros leaves it).
    MEMPLAN_HD double inside(double x, GridPadding padding) const
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
    MEMPLAN_HD std::int64_t tap(std::int64_t i, GridPadding padding) const
    {
        if (padding == GridPadding::Zeros)
            return i >= 0 && i < size ? i : -1;
        const std::int64_t at = padding == GridPadding::Border ? i : std::int64_t(gridReflect(double(i), lo(), hi()));
        return at < 0 ? 0 : at > size - 1 ? size - 1 : at;
    }
};

// Keys' cubic convolution weights (a = -0.75) of the four taps around fraction t.
MEMPLAN_HD inline void gridCubic(float t, float c[4])
{
    constexpr float a = -0.75f;
    t = fabsf(t);
    c[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
    c[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    c[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
    c[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

// Output element i of GridSample.
MEMPLAN_HD inline float gridSampleElement(const GridSampleShape& s, const float* x, const float* grid, std::int64_t i)
{
    const std::int64_t plane = s.outHeight * s.outWidth;
    const std::int64_t p = i % plane, ch = (i / plane) % s.channels, b = i / (plane * s.channels);
    const GridAxis rows { s.height, s.alignCorners }, cols { s.width, s.alignCorners };
    const float* xy = grid + (b * plane + p) * 2;
    double cx = cols.denormalize(xy[0]), cy = rows.denormalize(xy[1]);
    if (s.taps == 1) { // nearest: round half to even
        cx = rint(cx);
        cy = rint(cy);
    }
    const auto fx = float(cols.inside(cx, s.padding)), fy = float(rows.inside(cy, s.padding));
    std::int64_t x0 = 0, y0 = 0;
    float wx[4] = { 1, 0, 0, 0 }, wy[4] = { 1, 0, 0, 0 };
    if (s.taps == 1) {
        x0 = std::int64_t(fx);
        y0 = std::int64_t(fy);
    } else {
        x0 = std::int64_t(floorf(fx));
        y0 = std::int64_t(floorf(fy));
        if (s.taps == 2) {
            wx[0] = 1 - (fx - float(x0));
            wx[1] = fx - float(x0);
            wy[0] = 1 - (fy - float(y0));
            wy[1] = fy - float(y0);
        } else {
            gridCubic(fx - float(x0), wx);
            gridCubic(fy - float(y0), wy);
            x0 -= 1;
            y0 -= 1;
        }
    }
    const float* image = x + (b * s.channels + ch) * s.height * s.width;
    float sum = 0;
    for (int r = 0; r < s.taps; ++r) { // each row first, then across the rows
        const std::int64_t row = rows.tap(y0 + r, s.padding);
        float line = 0;
        if (row >= 0)
            for (int k = 0; k < s.taps; ++k) {
                const std::int64_t col = cols.tap(x0 + k, s.padding);
                line += wx[k] * (col >= 0 ? image[row * s.width + col] : 0.0f);
            }
        sum += wy[r] * line;
    }
    return sum;
}

} // namespace gpu::kernels
