// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Data movement, any element type (copied by element width): views (Reshape, Flatten, Squeeze,
// Unsqueeze, Identity, Dropout; SwapOut/SwapIn of the swap strategy), Transpose, Concat, Split,
// Slice, Gather, ScatterND, Expand, Tile, Pad, and the shape-computation ops Shape, Size, Range. Output shapes
// come from the graph, so views are plain copies and shape arguments (Reshape's second input) need
// not be read.
#include "exec/kernels.h"
#include "exec/opattrs.h"
#include "graph/shapemath.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

namespace core::exec {

namespace {

bool sameBytes(const TensorView& a, const TensorView& b) { return a.dtype == b.dtype && a.count == b.count; }

// Reshape and friends: the output is the input's bytes under another shape.
bool view(const KernelCall& c)
{
    if (!c.has(0) || c.out.empty() || !sameBytes(c.in[0], c.out[0]))
        return false;
    // memmove: an alias/in-place strategy may give the view its input's own buffer.
    std::memmove(c.out[0].data, c.in[0].data, std::size_t(c.out[0].bytes()));
    return true;
}

// Dropout in inference, or in training at ratio 0 (exporters leave training_mode on with ratio 0,
// which drops nothing): Y = X, mask all true.
bool dropout(const KernelCall& c)
{
    const bool training = c.attrInt("training_mode", 0) != 0 || (c.has(2) && c.in[2].count > 0 && c.in[2].data[0] != std::byte(0));
    if (training) {
        float ratio = c.attrFloat("ratio", 0.5f);
        if (c.has(1)) {
            if (c.in[1].dtype != DType::Float32 || c.in[1].count != 1)
                return false;
            ratio = c.in[1].f32()[0];
        }
        if (ratio != 0.0f)
            return false;
    }
    if (!view(c))
        return false;
    if (c.out.size() > 1)
        std::fill(c.out[1].data, c.out[1].data + c.out[1].bytes(), std::byte(1));
    return true;
}

// Calls f(outIndex, inIndex) with the input index from per-output-dimension strides.
template <class F>
void walk(const Shape& out, const Shape& inStrides, F f)
{
    const int rank = int(out.size());
    std::int64_t total = 1;
    for (auto d : out)
        total *= d;
    Shape counter(rank, 0);
    std::int64_t in = 0;
    for (std::int64_t o = 0; o < total; ++o) {
        f(o, in);
        for (int d = rank - 1; d >= 0; --d) {
            in += inStrides[d];
            if (++counter[d] < out[d])
                break;
            in -= inStrides[d] * out[d];
            counter[d] = 0;
        }
    }
}

void copyElement(const TensorView& to, std::int64_t o, const TensorView& from, std::int64_t i)
{
    const Bytes w = dtypeBytes(to.dtype);
    std::memcpy(to.data + o * w, from.data + i * w, std::size_t(w));
}

bool transpose(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    if (!sameBytes(x, y) || x.rank() != y.rank())
        return false;
    const auto perm = transposeOrder(c.attrInts("perm"), std::size_t(x.rank()));
    if (!perm)
        return false;
    const auto s = stridesOf(x.shape);
    Shape inStrides(x.rank());
    for (int d = 0; d < x.rank(); ++d) {
        const auto from = std::size_t((*perm)[std::size_t(d)]);
        if (x.shape[from] != y.shape[d])
            return false;
        inStrides[d] = s[from];
    }
    walk(y.shape, inStrides, [&](std::int64_t o, std::int64_t i) { copyElement(y, o, x, i); });
    return true;
}

// [outer, axisDim, inner] blocks joined (Concat) or cut (Split) along `axis`.
bool concat(const KernelCall& c)
{
    const auto& y = c.out[0];
    const int axis = normAxis(c.attrInt("axis", 0), y.rank());
    if (y.rank() == 0)
        return false;
    std::int64_t outer = 1;
    for (int d = 0; d < axis; ++d)
        outer *= y.shape[d];
    const Bytes w = dtypeBytes(y.dtype);
    const Bytes rowOut = y.count / std::max<std::int64_t>(outer, 1) * w;
    Bytes total = 0;
    for (const auto& x : c.in)
        if (x.present()) {
            if (x.dtype != y.dtype || x.rank() != y.rank())
                return false;
            total += x.bytes();
        }
    if (total != y.bytes())
        return false;
    Bytes at = 0;
    for (const auto& x : c.in) {
        if (!x.present())
            continue;
        const Bytes row = x.bytes() / std::max<std::int64_t>(outer, 1);
        for (std::int64_t o = 0; o < outer; ++o)
            if (y.data + o * rowOut + at != x.data + o * row) // an input already in its slice (in-place Concat)
                std::memcpy(y.data + o * rowOut + at, x.data + o * row, std::size_t(row));
        at += row;
    }
    return true;
}

bool split(const KernelCall& c)
{
    const auto& x = c.in[0];
    const int axis = normAxis(c.attrInt("axis", 0), x.rank());
    if (x.rank() == 0)
        return false;
    std::int64_t outer = 1;
    for (int d = 0; d < axis; ++d)
        outer *= x.shape[d];
    const Bytes rowIn = x.bytes() / std::max<std::int64_t>(outer, 1);
    Bytes total = 0;
    for (const auto& y : c.out) {
        if (y.dtype != x.dtype)
            return false;
        total += y.bytes();
    }
    if (total != x.bytes())
        return false;
    Bytes at = 0;
    for (const auto& y : c.out) {
        const Bytes row = y.bytes() / std::max<std::int64_t>(outer, 1);
        for (std::int64_t o = 0; o < outer; ++o)
            std::memcpy(y.data + o * row, x.data + o * rowIn + at, std::size_t(row));
        at += row;
    }
    return true;
}

// Slice (opset 10+: starts/ends/axes/steps inputs; opset 1: attributes). Output extents from the
// graph; each output coordinate maps to start + k * step, clamped into the input.
bool slice(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    if (x.dtype != y.dtype || x.rank() != y.rank())
        return false;
    const int rank = x.rank();
    Shape first, step;
    if (!sliceStarts(c, first, step))
        return false;
    const auto xs = stridesOf(x.shape);
    const Shape ys = stridesOf(y.shape);
    Shape counter(rank, 0);
    for (std::int64_t o = 0; o < y.count; ++o) {
        std::int64_t i = 0;
        std::int64_t rest = o;
        for (int d = 0; d < rank; ++d) {
            const std::int64_t k = rest / ys[d];
            rest %= ys[d];
            i += std::clamp<std::int64_t>(first[d] + k * step[d], 0, x.shape[d] - 1) * xs[d];
        }
        copyElement(y, o, x, i);
    }
    return true;
}

// ScatterND: Y = data, then the slice at each index tuple of `indices` (its last dimension long)
// replaced by its update, or combined with it (reduction add, mul, max, min: float32 and int64).
// Every index is checked before anything is written; an out-of-range one leaves the op synthetic.
template <class T>
void combine(T* y, const T* u, std::int64_t n, const std::string& reduction)
{
    for (std::int64_t e = 0; e < n; ++e)
        y[e] = reduction == "add" ? y[e] + u[e] : reduction == "mul" ? y[e] * u[e] : reduction == "max" ? std::max(y[e], u[e]) : std::min(y[e], u[e]);
}

bool scatterND(const KernelCall& c)
{
    if (c.in.size() < 3 || !c.has(1) || !c.has(2) || c.out.size() != 1)
        return false;
    const auto &x = c.in[0], &idx = c.in[1], &upd = c.in[2], &y = c.out[0];
    const auto reduction = c.attrText("reduction", "none");
    const bool reduces = reduction != "none";
    if (x.dtype != y.dtype || upd.dtype != x.dtype || x.count != y.count || (idx.dtype != DType::Int64 && idx.dtype != DType::Int32)
        || idx.rank() < 1 || (reduces && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min")
        || (reduces && x.dtype != DType::Float32 && x.dtype != DType::Int64))
        return false;
    const std::int64_t k = idx.shape.back();
    if (k < 1 || k > x.rank())
        return false;
    const std::int64_t tuples = idx.count / k;
    const auto strides = stridesOf(x.shape);
    const std::int64_t slice = k < x.rank() ? strides[std::size_t(k - 1)] : 1;
    if (tuples * slice != upd.count)
        return false;
    std::vector<std::int64_t> at(std::size_t(tuples), 0);
    for (std::int64_t t = 0; t < tuples; ++t)
        for (std::int64_t d = 0; d < k; ++d) {
            std::int64_t i = intAt(idx, t * k + d);
            const std::int64_t dim = x.shape[std::size_t(d)];
            if (i < -dim || i >= dim)
                return refuseIndex(i, t * k + d, dim, 1, 0, int(d));
            if (i < 0)
                i += dim;
            at[std::size_t(t)] += i * strides[std::size_t(d)];
        }
    const Bytes w = dtypeBytes(x.dtype);
    if (y.data != x.data)
        std::memmove(y.data, x.data, std::size_t(y.bytes()));
    for (std::int64_t t = 0; t < tuples; ++t) {
        std::byte* to = y.data + at[std::size_t(t)] * w;
        const std::byte* from = upd.data + t * slice * w;
        if (!reduces)
            std::memcpy(to, from, std::size_t(slice * w));
        else if (x.dtype == DType::Float32)
            combine(reinterpret_cast<float*>(to), reinterpret_cast<const float*>(from), slice, reduction);
        else
            combine(reinterpret_cast<std::int64_t*>(to), reinterpret_cast<const std::int64_t*>(from), slice, reduction);
    }
    return true;
}

bool gather(const KernelCall& c)
{
    const auto &x = c.in[0], &idx = c.in[1], &y = c.out[0];
    if (!c.has(1) || x.dtype != y.dtype || x.rank() == 0 || (idx.dtype != DType::Int64 && idx.dtype != DType::Int32))
        return false;
    const int axis = normAxis(c.attrInt("axis", 0), x.rank());
    std::int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d)
        outer *= x.shape[d];
    for (int d = axis + 1; d < x.rank(); ++d)
        inner *= x.shape[d];
    const std::int64_t dim = x.shape[axis];
    if (outer * idx.count * inner != y.count || dim <= 0)
        return false;
    // An index outside [-dim, dim-1] is refused (nothing written): ONNX leaves the result undefined.
    for (std::int64_t k = 0; k < idx.count; ++k)
        if (const auto i = intAt(idx, k); i < -dim || i >= dim)
            return refuseIndex(i, k, dim, 1, 0, axis);
    const Bytes w = dtypeBytes(x.dtype), chunk = inner * w;
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t k = 0; k < idx.count; ++k) {
            std::int64_t i = intAt(idx, k);
            if (i < 0)
                i += dim;
            std::memcpy(y.data + (o * idx.count + k) * chunk, x.data + (o * dim + i) * chunk, std::size_t(chunk));
        }
    return true;
}

// Strides of `in` broadcast to `out` (numpy rules; 0 on broadcast dimensions).
bool broadcastStrides(const Shape& in, const Shape& out, Shape& strides)
{
    if (in.size() > out.size())
        return false;
    const auto s = stridesOf(in);
    strides.assign(out.size(), 0);
    const std::size_t off = out.size() - in.size();
    for (std::size_t d = 0; d < in.size(); ++d) {
        if (in[d] != 1 && in[d] != out[off + d])
            return false;
        strides[off + d] = in[d] == 1 ? 0 : s[d];
    }
    return true;
}

bool expand(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    Shape strides;
    if (x.dtype != y.dtype || !broadcastStrides(x.shape, y.shape, strides))
        return false;
    walk(y.shape, strides, [&](std::int64_t o, std::int64_t i) { copyElement(y, o, x, i); });
    return true;
}

bool tile(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    if (x.dtype != y.dtype || x.rank() != y.rank())
        return false;
    const auto xs = stridesOf(x.shape), ys = stridesOf(y.shape);
    for (std::int64_t o = 0; o < y.count; ++o) {
        std::int64_t i = 0, rest = o;
        for (int d = 0; d < y.rank(); ++d) {
            const std::int64_t k = rest / ys[d];
            rest %= ys[d];
            i += (x.shape[d] > 0 ? k % x.shape[d] : 0) * xs[d];
        }
        copyElement(y, o, x, i);
    }
    return true;
}

// Pad: constant (value from input 2 or the `value` attribute), edge, reflect. Pads from input 1
// (opset 11+) or the `pads` attribute; the optional axes input is not supported.
bool pad(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    PadAttrs a;
    if (x.dtype != y.dtype || x.rank() != y.rank() || !padAttrs(c, a))
        return false;
    const int rank = x.rank();
    const auto& pads = a.pads;
    const float fill = a.fill;
    if (a.mode == PadAttrs::Mode::Constant && x.dtype != DType::Float32 && fill != 0.0f && !(c.has(2) && c.in[2].dtype == x.dtype))
        return false;
    const auto xs = stridesOf(x.shape), ys = stridesOf(y.shape);
    const Bytes w = dtypeBytes(x.dtype);
    for (std::int64_t o = 0; o < y.count; ++o) {
        std::int64_t i = 0, rest = o;
        bool outside = false;
        for (int d = 0; d < rank; ++d) {
            std::int64_t k = rest / ys[d] - pads[d];
            rest %= ys[d];
            const std::int64_t n = x.shape[d];
            if (k < 0 || k >= n) {
                if (a.mode == PadAttrs::Mode::Constant || n == 0)
                    outside = true;
                else if (a.mode == PadAttrs::Mode::Edge)
                    k = std::clamp<std::int64_t>(k, 0, n - 1);
                else {
                    const std::int64_t period = std::max<std::int64_t>(2 * (n - 1), 1);
                    k = ((k % period) + period) % period;
                    if (k >= n)
                        k = period - k;
                }
            }
            i += std::clamp<std::int64_t>(k, 0, std::max<std::int64_t>(n - 1, 0)) * xs[d];
        }
        if (!outside)
            copyElement(y, o, x, i);
        else if (c.has(2) && c.in[2].dtype == x.dtype)
            std::memcpy(y.data + o * w, c.in[2].data, std::size_t(w));
        else if (x.dtype == DType::Float32)
            y.f32()[o] = fill;
        else
            std::memset(y.data + o * w, 0, std::size_t(w));
    }
    return true;
}

bool shapeOp(const KernelCall& c)
{
    const auto& x = c.in[0];
    const auto& y = c.out[0];
    const int rank = x.rank();
    std::int64_t start = c.attrInt("start", 0), end = c.attrInt("end", rank);
    if (start < 0)
        start += rank;
    if (end < 0)
        end += rank;
    start = std::clamp<std::int64_t>(start, 0, rank);
    end = std::clamp<std::int64_t>(end, start, rank);
    if (y.dtype != DType::Int64 || y.count != end - start)
        return false;
    for (std::int64_t d = start; d < end; ++d)
        y.i64()[d - start] = x.shape[d];
    return true;
}

bool sizeOp(const KernelCall& c)
{
    if (c.out[0].dtype != DType::Int64 || c.out[0].count != 1)
        return false;
    c.out[0].i64()[0] = c.in[0].count;
    return true;
}

bool range(const KernelCall& c)
{
    const auto& y = c.out[0];
    if (c.in.size() != 3 || !c.has(0) || !c.has(2) || c.in[0].dtype != y.dtype)
        return false;
    if (y.dtype == DType::Float32) {
        const float start = c.in[0].f32()[0], delta = c.in[2].f32()[0];
        for (std::int64_t i = 0; i < y.count; ++i)
            y.f32()[i] = start + float(i) * delta;
        return true;
    }
    if (y.dtype == DType::Int64 || y.dtype == DType::Int32) {
        const std::int64_t start = intAt(c.in[0], 0), delta = intAt(c.in[2], 0);
        for (std::int64_t i = 0; i < y.count; ++i) {
            if (y.dtype == DType::Int64)
                y.i64()[i] = start + i * delta;
            else
                reinterpret_cast<std::int32_t*>(y.data)[i] = std::int32_t(start + i * delta);
        }
        return true;
    }
    return false;
}

// Cubic convolution weights of the four taps floor(x) - 1 .. floor(x) + 2 at fraction r of the way
// from floor(x) (Keys, with a = cubic_coeff_a), as the ONNX reference computes them.
std::array<float, 4> cubicWeights(float r, float a)
{
    const auto far = [a](float t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; }; // 1 <= t < 2
    const auto near = [a](float t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };     // 0 <= t < 1
    return { far(r + 1), near(r), near(1 - r), far(2 - r) };
}

// Resize/Upsample (float32): modes nearest, linear and cubic (cubic_coeff_a, exclude_outside);
// coordinate transformations half_pixel, pytorch_half_pixel, align_corners, asymmetric,
// tf_half_pixel_for_nn and tf_crop_and_resize (its region from the roi input; outside the input,
// extrapolation_value). Scales from the scales input when given, else output/input extents.
// Separable: each output element sums the product, over the axes, of per-axis taps (an input index
// and its weight). antialias and axes: not supported.
bool resize(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    ResizeAttrs a;
    if (x.dtype != DType::Float32 || y.dtype != DType::Float32 || !resizeAttrs(c, a))
        return false;
    using Transform = ResizeAttrs::Transform;
    using Rounding = ResizeAttrs::Rounding;
    using Mode = ResizeAttrs::Mode;
    const int rank = x.rank();
    const auto& scale = a.scale;
    auto source = [&](int d, std::int64_t o) -> float {
        // ONNX: the resized length is in * scale (not rounded) when scales are given.
        const float in = float(x.shape[d]), out = a.givenScales ? in * scale[d] : float(y.shape[d]);
        switch (a.transform) {
        case Transform::AlignCorners: return out <= 1 ? 0.0f : float(o) * (in - 1) / (out - 1);
        case Transform::Asymmetric: return float(o) / scale[d];
        case Transform::TfHalfPixelForNn: return (float(o) + 0.5f) / scale[d];
        case Transform::TfCropAndResize: {
            const float start = a.roi[d], end = a.roi[rank + d];
            const float span = out <= 1 ? 0.5f * (end - start) * (in - 1) : float(o) * (end - start) * (in - 1) / (out - 1);
            return span + start * (in - 1);
        }
        case Transform::PytorchHalfPixel:
            if (out <= 1)
                return -0.5f;
            [[fallthrough]];
        case Transform::HalfPixel: break;
        }
        return (float(o) + 0.5f) / scale[d] - 0.5f;
    };
    struct Tap {
        std::int64_t index;
        float weight;
    };
    // Per axis and output coordinate: its taps; none when it falls outside tf_crop_and_resize's input.
    std::vector<std::vector<std::vector<Tap>>> taps(rank);
    for (int d = 0; d < rank; ++d) {
        const std::int64_t n = x.shape[d];
        if (n <= 0)
            return y.count == 0;
        const bool resized = x.shape[d] != y.shape[d] || a.transform == Transform::TfCropAndResize;
        for (std::int64_t o = 0; o < y.shape[d]; ++o) {
            auto& t = taps[d].emplace_back();
            float v = source(d, o);
            if (a.transform == Transform::TfCropAndResize && (v < 0 || v > float(n - 1)))
                continue;
            if (a.mode == Mode::Nearest) {
                std::int64_t i = 0;
                if (a.rounding == Rounding::Floor)
                    i = std::int64_t(std::floor(v));
                else if (a.rounding == Rounding::Ceil)
                    i = std::int64_t(std::ceil(v));
                else if (a.rounding == Rounding::RoundPreferCeil)
                    i = std::int64_t(std::floor(v + 0.5f));
                else
                    i = v - std::floor(v) == 0.5f ? std::int64_t(std::floor(v)) : std::int64_t(std::round(v));
                t.push_back({ std::clamp<std::int64_t>(i, 0, n - 1), 1.0f });
            } else if (!resized) {
                t.push_back({ o, 1.0f });
            } else if (a.mode == Mode::Linear) {
                v = std::clamp(v, 0.0f, float(n - 1));
                const auto i0 = std::int64_t(std::floor(v));
                const float w = v - float(i0);
                t.push_back({ i0, 1.0f - w });
                t.push_back({ std::min(i0 + 1, n - 1), w });
            } else {
                const auto i0 = std::int64_t(std::floor(v));
                const auto w = cubicWeights(v - float(i0), a.cubicA);
                float kept = 0;
                for (int k = 0; k < 4; ++k) {
                    const std::int64_t i = i0 - 1 + k;
                    const bool outside = i < 0 || i >= n;
                    if (a.excludeOutside && outside)
                        continue;
                    t.push_back({ std::clamp<std::int64_t>(i, 0, n - 1), w[std::size_t(k)] }); // edge padding
                    kept += w[std::size_t(k)];
                }
                if (a.excludeOutside && kept != 0)
                    for (auto& tap : t)
                        tap.weight /= kept;
            }
        }
    }
    const auto xs = stridesOf(x.shape), ys = stridesOf(y.shape);
    Shape coord(rank);
    std::vector<std::size_t> at(rank);
    for (std::int64_t o = 0; o < y.count; ++o) {
        std::int64_t rest = o;
        bool outside = false;
        for (int d = 0; d < rank; ++d) {
            coord[d] = rest / ys[d];
            rest %= ys[d];
            outside = outside || taps[d][coord[d]].empty();
        }
        if (outside) {
            y.f32()[o] = a.extrapolation;
            continue;
        }
        // Every combination of one tap per axis, odometer order.
        std::fill(at.begin(), at.end(), 0);
        float acc = 0;
        while (true) {
            float w = 1;
            std::int64_t i = 0;
            for (int d = 0; d < rank; ++d) {
                const Tap& tap = taps[d][coord[d]][at[d]];
                w *= tap.weight;
                i += tap.index * xs[d];
            }
            acc += w * x.f32()[i];
            int d = rank - 1;
            while (d >= 0 && ++at[d] == taps[d][coord[d]].size())
                at[d--] = 0;
            if (d < 0)
                break;
        }
        y.f32()[o] = acc;
    }
    return true;
}

} // namespace

