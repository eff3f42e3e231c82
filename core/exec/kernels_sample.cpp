// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// GridSample on 2-D images (X [N, C, H, W], grid [N, Hout, Wout, 2] holding (x, y) in [-1, 1]):
// nearest, bilinear and bicubic (Keys, a = -0.75), padding zeros, border or reflection, with or
// without align_corners, as the ONNX reference computes it (which follows PyTorch's grid_sampler):
// coordinates are denormalised, moved inside the borders by the padding mode, then interpolated one
// axis after the other, each tap read through the padding mode again. Float32 only; volumetric
// (5-D) inputs are refused.
#include "exec/opattrs.h"

namespace core::exec {

namespace {

bool gridSample(const KernelCall& c)
{
    GridSampleAttrs a;
    if (!gridSampleAttrs(c, a))
        return false;
    const TensorView &x = c.in[0], &grid = c.in[1], &y = c.out[0];
    const std::int64_t n = x.shape[0], channels = x.shape[1], h = x.shape[2], w = x.shape[3];
    const std::int64_t hOut = y.shape[2], wOut = y.shape[3];
    const GridAxis rows { h, a.alignCorners }, cols { w, a.alignCorners };
    const float* g = grid.f32();
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t p = 0; p < hOut * wOut; ++p) {
            const float* xy = g + (b * hOut * wOut + p) * 2;
            const GridPoint point = gridPoint(rows, cols, a.taps, a.padding, xy[0], xy[1]);
            for (std::int64_t ch = 0; ch < channels; ++ch)
                y.f32()[((b * channels + ch) * hOut * wOut) + p] = gridSum(point, x.f32() + (b * channels + ch) * h * w, w);
        }
    return true;
}

} // namespace

bool gridSampleAttrs(const KernelCall& c, GridSampleAttrs& a)
{
    if (c.in.size() < 2 || !c.has(0) || !c.has(1) || c.out.size() != 1 || !c.allFloat())
        return false;
    const TensorView &x = c.in[0], &grid = c.in[1], &y = c.out[0];
    if (x.rank() != 4 || grid.rank() != 4 || y.rank() != 4 || grid.shape[3] != 2 || grid.shape[0] != x.shape[0] || y.shape[0] != x.shape[0]
        || y.shape[1] != x.shape[1] || y.shape[2] != grid.shape[1] || y.shape[3] != grid.shape[2] || x.shape[2] < 1 || x.shape[3] < 1)
        return false;
    const std::string mode = c.attrText("mode", "bilinear"), pad = c.attrText("padding_mode", "zeros");
    a = {};
    a.taps = mode == "nearest" ? 1 : mode == "bilinear" || mode == "linear" ? 2 : mode == "bicubic" || mode == "cubic" ? 4 : 0;
    if (pad == "border")
        a.padding = GridPadding::Border;
    else if (pad == "reflection")
        a.padding = GridPadding::Reflection;
    else if (pad != "zeros")
        return false;
    a.alignCorners = c.attrInt("align_corners", 0) != 0;
    return a.taps != 0;
}

void addSampleKernels(std::map<std::string, Kernel>& t) { t["GridSample"] = gridSample; }

} // namespace core::exec
