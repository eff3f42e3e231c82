// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "indexparams.h"

#include "opparams.h"

#include <algorithm>

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

namespace {

// GatherElements' and ScatterElements' shape: x against indices of its rank along `axis`, the
// indices no longer than x outside the axis; int64 or int32 indices, elements of 1, 2, 4 or 8 bytes.
bool elementsShape(const KernelCall& c, kernels::GatherElementsShape& s, bool& indices64, int& elementBytes)
{
    const auto &x = c.in[0], &idx = c.in[1];
    if (x.rank() == 0 || x.rank() > kernels::kMaxRank || idx.rank() != x.rank() || (idx.dtype != DType::Int64 && idx.dtype != DType::Int32))
        return false;
    s.rank = x.rank();
    s.axis = core::exec::normAxis(c.attrInt("axis", 0), x.rank());
    s.extent = x.shape[std::size_t(s.axis)];
    const auto strides = core::exec::stridesOf(x.shape);
    for (int d = 0; d < s.rank; ++d) {
        if (d != s.axis && idx.shape[std::size_t(d)] > x.shape[std::size_t(d)])
            return false; // indices reach past data outside the axis
        s.idxDims[d] = idx.shape[std::size_t(d)];
        s.xStride[d] = strides[std::size_t(d)];
    }
    indices64 = idx.dtype == DType::Int64;
    elementBytes = int(core::dtypeBytes(x.dtype));
    return x.dtype != DType::String && isElementWidth(elementBytes) && (s.extent > 0 || idx.count == 0);
}

// The `reduction` attribute of ScatterND and ScatterElements; false for another name.
bool reductionOf(const KernelCall& c, kernels::Reduction& reduction)
{
    using R = kernels::Reduction;
    static const std::map<std::string, R> reductions { { "none", R::None }, { "add", R::Add }, { "mul", R::Mul }, { "max", R::Max }, { "min", R::Min } };
    const auto r = reductions.find(c.attrText("reduction", "none"));
    if (r == reductions.end())
        return false;
    reduction = r->second;
    return true;
}

} // namespace

bool gatherElementsParams(const KernelCall& c, kernels::GatherElementsShape& s, bool& indices64, int& elementBytes)
{
    return c.has(0) && c.has(1) && c.out.size() == 1 && c.in[0].dtype == c.out[0].dtype && c.in[1].count == c.out[0].count
        && elementsShape(c, s, indices64, elementBytes);
}

bool scatterElementsParams(const KernelCall& c, kernels::GatherElementsShape& s, kernels::Reduction& reduction, bool& indices64, int& elementBytes)
{
    if (c.in.size() < 3 || !c.has(0) || !c.has(1) || !c.has(2) || c.out.size() != 1 || !reductionOf(c, reduction))
        return false;
    const auto &x = c.in[0], &upd = c.in[2], &y = c.out[0];
    if (x.dtype != y.dtype || upd.dtype != x.dtype || x.count != y.count || c.in[1].shape != upd.shape
        || (reduction != kernels::Reduction::None && x.dtype != DType::Float32))
        return false;
    return elementsShape(c, s, indices64, elementBytes);
}

bool hardmaxParams(const KernelCall& c, AxisParams& a)
{
    const auto& x = c.in[0];
    if (!c.allFloat() || !c.has(0) || c.out.size() != 1 || x.rank() == 0 || x.count != c.out[0].count)
        return false;
    a = around(x.shape, core::exec::normAxis(c.attrInt("axis", -1), x.rank()));
    return a.extent > 0;
}

bool oneHotParams(const KernelCall& c, kernels::OneHotShape& s, int& elementBytes)
{
    const auto &idx = c.in[0], &y = c.out[0];
    if (!c.has(0) || !c.has(1) || !c.has(2) || c.out.size() != 1 || c.in[1].count != 1 || c.in[2].count != 2 || c.in[2].dtype != y.dtype
        || y.rank() != idx.rank() + 1)
        return false;
    if (idx.dtype == DType::Float32)
        s.indexType = kernels::Scalar::Float32;
    else if (idx.dtype == DType::Int32)
        s.indexType = kernels::Scalar::Int32;
    else if (idx.dtype == DType::Int64)
        s.indexType = kernels::Scalar::Int64;
    else
        return false;
    s.depth = c.in[1].dtype == DType::Float32 ? std::int64_t(c.in[1].f32()[0]) : core::exec::intAt(c.in[1], 0);
    const int axis = core::exec::normAxis(c.attrInt("axis", -1), y.rank());
    s.inner = 1;
    for (int d = axis + 1; d < y.rank(); ++d)
        s.inner *= y.shape[std::size_t(d)];
    elementBytes = int(core::dtypeBytes(y.dtype));
    return s.depth > 0 && y.shape[std::size_t(axis)] == s.depth && y.dtype != DType::String && isElementWidth(elementBytes);
}

