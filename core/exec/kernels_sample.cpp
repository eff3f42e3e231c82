// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// GridSample on 2-D images (X [N, C, H, W], grid [N, Hout, Wout, 2] holding (x, y) in [-1, 1]):
// nearest, bilinear and bicubic (Keys, a = -0.75), padding zeros, border or reflection, with or
// without align_corners, as the ONNX reference computes it (which follows PyTorch's grid_sampler):
// coordinates are denormalised, moved inside the borders by the padding mode, then interpolated one
// axis after the other, each tap read through the padding mode again. Float32 only; volumetric
// (5-D) inputs are refused.
// RoiAlign (Mask R-CNN's pooling of each region of interest to a fixed grid) as ONNX Runtime and
// the ONNX reference compute it: float32, avg or max, half_pixel or output_half_pixel.
#include "exec/opattrs.h"

#include <algorithm>
#include <cmath>

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

// One bilinear sample of a H x W plane for RoiAlign: its four taps' offsets and weights; all weights
// 0 when the point lies more than one pixel outside the plane.
struct RoiTap {
    std::int64_t at[4] {};
    float weight[4] {};
};

RoiTap roiTap(float y, float x, std::int64_t h, std::int64_t w)
{
    RoiTap t;
    if (y < -1.0f || y > float(h) || x < -1.0f || x > float(w))
        return t;
    y = std::max(y, 0.0f);
    x = std::max(x, 0.0f);
    std::int64_t y0 = std::int64_t(y), x0 = std::int64_t(x), y1 = y0 + 1, x1 = x0 + 1;
    if (y0 >= h - 1) {
        y0 = y1 = h - 1;
        y = float(y0);
    }
    if (x0 >= w - 1) {
        x0 = x1 = w - 1;
        x = float(x0);
    }
    const float ly = y - float(y0), lx = x - float(x0), hy = 1.0f - ly, hx = 1.0f - lx;
    t.at[0] = y0 * w + x0;
    t.at[1] = y0 * w + x1;
    t.at[2] = y1 * w + x0;
    t.at[3] = y1 * w + x1;
    t.weight[0] = hy * hx;
    t.weight[1] = hy * lx;
    t.weight[2] = ly * hx;
    t.weight[3] = ly * lx;
    return t;
}

// RoiAlign(X [N, C, H, W], rois [R, 4] as (x1, y1, x2, y2), batch_indices [R] int64) -> [R, C,
// output_height, output_width]. Each output cell samples a grid of sampling_ratio^2 points (0: as
// many as the cell is pixels wide and high, at least one) and averages them (avg), or takes the
// largest weighted tap of any of them (max, ONNX Runtime's definition). A batch index outside
// [0, N) is refused.
bool roiAlign(const KernelCall& c)
{
    if (c.in.size() != 3 || !c.has(0) || !c.has(1) || !c.has(2) || c.out.size() != 1)
        return false;
    const TensorView &x = c.in[0], &rois = c.in[1], &batch = c.in[2], &y = c.out[0];
    if (x.dtype != DType::Float32 || rois.dtype != DType::Float32 || y.dtype != DType::Float32 || batch.dtype != DType::Int64)
        return false;
    if (x.rank() != 4 || rois.rank() != 2 || rois.shape[1] != 4 || batch.count != rois.shape[0] || y.rank() != 4)
        return false;
    const std::int64_t n = x.shape[0], channels = x.shape[1], h = x.shape[2], w = x.shape[3], count = rois.shape[0];
    const std::int64_t outH = c.attrInt("output_height", 1), outW = c.attrInt("output_width", 1);
    if (y.shape != Shape { count, channels, outH, outW } || h < 1 || w < 1)
        return false;
    const std::string mode = c.attrText("mode", "avg"), transform = c.attrText("coordinate_transformation_mode", "half_pixel");
    if ((mode != "avg" && mode != "max") || (transform != "half_pixel" && transform != "output_half_pixel"))
        return false;
    const bool halfPixel = transform == "half_pixel", average = mode == "avg";
    const float scale = c.attrFloat("spatial_scale", 1.0f), offset = halfPixel ? 0.5f : 0.0f;
    const std::int64_t ratio = c.attrInt("sampling_ratio", 0);
    for (std::int64_t r = 0; r < count; ++r)
        if (batch.i64()[r] < 0 || batch.i64()[r] >= n)
            return false;
    std::vector<RoiTap> taps;
    for (std::int64_t r = 0; r < count; ++r) {
        const float* box = rois.f32() + r * 4;
        const float x1 = box[0] * scale - offset, y1 = box[1] * scale - offset;
        float roiW = box[2] * scale - offset - x1, roiH = box[3] * scale - offset - y1;
        if (!halfPixel) { // the old behaviour: every region at least one pixel
            roiW = std::max(roiW, 1.0f);
            roiH = std::max(roiH, 1.0f);
        }
        const float binH = roiH / float(outH), binW = roiW / float(outW);
        const std::int64_t gridH = ratio > 0 ? ratio : std::int64_t(std::ceil(roiH / float(outH)));
        const std::int64_t gridW = ratio > 0 ? ratio : std::int64_t(std::ceil(roiW / float(outW)));
        const float samples = float(std::max<std::int64_t>(gridH * gridW, 1));
        taps.clear(); // per output cell, its grid's samples (shared by every channel)
        for (std::int64_t ph = 0; ph < outH; ++ph)
            for (std::int64_t pw = 0; pw < outW; ++pw)
                for (std::int64_t iy = 0; iy < gridH; ++iy)
                    for (std::int64_t ix = 0; ix < gridW; ++ix)
                        taps.push_back(roiTap(y1 + float(ph) * binH + (float(iy) + 0.5f) * binH / float(gridH),
                            x1 + float(pw) * binW + (float(ix) + 0.5f) * binW / float(gridW), h, w));
        const std::int64_t perCell = std::max<std::int64_t>(gridH, 0) * std::max<std::int64_t>(gridW, 0);
        for (std::int64_t ch = 0; ch < channels; ++ch) {
            const float* plane = x.f32() + (batch.i64()[r] * channels + ch) * h * w;
            float* out = y.f32() + (r * channels + ch) * outH * outW;
            for (std::int64_t cell = 0; cell < outH * outW; ++cell) {
                float acc = 0.0f;
                for (std::int64_t s = 0; s < perCell; ++s) {
                    const RoiTap& t = taps[std::size_t(cell * perCell + s)];
                    if (average)
                        acc += t.weight[0] * plane[t.at[0]] + t.weight[1] * plane[t.at[1]] + t.weight[2] * plane[t.at[2]]
                            + t.weight[3] * plane[t.at[3]];
                    else {
                        const float v = std::max({ t.weight[0] * plane[t.at[0]], t.weight[1] * plane[t.at[1]], t.weight[2] * plane[t.at[2]],
                            t.weight[3] * plane[t.at[3]] });
                        acc = s == 0 ? v : std::max(acc, v);
                    }
                }
                out[cell] = average ? acc / samples : acc;
            }
        }
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

void addSampleKernels(std::map<std::string, Kernel>& t)
{
    t["GridSample"] = gridSample;
    t["RoiAlign"] = roiAlign;
}

} // namespace core::exec
