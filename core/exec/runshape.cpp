// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Run-time output shapes, op by op, as the ONNX operator specifications define them. Each rule
// reads only its inputs' shapes and, for shape arguments, their integer values; none reads data
// that a kernel would compute.
#include "exec/runshape.h"
#include "graph/shapemath.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace core::exec {

namespace {

using Rule = std::function<bool(const KernelCall&, std::vector<Shape>&)>;

// The integer values of input `slot` (int32/int64), or false when it is absent or not integer.
bool intValues(const KernelCall& c, std::size_t slot, Shape& values)
{
    if (!c.has(slot) || (c.in[slot].dtype != DType::Int64 && c.in[slot].dtype != DType::Int32))
        return false;
    values.clear();
    for (std::int64_t i = 0; i < c.in[slot].count; ++i)
        values.push_back(intAt(c.in[slot], i));
    return true;
}

// Axes from the `axes` attribute (older opsets) or input `slot` (newer ones); empty when neither.
Shape axesOf(const KernelCall& c, std::size_t slot)
{
    if (const auto* a = c.attrInts("axes"))
        return *a;
    Shape axes;
    intValues(c, slot, axes);
    return axes;
}

// An axis in [-rank, rank) made non-negative; -1 when out of range.
int checkedAxis(std::int64_t axis, int rank)
{
    const auto a = normalizeAxis(axis, rank);
    return a ? int(*a) : -1;
}

// Numpy broadcasting of two shapes; false when they do not broadcast.
bool broadcast(const Shape& a, const Shape& b, Shape& out)
{
    const auto r = broadcastDims({ a, b });
    if (r)
        out = *r;
    return r.has_value();
}

bool sameAsFirst(const KernelCall& c, std::vector<Shape>& s)
{
    if (!c.has(0))
        return false;
    s.assign(c.out.size(), c.in[0].shape);
    return true;
}

bool broadcastAll(const KernelCall& c, std::vector<Shape>& s)
{
    Shape r;
    bool any = false;
    for (const auto& v : c.in)
        if (v.present()) {
            if (!any)
                r = v.shape;
            else if (!broadcast(r, v.shape, r))
                return false;
            any = true;
        }
    s.assign(c.out.size(), r);
    return any;
}

bool transpose(const KernelCall& c, std::vector<Shape>& s)
{
    const auto& x = c.in[0].shape;
    const auto perm = transposeOrder(c.attrInts("perm"), x.size());
    if (!perm)
        return false;
    Shape y;
    for (auto p : *perm)
        y.push_back(x[std::size_t(p)]);
    s = { y };
    return true;
}

bool reshape(const KernelCall& c, std::vector<Shape>& s)
{
    Shape target;
    if (!intValues(c, 1, target))
        return false;
    const auto y = reshapeDims(c.in[0].shape, target, c.attrInt("allowzero", 0) != 0);
    if (!y || elementCount(*y) != c.in[0].count)
        return false;
    s = { *y };
    return true;
}

bool flatten(const KernelCall& c, std::vector<Shape>& s)
{
    const auto& x = c.in[0].shape;
    const int rank = int(x.size());
    std::int64_t axis = c.attrInt("axis", 1);
    if (axis < 0)
        axis += rank;
    if (axis < 0 || axis > rank)
        return false;
    std::int64_t outer = 1, inner = 1;
    for (int d = 0; d < rank; ++d)
        (d < axis ? outer : inner) *= x[std::size_t(d)];
    s = { Shape { outer, inner } };
    return true;
}

bool squeeze(const KernelCall& c, std::vector<Shape>& s)
{
    const auto& x = c.in[0].shape;
    const int rank = int(x.size());
    const Shape axes = axesOf(c, 1);
    std::vector<bool> drop(std::size_t(rank), false);
    for (auto a : axes) {
        const int d = checkedAxis(a, rank);
        if (d < 0 || x[std::size_t(d)] != 1)
            return false;
        drop[std::size_t(d)] = true;
    }
    Shape y;
    for (int d = 0; d < rank; ++d)
        if (!(axes.empty() ? x[std::size_t(d)] == 1 : drop[std::size_t(d)]))
            y.push_back(x[std::size_t(d)]);
    s = { y };
    return true;
}

bool unsqueeze(const KernelCall& c, std::vector<Shape>& s)
{
    const auto& x = c.in[0].shape;
    const Shape axes = axesOf(c, 1);
    const int rank = int(x.size() + axes.size());
    std::vector<bool> inserted(std::size_t(rank), false);
    for (auto a : axes) {
        const int d = checkedAxis(a, rank);
        if (d < 0 || inserted[std::size_t(d)])
            return false;
        inserted[std::size_t(d)] = true;
    }
    Shape y;
    std::size_t next = 0;
    for (int d = 0; d < rank; ++d)
        y.push_back(inserted[std::size_t(d)] ? 1 : x[next++]);
    s = { y };
    return true;
}

bool concat(const KernelCall& c, std::vector<Shape>& s)
{
    Shape y;
    int axis = -1;
    for (const auto& v : c.in) {
        if (!v.present())
            continue;
        if (axis < 0) {
            axis = checkedAxis(c.attrInt("axis", 0), v.rank());
            if (axis < 0)
                return false;
            y = v.shape;
            continue;
        }
        if (v.rank() != int(y.size()))
            return false;
        for (int d = 0; d < v.rank(); ++d)
            if (d != axis && v.shape[std::size_t(d)] != y[std::size_t(d)])
                return false;
        y[std::size_t(axis)] += v.shape[std::size_t(axis)];
    }
    s = { y };
    return axis >= 0;
}

bool split(const KernelCall& c, std::vector<Shape>& s)
{
    const auto& x = c.in[0].shape;
    const int axis = checkedAxis(c.attrInt("axis", 0), int(x.size()));
    if (axis < 0 || c.out.empty())
        return false;
    const std::int64_t dim = x[std::size_t(axis)], n = std::int64_t(c.out.size());
    Shape parts;
    if (const auto* a = c.attrInts("split"))
        parts = *a;
    else if (!intValues(c, 1, parts)) {
        // Equal parts; opset 18's num_outputs allows a smaller last part.
        const std::int64_t each = c.attrInt("num_outputs", 0) > 0 ? (dim + n - 1) / n : dim / n;
        for (std::int64_t k = 0; k < n; ++k)
            parts.push_back(std::max<std::int64_t>(0, std::min(each, dim - k * each)));
    }
    std::int64_t total = 0;
    for (auto p : parts)
        total += p;
    if (std::int64_t(parts.size()) != n || total != dim)
        return false;
    s.clear();
    for (auto p : parts) {
        Shape y = x;
        y[std::size_t(axis)] = p;
        s.push_back(y);
    }
    return true;
}

bool slice(const KernelCall& c, std::vector<Shape>& s)
{
    Shape y = c.in[0].shape;
    Shape starts, ends, axes, steps;
    if (const auto* a = c.attrInts("starts")) { // opset 1-9
        starts = *a;
        if (const auto* e = c.attrInts("ends"))
            ends = *e;
        if (const auto* x = c.attrInts("axes"))
            axes = *x;
    } else {
        if (!intValues(c, 1, starts) || !intValues(c, 2, ends))
            return false;
        intValues(c, 3, axes);
        intValues(c, 4, steps);
    }
    const auto plan = sliceAxes(y, starts, ends, axes, steps);
    if (!plan)
        return false;
    for (std::size_t d = 0; d < y.size(); ++d)
        y[d] = (*plan)[d].count;
    s = { y };
    return true;
}

bool gather(const KernelCall& c, std::vector<Shape>& s)
{
    const auto& x = c.in[0].shape;
    const int axis = checkedAxis(c.attrInt("axis", 0), int(x.size()));
    if (axis < 0 || !c.has(1))
        return false;
    Shape y(x.begin(), x.begin() + axis);
    y.insert(y.end(), c.in[1].shape.begin(), c.in[1].shape.end());
    y.insert(y.end(), x.begin() + axis + 1, x.end());
    s = { y };
    return true;
}

bool gatherElements(const KernelCall& c, std::vector<Shape>& s)
{
    if (!c.has(1) || c.in[1].rank() != c.in[0].rank())
        return false;
    s = { c.in[1].shape };
    return true;
}

bool gatherND(const KernelCall& c, std::vector<Shape>& s)
{
    const auto &x = c.in[0].shape, &idx = c.has(1) ? c.in[1].shape : Shape {};
    const std::int64_t batchDims = c.attrInt("batch_dims", 0);
    if (idx.empty() || batchDims < 0)
        return false;
    const std::int64_t depth = idx.back();
    if (depth < 1 || batchDims + depth > std::int64_t(x.size()) || batchDims >= std::int64_t(idx.size()))
        return false;
    Shape y(idx.begin(), idx.end() - 1);
    y.insert(y.end(), x.begin() + batchDims + depth, x.end());
    s = { y };
    return true;
}

bool expand(const KernelCall& c, std::vector<Shape>& s)
{
    Shape target, y;
    if (!intValues(c, 1, target) || !broadcast(c.in[0].shape, target, y))
        return false;
    s = { y };
    return true;
}

bool tile(const KernelCall& c, std::vector<Shape>& s)
{
    Shape repeats;
    Shape y = c.in[0].shape;
    if (!intValues(c, 1, repeats) || repeats.size() != y.size())
        return false;
    for (std::size_t d = 0; d < y.size(); ++d) {
        if (repeats[d] < 0)
            return false;
        y[d] *= repeats[d];
    }
    s = { y };
    return true;
}

bool constantOfShape(const KernelCall& c, std::vector<Shape>& s)
{
    Shape y;
    if (!intValues(c, 0, y) || std::any_of(y.begin(), y.end(), [](std::int64_t d) { return d < 0; }))
        return false;
    s = { y };
    return true;
}

bool reduce(const KernelCall& c, std::vector<Shape>& s)
{
    const auto& x = c.in[0].shape;
    const int rank = int(x.size());
    // ReduceSum (13+) and every Reduce op from opset 18 take the axes as input 1.
    const Shape axes = axesOf(c, 1);
    const bool keep = c.attrInt("keepdims", 1) != 0;
    if (axes.empty() && c.attrInt("noop_with_empty_axes", 0) != 0)
        return sameAsFirst(c, s);
    std::vector<bool> reduced(std::size_t(rank), axes.empty());
    for (auto a : axes) {
        const int d = checkedAxis(a, rank);
        if (d < 0)
            return false;
        reduced[std::size_t(d)] = true;
    }
    Shape y;
    for (int d = 0; d < rank; ++d)
        if (!reduced[std::size_t(d)])
            y.push_back(x[std::size_t(d)]);
        else if (keep)
            y.push_back(1);
    s = { y };
    return true;
}

bool argReduce(const KernelCall& c, std::vector<Shape>& s)
{
    Shape y = c.in[0].shape;
    const int axis = checkedAxis(c.attrInt("axis", 0), int(y.size()));
    if (axis < 0)
        return false;
    if (c.attrInt("keepdims", 1) != 0)
        y[std::size_t(axis)] = 1;
    else
        y.erase(y.begin() + axis);
    s = { y };
    return true;
}

bool topK(const KernelCall& c, std::vector<Shape>& s)
{
    Shape y = c.in[0].shape, k;
    const int axis = checkedAxis(c.attrInt("axis", -1), int(y.size()));
    if (axis < 0)
        return false;
    if (const auto* a = c.attrInts("k")) // opset 1
        k = *a;
    else if (!intValues(c, 1, k))
        return false;
    if (k.size() != 1 || k[0] < 0 || k[0] > y[std::size_t(axis)])
        return false;
    y[std::size_t(axis)] = k[0];
    s.assign(c.out.size(), y);
    return true;
}

bool matMul(const KernelCall& c, std::vector<Shape>& s)
{
    if (!c.has(1))
        return false;
    Shape a = c.in[0].shape, b = c.in[1].shape;
    if (a.empty() || b.empty())
        return false;
    const bool vecA = a.size() == 1, vecB = b.size() == 1;
    if (vecA)
        a.insert(a.begin(), 1);
    if (vecB)
        b.push_back(1);
    if (a.back() != b[b.size() - 2])
        return false;
    Shape batch;
    if (!broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2), batch))
        return false;
    if (!vecA)
        batch.push_back(a[a.size() - 2]);
    if (!vecB)
        batch.push_back(b.back());
    s = { batch };
    return true;
}

