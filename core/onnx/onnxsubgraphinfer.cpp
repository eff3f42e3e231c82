// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Subgraph outputs by inference over the subgraph itself: the If/Loop/Scan body becomes a small
// model whose inputs are the body's formal inputs and the outer values it reads, and inferModel
// runs on it with every rule the top level has (folding, upper bounds for data-dependent ops).
// ONNX inference alone leaves a body output unknown as soon as one op inside is data-dependent:
// the NonMaxSuppression inside the If that detection exporters write around batched NMS.
#include "onnx/onnxinfer.h"

#include "onnx/onnxload.h"
#include "onnx/onnxshapemath.h"
#include "onnx/onnxshaperules.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <unordered_set>

namespace core::onnxdetail {

namespace {

// Facts the body sees for its formal inputs, from the node's inputs (Loop, Scan-9+, SequenceMap); empty for If.
std::vector<ValueFacts> formalInputs(const onnx::NodeProto& node, const onnx::GraphProto& body, int opset,
                                     const std::vector<const ValueFacts*>& inputs)
{
    std::vector<ValueFacts> formal(std::size_t(body.input_size()));
    auto input = [&](std::size_t k) -> const ValueFacts* { return k < inputs.size() ? inputs[k] : nullptr; };
    if (node.op_type() == "Loop") {
        if (!formal.empty())
            formal[0] = tensorFacts(onnx::TensorProto::INT64, {});
        if (formal.size() > 1)
            formal[1] = tensorFacts(onnx::TensorProto::BOOL, {});
        // Carried values enter with their initial facts; their value changes per iteration.
        for (std::size_t k = 2; k < formal.size(); ++k)
            if (const auto* f = input(k)) {
                formal[k] = *f;
                formal[k].value = nullptr;
            }
    } else if (node.op_type() == "SequenceMap") {
        // One element of each sequence input (its dims when every element has the same); a tensor
        // input as it is, every iteration.
        for (std::size_t k = 0; k < formal.size(); ++k) {
            const auto* f = input(k);
            if (!f)
                continue;
            if (f->kind != ValueKind::Sequence) {
                formal[k] = *f;
                continue;
            }
            const bool uniform = f->length >= 0 && f->dimsKnown();
            formal[k] = uniform ? tensorFacts(f->elemType, f->dims, f->estimated) : ValueFacts {};
            formal[k].kind = ValueKind::Tensor;
            formal[k].elemType = f->elemType;
        }
    } else if (node.op_type() == "Scan" && opset >= 9) {
        const std::int64_t scans = attrInt(node, "num_scan_inputs", 0);
        const std::int64_t states = std::int64_t(inputs.size()) - scans;
        const auto axes = attrInts(node, "scan_input_axes");
        for (std::size_t k = 0; k < formal.size(); ++k) {
            const auto* f = input(k);
            if (!f || states < 0)
                continue;
            formal[k] = *f;
            formal[k].value = nullptr;
            if (std::int64_t(k) < states || !f->rankKnown)
                continue;
            const std::size_t j = k - std::size_t(states);
            const auto axis = normalizeAxis(axes && j < axes->size() ? (*axes)[j] : 0, std::int64_t(f->dims.size()));
            if (!axis) {
                formal[k] = {};
                continue;
            }
            formal[k].dims.erase(formal[k].dims.begin() + *axis); // one slice along the scan axis
        }
    }
    return formal;
}

BodyFacts inferBodyFacts(const onnx::ModelProto& model, const onnx::GraphProto& body,
                         const std::vector<ValueFacts>& formal, const OuterLookup& outer, int depth)
{
    onnx::ModelProto sub;
    sub.set_ir_version(model.ir_version());
    *sub.mutable_opset_import() = model.opset_import();
    *sub.mutable_functions() = model.functions();
    auto* g = sub.mutable_graph();
    g->set_name(body.name());
    *g->mutable_node() = body.node();
    *g->mutable_output() = body.output();
    *g->mutable_value_info() = body.value_info();
    *g->mutable_sparse_initializer() = body.sparse_initializer();

    std::unordered_set<std::string> estimated; // values computed from an upper bound
    std::unordered_map<std::string, ValueFacts> sequences; // formal sequences with the bytes they enter with
    // Outer constants and formals with a known value (an unrolled Loop's iteration number) become
    // initializers, so folding inside sees them.
    std::deque<onnx::TensorProto> constants;
    std::vector<const onnx::TensorProto*> initializers;
    auto declare = [&](onnx::ValueInfoProto& vi, const ValueFacts& f) {
        // An optional is declared by its element's type (ValueFacts::optional says the rest).
        auto* type = vi.type().has_optional_type() ? vi.mutable_type()->mutable_optional_type()->mutable_elem_type() : vi.mutable_type();
        if (f.kind == ValueKind::Sequence && f.bytes >= 0 && type->has_sequence_type()) {
            sequences[vi.name()] = f;
            if (f.estimated)
                estimated.insert(vi.name());
        }
        if (f.kind != ValueKind::Tensor)
            return;
        ValueFacts merged = vi.has_type() ? factsFromType(vi.type()) : ValueFacts {};
        mergeFacts(merged, f);
        if (merged.kind == ValueKind::Tensor && !type->has_sequence_type())
            factsToType(merged, *type);
        if (f.estimated)
            estimated.insert(vi.name());
    };
    for (int k = 0; k < body.input_size(); ++k) {
        auto* vi = g->add_input();
        *vi = body.input(k);
        declare(*vi, formal[std::size_t(k)]);
        if (const auto& f = formal[std::size_t(k)]; f.kind == ValueKind::Tensor && f.value) {
            auto& t = constants.emplace_back();
            writeConst(*f.value, t);
            t.set_name(vi->name());
            initializers.push_back(&t);
        }
    }

    // Outer values: constants become initializers, the rest typed inputs.
    for (const auto& t : body.initializer())
        initializers.push_back(&t);
    std::vector<std::string> read;
    std::unordered_set<std::string> seen;
    freeNames(body, read, seen);
    for (const auto& name : read) {
        const ValueFacts* f = outer(name);
        if (f && f->kind == ValueKind::Sequence && f->bytes >= 0) {
            // An outer list the body reads (SequenceAt(x, i) in a Loop over x): a typed sequence input
            // holding the bytes it holds outside.
            auto* vi = g->add_input();
            vi->set_name(name);
            factsToType(*f, *vi->mutable_type()->mutable_sequence_type()->mutable_elem_type());
            declare(*vi, *f);
            continue;
        }
        if (!f || f->kind != ValueKind::Tensor)
            continue; // unknown there: nodes reading it stay unknown here
        if (f->value) {
            auto& t = constants.emplace_back();
            writeConst(*f->value, t);
            t.set_name(name);
            initializers.push_back(&t);
            continue;
        }
        auto* vi = g->add_input();
        vi->set_name(name);
        declare(*vi, *f);
    }

    auto inferred = inferModel(sub, initializers, valueNames(*g, initializers), depth + 1, sequences);
    // The body's nodes are in topological order (ONNX requires it).
    for (const auto& node : body.node()) {
        bool bound = std::any_of(node.input().begin(), node.input().end(), [&](const auto& in) { return estimated.count(in) > 0; });
        for (const auto& name : subgraphReads(node))
            bound = bound || estimated.count(name) > 0;
        if (bound)
            estimated.insert(node.output().begin(), node.output().end());
    }
    for (auto& [name, f] : inferred.facts)
        f.estimated = f.estimated || estimated.count(name) > 0;
    return BodyFacts { std::move(inferred.facts) };
}

std::vector<ValueFacts> inferBody(const onnx::ModelProto& model, const onnx::GraphProto& body,
                                  const std::vector<ValueFacts>& formal, const OuterLookup& outer, int depth)
{
    auto inferred = inferBodyFacts(model, body, formal, outer, depth);
    std::vector<ValueFacts> outs;
    for (const auto& vi : body.output())
        outs.push_back(inferred.facts[vi.name()]);
    return outs;
}

// A scalar of `elemType` holding `v`, as import knows a value.
ValueFacts scalar(int elemType, std::int64_t v)
{
    ValueFacts f = tensorFacts(elemType, {});
    auto value = std::make_shared<ConstValue>();
    value->elemType = elemType;
    value->ints = { v };
    f.value = std::move(value);
    return f;
}

bool knownScalar(const ValueFacts* f) { return f && f->value && !f->value->isReal() && f->value->count() == 1; }

// What unrolling a Loop at import starts from: its body, its trip count and its carried values'
// initial facts. nullopt when the trip count is not known, is beyond kMostUnrolledIterations or
// kMostUnrolledNodes, or the body's inputs and outputs do not match the Loop's.
struct LoopStart {
    const onnx::GraphProto* body = nullptr;
    std::int64_t trips = 0;
    std::vector<ValueFacts> state;
};

std::optional<LoopStart> loopStart(const onnx::NodeProto& node, const std::vector<const ValueFacts*>& inputs)
{
    const auto* a = findAttr(node, "body");
    if (!a || !a->has_g() || inputs.empty() || !knownScalar(inputs[0]))
        return std::nullopt;
    LoopStart start;
    start.body = &a->g();
    start.trips = inputs[0]->value->integer(0);
    const std::size_t carried = inputs.size() > 2 ? inputs.size() - 2 : 0;
    if (start.trips < 1 || start.trips > kMostUnrolledIterations || start.trips * start.body->node_size() > kMostUnrolledNodes
        || std::size_t(start.body->input_size()) != 2 + carried || std::size_t(start.body->output_size()) < 1 + carried)
        return std::nullopt;
    for (std::size_t k = 0; k < carried; ++k) {
        if (!inputs[2 + k])
            return std::nullopt;
        start.state.push_back(*inputs[2 + k]);
    }
    return start;
}

} // namespace

std::vector<ValueFacts> unrolledLoopOutputs(const onnx::ModelProto& model, const onnx::NodeProto& node,
                                            const std::vector<const ValueFacts*>& inputs, const OuterLookup& outer, int depth)
{
    const ValueFacts* condition = inputs.size() > 1 ? inputs[1] : nullptr;
    if (depth > 0 || (condition && (!knownScalar(condition) || condition->value->integer(0) == 0)))
        return {};
    auto start = loopStart(node, inputs);
    if (!start)
        return {};
    const auto& body = *start->body;
    const std::int64_t trips = start->trips;
    auto& state = start->state;
    const std::size_t carried = state.size();
    const std::size_t scanCount = std::size_t(body.output_size()) - 1 - carried;
    std::vector<ValueFacts> scans(scanCount);
    std::int64_t done = 0;
    while (done < trips) {
        std::vector<ValueFacts> formal { scalar(onnx::TensorProto::INT64, done), scalar(onnx::TensorProto::BOOL, 1) };
        formal.insert(formal.end(), state.begin(), state.end());
        const auto outs = inferBody(model, body, formal, outer, depth);
        ++done;
        if (outs.size() != std::size_t(body.output_size()) || !knownScalar(&outs[0]))
            return {}; // the loop may stop in any iteration
        for (std::size_t k = 0; k < carried; ++k) {
            const auto& result = outs[1 + k];
            const bool sized = result.kind == ValueKind::Tensor ? result.dimsKnown() : result.kind == ValueKind::Sequence && result.bytes >= 0;
            if (!sized)
                return {}; // the one-inference rule may still guess it
            state[k] = result;
        }
        for (std::size_t j = 0; j < scanCount; ++j) {
            const auto& slice = outs[1 + carried + j];
            if (slice.kind != ValueKind::Tensor || !slice.dimsKnown()
                || (done > 1 && (slice.dims != scans[j].dims || slice.elemType != scans[j].elemType)))
                return {};
            const bool estimated = scans[j].estimated || slice.estimated;
            scans[j] = slice;
            scans[j].estimated = estimated;
        }
        if (outs[0].value->integer(0) == 0)
            break;
    }
    std::vector<ValueFacts> out = std::move(state);
    for (auto& f : out)
        f.value = nullptr; // the run computes them; only their sizes are planned
    for (auto& slice : scans) {
        Dims dims { done };
        dims.insert(dims.end(), slice.dims.begin(), slice.dims.end());
        out.push_back(tensorFacts(slice.elemType, std::move(dims), slice.estimated));
    }
    return out;
}

namespace {

// Folds one iteration's facts into what holds for every iteration: the larger of two sizes (an
// estimate when they differ), unknown once any iteration leaves a value unknown.
void widenFacts(std::unordered_map<std::string, ValueFacts>& all, const std::unordered_map<std::string, ValueFacts>& one, bool first)
{
    if (first) {
        all = one;
        for (auto& [name, f] : all)
            f.value = nullptr;
        return;
    }
    for (auto& [name, f] : all) {
        const auto it = one.find(name);
        const std::int64_t a = factsBytes(f), b = it == one.end() ? -1 : factsBytes(it->second);
        if (a < 0 || b < 0) {
            f = ValueFacts {};
            continue;
        }
        const bool same = f.kind == it->second.kind && f.rankKnown == it->second.rankKnown && f.dims == it->second.dims && a == b;
        if (b > a)
            f = it->second;
        f.value = nullptr;
        f.estimated = f.estimated || it->second.estimated || !same;
    }
}

// A Loop's body values over its iterations, each inferred with its iteration number known and the
// carried values the iteration before produced (as unrolledLoopOutputs infers them), widened over
// the iterations: a Slice at the iteration number has a size in each. Empty when the trip count is
// not known at import, is beyond kMostUnrolledIterations or kMostUnrolledNodes, or a carried value
// stays unsized.
std::unordered_map<std::string, ValueFacts> unrolledBodyFacts(const onnx::ModelProto& model, const onnx::NodeProto& node,
    const std::vector<const ValueFacts*>& inputs, const OuterLookup& outer, int depth)
{
    auto start = loopStart(node, inputs);
    if (!start)
        return {};
    const auto& body = *start->body;
    const std::int64_t trips = start->trips;
    auto& state = start->state;
    const std::size_t carried = state.size();
    for (auto& f : state)
        f.value = nullptr;
    std::unordered_map<std::string, ValueFacts> all;
    for (std::int64_t i = 0; i < trips; ++i) {
        std::vector<ValueFacts> formal { scalar(onnx::TensorProto::INT64, i), tensorFacts(onnx::TensorProto::BOOL, {}) };
        formal.insert(formal.end(), state.begin(), state.end());
        auto facts = inferBodyFacts(model, body, formal, outer, depth).facts;
        widenFacts(all, facts, i == 0);
        for (std::size_t k = 0; k < carried; ++k) {
            const auto& result = facts[body.output(int(1 + k)).name()];
            if (factsBytes(result) < 0)
                return {};
            state[k] = result;
            state[k].value = nullptr;
        }
    }
    return all;
}

} // namespace

std::vector<std::pair<const onnx::AttributeProto*, BodyFacts>> inferSubgraphValues(const onnx::ModelProto& model,
    const onnx::NodeProto& node, int opset, const std::vector<const ValueFacts*>& inputs, const OuterLookup& outer, int depth)
{
    std::vector<std::pair<const onnx::AttributeProto*, BodyFacts>> result;
    for (const char* attribute : { "then_branch", "else_branch", "body" }) {
        const auto* a = findAttr(node, attribute);
        const bool owned = node.op_type() == "If" ? std::string(attribute) != "body"
            : std::string(attribute) == "body" && (node.op_type() == "Loop" || node.op_type() == "Scan" || node.op_type() == "SequenceMap");
        if (!a || !a->has_g() || !owned)
            continue;
        auto formal = formalInputs(node, a->g(), opset, inputs);
        if (node.op_type() == "SequenceMap")
            for (std::size_t k = 0; k < formal.size() && k < inputs.size(); ++k) {
                // Elements of different shapes: the body is planned for the largest (an estimate);
                // when their shapes are unknown, for one as large as the whole list.
                const auto* f = inputs[k];
                if (factsBytes(formal[k]) >= 0 || !f || f->kind != ValueKind::Sequence)
                    continue;
                if (!f->elementsKnown()) {
                    if (f->bytes >= 0) {
                        formal[k] = ValueFacts {};
                        formal[k].kind = ValueKind::Tensor;
                        formal[k].elemType = f->elemType;
                        formal[k].bytes = f->bytes;
                        formal[k].estimated = true;
                    }
                    continue;
                }
                std::int64_t most = -1;
                for (const auto& dims : f->elementDims) {
                    auto element = tensorFacts(f->elemType, dims, true);
                    if (const auto bytes = factsBytes(element); bytes > most) {
                        most = bytes;
                        formal[k] = std::move(element);
                    }
                }
            }
        auto facts = inferBodyFacts(model, a->g(), formal, outer, depth);
        if (node.op_type() == "Loop") {
            const bool sized = std::all_of(facts.facts.begin(), facts.facts.end(), [](const auto& f) { return factsBytes(f.second) >= 0; });
            if (!sized)
                if (auto unrolled = unrolledBodyFacts(model, node, inputs, outer, depth); !unrolled.empty())
                    facts.facts = std::move(unrolled);
        }
        result.emplace_back(a, std::move(facts));
    }
    return result;
}

std::vector<std::vector<ValueFacts>> inferSubgraphOutputs(const onnx::ModelProto& model, const onnx::NodeProto& node,
                                                          int opset, const std::vector<const ValueFacts*>& inputs,
                                                          const OuterLookup& outer, int depth)
{
    std::vector<std::vector<ValueFacts>> result;
    auto run = [&](const char* attribute) {
        const auto* a = findAttr(node, attribute);
        if (!a || !a->has_g())
            return;
        const auto formal = formalInputs(node, a->g(), opset, inputs);
        result.push_back(inferBody(model, a->g(), formal, outer, depth));
    };
    if (node.op_type() == "If") {
        run("then_branch");
        run("else_branch");
    } else if (node.op_type() == "Loop" || node.op_type() == "Scan" || node.op_type() == "SequenceMap") {
        run("body");
    }
    return result;
}

} // namespace core::onnxdetail
