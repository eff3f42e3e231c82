// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Folding driver and the elementwise ops: arithmetic, comparisons, Cast, Where, Range,
// ConstantOfShape, Constant. Data-movement ops live in onnxfoldlayout.cpp.
#include "onnx/onnxfold.h"

#include "onnx/onnxfoldimpl.h"
#include "onnx/onnxshapemath.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

namespace core::onnxdetail {

using onnx::TensorProto;

namespace {

const std::unordered_set<std::string> kFoldable {
    "Constant", "Shape", "Size", "SequenceLength", "Gather", "Slice", "Concat", "Unsqueeze", "Squeeze", "Cast", "CastLike", "Range",
    "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor", "Where",
    "ConstantOfShape", "Expand", "Reshape", "Flatten", "Add", "Sub", "Mul", "Div", "Mod", "Pow", "Neg", "Abs",
    "Min", "Max", "Sum", "Floor", "Ceil", "Round", "Sqrt", "Reciprocal", "Sign", "Identity", "ReduceProd",
    "ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean", "Transpose", "Tile", "Split",
};

} // namespace

namespace fold {

const ConstValue* valueOf(const std::vector<const ValueFacts*>& inputs, std::size_t i)
{
    return i < inputs.size() && inputs[i] ? inputs[i]->value.get() : nullptr;
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

} // namespace fold

namespace {

using namespace fold;

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
    if (op == "SequenceLength") { // as Shape: the count is known where the contents are not
        if (inputs.empty() || !inputs[0] || inputs[0]->kind != ValueKind::Sequence || inputs[0]->length < 0)
            return std::nullopt;
        return Values { ConstValue { TensorProto::INT64, {}, { inputs[0]->length }, {} } };
    }
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
    if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten" || op == "Expand" || op == "Tile")
        return foldReshaping(op, node, inputs, x);
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

} // namespace core::onnxdetail
