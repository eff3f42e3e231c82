// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "opparams.h"

#include "exec/opattrs.h"

namespace gpu {

using core::DType;
using core::exec::KernelCall;

namespace {

bool floatInOut(const KernelCall& c)
{
    return c.has(0) && c.out.size() == 1 && c.in[0].dtype == DType::Float32 && c.out[0].dtype == DType::Float32
        && c.in[0].rank() == c.out[0].rank() && c.in[0].rank() >= 1 && c.in[0].rank() <= kernels::kMaxRank;
}

} // namespace

bool padShape(const KernelCall& c, kernels::PadShape& s)
{
    core::exec::PadAttrs a;
    if (!floatInOut(c) || !core::exec::padAttrs(c, a))
        return false;
    const auto &x = c.in[0], &y = c.out[0];
    const int rank = x.rank();
    const auto strides = core::exec::stridesOf(x.shape);
    s = {};
    s.rank = rank;
    s.fill = a.fill;
    s.mode = a.mode == core::exec::PadAttrs::Mode::Edge ? kernels::PadMode::Edge
        : a.mode == core::exec::PadAttrs::Mode::Reflect ? kernels::PadMode::Reflect
                                                        : kernels::PadMode::Constant;
    for (int d = 0; d < rank; ++d) {
        const auto u = std::size_t(d);
        // The CPU kernel trusts the graph's output shape; the device checks it matches the pads.
        if (y.shape[u] != x.shape[u] + a.pads[u] + a.pads[u + std::size_t(rank)])
            return false;
        s.inDims[d] = x.shape[u];
        s.inStride[d] = strides[u];
        s.outDims[d] = y.shape[u];
        s.begin[d] = a.pads[u];
    }
    return true;
}

bool resizeShape(const KernelCall& c, kernels::ResizeShape& s)
{
    core::exec::ResizeAttrs a;
    if (!floatInOut(c) || !core::exec::resizeAttrs(c, a))
        return false;
    using Attrs = core::exec::ResizeAttrs;
    const auto &x = c.in[0], &y = c.out[0];
    const auto strides = core::exec::stridesOf(x.shape);
    s = {};
    s.rank = x.rank();
    s.mode = a.mode == Attrs::Mode::Linear ? kernels::ResizeMode::Linear : kernels::ResizeMode::Nearest;
    switch (a.transform) {
    case Attrs::Transform::HalfPixel: s.transform = kernels::ResizeTransform::HalfPixel; break;
    case Attrs::Transform::PytorchHalfPixel: s.transform = kernels::ResizeTransform::PytorchHalfPixel; break;
    case Attrs::Transform::AlignCorners: s.transform = kernels::ResizeTransform::AlignCorners; break;
    case Attrs::Transform::Asymmetric: s.transform = kernels::ResizeTransform::Asymmetric; break;
    }
    switch (a.rounding) {
    case Attrs::Rounding::Floor: s.rounding = kernels::ResizeRounding::Floor; break;
    case Attrs::Rounding::Ceil: s.rounding = kernels::ResizeRounding::Ceil; break;
    case Attrs::Rounding::RoundPreferCeil: s.rounding = kernels::ResizeRounding::RoundPreferCeil; break;
    case Attrs::Rounding::RoundPreferFloor: s.rounding = kernels::ResizeRounding::RoundPreferFloor; break;
    }
    for (int d = 0; d < s.rank; ++d) {
        const auto u = std::size_t(d);
        if (x.shape[u] <= 0)
            return false;
        s.inDims[d] = x.shape[u];
        s.outDims[d] = y.shape[u];
        s.inStride[d] = strides[u];
        s.scale[d] = a.scale[u];
        s.length[d] = a.givenScales ? float(x.shape[u]) * a.scale[u] : float(y.shape[u]);
        s.interpolate[d] = a.mode == Attrs::Mode::Linear && x.shape[u] != y.shape[u];
    }
    return true;
}

bool reduceMeanShape(const KernelCall& c, kernels::ReduceShape& s)
{
    if (!c.has(0) || c.out.size() != 1 || c.in[0].dtype != DType::Float32 || c.out[0].dtype != DType::Float32 || c.in[0].rank() < 1
        || c.in[0].rank() > kernels::kMaxRank)
        return false;
    std::vector<bool> reduced;
    bool noop = false;
    core::exec::reduceAxes(c, reduced, noop);
    const auto& x = c.in[0];
    const auto strides = core::exec::stridesOf(x.shape);
    s = {};
    s.rank = x.rank();
    std::int64_t kept = 1;
    for (int d = 0; d < s.rank; ++d) {
        const auto u = std::size_t(d);
        s.dims[d] = x.shape[u];
        s.stride[d] = strides[u];
        s.reduced[d] = reduced[u]; // noop: nothing reduced, every mean is of one element
        if (reduced[u])
            s.group *= x.shape[u];
        else
            kept *= x.shape[u];
    }
    return kept == c.out[0].count && s.group > 0;
}

bool transposedConvShape(const KernelCall& c, kernels::TransposedConv& s)
{
    if (!c.allFloat() || !c.has(0) || !c.has(1) || c.out.size() != 1)
        return false;
    const auto &x = c.in[0], &w = c.in[1], &y = c.out[0];
    core::exec::ConvGeometry g;
    if (!core::exec::convGeometry(c, x, w, y, true, g))
        return false;
    const std::int64_t groups = c.attrInt("group", 1);
    const std::int64_t n = x.shape[0], cin = x.shape[1], m = y.shape[1];
    if (groups <= 0 || cin % groups || m % groups || w.shape[0] != cin || w.shape[1] * groups != m || y.shape[0] != n)
        return false;
    if (c.has(2) && c.in[2].count != m)
        return false; // the CPU kernel ignores such a bias; leave it to the CPU
    if (g.strideH < 1 || g.strideW < 1)
        return false;
    s = {};
    s.batch = n; s.inChannels = cin; s.outChannels = m; s.groups = groups;
    s.inH = g.inH; s.inW = g.inW; s.outH = g.outH; s.outW = g.outW; s.kH = g.kH; s.kW = g.kW;
    s.strideH = g.strideH; s.strideW = g.strideW; s.dilH = g.dilH; s.dilW = g.dilW; s.padTop = g.padTop; s.padLeft = g.padLeft;
    return true;
}

} // namespace gpu
