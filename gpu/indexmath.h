// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Per-element math of the index device kernels, with the CPU kernels' rules
// (core/exec/kernels_index.cpp, And/Or/Xor in kernels_elementwise.cpp): ArgMax and ArgMin, CumSum,
// Trilu, GatherElements and the logical ops; GatherND, ScatterND and TopK (kernels_select.cpp,
// kernels_shape.cpp). Host and device code, as elementmath.h.

#include "elementmath.h"

namespace gpu::kernels {

// ---- And, Or, Xor over bool bytes (0 or 1 out).
enum class Logical { And, Or, Xor };

MEMPLAN_HD inline std::uint8_t logicalElement(Logical op, std::uint8_t a, std::uint8_t b)
{
    const bool u = a != 0, v = b != 0;
    switch (op) {
    case Logical::And: return u && v;
    case Logical::Or: return u || v;
    case Logical::Xor: return u != v;
    }
    return 0;
}

// ---- ArgMax, ArgMin: x is [outer][extent][inner], output element i is [outer][inner].
// The index along the middle dimension of the largest (max) or smallest element; ties go to the
// first, or with `last` to the last.
template <class T>
MEMPLAN_HD inline std::int64_t argExtremeElement(const T* x, std::int64_t i, std::int64_t extent, std::int64_t inner, bool max, bool last)
{
    const T* p = x + (i / inner) * extent * inner + i % inner;
    std::int64_t best = 0;
    for (std::int64_t k = 1; k < extent; ++k) {
        const T v = p[k * inner], b = p[best * inner];
        if (max ? (last ? v >= b : v > b) : (last ? v <= b : v < b))
            best = k;
    }
    return best;
}

// ---- CumSum of row r (r = o * inner + j) along the middle dimension of [outer][extent][inner].
template <class T>
MEMPLAN_HD inline void cumSumRow(T* y, const T* x, std::int64_t r, std::int64_t extent, std::int64_t inner, bool exclusive, bool reverse)
{
    const std::int64_t base = (r / inner) * extent * inner + r % inner;
    T sum = 0;
    for (std::int64_t n = 0; n < extent; ++n) {
        const std::int64_t at = base + (reverse ? extent - 1 - n : n) * inner;
        const T v = x[at];
        if (!exclusive)
            sum += v;
        y[at] = sum;
        if (exclusive)
            sum += v;
    }
}

// ---- Trilu: whether element i of [...][rows][cols] is kept (else it is zero).
MEMPLAN_HD inline bool triluKeeps(std::int64_t i, std::int64_t rows, std::int64_t cols, std::int64_t k, bool upper)
{
    const std::int64_t j = i % cols, r = (i / cols) % rows;
    return upper ? j - r >= k : j - r <= k;
}

// ---- GatherElements: output element i (row-major over the indices' dims) copies the element of x
// at the same position but along `axis`, where it takes the index (wrapped into [0, extent)).
struct GatherElementsShape {
    int rank = 0, axis = 0;
    std::int64_t extent = 1;
    std::int64_t idxDims[kMaxRank] = {}, xStride[kMaxRank] = {};
};

MEMPLAN_HD inline std::int64_t gatherElementsSource(std::int64_t i, const void* indices, bool indices64, const GatherElementsShape& s)
{
    std::int64_t at = indices64 ? static_cast<const std::int64_t*>(indices)[i] : std::int64_t(static_cast<const std::int32_t*>(indices)[i]);
    at %= s.extent;
    if (at < 0)
        at += s.extent;
    std::int64_t from = 0, rest = i;
    for (int d = s.rank - 1; d >= 0; --d) {
        const std::int64_t index = rest % s.idxDims[d];
        rest /= s.idxDims[d];
        from += (d == s.axis ? at : index) * s.xStride[d];
    }
    return from;
}

// ---- ScatterElements: y = data, then each update element written to (or combined into) the element
// of y at its own position but along `axis`, where it takes its index (gatherElementsSource with the
// updates' shape as idxDims). Update elements that can hit the same element of y lie on one line
// along the axis, so one thread per line runs through it in order: repeated indices end as on the
// CPU (last write wins, reductions in order). Line l's k-th element along the axis:
MEMPLAN_HD inline std::int64_t scatterElementsIndex(std::int64_t l, std::int64_t k, const GatherElementsShape& s)
{
    std::int64_t inner = 1;
    for (int d = s.axis + 1; d < s.rank; ++d)
        inner *= s.idxDims[d];
    return ((l / inner) * s.idxDims[s.axis] + k) * inner + l % inner;
}

// ---- Hardmax over x viewed as [outer][extent][inner]: row r = (o, i) gets 1 at its first largest
// element (a later one must be strictly greater, so NaN never takes over), 0 elsewhere.
MEMPLAN_HD inline void hardmaxRow(const float* x, float* y, std::int64_t extent, std::int64_t inner, std::int64_t r)
{
    const std::int64_t base = (r / inner) * extent * inner + r % inner;
    std::int64_t best = 0;
    for (std::int64_t j = 1; j < extent; ++j)
        if (x[base + j * inner] > x[base + best * inner])
            best = j;
    for (std::int64_t j = 0; j < extent; ++j)
        y[base + j * inner] = j == best ? 1.0f : 0.0f;
}

// ---- OneHot: output [outer][depth][inner]; element (o, j, i) is `on` where j is the index at
// (o, i) (float32 indices truncated; a negative one counts from the end), else `off`. Index types:
// float32, int32, int64.
struct OneHotShape {
    std::int64_t depth = 0, inner = 1;
    Scalar indexType = Scalar::Int64;
};

// Whether output element i is the hot one.
MEMPLAN_HD inline bool oneHotHit(std::int64_t i, const void* indices, const OneHotShape& s)
{
    const std::int64_t in = i % s.inner, j = (i / s.inner) % s.depth, o = i / (s.inner * s.depth), at = o * s.inner + in;
    std::int64_t hot = s.indexType == Scalar::Float32 ? std::int64_t(static_cast<const float*>(indices)[at])
        : s.indexType == Scalar::Int32               ? std::int64_t(static_cast<const std::int32_t*>(indices)[at])
                                                     : static_cast<const std::int64_t*>(indices)[at];
    if (hot < 0)
        hot += s.depth;
    return j == hot;
}

// ---- GatherND: output element i, row-major over [batch][tuples][slice], copies element j of the
// slice at index tuple t of batch entry b: the tuple's `depth` indices (each wrapped into its
// dimension, as Gather wraps) over dims[0..depth), the dimensions after batch_dims.
struct GatherNDShape {
    int depth = 0;
    std::int64_t tuples = 1, slice = 1, perBatch = 0; // perBatch: elements of data in one batch entry
    std::int64_t dims[kMaxRank] = {};
};

MEMPLAN_HD inline std::int64_t gatherNDSource(std::int64_t i, const std::int64_t* indices, const GatherNDShape& s)
{
    const std::int64_t j = i % s.slice, tuple = i / s.slice, b = tuple / s.tuples;
    std::int64_t at = 0;
    for (int k = 0; k < s.depth; ++k) {
        const std::int64_t dim = s.dims[k];
        std::int64_t v = dim > 0 ? indices[tuple * s.depth + k] % dim : 0;
        if (v < 0)
            v += dim;
        at = at * dim + v;
    }
    return b * s.perBatch + at * s.slice + j;
}

// ---- ScatterND: y = data, then the slice at each index tuple replaced by its update or combined
// with it. A negative index counts from the end; a tuple with an index out of range is skipped (the
// CPU kernel refuses the whole call then, and the op is synthetic there).
enum class Reduction { None, Add, Mul, Max, Min };

struct ScatterNDShape {
    int depth = 0;
    std::int64_t tuples = 0, slice = 1;
    std::int64_t dims[kMaxRank] = {}, stride[kMaxRank] = {}; // of data's first `depth` dimensions
};

// Offset in data of tuple t's slice, or -1 when one of its indices is out of range.
MEMPLAN_HD inline std::int64_t scatterNDTarget(std::int64_t t, const void* indices, bool indices64, const ScatterNDShape& s)
{
    std::int64_t at = 0;
    for (int d = 0; d < s.depth; ++d) {
        const std::int64_t k = t * s.depth + d;
        std::int64_t v = indices64 ? static_cast<const std::int64_t*>(indices)[k] : std::int64_t(static_cast<const std::int32_t*>(indices)[k]);
        if (v < 0)
            v += s.dims[d];
        if (v < 0 || v >= s.dims[d])
            return -1;
        at += v * s.stride[d];
    }
    return at;
}

// y combined with u as the CPU kernel combines them (std::max and std::min: the first operand unless
// the other is strictly greater, or smaller).
template <class T>
MEMPLAN_HD inline T scatterCombine(Reduction r, T y, T u)
{
    switch (r) {
    case Reduction::Add: return y + u;
    case Reduction::Mul: return y * u;
    case Reduction::Max: return y < u ? u : y;
    case Reduction::Min: return u < y ? u : y;
    case Reduction::None: break;
    }
    return u;
}

// ---- TopK over x viewed as [outer][n][inner]: row r = (o, i) writes its k first elements in rank
// order into values and indices ([outer][k][inner]).
struct TopKShape {
    std::int64_t outer = 1, n = 0, inner = 1, k = 0;
    bool largest = true;
};

// Whether element a (value va) ranks before element b: by value (NaN above every number when taking
// the largest, below when taking the smallest), ties to the lower index, as the CPU's stable sort.
MEMPLAN_HD inline bool topKBefore(float va, std::int64_t a, float vb, std::int64_t b, bool largest)
{
    const bool na = va != va, nb = vb != vb; // NaN
    if (na != nb)
        return na ? largest : !largest;
    if (!na && va != vb)
        return largest ? va > vb : va < vb;
    return a < b;
}

// Row r's top k by selection: each pick is the first in rank order of the elements after the
// previous pick (rank order is total, so no element is picked twice). O(n·k) per row.
MEMPLAN_HD inline void topKRow(const float* x, float* values, std::int64_t* indices, const TopKShape& s, std::int64_t r)
{
    const std::int64_t o = r / s.inner, in = r % s.inner;
    const float* row = x + o * s.n * s.inner + in;
    const std::int64_t out = o * s.k * s.inner + in;
    std::int64_t previous = -1;
    for (std::int64_t j = 0; j < s.k; ++j) {
        std::int64_t best = -1;
        for (std::int64_t a = 0; a < s.n; ++a) {
            if (previous >= 0 && !topKBefore(row[previous * s.inner], previous, row[a * s.inner], a, s.largest))
                continue;
            if (best < 0 || topKBefore(row[a * s.inner], a, row[best * s.inner], best, s.largest))
                best = a;
        }
        values[out + j * s.inner] = row[best * s.inner];
        indices[out + j * s.inner] = best;
        previous = best;
    }
}

} // namespace gpu::kernels
