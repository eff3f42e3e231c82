// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "onnx/onnxvalue.h"

#include "util/halffloat.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace core::onnxdetail {

using onnx::TensorProto;

bool ConstValue::isReal() const { return isRealType(elemType); }

std::int64_t ConstValue::integer(std::int64_t i) const
{
    if (!isReal())
        return ints[i];
    const double v = reals[i];
    // Saturate instead of invoking undefined behaviour on out-of-range conversions.
    if (!(v == v))
        return 0;
    if (v >= 9.2e18)
        return std::numeric_limits<std::int64_t>::max();
    if (v <= -9.2e18)
        return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(v);
}

bool ValueFacts::dimsKnown() const
{
    return rankKnown && std::all_of(dims.begin(), dims.end(), [](std::int64_t d) { return d >= 0; });
}

bool ValueFacts::fullyKnown() const { return kind == ValueKind::Tensor && dimsKnown(); }

bool ValueFacts::elementsKnown() const
{
    return kind == ValueKind::Sequence && length >= 0 && elementDims.size() == std::size_t(length)
        && std::all_of(elementDims.begin(), elementDims.end(),
            [](const Dims& d) { return std::all_of(d.begin(), d.end(), [](std::int64_t v) { return v >= 0; }); });
}

int ValueFacts::knownCount() const
{
    int n = (kind != ValueKind::Unknown) + (elemType != 0) + rankKnown + (bytes >= 0) + (length >= 0) + (value != nullptr)
        + (elementsKnown() ? int(elementDims.size()) : 0);
    for (auto d : dims)
        n += d >= 0;
    return n;
}

std::optional<DType> dtypeFromOnnx(int elemType)
{
    switch (elemType) {
    case TensorProto::FLOAT: return DType::Float32;
    case TensorProto::UINT8: return DType::UInt8;
    case TensorProto::INT8: return DType::Int8;
    case TensorProto::UINT16: return DType::UInt16;
    case TensorProto::INT16: return DType::Int16;
    case TensorProto::INT32: return DType::Int32;
    case TensorProto::INT64: return DType::Int64;
    case TensorProto::STRING: return DType::String;
    case TensorProto::BOOL: return DType::Bool;
    case TensorProto::FLOAT16: return DType::Float16;
    case TensorProto::DOUBLE: return DType::Float64;
    case TensorProto::UINT32: return DType::UInt32;
    case TensorProto::UINT64: return DType::UInt64;
    case TensorProto::COMPLEX64: return DType::Complex64;
    case TensorProto::COMPLEX128: return DType::Complex128;
    case TensorProto::BFLOAT16: return DType::BFloat16;
    // Types newer than this ONNX library (IR 9/10): float8 variants, then 4-bit types. The 4-bit ones
    // are counted as one byte per element (an upper bound; runtimes pack two per byte).
    case 17: case 18: case 19: case 20: return DType::Float8;
    case 21: return DType::UInt8; // UINT4
    case 22: return DType::Int8;  // INT4
    case 23: return DType::UInt8; // FLOAT4E2M1
    default: return std::nullopt;
    }
}

int onnxFromDType(DType dtype)
{
    switch (dtype) {
    case DType::Float32: return TensorProto::FLOAT;
    case DType::Float16: return TensorProto::FLOAT16;
    case DType::BFloat16: return TensorProto::BFLOAT16;
    case DType::Float64: return TensorProto::DOUBLE;
    case DType::Int8: return TensorProto::INT8;
    case DType::UInt8: return TensorProto::UINT8;
    case DType::Int16: return TensorProto::INT16;
    case DType::UInt16: return TensorProto::UINT16;
    case DType::Int32: return TensorProto::INT32;
    case DType::UInt32: return TensorProto::UINT32;
    case DType::Int64: return TensorProto::INT64;
    case DType::UInt64: return TensorProto::UINT64;
    case DType::Bool: return TensorProto::BOOL;
    case DType::Complex64: return TensorProto::COMPLEX64;
    case DType::Complex128: return TensorProto::COMPLEX128;
    case DType::String: return TensorProto::STRING;
    case DType::Float8: return 17; // FLOAT8E4M3FN
    case DType::Undefined: break;
    }
    return TensorProto::UNDEFINED;
}

bool isIntegerType(int t)
{
    switch (t) {
    case TensorProto::UINT8: case TensorProto::INT8: case TensorProto::UINT16: case TensorProto::INT16:
    case TensorProto::INT32: case TensorProto::INT64: case TensorProto::BOOL: case TensorProto::UINT32:
    case TensorProto::UINT64:
        return true;
    default:
        return false;
    }
}

