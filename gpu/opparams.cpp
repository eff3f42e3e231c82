// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "opparams.h"

#include "exec/opattrs.h"
#include "graph/shapemath.h"

#include <algorithm>

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
    // The device kernel interpolates nearest and linear over the four common transformations.
    if (a.mode == Attrs::Mode::Cubic || a.transform == Attrs::Transform::TfHalfPixelForNn
        || a.transform == Attrs::Transform::TfCropAndResize)
        return false;
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
    default: return false;
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

std::optional<kernels::ReduceMode> reduceMode(const std::string& opType)
{
    using M = kernels::ReduceMode;
    static const std::map<std::string, M> modes { { "ReduceMean", M::Mean }, { "ReduceSum", M::Sum }, { "ReduceMax", M::Max },
        { "ReduceMin", M::Min }, { "ReduceProd", M::Prod }, { "ReduceSumSquare", M::SumSquare }, { "ReduceL1", M::L1 },
        { "ReduceL2", M::L2 }, { "ReduceLogSum", M::LogSum }, { "ReduceLogSumExp", M::LogSumExp } };
    const auto it = modes.find(opType);
    return it == modes.end() ? std::nullopt : std::optional(it->second);
}

bool reduceShape(const KernelCall& c, kernels::ReduceShape& s)
{
    const auto mode = c.op ? reduceMode(c.op->type) : std::nullopt;
    if (!mode || !c.has(0) || c.out.size() != 1 || c.in[0].dtype != DType::Float32 || c.out[0].dtype != DType::Float32
        || c.in[0].rank() < 1 || c.in[0].rank() > kernels::kMaxRank)
        return false;
    std::vector<bool> reduced;
    bool noop = false;
    core::exec::reduceAxes(c, reduced, noop);
    if (noop) // nothing reduced: the input itself, as the CPU kernel copies it
        reduced.assign(reduced.size(), false);
    const auto& x = c.in[0];
    const auto strides = core::exec::stridesOf(x.shape);
    s = {};
    s.rank = x.rank();
    s.mode = *mode;
    s.noop = noop;
    std::int64_t kept = 1;
    for (int d = 0; d < s.rank; ++d) {
        const auto u = std::size_t(d);
        s.dims[d] = x.shape[u];
        s.stride[d] = strides[u];
        s.reduced[d] = reduced[u];
        if (reduced[u])
            s.group *= x.shape[u];
        else
            kept *= x.shape[u];
    }
    return kept == c.out[0].count;
}

bool globalMaxPoolShape(const KernelCall& c, kernels::ReduceShape& s)
{
    if (!c.allFloat() || !c.has(0) || c.out.size() != 1 || c.in[0].rank() < 2 || c.in[0].rank() > kernels::kMaxRank)
        return false;
    const auto& x = c.in[0];
    if (c.out[0].count != x.shape[0] * x.shape[1])
        return false;
    const auto strides = core::exec::stridesOf(x.shape);
    s = {};
    s.rank = x.rank();
    s.mode = kernels::ReduceMode::Max;
    for (int d = 0; d < s.rank; ++d) {
        s.dims[d] = x.shape[std::size_t(d)];
        s.stride[d] = strides[std::size_t(d)];
        s.reduced[d] = d >= 2;
        s.group *= d >= 2 ? x.shape[std::size_t(d)] : 1;
    }
    return true;
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
    if (g.strideD < 1 || g.strideH < 1 || g.strideW < 1)
        return false;
    s = {};
    s.batch = n; s.inChannels = cin; s.outChannels = m; s.groups = groups;
    s.inD = g.inD; s.inH = g.inH; s.inW = g.inW; s.outD = g.outD; s.outH = g.outH; s.outW = g.outW; s.kD = g.kD; s.kH = g.kH; s.kW = g.kW;
    s.strideD = g.strideD; s.strideH = g.strideH; s.strideW = g.strideW; s.dilD = g.dilD; s.dilH = g.dilH; s.dilW = g.dilW;
    s.padFront = g.padFront; s.padTop = g.padTop; s.padLeft = g.padLeft;
    return true;
}