bool sliceStarts(const KernelCall& c, Shape& first, Shape& step)
{
    const auto& x = c.in[0];
    const int rank = x.rank();
    Shape starts, axes, steps;
    if (c.has(1)) {
        for (std::int64_t i = 0; i < c.in[1].count; ++i)
            starts.push_back(intAt(c.in[1], i));
        if (c.has(3))
            for (std::int64_t i = 0; i < c.in[3].count; ++i)
                axes.push_back(intAt(c.in[3], i));
        if (c.has(4))
            for (std::int64_t i = 0; i < c.in[4].count; ++i)
                steps.push_back(intAt(c.in[4], i));
    } else if (const auto* s = c.attrInts("starts")) {
        starts = *s;
        if (const auto* a = c.attrInts("axes"))
            axes = *a;
    } else
        return false;
    first.assign(std::size_t(rank), 0);
    step.assign(std::size_t(rank), 1);
    for (std::size_t k = 0; k < starts.size(); ++k) {
        const int axis = normAxis(k < axes.size() ? axes[k] : std::int64_t(k), rank);
        const std::int64_t dim = x.shape[axis];
        const std::int64_t st = k < steps.size() && steps[k] != 0 ? steps[k] : 1;
        std::int64_t s = starts[k];
        if (s < 0)
            s += dim;
        s = st > 0 ? std::clamp<std::int64_t>(s, 0, dim) : std::clamp<std::int64_t>(s, 0, dim - 1);
        first[axis] = s;
        step[axis] = st;
    }
    return true;
}

void addShapeKernels(std::map<std::string, Kernel>& t)
{
    // SwapOut/SwapIn (swap strategy): a copy to host memory and back, same bytes.
    for (const char* name : { "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "SwapOut", "SwapIn" })
        t[name] = view;
    t["Dropout"] = dropout;
    t["Transpose"] = transpose;
    t["Concat"] = concat;
    t["Split"] = split;
    t["Slice"] = slice;
    t["Gather"] = gather;
    t["ScatterND"] = scatterND;
    t["Expand"] = expand;
    t["Tile"] = tile;
    t["Pad"] = pad;
    t["Shape"] = shapeOp;
    t["Size"] = sizeOp;
    t["Range"] = range;
    t["Resize"] = resize;
    t["Upsample"] = resize;
}

} // namespace core::exec