bool isRealType(int t)
{
    return t == TensorProto::FLOAT || t == TensorProto::DOUBLE || t == TensorProto::FLOAT16 || t == TensorProto::BFLOAT16;
}

std::string dimsText(const Dims& dims)
{
    std::string text = "[";
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (i)
            text += ',';
        text += dims[i] < 0 ? std::string("?") : std::to_string(dims[i]);
    }
    return text + "]";
}

std::int64_t factsBytes(const ValueFacts& facts)
{
    if (facts.kind == ValueKind::Tensor && facts.rankKnown) {
        const auto dtype = dtypeFromOnnx(facts.elemType);
        if (dtype) {
            const Bytes b = tensorBytes(*dtype, facts.dims);
            if (b != kUnknownSize)
                return b;
        }
    }
    return facts.bytes;
}

void retypeFacts(ValueFacts& facts, int elemType)
{
    if (facts.elemType == elemType)
        return;
    if (!facts.rankKnown && facts.bytes >= 0) {
        const auto from = dtypeFromOnnx(facts.elemType), to = dtypeFromOnnx(elemType);
        const Bytes fromSize = from ? dtypeBytes(*from) : 0, toSize = to ? dtypeBytes(*to) : 0;
        facts.bytes = fromSize > 0 && toSize > 0 ? facts.bytes / fromSize * toSize : -1;
    }
    facts.elemType = elemType;
}

bool mergeFacts(ValueFacts& into, const ValueFacts& from)
{
    bool changed = false;
    if (into.kind == ValueKind::Unknown && from.kind != ValueKind::Unknown) {
        into.kind = from.kind;
        changed = true;
    }
    if (into.elemType == 0 && from.elemType != 0) {
        into.elemType = from.elemType;
        changed = true;
    }
    if (!into.rankKnown && from.rankKnown) {
        into.rankKnown = true;
        into.dims = from.dims;
        into.estimated = into.estimated || from.estimated;
        changed = true;
    } else if (into.rankKnown && from.rankKnown && into.dims.size() == from.dims.size()) {
        for (std::size_t i = 0; i < into.dims.size(); ++i)
            if (into.dims[i] < 0 && from.dims[i] >= 0) {
                into.dims[i] = from.dims[i];
                into.estimated = into.estimated || from.estimated;
                changed = true;
            }
    }
    if (into.bytes < 0 && from.bytes >= 0) {
        into.bytes = from.bytes;
        into.estimated = into.estimated || from.estimated;
        changed = true;
    }
    if (into.length < 0 && from.length >= 0) {
        into.length = from.length;
        changed = true;
    }
    if (!into.elementsKnown() && from.elementsKnown() && into.length == from.length) {
        into.elementDims = from.elementDims;
        changed = true;
    }
    if (!into.value && from.value) {
        into.value = from.value;
        changed = true;
    }
    into.optional = into.optional || from.optional;
    // A byte bound (a union of branch results of different ranks) and a declared rank with one
    // unknown dim: that dim is bounded by the bytes.
    if (into.kind == ValueKind::Tensor && into.rankKnown && into.bytes >= 0
        && std::count_if(into.dims.begin(), into.dims.end(), [](std::int64_t d) { return d < 0; }) == 1) {
        if (const auto dtype = dtypeFromOnnx(into.elemType)) {
            Dims unit = into.dims;
            auto unknown = std::find_if(unit.begin(), unit.end(), [](std::int64_t d) { return d < 0; });
            *unknown = 1;
            if (const Bytes perUnit = tensorBytes(*dtype, unit); perUnit > 0 && perUnit != kUnknownSize) {
                into.dims[std::size_t(unknown - unit.begin())] = into.bytes / perUnit;
                into.estimated = true;
                changed = true;
            }
        }
    }
    return changed;
}

namespace {
void readShape(const onnx::TensorShapeProto& shape, ValueFacts& facts)
{
    facts.rankKnown = true;
    facts.dims.clear();
    for (const auto& dim : shape.dim())
        facts.dims.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : -1);
}
} // namespace

