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

// One inference of a model's graph (inferModel's contract, onnxinfer.h). Alternates two sources
// until neither learns anything: ONNX's own shape inference over a working copy of the graph that
// states what is known so far, and MemPlan's rules (folding constants, ops ONNX cannot size, the
// outputs of subgraphs); round after round, first without guesses, then with them. The stages are
// the methods below, in the order run() calls them.
class ModelInference {
public:
    ModelInference(const onnx::ModelProto& model, int depth)
        : m_model(model)
        , m_graph(model.graph())
        , m_depth(depth)
        , m_n(model.graph().node_size())
        , m_registry(onnx::OpSchemaRegistry::Instance())
    {
    }

    InferenceResult run(const std::vector<const onnx::TensorProto*>& initializers, const std::vector<std::string>& names,
        const std::unordered_map<std::string, ValueFacts>& given)
    {
        declareKnown(initializers, names, given);
        indexNodes();
        buildBase(initializers);
        foldConstants();
        for (int phase = 0; phase < 2; ++phase)
            for (int round = 0; round < kMaxRounds; ++round)
                if (!inferRound(phase))
                    break;
        propagateEstimates();
        return std::move(m_r);
    }

private:
    int opsetOf(const std::string& domain) const
    {
        auto it = m_opsets.find(domain);
        return it == m_opsets.end() ? 1 : it->second;
    }

    const ValueFacts* find(const std::string& name) const
    {
        auto it = m_r.facts.find(name);
        return it == m_r.facts.end() ? nullptr : &it->second;
    }

    // Declared knowledge: initializers (exact), then declared types of inputs, value_info, outputs,
    // then what `given` adds to inputs. Every name gets its facts entry here: later stages keep
    // pointers into the map, which stays complete.
    void declareKnown(const std::vector<const onnx::TensorProto*>& initializers, const std::vector<std::string>& names,
        const std::unordered_map<std::string, ValueFacts>& given)
    {
        auto& facts = m_r.facts;
        facts.reserve(names.size() * 2);
        for (const auto& name : names)
            facts.emplace(name, ValueFacts {});
        for (const auto& o : m_model.opset_import())
            m_opsets[normalizedDomain(o.domain())] = int(o.version());
        for (const auto& f : m_model.functions())
            m_functions.insert(normalizedDomain(f.domain()) + ":" + f.name());

        for (const auto* t : initializers) {
            m_initializerNames.insert(t->name());
            auto& f = facts[t->name()];
            f = factsFromTensor(*t);
            if (auto v = readConst(*t, kInitializerValueLimit))
                f.value = std::make_shared<const ConstValue>(std::move(*v));
        }
        for (const auto& s : m_graph.sparse_initializer()) {
            m_initializerNames.insert(s.values().name());
            facts[s.values().name()] = factsFromTensor(s.values());
            facts[s.values().name()].dims.assign(s.dims().begin(), s.dims().end());
        }
        auto declare = [&](const onnx::ValueInfoProto& vi) {
            auto it = facts.find(vi.name());
            if (it != facts.end() && vi.has_type() && !m_initializerNames.count(vi.name()))
                mergeFacts(it->second, factsFromType(vi.type()));
        };
        for (const auto& vi : m_graph.input()) {
            m_inputNames.insert(vi.name());
            declare(vi);
            if (const auto s = given.find(vi.name()); s != given.end())
                if (auto it = facts.find(vi.name()); it != facts.end())
                    mergeFacts(it->second, s->second);
        }
        for (const auto& vi : m_graph.value_info())
            declare(vi);
        for (const auto& vi : m_graph.output())
            declare(vi);
        for (const auto* list : { &m_graph.value_info(), &m_graph.output() })
            for (const auto& vi : *list)
                if (!m_initializerNames.count(vi.name()) && !m_inputNames.count(vi.name()))
                    m_statedNames.insert(vi.name());
    }

