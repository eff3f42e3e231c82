// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "onnx/onnxbodies.h"

#include "onnx/onnxinfer.h"
#include "onnx/onnxload.h"

#include <algorithm>
#include <unordered_set>

namespace core::onnxdetail {

namespace {

bool isDefaultDomain(const onnx::NodeProto& node) { return node.domain().empty() || node.domain() == "ai.onnx"; }

bool hasGraphs(const onnx::NodeProto& node)
{
    static const std::unordered_set<std::string> types { "If", "Loop", "Scan", "SequenceMap" };
    return isDefaultDomain(node) && types.count(node.op_type()) > 0;
}

int defaultOpset(const onnx::ModelProto& model)
{
    for (const auto& o : model.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx")
            return int(o.version());
    return 1;
}

Tensor tensorOf(const std::string& name, const ValueFacts* f, TensorKind kind)
{
    Tensor t;
    t.name = name;
    t.kind = kind;
    if (!f)
        return t;
    t.dtype = dtypeFromOnnx(f->elemType).value_or(DType::Undefined);
    t.estimated = f->estimated;
    if (f->kind == ValueKind::Tensor && f->rankKnown) {
        t.rankKnown = true;
        t.shape = f->dims;
    }
    if (f->kind == ValueKind::Sequence) {
        t.sequence = t.estimated = true;
        t.listExact = !f->estimated && f->elementsKnown();
    }
    if (f->optional)
        t.optional = t.estimated = true;
    const std::int64_t bytes = factsBytes(*f);
    t.size = bytes >= 0 ? bytes : kUnknownSize;
    return t;
}

// Why a graph cannot be planned inside its op ("then_branch: value 'x' (from 'Mul_2') has no known
// size"); empty when it can.
using Why = std::string;

Why attachTo(Op& op, const onnx::ModelProto& model, const onnx::NodeProto& node, const OuterLookup& lookup, int depth);

// The graph `body` of a control-flow op as a Graph of its own (OpBody), from the facts of its values.
Why bodyGraph(const onnx::ModelProto& model, const onnx::GraphProto& body, const std::string& name,
    const std::unordered_map<std::string, ValueFacts>& facts, const OuterLookup& outer, int depth, Graph& b)
{
    b.name = name;
    std::unordered_map<std::string, TensorIndex> index;
    const auto find = [&](const std::string& n) -> const ValueFacts* {
        const auto it = facts.find(n);
        return it == facts.end() ? nullptr : &it->second;
    };
    const auto add = [&](const std::string& n, TensorKind kind) {
        if (n.empty() || index.count(n))
            return;
        index.emplace(n, TensorIndex(b.tensors.size()));
        b.tensors.push_back(tensorOf(n, find(n), kind));
    };
    for (const auto& vi : body.input()) {
        add(vi.name(), TensorKind::Input);
        b.inputs.push_back(index.at(vi.name()));
    }
    for (const auto& t : body.initializer())
        add(t.name(), TensorKind::Weight);
    for (const auto& s : body.sparse_initializer())
        add(s.values().name(), TensorKind::Weight);
    for (const auto& node : body.node())
        for (const auto& out : node.output())
            add(out, node.op_type() == "Constant" && isDefaultDomain(node) ? TensorKind::Weight : TensorKind::Activation);
    for (const auto& vi : body.output()) {
        const auto it = index.find(vi.name());
        if (it == index.end())
            continue; // an outer value: the op's own output holds it
        auto& t = b.tensors[std::size_t(it->second)];
        if (t.kind == TensorKind::Weight)
            continue;
        if (t.kind == TensorKind::Activation)
            t.kind = TensorKind::Output;
        if (std::find(b.outputs.begin(), b.outputs.end(), it->second) == b.outputs.end())
            b.outputs.push_back(it->second);
    }

    // A nested graph looks names up here first, then in the scopes around.
    const OuterLookup inner = [&](const std::string& n) -> const ValueFacts* {
        if (const auto* f = find(n))
            return f;
        return outer(n);
    };
    std::vector<OpIndex> producer(b.tensors.size(), -1);
    for (int j = 0; j < body.node_size(); ++j) {
        const auto& node = body.node(j);
        Op op;
        op.type = node.op_type();
        op.domain = isDefaultDomain(node) ? std::string() : node.domain();
        op.name = opNameOf(node, j);
        for (const auto& a : node.attribute())
            if (isScalarOrListAttribute(a))
                op.attributes.emplace(a.name(), toAttribute(a));
        for (int k = 0; k < node.input_size(); ++k)
            if (const auto it = index.find(node.input(k)); it != index.end()) {
                op.inputs.push_back(it->second);
                op.inputSlots.push_back(k);
            }
        for (int k = 0; k < node.output_size(); ++k)
            if (const auto it = index.find(node.output(k)); it != index.end()) {
                op.outputs.push_back(it->second);
                op.outputSlots.push_back(k);
                producer[std::size_t(it->second)] = OpIndex(b.ops.size());
            }
        trimSlots(op.inputSlots);
        trimSlots(op.outputSlots);
        for (const auto& n : subgraphReads(node))
            if (const auto it = index.find(n); it != index.end())
                op.captured.push_back(it->second);
        if (hasGraphs(node))
            if (auto why = attachTo(op, model, node, inner, depth); !why.empty())
                return "op '" + op.name + "' (" + op.type + ") in it: " + why;
        b.ops.push_back(std::move(op));
    }
    for (const auto t : unsizedTensors(b)) {
        const OpIndex p = producer[std::size_t(t)];
        return "value '" + b.tensors[std::size_t(t)].name + "' ("
            + (p >= 0 ? "from " + b.ops[std::size_t(p)].name : std::string("a formal input")) + ") has no known size";
    }
    return {};
}

Why attachTo(Op& op, const onnx::ModelProto& model, const onnx::NodeProto& node, const OuterLookup& lookup, int depth)
{
    if (depth >= kMaxSubgraphDepth)
        return "its graphs nest deeper than " + std::to_string(kMaxSubgraphDepth) + " levels";
    std::vector<const ValueFacts*> inputs;
    for (const auto& in : node.input())
        inputs.push_back(in.empty() ? nullptr : lookup(in));
    std::vector<OpBody> bodies;
    for (auto& [attribute, inferred] : inferSubgraphValues(model, node, defaultOpset(model), inputs, lookup, depth)) {
        auto graph = std::make_shared<Graph>();
        if (auto why = bodyGraph(model, attribute->g(), op.name + "/" + attribute->name(), inferred.facts, lookup, depth + 1, *graph);
            !why.empty())
            return attribute->name() + ": " + why;
        bodies.push_back(OpBody { attribute->name(), std::move(graph) });
    }
    op.bodies = std::move(bodies);
    return {};
}

} // namespace

void attachBodies(Graph& g, const onnx::ModelProto& model, const std::unordered_map<std::string, ValueFacts>& facts,
    std::vector<std::string>& notes)
{
    std::unordered_map<std::string, int> nodeOf;
    for (int i = 0; i < model.graph().node_size(); ++i)
        if (hasGraphs(model.graph().node(i)))
            nodeOf.emplace(opNameOf(model.graph().node(i), i), i);
    if (nodeOf.empty())
        return;
    const OuterLookup lookup = [&](const std::string& name) -> const ValueFacts* {
        const auto it = facts.find(name);
        return it == facts.end() ? nullptr : &it->second;
    };
    for (auto& op : g.ops) {
        const auto it = nodeOf.find(op.name);
        if (it == nodeOf.end())
            continue;
        if (auto why = attachTo(op, model, model.graph().node(it->second), lookup, 0); !why.empty())
            notes.push_back(op.type + " '" + op.name + "': its graphs are not planned inside it (" + why
                + "); it is planned as one op whose lifetime covers the outer values they read");
    }
}

} // namespace core::onnxdetail
