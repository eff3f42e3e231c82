// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Folding of data-movement ops: Gather, Slice, Concat, Transpose, Split, Reduce*, and the
// reshaping family (Reshape, Squeeze, Unsqueeze, Flatten, Expand, Tile).
#include "onnx/onnxfoldimpl.h"
#include "onnx/onnxshapemath.h"

#include <algorithm>

namespace core::onnxdetail::fold {

using onnx::TensorProto;

std::optional<Values> foldGather(const onnx::NodeProto& node, const ConstValue& data, const ConstValue& indices)
{
    const auto rank = std::int64_t(data.dims.size());
    const auto axis = normalizeAxis(attrInt(node, "axis", 0), rank);
    if (!axis || indices.isReal())
        return std::nullopt;
    Dims dims(data.dims.begin(), data.dims.begin() + *axis);
    dims.insert(dims.end(), indices.dims.begin(), indices.dims.end());
    dims.insert(dims.end(), data.dims.begin() + *axis + 1, data.dims.end());
    const std::int64_t n = elementCount(dims);
    if (n < 0 || n > kFoldLimit)
        return std::nullopt;
    std::int64_t outer = 1, inner = 1;
    for (std::int64_t d = 0; d < *axis; ++d)
        outer *= data.dims[d];
    for (std::int64_t d = *axis + 1; d < rank; ++d)
        inner *= data.dims[d];
    const std::int64_t extent = data.dims[*axis];
    ConstValue out = emptyLike(data.elemType, dims);
    for (std::int64_t o = 0; o < outer; ++o)
        for (auto idx : indices.ints) {
            if (idx < 0)
                idx += extent;
            if (idx < 0 || idx >= extent)
                return std::nullopt;
            for (std::int64_t i = 0; i < inner; ++i)
                pushFrom(out, data, (o * extent + idx) * inner + i);
        }
    return Values { std::move(out) };
}

std::optional<Values> foldSlice(const onnx::NodeProto& node, const std::vector<const ValueFacts*>& inputs, const ConstValue& data)
{
    std::optional<std::vector<std::int64_t>> starts, ends, axes, steps;
    if (attrInts(node, "starts")) { // opset 1-9: attributes
        starts = attrInts(node, "starts");
        ends = attrInts(node, "ends");
        axes = attrInts(node, "axes");
    } else {
        starts = constInts(inputs.size() > 1 ? inputs[1] : nullptr);
        ends = constInts(inputs.size() > 2 ? inputs[2] : nullptr);
        if (inputs.size() > 3 && inputs[3])
            axes = constInts(inputs[3]);
        if (inputs.size() > 4 && inputs[4])
            steps = constInts(inputs[4]);
        if ((inputs.size() > 3 && inputs[3] && !axes) || (inputs.size() > 4 && inputs[4] && !steps))
            return std::nullopt;
    }
    if (!starts || !ends)
        return std::nullopt;
    auto plan = sliceAxes(data.dims, *starts, *ends, axes.value_or(std::vector<std::int64_t> {}),
                          steps.value_or(std::vector<std::int64_t> {}));
    if (!plan)
        return std::nullopt;
    Dims dims;
    for (const auto& a : *plan)
        dims.push_back(a.count);
    const std::int64_t n = elementCount(dims);
    if (n < 0 || n > kFoldLimit)
        return std::nullopt;
    ConstValue out = emptyLike(data.elemType, dims);
    const std::size_t rank = dims.size();
    std::vector<std::int64_t> strides(rank, 1);
    for (std::size_t d = rank; d-- > 1;)
        strides[d - 1] = strides[d] * data.dims[d];
    std::vector<std::int64_t> index(rank, 0);
    for (std::int64_t k = 0; k < n; ++k) {
        std::int64_t at = 0;
        for (std::size_t d = 0; d < rank; ++d)
            at += ((*plan)[d].start + index[d] * (*plan)[d].step) * strides[d];
        pushFrom(out, data, at);
        for (std::size_t d = rank; d-- > 0;) {
            if (++index[d] < dims[d])
                break;
            index[d] = 0;
        }
    }
    return Values { std::move(out) };
}

std::optional<Values> foldConcat(const onnx::NodeProto& node, const std::vector<const ConstValue*>& ins)
{
    const auto rank = std::int64_t(ins[0]->dims.size());
    const auto axis = normalizeAxis(attrInt(node, "axis", 0), rank);
    if (!axis)
        return std::nullopt;
    Dims dims = ins[0]->dims;
    dims[*axis] = 0;
    for (auto* v : ins) {
        if (std::int64_t(v->dims.size()) != rank || v->isReal() != ins[0]->isReal())
            return std::nullopt;
        for (std::int64_t d = 0; d < rank; ++d)
            if (d != *axis && v->dims[d] != ins[0]->dims[d])
                return std::nullopt;
        dims[*axis] += v->dims[*axis];
    }
    std::int64_t outer = 1;
    for (std::int64_t d = 0; d < *axis; ++d)
        outer *= dims[d];
    ConstValue out = emptyLike(ins[0]->elemType, dims);
    for (std::int64_t o = 0; o < outer; ++o)
        for (auto* v : ins) {
            const std::int64_t block = v->count() / outer;
            for (std::int64_t i = 0; i < block; ++i)
                pushFrom(out, *v, o * block + i);
        }
    return Values { std::move(out) };
}

std::optional<Values> foldTranspose(const onnx::NodeProto& node, const ConstValue& in)
{
    const std::size_t rank = in.dims.size();
    const auto stated = attrInts(node, "perm");
    const auto order = transposeOrder(stated ? &*stated : nullptr, rank);
    if (!order)
        return std::nullopt;
    const auto& perm = *order;
    Dims dims(rank);
    for (std::size_t d = 0; d < rank; ++d)
        dims[d] = in.dims[std::size_t(perm[d])];
    std::vector<std::int64_t> strides(rank, 1);
    for (std::size_t d = rank; d-- > 1;)
        strides[d - 1] = strides[d] * in.dims[d];
    ConstValue out = emptyLike(in.elemType, dims);
    std::vector<std::int64_t> index(rank, 0);
    for (std::int64_t k = 0; k < in.count(); ++k) {
        std::int64_t at = 0;
        for (std::size_t d = 0; d < rank; ++d)
            at += index[d] * strides[perm[d]];
        pushFrom(out, in, at);
        for (std::size_t d = rank; d-- > 0;) {
            if (++index[d] < dims[d])
                break;
            index[d] = 0;
        }
    }
    return Values { std::move(out) };
}

std::optional<Values> foldReduce(const std::string& op, const onnx::NodeProto& node,
                                 const std::vector<const ValueFacts*>& inputs, const ConstValue& in)
{
    bool present = false;
    auto axes = axesFrom(node, inputs, 1, present);
    if (!axes)
        return std::nullopt;
    const auto rank = std::int64_t(in.dims.size());
    const bool keep = attrInt(node, "keepdims", 1) != 0;
    if (axes->empty()) {
        if (attrInt(node, "noop_with_empty_axes", 0) != 0)
            return Values { in };
        for (std::int64_t d = 0; d < rank; ++d)
            axes->push_back(d);
    }
    std::vector<bool> reduced(rank, false);
    for (auto a : *axes) {
        auto n = normalizeAxis(a, rank);
        if (!n)
            return std::nullopt;
        reduced[*n] = true;
    }
    Dims outDims, keptDims;
    for (std::int64_t d = 0; d < rank; ++d) {
        if (!reduced[d])
            outDims.push_back(in.dims[d]);
        keptDims.push_back(reduced[d] ? 1 : in.dims[d]);
    }
    const std::int64_t n = elementCount(keptDims);
    if (n < 0)
        return std::nullopt;
    std::vector<double> acc(n, op == "ReduceProd" ? 1.0 : 0.0);
    std::vector<std::int64_t> iacc(n, op == "ReduceProd" ? 1 : 0);
    std::vector<bool> seen(n, false);
    std::vector<std::int64_t> index(rank, 0);
    bool ok = true;
    for (std::int64_t k = 0; k < in.count(); ++k) {
        std::int64_t at = 0;
        for (std::int64_t d = 0; d < rank; ++d)
            at = at * keptDims[d] + (reduced[d] ? 0 : index[d]);
        const double x = in.real(k);
        const std::int64_t xi = in.isReal() ? 0 : in.ints[k];
        if (op == "ReduceSum" || op == "ReduceMean") {
            acc[at] += x;
            ok = ok && (in.isReal() || !__builtin_add_overflow(iacc[at], xi, &iacc[at]));
        } else if (op == "ReduceProd") {
            acc[at] *= x;
            ok = ok && (in.isReal() || !__builtin_mul_overflow(iacc[at], xi, &iacc[at]));
        } else if (op == "ReduceMax") {
            acc[at] = seen[at] ? std::max(acc[at], x) : x;
            iacc[at] = seen[at] ? std::max(iacc[at], xi) : xi;
        } else {
            acc[at] = seen[at] ? std::min(acc[at], x) : x;
            iacc[at] = seen[at] ? std::min(iacc[at], xi) : xi;
        }
        seen[at] = true;
        for (std::int64_t d = rank; d-- > 0;) {
            if (++index[d] < in.dims[d])
                break;
            index[d] = 0;
        }
    }
    if (!ok)
        return std::nullopt;
    const std::int64_t per = n ? std::max<std::int64_t>(in.count() / n, 1) : 1;
    ConstValue out = emptyLike(in.elemType, keep ? keptDims : outDims);
    for (std::int64_t k = 0; k < n; ++k) {
        if (op == "ReduceMean") {
            if (in.isReal())
                out.reals.push_back(acc[k] / double(per));
            else
                out.ints.push_back(iacc[k] / per);
        } else
            push(out, acc[k], iacc[k]);
    }
    return Values { std::move(out) };
}

std::optional<Values> foldSplit(const onnx::NodeProto& node, const std::vector<const ValueFacts*>& inputs, const ConstValue& in)
{
    const auto rank = std::int64_t(in.dims.size());
    const auto axis = normalizeAxis(attrInt(node, "axis", 0), rank);
    if (!axis)
        return std::nullopt;
    const std::int64_t extent = in.dims[*axis];
    std::vector<std::int64_t> sizes;
    if (auto s = attrInts(node, "split"))
        sizes = *s;
    else if (inputs.size() > 1 && inputs[1]) {
        auto s = constInts(inputs[1]);
        if (!s)
            return std::nullopt;
        sizes = *s;
    } else {
        const std::int64_t parts = attrInt(node, "num_outputs", node.output_size());
        if (parts != node.output_size() || parts <= 0) // one output per part, as ONNX requires
            return std::nullopt;
        const std::int64_t each = (extent + parts - 1) / parts;
        for (std::int64_t p = 0, left = extent; p < parts; ++p, left -= each)
            sizes.push_back(std::clamp<std::int64_t>(left, 0, each));
    }
    if (std::int64_t(sizes.size()) != node.output_size())
        return std::nullopt;
    Values outs;
    std::int64_t start = 0;
    for (auto size : sizes) {
        if (size < 0 || start + size > extent)
            return std::nullopt;
        Dims dims = in.dims;
        dims[*axis] = size;
        std::int64_t outer = 1, inner = 1;
        for (std::int64_t d = 0; d < *axis; ++d)
            outer *= in.dims[d];
        for (std::int64_t d = *axis + 1; d < rank; ++d)
            inner *= in.dims[d];
        ConstValue out = emptyLike(in.elemType, dims);
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t i = start; i < start + size && i < extent; ++i)
                for (std::int64_t j = 0; j < inner; ++j)
                    pushFrom(out, in, (o * extent + i) * inner + j);
        if (out.count() != elementCount(dims))
            return std::nullopt;
        outs.push_back(std::move(out));
        start += size;
    }
    return outs;
}