// Conv, ConvTranspose and the windowed pools on [N, C, spatial...]: channels from the weights
// (ConvTranspose: w[1] × group), each spatial length from the window (shapemath); MaxPool's
// indices have the output's shape. Global pools keep N and C, every spatial length 1.
bool window(const KernelCall& c, std::vector<Shape>& s)
{
    const auto& type = c.op->type;
    const auto& x = c.in[0];
    if (x.rank() < 3)
        return false;
    const std::size_t spatial = std::size_t(x.rank() - 2);
    Shape out { x.shape[0], x.shape[1] };
    if (type.rfind("Global", 0) == 0) {
        out.resize(std::size_t(x.rank()), 1);
        s.assign(c.out.size(), out);
        return true;
    }
    const bool conv = type == "Conv" || type == "ConvTranspose", transposed = type == "ConvTranspose";
    std::vector<std::int64_t> kernel;
    if (const auto* k = c.attrInts("kernel_shape"))
        kernel = *k;
    else if (conv && c.has(1) && c.in[1].rank() == x.rank())
        kernel.assign(c.in[1].shape.begin() + 2, c.in[1].shape.end());
    if (kernel.size() != spatial || (conv && (!c.has(1) || c.in[1].rank() != x.rank())))
        return false;
    if (conv)
        out[1] = transposed ? c.in[1].shape[1] * c.attrInt("group", 1) : c.in[1].shape[0];
    const auto strides = c.attrIntsOr("strides", 1, spatial), dilations = c.attrIntsOr("dilations", 1, spatial);
    const auto pads = c.attrIntsOr("pads", 0, 2 * spatial), outputPadding = c.attrIntsOr("output_padding", 0, spatial);
    const auto* outputShape = transposed ? c.attrInts("output_shape") : nullptr;
    const auto autoPad = c.attrText("auto_pad", "NOTSET");
    const bool ceilMode = c.attrInt("ceil_mode", 0) != 0;
    for (std::size_t i = 0; i < spatial; ++i) {
        if (outputShape && outputShape->size() == spatial) {
            out.push_back((*outputShape)[i]);
            continue;
        }
        const WindowAxis axis { kernel[i], strides[i], dilations[i], pads[i], pads[i + spatial], outputPadding[i] };
        out.push_back(windowOutputLength(x.shape[2 + i], axis, autoPad, ceilMode, transposed));
    }
    s.assign(c.out.size(), out);
    return true;
}

