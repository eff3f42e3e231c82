// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Index and scan ops, the ones decoder exports use around attention: ArgMax and ArgMin (greedy
// decoding; float32, int32, int64 in, int64 out), CumSum (position ids; float32, float64, int32,
// int64), Trilu (causal masks; any element type, copied by width), GatherElements and ReverseSequence
// (any element type). Like Gather, GatherElements refuses an index outside [-dim, dim-1] (returns
// false before writing), so nonsense indices never read outside the tensor nor give a wrong answer.
#include "exec/kernels.h"

#include <algorithm>
#include <cstring>

namespace core::exec {

namespace {

// Sizes around `axis`: outer (dimensions before it), the axis' extent, inner (dimensions after it).
struct AxisSplit {
    std::int64_t outer = 1, extent = 1, inner = 1;
};

AxisSplit splitAt(const Shape& shape, int axis)
{
    AxisSplit s;
    for (int d = 0; d < int(shape.size()); ++d) {
        if (d < axis)
            s.outer *= shape[std::size_t(d)];
        else if (d == axis)
            s.extent = shape[std::size_t(d)];
        else
            s.inner *= shape[std::size_t(d)];
    }
    return s;
}

template <class T, bool Max>
void argExtreme(const KernelCall& c, const AxisSplit& s, bool last)
{
    const T* x = reinterpret_cast<const T*>(c.in[0].data);
    std::int64_t* y = c.out[0].i64();
    for (std::int64_t o = 0; o < s.outer; ++o)
        for (std::int64_t i = 0; i < s.inner; ++i) {
            const T* p = x + o * s.extent * s.inner + i;
            std::int64_t best = 0;
            for (std::int64_t k = 1; k < s.extent; ++k) {
                const T v = p[k * s.inner], b = p[best * s.inner];
                const bool better = Max ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
                if (better)
                    best = k;
            }
            y[o * s.inner + i] = best;
        }
}

template <bool Max>
bool argExtreme(const KernelCall& c)
{
    const auto& x = c.in[0];
    const auto& y = c.out[0];
    if (x.rank() == 0 || y.dtype != DType::Int64)
        return false;
    const int axis = normAxis(c.attrInt("axis", 0), x.rank());
    const auto s = splitAt(x.shape, axis);
    if (s.extent <= 0 || s.outer * s.inner != y.count)
        return false;
    const bool last = c.attrInt("select_last_index", 0) != 0;
    switch (x.dtype) {
    case DType::Float32: argExtreme<float, Max>(c, s, last); return true;
    case DType::Int64: argExtreme<std::int64_t, Max>(c, s, last); return true;
    case DType::Int32: argExtreme<std::int32_t, Max>(c, s, last); return true;
    default: return false;
    }
}

template <class T>
void cumSum(const KernelCall& c, const AxisSplit& s, bool exclusive, bool reverse)
{
    const T* x = reinterpret_cast<const T*>(c.in[0].data);
    T* y = reinterpret_cast<T*>(c.out[0].data);
    for (std::int64_t o = 0; o < s.outer; ++o)
        for (std::int64_t i = 0; i < s.inner; ++i) {
            T sum = 0;
            for (std::int64_t n = 0; n < s.extent; ++n) {
                const std::int64_t k = reverse ? s.extent - 1 - n : n;
                const std::int64_t at = (o * s.extent + k) * s.inner + i;
                if (exclusive) {
                    y[at] = sum;
                    sum += x[at];
                } else {
                    sum += x[at];
                    y[at] = sum;
                }
            }
        }
}

bool cumSum(const KernelCall& c)
{
    const auto& x = c.in[0];
    if (!c.has(1) || c.in[1].count != 1 || x.rank() == 0 || x.dtype != c.out[0].dtype || x.count != c.out[0].count)
        return false;
    const int axis = normAxis(intAt(c.in[1], 0), x.rank());
    const auto s = splitAt(x.shape, axis);
    const bool exclusive = c.attrInt("exclusive", 0) != 0, reverse = c.attrInt("reverse", 0) != 0;
    switch (x.dtype) {
    case DType::Float32: cumSum<float>(c, s, exclusive, reverse); return true;
    case DType::Float64: cumSum<double>(c, s, exclusive, reverse); return true;
    case DType::Int64: cumSum<std::int64_t>(c, s, exclusive, reverse); return true;
    case DType::Int32: cumSum<std::int32_t>(c, s, exclusive, reverse); return true;
    default: return false;
    }
}

// Trilu: over the last two dimensions [rows, cols], keeps element (i, j) when j - i >= k (upper) or
// j - i <= k (lower) and zeroes the rest.
bool trilu(const KernelCall& c)
{
    const auto& x = c.in[0];
    const auto& y = c.out[0];
    if (x.rank() < 2 || x.dtype != y.dtype || x.count != y.count || (c.has(1) && c.in[1].count != 1))
        return false;
    const std::int64_t k = c.has(1) ? intAt(c.in[1], 0) : 0;
    const bool upper = c.attrInt("upper", 1) != 0;
    const std::int64_t rows = x.shape[std::size_t(x.rank() - 2)], cols = x.shape[std::size_t(x.rank() - 1)];
    if (rows * cols == 0)
        return true;
    const Bytes w = dtypeBytes(x.dtype);
    const std::int64_t matrices = x.count / (rows * cols);
    for (std::int64_t m = 0; m < matrices; ++m)
        for (std::int64_t i = 0; i < rows; ++i)
            for (std::int64_t j = 0; j < cols; ++j) {
                const std::int64_t at = (m * rows + i) * cols + j;
                const bool keep = upper ? j - i >= k : j - i <= k;
                if (keep)
                    std::memcpy(y.data + at * w, x.data + at * w, std::size_t(w));
                else
                    std::memset(y.data + at * w, 0, std::size_t(w));
            }
    return true;
}

// GatherElements: y[..., i_axis, ...] = x[..., indices[..., i_axis, ...], ...], y shaped as indices.
bool gatherElements(const KernelCall& c)
{
    const auto &x = c.in[0], &idx = c.in[1], &y = c.out[0];
    if (!c.has(1) || x.dtype != y.dtype || x.rank() == 0 || idx.rank() != x.rank() || idx.count != y.count
        || (idx.dtype != DType::Int64 && idx.dtype != DType::Int32))
        return false;
    const int rank = x.rank();
    const int axis = normAxis(c.attrInt("axis", 0), rank);
    for (int d = 0; d < rank; ++d)
        if (d != axis && idx.shape[std::size_t(d)] > x.shape[std::size_t(d)])
            return false;
    const std::int64_t extent = x.shape[std::size_t(axis)];
    if (extent <= 0 && idx.count > 0)
        return false;
    for (std::int64_t n = 0; n < idx.count; ++n)
        if (const auto i = intAt(idx, n); i < -extent || i >= extent)
            return refuseIndex(i, n, extent, 1, 0, axis); // nothing written
    const auto xStrides = stridesOf(x.shape);
    const Bytes w = dtypeBytes(x.dtype);
    Shape at(std::size_t(rank), 0); // position in indices (and y)
    for (std::int64_t n = 0; n < idx.count; ++n) {
        std::int64_t i = intAt(idx, n);
        if (i < 0)
            i += extent;
        std::int64_t from = 0;
        for (int d = 0; d < rank; ++d)
            from += (d == axis ? i : at[std::size_t(d)]) * xStrides[std::size_t(d)];
        std::memcpy(y.data + n * w, x.data + from * w, std::size_t(w));
        for (int d = rank - 1; d >= 0; --d) {
            if (++at[std::size_t(d)] < idx.shape[std::size_t(d)])
                break;
            at[std::size_t(d)] = 0;
        }
    }
    return true;
}

// EyeLike: ones on diagonal k of a 2-D output (its element type from the attribute or the input).
bool eyeLike(const KernelCall& c)
{
    const auto& y = c.out[0];
    if (c.out.size() != 1 || y.rank() != 2)
        return false;
    const double one = 1;
    std::byte value[8] = {};
    switch (y.dtype) {
    case DType::Float32: { const float f = 1; std::memcpy(value, &f, 4); break; }
    case DType::Float64: std::memcpy(value, &one, 8); break;
    case DType::Int64: { const std::int64_t v = 1; std::memcpy(value, &v, 8); break; }
    case DType::Int32: { const std::int32_t v = 1; std::memcpy(value, &v, 4); break; }
    case DType::Int8: case DType::UInt8: case DType::Bool: value[0] = std::byte(1); break;
    default: return false;
    }
    const Bytes width = dtypeBytes(y.dtype);
    std::memset(y.data, 0, std::size_t(y.bytes()));
    const std::int64_t k = c.attrInt("k", 0);
    for (std::int64_t i = 0; i < y.shape[0]; ++i)
        if (i + k >= 0 && i + k < y.shape[1])
            std::memcpy(y.data + (i * y.shape[1] + i + k) * width, value, std::size_t(width));
    return true;
}

// Reverses the first sequence_lens[b] steps along time_axis of each batch entry b; the steps after
// them are copied as they are. time_axis and batch_axis are 0 and 1, either way round. Any element
// type (copied by width). False, nothing written, for a length outside [0, max_time].
bool reverseSequence(const KernelCall& c)
{
    const auto &x = c.in[0], &lens = c.in[1], &y = c.out[0];
    const std::int64_t timeAxis = c.attrInt("time_axis", 0), batchAxis = c.attrInt("batch_axis", 1);
    if (x.rank() < 2 || y.shape != x.shape || y.dtype != x.dtype || timeAxis + batchAxis != 1 || timeAxis < 0 || batchAxis < 0)
        return false;
    const std::int64_t steps = x.shape[std::size_t(timeAxis)], batch = x.shape[std::size_t(batchAxis)];
    if (lens.count != batch)
        return false;
    for (std::int64_t b = 0; b < batch; ++b)
        if (intAt(lens, b) < 0 || intAt(lens, b) > steps)
            return false;
    const std::int64_t inner = x.count / std::max<std::int64_t>(1, steps * batch);
    const std::size_t row = std::size_t(inner * dtypeBytes(x.dtype));
    // Flat row of (step, entry): time-major when time_axis is 0, batch-major otherwise.
    const auto at = [&](std::int64_t t, std::int64_t b) { return std::size_t(timeAxis == 0 ? t * batch + b : b * steps + t); };
    for (std::int64_t b = 0; b < batch; ++b) {
        const std::int64_t len = intAt(lens, b);
        for (std::int64_t t = 0; t < steps; ++t)
            std::memcpy(y.data + at(t, b) * row, x.data + at(t < len ? len - 1 - t : t, b) * row, row);
    }
    return true;
}

} // namespace

void addIndexKernels(std::map<std::string, Kernel>& t)
{
    t["EyeLike"] = eyeLike;
    t["ArgMax"] = argExtreme<true>;
    t["ArgMin"] = argExtreme<false>;
    t["CumSum"] = cumSum;
    t["Trilu"] = trilu;
    t["GatherElements"] = gatherElements;
    t["ReverseSequence"] = reverseSequence;
}

} // namespace core::exec
