// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/opattrs.h"

#include <algorithm>

namespace core::exec {

bool convGeometry(const KernelCall& c, const TensorView& x, const TensorView& w, const TensorView& y, bool transposed, ConvGeometry& g)
{
    const int spatial = x.rank() - 2;
    if (spatial < 1 || spatial > 3 || w.rank() != x.rank() || y.rank() != x.rank())
        return false;
    const auto strides = c.attrIntsOr("strides", 1, spatial), dil = c.attrIntsOr("dilations", 1, spatial);
    auto pads = c.attrIntsOr("pads", 0, 2 * spatial);
    const auto autoPad = c.attrText("auto_pad", "NOTSET");
    Shape in(x.shape.begin() + 2, x.shape.end()), out(y.shape.begin() + 2, y.shape.end()), k(w.shape.begin() + 2, w.shape.end());
    const bool explicitOutput = transposed && c.attrInts("output_shape");
    if (autoPad == "VALID")
        std::fill(pads.begin(), pads.end(), 0);
    else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER" || explicitOutput) {
        for (int i = 0; i < spatial; ++i) {
            const std::int64_t span = (k[i] - 1) * dil[i] + 1;
            std::int64_t total = transposed ? strides[i] * (in[i] - 1) + c.attrIntsOr("output_padding", 0, spatial)[i] + span - out[i]
                                            : (out[i] - 1) * strides[i] + span - in[i];
            total = std::max<std::int64_t>(total, 0);
            // Conv: SAME_UPPER puts the extra pixel at the end. ConvTranspose: at the end for
            // SAME_UPPER, at the start otherwise (ONNX spec).
            const bool extraAtEnd = autoPad == "SAME_UPPER";
            pads[i] = extraAtEnd ? total / 2 : total - total / 2;
            pads[i + spatial] = total - pads[i];
        }
    } else if (autoPad != "NOTSET")
        return false;
    g = {};
    g.spatial = spatial;
    // Width is the last spatial dimension, height the one before, depth the first of three.
    const auto set = [&](int i, std::int64_t& inLen, std::int64_t& outLen, std::int64_t& kLen, std::int64_t& stride, std::int64_t& dilation,
                         std::int64_t& pad) {
        inLen = in[i]; outLen = out[i]; kLen = k[i]; stride = strides[i]; dilation = dil[i]; pad = pads[i];
    };
    set(spatial - 1, g.inW, g.outW, g.kW, g.strideW, g.dilW, g.padLeft);
    if (spatial >= 2)
        set(spatial - 2, g.inH, g.outH, g.kH, g.strideH, g.dilH, g.padTop);
    if (spatial == 3)
        set(0, g.inD, g.outD, g.kD, g.strideD, g.dilD, g.padFront);
    return true;
}

bool depthSpaceAttrs(const KernelCall& c, DepthSpace& d)
{
    if (!c.op || !c.has(0) || c.out.size() != 1)
        return false;
    const auto &x = c.in[0], &y = c.out[0];
    d = {};
    d.toSpace = c.op->type == "DepthToSpace";
    d.block = c.attrInt("blocksize", 0);
    const auto mode = c.attrText("mode", "DCR");
    d.crd = d.toSpace && mode == "CRD";
    if (x.rank() != 4 || y.rank() != 4 || x.dtype != y.dtype || d.block <= 0 || (d.toSpace && mode != "DCR" && mode != "CRD"))
        return false;
    const auto& depth = d.toSpace ? x.shape : y.shape;
    const auto& space = d.toSpace ? y.shape : x.shape;
    d.n = depth[0];
    d.channels = space[1];
    d.height = depth[2];
    d.width = depth[3];
    return space[0] == d.n && depth[1] == d.channels * d.block * d.block && space[2] == d.height * d.block && space[3] == d.width * d.block;
}

bool padAttrs(const KernelCall& c, PadAttrs& a)
{
    const int rank = c.in[0].rank();
    if (c.has(3))
        return false;
    a.pads.clear();
    if (c.has(1))
        for (std::int64_t i = 0; i < c.in[1].count; ++i)
            a.pads.push_back(intAt(c.in[1], i));
    else if (const auto* p = c.attrInts("pads"))
        a.pads = *p;
    if (int(a.pads.size()) != 2 * rank)
        return false;
    const auto mode = c.attrText("mode", "constant");
    if (mode == "constant")
        a.mode = PadAttrs::Mode::Constant;
    else if (mode == "edge")
        a.mode = PadAttrs::Mode::Edge;
    else if (mode == "reflect")
        a.mode = PadAttrs::Mode::Reflect;
    else
        return false;
    a.fill = c.attrFloat("value", 0.0f);
    if (c.has(2) && c.in[2].dtype == DType::Float32 && c.in[2].count == 1)
        a.fill = c.in[2].f32()[0];
    return true;
}

