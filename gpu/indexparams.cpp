// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "indexparams.h"

#include "opparams.h"

namespace gpu {

using core::DType;
using core::exec::KernelCall;

namespace {

AxisParams around(const core::exec::Shape& shape, int axis)
{
    AxisParams p;
    for (int d = 0; d < int(shape.size()); ++d)
        (d < axis ? p.outer : d == axis ? p.extent : p.inner) *= shape[std::size_t(d)];
    return p;
}

bool isElementWidth(int bytes) { return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8; }

} // namespace

const std::map<std::string, kernels::Logical>& logicalOpTypes()
{
    using L = kernels::Logical;
    static const std::map<std::string, L> t { { "And", L::And }, { "Or", L::Or }, { "Xor", L::Xor } };
    return t;
}

bool logicalParams(const KernelCall& c, kernels::Logical& op, kernels::Broadcast& s)
{
    const auto it = logicalOpTypes().find(c.op->type);
    if (it == logicalOpTypes().end() || c.in.size() != 2 || !c.has(0) || !c.has(1) || c.out.size() != 1 || c.in[0].dtype != DType::Bool
        || c.in[1].dtype != DType::Bool || c.out[0].dtype != DType::Bool)
        return false;
    op = it->second;
    return broadcastShape(c.out[0], { &c.in[0], &c.in[1] }, s);
}

bool argExtremeParams(const KernelCall& c, AxisParams& a, bool& max, bool& last, bool& int64)
{
    const auto& x = c.in[0];
    if (!c.has(0) || c.out.size() != 1 || x.rank() == 0 || c.out[0].dtype != DType::Int64 || (x.dtype != DType::Float32 && x.dtype != DType::Int64))
        return false;
    a = around(x.shape, core::exec::normAxis(c.attrInt("axis", 0), x.rank()));
    max = c.op->type == "ArgMax";
    last = c.attrInt("select_last_index", 0) != 0;
    int64 = x.dtype == DType::Int64;
    return a.extent > 0 && a.outer * a.inner == c.out[0].count;
}

bool cumSumParams(const KernelCall& c, AxisParams& a, bool& exclusive, bool& reverse, kernels::Scalar& type)
{
    const auto& x = c.in[0];
    if (!c.has(0) || !c.has(1) || c.in[1].count != 1 || c.out.size() != 1 || x.rank() == 0 || x.dtype != c.out[0].dtype
        || x.count != c.out[0].count)
        return false;
    switch (x.dtype) {
    case DType::Float32: type = kernels::Scalar::Float32; break;
    case DType::Float64: type = kernels::Scalar::Float64; break;
    case DType::Int32: type = kernels::Scalar::Int32; break;
    case DType::Int64: type = kernels::Scalar::Int64; break;
    default: return false;
    }
    a = around(x.shape, core::exec::normAxis(core::exec::intAt(c.in[1], 0), x.rank()));
    exclusive = c.attrInt("exclusive", 0) != 0;
    reverse = c.attrInt("reverse", 0) != 0;
    return true;
}

bool triluParams(const KernelCall& c, TriluParams& p)
{
    const auto& x = c.in[0];
    if (!c.has(0) || c.out.size() != 1 || x.rank() < 2 || x.dtype != c.out[0].dtype || x.count != c.out[0].count
        || (c.has(1) && c.in[1].count != 1))
        return false;
    p.rows = x.shape[std::size_t(x.rank() - 2)];
    p.cols = x.shape[std::size_t(x.rank() - 1)];
    p.k = c.has(1) ? core::exec::intAt(c.in[1], 0) : 0;
    p.upper = c.attrInt("upper", 1) != 0;
    p.elementBytes = int(core::dtypeBytes(x.dtype));
    return x.dtype != DType::String && isElementWidth(p.elementBytes);
}

bool gatherElementsParams(const KernelCall& c, kernels::GatherElementsShape& s, bool& indices64, int& elementBytes)
{
    const auto &x = c.in[0], &idx = c.in[1];
    if (!c.has(0) || !c.has(1) || c.out.size() != 1 || x.dtype != c.out[0].dtype || x.rank() == 0 || x.rank() > kernels::kMaxRank
        || idx.rank() != x.rank() || idx.count != c.out[0].count || (idx.dtype != DType::Int64 && idx.dtype != DType::Int32))
        return false;
    s.rank = x.rank();
    s.axis = core::exec::normAxis(c.attrInt("axis", 0), x.rank());
    s.extent = x.shape[std::size_t(s.axis)];
    const auto strides = core::exec::stridesOf(x.shape);
    for (int d = 0; d < s.rank; ++d) {
        if (d != s.axis && idx.shape[std::size_t(d)] > x.shape[std::size_t(d)])
            return false;
        s.idxDims[d] = idx.shape[std::size_t(d)];
        s.xStride[d] = strides[std::size_t(d)];
    }
    indices64 = idx.dtype == DType::Int64;
    elementBytes = int(core::dtypeBytes(x.dtype));
    return x.dtype != DType::String && isElementWidth(elementBytes) && (s.extent > 0 || idx.count == 0);
}

} // namespace gpu