std::optional<Values> foldReshaping(const std::string& op, const onnx::NodeProto& node,
                                    const std::vector<const ValueFacts*>& inputs, const ConstValue& x)
{
    if (op == "Unsqueeze" || op == "Squeeze") {
        bool present = false;
        auto axes = axesFrom(node, inputs, 1, present);
        if (!axes)
            return std::nullopt;
        Dims dims;
        if (op == "Unsqueeze") {
            const auto rank = std::int64_t(x.dims.size() + axes->size());
            std::vector<bool> inserted(rank, false);
            for (auto a : *axes) {
                auto n = normalizeAxis(a, rank);
                if (!n || inserted[*n])
                    return std::nullopt;
                inserted[*n] = true;
            }
            for (std::int64_t d = 0, k = 0; d < rank; ++d)
                dims.push_back(inserted[d] ? 1 : x.dims[k++]);
        } else {
            const auto rank = std::int64_t(x.dims.size());
            std::vector<bool> removed(rank, axes->empty());
            for (auto a : *axes) {
                auto n = normalizeAxis(a, rank);
                if (!n)
                    return std::nullopt;
                removed[*n] = true;
            }
            for (std::int64_t d = 0; d < rank; ++d)
                if (!removed[d] || x.dims[d] != 1)
                    dims.push_back(x.dims[d]);
        }
        return Values { reshaped(x, dims) };
    }
    if (op == "Reshape") {
        auto shape = constInts(inputs.size() > 1 ? inputs[1] : nullptr);
        std::optional<Dims> dims;
        if (shape)
            dims = reshapeDims(x.dims, *shape, attrInt(node, "allowzero", 0) != 0);
        else if (auto a = attrInts(node, "shape")) // opset 1-4
            dims = reshapeDims(x.dims, *a, false);
        if (!dims || elementCount(*dims) != x.count())
            return std::nullopt;
        return Values { reshaped(x, *dims) };
    }
    if (op == "Flatten") {
        const auto rank = std::int64_t(x.dims.size());
        // Flatten's axis lies in [-rank, rank]; negative counts from the end.
        std::int64_t flat = attrInt(node, "axis", 1);
        flat = flat < 0 ? flat + rank : flat;
        const auto axis = flat >= 0 && flat <= rank ? std::optional<std::int64_t>(flat) : std::nullopt;
        if (!axis)
            return std::nullopt;
        std::int64_t a = 1;
        for (std::int64_t d = 0; d < *axis; ++d)
            a *= x.dims[d];
        return Values { reshaped(x, { a, a ? x.count() / a : 0 }) };
    }
    if (op == "Expand" || op == "Tile") {
        auto arg = constInts(inputs.size() > 1 ? inputs[1] : nullptr);
        if (!arg)
            return std::nullopt;
        if (op == "Expand") {
            ConstValue shape { TensorProto::INT64, Dims(arg->begin(), arg->end()), {}, {} };
            for (auto d : *arg)
                if (d < 0)
                    return std::nullopt;
            // Broadcast x against a tensor of the requested shape; only x's values are read.
            const std::int64_t count = elementCount(shape.dims);
            if (count < 0 || count > kFoldLimit)
                return std::nullopt;
            shape.ints.assign(std::size_t(count), 0);
            ConstValue out = emptyLike(x.elemType, {});
            if (!forEachBroadcast({ &x, &shape }, out.dims,
                                  [&](std::int64_t, const std::vector<std::int64_t>& at) { pushFrom(out, x, at[0]); }))
                return std::nullopt;
            return Values { out };
        }
        if (arg->size() != x.dims.size())
            return std::nullopt;
        Dims dims;
        for (std::size_t d = 0; d < x.dims.size(); ++d) {
            if ((*arg)[d] < 0)
                return std::nullopt;
            dims.push_back(x.dims[d] * (*arg)[d]);
        }
        const std::int64_t n = elementCount(dims);
        if (n < 0 || n > kFoldLimit)
            return std::nullopt;
        ConstValue out = emptyLike(x.elemType, dims);
        const std::size_t rank = dims.size();
        std::vector<std::int64_t> strides(rank, 1), index(rank, 0);
        for (std::size_t d = rank; d-- > 1;)
            strides[d - 1] = strides[d] * x.dims[d];
        for (std::int64_t k = 0; k < n; ++k) {
            std::int64_t at = 0;
            for (std::size_t d = 0; d < rank; ++d)
                at += (index[d] % x.dims[d]) * strides[d];
            pushFrom(out, x, at);
            for (std::size_t d = rank; d-- > 0;) {
                if (++index[d] < dims[d])
                    break;
                index[d] = 0;
            }
        }
        return Values { out };
    }
    return std::nullopt;
}

} // namespace core::onnxdetail::fold