bool resizeAttrs(const KernelCall& c, ResizeAttrs& a)
{
    const auto &x = c.in[0], &y = c.out[0];
    if (x.rank() != y.rank() || x.rank() == 0 || c.attrInt("antialias", 0) != 0 || c.attrInts("axes"))
        return false;
    const bool upsample = c.op->type == "Upsample";
    const auto mode = c.attrText("mode", "nearest");
    const auto transform = c.attrText("coordinate_transformation_mode", upsample ? "asymmetric" : "half_pixel");
    const auto rounding = upsample ? std::string("floor") : c.attrText("nearest_mode", "round_prefer_floor");
    if (mode == "nearest")
        a.mode = ResizeAttrs::Mode::Nearest;
    else if (mode == "linear")
        a.mode = ResizeAttrs::Mode::Linear;
    else if (mode == "cubic" && !upsample)
        a.mode = ResizeAttrs::Mode::Cubic;
    else
        return false;
    a.cubicA = c.attrFloat("cubic_coeff_a", -0.75f);
    a.excludeOutside = c.attrInt("exclude_outside", 0) != 0;
    a.extrapolation = c.attrFloat("extrapolation_value", 0.0f);
    if (transform == "half_pixel")
        a.transform = ResizeAttrs::Transform::HalfPixel;
    else if (transform == "pytorch_half_pixel")
        a.transform = ResizeAttrs::Transform::PytorchHalfPixel;
    else if (transform == "align_corners")
        a.transform = ResizeAttrs::Transform::AlignCorners;
    else if (transform == "asymmetric")
        a.transform = ResizeAttrs::Transform::Asymmetric;
    else if (transform == "tf_half_pixel_for_nn")
        a.transform = ResizeAttrs::Transform::TfHalfPixelForNn;
    else if (transform == "tf_crop_and_resize")
        a.transform = ResizeAttrs::Transform::TfCropAndResize;
    else
        return false;
    if (rounding == "floor")
        a.rounding = ResizeAttrs::Rounding::Floor;
    else if (rounding == "ceil")
        a.rounding = ResizeAttrs::Rounding::Ceil;
    else if (rounding == "round_prefer_ceil")
        a.rounding = ResizeAttrs::Rounding::RoundPreferCeil;
    else if (rounding == "round_prefer_floor")
        a.rounding = ResizeAttrs::Rounding::RoundPreferFloor;
    else if (a.mode == ResizeAttrs::Mode::Nearest)
        return false;
    const int rank = x.rank();
    // Opset 10 and Upsample: (X, scales); opset 11+: (X, roi, scales, sizes).
    const TensorView* scalesIn = c.in.size() == 2 ? &c.in[1] : (c.has(2) ? &c.in[2] : nullptr);
    a.givenScales = scalesIn && scalesIn->present() && scalesIn->count == rank && scalesIn->dtype == DType::Float32;
    a.scale.assign(std::size_t(rank), 0.0f);
    for (int d = 0; d < rank; ++d)
        a.scale[std::size_t(d)] = a.givenScales ? scalesIn->f32()[d] : float(y.shape[std::size_t(d)]) / float(x.shape[std::size_t(d)]);
    if (a.transform == ResizeAttrs::Transform::TfCropAndResize) {
        if (!(c.in.size() > 2 && c.has(1) && c.in[1].dtype == DType::Float32 && c.in[1].count == 2 * rank))
            return false;
        a.roi.assign(c.in[1].f32(), c.in[1].f32() + 2 * rank);
    }
    return true;
}

void reduceAxes(const KernelCall& c, std::vector<bool>& reduced, bool& noop)
{
    const int rank = c.in[0].rank();
    reduced.assign(std::size_t(rank), false);
    noop = false;
    Shape axes;
    if (const auto* a = c.attrInts("axes"))
        axes = *a;
    else if (c.has(1))
        for (std::int64_t i = 0; i < c.in[1].count; ++i)
            axes.push_back(intAt(c.in[1], i));
    if (axes.empty()) {
        noop = c.attrInt("noop_with_empty_axes", 0) != 0;
        if (!noop)
            std::fill(reduced.begin(), reduced.end(), true);
    }
    for (auto a : axes)
        reduced[std::size_t(normAxis(a, rank))] = true;
}

} // namespace core::exec