bool broadcastShape(const core::exec::TensorView& y, std::initializer_list<const core::exec::TensorView*> operands, kernels::Broadcast& s)
{
    if (y.rank() > kernels::kMaxRank || operands.size() > std::size(s.stride))
        return false;
    s = {};
    s.rank = std::max(1, y.rank());
    int k = -1;
    for (const auto* operand : operands) {
        ++k;
        const auto& x = *operand;
        if (x.rank() > y.rank())
            return false;
        const auto strides = core::exec::stridesOf(x.shape);
        for (int d = 0; d < y.rank(); ++d) {
            const int xd = d - (y.rank() - x.rank());
            const std::int64_t dim = xd >= 0 ? x.shape[xd] : 1;
            if (dim != 1 && dim != y.shape[d])
                return false;
            s.stride[k][d] = dim == 1 ? 0 : strides[xd];
        }
    }
    for (int d = 0; d < y.rank(); ++d)
        s.dims[d] = y.shape[d];
    if (y.rank() == 0)
        s.dims[0] = 1;
    return true;
}

// 1-D, 2-D or 3-D window geometry of Conv and pooling, as the CPU kernels read it.
bool window(const core::exec::KernelCall& c, const core::exec::TensorView& x, const core::exec::TensorView& y, const core::exec::Shape& kernel,
    kernels::Window& w)
{
    const int spatial = x.rank() - 2;
    if (spatial < 1 || spatial > 3 || y.rank() != x.rank() || int(kernel.size()) != spatial)
        return false;
    const core::exec::Shape in(x.shape.begin() + 2, x.shape.end()), out(y.shape.begin() + 2, y.shape.end());
    core::exec::WindowAttrs a;
    if (!core::exec::windowAttrs(c, in, out, kernel, a))
        return false;
    const auto &strides = a.strides, &dil = a.dilations, &pads = a.pads;
    w = {};
    w.width = in.back(); w.outWidth = out.back(); w.kernelW = int(kernel.back()); w.strideW = int(strides.back());
    w.dilationW = int(dil.back()); w.padLeft = int(pads[spatial - 1]); w.padRight = int(pads.back());
    w.height = 1; w.outHeight = 1;
    if (spatial >= 2) {
        const int d = spatial - 2;
        w.height = in[d]; w.outHeight = out[d]; w.kernelH = int(kernel[d]); w.strideH = int(strides[d]);
        w.dilationH = int(dil[d]); w.padTop = int(pads[d]); w.padBottom = int(pads[d + spatial]);
    }
    if (spatial == 3) {
        w.depth = in[0]; w.outDepth = out[0]; w.kernelD = int(kernel[0]); w.strideD = int(strides[0]);
        w.dilationD = int(dil[0]); w.padFront = int(pads[0]); w.padBack = int(pads[3]);
    }
    return true;
}

bool tileParams(const core::exec::KernelCall& c, TileParams& p)
{
    if (c.out.size() != 1 || !c.has(0) || !c.op)
        return false;
    const auto &x = c.in[0], &y = c.out[0];
    const bool expand = c.op->type == "Expand";
    const int rank = y.rank();
    const auto bytes = core::dtypeBytes(x.dtype);
    if ((!expand && c.op->type != "Tile") || x.dtype != y.dtype || rank < 1 || rank > kernels::kMaxRank || x.rank() > rank
        || (!expand && x.rank() != rank) || (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8))
        return false;
    const auto strides = core::exec::stridesOf(x.shape);
    p = {};
    p.rank = rank;
    p.bytes = int(bytes);
    for (int d = 0; d < rank; ++d) {
        const int xd = d - (rank - x.rank()); // Expand aligns x to the right
        const std::int64_t dim = xd >= 0 ? x.shape[std::size_t(xd)] : 1;
        if ((expand && dim != 1 && dim != y.shape[std::size_t(d)]) || (dim <= 0 && y.count > 0))
            return false;
        p.inDims[d] = std::max<std::int64_t>(dim, 1);
        p.inStride[d] = xd >= 0 ? strides[std::size_t(xd)] : 0;
    }
    return true;
}

