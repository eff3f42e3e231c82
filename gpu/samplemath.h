// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// GridSample on the device: one thread per output element runs the sampling math the CPU kernel
// runs (core/exec/gridsample.h, compiled here for the GPU), so the two compute the same taps and
// weights. Compiles for the host too (tests/tst_gpumath.cpp).

#include "elementmath.h"

#include "exec/gridsample.h"

namespace gpu::kernels {

// X [N, C, H, W] sampled at grid [N, Hout, Wout, 2] into Y [N, C, Hout, Wout].
struct GridSampleShape {
    std::int64_t images = 0, channels = 0, height = 0, width = 0, outHeight = 0, outWidth = 0;
    int taps = 2; // 1 nearest, 2 bilinear, 4 bicubic
    core::exec::GridPadding padding = core::exec::GridPadding::Zeros;
    bool alignCorners = false;
};

// Output element i of GridSample.
MEMPLAN_HD inline float gridSampleElement(const GridSampleShape& s, const float* x, const float* grid, std::int64_t i)
{
    const std::int64_t plane = s.outHeight * s.outWidth;
    const std::int64_t p = i % plane, ch = (i / plane) % s.channels, b = i / (plane * s.channels);
    const float* xy = grid + (b * plane + p) * 2;
    const auto point = core::exec::gridPoint({ s.height, s.alignCorners }, { s.width, s.alignCorners }, s.taps, s.padding, xy[0], xy[1]);
    return core::exec::gridSum(point, x + (b * s.channels + ch) * s.height * s.width, s.width);
}

} // namespace gpu::kernels
