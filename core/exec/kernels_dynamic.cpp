// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Data-dependent ops (sizing kernels, see runshape.h): NonZero (any element type), Compress (any
// element type), NonMaxSuppression (float32, ONNX Runtime's selection order), Unique. Each writes its
// outputs packed from the start of the planned room and reports their shapes; an output that would
// not fit the room is refused before anything is written past it.
#include "exec/runshape.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <type_traits>

namespace core::exec {

namespace {

// Element i of x is not zero (floats: -0.0 counts as zero; other types: any bit set).
bool nonZeroAt(const TensorView& x, std::int64_t i)
{
    switch (x.dtype) {
    case DType::Float32: return x.f32()[i] != 0.0f;
    case DType::Float64: return reinterpret_cast<const double*>(x.data)[i] != 0.0;
    case DType::Float16:
    case DType::BFloat16: {
        std::uint16_t bits = 0;
        std::memcpy(&bits, x.data + 2 * i, 2);
        return (bits & 0x7fffu) != 0;
    }
    default: {
        const Bytes w = dtypeBytes(x.dtype);
        const std::byte* p = x.data + i * w;
        return std::any_of(p, p + w, [](std::byte b) { return b != std::byte { 0 }; });
    }
    }
}

// NonZero: [rank, n] int64, row d holding dimension d's index of each non-zero element in
// row-major order.
bool nonZero(const KernelCall& c, std::vector<Shape>& shapes)
{
    const auto &x = c.in[0], &y = c.out[0];
    if (c.out.size() != 1 || y.dtype != DType::Int64 || x.rank() == 0 || dtypeBytes(x.dtype) <= 0 || x.dtype == DType::String)
        return false;
    std::int64_t n = 0;
    for (std::int64_t i = 0; i < x.count; ++i)
        n += nonZeroAt(x, i) ? 1 : 0;
    const std::int64_t rank = x.rank();
    if (rank * n > y.count)
        return false;
    const Shape strides = stridesOf(x.shape);
    std::int64_t k = 0;
    for (std::int64_t i = 0; i < x.count; ++i) {
        if (!nonZeroAt(x, i))
            continue;
        for (std::int64_t d = 0; d < rank; ++d)
            y.i64()[d * n + k] = (i / strides[std::size_t(d)]) % x.shape[std::size_t(d)];
        ++k;
    }
    shapes = { Shape { rank, n } };
    return true;
}

// Compress: the slices along `axis` (the flattened input without one) whose condition is true;
// a condition shorter than the axis leaves the rest out.
bool compress(const KernelCall& c, std::vector<Shape>& shapes)
{
    const auto &x = c.in[0], &y = c.out[0];
    if (!c.has(1) || c.out.size() != 1 || y.dtype != x.dtype || c.in[1].dtype != DType::Bool || dtypeBytes(x.dtype) <= 0)
        return false;
    const auto& cond = c.in[1];
    const bool flat = c.op->attributes.count("axis") == 0;
    Shape shape = flat ? Shape { x.count } : x.shape;
    const int axis = flat ? 0 : int(c.attrInt("axis", 0));
    if (axis < -int(shape.size()) || axis >= int(shape.size()))
        return false;
    const std::size_t a = std::size_t(axis < 0 ? axis + int(shape.size()) : axis);
    const std::int64_t dim = shape[a];
    if (cond.count > dim)
        return false;
    std::int64_t outer = 1, inner = 1;
    for (std::size_t d = 0; d < a; ++d)
        outer *= shape[d];
    for (std::size_t d = a + 1; d < shape.size(); ++d)
        inner *= shape[d];
    std::vector<std::int64_t> kept;
    for (std::int64_t i = 0; i < cond.count; ++i)
        if (cond.data[i] != std::byte { 0 })
            kept.push_back(i);
    const std::int64_t n = std::int64_t(kept.size());
    if (outer * n * inner > y.count)
        return false;
    const Bytes w = dtypeBytes(x.dtype);
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t j = 0; j < n; ++j)
            std::memcpy(y.data + ((o * n + j) * inner) * w, x.data + ((o * dim + kept[std::size_t(j)]) * inner) * w, std::size_t(inner * w));
    shape[a] = n;
    shapes = { shape };
    return true;
}

struct Corners {
    float yMin, xMin, yMax, xMax, area;
};

Corners cornersOf(const float* b, bool centerPoint)
{
    Corners c;
    if (centerPoint) // [x_center, y_center, width, height]
        c = { b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2, 0 };
    else
        c = { std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3]), 0 };
    c.area = (c.xMax - c.xMin) * (c.yMax - c.yMin);
    return c;
}