    // A stated shape that a producer contradicts is recorded once (see InferenceResult::stale).
    void checkStated(const std::string& name, const ValueFacts& current, const ValueFacts& computed)
    {
        if (!m_statedNames.count(name) || !current.rankKnown || !computed.rankKnown || current.estimated || computed.estimated
            || current.kind != ValueKind::Tensor || computed.kind != ValueKind::Tensor)
            return;
        bool differs = current.dims.size() != computed.dims.size();
        for (std::size_t d = 0; !differs && d < current.dims.size(); ++d)
            differs = current.dims[d] >= 0 && computed.dims[d] >= 0 && current.dims[d] != computed.dims[d];
        if (differs) {
            m_r.stale.push_back({ name, current.dims, computed.dims });
            m_statedNames.erase(name);
        }
    }

    // Per node: which facts it reads and writes, its domain, whether MemPlan's rules own it, and the
    // outer values its subgraphs read.
    void indexNodes()
    {
        const int n = m_n;
        m_r.folded.assign(n, false);
        m_r.owned.assign(n, false);
        m_reads.resize(n);
        m_writes.resize(n);
        m_domains.resize(n);
        m_captured.resize(n);
        m_capturedReads.resize(n);
        m_nestedKey.resize(n);
        m_nested.resize(n);
        m_unrolled.resize(n);
        auto& facts = m_r.facts;
        for (int i = 0; i < n; ++i) {
            const auto& node = m_graph.node(i);
            m_domains[i] = normalizedDomain(node.domain());
            const int opset = opsetOf(m_domains[i]);
            const bool known = m_functions.count(m_domains[i] + ":" + node.op_type())
                || m_registry->GetSchema(node.op_type(), opset, m_domains[i]) != nullptr;
            // Constant is sized from its attribute without copying its (possibly large) data around.
            m_r.owned[i] = (node.op_type() == "Constant" && m_domains[i].empty())
                || ruleOwnsOp(m_domains[i], node.op_type(), opset, known) || !matchesSchema(node, m_opsets, m_registry);
            for (const auto& in : node.input()) {
                auto it = in.empty() ? facts.end() : facts.find(in);
                m_reads[i].push_back(it == facts.end() ? nullptr : &it->second);
            }
            for (const auto& out : node.output()) {
                auto it = out.empty() ? facts.end() : facts.find(out);
                m_writes[i].push_back(it == facts.end() ? nullptr : &it->second);
            }
            if (hasSubgraph(node)) {
                m_captured[i] = subgraphReads(node);
                for (const auto& name : m_captured[i])
                    m_capturedReads[i].push_back(find(name));
            }
        }
        m_excluded = m_r.owned;
    }

    // The working copy's skeleton: no nodes, no value_info (facts carry it), small initializers
    // with data, larger ones as typed inputs.
    void buildBase(const std::vector<const onnx::TensorProto*>& initializers)
    {
        m_base.set_ir_version(m_model.ir_version());
        *m_base.mutable_opset_import() = m_model.opset_import();
        *m_base.mutable_functions() = m_model.functions();
        auto* g = m_base.mutable_graph();
        g->set_name(m_graph.name());
        *g->mutable_input() = m_graph.input();
        *g->mutable_output() = m_graph.output();
        *g->mutable_sparse_initializer() = m_graph.sparse_initializer();
        for (const auto* t : initializers) {
            if (m_r.facts[t->name()].value) {
                *g->add_initializer() = *t;
            } else if (!m_inputNames.count(t->name())) {
                auto* vi = g->add_input();
                vi->set_name(t->name());
                factsToType(factsFromTensor(*t), *vi->mutable_type());
            }
        }
        for (int k = 0; k < m_graph.output_size(); ++k)
            m_outputIndex.emplace(m_graph.output(k).name(), k);
        // ONNX 1.12 may dereference the missing type of an undefined input (Shape's data propagation
        // does), so a node goes into the working copy only when everything it reads is defined there.
        for (const auto& vi : g->input())
            m_baseDefined.insert(vi.name());
        for (const auto& vi : g->output())
            m_baseDefined.insert(vi.name()); // declared output types are visible to consumers
        for (const auto& t : g->initializer())
            m_baseDefined.insert(t.name());
    }

