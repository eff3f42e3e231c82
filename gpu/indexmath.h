// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Per-element math of the index device kernels, with the CPU kernels' rules
// (core/exec/kernels_index.cpp, And/Or/Xor in kernels_elementwise.cpp): ArgMax and ArgMin, CumSum,
// Trilu, GatherElements and the logical ops. Host and device code, as elementmath.h.

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

} // namespace gpu::kernels