// True when the two boxes overlap by more than `threshold` (intersection over union).
bool suppresses(const Corners& a, const Corners& b, float threshold)
{
    const float xMin = std::max(a.xMin, b.xMin), xMax = std::min(a.xMax, b.xMax);
    const float yMin = std::max(a.yMin, b.yMin), yMax = std::min(a.yMax, b.yMax);
    if (xMax <= xMin || yMax <= yMin)
        return false;
    const float inter = (xMax - xMin) * (yMax - yMin);
    const float uni = a.area + b.area - inter;
    if (inter <= 0 || a.area <= 0 || b.area <= 0 || uni <= 0)
        return false;
    return inter / uni > threshold;
}

// A class's kept boxes, for the question "does any of them suppress this candidate?". suppresses()
// needs a positive intersection, so only kept boxes overlapping the candidate in x can: those whose
// xMin lies in [candidate xMin - the widest kept box, candidate xMax). Kept boxes with finite x are
// ordered by xMin and only that range is checked; the others (never more than a few) are checked
// always. A candidate with an infinite x range checks them all; one with a NaN x has a NaN area and
// is never suppressed, as the range it gets (none) says. So the answers are those of checking every
// kept box; batched NMS over offset classes (torchvision's trick) checks one class's boxes.
class KeptBoxes {
public:
    void clear()
    {
        m_byXMin.clear();
        m_odd.clear();
        m_widest = 0;
    }
    void add(const Corners& box)
    {
        if (!finite(box)) {
            m_odd.push_back(box);
            return;
        }
        m_byXMin.emplace(box.xMin, box);
        m_widest = std::max(m_widest, double(box.xMax) - double(box.xMin));
    }
    bool suppress(const Corners& box, float threshold) const
    {
        const auto hit = [&](const Corners& kept) { return suppresses(kept, box, threshold); };
        if (std::any_of(m_odd.begin(), m_odd.end(), hit))
            return true;
        // One float step below the double bound: no rounding moves a kept box out of the range.
        const float from = std::nextafter(float(double(box.xMin) - m_widest), -std::numeric_limits<float>::infinity());
        for (auto it = m_byXMin.lower_bound(from); it != m_byXMin.end() && it->first < box.xMax; ++it)
            if (hit(it->second))
                return true;
        return false;
    }
    std::size_t size() const { return m_byXMin.size() + m_odd.size(); }

private:
    static bool finite(const Corners& c) { return std::isfinite(c.xMin) && std::isfinite(c.xMax); }
    std::multimap<float, Corners> m_byXMin;
    std::vector<Corners> m_odd;
    double m_widest = 0;
};

