// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The index ops on the device: parameters from indexparams.cpp (the CPU kernels' rules), one thread
// per output element, or per row for CumSum (indexmath.h).
#include "opsindex.h"

#include "indexparams.h"
#include "kernels.h"

namespace gpu {

using core::exec::KernelCall;

namespace {

const Outcome kUnsupported { false, {} };

std::uint8_t* bytes(const core::exec::TensorView& v) { return reinterpret_cast<std::uint8_t*>(v.data); }

Outcome logical(const DeviceCall& d)
{
    const auto& c = d.call;
    kernels::Logical op;
    kernels::Broadcast s;
    if (!logicalParams(c, op, s))
        return kUnsupported;
    return launched(kernels::logical(op, bytes(c.out[0]), bytes(c.in[0]), bytes(c.in[1]), s, c.out[0].count, d.stream), "kernels::logical");
}

Outcome argExtreme(const DeviceCall& d)
{
    const auto& c = d.call;
    AxisParams a;
    bool max = true, last = false, int64 = false;
    if (!argExtremeParams(c, a, max, last, int64))
        return kUnsupported;
    return launched(kernels::argExtreme(c.out[0].i64(), c.in[0].data, int64, a.outer, a.extent, a.inner, max, last, d.stream),
        "kernels::argExtreme");
}

Outcome cumSum(const DeviceCall& d)
{
    KernelCall host;
    AxisParams a;
    bool exclusive = false, reverse = false;
    kernels::Scalar type;
    if (!hostArguments(d, { 1 }, host) || !cumSumParams(host, a, exclusive, reverse, type))
        return kUnsupported;
    const auto& c = d.call;
    return launched(kernels::cumSum(c.out[0].data, c.in[0].data, type, a.outer, a.extent, a.inner, exclusive, reverse, d.stream),
        "kernels::cumSum");
}

Outcome trilu(const DeviceCall& d)
{
    KernelCall host;
    TriluParams p;
    if (!hostArguments(d, { 1 }, host) || !triluParams(host, p))
        return kUnsupported;
    const auto& c = d.call;
    return launched(kernels::trilu(c.out[0].data, c.in[0].data, p.elementBytes, p.rows, p.cols, p.k, p.upper, c.out[0].count, d.stream),
        "kernels::trilu");
}

Outcome gatherElements(const DeviceCall& d)
{
    const auto& c = d.call;
    kernels::GatherElementsShape s;
    bool indices64 = false;
    int elementBytes = 0;
    if (!gatherElementsParams(c, s, indices64, elementBytes))
        return kUnsupported;
    return launched(kernels::gatherElements(c.out[0].data, c.in[0].data, elementBytes, c.in[1].data, indices64, s, c.out[0].count, d.stream),
        "kernels::gatherElements");
}

Outcome gatherND(const DeviceCall& d)
{
    const auto& c = d.call;
    kernels::GatherNDShape s;
    int elementBytes = 0;
    if (!gatherNDParams(c, s, elementBytes))
        return kUnsupported;
    return launched(kernels::gatherND(c.out[0].data, c.in[0].data, elementBytes, c.in[1].i64(), s, c.out[0].count, d.stream), "kernels::gatherND");
}

Outcome hardmax(const DeviceCall& d)
{
    const auto& c = d.call;
    AxisParams a;
    if (!hardmaxParams(c, a))
        return kUnsupported;
    return launched(kernels::hardmax(c.out[0].f32(), c.in[0].f32(), a.outer, a.extent, a.inner, d.stream), "kernels::hardmax");
}

Outcome oneHot(const DeviceCall& d)
{
    KernelCall host;
    kernels::OneHotShape s;
    int elementBytes = 0;
    if (!hostArguments(d, { 1 }, host) || !oneHotParams(host, s, elementBytes))
        return kUnsupported;
    const auto& c = d.call;
    return launched(kernels::oneHot(c.out[0].data, c.in[0].data, c.in[2].data, elementBytes, s, c.out[0].count, d.stream), "kernels::oneHot");
}

Outcome scatterElements(const DeviceCall& d)
{
    const auto& c = d.call;
    kernels::GatherElementsShape s;
    kernels::Reduction reduction;
    bool indices64 = false;
    int elementBytes = 0;
    if (!scatterElementsParams(c, s, reduction, indices64, elementBytes))
        return kUnsupported;
    if (c.out[0].data != c.in[0].data)
        if (const auto e = cudaMemcpyAsync(c.out[0].data, c.in[0].data, std::size_t(c.out[0].bytes()), cudaMemcpyDeviceToDevice, d.stream);
            e != cudaSuccess)
            return launched(e, "cudaMemcpyAsync");
    return launched(kernels::scatterElements(c.out[0].data, c.in[2].data, elementBytes, c.in[1].data, indices64, s, reduction, c.in[1].count, d.stream),
        "kernels::scatterElements");
}

// The copy of data, then the updates (an index out of range skips its tuple: see indexmath.h).
Outcome scatterND(const DeviceCall& d)
{
    const auto& c = d.call;
    ScatterNDParams p;
    if (!scatterNDParams(c, p))
        return kUnsupported;
    if (c.out[0].data != c.in[0].data)
        if (const auto e = cudaMemcpyAsync(c.out[0].data, c.in[0].data, std::size_t(c.out[0].bytes()), cudaMemcpyDeviceToDevice, d.stream);
            e != cudaSuccess)
            return launched(e, "cudaMemcpyAsync");
    return launched(kernels::scatterND(c.out[0].data, c.in[2].data, p.elementBytes, c.in[1].data, p.indices64, p.shape, p.reduction, p.int64, d.stream),
        "kernels::scatterND");
}

Outcome topK(const DeviceCall& d)
{
    KernelCall host;
    kernels::TopKShape s;
    if (!hostArguments(d, { 1 }, host) || !topKParams(host, s))
        return kUnsupported;
    const auto& c = d.call;
    return launched(kernels::topK(c.in[0].f32(), c.out[0].f32(), c.out[1].i64(), s, d.stream), "kernels::topK");
}

} // namespace

void addIndexKernels(std::map<std::string, DeviceKernel>& t)
{
    for (const auto& l : logicalOpTypes())
        t[l.first] = logical;
    t["ArgMax"] = argExtreme;
    t["ArgMin"] = argExtreme;
    t["CumSum"] = cumSum;
    t["Trilu"] = trilu;
    t["GatherElements"] = gatherElements;
    t["GatherND"] = gatherND;
    t["ScatterElements"] = scatterElements;
    t["Scatter"] = scatterElements; // opset 9-10 name, without reduction
    t["ScatterND"] = scatterND;
    t["TopK"] = topK;
    t["Hardmax"] = hardmax;
    t["OneHot"] = oneHot;
}

} // namespace gpu
