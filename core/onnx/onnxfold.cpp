// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "onnx/onnxfold.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

namespace core::onnxdetail {

using onnx::TensorProto;
using Values = std::vector<ConstValue>;

namespace {

const std::unordered_set<std::string> kFoldable {
    "Constant", "Shape", "Size", "Gather", "Slice", "Concat", "Unsqueeze", "Squeeze", "Cast", "CastLike", "Range",
    "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor", "Where",
    "ConstantOfShape", "Expand", "Reshape", "Flatten", "Add", "Sub", "Mul", "Div", "Mod", "Pow", "Neg", "Abs",
    "Min", "Max", "Sum", "Floor", "Ceil", "Round", "Sqrt", "Reciprocal", "Sign", "Identity", "ReduceProd",
    "ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean", "Transpose", "Tile", "Split",
};

const ConstValue* valueOf(const std::vector<const ValueFacts*>& inputs, std::size_t i)
{
    return i < inputs.size() && inputs[i] ? inputs[i]->value.get() : nullptr;
}

// Row-major strides of `dims` aligned to the last `rank` dims of an output; broadcast dims get 0.
std::vector<std::int64_t> broadcastStrides(const Dims& dims, std::size_t rank)
{
    std::vector<std::int64_t> strides(rank, 0);
    std::int64_t stride = 1;
    for (std::size_t k = 0; k < dims.size(); ++k) {
        const std::size_t in = dims.size() - 1 - k;
        const std::size_t out = rank - 1 - k;
        strides[out] = dims[in] == 1 ? 0 : stride;
        stride *= dims[in];
    }
    return strides;
}

// Calls f(outputIndex, inputIndices) for every element of the broadcast output.
template <class F>
bool forEachBroadcast(const std::vector<const ConstValue*>& ins, Dims& outDims, F f)
{
    std::vector<Dims> shapes;
    for (auto* v : ins)
        shapes.push_back(v->dims);
    auto dims = broadcastDims(shapes);
    if (!dims)
        return false;
    outDims = *dims;
    const std::int64_t n = elementCount(outDims);
    if (n < 0 || n > kFoldLimit)
        return false;
    const std::size_t rank = outDims.size();
    std::vector<std::vector<std::int64_t>> strides;
    for (auto* v : ins)
        strides.push_back(broadcastStrides(v->dims, rank));
    std::vector<std::int64_t> index(rank, 0), offsets(ins.size(), 0);
    for (std::int64_t k = 0; k < n; ++k) {
        f(k, offsets);
        for (std::size_t d = rank; d-- > 0;) {
            ++index[d];
            for (std::size_t i = 0; i < ins.size(); ++i)
                offsets[i] += strides[i][d];
            if (index[d] < outDims[d])
                break;
            for (std::size_t i = 0; i < ins.size(); ++i)
                offsets[i] -= strides[i][d] * index[d];
            index[d] = 0;
        }
    }
    return true;
}

ConstValue emptyLike(int elemType, Dims dims)
{
    ConstValue v;
    v.elemType = elemType;
    v.dims = std::move(dims);
    return v;
}

void push(ConstValue& v, double real, std::int64_t integer)
{
    if (v.isReal())
        v.reals.push_back(real);
    else
        v.ints.push_back(v.elemType == TensorProto::BOOL ? integer != 0 : integer);
}

void pushFrom(ConstValue& out, const ConstValue& in, std::int64_t i)
{
    if (out.isReal())
        out.reals.push_back(in.real(i));
    else
        out.ints.push_back(in.integer(i));
}

// Converts an integer to a narrower ONNX type the way a C cast would (wraps).
std::int64_t wrapTo(int elemType, std::int64_t v)
{
    switch (elemType) {
    case TensorProto::INT8: return std::int8_t(v);
    case TensorProto::UINT8: return std::uint8_t(v);
    case TensorProto::INT16: return std::int16_t(v);
    case TensorProto::UINT16: return std::uint16_t(v);
    case TensorProto::INT32: return std::int32_t(v);
    case TensorProto::UINT32: return std::uint32_t(v);
    case TensorProto::BOOL: return v != 0;
    default: return v;
    }
}

std::optional<ConstValue> castTo(const ConstValue& in, int to)
{
    if (!isIntegerType(to) && !isRealType(to))
        return std::nullopt;
    ConstValue out = emptyLike(to, in.dims);
    for (std::int64_t i = 0; i < in.count(); ++i) {
        if (isRealType(to))
            out.reals.push_back(in.real(i));
        else if (to == TensorProto::BOOL)
            out.ints.push_back(in.isReal() ? in.real(i) != 0.0 : in.ints[i] != 0);
        else
            out.ints.push_back(wrapTo(to, in.integer(i)));
    }
    return out;
}

std::optional<Values> asValues(std::optional<ConstValue> v)
{
    if (!v)
        return std::nullopt;
    return Values { std::move(*v) };
}

ConstValue reshaped(ConstValue v, Dims dims)
{
    v.dims = std::move(dims);
    return v;
}

std::optional<std::vector<std::int64_t>> axesFrom(const onnx::NodeProto& node, const std::vector<const ValueFacts*>& inputs,
                                                  std::size_t inputIndex, bool& present)
{
    present = false;
    if (auto a = attrInts(node, "axes")) {
        present = true;
        return a;
    }
    if (inputIndex < inputs.size() && inputs[inputIndex]) {
        present = true;
        return constInts(inputs[inputIndex]);
    }
    return std::vector<std::int64_t> {};
}

std::optional<Values> foldBinary(const std::string& op, const onnx::NodeProto& node, const std::vector<const ConstValue*>& ins)
{
    const bool comparison = op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual"
        || op == "GreaterOrEqual" || op == "And" || op == "Or" || op == "Xor";
    bool anyReal = false;
    for (auto* v : ins)
        anyReal = anyReal || v->isReal();
    const int outType = comparison ? int(TensorProto::BOOL) : ins[0]->elemType;
    ConstValue out = emptyLike(outType, {});
    const bool fmod = attrInt(node, "fmod", 0) != 0;
    bool ok = true;
    const bool done = forEachBroadcast(ins, out.dims, [&](std::int64_t, const std::vector<std::int64_t>& at) {
        if (!ok)
            return;
        if (anyReal || (op == "Pow" && ins[1]->isReal())) {
            double r = ins[0]->real(at[0]);
            for (std::size_t i = 1; i < ins.size(); ++i) {
                const double b = ins[i]->real(at[i]);
                if (op == "Add" || op == "Sum") r += b;
                else if (op == "Sub") r -= b;
                else if (op == "Mul") r *= b;
                else if (op == "Div") r /= b;
                else if (op == "Mod") r = fmod ? std::fmod(r, b) : r - b * std::floor(r / b);
                else if (op == "Pow") r = std::pow(r, b);
                else if (op == "Min") r = std::min(r, b);
                else if (op == "Max") r = std::max(r, b);
                else if (op == "Equal") r = r == b;
                else if (op == "Less") r = r < b;
                else if (op == "Greater") r = r > b;
                else if (op == "LessOrEqual") r = r <= b;
                else if (op == "GreaterOrEqual") r = r >= b;
                else ok = false;
            }
            if (out.isReal())
                out.reals.push_back(r);
            else
                out.ints.push_back(comparison ? r != 0.0 : wrapTo(outType, ConstValue { TensorProto::DOUBLE, {}, {}, { r } }.integer(0)));
            return;
        }
        std::int64_t r = ins[0]->ints[at[0]];
        for (std::size_t i = 1; i < ins.size(); ++i) {
            const std::int64_t b = ins[i]->ints[at[i]];
            if (op == "Add" || op == "Sum") ok = ok && !__builtin_add_overflow(r, b, &r);
            else if (op == "Sub") ok = ok && !__builtin_sub_overflow(r, b, &r);
            else if (op == "Mul") ok = ok && !__builtin_mul_overflow(r, b, &r);
            else if (op == "Div") {
                if (b == 0 || (r == std::numeric_limits<std::int64_t>::min() && b == -1))
                    ok = false;
                else
                    r /= b; // truncates toward zero, as ONNX runtimes do
            } else if (op == "Mod") {
                if (b == 0 || (r == std::numeric_limits<std::int64_t>::min() && b == -1))
                    ok = false;
                else {
                    std::int64_t m = r % b;
                    if (!fmod && m != 0 && ((m < 0) != (b < 0)))
                        m += b; // integer Mod takes the sign of the divisor
                    r = m;
                }
            } else if (op == "Pow") {
                if (b < 0) {
                    ok = false;
                } else {
                    // Square-and-multiply: at most 63 steps, whatever the exponent.
                    std::int64_t p = 1, base = r;
                    for (std::int64_t e = b; ok && e > 0; e >>= 1) {
                        if (e & 1)
                            ok = !__builtin_mul_overflow(p, base, &p);
                        if (ok && e > 1)
                            ok = !__builtin_mul_overflow(base, base, &base);
                    }
                    r = p;
                }
            } else if (op == "Min") r = std::min(r, b);
            else if (op == "Max") r = std::max(r, b);
            else if (op == "Equal") r = r == b;
            else if (op == "Less") r = r < b;
            else if (op == "Greater") r = r > b;
            else if (op == "LessOrEqual") r = r <= b;
            else if (op == "GreaterOrEqual") r = r >= b;
            else if (op == "And") r = (r != 0) && (b != 0);
            else if (op == "Or") r = (r != 0) || (b != 0);
            else if (op == "Xor") r = (r != 0) != (b != 0);
            else ok = false;
        }
        if (out.isReal())
            out.reals.push_back(double(r));
        else
            out.ints.push_back(comparison ? r != 0 : wrapTo(outType, r));
    });
    if (!done || !ok)
        return std::nullopt;
    return Values { std::move(out) };
}

std::optional<Values> foldUnary(const std::string& op, const ConstValue& in)
{
    ConstValue out = emptyLike(in.elemType, in.dims);
    for (std::int64_t i = 0; i < in.count(); ++i) {
        if (in.isReal()) {
            const double x = in.reals[i];
            double r = x;
            if (op == "Neg") r = -x;
            else if (op == "Abs") r = std::fabs(x);
            else if (op == "Floor") r = std::floor(x);
            else if (op == "Ceil") r = std::ceil(x);
            else if (op == "Round") r = std::nearbyint(x); // round half to even, as ONNX specifies
            else if (op == "Sqrt") r = std::sqrt(x);
            else if (op == "Reciprocal") r = 1.0 / x;
            else if (op == "Sign") r = (x > 0) - (x < 0);
            out.reals.push_back(r);
        } else {
            const std::int64_t x = in.ints[i];
            std::int64_t r = x;
            if (op == "Neg") {
                if (x == std::numeric_limits<std::int64_t>::min())
                    return std::nullopt;
                r = -x;
            } else if (op == "Abs") {
                if (x == std::numeric_limits<std::int64_t>::min())
                    return std::nullopt;
                r = x < 0 ? -x : x;
            } else if (op == "Sign") r = (x > 0) - (x < 0);
            else if (op == "Sqrt" || op == "Reciprocal") return std::nullopt;
            out.ints.push_back(wrapTo(in.elemType, r));
        }
    }
    return Values { std::move(out) };
}

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
    std::vector<std::int64_t> perm(rank);
    for (std::size_t d = 0; d < rank; ++d)
        perm[d] = std::int64_t(rank - 1 - d);
    if (auto p = attrInts(node, "perm"))
        perm = *p;
    if (perm.size() != rank)
        return std::nullopt;
    Dims dims(rank);
    for (std::size_t d = 0; d < rank; ++d) {
        if (perm[d] < 0 || perm[d] >= std::int64_t(rank))
            return std::nullopt;
        dims[d] = in.dims[perm[d]];
    }
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
        if (parts <= 0)
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

std::optional<Values> foldConstant(const onnx::NodeProto& node)
{
    for (const auto& a : node.attribute()) {
        if (a.name() == "value" && a.has_t()) {
            auto v = readConst(a.t());
            return v ? std::optional<Values>(Values { *v }) : std::nullopt;
        }
        if (a.name() == "value_float")
            return Values { ConstValue { TensorProto::FLOAT, {}, {}, { a.f() } } };
        if (a.name() == "value_floats") {
            ConstValue v { TensorProto::FLOAT, { a.floats_size() }, {}, {} };
            for (auto f : a.floats())
                v.reals.push_back(f);
            return Values { v };
        }
        if (a.name() == "value_int")
            return Values { ConstValue { TensorProto::INT64, {}, { a.i() }, {} } };
        if (a.name() == "value_ints") {
            ConstValue v { TensorProto::INT64, { a.ints_size() }, {}, {} };
            v.ints.assign(a.ints().begin(), a.ints().end());
            return Values { v };
        }
    }
    return std::nullopt;
}

std::optional<Values> foldImpl(const onnx::NodeProto& node, const std::vector<const ValueFacts*>& inputs)
{
    const std::string& op = node.op_type();
    if (op == "Constant")
        return foldConstant(node);
    if (op == "Shape" || op == "Size") {
        if (inputs.empty() || !inputs[0] || !inputs[0]->fullyKnown())
            return std::nullopt;
        const Dims& dims = inputs[0]->dims;
        if (op == "Size")
            return Values { ConstValue { TensorProto::INT64, {}, { elementCount(dims) }, {} } };
        const auto rank = std::int64_t(dims.size());
        std::int64_t start = attrInt(node, "start", 0), end = attrInt(node, "end", rank);
        start = std::clamp<std::int64_t>(start < 0 ? start + rank : start, 0, rank);
        end = std::clamp<std::int64_t>(end < 0 ? end + rank : end, 0, rank);
        ConstValue v { TensorProto::INT64, { std::max<std::int64_t>(end - start, 0) }, {}, {} };
        for (std::int64_t d = start; d < end; ++d)
            v.ints.push_back(dims[d]);
        return Values { v };
    }
    // Every other op needs all of its present inputs as values.
    std::vector<const ConstValue*> ins;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i]) {
            ins.push_back(nullptr);
            continue;
        }
        if (!inputs[i]->value)
            return std::nullopt;
        ins.push_back(inputs[i]->value.get());
    }
    if (ins.empty() || !ins[0])
        return std::nullopt;
    const ConstValue& x = *ins[0];

    if (op == "Identity")
        return Values { x };
    if (op == "Cast")
        return asValues(castTo(x, int(attrInt(node, "to", 0))));
    if (op == "CastLike") {
        if (!valueOf(inputs, 1))
            return std::nullopt;
        return asValues(castTo(x, ins[1]->elemType));
    }
    if (op == "Not") {
        ConstValue out = emptyLike(TensorProto::BOOL, x.dims);
        for (std::int64_t i = 0; i < x.count(); ++i)
            out.ints.push_back(x.real(i) == 0.0);
        return Values { out };
    }
    if (op == "Neg" || op == "Abs" || op == "Floor" || op == "Ceil" || op == "Round" || op == "Sqrt"
        || op == "Reciprocal" || op == "Sign")
        return foldUnary(op, x);
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Mod" || op == "Pow" || op == "Min"
        || op == "Max" || op == "Sum" || op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual"
        || op == "GreaterOrEqual" || op == "And" || op == "Or" || op == "Xor") {
        for (auto* v : ins)
            if (!v)
                return std::nullopt;
        return foldBinary(op, node, ins);
    }
    if (op == "Where") {
        if (ins.size() != 3 || !ins[1] || !ins[2])
            return std::nullopt;
        ConstValue out = emptyLike(ins[1]->elemType, {});
        if (ins[1]->isReal() != ins[2]->isReal())
            return std::nullopt;
        if (!forEachBroadcast(ins, out.dims, [&](std::int64_t, const std::vector<std::int64_t>& at) {
                pushFrom(out, x.real(at[0]) != 0.0 ? *ins[1] : *ins[2], at[x.real(at[0]) != 0.0 ? 1 : 2]);
            }))
            return std::nullopt;
        return Values { out };
    }
    if (op == "Gather") {
        if (!valueOf(inputs, 1))
            return std::nullopt;
        return foldGather(node, x, *ins[1]);
    }
    if (op == "Slice")
        return foldSlice(node, inputs, x);
    if (op == "Concat") {
        for (auto* v : ins)
            if (!v)
                return std::nullopt;
        return foldConcat(node, ins);
    }
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
    if (op == "ConstantOfShape") {
        ConstValue fill { TensorProto::FLOAT, {}, {}, { 0.0 } };
        if (const auto* a = findAttr(node, "value"); a && a->has_t()) {
            auto v = readConst(a->t());
            if (!v || v->count() != 1)
                return std::nullopt;
            fill = *v;
        }
        if (x.isReal())
            return std::nullopt;
        Dims dims(x.ints.begin(), x.ints.end());
        const std::int64_t n = elementCount(dims);
        if (n < 0 || n > kFoldLimit)
            return std::nullopt;
        ConstValue out = emptyLike(fill.elemType, dims);
        for (std::int64_t i = 0; i < n; ++i)
            pushFrom(out, fill, 0);
        return Values { out };
    }
    if (op == "Range") {
        if (ins.size() != 3 || !ins[1] || !ins[2] || x.count() != 1 || ins[1]->count() != 1 || ins[2]->count() != 1)
            return std::nullopt;
        ConstValue out = emptyLike(x.elemType, {});
        if (x.isReal()) {
            const double start = x.real(0), limit = ins[1]->real(0), delta = ins[2]->real(0);
            if (delta == 0.0)
                return std::nullopt;
            const double steps = std::max(std::ceil((limit - start) / delta), 0.0);
            if (!(steps <= double(kFoldLimit)))
                return std::nullopt;
            for (std::int64_t i = 0; i < std::int64_t(steps); ++i)
                out.reals.push_back(start + double(i) * delta);
        } else {
            const std::int64_t start = x.ints[0], limit = ins[1]->integer(0), delta = ins[2]->integer(0);
            if (delta == 0)
                return std::nullopt;
            const double steps = std::max(std::ceil((double(limit) - double(start)) / double(delta)), 0.0);
            if (!(steps <= double(kFoldLimit)))
                return std::nullopt;
            for (std::int64_t i = 0; i < std::int64_t(steps); ++i)
                out.ints.push_back(start + i * delta);
        }
        out.dims = { out.count() };
        return Values { out };
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
            std::vector<std::int64_t> zeros(std::size_t(std::max<std::int64_t>(elementCount(shape.dims), 0)), 0);
            if (std::int64_t(zeros.size()) > kFoldLimit)
                return std::nullopt;
            shape.ints = std::move(zeros);
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
    if (op == "Transpose")
        return foldTranspose(node, x);
    if (op == "ReduceProd" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin" || op == "ReduceMean")
        return foldReduce(op, node, inputs, x);
    if (op == "Split")
        return foldSplit(node, inputs, x);
    return std::nullopt;
}

} // namespace