bool gatherNDParams(const KernelCall& c, kernels::GatherNDShape& s, int& elementBytes)
{
    const auto &x = c.in[0], &idx = c.in[1], &y = c.out[0];
    if (!c.has(0) || !c.has(1) || c.out.size() != 1 || x.dtype != y.dtype || idx.dtype != DType::Int64 || idx.rank() < 1)
        return false;
    const std::int64_t batchDims = c.attrInt("batch_dims", 0), depth = idx.shape.back();
    if (batchDims < 0 || batchDims >= idx.rank() || depth < 1 || depth > kernels::kMaxRank || batchDims + depth > x.rank())
        return false;
    std::int64_t batch = 1;
    s.slice = 1;
    s.perBatch = 1;
    for (std::int64_t d = 0; d < batchDims; ++d) {
        if (x.shape[std::size_t(d)] != idx.shape[std::size_t(d)])
            return false;
        batch *= x.shape[std::size_t(d)];
    }
    for (std::int64_t d = batchDims + depth; d < x.rank(); ++d)
        s.slice *= x.shape[std::size_t(d)];
    for (std::int64_t d = batchDims; d < x.rank(); ++d)
        s.perBatch *= x.shape[std::size_t(d)];
    s.depth = int(depth);
    for (int k = 0; k < s.depth; ++k)
        s.dims[k] = x.shape[std::size_t(batchDims + k)];
    s.tuples = idx.count / std::max<std::int64_t>(1, depth * batch);
    elementBytes = int(core::dtypeBytes(x.dtype));
    return batch * s.tuples * s.slice == y.count && s.slice > 0 && x.dtype != DType::String && isElementWidth(elementBytes);
}

bool scatterNDParams(const KernelCall& c, ScatterNDParams& p)
{
    if (c.in.size() < 3 || !c.has(0) || !c.has(1) || !c.has(2) || c.out.size() != 1 || !reductionOf(c, p.reduction))
        return false;
    const auto &x = c.in[0], &idx = c.in[1], &upd = c.in[2], &y = c.out[0];
    if (x.dtype != y.dtype || upd.dtype != x.dtype || x.count != y.count || (idx.dtype != DType::Int64 && idx.dtype != DType::Int32) || idx.rank() < 1
        || (p.reduction != kernels::Reduction::None && x.dtype != DType::Float32 && x.dtype != DType::Int64))
        return false;
    const std::int64_t depth = idx.shape.back();
    if (depth < 1 || depth > x.rank() || depth > kernels::kMaxRank)
        return false;
    const auto strides = core::exec::stridesOf(x.shape);
    auto& s = p.shape;
    s.depth = int(depth);
    s.tuples = idx.count / depth;
    s.slice = depth < x.rank() ? strides[std::size_t(depth - 1)] : 1;
    for (int d = 0; d < s.depth; ++d) {
        s.dims[d] = x.shape[std::size_t(d)];
        s.stride[d] = strides[std::size_t(d)];
    }
    p.indices64 = idx.dtype == DType::Int64;
    p.int64 = x.dtype == DType::Int64;
    p.elementBytes = int(core::dtypeBytes(x.dtype));
    return s.tuples * s.slice == upd.count && x.dtype != DType::String && isElementWidth(p.elementBytes);
}

bool topKParams(const KernelCall& c, kernels::TopKShape& s)
{
    const auto &x = c.in[0];
    if (!c.has(0) || !c.has(1) || c.out.size() != 2 || x.dtype != DType::Float32 || c.out[0].dtype != DType::Float32
        || c.out[1].dtype != DType::Int64 || x.rank() == 0 || c.out[0].rank() != x.rank() || c.in[1].count != 1
        || (c.in[1].dtype != DType::Int64 && c.in[1].dtype != DType::Int32))
        return false;
    const int axis = core::exec::normAxis(c.attrInt("axis", -1), x.rank());
    const auto a = around(x.shape, axis);
    s.outer = a.outer;
    s.n = a.extent;
    s.inner = a.inner;
    s.k = core::exec::intAt(c.in[1], 0);
    s.largest = c.attrInt("largest", 1) != 0;
    core::exec::Shape expected = x.shape;
    expected[std::size_t(axis)] = s.k;
    return s.k >= 0 && s.k <= s.n && c.out[0].shape == expected && c.out[1].shape == expected;
}

} // namespace gpu
