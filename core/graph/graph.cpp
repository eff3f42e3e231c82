// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "graph/graph.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>

namespace core {

namespace {
struct DTypeInfo {
    DType dtype;
    std::string_view name;
    std::string_view onnxName;
    Bytes bytes;
};
constexpr std::array kDTypes {
    DTypeInfo { DType::Undefined, "undefined", "UNDEFINED", 0 },
    DTypeInfo { DType::Float32, "float32", "FLOAT", 4 },
    DTypeInfo { DType::Float16, "float16", "FLOAT16", 2 },
    DTypeInfo { DType::BFloat16, "bfloat16", "BFLOAT16", 2 },
    DTypeInfo { DType::Float64, "float64", "DOUBLE", 8 },
    DTypeInfo { DType::Int8, "int8", "INT8", 1 },
    DTypeInfo { DType::UInt8, "uint8", "UINT8", 1 },
    DTypeInfo { DType::Int16, "int16", "INT16", 2 },
    DTypeInfo { DType::UInt16, "uint16", "UINT16", 2 },
    DTypeInfo { DType::Int32, "int32", "INT32", 4 },
    DTypeInfo { DType::UInt32, "uint32", "UINT32", 4 },
    DTypeInfo { DType::Int64, "int64", "INT64", 8 },
    DTypeInfo { DType::UInt64, "uint64", "UINT64", 8 },
    DTypeInfo { DType::Bool, "bool", "BOOL", 1 },
    DTypeInfo { DType::Complex64, "complex64", "COMPLEX64", 8 },
    DTypeInfo { DType::Complex128, "complex128", "COMPLEX128", 16 },
    DTypeInfo { DType::String, "string", "STRING", 8 },
    DTypeInfo { DType::Float8, "float8", "FLOAT8E4M3FN", 1 },
};

const DTypeInfo& info(DType dtype)
{
    for (const auto& i : kDTypes)
        if (i.dtype == dtype)
            return i;
    return kDTypes[0];
}

bool equalsIgnoreCase(std::string_view a, std::string_view b)
{
    return a.size() == b.size()
        && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

constexpr std::array<std::string_view, kKindCount> kKindNames { "input", "output", "weight", "activation", "persistent", "workspace" };
} // namespace

Bytes dtypeBytes(DType dtype) { return info(dtype).bytes; }
std::string_view dtypeName(DType dtype) { return info(dtype).name; }

std::optional<DType> parseDType(std::string_view text)
{
    for (const auto& i : kDTypes)
        if (i.dtype != DType::Undefined && (equalsIgnoreCase(text, i.name) || equalsIgnoreCase(text, i.onnxName)))
            return i.dtype;
    if (equalsIgnoreCase(text, "float") || equalsIgnoreCase(text, "f32"))
        return DType::Float32;
    if (equalsIgnoreCase(text, "half") || equalsIgnoreCase(text, "f16"))
        return DType::Float16;
    if (equalsIgnoreCase(text, "double"))
        return DType::Float64;
    return std::nullopt;
}

std::string_view kindName(TensorKind kind) { return kKindNames[static_cast<std::size_t>(kind)]; }

std::optional<TensorKind> parseKind(std::string_view text)
{
    for (std::size_t i = 0; i < kKindNames.size(); ++i)
        if (equalsIgnoreCase(text, kKindNames[i]))
            return static_cast<TensorKind>(i);
    return std::nullopt;
}

std::optional<TensorIndex> Graph::findTensor(std::string_view name) const
{
    for (std::size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].name == name)
            return static_cast<TensorIndex>(i);
    return std::nullopt;
}

Bytes tensorBytes(DType dtype, const std::vector<std::int64_t>& shape)
{
    const Bytes element = dtypeBytes(dtype);
    if (element == 0)
        return kUnknownSize;
    Bytes total = element;
    for (const auto dim : shape) {
        if (dim < 0)
            return kUnknownSize;
        if (dim == 0)
            return 0;
        if (total > std::numeric_limits<Bytes>::max() / dim)
            return kUnknownSize;
        total *= dim;
    }
    return total;
}

std::string tensorTypeText(const Tensor& t, std::string_view times)
{
    std::string text = (t.optional ? "optional " : "") + std::string(dtypeName(t.dtype));
    if (t.sequence)
        return text + " sequence";
    if (!t.rankKnown)
        return text + " ?";
    if (t.shape.empty())
        return text + " scalar";
    for (std::size_t d = 0; d < t.shape.size(); ++d)
        text += (d == 0 ? std::string(" ") : std::string(times)) + (t.shape[d] >= 0 ? std::to_string(t.shape[d]) : std::string("?"));
    return text;
}

void computeSizes(Graph& graph)
{
    for (auto& tensor : graph.tensors)
        if (tensor.size == kUnknownSize && tensor.rankKnown)
            tensor.size = tensorBytes(tensor.dtype, tensor.shape);
}

std::vector<TensorIndex> unsizedTensors(const Graph& graph)
{
    std::vector<bool> used(graph.tensors.size(), false);
    for (const auto& op : graph.ops) {
        for (auto t : op.inputs)
            used[t] = true;
        for (auto t : op.outputs)
            used[t] = true;
    }
    for (auto t : graph.outputs)
        used[t] = true;
    std::vector<TensorIndex> result;
    for (std::size_t i = 0; i < graph.tensors.size(); ++i) {
        const auto& tensor = graph.tensors[i];
        if (used[i] && tensor.size == kUnknownSize && tensor.kind != TensorKind::Weight)
            result.push_back(static_cast<TensorIndex>(i));
    }
    return result;
}

std::vector<std::string> attributeStrings(const Attribute& a)
{
    if (a.strings.empty() && !a.text.empty())
        return { a.text };
    return a.strings;
}

int inputSlot(const Op& op, std::size_t k)
{
    return k < op.inputSlots.size() ? op.inputSlots[k] : int(k);
}

int outputSlot(const Op& op, std::size_t k)
{
    return k < op.outputSlots.size() ? op.outputSlots[k] : int(k);
}

void trimSlots(std::vector<int>& slots)
{
    if (!slots.empty() && slots.back() + 1 == int(slots.size()))
        slots.clear();
}

std::vector<std::string> slotNames(const Graph& graph, const std::vector<TensorIndex>& list, const std::vector<int>& slots)
{
    std::vector<std::string> names;
    for (std::size_t k = 0; k < list.size(); ++k) {
        const auto slot = std::size_t(k < slots.size() ? slots[k] : int(k));
        names.resize(std::max(names.size(), slot), std::string());
        names.push_back(graph.tensors[std::size_t(list[k])].name);
    }
    return names;
}

std::vector<TensorIndex> fusedInternals(const Op& op)
{
    std::vector<TensorIndex> result;
    for (const auto& part : op.body)
        for (auto t : part.outputs)
            if (std::find(op.outputs.begin(), op.outputs.end(), t) == op.outputs.end()
                && std::find(result.begin(), result.end(), t) == result.end())
                result.push_back(t);
    return result;
}

void replaceTensor(Op& op, TensorIndex from, TensorIndex to)
{
    for (auto* list : { &op.inputs, &op.outputs, &op.captured })
        std::replace(list->begin(), list->end(), from, to);
    for (auto& part : op.body)
        replaceTensor(part, from, to);
}

std::vector<OpIndex> producers(const Graph& graph)
{
    std::vector<OpIndex> result(graph.tensors.size(), -1);
    for (std::size_t op = 0; op < graph.ops.size(); ++op)
        for (auto t : graph.ops[op].outputs)
            result[t] = static_cast<OpIndex>(op);
    return result;
}

} // namespace core
