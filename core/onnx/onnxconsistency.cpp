// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "onnx/onnxconsistency.h"

#include "graph/shapemath.h"
#include "onnx/onnxvalue.h"

#include <algorithm>

#include <set>
#include <string_view>

namespace core {

namespace {

using onnxdetail::dimsText;

// Ops whose inputs broadcast numpy-style against each other (PRelu is not one: its slope
// broadcasts to X only, and exporters write per-channel slopes that the numpy rule rejects).
const std::set<std::string_view> kBroadcast {
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "And", "Or", "Xor", "Equal", "Less",
    "Greater", "LessOrEqual", "GreaterOrEqual", "Where", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
};

bool known(std::int64_t d) { return d >= 0; }

// "[0,0,-1]": integers as written (dimsText prints unknown dims, -1, as "?").
std::string listText(const std::vector<std::int64_t>& values)
{
    std::string text = "[";
    for (std::size_t i = 0; i < values.size(); ++i)
        text += (i ? "," : "") + std::to_string(values[i]);
    return text + "]";
}

// Two dimensions that cannot be the same size after broadcasting (1 stretches; unknown matches).
bool clash(std::int64_t a, std::int64_t b) { return known(a) && known(b) && a != b && a != 1 && b != 1; }

std::int64_t intAttribute(const Op& op, const std::string& name, std::int64_t fallback)
{
    const auto it = op.attributes.find(name);
    return it != op.attributes.end() && it->second.ints.size() == 1 ? it->second.ints[0] : fallback;
}

class Checker {
public:
    Checker(const Graph& g, const Op& op, const KnownValues& values)
        : m_graph(g)
        , m_op(op)
        , m_values(values)
    {
    }

    std::optional<std::string> check() const
    {
        // Only inputs whose shape is certain take part.
        for (auto t : m_op.inputs) {
            const auto& x = m_graph.tensors[t];
            if (!x.rankKnown || x.estimated)
                return std::nullopt;
        }
        if (kBroadcast.count(m_op.type))
            return broadcast();
        if (m_op.type == "Concat")
            return concat();
        if (m_op.type == "MatMul")
            return matmul();
        if (m_op.type == "Gemm")
            return gemm();
        if (m_op.type == "Conv" || m_op.type == "ConvTranspose")
            return conv();
        if (m_op.type == "Reshape")
            return reshape();
        if (m_op.type == "Transpose")
            return transpose();
        if (m_op.type == "Expand")
            return expand();
        if (m_op.type == "Split" && m_op.attributes.count("num_outputs")) {
            const auto parts = intAttribute(m_op, "num_outputs", 0);
            if (parts != std::int64_t(m_op.outputs.size()))
                return "num_outputs is " + std::to_string(parts) + " but the op has " + std::to_string(m_op.outputs.size())
                    + " outputs (one per part)";
        }
        if (m_op.type == "STFT")
            return stft();
        return std::nullopt;
    }

private:
    const Dims& dims(std::size_t k) const { return m_graph.tensors[m_op.inputs[k]].shape; }
    std::string input(std::size_t k) const { return "'" + m_graph.tensors[m_op.inputs[k]].name + "' " + dimsText(dims(k)); }
    std::string pair(std::size_t a, std::size_t b) const { return "inputs " + input(a) + " and " + input(b); }

    // Aligned from the right as numpy does; the first clash as "dimension d: x vs y", else empty.
    static std::string broadcastClash(const Dims& a, const Dims& b)
    {
        const std::size_t rank = std::max(a.size(), b.size());
        for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
            const auto x = a[a.size() - 1 - i], y = b[b.size() - 1 - i];
            if (clash(x, y))
                return "dimension " + std::to_string(rank - 1 - i) + " of the broadcast shape: " + std::to_string(x)
                    + " vs " + std::to_string(y);
        }
        return {};
    }

    std::optional<std::string> broadcast() const
    {
        // Pairwise compatibility is overall compatibility: at each position the sizes other than 1 agree.
        for (std::size_t a = 0; a < m_op.inputs.size(); ++a)
            for (std::size_t b = a + 1; b < m_op.inputs.size(); ++b)
                if (auto why = broadcastClash(dims(a), dims(b)); !why.empty())
                    return pair(a, b) + " do not broadcast (" + why + ")";
        return std::nullopt;
    }