// NonMaxSuppression: boxes [B, N, 4], scores [B, C, N]; per batch and class, candidates above
// score_threshold by falling score (ties: lower box index first), each kept unless it overlaps a
// kept box by more than iou_threshold, at most max_output_boxes_per_class. Output [selected, 3]:
// (batch, class, box) in that order.
bool nonMaxSuppression(const KernelCall& c, std::vector<Shape>& shapes)
{
    const auto &boxes = c.in[0], &y = c.out[0];
    if (!c.has(1) || c.out.size() != 1 || y.dtype != DType::Int64 || boxes.dtype != DType::Float32 || c.in[1].dtype != DType::Float32)
        return false;
    const auto& scores = c.in[1];
    if (boxes.rank() != 3 || scores.rank() != 3 || boxes.shape[2] != 4 || scores.shape[0] != boxes.shape[0] || scores.shape[2] != boxes.shape[1])
        return false;
    const std::int64_t batches = boxes.shape[0], classes = scores.shape[1], n = boxes.shape[1];
    const std::int64_t maxOut = c.has(2) && c.in[2].count > 0 ? std::max<std::int64_t>(0, intAt(c.in[2], 0)) : 0;
    const bool floatArgs = (!c.has(3) || (c.in[3].dtype == DType::Float32 && c.in[3].count > 0))
        && (!c.has(4) || (c.in[4].dtype == DType::Float32 && c.in[4].count > 0));
    if (!floatArgs)
        return false;
    const float iou = c.has(3) ? c.in[3].f32()[0] : 0.0f;
    const bool thresholded = c.has(4);
    const float minScore = thresholded ? c.in[4].f32()[0] : 0.0f;
    const bool centerPoint = c.attrInt("center_point_box", 0) != 0;
    std::int64_t selectedCount = 0;
    std::vector<std::int64_t> candidates;
    std::vector<Corners> corners; // the batch's boxes, once
    KeptBoxes kept;
    for (std::int64_t b = 0; b < batches && maxOut > 0; ++b) {
        corners.clear();
        for (std::int64_t i = 0; i < n; ++i)
            corners.push_back(cornersOf(boxes.f32() + (b * n + i) * 4, centerPoint));
        for (std::int64_t k = 0; k < classes; ++k) {
            const float* s = scores.f32() + (b * classes + k) * n;
            candidates.clear();
            for (std::int64_t i = 0; i < n; ++i)
                if (!thresholded || s[i] > minScore)
                    candidates.push_back(i);
            std::stable_sort(candidates.begin(), candidates.end(), [&](std::int64_t l, std::int64_t r) { return s[l] > s[r]; });
            kept.clear();
            for (auto i : candidates) {
                if (std::int64_t(kept.size()) == maxOut)
                    break;
                const Corners& box = corners[std::size_t(i)];
                if (kept.suppress(box, iou))
                    continue;
                kept.add(box);
                if ((selectedCount + 1) * 3 > y.count)
                    return false;
                std::int64_t* row = y.i64() + selectedCount * 3;
                row[0] = b;
                row[1] = k;
                row[2] = i;
                ++selectedCount;
            }
        }
    }
    shapes = { Shape { selectedCount, 3 } };
    return true;
}