bool isFoldable(const std::string& opType) { return kFoldable.count(opType) != 0; }

std::optional<std::vector<ConstValue>> foldNode(const onnx::NodeProto& node, const std::vector<const ValueFacts*>& inputs)
{
    if (!isFoldable(node.op_type()) || !(node.domain().empty() || node.domain() == "ai.onnx"))
        return std::nullopt;
    try {
        auto result = foldImpl(node, inputs);
        if (!result || std::int64_t(result->size()) != node.output_size())
            return std::nullopt;
        for (const auto& v : *result)
            if (v.count() != elementCount(v.dims) || v.count() > kFoldLimit)
                return std::nullopt;
        return result;
    } catch (...) {
        // Malformed attributes or allocation failure: leave the op to shape inference.
        return std::nullopt;
    }
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

std::optional<std::int64_t> normalizeAxis(std::int64_t axis, std::int64_t rank)
{
    if (axis < -rank || axis >= rank)
        return std::nullopt;
    return axis < 0 ? axis + rank : axis;
}

std::optional<std::vector<std::int64_t>> constInts(const ValueFacts* facts)
{
    if (!facts || !facts->value)
        return std::nullopt;
    std::vector<std::int64_t> out;
    for (std::int64_t i = 0; i < facts->value->count(); ++i)
        out.push_back(facts->value->integer(i));
    return out;
}

std::optional<std::vector<double>> constReals(const ValueFacts* facts)
{
    if (!facts || !facts->value)
        return std::nullopt;
    std::vector<double> out;
    for (std::int64_t i = 0; i < facts->value->count(); ++i)
        out.push_back(facts->value->real(i));
    return out;
}

} // namespace core::onnxdetail