    std::optional<std::string> concat() const
    {
        if (m_op.inputs.empty() || !m_op.attributes.count("axis"))
            return std::nullopt;
        const auto rank = std::int64_t(dims(0).size());
        std::int64_t axis = intAttribute(m_op, "axis", 0);
        axis += axis < 0 ? rank : 0;
        if (axis < 0 || axis >= rank)
            return "axis " + std::to_string(intAttribute(m_op, "axis", 0)) + " is outside input " + input(0);
        for (std::size_t k = 1; k < m_op.inputs.size(); ++k) {
            if (std::int64_t(dims(k).size()) != rank)
                return pair(0, k) + " differ in rank";
            for (std::int64_t d = 0; d < rank; ++d)
                if (d != axis && known(dims(0)[d]) && known(dims(k)[d]) && dims(0)[d] != dims(k)[d])
                    return pair(0, k) + " differ in dimension " + std::to_string(d) + " (Concat joins along axis "
                        + std::to_string(axis) + " only)";
        }
        return std::nullopt;
    }

    std::optional<std::string> matmul() const
    {
        if (m_op.inputs.size() != 2 || dims(0).empty() || dims(1).empty())
            return std::nullopt;
        const Dims& a = dims(0);
        const Dims& b = dims(1);
        const auto ka = a.back();
        const auto kb = b.size() == 1 ? b[0] : b[b.size() - 2];
        if (known(ka) && known(kb) && ka != kb)
            return pair(0, 1) + " differ in the inner dimension (" + std::to_string(ka) + " vs " + std::to_string(kb) + ")";
        const Dims batchA(a.begin(), a.end() - std::min<std::size_t>(a.size(), 2));
        const Dims batchB(b.begin(), b.end() - std::min<std::size_t>(b.size(), 2));
        if (auto why = broadcastClash(batchA, batchB); !why.empty())
            return pair(0, 1) + " have batch dimensions that do not broadcast (" + why + ")";
        return std::nullopt;
    }

    std::optional<std::string> gemm() const
    {
        if (m_op.inputs.size() < 2 || dims(0).size() != 2 || dims(1).size() != 2)
            return std::nullopt;
        const auto ka = dims(0)[intAttribute(m_op, "transA", 0) ? 0 : 1];
        const auto kb = dims(1)[intAttribute(m_op, "transB", 0) ? 1 : 0];
        if (known(ka) && known(kb) && ka != kb)
            return pair(0, 1) + " differ in the inner dimension (" + std::to_string(ka) + " vs " + std::to_string(kb)
                + ", after transA/transB)";
        return std::nullopt;
    }

    std::optional<std::string> conv() const
    {
        if (m_op.inputs.size() < 2 || dims(0).size() < 3 || dims(1).size() != dims(0).size())
            return std::nullopt;
        const auto group = intAttribute(m_op, "group", 1);
        const auto channels = dims(0)[1];
        // Conv weights are [M, C/group, k...]; ConvTranspose weights [C, M/group, k...].
        const bool transposed = m_op.type == "ConvTranspose";
        const auto expected = transposed ? dims(1)[0] : dims(1)[1] * group;
        if (group < 1 || !known(channels) || !known(expected) || channels == expected)
            return std::nullopt;
        return "input " + input(0) + " has " + std::to_string(channels) + " channels but weight " + input(1)
            + (group > 1 ? " with group " + std::to_string(group) : std::string()) + " expects " + std::to_string(expected);
    }