    // The working copy for one round: the skeleton, what is known stated (every known shape at
    // tier 0), and the nodes ONNX may infer; workIndex maps each node to its place in the copy (-1:
    // left out).
    void buildWork(onnx::ModelProto& work, std::vector<int>& workIndex) const
    {
        work = m_base;
        auto* g = work.mutable_graph();
        if (m_tier > 0)
            for (auto& vi : *g->mutable_output())
                if (vi.type().has_tensor_type())
                    vi.mutable_type()->mutable_tensor_type()->clear_shape();
        std::unordered_set<std::string> defined = m_baseDefined;
        std::unordered_set<std::string> stated, typed;
        auto state = [&](const std::string& name) {
            auto it = m_r.facts.find(name);
            if (it == m_r.facts.end() || m_initializerNames.count(name) || m_inputNames.count(name) || !stated.insert(name).second)
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
            if (auto out = m_outputIndex.find(name); out != m_outputIndex.end()) {
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
            if (typed.count(name) || m_baseDefined.count(name))
                return;
            auto* vi = g->add_value_info();
            vi->set_name(name);
            vi->mutable_type()->mutable_tensor_type();
            typed.insert(name);
        };
        if (m_tier == 0)
            for (const auto& [name, f] : m_r.facts)
                state(name);
        workIndex.assign(m_n, -1);
        auto isDefined = [&](const std::string& name) { return name.empty() || defined.count(name); };
        for (int i = 0; i < m_n; ++i) {
            const auto& node = m_graph.node(i);
            const bool include = !m_r.folded[i] && !m_excluded[i]
                && std::all_of(node.input().begin(), node.input().end(), isDefined)
                && std::all_of(m_captured[i].begin(), m_captured[i].end(), isDefined)
                && plausibleOnFacts(node, m_reads[i]);
            if (!include) {
                for (const auto& out : node.output())
                    state(out); // ONNX cannot infer these: say what we know
                continue;
            }
            // Once shapes computed in the copy are no longer stated (tier 1), a producer that MemPlan
            // and ONNX read differently (in a model whose ops contradict each other) would hand ONNX
            // a rank its inference function indexes past (Conv's dilations by the kernel's rank).
            if (m_tier > 0)
                for (int k : judgedInputs(node))
                    if (k < node.input_size())
                        state(node.input(k));
            workIndex[i] = g->node_size();
            typeReadInput(node);
            *g->add_node() = node;
            for (const auto& out : node.output())
                defined.insert(out);
        }
    }

    // Leaves the node an ONNX error names ("(op_type:Relu, node name: relu_3): ...") to our rules.
    bool blame(const std::string& what)
    {
        const auto at = what.find("node name: ");
        if (at == std::string::npos)
            return false;
        const auto end = what.find(')', at);
        const std::string name = what.substr(at + 11, end == std::string::npos ? std::string::npos : end - at - 11);
        bool found = false;
        for (int i = 0; i < m_n; ++i)
            if (!m_excluded[i] && m_graph.node(i).name() == name)
                m_excluded[i] = found = true;
        return found;
    }

    // Constants first, so the first round already sees the values and shapes they define.
    void foldConstants()
    {
        for (int i = 0; i < m_n; ++i) {
            if (!m_r.owned[i] || m_graph.node(i).op_type() != "Constant" || !m_domains[i].empty() || m_writes[i].empty()
                || !m_writes[i][0])
                continue;
            RuleInput in;
            in.node = &m_graph.node(i);
            const auto outs = applyShapeRule(in);
            mergeFacts(*m_writes[i][0], outs[0]);
            if (auto values = foldNode(m_graph.node(i), {}); values && values->size() == 1) {
                m_writes[i][0]->value = std::make_shared<const ConstValue>(std::move((*values)[0]));
                m_r.folded[i] = true;
            }
        }
    }

    // ONNX's inference over the working copy. ONNX aborts the whole inference when an inferred shape
    // contradicts a stated one (even in non-strict mode), so on failure we state less: tier 0 states
    // every known shape, tier 1 only the shapes of values no node in the working copy produces.
    // Beyond that, the node named in the error is left to our rules; after 8 such failures (or one
    // naming no node) ONNX is off for the rest of the inference.
    void inferWithOnnx(onnx::ModelProto& work, std::vector<int>& workIndex)
    {
        buildWork(work, workIndex);
        while (m_onnxEnabled) {
            try {
                onnx::shape_inference::InferShapes(work, m_registry, onnx::ShapeInferenceOptions(false, 0, true));
                return;
            } catch (const std::exception& e) {
                const std::string what = e.what();
                if (m_tier == 0)
                    m_tier = 1;
                else if (++m_failures > 8 || !blame(what)) {
                    m_onnxEnabled = false;
                    m_r.notes.push_back(
                        "ONNX shape inference stopped (" + what.substr(0, 200) + "); continued with MemPlan's own shape rules");
                    buildWork(work, workIndex); // forget partial results
                    return;
                }
            } catch (...) {
                m_onnxEnabled = false;
                m_r.notes.push_back("ONNX shape inference stopped; continued with MemPlan's own shape rules");
            }
            buildWork(work, workIndex);
        }
    }

    // What ONNX inferred, merged into the facts; true when anything was learned.
    bool absorbOnnx(const onnx::GraphProto& g)
    {
        bool progress = false;
        auto absorb = [&](const onnx::ValueInfoProto& vi) {
            auto it = m_r.facts.find(vi.name());
            if (it != m_r.facts.end() && vi.has_type() && !it->second.value && !m_initializerNames.count(vi.name())) {
                const auto inferred = factsFromType(vi.type());
                checkStated(vi.name(), it->second, inferred);
                progress = mergeFacts(it->second, inferred) || progress;
            }
        };
        for (const auto& vi : g.value_info())
            absorb(vi);
        for (const auto& vi : g.output())
            absorb(vi);
        return progress;
    }

    // Evaluates node i when its inputs' values are known; true when it was.
    bool fold(int i)
    {
        const auto& node = m_graph.node(i);
        if (!m_domains[i].empty() || !isFoldable(node.op_type()))
            return false;
        auto values = foldNode(node, m_reads[i]);
        if (!values)
            return false;
        // Shape and Size read only dims, which the given files fix as well.
        const bool readsValues = node.op_type() != "Shape" && node.op_type() != "Size";
        const bool fromGiven = readsValues
            && std::any_of(m_reads[i].begin(), m_reads[i].end(), [](const ValueFacts* f) { return f && f->value && f->value->given; });
        for (std::size_t k = 0; k < values->size(); ++k) {
            (*values)[k].given = fromGiven;
            if (!m_writes[i][k])
                continue;
            auto& f = *m_writes[i][k];
            const bool estimated = f.estimated;
            checkStated(node.output(int(k)), f, tensorFacts((*values)[k].elemType, (*values)[k].dims, false));
            f = tensorFacts((*values)[k].elemType, (*values)[k].dims, estimated);
            f.value = std::make_shared<const ConstValue>(std::move((*values)[k]));
        }
        m_r.folded[i] = true;
        return true;
    }

    // The subgraph outputs of node i for its rule: what ONNX left on the working copy's node,
    // refined by inferring the subgraph itself (again only when what it reads changed).
    void addSubgraphOutputs(int i, const onnx::NodeProto& workNode, RuleInput& in)
    {
        const auto& node = m_graph.node(i);
        in.subgraphOutputs = subgraphOutputs(workNode);
        const bool settled = std::all_of(m_writes[i].begin(), m_writes[i].end(), [](const ValueFacts* f) { return !f || f->fullyKnown(); });
        if (m_depth < kMaxSubgraphDepth && !settled) {
            std::string key;
            for (const auto* f : m_reads[i])
                appendKey(key, f);
            for (const auto* f : m_capturedReads[i])
                appendKey(key, f);
            if (key != m_nestedKey[i]) {
                m_nestedKey[i] = std::move(key);
                const OuterLookup outer = [this](const std::string& name) { return find(name); };
                m_nested[i] = inferSubgraphOutputs(m_model, node, in.opset, m_reads[i], outer, m_depth);
                m_unrolled[i] = node.op_type() == "Loop" ? unrolledLoopOutputs(m_model, node, m_reads[i], outer, m_depth)
                                                         : std::vector<ValueFacts> {};
            }
            if (m_nested[i].size() == in.subgraphOutputs.size())
                for (std::size_t k = 0; k < m_nested[i].size(); ++k)
                    for (std::size_t j = 0; j < m_nested[i][k].size() && j < in.subgraphOutputs[k].size(); ++j)
                        mergeFacts(in.subgraphOutputs[k][j], m_nested[i][k][j]);
        }
        if (in.allowGuesses)
            for (auto& outs : in.subgraphOutputs)
                for (auto& f : outs)
                    guessSequenceBytes(f);
    }

    // One round: ONNX, then folding and MemPlan's rules per node (guesses allowed in phase 1).
    // True when anything was learned.
    bool inferRound(int phase)
    {
        ++m_r.rounds;
        onnx::ModelProto work;
        std::vector<int> workIndex;
        inferWithOnnx(work, workIndex);
        const auto& g = work.graph();
        bool progress = absorbOnnx(g);
        for (int i = 0; i < m_n; ++i) {
            if (m_r.folded[i])
                continue;
            if (fold(i)) {
                progress = true;
                continue;
            }
            const auto& node = m_graph.node(i);
            RuleInput in;
            in.node = &node;
            in.opset = opsetOf(m_domains[i]);
            in.inputs = m_reads[i];
            in.allowGuesses = phase == 1;
            if (hasSubgraph(node))
                addSubgraphOutputs(i, workIndex[i] >= 0 ? g.node(workIndex[i]) : node, in);
            in.unrolled = m_unrolled[i];
            const auto outs = applyShapeRule(in);
            for (std::size_t k = 0; k < outs.size() && k < m_writes[i].size(); ++k)
                if (m_writes[i][k] && outs[k].kind != ValueKind::Unknown) {
                    checkStated(node.output(int(k)), *m_writes[i][k], outs[k]);
                    progress = mergeFacts(*m_writes[i][k], outs[k]) || progress;
                }
        }
        if (!progress && phase == 1)
            for (auto& [name, f] : m_r.facts)
                progress = guessSequenceBytes(f) || progress;
        return progress;
    }

    // A shape computed from an upper bound is itself an upper bound (a sequence's length is one number whatever it holds).
    void propagateEstimates()
    {
        for (int pass = 0; pass < m_n; ++pass) {
            bool changed = false;
            for (int i = 0; i < m_n; ++i) {
                if (m_graph.node(i).op_type() == "SequenceLength")
                    continue;
                bool estimated = false;
                for (const auto* f : m_reads[i])
                    estimated = estimated || (f && f->estimated);
                if (!estimated)
                    continue;
                for (auto* f : m_writes[i])
                    if (f && !f->estimated) {
                        f->estimated = true;
                        changed = true;
                    }
            }
            if (!changed)
                break;
        }
    }

    const onnx::ModelProto& m_model;
    const onnx::GraphProto& m_graph;
    const int m_depth;
    const int m_n; // top-level nodes
    const onnx::ISchemaRegistry* m_registry;
    InferenceResult m_r;

    std::unordered_map<std::string, int> m_opsets;
    std::unordered_set<std::string> m_functions;
    std::unordered_set<std::string> m_initializerNames, m_inputNames, m_statedNames;
    std::unordered_map<std::string, int> m_outputIndex;

    // Per node (pointers into m_r.facts, which never rehashes away its nodes).
    std::vector<std::vector<const ValueFacts*>> m_reads;
    std::vector<std::vector<ValueFacts*>> m_writes;
    std::vector<std::string> m_domains;
    std::vector<std::vector<std::string>> m_captured; // outer values a node's subgraphs read
    std::vector<std::vector<const ValueFacts*>> m_capturedReads;
    std::vector<std::string> m_nestedKey;                       // what m_nested was inferred from
    std::vector<std::vector<std::vector<ValueFacts>>> m_nested; // subgraph outputs inferred over the subgraph itself
    std::vector<std::vector<ValueFacts>> m_unrolled;            // a Loop's outputs inferred per iteration

    // The working copy and how much of it ONNX is told (inferWithOnnx).
    onnx::ModelProto m_base;
    std::unordered_set<std::string> m_baseDefined;
    std::vector<bool> m_excluded; // nodes left to our rules: owned, or named in an ONNX error
    int m_tier = 0;
    int m_failures = 0;
    bool m_onnxEnabled = true;
};

} // namespace

InferenceResult inferModel(const onnx::ModelProto& model, const std::vector<const onnx::TensorProto*>& initializers,
                           const std::vector<std::string>& names, int depth,
                           const std::unordered_map<std::string, ValueFacts>& given)
{
    return ModelInference(model, depth).run(initializers, names, given);
}

} // namespace core::onnxdetail