ValueFacts factsFromType(const onnx::TypeProto& type)
{
    ValueFacts facts;
    if (type.has_tensor_type()) {
        facts.kind = ValueKind::Tensor;
        facts.elemType = type.tensor_type().elem_type();
        if (type.tensor_type().has_shape())
            readShape(type.tensor_type().shape(), facts);
    } else if (type.has_sparse_tensor_type()) {
        facts.kind = ValueKind::Tensor;
        facts.elemType = type.sparse_tensor_type().elem_type();
        if (type.sparse_tensor_type().has_shape())
            readShape(type.sparse_tensor_type().shape(), facts);
    } else if (type.has_sequence_type()) {
        facts = factsFromType(type.sequence_type().elem_type());
        facts.kind = ValueKind::Sequence;
        facts.bytes = -1;
    } else if (type.has_optional_type()) {
        facts = factsFromType(type.optional_type().elem_type());
        facts.optional = true;
    } else if (type.has_map_type()) {
        facts.kind = ValueKind::Map;
    }
    return facts;
}

void factsToType(const ValueFacts& facts, onnx::TypeProto& type)
{
    auto* tensor = type.mutable_tensor_type();
    if (facts.elemType != 0)
        tensor->set_elem_type(facts.elemType);
    if (!facts.rankKnown)
        return;
    auto* shape = tensor->mutable_shape();
    shape->clear_dim();
    for (auto d : facts.dims) {
        auto* dim = shape->add_dim();
        if (d >= 0)
            dim->set_dim_value(d);
    }
}

ValueFacts factsFromTensor(const onnx::TensorProto& tensor)
{
    ValueFacts facts;
    facts.kind = ValueKind::Tensor;
    facts.elemType = tensor.data_type();
    facts.rankKnown = true;
    for (auto d : tensor.dims())
        facts.dims.push_back(d);
    return facts;
}