bool permuteParams(const core::exec::KernelCall& c, PermuteParams& p)
{
    if (c.out.size() != 1 || !c.has(0))
        return false;
    const auto &x = c.in[0], &y = c.out[0];
    const int rank = x.rank();
    const auto bytes = core::dtypeBytes(x.dtype);
    if (x.dtype != y.dtype || x.count != y.count || y.rank() != rank || rank > kernels::kMaxRank || rank < 1 || (bytes != 4 && bytes != 8))
        return false;
    const auto order = core::transposeOrder(c.attrInts("perm"), std::size_t(rank));
    if (!order)
        return false;
    const auto& perm = *order;
    const auto strides = core::exec::stridesOf(x.shape);
    p = {};
    p.rank = rank;
    p.bytes = int(bytes);
    for (int i = 0; i < rank; ++i) {
        const auto axis = perm[std::size_t(i)];
        if (y.shape[std::size_t(i)] != x.shape[std::size_t(axis)])
            return false;
        p.inStride[i] = strides[std::size_t(axis)];
        p.outDims[i] = y.shape[std::size_t(i)];
    }
    return true;
}

bool depthSpaceParams(const core::exec::KernelCall& c, PermuteParams& p)
{
    core::exec::DepthSpace ds;
    if (!core::exec::depthSpaceAttrs(c, ds))
        return false;
    const auto bytes = core::dtypeBytes(c.in[0].dtype);
    if (bytes != 4 && bytes != 8)
        return false;
    const bool toSpace = ds.toSpace;
    const std::int64_t b = ds.block, n = ds.n, ch = ds.channels, h = ds.height, w = ds.width;
    p = {};
    p.rank = 6;
    p.bytes = int(bytes);
    const std::int64_t plane = h * w;
    if (toSpace) { // y as [N, C, H, b, W, b]; x as [N, b, b, C, H, W] (DCR) or [N, C, b, b, H, W] (CRD)
        const bool crd = ds.crd;
        const std::int64_t dims[6] = { n, ch, h, b, w, b };
        const std::int64_t strides[6] = { ch * b * b * plane, crd ? b * b * plane : plane, w, crd ? b * plane : b * ch * plane, 1,
            crd ? plane : ch * plane };
        std::copy(dims, dims + 6, p.outDims);
        std::copy(strides, strides + 6, p.inStride);
    } else { // y as [N, b, b, C, H, W]; x as [N, C, H, b, W, b]
        const std::int64_t dims[6] = { n, b, b, ch, h, w };
        const std::int64_t strides[6] = { ch * b * b * plane, w * b, 1, b * b * plane, b * b * w, b };
        std::copy(dims, dims + 6, p.outDims);
        std::copy(strides, strides + 6, p.inStride);
    }
    return true;
}

bool gatherParams(const core::exec::KernelCall& c, GatherParams& p)
{
    if (!c.has(0) || !c.has(1) || c.out.size() != 1)
        return false;
    const auto &x = c.in[0], &idx = c.in[1], &y = c.out[0];
    const auto bytes = core::dtypeBytes(x.dtype);
    if (x.dtype != y.dtype || x.rank() == 0 || (idx.dtype != core::DType::Int64 && idx.dtype != core::DType::Int32) || (bytes != 4 && bytes != 8))
        return false;
    const int axis = core::exec::normAxis(c.attrInt("axis", 0), x.rank());
    p = {};
    p.bytes = int(bytes);
    for (int i = 0; i < axis; ++i)
        p.outer *= x.shape[std::size_t(i)];
    for (int i = axis + 1; i < x.rank(); ++i)
        p.inner *= x.shape[std::size_t(i)];
    p.dim = x.shape[std::size_t(axis)];
    return p.outer * idx.count * p.inner == y.count && p.dim > 0;
}

bool softmaxParams(const core::exec::KernelCall& c, RowParams& p)
{
    if (!c.allFloat() || !c.has(0) || c.out.size() != 1 || c.in[0].count != c.out[0].count || c.in[0].rank() == 0)
        return false;
    const auto& x = c.in[0];
    const int axis = core::exec::normAxis(c.attrInt("axis", -1), x.rank());
    p = {};
    for (int i = 0; i < axis; ++i)
        p.outer *= x.shape[std::size_t(i)];
    for (int i = axis + 1; i < x.rank(); ++i)
        p.inner *= x.shape[std::size_t(i)];
    p.count = x.shape[std::size_t(axis)];
    return true;
}

