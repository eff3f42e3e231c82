// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Rearranging and selecting ops: DepthToSpace and SpaceToDepth (any element type), GatherND and
// ScatterElements (any element type; ScatterElements' add/mul/max/min reductions for float32),
// TopK (float32 values, int64 indices; ties keep the lower index first), Hardmax, OneHot, and
// IsNaN/IsInf. An index outside [-dim, dim-1] is refused, as in Gather: the kernel returns false before
// writing anything, so no read or write leaves a tensor and no wrapped index gives a wrong answer.
#include "exec/kernels.h"
#include "exec/opattrs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace core::exec {

namespace {

bool inRange(std::int64_t i, std::int64_t dim) { return i >= -dim && i < dim; }
std::int64_t positive(std::int64_t i, std::int64_t dim) { return i < 0 ? i + dim : i; }

// DepthToSpace (DCR or CRD) and SpaceToDepth over [N, C, H, W]: one element copy per output element.
template <bool ToSpace>
bool depthSpace(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    DepthSpace ds;
    if (!depthSpaceAttrs(c, ds) || ds.toSpace != ToSpace)
        return false;
    const bool crd = ds.crd;
    const std::int64_t b = ds.block, n = ds.n, ch = ds.channels, h = ds.height, w = ds.width;
    // Space side [N, C, H*b, W*b], depth side [N, C*b*b, H, W].
    const auto& depth = ToSpace ? x.shape : y.shape;
    const auto& space = ToSpace ? y.shape : x.shape;
    const Bytes width = dtypeBytes(x.dtype);
    for (std::int64_t in = 0; in < n; ++in)
        for (std::int64_t k = 0; k < ch; ++k)
            for (std::int64_t i = 0; i < b; ++i)
                for (std::int64_t j = 0; j < b; ++j) {
                    const std::int64_t dc = crd ? (k * b + i) * b + j : (i * b + j) * ch + k;
                    for (std::int64_t r = 0; r < h; ++r)
                        for (std::int64_t q = 0; q < w; ++q) {
                            const std::int64_t d = ((in * depth[1] + dc) * h + r) * w + q;
                            const std::int64_t s = ((in * ch + k) * space[2] + r * b + i) * space[3] + q * b + j;
                            std::memcpy(y.data + (ToSpace ? s : d) * width, x.data + (ToSpace ? d : s) * width, std::size_t(width));
                        }
                }
    return true;
}

// GatherND: the index tuples of `indices`' last dimension pick slices of data after batch_dims.
bool gatherND(const KernelCall& c)
{
    const auto &x = c.in[0], &idx = c.in[1], &y = c.out[0];
    if (!c.has(1) || c.out.size() != 1 || x.dtype != y.dtype || idx.dtype != DType::Int64 || idx.rank() < 1)
        return false;
    const int batchDims = int(c.attrInt("batch_dims", 0));
    const std::int64_t depth = idx.shape.back();
    if (batchDims < 0 || batchDims >= idx.rank() || batchDims + depth > x.rank())
        return false;
    std::int64_t batch = 1, slice = 1;
    for (int d = 0; d < batchDims; ++d) {
        if (x.shape[d] != idx.shape[d])
            return false;
        batch *= x.shape[d];
    }
    for (int d = batchDims + int(depth); d < x.rank(); ++d)
        slice *= x.shape[d];
    const std::int64_t tuples = idx.count / std::max<std::int64_t>(1, depth * batch);
    if (depth == 0 || batch * tuples * slice != y.count)
        return false;
    std::int64_t perBatch = 1; // elements of data in one batch entry
    for (int d = batchDims; d < x.rank(); ++d)
        perBatch *= x.shape[d];
    for (std::int64_t n = 0; n < batch * tuples * depth; ++n)
        if (const int axis = int(batchDims + n % depth); !inRange(idx.i64()[n], x.shape[std::size_t(axis)]))
            return refuseIndex(idx.i64()[n], n, x.shape[std::size_t(axis)], 1, 0, axis);
    const Bytes width = dtypeBytes(x.dtype);
    for (std::int64_t bi = 0; bi < batch; ++bi)
        for (std::int64_t t = 0; t < tuples; ++t) {
            std::int64_t at = 0;
            for (std::int64_t k = 0; k < depth; ++k) {
                const std::int64_t dim = x.shape[std::size_t(batchDims + k)];
                at = at * dim + positive(idx.i64()[(bi * tuples + t) * depth + k], dim);
            }
            std::memcpy(y.data + (bi * tuples + t) * slice * width, x.data + (bi * perBatch + at * slice) * width, std::size_t(slice * width));
        }
    return true;
}

// ScatterElements: y = data, then y[.., indices[i], ..] (axis) = updates[i] (or reduced into it).
bool scatterElements(const KernelCall& c)
{
    const auto &x = c.in[0], &idx = c.in[1], &upd = c.in[2], &y = c.out[0];
    if (!c.has(1) || !c.has(2) || c.out.size() != 1 || x.dtype != y.dtype || upd.dtype != x.dtype || x.count != y.count
        || (idx.dtype != DType::Int64 && idx.dtype != DType::Int32) || idx.shape != upd.shape || idx.rank() != x.rank())
        return false;
    const auto reduction = c.attrText("reduction", "none");
    if (reduction != "none" && (x.dtype != DType::Float32 || (reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min")))
        return false;
    const int axis = normAxis(c.attrInt("axis", 0), x.rank());
    for (int d = 0; d < x.rank(); ++d)
        if (d != axis && idx.shape[std::size_t(d)] > x.shape[std::size_t(d)])
            return false; // indices reach past data outside the axis
    for (std::int64_t i = 0; i < idx.count; ++i)
        if (const auto k = intAt(idx, i); !inRange(k, x.shape[std::size_t(axis)]))
            return refuseIndex(k, i, x.shape[std::size_t(axis)], 1, 0, axis);
    const Bytes width = dtypeBytes(x.dtype);
    std::memcpy(y.data, x.data, std::size_t(y.bytes()));
    const auto xs = stridesOf(x.shape), is = stridesOf(idx.shape);
    for (std::int64_t i = 0; i < idx.count; ++i) {
        std::int64_t at = 0, rest = i;
        for (int d = 0; d < idx.rank(); ++d) {
            std::int64_t k = rest / is[d];
            rest %= is[d];
            if (d == axis)
                k = positive(intAt(idx, i), x.shape[d]);
            at += k * xs[d];
        }
        if (reduction == "none") {
            std::memcpy(y.data + at * width, upd.data + i * width, std::size_t(width));
            continue;
        }
        float& t = y.f32()[at];
        const float u = upd.f32()[i];
        t = reduction == "add" ? t + u : reduction == "mul" ? t * u : reduction == "max" ? std::max(t, u) : std::min(t, u);
    }
    return true;
}

// Rows of x along `axis`: calls f(base, stride, n) for every (outer, inner) position.
template <typename F>
void forRows(const Shape& shape, int axis, F&& f)
{
    std::int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d)
        outer *= shape[std::size_t(d)];
    for (std::size_t d = std::size_t(axis) + 1; d < shape.size(); ++d)
        inner *= shape[d];
    const std::int64_t n = shape[std::size_t(axis)];
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i)
            f(o * n * inner + i, inner, n);
}

bool topK(const KernelCall& c)
{
    const auto &x = c.in[0], &values = c.out[0];
    if (!c.has(1) || c.out.size() != 2 || x.dtype != DType::Float32 || values.dtype != DType::Float32 || c.out[1].dtype != DType::Int64
        || x.rank() == 0 || values.rank() != x.rank() || c.in[1].count != 1)
        return false;
    const int axis = normAxis(c.attrInt("axis", -1), x.rank());
    const std::int64_t k = intAt(c.in[1], 0);
    Shape expected = x.shape;
    expected[std::size_t(axis)] = k;
    if (k < 0 || k > x.shape[std::size_t(axis)] || values.shape != expected || c.out[1].shape != expected)
        return false;
    const bool largest = c.attrInt("largest", 1) != 0;
    const std::int64_t n = x.shape[std::size_t(axis)];
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    std::int64_t row = 0;
    // Output rows follow the input rows in the same (outer, inner) order, with k in place of n.
    std::vector<std::int64_t> outBase;
    forRows(expected, axis, [&](std::int64_t base, std::int64_t, std::int64_t) { outBase.push_back(base); });
    forRows(x.shape, axis, [&](std::int64_t base, std::int64_t stride, std::int64_t) {
        const float* v = x.f32() + base;
        std::iota(order.begin(), order.end(), 0);
        // NaN ranks above every number when taking the largest, below when taking the smallest.
        const auto before = [&](std::int64_t a, std::int64_t b) {
            const float va = v[a * stride], vb = v[b * stride];
            if (std::isnan(va) || std::isnan(vb))
                return std::isnan(va) && !std::isnan(vb) ? largest : (!std::isnan(va) && std::isnan(vb) ? !largest : false);
            return largest ? va > vb : va < vb;
        };
        std::stable_sort(order.begin(), order.end(), before);
        const std::int64_t out = outBase[std::size_t(row++)];
        for (std::int64_t j = 0; j < k; ++j) {
            values.f32()[out + j * stride] = v[order[std::size_t(j)] * stride];
            c.out[1].i64()[out + j * stride] = order[std::size_t(j)];
        }
    });
    return true;
}

bool hardmax(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    if (!c.allFloat() || c.out.size() != 1 || x.rank() == 0 || x.count != y.count)
        return false;
    forRows(x.shape, normAxis(c.attrInt("axis", -1), x.rank()), [&](std::int64_t base, std::int64_t stride, std::int64_t n) {
        std::int64_t best = 0;
        for (std::int64_t j = 1; j < n; ++j)
            if (x.f32()[base + j * stride] > x.f32()[base + best * stride])
                best = j;
        for (std::int64_t j = 0; j < n; ++j)
            y.f32()[base + j * stride] = j == best ? 1.0f : 0.0f;
    });
    return true;
}

// OneHot: depth from input 1, [off, on] from input 2 (any element type); out-of-range indices
// (after negative ones count from the end) give a row of `off`.
bool oneHot(const KernelCall& c)
{
    const auto &idx = c.in[0], &y = c.out[0];
    if (!c.has(1) || !c.has(2) || c.out.size() != 1 || c.in[1].count != 1 || c.in[2].count != 2 || c.in[2].dtype != y.dtype
        || dtypeBytes(y.dtype) <= 0 || y.rank() != idx.rank() + 1)
        return false;
    std::int64_t depth = c.in[1].dtype == DType::Float32 ? std::int64_t(c.in[1].f32()[0]) : intAt(c.in[1], 0);
    const int axis = normAxis(c.attrInt("axis", -1), y.rank());
    if (y.shape[std::size_t(axis)] != depth || depth <= 0)
        return false;
    std::int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d)
        outer *= y.shape[std::size_t(d)];
    for (int d = axis + 1; d < y.rank(); ++d)
        inner *= y.shape[std::size_t(d)];
    const Bytes width = dtypeBytes(y.dtype);
    const std::byte* off = c.in[2].data;
    const std::byte* on = c.in[2].data + width;
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            const std::int64_t at = o * inner + i;
            std::int64_t hot = idx.dtype == DType::Float32 ? std::int64_t(idx.f32()[at]) : intAt(idx, at);
            if (hot < 0)
                hot += depth;
            for (std::int64_t j = 0; j < depth; ++j)
                std::memcpy(y.data + ((o * depth + j) * inner + i) * width, j == hot ? on : off, std::size_t(width));
        }
    return true;
}

template <bool Inf>
bool isSpecial(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    if (c.out.size() != 1 || x.dtype != DType::Float32 || y.dtype != DType::Bool || x.count != y.count)
        return false;
    const bool negative = c.attrInt("detect_negative", 1) != 0, positive = c.attrInt("detect_positive", 1) != 0;
    for (std::int64_t i = 0; i < x.count; ++i) {
        const float v = x.f32()[i];
        const bool hit = Inf ? std::isinf(v) && (v < 0 ? negative : positive) : std::isnan(v);
        y.data[i] = std::byte(hit ? 1 : 0);
    }
    return true;
}

} // namespace

void addSelectKernels(std::map<std::string, Kernel>& t)
{
    t["DepthToSpace"] = depthSpace<true>;
    t["SpaceToDepth"] = depthSpace<false>;
    t["GatherND"] = gatherND;
    t["ScatterElements"] = scatterElements;
    t["Scatter"] = scatterElements; // opset 9-10 name, same semantics without reduction
    t["TopK"] = topK;
    t["Hardmax"] = hardmax;
    t["OneHot"] = oneHot;
    t["IsNaN"] = isSpecial<false>;
    t["IsInf"] = isSpecial<true>;
}

} // namespace core::exec
