// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// GridSample on 2-D images (X [N, C, H, W], grid [N, Hout, Wout, 2] holding (x, y) in [-1, 1]):
// nearest, bilinear and bicubic (Keys, a = -0.75), padding zeros, border or reflection, with or
// without align_corners, as the ONNX reference computes it (which follows PyTorch's grid_sampler):
// coordinates are denormalised, moved inside the borders by the padding mode, then interpolated one
// axis after the other, each tap read through the padding mode again. Float32 only; volumetric
// (5-D) inputs are refused.
#include "exec/kernels.h"

#include <algorithm>
#include <cmath>

namespace core::exec {

namespace {

enum class Padding { Zeros, Border, Reflection };

// Reflects x by the nearer border until it lies inside [lo, hi].
double reflect(double x, double lo, double hi)
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

struct Axis {
    std::int64_t size = 0;
    double lo = 0, hi = 0; // borders: [0, size-1] aligned to corners, else [-0.5, size-0.5]

    Axis(std::int64_t n, bool alignCorners)
        : size(n)
        , lo(alignCorners ? 0.0 : -0.5)
        , hi(alignCorners ? double(n) - 1.0 : double(n) - 0.5)
    {
    }
    double denormalize(double v, bool alignCorners) const
    {
        return alignCorners ? (v + 1) / 2.0 * double(size - 1) : ((v + 1) * double(size) - 1) / 2.0;
    }
    // The coordinate moved inside the borders as the padding mode says (zeros leaves it).
    double inside(double x, Padding padding) const
    {
        if (x >= lo && x <= hi)
            return x;
        if (padding == Padding::Border)
            return std::clamp(x, 0.0, double(size - 1));
        if (padding == Padding::Reflection)
            return reflect(x, lo, hi);
        return x;
    }
    // The index a tap at i reads, or -1 for a zero (zeros padding outside the image).
    std::int64_t tap(std::int64_t i, Padding padding) const
    {
        if (padding == Padding::Zeros)
            return i >= 0 && i < size ? i : -1;
        if (padding == Padding::Border)
            return std::clamp<std::int64_t>(i, 0, size - 1);
        return std::clamp<std::int64_t>(std::int64_t(reflect(double(i), lo, hi)), 0, size - 1);
    }
};

void cubicCoefficients(float t, float c[4])
{
    constexpr float a = -0.75f;
    t = std::fabs(t);
    c[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
    c[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    c[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
    c[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

bool gridSample(const KernelCall& c)
{
    const TensorView &x = c.in[0], &grid = c.in[1], &y = c.out[0];
    if (!c.allFloat() || x.rank() != 4 || grid.rank() != 4 || y.rank() != 4 || grid.shape[3] != 2 || grid.shape[0] != x.shape[0]
        || y.shape[0] != x.shape[0] || y.shape[1] != x.shape[1] || y.shape[2] != grid.shape[1] || y.shape[3] != grid.shape[2]
        || x.shape[2] < 1 || x.shape[3] < 1)
        return false;
    const std::string mode = c.attrText("mode", "bilinear");
    const std::string pad = c.attrText("padding_mode", "zeros");
    int taps = 0; // 1 nearest, 2 linear, 4 cubic
    if (mode == "nearest")
        taps = 1;
    else if (mode == "bilinear" || mode == "linear")
        taps = 2;
    else if (mode == "bicubic" || mode == "cubic")
        taps = 4;
    Padding padding = Padding::Zeros;
    if (pad == "border")
        padding = Padding::Border;
    else if (pad == "reflection")
        padding = Padding::Reflection;
    else if (pad != "zeros")
        return false;
    if (taps == 0)
        return false;
    const bool align = c.attrInt("align_corners", 0) != 0;
    const std::int64_t n = x.shape[0], channels = x.shape[1], h = x.shape[2], w = x.shape[3];
    const std::int64_t hOut = y.shape[2], wOut = y.shape[3];
    const Axis rows(h, align), cols(w, align);
    const float* in = x.f32();
    const float* g = grid.f32();
    float* out = y.f32();
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t p = 0; p < hOut * wOut; ++p) {
            const float* xy = g + (b * hOut * wOut + p) * 2;
            double cx = cols.denormalize(xy[0], align), cy = rows.denormalize(xy[1], align);
            if (taps == 1) { // nearest: round half to even, as std::nearbyint
                cx = std::nearbyint(cx);
                cy = std::nearbyint(cy);
            }
            const auto fx = float(cols.inside(cx, padding)), fy = float(rows.inside(cy, padding));
            std::int64_t x0 = 0, y0 = 0;
            float wx[4] = { 1, 0, 0, 0 }, wy[4] = { 1, 0, 0, 0 };
            if (taps == 1) {
                x0 = std::int64_t(fx);
                y0 = std::int64_t(fy);
            } else {
                x0 = std::int64_t(std::floor(fx));
                y0 = std::int64_t(std::floor(fy));
                if (taps == 2) {
                    wx[0] = 1 - (fx - float(x0));
                    wx[1] = fx - float(x0);
                    wy[0] = 1 - (fy - float(y0));
                    wy[1] = fy - float(y0);
                } else {
                    cubicCoefficients(fx - float(x0), wx);
                    cubicCoefficients(fy - float(y0), wy);
                    x0 -= 1;
                    y0 -= 1;
                }
            }
            std::int64_t colAt[4], rowAt[4];
            for (int k = 0; k < taps; ++k) {
                colAt[k] = cols.tap(x0 + k, padding);
                rowAt[k] = rows.tap(y0 + k, padding);
            }
            for (std::int64_t ch = 0; ch < channels; ++ch) {
                const float* plane = in + (b * channels + ch) * h * w;
                float sum = 0;
                for (int i = 0; i < taps; ++i) { // each row first, then across the rows
                    float row = 0;
                    if (rowAt[i] >= 0)
                        for (int j = 0; j < taps; ++j)
                            row += wx[j] * (colAt[j] >= 0 ? plane[rowAt[i] * w + colAt[j]] : 0.0f);
                    sum += wy[i] * row;
                }
                out[((b * channels + ch) * hOut * wOut) + p] = sum;
            }
        }
    return true;
}

} // namespace

void addSampleKernels(std::map<std::string, Kernel>& t) { t["GridSample"] = gridSample; }

} // namespace core::exec
