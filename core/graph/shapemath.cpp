// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "graph/shapemath.h"

#include <algorithm>

namespace core {

std::int64_t elementCount(const Dims& dims)
{
    std::int64_t n = 1;
    for (auto d : dims) {
        if (d < 0)
            return -1;
        if (d == 0)
            return 0;
    }
    for (auto d : dims) {
        if (__builtin_mul_overflow(n, d, &n))
            return -1;
    }
    return n;
}

std::optional<Dims> broadcastDims(const std::vector<Dims>& shapes)
{
    std::size_t rank = 0;
    for (const auto& s : shapes)
        rank = std::max(rank, s.size());
    Dims out(rank, 1);
    for (std::size_t k = 0; k < rank; ++k) {
        std::int64_t result = 1;
        bool unknown = false;
        for (const auto& s : shapes) {
            if (k >= s.size())
                continue;
            const std::int64_t d = s[s.size() - 1 - k];
            if (d < 0) {
                unknown = true;
                continue;
            }
            if (d == 1)
                continue;
            if (result != 1 && result != d)
                return std::nullopt;
            result = d;
        }
        // An unknown dim against known ones: the result is the known non-1 dim if any, else unknown.
        out[rank - 1 - k] = unknown && result == 1 ? -1 : result;
    }
    return out;
}

std::optional<std::vector<SliceAxis>> sliceAxes(const Dims& dims, const std::vector<std::int64_t>& starts,
                                                const std::vector<std::int64_t>& ends,
                                                const std::vector<std::int64_t>& axes,
                                                const std::vector<std::int64_t>& steps)
{
    const auto rank = std::int64_t(dims.size());
    std::vector<SliceAxis> plan(rank);
    for (std::int64_t d = 0; d < rank; ++d)
        plan[d] = { 0, 1, dims[d] };
    if (starts.size() != ends.size() || (!axes.empty() && axes.size() != starts.size())
        || (!steps.empty() && steps.size() != starts.size()))
        return std::nullopt;
    for (std::size_t i = 0; i < starts.size(); ++i) {
        auto axis = normalizeAxis(axes.empty() ? std::int64_t(i) : axes[i], rank);
        const std::int64_t step = steps.empty() ? 1 : steps[i];
        if (!axis || step == 0)
            return std::nullopt;
        const std::int64_t dim = dims[*axis];
        if (dim < 0)
            return std::nullopt;
        std::int64_t start = starts[i], end = ends[i];
        if (start < 0)
            start += dim;
        if (end < 0)
            end += dim;
        std::int64_t count = 0;
        if (step > 0) {
            start = std::clamp<std::int64_t>(start, 0, dim);
            end = std::clamp<std::int64_t>(end, 0, dim);
            count = end > start ? (end - start + step - 1) / step : 0;
        } else {
            start = std::clamp<std::int64_t>(start, 0, dim - 1);
            end = std::clamp<std::int64_t>(end, -1, dim - 1);
            count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
        }
        plan[*axis] = { start, step, count };
    }
    return plan;
}

std::optional<Dims> reshapeDims(const Dims& input, const std::vector<std::int64_t>& shape, bool allowZero)
{
    Dims out;
    int inferAt = -1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        std::int64_t d = shape[i];
        if (d == 0 && !allowZero) {
            if (i >= input.size())
                return std::nullopt;
            d = input[i];
        } else if (d == -1) {
            if (inferAt >= 0)
                return std::nullopt;
            inferAt = int(i);
        } else if (d < -1)
            return std::nullopt;
        out.push_back(d);
    }
    if (inferAt >= 0) {
        out[inferAt] = 1;
        const std::int64_t total = elementCount(input);
        const std::int64_t known = elementCount(out);
        if (total < 0 || known < 0)
            out[inferAt] = -1;
        else if (known == 0)
            out[inferAt] = total == 0 ? 0 : -2; // -2: impossible, rejected below
        else if (total % known != 0)
            return std::nullopt;
        else
            out[inferAt] = total / known;
        if (out[inferAt] == -2)
            return std::nullopt;
    }
    return out;
}

std::optional<std::vector<std::int64_t>> transposeOrder(const std::vector<std::int64_t>* perm, std::size_t rank)
{
    if (!perm || perm->empty()) {
        std::vector<std::int64_t> reversed(rank);
        for (std::size_t d = 0; d < rank; ++d)
            reversed[d] = std::int64_t(rank - 1 - d);
        return reversed;
    }
    if (perm->size() != rank)
        return std::nullopt;
    std::vector<bool> seen(rank, false);
    for (auto p : *perm) {
        if (p < 0 || p >= std::int64_t(rank) || seen[std::size_t(p)])
            return std::nullopt;
        seen[std::size_t(p)] = true;
    }
    return *perm;
}

std::int64_t windowOutputLength(std::int64_t size, const WindowAxis& a, const std::string& autoPad, bool ceilMode, bool transposed)
{
    if (size < 0 || a.kernel < 0)
        return -1;
    const std::int64_t s = std::max<std::int64_t>(a.stride, 1);
    const std::int64_t effective = (a.kernel - 1) * a.dilation + 1;
    const bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
    if (transposed)
        return same ? size * s : s * (size - 1) + a.outputPadding + effective - a.padBegin - a.padEnd;
    if (same)
        return (size + s - 1) / s;
    if (autoPad == "VALID")
        return size >= effective ? (size - effective) / s + 1 : 0;
    const std::int64_t total = size + a.padBegin + a.padEnd - effective;
    if (total < 0)
        return 0;
    return (ceilMode ? (total + s - 1) / s : total / s) + 1;
}

std::optional<std::int64_t> normalizeAxis(std::int64_t axis, std::int64_t rank)
{
    if (axis < -rank || axis >= rank)
        return std::nullopt;
    return axis < 0 ? axis + rank : axis;
}

} // namespace core
