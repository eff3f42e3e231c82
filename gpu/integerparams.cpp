// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "integerparams.h"

#include "exec/integer.h"

#include <limits>

namespace gpu {

using core::DType;
using core::exec::KernelCall;

namespace {

kernels::Scalar byteScalar(DType t) { return t == DType::Int8 ? kernels::Scalar::Int8 : kernels::Scalar::UInt8; }

kernels::Scalar outputScalar(DType t) { return t == DType::Int32 ? kernels::Scalar::Int32 : byteScalar(t); }

kernels::IntParam param(const core::exec::VecParam& v) { return { v.t != nullptr, v.perIndex, v.batched }; }

kernels::IntParam channelParam(const core::exec::TensorView* t) { return { t != nullptr, t && t->count != 1, false }; }

bool fitsInt(std::int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max(); }

} // namespace

bool intMatMulParams(const KernelCall& c, kernels::IntMatMulShape& s)
{
    core::exec::IntMatMulArgs p;
    if (!core::exec::intMatMulArgs(c, p) || p.s.batch.size() > std::size_t(kernels::kMaxRank))
        return false;
    s = {};
    s.m = p.s.m;
    s.k = p.s.k;
    s.n = p.s.n;
    s.rank = int(p.s.batch.size());
    for (int d = 0; d < s.rank; ++d) {
        s.batch[d] = p.s.batch[std::size_t(d)];
        s.strideA[d] = p.s.sa[std::size_t(d)];
        s.strideB[d] = p.s.sb[std::size_t(d)];
    }
    s.a = byteScalar(p.a->dtype);
    s.b = byteScalar(p.b->dtype);
    s.y = outputScalar(c.out[0].dtype);
    s.aZero = param(p.aZero);
    s.bZero = param(p.bZero);
    s.aScale = param(p.aScale);
    s.bScale = param(p.bScale);
    return s.m > 0 && s.n > 0;
}

bool intConvParams(const KernelCall& c, kernels::IntConvShape& s)
{
    core::exec::IntConvArgs p;
    if (!core::exec::intConvArgs(c, p))
        return false;
    const auto& g = p.g;
    for (std::int64_t v : { g.kD, g.kH, g.kW, g.strideD, g.strideH, g.strideW, g.dilD, g.dilH, g.dilW, g.padFront, g.padTop, g.padLeft })
        if (!fitsInt(v))
            return false;
    s = {};
    auto& w = s.window;
    w.channels = p.cg;
    w.depth = g.inD; w.height = g.inH; w.width = g.inW;
    w.outDepth = g.outD; w.outHeight = g.outH; w.outWidth = g.outW;
    w.kernelD = int(g.kD); w.kernelH = int(g.kH); w.kernelW = int(g.kW);
    w.strideD = int(g.strideD); w.strideH = int(g.strideH); w.strideW = int(g.strideW);
    w.dilationD = int(g.dilD); w.dilationH = int(g.dilH); w.dilationW = int(g.dilW);
    w.padFront = int(g.padFront); w.padTop = int(g.padTop); w.padLeft = int(g.padLeft);
    s.images = p.n;
    s.outChannels = p.m;
    s.groupChannels = p.mg;
    s.x = byteScalar(p.x->dtype);
    s.w = byteScalar(p.w->dtype);
    s.y = outputScalar(c.out[0].dtype);
    s.xZero = channelParam(p.xZero);
    s.wZero = channelParam(p.wZero);
    s.wScale = channelParam(p.wScale);
    s.bias = p.bias != nullptr;
    return s.outChannels > 0 && s.groupChannels > 0;
}

} // namespace gpu
