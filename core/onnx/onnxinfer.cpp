// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "onnx/onnxinfer.h"

#include "onnx/onnxfold.h"
#include "onnx/onnxshapemath.h"
#include "onnx/onnxload.h"
#include "onnx/onnxshaperules.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <unordered_set>

namespace core::onnxdetail {

namespace {

constexpr int kMaxRounds = 50;
// Initializers up to this many elements are kept in the working copy with their data (shape
// arguments such as Reshape targets); larger ones only contribute their type.
constexpr std::int64_t kInitializerValueLimit = 4096;

std::string normalizedDomain(const std::string& domain) { return domain == "ai.onnx" ? std::string() : domain; }

std::vector<std::vector<ValueFacts>> subgraphOutputs(const onnx::NodeProto& node)
{
    std::vector<std::vector<ValueFacts>> result;
    auto add = [&](const char* name) {
        const auto* a = findAttr(node, name);
        if (!a || !a->has_g())
            return;
        std::vector<ValueFacts> outs;
        for (const auto& o : a->g().output())
            outs.push_back(o.has_type() ? factsFromType(o.type()) : ValueFacts {});
        result.push_back(std::move(outs));
    };
    if (node.op_type() == "If") {
        add("then_branch");
        add("else_branch");
    } else if (node.op_type() == "Loop" || node.op_type() == "Scan" || node.op_type() == "SequenceMap") {
        add("body");
    }
    return result;
}

// Last resort for a sequence whose length nothing tells: one element of its declared element type.
bool guessSequenceBytes(ValueFacts& f)
{
    if (f.kind != ValueKind::Sequence || f.bytes >= 0 || !f.rankKnown)
        return false;
    ValueFacts element = f;
    element.kind = ValueKind::Tensor;
    const std::int64_t bytes = factsBytes(element);
    if (bytes < 0)
        return false;
    f.bytes = bytes;
    f.estimated = true;
    return true;
}

// True when the node and every node of its subgraphs match their ONNX schemas (inputs, outputs,
// required attributes). ONNX 1.12's inference functions assume that and crash otherwise.
bool matchesSchema(const onnx::NodeProto& node, const std::unordered_map<std::string, int>& opsets,
                   const onnx::ISchemaRegistry* registry)
{
    const std::string domain = normalizedDomain(node.domain());
    auto it = opsets.find(domain);
    const auto* schema = registry->GetSchema(node.op_type(), it == opsets.end() ? 1 : it->second, domain);
    if (schema) {
        try {
            schema->Verify(node);
        } catch (...) {
            return false;
        }
    }
    for (const auto& a : node.attribute()) {
        if (a.has_g())
            for (const auto& inner : a.g().node())
                if (!matchesSchema(inner, opsets, registry))
                    return false;
        for (const auto& g : a.graphs())
            for (const auto& inner : g.node())
                if (!matchesSchema(inner, opsets, registry))
                    return false;
    }
    return true;
}

// Conv/pool inference in ONNX 1.12 indexes its attributes by the input's spatial rank and divides
// by strides: attributes that do not fit the input crash it. Such nodes stay with MemPlan's rules.
bool isWindowed(const onnx::NodeProto& node)
{
    static const std::unordered_set<std::string> windowed { "Conv", "ConvTranspose", "ConvInteger", "QLinearConv",
        "AveragePool", "MaxPool", "LpPool", "MaxUnpool", "DeformConv", "MaxRoiPool" };
    return windowed.count(node.op_type()) > 0;
}

// The input a convolution reads its kernel's dims from.
int weightInput(const onnx::NodeProto& node) { return node.op_type() == "QLinearConv" ? 3 : 1; }

bool plausibleWindowAttributes(const onnx::NodeProto& node, const std::vector<const ValueFacts*>& inputs)
{
    const ValueFacts* input = inputs.empty() ? nullptr : inputs[0];
    if (!isWindowed(node))
        return true;
    if (!input || !input->rankKnown || input->dims.size() < 3)
        return false;
    const auto spatial = std::int64_t(input->dims.size()) - 2;
    for (const char* name : { "kernel_shape", "strides", "dilations", "output_padding", "output_shape", "pads" }) {
        const auto values = attrInts(node, name);
        if (!values)
            continue;
        const bool pads = std::string(name) == "pads";
        if (std::int64_t(values->size()) != (pads ? 2 * spatial : spatial))
            return false;
        for (auto v : *values)
            if (pads || std::string(name) == "output_padding" ? v < 0 : v < 1)
                return false;
    }
    // Convolutions read the kernel's dims by the same rank.
    const auto weightIndex = std::size_t(weightInput(node));
    if (node.op_type().find("Conv") != std::string::npos) {
        const ValueFacts* weight = weightIndex < inputs.size() ? inputs[weightIndex] : nullptr;
        if (!weight || !weight->rankKnown || weight->dims.size() != input->dims.size())
            return false;
    }
    return attrInt(node, "group", 1) >= 1;
}

// Some ONNX 1.12 inference functions (LayerNormalization among them) index dims by an unchecked
// axis: an axis that does not fit the input's rank keeps the node away from ONNX.
bool plausibleAxis(const onnx::NodeProto& node, const std::vector<const ValueFacts*>& inputs)
{
    const auto* a = findAttr(node, "axis");
    if (!a || !a->has_i())
        return true;
    const ValueFacts* input = inputs.empty() ? nullptr : inputs[0];
    if (!input || !input->rankKnown)
        return false;
    // Ops that insert a dimension (Flatten, OneHot, Unsqueeze-like) accept one more position.
    const auto rank = std::int64_t(input->dims.size());
    const bool inserts = node.op_type() == "Flatten" || node.op_type() == "OneHot"
        || node.op_type() == "ConcatFromSequence" || node.op_type() == "SplitToSequence";
    const std::int64_t high = inserts ? rank : rank - 1;
    return a->i() >= -(high + 1) && a->i() <= high;
}

// The input ONNX 1.12 reads a result shape from (-1 for other ops). Without its values, ONNX takes
// the result's rank from the input's length, one dimension object per entry.
int shapeInputOf(const onnx::NodeProto& node)
{
    if (node.op_type() == "Reshape" || node.op_type() == "Expand")
        return 1;
    return node.op_type() == "ConstantOfShape" ? 0 : -1;
}

// A shape input of more entries than any tensor has dimensions (2^30 of them: gigabytes of
// dimension objects in ONNX's inference) keeps the node away from ONNX.
bool plausibleShapeInput(const onnx::NodeProto& node, const std::vector<const ValueFacts*>& inputs)
{
    constexpr std::int64_t kMostShapeEntries = 64;
    const int k = shapeInputOf(node);
    const ValueFacts* shape = k >= 0 && std::size_t(k) < inputs.size() ? inputs[std::size_t(k)] : nullptr;
    return !shape || !shape->rankKnown || shape->dims.size() != 1 || shape->dims[0] <= kMostShapeEntries;
}

// Whether ONNX 1.12's inference of `node` can be trusted with MemPlan's facts of its inputs.
bool plausibleOnFacts(const onnx::NodeProto& node, const std::vector<const ValueFacts*>& inputs)
{
    return plausibleWindowAttributes(node, inputs) && plausibleAxis(node, inputs) && plausibleShapeInput(node, inputs);
}

// The inputs `plausibleOnFacts` judges; ONNX must see the same facts of them as MemPlan did.
std::vector<int> judgedInputs(const onnx::NodeProto& node)
{
    std::vector<int> k;
    if (isWindowed(node) || findAttr(node, "axis") || shapeInputOf(node) >= 0)
        k.push_back(0);
    if (isWindowed(node))
        k.push_back(weightInput(node));
    if (shapeInputOf(node) > 0)
        k.push_back(shapeInputOf(node));
    return k;
}

bool hasSubgraph(const onnx::NodeProto& node)
{
    for (const auto& a : node.attribute())
        if (a.has_g() || a.graphs_size() > 0)
            return true;
    return false;
}

// Everything inference knows about the values a subgraph sees, as text: a subgraph is inferred
// again only when this changes.
void appendKey(std::string& key, const ValueFacts* f)
{
    if (!f) {
        key += "-;";
        return;
    }
    key += std::to_string(int(f->kind)) + ':' + std::to_string(f->elemType) + ':' + (f->rankKnown ? dimsText(f->dims) : "?")
        + ':' + std::to_string(f->bytes) + ':' + std::to_string(f->length) + (f->estimated ? "e" : "") + (f->value ? "v" : "") + ';';
}

} // namespace

InferenceResult inferModel(const onnx::ModelProto& model, const std::vector<const onnx::TensorProto*>& initializers,
                           const std::vector<std::string>& names, int depth,
                           const std::unordered_map<std::string, ValueFacts>& given)
{
    InferenceResult r;
    const auto& graph = model.graph();
    auto& facts = r.facts;
    facts.reserve(names.size() * 2);
    for (const auto& name : names)
        facts.emplace(name, ValueFacts {});

    std::unordered_map<std::string, int> opsets;
    for (const auto& o : model.opset_import())
        opsets[normalizedDomain(o.domain())] = int(o.version());
    auto opsetOf = [&](const std::string& domain) {
        auto it = opsets.find(domain);
        return it == opsets.end() ? 1 : it->second;
    };
    std::unordered_set<std::string> functions;
    for (const auto& f : model.functions())
        functions.insert(normalizedDomain(f.domain()) + ":" + f.name());

    // Declared knowledge: initializers (exact), then declared types of inputs, value_info, outputs.
    std::unordered_set<std::string> initializerNames, inputNames;
    for (const auto* t : initializers) {
        initializerNames.insert(t->name());
        auto& f = facts[t->name()];
        f = factsFromTensor(*t);
        if (auto v = readConst(*t, kInitializerValueLimit))
            f.value = std::make_shared<const ConstValue>(std::move(*v));
    }
    for (const auto& s : graph.sparse_initializer()) {
        initializerNames.insert(s.values().name());
        facts[s.values().name()] = factsFromTensor(s.values());
        facts[s.values().name()].dims.assign(s.dims().begin(), s.dims().end());
    }
    auto declare = [&](const onnx::ValueInfoProto& vi) {
        auto it = facts.find(vi.name());
        if (it != facts.end() && vi.has_type() && !initializerNames.count(vi.name()))
            mergeFacts(it->second, factsFromType(vi.type()));
    };
    for (const auto& vi : graph.input()) {
        inputNames.insert(vi.name());
        declare(vi);
        if (const auto s = given.find(vi.name()); s != given.end())
            if (auto it = facts.find(vi.name()); it != facts.end())
                mergeFacts(it->second, s->second);
    }
    for (const auto& vi : graph.value_info())
        declare(vi);
    for (const auto& vi : graph.output())
        declare(vi);
    // A stated shape that a producer contradicts is recorded once (see InferenceResult::stale).
    std::unordered_set<std::string> statedNames;
    for (const auto* list : { &graph.value_info(), &graph.output() })
        for (const auto& vi : *list)
            if (!initializerNames.count(vi.name()) && !inputNames.count(vi.name()))
                statedNames.insert(vi.name());
    auto checkStated = [&](const std::string& name, const ValueFacts& current, const ValueFacts& computed) {
        if (!statedNames.count(name) || !current.rankKnown || !computed.rankKnown || current.estimated || computed.estimated
            || current.kind != ValueKind::Tensor || computed.kind != ValueKind::Tensor)
            return;
        bool differs = current.dims.size() != computed.dims.size();
        for (std::size_t d = 0; !differs && d < current.dims.size(); ++d)
            differs = current.dims[d] >= 0 && computed.dims[d] >= 0 && current.dims[d] != computed.dims[d];
        if (differs) {
            r.stale.push_back({ name, current.dims, computed.dims });
            statedNames.erase(name);
        }
    };

    // Per node: which facts it reads and writes (pointers stay valid: the map is complete).
    const int n = graph.node_size();
    r.folded.assign(n, false);
    r.owned.assign(n, false);
    std::vector<std::vector<const ValueFacts*>> reads(n);
    std::vector<std::vector<ValueFacts*>> writes(n);
    std::vector<std::string> domains(n);
    const auto* registry = onnx::OpSchemaRegistry::Instance();
    for (int i = 0; i < n; ++i) {
        const auto& node = graph.node(i);
        domains[i] = normalizedDomain(node.domain());
        const int opset = opsetOf(domains[i]);
        const bool known = functions.count(domains[i] + ":" + node.op_type())
            || registry->GetSchema(node.op_type(), opset, domains[i]) != nullptr;
        // Constant is sized from its attribute without copying its (possibly large) data around.
        r.owned[i] = (node.op_type() == "Constant" && domains[i].empty())
            || ruleOwnsOp(domains[i], node.op_type(), opset, known) || !matchesSchema(node, opsets, registry);
        for (const auto& in : node.input()) {
            auto it = in.empty() ? facts.end() : facts.find(in);
            reads[i].push_back(it == facts.end() ? nullptr : &it->second);
        }
        for (const auto& out : node.output()) {
            auto it = out.empty() ? facts.end() : facts.find(out);
            writes[i].push_back(it == facts.end() ? nullptr : &it->second);
        }
    }

    // The working copy's skeleton: no nodes, no value_info (facts carry it), small initializers
    // with data, larger ones as typed inputs.
    onnx::ModelProto base;
    base.set_ir_version(model.ir_version());
    *base.mutable_opset_import() = model.opset_import();
    *base.mutable_functions() = model.functions();
    {
        auto* g = base.mutable_graph();
        g->set_name(graph.name());
        *g->mutable_input() = graph.input();
        *g->mutable_output() = graph.output();
        *g->mutable_sparse_initializer() = graph.sparse_initializer();
    }
    for (const auto* t : initializers) {
        if (facts[t->name()].value) {
            *base.mutable_graph()->add_initializer() = *t;
        } else if (!inputNames.count(t->name())) {
            auto* vi = base.mutable_graph()->add_input();
            vi->set_name(t->name());
            factsToType(factsFromTensor(*t), *vi->mutable_type());
        }
    }
    std::unordered_map<std::string, int> outputIndex;
    for (int k = 0; k < graph.output_size(); ++k)
        outputIndex.emplace(graph.output(k).name(), k);

    // How much the working copy tells ONNX. ONNX aborts the whole inference when an inferred shape
    // contradicts a stated one (even in non-strict mode), so on failure we state less:
    // tier 0 states every known shape, tier 1 only the shapes of values no node in the working
    // copy produces. Beyond that, the node named in the error is left to our rules.
    int tier = 0;
    int failures = 0;
    bool onnxEnabled = true;
    std::vector<bool> excluded(r.owned);
    // ONNX 1.12 may dereference the missing type of an undefined input (Shape's data propagation
    // does), so a node goes into the working copy only when everything it reads is defined there.
    std::unordered_set<std::string> baseDefined;
    for (const auto& vi : base.graph().input())
        baseDefined.insert(vi.name());
    for (const auto& vi : base.graph().output())
        baseDefined.insert(vi.name()); // declared output types are visible to consumers
    for (const auto& t : base.graph().initializer())
        baseDefined.insert(t.name());
    std::vector<std::vector<std::string>> captured(n);
    std::vector<std::vector<const ValueFacts*>> capturedReads(n);
    for (int i = 0; i < n; ++i)
        if (hasSubgraph(graph.node(i))) {
            captured[i] = subgraphReads(graph.node(i));
            for (const auto& name : captured[i]) {
                auto it = facts.find(name);
                capturedReads[i].push_back(it == facts.end() ? nullptr : &it->second);
            }
        }
    // Subgraph outputs inferred over the subgraph itself, and what it was inferred from.
    std::vector<std::string> nestedKey(n);
    std::vector<std::vector<std::vector<ValueFacts>>> nested(n);
    std::vector<std::vector<ValueFacts>> unrolled(n); // a Loop's outputs inferred per iteration
    const OuterLookup outer = [&](const std::string& name) -> const ValueFacts* {
        auto it = facts.find(name);
        return it == facts.end() ? nullptr : &it->second;
    };
    auto buildWork = [&](onnx::ModelProto& work, std::vector<int>& workIndex) {
        work = base;
        auto* g = work.mutable_graph();
        if (tier > 0)
            for (auto& vi : *g->mutable_output())
                if (vi.type().has_tensor_type())
                    vi.mutable_type()->mutable_tensor_type()->clear_shape();
        std::unordered_set<std::string> defined = baseDefined;
        std::unordered_set<std::string> stated, typed;
        auto state = [&](const std::string& name) {
            auto it = facts.find(name);
            if (it == facts.end() || initializerNames.count(name) || inputNames.count(name) || !stated.insert(name).second)
                return;
            const auto& f = it->second;
            if (f.value && f.value->count() <= kInitializerValueLimit) {
                auto* t = g->add_initializer();
                writeConst(*f.value, *t);
                t->set_name(name);
                defined.insert(name);
                typed.insert(name);
                return;
            }
            if (f.kind != ValueKind::Tensor || (!f.rankKnown && f.elemType == 0))
                return;
            typed.insert(name);
            if (auto out = outputIndex.find(name); out != outputIndex.end()) {
                auto* type = g->mutable_output(out->second)->mutable_type();
                if (!type->has_sequence_type() && !type->has_optional_type() && !type->has_map_type())
                    factsToType(f, *type);
                return;
            }
            auto* vi = g->add_value_info();
            vi->set_name(name);
            factsToType(f, *vi->mutable_type());
            defined.insert(name);
        };
        // ONNX 1.12's data propagation for Shape dereferences its input's type unchecked; a producer
        // whose inference fails (a Reshape to [-1,-1], a Transpose by [0,0], a batch of 0) leaves
        // none. A tensor type with neither element type nor shape stands in: inference fills it.
        auto typeReadInput = [&](const onnx::NodeProto& node) {
            if (node.op_type() != "Shape" || node.input_size() < 1 || node.input(0).empty())
                return;
            const auto& name = node.input(0);
            if (typed.count(name) || baseDefined.count(name))
                return;
            auto* vi = g->add_value_info();
            vi->set_name(name);
            vi->mutable_type()->mutable_tensor_type();
            typed.insert(name);
        };
        if (tier == 0)
            for (const auto& [name, f] : facts)
                state(name);
        workIndex.assign(n, -1);
        auto isDefined = [&](const std::string& name) { return name.empty() || defined.count(name); };
        for (int i = 0; i < n; ++i) {
            const auto& node = graph.node(i);
            const bool include = !r.folded[i] && !excluded[i]
                && std::all_of(node.input().begin(), node.input().end(), isDefined)
                && std::all_of(captured[i].begin(), captured[i].end(), isDefined)
                && plausibleOnFacts(node, reads[i]);
            if (!include) {
                for (const auto& out : node.output())
                    state(out); // ONNX cannot infer these: say what we know
                continue;
            }
            // Once shapes computed in the copy are no longer stated (tier 1), a producer that MemPlan
            // and ONNX read differently (in a model whose ops contradict each other) would hand ONNX
            // a rank its inference function indexes past (Conv's dilations by the kernel's rank).
            if (tier > 0)
                for (int k : judgedInputs(node))
                    if (k < node.input_size())
                        state(node.input(k));
            workIndex[i] = g->node_size();
            typeReadInput(node);
            *g->add_node() = node;
            for (const auto& out : node.output())
                defined.insert(out);
        }
    };
    // Finds the node an ONNX error names ("(op_type:Relu, node name: relu_3): ...").
    auto blame = [&](const std::string& what) {
        const auto at = what.find("node name: ");
        if (at == std::string::npos)
            return false;
        const auto end = what.find(')', at);
        const std::string name = what.substr(at + 11, end == std::string::npos ? std::string::npos : end - at - 11);
        bool found = false;
        for (int i = 0; i < n; ++i)
            if (!excluded[i] && graph.node(i).name() == name)
                excluded[i] = found = true;
        return found;
    };

    // Constants first, so the first round already sees the values and shapes they define.
    for (int i = 0; i < n; ++i) {
        if (!r.owned[i] || graph.node(i).op_type() != "Constant" || !domains[i].empty() || writes[i].empty() || !writes[i][0])
            continue;
        RuleInput in;
        in.node = &graph.node(i);
        const auto outs = applyShapeRule(in);
        mergeFacts(*writes[i][0], outs[0]);
        if (auto values = foldNode(graph.node(i), {}); values && values->size() == 1) {
            writes[i][0]->value = std::make_shared<const ConstValue>(std::move((*values)[0]));
            r.folded[i] = true;
        }
    }

    for (int phase = 0; phase < 2; ++phase) {
        for (int round = 0; round < kMaxRounds; ++round) {
            ++r.rounds;
            onnx::ModelProto work;
            std::vector<int> workIndex;
            buildWork(work, workIndex);
            while (onnxEnabled) {
                try {
                    onnx::shape_inference::InferShapes(work, registry, onnx::ShapeInferenceOptions(false, 0, true));
                    break;
                } catch (const std::exception& e) {
                    const std::string what = e.what();
                    if (tier == 0)
                        tier = 1;
                    else if (++failures > 8 || !blame(what)) {
                        onnxEnabled = false;
                        r.notes.push_back("ONNX shape inference stopped (" + what.substr(0, 200)
                                          + "); continued with MemPlan's own shape rules");
                        buildWork(work, workIndex); // forget partial results
                        break;
                    }
                } catch (...) {
                    onnxEnabled = false;
                    r.notes.push_back("ONNX shape inference stopped; continued with MemPlan's own shape rules");
                }
                buildWork(work, workIndex);
            }
            auto* g = work.mutable_graph();

            bool progress = false;
            auto absorb = [&](const onnx::ValueInfoProto& vi) {
                auto it = facts.find(vi.name());
                if (it != facts.end() && vi.has_type() && !it->second.value && !initializerNames.count(vi.name())) {
                    const auto inferred = factsFromType(vi.type());
                    checkStated(vi.name(), it->second, inferred);
                    progress = mergeFacts(it->second, inferred) || progress;
                }
            };
            for (const auto& vi : g->value_info())
                absorb(vi);
            for (const auto& vi : g->output())
                absorb(vi);

            for (int i = 0; i < n; ++i) {
                if (r.folded[i])
                    continue;
                const auto& node = graph.node(i);
                if (domains[i].empty() && isFoldable(node.op_type())) {
                    if (auto values = foldNode(node, reads[i])) {
                        // Shape and Size read only dims, which the given files fix as well.
                        const bool readsValues = node.op_type() != "Shape" && node.op_type() != "Size";
                        const bool fromGiven = readsValues && std::any_of(reads[i].begin(), reads[i].end(),
                            [](const ValueFacts* f) { return f && f->value && f->value->given; });
                        for (std::size_t k = 0; k < values->size(); ++k) {
                            (*values)[k].given = fromGiven;
                            if (!writes[i][k])
                                continue;
                            auto& f = *writes[i][k];
                            const bool estimated = f.estimated;
                            checkStated(node.output(int(k)), f, tensorFacts((*values)[k].elemType, (*values)[k].dims, false));
                            f = tensorFacts((*values)[k].elemType, (*values)[k].dims, estimated);
                            f.value = std::make_shared<const ConstValue>(std::move((*values)[k]));
                        }
                        r.folded[i] = true;
                        progress = true;
                        continue;
                    }
                }
                RuleInput in;
                in.node = &node;
                in.opset = opsetOf(domains[i]);
                in.inputs = reads[i];
                in.allowGuesses = phase == 1;
                if (hasSubgraph(node)) {
                    in.subgraphOutputs = subgraphOutputs(workIndex[i] >= 0 ? g->node(workIndex[i]) : node);
                    const bool settled = std::all_of(writes[i].begin(), writes[i].end(),
                                                     [](const ValueFacts* f) { return !f || f->fullyKnown(); });
                    if (depth < kMaxSubgraphDepth && !settled) {
                        std::string key;
                        for (const auto* f : reads[i])
                            appendKey(key, f);
                        for (const auto* f : capturedReads[i])
                            appendKey(key, f);
                        if (key != nestedKey[i]) {
                            nestedKey[i] = std::move(key);
                            nested[i] = inferSubgraphOutputs(model, node, in.opset, reads[i], outer, depth);
                            unrolled[i] = node.op_type() == "Loop" ? unrolledLoopOutputs(model, node, reads[i], outer, depth)
                                                                   : std::vector<ValueFacts> {};
                        }
                        if (nested[i].size() == in.subgraphOutputs.size())
                            for (std::size_t k = 0; k < nested[i].size(); ++k)
                                for (std::size_t j = 0; j < nested[i][k].size() && j < in.subgraphOutputs[k].size(); ++j)
                                    mergeFacts(in.subgraphOutputs[k][j], nested[i][k][j]);
                    }
                    if (in.allowGuesses)
                        for (auto& outs : in.subgraphOutputs)
                            for (auto& f : outs)
                                guessSequenceBytes(f);
                }
                in.unrolled = unrolled[i];
                const auto outs = applyShapeRule(in);
                for (std::size_t k = 0; k < outs.size() && k < writes[i].size(); ++k)
                    if (writes[i][k] && outs[k].kind != ValueKind::Unknown) {
                        checkStated(node.output(int(k)), *writes[i][k], outs[k]);
                        progress = mergeFacts(*writes[i][k], outs[k]) || progress;
                    }
            }
            if (!progress && phase == 1)
                for (auto& [name, f] : facts)
                    progress = guessSequenceBytes(f) || progress;
            if (!progress)
                break;
        }
    }

    // A shape computed from an upper bound is itself an upper bound (a sequence's length is one number whatever it holds).
    for (int pass = 0; pass < n; ++pass) {
        bool changed = false;
        for (int i = 0; i < n; ++i) {
            if (graph.node(i).op_type() == "SequenceLength")
                continue;
            bool estimated = false;
            for (const auto* f : reads[i])
                estimated = estimated || (f && f->estimated);
            if (!estimated)
                continue;
            for (auto* f : writes[i])
                if (f && !f->estimated) {
                    f->estimated = true;
                    changed = true;
                }
        }
        if (!changed)
            break;
    }
    return r;
}

} // namespace core::onnxdetail