// Gemm: [M, N] from A (transA) and B (transB), both 2-D; C broadcasts into it.
bool gemm(const KernelCall& c, std::vector<Shape>& s)
{
    if (!c.has(1) || c.in[0].rank() != 2 || c.in[1].rank() != 2)
        return false;
    const bool ta = c.attrInt("transA", 0) != 0, tb = c.attrInt("transB", 0) != 0;
    const auto& a = c.in[0].shape;
    const auto& b = c.in[1].shape;
    if (a[ta ? 0 : 1] != b[tb ? 1 : 0])
        return false;
    const Shape out { a[ta ? 1 : 0], b[tb ? 0 : 1] };
    Shape joined;
    if (c.has(2) && (!broadcast(out, c.in[2].shape, joined) || joined != out))
        return false;
    s = { out };
    return true;
}

bool pad(const KernelCall& c, std::vector<Shape>& s)
{
    Shape y = c.in[0].shape, pads;
    if (c.has(3)) // axes
        return false;
    if (const auto* p = c.attrInts("pads"))
        pads = *p;
    else if (!intValues(c, 1, pads))
        return false;
    if (pads.size() != 2 * y.size())
        return false;
    for (std::size_t d = 0; d < y.size(); ++d) {
        y[d] += pads[d] + pads[d + y.size()];
        if (y[d] < 0)
            return false;
    }
    s = { y };
    return true;
}

