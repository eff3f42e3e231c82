// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Attribute and shape-argument readers of Pad, Resize, ReduceMean and ConvTranspose, shared by the
// CPU kernels and the CUDA executor so that both read one op the same way. Each returns false when
// the configuration is not supported (the caller then does not run the op); shape-argument inputs
// (pads, axes, scales) are read from the call's views, so they must point at host memory.

#include "exec/gridsample.h"
#include "exec/kernels.h"

#include <vector>

namespace core::exec {

// Spatial parameters of a 1-D, 2-D or 3-D convolution: depth (D), height (H) and width (W), the
// dimensions a lower-dimensional one lacks of length 1.
struct ConvGeometry {
    int spatial = 2;
    std::int64_t inD = 1, inH = 1, inW = 1, outD = 1, outH = 1, outW = 1, kD = 1, kH = 1, kW = 1;
    std::int64_t strideD = 1, strideH = 1, strideW = 1, dilD = 1, dilH = 1, dilW = 1, padFront = 0, padTop = 0, padLeft = 0;

    std::int64_t inPlane() const { return inD * inH * inW; }
    std::int64_t outPlane() const { return outD * outH * outW; }
    std::int64_t window() const { return kD * kH * kW; }
};
// Reads strides/dilations/pads/auto_pad of Conv (x -> y with weights w) or, when `transposed`,
// ConvTranspose (output_padding and output_shape enter the padding).
bool convGeometry(const KernelCall& c, const TensorView& x, const TensorView& w, const TensorView& y, bool transposed, ConvGeometry& g);

// GridSample on 4-D float32 X [N, C, H, W] and grid [N, Hout, Wout, 2] into Y [N, C, Hout, Wout]:
// mode nearest, bilinear (linear) or bicubic (cubic) as 1, 2 or 4 taps; zeros, border or reflection
// padding; align_corners. False for any other call (5-D among them).
struct GridSampleAttrs {
    int taps = 2;
    GridPadding padding = GridPadding::Zeros;
    bool alignCorners = false;
};
bool gridSampleAttrs(const KernelCall& c, GridSampleAttrs& a);

// Pad: pads (begins then ends, 2 * rank) from input 1 (opset 11+) or the `pads` attribute; the
// constant from input 2 (float32 scalar) or the `value` attribute. The axes input is not supported.
struct PadAttrs {
    enum class Mode { Constant, Edge, Reflect };
    Mode mode = Mode::Constant;
    Shape pads;
    float fill = 0;
};
bool padAttrs(const KernelCall& c, PadAttrs& a);

// Resize/Upsample (nearest, linear, cubic): the coordinate transformation and nearest rounding,
// and the per-axis scales from the scales input (opset 10 and Upsample: input 1; opset 11+: input
// 2) when it holds rank floats, else output/input extents; tf_crop_and_resize's region (input 1).
struct ResizeAttrs {
    enum class Mode { Nearest, Linear, Cubic };
    enum class Transform { HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNn, TfCropAndResize };
    enum class Rounding { Floor, Ceil, RoundPreferCeil, RoundPreferFloor };
    Mode mode = Mode::Nearest;
    Transform transform = Transform::HalfPixel;
    Rounding rounding = Rounding::RoundPreferFloor;
    std::vector<float> scale;
    bool givenScales = false; // the resized length is then in * scale (not rounded), as ONNX says
    float cubicA = -0.75f;    // cubic_coeff_a
    bool excludeOutside = false; // cubic taps outside the input get weight 0, the rest renormalised
    std::vector<float> roi;      // tf_crop_and_resize: starts then ends, as fractions of each axis
    float extrapolation = 0.0f;  // tf_crop_and_resize: the value outside the input
};
bool resizeAttrs(const KernelCall& c, ResizeAttrs& a);

// DepthToSpace (DCR or CRD mode) and SpaceToDepth over [N, C, H, W]: the depth side is
// [n, channels * block², height, width], the space side [n, channels, height * block, width * block].
// False for another rank or mode, element types that differ, or shapes that do not fit.
struct DepthSpace {
    std::int64_t n = 0, channels = 0, height = 0, width = 0, block = 0;
    bool toSpace = true, crd = false;
};
bool depthSpaceAttrs(const KernelCall& c, DepthSpace& d);

// Reduce*: which axes of input 0 are reduced (axes attribute, else input 1; none given: all).
// `noop`: none given and noop_with_empty_axes set, so the output is the input.
void reduceAxes(const KernelCall& c, std::vector<bool>& reduced, bool& noop);

} // namespace core::exec
