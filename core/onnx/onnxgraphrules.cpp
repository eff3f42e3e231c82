// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// A graph whose shapes a file declares (a JSON graph) against MemPlan's ONNX shape rules: each
// default-domain op is given to the rule as an ONNX node over its declared input shapes, and the
// output shapes the rule computes must be the ones the file declares. An executor sizes nothing
// itself: a declared shape the op cannot produce would end in a kernel refusing it.
#include "onnx/onnxconsistency.h"

#include "onnx/onnxshaperules.h"
#include "onnx/onnxattribute.h"
#include "onnx/onnxvalue.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string_view>

namespace core {

namespace {

using namespace onnxdetail;

// Ops whose outputs the rules take from subgraphs or sequences that a Graph does not keep.
const std::set<std::string_view> kSkipped { "If", "Loop", "Scan", "SequenceMap", "Fused", "Constant" };

// The ONNX library's newest opset, the default for a graph that states none.
constexpr int kDefaultOpset = 17;

ValueFacts factsOf(const Tensor& t)
{
    ValueFacts f;
    f.kind = t.sequence ? ValueKind::Sequence : ValueKind::Tensor;
    f.elemType = onnxFromDType(t.dtype);
    f.rankKnown = t.rankKnown;
    f.dims = t.shape;
    f.estimated = t.estimated;
    f.optional = t.optional;
    if (!t.sequence && !t.values.empty() && isIntegerType(f.elemType) && std::int64_t(t.values.size()) == elementCount(t.shape)) {
        auto value = std::make_shared<ConstValue>();
        value->elemType = f.elemType;
        value->dims = t.shape;
        value->ints = t.values;
        f.value = std::move(value);
    }
    return f;
}

// A declared shape that the computed one contradicts: another rank, or a known dimension that differs.
bool contradicts(const Dims& declared, const Dims& computed)
{
    if (declared.size() != computed.size())
        return true;
    for (std::size_t d = 0; d < declared.size(); ++d)
        if (declared[d] >= 0 && computed[d] >= 0 && declared[d] != computed[d])
            return true;
    return false;
}

} // namespace

std::optional<ShapeConflict> firstRuleMismatch(const Graph& graph)
{
    for (OpIndex i = 0; i < OpIndex(graph.ops.size()); ++i) {
        const auto& op = graph.ops[std::size_t(i)];
        if ((!op.domain.empty() && op.domain != "ai.onnx") || kSkipped.count(op.type) || !op.body.empty() || op.outputs.empty())
            continue;
        onnx::NodeProto node;
        node.set_op_type(op.type);
        node.set_name(op.name);
        RuleInput in;
        in.node = &node;
        const auto opset = graph.opsets.find(std::string());
        in.opset = opset != graph.opsets.end() ? int(opset->second) : kDefaultOpset;
        std::vector<ValueFacts> facts(op.inputs.size());
        bool sequences = false;
        for (std::size_t k = 0; k < op.inputs.size(); ++k) {
            const auto slot = std::size_t(inputSlot(op, k));
            while (std::size_t(node.input_size()) < slot) {
                node.add_input(std::string());
                in.inputs.push_back(nullptr);
            }
            const auto& t = graph.tensors[std::size_t(op.inputs[k])];
            sequences = sequences || t.sequence || t.optional;
            facts[k] = factsOf(t);
            node.add_input(t.name);
            in.inputs.push_back(&facts[k]);
        }
        if (sequences)
            continue; // the rules size sequences by bytes a Graph does not keep per element
        for (std::size_t k = 0; k < op.outputs.size(); ++k) {
            const auto slot = std::size_t(outputSlot(op, k));
            while (std::size_t(node.output_size()) < slot)
                node.add_output(std::string());
            node.add_output(graph.tensors[std::size_t(op.outputs[k])].name);
        }
        for (const auto& [name, a] : op.attributes)
            if (!(op.type == "ConstantOfShape" && name == "value"))
                writeAttribute(name, a, *node.add_attribute());
        const auto computed = applyShapeRule(in);
        for (std::size_t k = 0; k < op.outputs.size(); ++k) {
            const auto slot = std::size_t(outputSlot(op, k));
            const auto& t = graph.tensors[std::size_t(op.outputs[k])];
            if (slot >= computed.size() || !t.rankKnown || t.estimated || t.sequence || t.optional)
                continue;
            const auto& f = computed[slot];
            if (f.kind != ValueKind::Tensor || !f.rankKnown || f.estimated || !contradicts(t.shape, f.dims))
                continue;
            std::string inputs;
            for (auto x : op.inputs)
                inputs += (inputs.empty() ? "" : ", ") + ("'" + graph.tensors[std::size_t(x)].name + "' " + dimsText(graph.tensors[std::size_t(x)].shape));
            return ShapeConflict { i, "op '" + op.name + "' (" + op.type + "): output '" + t.name + "' is declared " + dimsText(t.shape)
                                          + ", but the op computes " + dimsText(f.dims) + " from its input" + (op.inputs.size() > 1 ? "s " : " ")
                                          + inputs };
        }
    }
    return std::nullopt;
}

} // namespace core