// Resize and Upsample over every axis: the sizes input (Resize-11 on: input 3) when it holds one
// length per axis, else floor(length × scale) from the scales input (Resize-11 on: input 2;
// Resize-10 and Upsample: input 1). Not for tf_crop_and_resize, an `axes` subset, or sizes kept
// to the aspect ratio.
bool resize(const KernelCall& c, std::vector<Shape>& s)
{
    const auto& x = c.in[0];
    const std::int64_t rank = x.rank();
    if (c.attrInts("axes") || c.attrText("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize"
        || c.attrText("keep_aspect_ratio_policy", "stretch") != "stretch")
        return false;
    Shape out;
    if (c.op->type == "Resize" && c.has(3) && c.in[3].count == rank && intValues(c, 3, out)) {
        s = { out };
        return true;
    }
    for (const std::size_t slot : { std::size_t(2), std::size_t(1) }) {
        const bool scalesSlot = c.op->type == "Resize" ? slot == 2 || !c.has(2) : slot == 1;
        if (!scalesSlot || !c.has(slot) || c.in[slot].count != rank
            || (c.in[slot].dtype != DType::Float32 && c.in[slot].dtype != DType::Float64))
            continue;
        for (std::int64_t i = 0; i < rank; ++i)
            out.push_back(std::int64_t(std::floor(double(x.shape[std::size_t(i)]) * realAt(c.in[slot], i))));
        s = { out };
        return true;
    }
    return false;
}

// Range: start, limit and delta are scalars of one numeric type.
bool range(const KernelCall& c, std::vector<Shape>& s)
{
    if (!c.has(0) || !c.has(1) || !c.has(2))
        return false;
    auto value = [&](int i) -> double {
        const auto& v = c.in[std::size_t(i)];
        if (v.dtype == DType::Float32)
            return double(v.f32()[0]);
        if (v.dtype == DType::Float64)
            return reinterpret_cast<const double*>(v.data)[0];
        return double(intAt(v, 0));
    };
    const double start = value(0), limit = value(1), delta = value(2);
    if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit))
        return false;
    const double n = std::ceil((limit - start) / delta);
    s = { Shape { std::int64_t(std::max(0.0, n)) } };
    return true;
}