namespace {
int rawElementBytes(int t)
{
    switch (t) {
    case TensorProto::UINT8: case TensorProto::INT8: case TensorProto::BOOL: return 1;
    case TensorProto::UINT16: case TensorProto::INT16: case TensorProto::FLOAT16: case TensorProto::BFLOAT16: return 2;
    case TensorProto::FLOAT: case TensorProto::INT32: case TensorProto::UINT32: return 4;
    case TensorProto::INT64: case TensorProto::UINT64: case TensorProto::DOUBLE: return 8;
    default: return 0;
    }
}

template <class T>
T loadRaw(const char* p)
{
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

} // namespace

std::optional<ConstValue> readConst(const TensorProto& tensor, std::int64_t limit)
{
    if (tensor.data_location() == TensorProto::EXTERNAL)
        return std::nullopt;
    const int t = tensor.data_type();
    if (!isIntegerType(t) && !isRealType(t))
        return std::nullopt;
    ConstValue value;
    value.elemType = t;
    for (auto d : tensor.dims()) {
        if (d < 0)
            return std::nullopt;
        value.dims.push_back(d);
    }
    const std::int64_t n = elementCount(value.dims);
    if (n < 0 || n > limit)
        return std::nullopt;
    const bool real = isRealType(t);
    auto push = [&](double r, std::int64_t i) {
        if (real)
            value.reals.push_back(r);
        else
            value.ints.push_back(t == TensorProto::BOOL ? (i != 0) : i);
    };
    if (tensor.has_raw_data()) {
        const std::string& raw = tensor.raw_data();
        const int eb = rawElementBytes(t);
        if (eb == 0 || std::int64_t(raw.size()) != n * eb)
            return std::nullopt;
        for (std::int64_t k = 0; k < n; ++k) {
            const char* p = raw.data() + k * eb;
            switch (t) {
            case TensorProto::FLOAT: push(loadRaw<float>(p), 0); break;
            case TensorProto::DOUBLE: push(loadRaw<double>(p), 0); break;
            case TensorProto::FLOAT16: push(halfToFloat(loadRaw<std::uint16_t>(p)), 0); break;
            case TensorProto::BFLOAT16: push(bfloat16ToFloat(loadRaw<std::uint16_t>(p)), 0); break;
            case TensorProto::UINT8: case TensorProto::BOOL: push(0, loadRaw<std::uint8_t>(p)); break;
            case TensorProto::INT8: push(0, loadRaw<std::int8_t>(p)); break;
            case TensorProto::UINT16: push(0, loadRaw<std::uint16_t>(p)); break;
            case TensorProto::INT16: push(0, loadRaw<std::int16_t>(p)); break;
            case TensorProto::INT32: push(0, loadRaw<std::int32_t>(p)); break;
            case TensorProto::UINT32: push(0, loadRaw<std::uint32_t>(p)); break;
            case TensorProto::INT64: case TensorProto::UINT64: push(0, loadRaw<std::int64_t>(p)); break;
            default: return std::nullopt;
            }
        }
        return value;
    }
    switch (t) {
    case TensorProto::FLOAT:
        if (tensor.float_data_size() != n)
            return std::nullopt;
        for (auto v : tensor.float_data())
            push(v, 0);
        break;
    case TensorProto::DOUBLE:
        if (tensor.double_data_size() != n)
            return std::nullopt;
        for (auto v : tensor.double_data())
            push(v, 0);
        break;
    case TensorProto::INT64:
        if (tensor.int64_data_size() != n)
            return std::nullopt;
        for (auto v : tensor.int64_data())
            push(0, v);
        break;
    case TensorProto::UINT32: case TensorProto::UINT64:
        if (tensor.uint64_data_size() != n)
            return std::nullopt;
        for (auto v : tensor.uint64_data())
            push(0, std::int64_t(v));
        break;
    default: // int32_data holds every type of 32 bits or less, float16/bfloat16 as bit patterns
        if (tensor.int32_data_size() != n)
            return std::nullopt;
        for (auto v : tensor.int32_data()) {
            if (t == TensorProto::FLOAT16)
                push(halfToFloat(std::uint16_t(v)), 0);
            else if (t == TensorProto::BFLOAT16)
                push(bfloat16ToFloat(std::uint16_t(v)), 0);
            else
                push(0, v);
        }
        break;
    }
    return value;
}

void writeConst(const ConstValue& value, TensorProto& tensor)
{
    tensor.set_data_type(value.elemType);
    tensor.clear_dims();
    for (auto d : value.dims)
        tensor.add_dims(d);
    const int eb = rawElementBytes(value.elemType);
    const std::int64_t n = value.count();
    std::string raw(std::size_t(n * eb), '\0');
    for (std::int64_t k = 0; k < n; ++k) {
        char* p = raw.data() + k * eb;
        auto store = [p](auto v) { std::memcpy(p, &v, sizeof v); };
        switch (value.elemType) {
        case TensorProto::FLOAT: store(float(value.real(k))); break;
        case TensorProto::DOUBLE: store(value.real(k)); break;
        case TensorProto::FLOAT16: store(floatToHalf(float(value.real(k)))); break;
        case TensorProto::BFLOAT16: store(floatToBfloat16(float(value.real(k)))); break;
        case TensorProto::UINT8: case TensorProto::BOOL: store(std::uint8_t(value.integer(k))); break;
        case TensorProto::INT8: store(std::int8_t(value.integer(k))); break;
        case TensorProto::UINT16: store(std::uint16_t(value.integer(k))); break;
        case TensorProto::INT16: store(std::int16_t(value.integer(k))); break;
        case TensorProto::INT32: store(std::int32_t(value.integer(k))); break;
        case TensorProto::UINT32: store(std::uint32_t(value.integer(k))); break;
        default: store(value.integer(k)); break;
        }
    }
    tensor.set_raw_data(std::move(raw));
}

const onnx::AttributeProto* findAttr(const onnx::NodeProto& node, const std::string& name)
{
    for (const auto& a : node.attribute())
        if (a.name() == name)
            return &a;
    return nullptr;
}

std::int64_t attrInt(const onnx::NodeProto& node, const std::string& name, std::int64_t fallback)
{
    const auto* a = findAttr(node, name);
    return a && a->has_i() ? a->i() : fallback;
}

float attrFloat(const onnx::NodeProto& node, const std::string& name, float fallback)
{
    const auto* a = findAttr(node, name);
    return a && a->has_f() ? a->f() : fallback;
}

std::string attrString(const onnx::NodeProto& node, const std::string& name, const std::string& fallback)
{
    const auto* a = findAttr(node, name);
    return a && a->has_s() ? a->s() : fallback;
}

std::optional<std::vector<std::int64_t>> attrInts(const onnx::NodeProto& node, const std::string& name)
{
    const auto* a = findAttr(node, name);
    if (!a)
        return std::nullopt;
    if (a->ints_size() == 0 && a->has_i())
        return std::vector<std::int64_t> { a->i() };
    return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<std::vector<float>> attrFloats(const onnx::NodeProto& node, const std::string& name)
{
    const auto* a = findAttr(node, name);
    if (!a)
        return std::nullopt;
    if (a->floats_size() == 0 && a->has_f())
        return std::vector<float> { a->f() };
    return std::vector<float>(a->floats().begin(), a->floats().end());
}

} // namespace core::onnxdetail
