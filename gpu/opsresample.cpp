// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Pad, Resize, the Reduce* family, GlobalMaxPool and GridSample on the device: parameters from opparams.cpp (the CPU
// kernels' attribute readers), one thread per output element (elementmath.h).
#include "opsresample.h"

#include "kernels.h"
#include "opparams.h"

#include <initializer_list>

namespace gpu {

using core::exec::KernelCall;

namespace {

const Outcome kUnsupported { false, {} };

Outcome pad(const DeviceCall& d)
{
    KernelCall host;
    kernels::PadShape s;
    if (!hostArguments(d, { 1, 2 }, host) || !padShape(host, s))
        return kUnsupported;
    const auto& c = d.call;
    return launched(kernels::pad(c.out[0].f32(), c.in[0].f32(), s, c.out[0].count, d.stream), "kernels::pad");
}

Outcome resize(const DeviceCall& d)
{
    KernelCall host;
    kernels::ResizeShape s;
    if (!hostArguments(d, { d.call.in.size() == 2 ? std::size_t(1) : std::size_t(2) }, host) || !resizeShape(host, s))
        return kUnsupported;
    const auto& c = d.call;
    return launched(kernels::resize(c.out[0].f32(), c.in[0].f32(), s, c.out[0].count, d.stream), "kernels::resize");
}

Outcome reduce(const DeviceCall& d)
{
    KernelCall host;
    kernels::ReduceShape s;
    if (!hostArguments(d, { 1 }, host) || !reduceShape(host, s))
        return kUnsupported;
    const auto& c = d.call;
    return launched(kernels::reduce(c.out[0].f32(), c.in[0].f32(), s, c.out[0].count, d.stream), "kernels::reduce");
}

Outcome globalMaxPool(const DeviceCall& d)
{
    kernels::ReduceShape s;
    const auto& c = d.call;
    if (!globalMaxPoolShape(c, s))
        return kUnsupported;
    return launched(kernels::reduce(c.out[0].f32(), c.in[0].f32(), s, c.out[0].count, d.stream), "kernels::reduce");
}

Outcome gridSample(const DeviceCall& d)
{
    const auto& c = d.call;
    kernels::GridSampleShape s;
    if (!gridSampleParams(c, s))
        return kUnsupported;
    return launched(kernels::gridSample(c.out[0].f32(), c.in[0].f32(), c.in[1].f32(), s, c.out[0].count, d.stream), "kernels::gridSample");
}

} // namespace

void addResampleKernels(std::map<std::string, DeviceKernel>& t)
{
    t["Pad"] = pad;
    t["Resize"] = resize;
    t["Upsample"] = resize;
    for (const char* type : { "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum",
             "ReduceLogSumExp" })
        t[type] = reduce;
    t["GlobalMaxPool"] = globalMaxPool;
    t["GridSample"] = gridSample;
}

} // namespace gpu
