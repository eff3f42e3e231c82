// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// What the ONNX spec forbids in an op's attributes and constant inputs, checked on the Graph that
// import (or the JSON reader) made: a model that breaks one cannot run, and the shape rules would
// otherwise size its outputs from nonsense (a Pad to a negative dimension planned as 0 bytes, a
// TopK with a huge k planned as gigabytes). Only what is certain is checked: an attribute the op
// states, a constant input import knows, a dimension that is known and not an estimate.
#include "onnx/onnxconsistency.h"

#include "onnx/onnxvalue.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <string_view>

namespace core {

namespace {

using onnxdetail::dimsText;

std::string listText(const std::vector<std::int64_t>& values)
{
    std::string text = "[";
    for (std::size_t i = 0; i < values.size(); ++i)
        text += (i ? "," : "") + std::to_string(values[i]);
    return text + "]";
}

// Ops with a single `axis` attribute and how far past the input's rank it may reach: 0 for
// [-r, r-1], 1 for [-r-1, r] (Flatten's axis may split after the last dimension; OneHot inserts one).
struct AxisRule {
    std::string_view op;
    std::string_view attribute;
    int extra;
};
constexpr AxisRule kAxisRules[] = {
    { "Softmax", "axis", 0 }, { "LogSoftmax", "axis", 0 }, { "Hardmax", "axis", 0 }, { "Concat", "axis", 0 },
    { "Gather", "axis", 0 }, { "GatherElements", "axis", 0 }, { "ScatterElements", "axis", 0 }, { "Split", "axis", 0 },
    { "ArgMax", "axis", 0 }, { "ArgMin", "axis", 0 }, { "TopK", "axis", 0 }, { "Compress", "axis", 0 },
    { "LayerNormalization", "axis", 0 }, { "Flatten", "axis", 1 }, { "OneHot", "axis", 1 },
};
const std::set<std::string_view> kReduce {
    "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
    "ReduceLogSumExp", "ReduceSumSquare", "Squeeze",
};
const std::set<std::string_view> kConv { "Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "DeformConv" };
const std::set<std::string_view> kPool { "MaxPool", "AveragePool", "LpPool", "MaxUnpool" };

class OpChecker {
public:
    OpChecker(const Graph& g, const Op& op, const KnownValues& values, const KnownReals& reals)
        : m_graph(g)
        , m_op(op)
        , m_values(values)
        , m_reals(reals)
    {
    }

    std::optional<std::string> check() const
    {
        for (const auto& rule : kAxisRules)
            if (m_op.type == rule.op)
                if (auto why = axisFault(std::string(rule.attribute), 0, rule.extra))
                    return why;
        if (kReduce.count(m_op.type))
            if (auto why = axesFault())
                return why;
        if (kConv.count(m_op.type) || kPool.count(m_op.type))
            if (auto why = windowFault())
                return why;
        if (m_op.type == "Gather")
            return gatherIndices();
        if (m_op.type == "Pad")
            return pad();
        if (m_op.type == "Range")
            return range();
        if (m_op.type == "Split")
            return split();
        if (m_op.type == "TopK")
            return topK();
        return std::nullopt;
    }

private:
    const Tensor* input(std::size_t slot) const
    {
        for (std::size_t k = 0; k < m_op.inputs.size(); ++k)
            if (std::size_t(inputSlot(m_op, k)) == slot)
                return &m_graph.tensors[std::size_t(m_op.inputs[k])];
        return nullptr;
    }
    // Input `slot` when its rank is certain (a tensor, not a sequence).
    const Tensor* ranked(std::size_t slot) const
    {
        const auto* t = input(slot);
        return t && t->rankKnown && !t->sequence ? t : nullptr;
    }
    // Dimension `d` of input `slot` when known exactly, else -1.
    std::int64_t exactDim(std::size_t slot, std::int64_t d) const
    {
        const auto* t = ranked(slot);
        return t && !t->estimated && d >= 0 && d < std::int64_t(t->shape.size()) ? t->shape[std::size_t(d)] : -1;
    }
    const std::vector<std::int64_t>* values(std::size_t slot) const
    {
        for (std::size_t k = 0; k < m_op.inputs.size(); ++k)
            if (std::size_t(inputSlot(m_op, k)) == slot)
                return m_values ? m_values(m_op.inputs[k]) : nullptr;
        return nullptr;
    }
    const std::vector<double>* reals(std::size_t slot) const
    {
        for (std::size_t k = 0; k < m_op.inputs.size(); ++k)
            if (std::size_t(inputSlot(m_op, k)) == slot)
                return m_reals ? m_reals(m_op.inputs[k]) : nullptr;
        return nullptr;
    }
    const std::vector<std::int64_t>* ints(const std::string& name) const
    {
        const auto it = m_op.attributes.find(name);
        return it != m_op.attributes.end() && it->second.floats.empty() && it->second.text.empty() ? &it->second.ints : nullptr;
    }
    std::string named(std::size_t slot) const
    {
        const auto* t = input(slot);
        return t ? "'" + t->name + "' " + (t->rankKnown ? dimsText(t->shape) : std::string("[?]")) : std::string("?");
    }
    // The axis stated by attribute `name`, normalised against the rank of input `slot`; a fault
    // message when it lies outside [-r-extra, r-1+extra].
    std::optional<std::string> axisFault(const std::string& name, std::size_t slot, int extra) const
    {
        const auto* a = ints(name);
        const auto* x = ranked(slot);
        if (!a || a->size() != 1 || !x || (x->shape.empty() && extra == 0))
            return std::nullopt;
        const auto rank = std::int64_t(x->shape.size()) + extra;
        const auto axis = (*a)[0];
        if (axis >= -rank && axis < rank)
            return std::nullopt;
        return "attribute " + name + " " + std::to_string(axis) + " is outside [" + std::to_string(-rank) + ", "
            + std::to_string(rank - 1) + "] for input " + named(slot) + " of rank " + std::to_string(x->shape.size());
    }

    // Reductions and Squeeze: axes as an attribute (older opsets) or a constant input 1.
    std::optional<std::string> axesFault() const
    {
        const auto* x = ranked(0);
        if (!x || x->shape.empty())
            return std::nullopt;
        const auto* axes = ints("axes");
        const std::string what = axes ? "attribute axes " : "axes ";
        if (!axes)
            axes = values(1);
        if (!axes)
            return std::nullopt;
        const auto rank = std::int64_t(x->shape.size());
        for (auto a : *axes)
            if (a < -rank || a >= rank)
                return what + listText(*axes) + " name axis " + std::to_string(a) + ", outside [" + std::to_string(-rank) + ", "
                    + std::to_string(rank - 1) + "] for input " + named(0) + " of rank " + std::to_string(rank);
        return std::nullopt;
    }

    // Conv and pooling windows: kernel, strides and dilations at least 1; a Conv's group a
    // positive divisor of its input and output channels.
    std::optional<std::string> windowFault() const
    {
        for (const char* name : { "kernel_shape", "strides", "dilations" })
            if (const auto* v = ints(name))
                for (auto s : *v)
                    if (s < 1)
                        return "attribute " + std::string(name) + " " + listText(*v) + " holds " + std::to_string(s)
                            + ": every entry must be at least 1";
        if (!kConv.count(m_op.type))
            return std::nullopt;
        const auto* g = ints("group");
        if (!g || g->size() != 1)
            return std::nullopt;
        const auto group = (*g)[0];
        if (group < 1)
            return "attribute group is " + std::to_string(group) + ": it must be at least 1";
        const auto channels = exactDim(0, 1);
        if (channels > 0 && channels % group != 0)
            return "attribute group " + std::to_string(group) + " does not divide the " + std::to_string(channels)
                + " channels of input " + named(0);
        const std::size_t weight = m_op.type == "QLinearConv" ? 3 : 1;
        const auto filters = exactDim(weight, 0);
        if (m_op.type != "ConvTranspose" && filters > 0 && filters % group != 0)
            return "attribute group " + std::to_string(group) + " does not divide the " + std::to_string(filters)
                + " output channels of weight " + named(weight);
        return std::nullopt;
    }

    // Constant indices must lie in [-d, d-1] of the gathered axis (ONNX leaves others undefined).
    std::optional<std::string> gatherIndices() const
    {
        const auto* x = ranked(0);
        const auto* indices = values(1);
        if (!x || x->shape.empty() || !indices)
            return std::nullopt;
        const auto* a = ints("axis");
        const auto axis = normalizeAxis(a && a->size() == 1 ? (*a)[0] : 0, std::int64_t(x->shape.size()));
        const auto dim = axis ? exactDim(0, *axis) : -1;
        if (dim < 0)
            return std::nullopt;
        for (auto i : *indices)
            if (i < -dim || i >= dim)
                return "index " + std::to_string(i) + " of indices " + named(1) + " is outside [" + std::to_string(-dim) + ", "
                    + std::to_string(dim - 1) + "] for axis " + std::to_string(*axis) + " of input " + named(0);
        return std::nullopt;
    }

    // Pads may crop (negative) but not below zero elements.
    std::optional<std::string> pad() const
    {
        const auto* x = ranked(0);
        if (!x || x->estimated)
            return std::nullopt;
        const auto* pads = ints("pads");
        if (!pads)
            pads = ints("paddings"); // opset 1
        const std::string what = pads ? "attribute pads " : "pads ";
        if (!pads)
            pads = values(1);
        const auto rank = std::int64_t(x->shape.size());
        if (!pads || pads->size() % 2 != 0)
            return std::nullopt;
        std::vector<std::int64_t> axes(static_cast<std::size_t>(rank));
        std::iota(axes.begin(), axes.end(), 0);
        if (input(3)) { // opset 18: the axes the pads apply to
            const auto* given = values(3);
            if (!given)
                return std::nullopt;
            axes.clear();
            for (auto a : *given) {
                const auto n = normalizeAxis(a, rank);
                if (!n)
                    return "axes " + listText(*given) + " name axis " + std::to_string(a) + ", outside [" + std::to_string(-rank)
                        + ", " + std::to_string(rank - 1) + "] for input " + named(0);
                axes.push_back(*n);
            }
        }
        if (pads->size() != 2 * axes.size())
            return what + listText(*pads) + " hold " + std::to_string(pads->size()) + " values; input " + named(0) + " needs "
                + std::to_string(2 * axes.size()) + " (a begin and an end per axis)";
        for (std::size_t k = 0; k < axes.size(); ++k) {
            const auto d = x->shape[std::size_t(axes[k])];
            const auto after = d + (*pads)[k] + (*pads)[k + axes.size()];
            if (d >= 0 && after < 0)
                return what + listText(*pads) + " make dimension " + std::to_string(axes[k]) + " of input " + named(0) + " "
                    + std::to_string(after) + " (no tensor has a negative size)";
        }
        return std::nullopt;
    }

    std::optional<std::string> range() const
    {
        const auto* delta = values(2);
        const auto* realDelta = reals(2);
        if ((delta && delta->size() == 1 && (*delta)[0] == 0) || (realDelta && realDelta->size() == 1 && (*realDelta)[0] == 0.0))
            return "delta " + named(2) + " is 0: the range would never reach its limit";
        return std::nullopt;
    }

    // Split sizes (input 1 from opset 13, attribute `split` before) must sum to the split dimension.
    std::optional<std::string> split() const
    {
        const auto* x = ranked(0);
        if (!x || x->shape.empty())
            return std::nullopt;
        const auto* sizes = ints("split");
        const std::string what = sizes ? "attribute split " : "split ";
        if (!sizes)
            sizes = values(1);
        const auto* a = ints("axis");
        const auto axis = normalizeAxis(a && a->size() == 1 ? (*a)[0] : 0, std::int64_t(x->shape.size()));
        if (!sizes || !axis)
            return std::nullopt;
        for (auto s : *sizes)
            if (s < 0)
                return what + listText(*sizes) + " holds a negative size";
        const auto dim = exactDim(0, *axis);
        const auto sum = std::accumulate(sizes->begin(), sizes->end(), std::int64_t(0));
        if (dim >= 0 && sum != dim)
            return what + listText(*sizes) + " sums to " + std::to_string(sum) + ", but dimension " + std::to_string(*axis)
                + " of input " + named(0) + " is " + std::to_string(dim);
        return std::nullopt;
    }

    // k (input 1 from opset 10, attribute `k` before) within [0, d] of the axis.
    std::optional<std::string> topK() const
    {
        const auto* x = ranked(0);
        if (!x || x->shape.empty())
            return std::nullopt;
        const auto* k = ints("k");
        const std::string what = k ? "attribute k " : "k ";
        if (!k)
            k = values(1);
        const auto* a = ints("axis");
        const auto axis = normalizeAxis(a && a->size() == 1 ? (*a)[0] : -1, std::int64_t(x->shape.size()));
        if (!k || k->size() != 1 || !axis)
            return std::nullopt;
        const auto dim = exactDim(0, *axis);
        if ((*k)[0] < 0 || (dim >= 0 && (*k)[0] > dim))
            return what + std::to_string((*k)[0]) + " is outside [0, " + (dim >= 0 ? std::to_string(dim) : std::string("?"))
                + "], the size of axis " + std::to_string(*axis) + " of input " + named(0);
        return std::nullopt;
    }

    const Graph& m_graph;
    const Op& m_op;
    const KnownValues& m_values;
    const KnownReals& m_reals;
};

} // namespace

std::optional<ShapeConflict> firstInvalidOp(const Graph& graph, const KnownValues& values, const KnownReals& reals)
{
    for (OpIndex i = 0; i < OpIndex(graph.ops.size()); ++i) {
        const auto& op = graph.ops[i];
        if (!op.domain.empty() && op.domain != "ai.onnx")
            continue;
        if (auto why = OpChecker(graph, op, values, reals).check())
            return ShapeConflict { i, "op '" + op.name + "' (" + op.type + "): " + *why };
    }
    return std::nullopt;
}

} // namespace core