template <typename T>
bool uniqueAs(const KernelCall& c, std::vector<Shape>& shapes)
{
    const auto& x = c.in[0];
    const bool flat = c.op->attributes.count("axis") == 0;
    Shape shape = flat ? Shape { x.count } : x.shape;
    const std::int64_t rank = std::int64_t(shape.size()), axisAttr = c.attrInt("axis", 0);
    if (rank == 0 || axisAttr < -rank || axisAttr >= rank)
        return false;
    const std::size_t a = std::size_t(axisAttr < 0 ? axisAttr + rank : axisAttr);
    std::int64_t outer = 1, inner = 1;
    for (std::size_t d = 0; d < a; ++d)
        outer *= shape[d];
    for (std::size_t d = a + 1; d < shape.size(); ++d)
        inner *= shape[d];
    const std::int64_t dim = shape[a];
    const T* v = reinterpret_cast<const T*>(x.data);
    if constexpr (std::is_floating_point_v<T>)
        if (std::any_of(v, v + x.count, [](T e) { return std::isnan(e); }))
            return false; // NaN has no place in a sorted order
    // Slice j along the axis, compared element by element in (outer, inner) order as numpy.unique does.
    auto at = [&](std::int64_t j, std::int64_t e) { return v[((e / inner) * dim + j) * inner + e % inner]; };
    const std::int64_t sliceSize = outer * inner;
    auto less = [&](std::int64_t l, std::int64_t r) {
        for (std::int64_t e = 0; e < sliceSize; ++e)
            if (at(l, e) != at(r, e))
                return at(l, e) < at(r, e);
        return false;
    };
    auto same = [&](std::int64_t l, std::int64_t r) { return !less(l, r) && !less(r, l); };
    // First occurrences in input order, then (sorted) ordered by value.
    std::vector<std::int64_t> order(static_cast<std::size_t>(dim));
    for (std::int64_t j = 0; j < dim; ++j)
        order[std::size_t(j)] = j;
    std::stable_sort(order.begin(), order.end(), less);
    std::vector<std::int64_t> group(static_cast<std::size_t>(dim)), firsts;
    for (std::size_t k = 0; k < order.size(); ++k) {
        if (k == 0 || !same(order[k - 1], order[k]))
            firsts.push_back(order[k]); // stable sort: the first occurrence leads its run
        group[std::size_t(order[k])] = std::int64_t(firsts.size()) - 1;
    }
    const std::int64_t n = std::int64_t(firsts.size());
    std::vector<std::int64_t> rankOf(static_cast<std::size_t>(n)); // unique value (sorted position) -> output position
    for (std::int64_t u = 0; u < n; ++u)
        rankOf[std::size_t(u)] = u;
    if (c.attrInt("sorted", 1) == 0) {
        std::vector<std::int64_t> byFirst(static_cast<std::size_t>(n));
        for (std::int64_t u = 0; u < n; ++u)
            byFirst[std::size_t(u)] = u;
        std::sort(byFirst.begin(), byFirst.end(), [&](std::int64_t l, std::int64_t r) { return firsts[std::size_t(l)] < firsts[std::size_t(r)]; });
        for (std::int64_t k = 0; k < n; ++k)
            rankOf[std::size_t(byFirst[std::size_t(k)])] = k;
    }
    std::vector<std::int64_t> first(static_cast<std::size_t>(n)), counts(static_cast<std::size_t>(n), 0);
    for (std::int64_t u = 0; u < n; ++u)
        first[std::size_t(rankOf[std::size_t(u)])] = firsts[std::size_t(u)];
    for (std::int64_t j = 0; j < dim; ++j)
        ++counts[std::size_t(rankOf[std::size_t(group[std::size_t(j)])])];
    Shape yShape = shape;
    yShape[a] = n;
    const Shape sizes[] = { yShape, { n }, { dim }, { n } };
    for (std::size_t k = 0; k < c.out.size(); ++k)
        if (c.out[k].present() && ((k > 0 && c.out[k].dtype != DType::Int64) || elementCount(sizes[c.outSlot(k)]) > c.out[k].count))
            return false;
    shapes.clear();
    for (std::size_t k = 0; k < c.out.size(); ++k) {
        const int slot = c.outSlot(k);
        shapes.push_back(sizes[slot]);
        const auto& y = c.out[k];
        if (!y.present())
            continue;
        if (slot == 0) {
            T* out = reinterpret_cast<T*>(y.data);
            for (std::int64_t o = 0; o < outer; ++o)
                for (std::int64_t u = 0; u < n; ++u)
                    for (std::int64_t i = 0; i < inner; ++i)
                        out[(o * n + u) * inner + i] = v[(o * dim + first[std::size_t(u)]) * inner + i];
        } else {
            const auto& src = slot == 1 ? first : slot == 3 ? counts : std::vector<std::int64_t> {};
            if (slot == 2)
                for (std::int64_t j = 0; j < dim; ++j)
                    y.i64()[j] = rankOf[std::size_t(group[std::size_t(j)])];
            else
                std::copy(src.begin(), src.end(), y.i64());
        }
    }
    return true;
}

// Unique (float32, float64, int64, int32, int8, uint8): the distinct values (with an axis: slices)
// sorted ascending or in order of first occurrence, their first indices, each input's position
// among them and their counts.
bool unique(const KernelCall& c, std::vector<Shape>& shapes)
{
    if (c.out.empty() || c.out.size() > 4 || c.out[0].dtype != c.in[0].dtype)
        return false;
    switch (c.in[0].dtype) {
    case DType::Float32: return uniqueAs<float>(c, shapes);
    case DType::Float64: return uniqueAs<double>(c, shapes);
    case DType::Int64: return uniqueAs<std::int64_t>(c, shapes);
    case DType::Int32: return uniqueAs<std::int32_t>(c, shapes);
    case DType::Int8: return uniqueAs<std::int8_t>(c, shapes);
    case DType::UInt8: return uniqueAs<std::uint8_t>(c, shapes);
    default: return false;
    }
}

} // namespace

SizingKernel findSizingKernel(const std::string& opType)
{
    static const std::map<std::string, SizingKernel> table {
        { "NonZero", nonZero },
        { "Compress", compress },
        { "NonMaxSuppression", nonMaxSuppression },
        { "Unique", unique },
    };
    const auto it = table.find(opType);
    return it == table.end() ? nullptr : it->second;
}

} // namespace core::exec