    // The target shape is often a constant traced at one input size; it must hold the same elements.
    std::optional<std::string> reshape() const
    {
        if (m_op.inputs.empty() || m_op.outputs.size() != 1)
            return std::nullopt;
        const auto& y = m_graph.tensors[m_op.outputs[0]];
        const auto in = elementCount(dims(0));
        const auto out = y.rankKnown && !y.estimated ? elementCount(y.shape) : -1;
        if (in >= 0 && out >= 0 && in != out)
            return "input " + input(0) + " holds " + std::to_string(in) + " elements but its output '" + y.name + "' "
                + dimsText(y.shape) + " holds " + std::to_string(out);
        const auto* shape = m_op.inputs.size() >= 2 && m_values ? m_values(m_op.inputs[1]) : nullptr;
        if (!shape || reshapeDims(dims(0), *shape, intAttribute(m_op, "allowzero", 0) != 0))
            return std::nullopt;
        return "input " + input(0) + " cannot take the target shape " + listText(*shape) + ": " + reshapeFault(*shape);
    }

    // Why reshapeDims refused `shape` for input 0.
    std::string reshapeFault(const std::vector<std::int64_t>& shape) const
    {
        const bool allowZero = intAttribute(m_op, "allowzero", 0) != 0;
        const auto count = [&](std::int64_t v) { return std::count(shape.begin(), shape.end(), v); };
        if (count(-1) > 1)
            return "more than one -1";
        if (std::any_of(shape.begin(), shape.end(), [](std::int64_t d) { return d < -1; }))
            return "a size below -1";
        if (!allowZero)
            for (std::size_t i = dims(0).size(); i < shape.size(); ++i)
                if (shape[i] == 0)
                    return "0 at position " + std::to_string(i) + " would copy dimension " + std::to_string(i)
                        + " of the input, which has rank " + std::to_string(dims(0).size());
        if (allowZero && count(0) > 0)
            return "with allowzero set a 0 is a size of zero, not a copy of the input's dimension, so the input's "
                + std::to_string(elementCount(dims(0))) + " elements do not fit";
        return "the input's " + std::to_string(elementCount(dims(0))) + " elements do not divide into it (-1 has no whole size)";
    }

    std::optional<std::string> expand() const
    {
        const auto* shape = m_op.inputs.size() >= 2 && m_values ? m_values(m_op.inputs[1]) : nullptr;
        if (!shape)
            return std::nullopt;
        if (const auto why = broadcastClash(dims(0), Dims(shape->begin(), shape->end())); !why.empty())
            return "input " + input(0) + " does not broadcast to the target shape " + listText(*shape) + " (" + why + ")";
        return std::nullopt;
    }

    std::optional<std::string> transpose() const
    {
        const auto it = m_op.attributes.find("perm");
        if (it == m_op.attributes.end() || m_op.inputs.empty())
            return std::nullopt;
        const auto& perm = it->second.ints;
        if (transposeOrder(&perm, dims(0).size()))
            return std::nullopt;
        return "perm " + listText(perm) + " is not an order of the " + std::to_string(dims(0).size()) + " axes of input " + input(0);
    }

    // A window (a float vector after the frame step) longer than the signal leaves no frame.
    std::optional<std::string> stft() const
    {
        if (dims(0).size() != 3 || !known(dims(0)[1]))
            return std::nullopt;
        for (std::size_t k = 2; k < m_op.inputs.size(); ++k) {
            const auto& w = m_graph.tensors[m_op.inputs[k]];
            if (w.shape.size() == 1 && (w.dtype == DType::Float32 || w.dtype == DType::Float64) && known(w.shape[0])
                && w.shape[0] > dims(0)[1])
                return "window " + input(k) + " is longer than the signal " + input(0) + " (" + std::to_string(w.shape[0]) + " against "
                    + std::to_string(dims(0)[1]) + " samples)";
        }
        return std::nullopt;
    }

    const Graph& m_graph;
    const Op& m_op;
    const KnownValues& m_values;
};

} // namespace

std::optional<ShapeConflict> firstShapeConflict(const Graph& graph, const KnownValues& values)
{
    for (OpIndex i = 0; i < OpIndex(graph.ops.size()); ++i) {
        const auto& op = graph.ops[i];
        if (!op.domain.empty() && op.domain != "ai.onnx")
            continue;
        if (auto why = Checker(graph, op, values).check())
            return ShapeConflict { i, "op '" + op.name + "' (" + op.type + "): " + *why };
    }
    return std::nullopt;
}

} // namespace core