bool shapeOp(const KernelCall& c, std::vector<Shape>& s)
{
    const std::int64_t rank = c.in[0].rank();
    auto clampEnd = [&](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const std::int64_t start = clampEnd(c.attrInt("start", 0)), end = clampEnd(c.attrInt("end", rank));
    s = { Shape { std::max<std::int64_t>(0, end - start) } };
    return true;
}

const std::map<std::string, Rule>& rules()
{
    static const std::map<std::string, Rule> table = [] {
        std::map<std::string, Rule> t;
        // Output shape = input 0's (unary math, casts, normalisations along an axis, ...).
        for (const char* name : { "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Exp", "Log", "Neg", "Abs", "Sqrt", "Reciprocal", "Floor", "Ceil",
                 "Round", "Sign", "Erf", "Not", "Cast", "CastLike", "Identity", "Dropout", "Softmax", "LogSoftmax", "Hardmax", "Clip",
                 "Elu", "Selu", "Celu", "Softplus", "Softsign", "HardSigmoid", "HardSwish", "Gelu", "Mish", "ThresholdedRelu", "Shrink",
                 "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "IsNaN", "IsInf", "CumSum",
                 "Trilu", "LpNormalization", "BitwiseNot", "SwapOut", "SwapIn", "ScatterElements", "Scatter", "ScatterND", "BatchNormalization",
                 "InstanceNormalization", "LRN", "MeanVarianceNormalization" })
            t[name] = sameAsFirst;
        // Multidirectional broadcasting over every present input.
        for (const char* name : { "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual",
                 "And", "Or", "Xor", "BitShift", "Where", "Max", "Min", "Sum", "Mean", "PRelu", "BitwiseAnd", "BitwiseOr", "BitwiseXor" })
            t[name] = broadcastAll;
        for (const char* name : { "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1",
                 "ReduceL2", "ReduceLogSum", "ReduceLogSumExp" })
            t[name] = reduce;
        t["ArgMax"] = argReduce;
        t["ArgMin"] = argReduce;
        t["RoiAlign"] = [](const KernelCall& c, std::vector<Shape>& s) { // [rois, C, output_height, output_width]
            if (c.in.size() < 2 || c.in[0].rank() != 4 || c.in[1].rank() != 2)
                return false;
            s = { Shape { c.in[1].shape[0], c.in[0].shape[1], c.attrInt("output_height", 1), c.attrInt("output_width", 1) } };
            return true;
        };
        // Per-element losses have the target's shape, reduced ones none; SoftmaxCrossEntropyLoss's log_prob the scores'.
        for (const char* name : { "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss" })
            t[name] = [](const KernelCall& c, std::vector<Shape>& s) {
                if (c.in.size() < 2 || c.out.empty())
                    return false;
                s = { c.attrText("reduction", "mean") == "none" ? c.in[1].shape : Shape {} };
                if (c.out.size() == 2)
                    s.push_back(c.in[0].shape);
                return true;
            };
        t["Transpose"] = transpose;
        t["Reshape"] = reshape;
        t["Flatten"] = flatten;
        t["Squeeze"] = squeeze;
        t["Unsqueeze"] = unsqueeze;
        t["Concat"] = concat;
        t["Split"] = split;
        t["Slice"] = slice;
        t["Gather"] = gather;
        t["GatherElements"] = gatherElements;
        t["GatherND"] = gatherND;
        t["Expand"] = expand;
        t["Tile"] = tile;
        t["ConstantOfShape"] = constantOfShape;
        t["TopK"] = topK;
        t["MatMul"] = matMul;
        t["Gemm"] = gemm;
        // RNN, GRU, LSTM: Y [seq, directions, batch, hidden], Y_h and Y_c [directions, batch, hidden];
        // layout 1: batch first in X and in each output.
        for (const char* name : { "RNN", "GRU", "LSTM" })
            t[name] = [](const KernelCall& c, std::vector<Shape>& s) {
                const auto hidden = c.attrInt("hidden_size", 0);
                if (c.in[0].rank() != 3 || hidden < 1)
                    return false;
                const bool batchFirst = c.attrInt("layout", 0) != 0;
                const std::int64_t directions = c.attrText("direction", "forward") == "bidirectional" ? 2 : 1;
                const auto seq = c.in[0].shape[batchFirst ? 1 : 0], batch = c.in[0].shape[batchFirst ? 0 : 1];
                s.clear();
                for (std::size_t k = 0; k < c.out.size(); ++k) {
                    if (c.outSlot(k) == 0)
                        s.push_back(batchFirst ? Shape { batch, seq, directions, hidden } : Shape { seq, directions, batch, hidden });
                    else
                        s.push_back(batchFirst ? Shape { batch, directions, hidden } : Shape { directions, batch, hidden });
                }
                return true;
            };
        for (const char* name : { "Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool",
                 "GlobalLpPool" })
            t[name] = window;
        t["Pad"] = pad;
        t["Range"] = range;
        t["Resize"] = resize;
        t["Upsample"] = resize;
        t["Shape"] = shapeOp;
        return t;
    }();
    return table;
}

} // namespace

bool runtimeShapes(const KernelCall& call, std::vector<Shape>& shapes)
{
    if (!call.op || !call.has(0))
        return false;
    const auto it = rules().find(call.op->type);
    if (it == rules().end() || !it->second(call, shapes) || shapes.size() != call.out.size())
        return false;
    return std::all_of(shapes.begin(), shapes.end(), [](const Shape& s) { return elementCount(s) >= 0; });
}

} // namespace core::exec