bool instanceNormParams(const core::exec::KernelCall& c, std::int64_t& channels, std::int64_t& plane)
{
    if (!c.allFloat() || c.in.size() < 3 || !c.has(0) || !c.has(1) || !c.has(2) || c.out.size() != 1 || c.in[0].rank() < 3
        || c.out[0].count != c.in[0].count)
        return false;
    const auto& x = c.in[0];
    channels = x.shape[1];
    const std::int64_t rows = x.shape[0] * channels;
    if (rows <= 0 || c.in[1].count != channels || c.in[2].count != channels)
        return false;
    plane = x.count / rows;
    return true;
}

bool lrnParams(const core::exec::KernelCall& c, kernels::LrnShape& s)
{
    if (!c.allFloat() || !c.has(0) || c.out.size() != 1 || c.in[0].rank() < 3 || c.in[0].count != c.out[0].count)
        return false;
    const auto& x = c.in[0];
    s.size = c.attrInt("size", 0);
    s.alpha = c.attrFloat("alpha", 1e-4f);
    s.beta = c.attrFloat("beta", 0.75f);
    s.bias = c.attrFloat("bias", 1.0f);
    s.channels = x.shape[1];
    s.plane = x.count / std::max<std::int64_t>(1, x.shape[0] * s.channels);
    return s.size > 0 && s.channels > 0 && s.plane > 0;
}

bool layerNormParams(const core::exec::KernelCall& c, std::int64_t& rows, std::int64_t& inner)
{
    if (!c.allFloat() || !c.has(0) || !c.has(1) || c.out.empty() || c.in[0].rank() == 0)
        return false;
    const auto& x = c.in[0];
    const int axis = core::exec::normAxis(c.attrInt("axis", -1), x.rank());
    inner = 1;
    for (int i = axis; i < x.rank(); ++i)
        inner *= x.shape[std::size_t(i)];
    rows = x.count / std::max<std::int64_t>(1, inner);
    if (c.out.size() > 3 || !c.out[0].present())
        return false;
    for (std::size_t k = 1; k < c.out.size(); ++k) // Mean, InvStdDev: one float per row
        if (c.out[k].present() && c.out[k].count != rows)
            return false;
    return c.in[1].count == inner && (!c.has(2) || c.in[2].count == inner);
}

namespace {

kernels::Unary unaryOf(core::exec::RecurrentActivation a)
{
    switch (a) {
    case core::exec::RecurrentActivation::Sigmoid: return kernels::Unary::Sigmoid;
    case core::exec::RecurrentActivation::Tanh: return kernels::Unary::Tanh;
    case core::exec::RecurrentActivation::Relu: return kernels::Unary::Relu;
    }
    return kernels::Unary::Tanh;
}

} // namespace

bool recurrentParams(const KernelCall& call, core::exec::Recurrence& r)
{
    using core::exec::Cell;
    const auto& type = call.op->type;
    const Cell cell = type == "RNN" ? Cell::Rnn : type == "GRU" ? Cell::Gru : Cell::Lstm;
    return (type == "RNN" || type == "GRU" || type == "LSTM") && core::exec::recurrence(call, cell, r) && r.seq > 0 && r.batch > 0;
}

kernels::RecurrentStep recurrentStep(const core::exec::Recurrence& r, int direction)
{
    using core::exec::Cell;
    kernels::RecurrentStep s;
    s.cell = r.cell == Cell::Rnn ? kernels::RecurrentCell::Rnn : r.cell == Cell::Gru ? kernels::RecurrentCell::Gru : kernels::RecurrentCell::Lstm;
    s.f = unaryOf(r.f[direction]);
    s.g = unaryOf(r.g[direction]);
    s.h = unaryOf(r.h[direction]);
    s.linearBeforeReset = r.linearBeforeReset;
    s.batchFirst = r.batchFirst;
    s.reverse = r.reverseOnly || direction == 1;
    s.dirs = r.dirs;
    s.direction = direction;
    s.seq = r.seq;
    s.batch = r.batch;
    s.hidden = r.hidden;
    s.clip = r.clip;
    return s;
}

bool gridSampleParams(const KernelCall& c, kernels::GridSampleShape& s)
{
    core::exec::GridSampleAttrs a;
    if (!core::exec::gridSampleAttrs(c, a))
        return false;
    const auto &x = c.in[0], &y = c.out[0];
    s = { x.shape[0], x.shape[1], x.shape[2], x.shape[3], y.shape[2], y.shape[3], a.taps, a.padding, a.alignCorners };
    return true;
}

} // namespace gpu
