// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "onnx/onnximport.h"

#include "onnx/onnxbodies.h"
#include "onnx/onnxconsistency.h"
#include "onnx/onnxinfer.h"
#include "onnx/onnxinline.h"
#include "onnx/onnxload.h"
#include "onnx/onnxloadfold.h"
#include "onnx/onnxshaperules.h"
#include "onnx/onnxvalue.h"
#include "util/format.h"

#include <onnx/checker.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace core {

using namespace onnxdetail;

namespace {

// Rounds of If inlining: each inlines every If whose condition is known, and may make more known.
constexpr int kMostInlineRounds = 32;

// What the user can do about unsized tensors: bind symbolic dims, fix open inputs, or know where
// the run-time dependence starts. `fromGiven(name)`: the value import knows for `name` was given
// by a file (read from it or computed from it).
std::string hintFor(const onnx::GraphProto& graph, const std::unordered_set<std::string>& weights, const Graph& g,
                    const std::vector<TensorIndex>& unsized, const std::vector<OpIndex>& producer,
                    const std::function<bool(const std::string&)>& fromGiven)
{
    const auto symbols = symbolicInputDims(graph);
    if (!symbols.empty()) {
        std::string hint = "the model has symbolic dimension" + std::string(symbols.size() > 1 ? "s " : " ")
            + joinNames(symbols, 16) + ": pass a value for each, e.g.";
        for (const auto& s : symbols)
            hint += " --dim " + s + "=1";
        return hint;
    }
    for (const auto& vi : graph.input()) {
        const auto* t = tensorTypeOf(vi.type());
        if (weights.count(vi.name()) || !t)
            continue;
        const bool open = !t->has_shape()
            || std::any_of(t->shape().dim().begin(), t->shape().dim().end(), [](const auto& d) { return !d.has_dim_value(); });
        if (open)
            return "input '" + vi.name() + "' has no fixed shape"
                + (vi.type().has_tensor_type() ? ": pass it, e.g. --input-shape " + vi.name() + "=1,..." : std::string());
    }
    // Name where sizes first become unknown: ops whose inputs are all sized.
    std::vector<std::string> roots, givenRoots;
    std::unordered_set<OpIndex> seen;
    for (auto t : unsized) {
        const OpIndex p = producer[t];
        if (p < 0 || !seen.insert(p).second)
            continue;
        const auto& op = g.ops[p];
        if (!std::all_of(op.inputs.begin(), op.inputs.end(), [&](TensorIndex in) { return g.tensors[in].size != kUnknownSize; }))
            continue;
        roots.push_back(op.name + " (" + op.type + ")");
        if (std::any_of(op.inputs.begin(), op.inputs.end(), [&](TensorIndex in) { return fromGiven(g.tensors[in].name); }))
            givenRoots.push_back(op.name);
    }
    if (roots.empty())
        return "the model's inputs have fixed shapes, but some values have no known type or shape";
    const std::string where = "sizes first become unknown at " + joinNames(roots, 3);
    if (!givenRoots.empty()) // the values are known: a run would read the same ones
        return where + ": " + joinNames(givenRoots, 3) + " reads values given by file (--input) that make no valid output shape,"
            + " or there is no shape rule for the op";
    return where + ": the output shape depends on values known only at run time, or there is no shape rule for the op";
}

// Kinds: initializer > graph input > graph output > Constant output > activation. An Identity of
// a weight is an alias that runtimes fold away (exporters emit them for shared initializers): its
// output is a weight too; `alias` marks those Identity ops for foldWeightAliases.
std::vector<TensorKind> tensorKinds(const onnx::GraphProto& graph, std::unordered_map<std::string, TensorIndex>& index,
                                    const std::unordered_set<std::string>& weights, std::vector<bool>& alias)
{
    auto isDefaultDomain = [](const onnx::NodeProto& node) { return node.domain().empty() || node.domain() == "ai.onnx"; };
    std::vector<TensorKind> kinds(index.size(), TensorKind::Activation);
    for (const auto& node : graph.node())
        if (node.op_type() == "Constant" && isDefaultDomain(node))
            for (const auto& out : node.output())
                if (!out.empty())
                    kinds[index[out]] = TensorKind::Weight;
    for (const auto& vi : graph.output())
        kinds[index[vi.name()]] = TensorKind::Output;
    for (const auto& vi : graph.input())
        kinds[index[vi.name()]] = TensorKind::Input;
    for (const auto& name : weights)
        kinds[index[name]] = TensorKind::Weight;
    alias.assign(std::size_t(graph.node_size()), false);
    for (int i = 0; i < graph.node_size(); ++i) {
        const auto& node = graph.node(i);
        if (node.op_type() == "Identity" && isDefaultDomain(node) && node.input_size() == 1 && node.output_size() == 1
            && kinds[index[node.input(0)]] == TensorKind::Weight && kinds[index[node.output(0)]] == TensorKind::Activation) {
            kinds[index[node.output(0)]] = TensorKind::Weight;
            alias[std::size_t(i)] = true;
        }
    }
    return kinds;
}

// The tensors a MemPlan export marked persistent (kPersistentKey: names, one per line): state an op
// writes that lives outside the arena, such as weight gradients a framework preallocates.
std::vector<std::string> persistentNames(const onnx::ModelProto& model)
{
    std::vector<std::string> names;
    for (const auto& entry : model.metadata_props())
        if (entry.key() == kPersistentKey)
            for (std::size_t start = 0; start < entry.value().size();) {
                const auto end = std::min(entry.value().find('\n', start), entry.value().size());
                if (end > start)
                    names.push_back(entry.value().substr(start, end - start));
                start = end + 1;
            }
    return names;
}

// An op import evaluated whose outputs are all integer (or bool) activations with known values:
// makes each output a weight holding them (Tensor::values) and returns true, so foldAtLoad can
// remove the op. Float results stay computed at run time: import evaluates in double precision,
// which need not give the bits a float32 kernel gives. So do values computed from a given input
// (ConstValue::given): the model must still compute them from its input.
bool becomeConstants(const Op& op, Graph& g, const std::unordered_map<std::string, ValueFacts>& facts)
{
    if (op.outputs.empty())
        return false;
    for (const auto t : op.outputs) {
        const auto& tensor = g.tensors[std::size_t(t)];
        const auto it = facts.find(tensor.name);
        if (tensor.kind != TensorKind::Activation || it == facts.end() || !it->second.value || it->second.estimated)
            return false;
        const auto& value = *it->second.value;
        if (value.given || !isIntegerType(value.elemType) || dtypeFromOnnx(value.elemType) != tensor.dtype
            || value.count() != elementCount(value.dims) || tensorBytes(tensor.dtype, value.dims) != tensor.size)
            return false;
    }
    for (const auto t : op.outputs) {
        auto& tensor = g.tensors[std::size_t(t)];
        tensor.kind = TensorKind::Weight;
        tensor.values = facts.at(tensor.name).value->ints;
    }
    return true;
}

// What the given input files tell import beyond the inputs' types: a sequence's bytes, length and
// (when its elements share it) element shape; a small tensor's values.
std::unordered_map<std::string, ValueFacts> givenFacts(const onnx::GraphProto& graph, const ShapeBindings& bindings)
{
    std::unordered_map<std::string, ValueFacts> given;
    for (const auto& vi : graph.input()) {
        if (const auto it = bindings.sequenceBytes.find(vi.name()); it != bindings.sequenceBytes.end()) {
            ValueFacts f = factsFromType(vi.type());
            f.bytes = it->second;
            // Elements that contradict the declared element shape tell nothing more than their bytes
            // (the run checks what it reads).
            const auto fits = [&](const std::vector<std::int64_t>& shape) {
                if (!f.rankKnown)
                    return true;
                if (shape.size() != f.dims.size())
                    return false;
                for (std::size_t d = 0; d < shape.size(); ++d)
                    if (f.dims[d] >= 0 && f.dims[d] != shape[d])
                        return false;
                return true;
            };
            const auto e = bindings.sequenceElements.find(vi.name());
            if (e != bindings.sequenceElements.end() && std::all_of(e->second.begin(), e->second.end(), fits)) {
                const auto& shapes = e->second;
                f.length = std::int64_t(shapes.size());
                const bool shared = !shapes.empty()
                    && std::all_of(shapes.begin(), shapes.end(), [&](const auto& s) { return s == shapes.front(); });
                if (shared) {
                    f.rankKnown = true;
                    f.dims = shapes.front();
                }
            }
            given[vi.name()] = f;
        }
        if (const auto it = bindings.inputValues.find(vi.name()); it != bindings.inputValues.end() && it->second.dtype != DType::Undefined) {
            onnx::TensorProto t;
            t.set_data_type(onnxFromDType(it->second.dtype));
            for (const auto d : it->second.shape)
                t.add_dims(d);
            t.set_raw_data(std::string(reinterpret_cast<const char*>(it->second.data.data()), it->second.data.size()));
            auto value = readConst(t, std::int64_t(it->second.data.size())); // elements <= bytes
            if (value && isIntegerType(value->elemType)) {
                value->given = true;
                ValueFacts f = tensorFacts(value->elemType, value->dims, false);
                f.value = std::make_shared<const ConstValue>(std::move(*value));
                given[vi.name()] = f;
            }
        }
    }
    return given;
}

// A ConstantOfShape's fill value (a one-element tensor attribute) as a scalar attribute, so the
// graph keeps it for an export; the output's element type is the tensor's.
std::optional<Attribute> fillValue(const onnx::NodeProto& node)
{
    if (node.op_type() != "ConstantOfShape" || !(node.domain().empty() || node.domain() == "ai.onnx"))
        return std::nullopt;
    for (const auto& a : node.attribute())
        if (a.name() == "value" && a.has_t())
            if (const auto value = readConst(a.t(), 1); value && value->count() == 1) {
                Attribute fill;
                if (value->isReal())
                    fill.floats = { float(value->reals[0]) };
                else
                    fill.ints = { value->ints[0] };
                return fill;
            }
    return std::nullopt;
}

// torchvision before 0.15 exports roi_align(aligned=False) as RoiAlign without
// coordinate_transformation_mode, which opset 16 on reads as half_pixel, while torch computed
// output_half_pixel: the file's detections then differ from the model it came from. Says so for
// a PyTorch file at opset 16 or later; empty otherwise.
std::string roiAlignModeNote(const onnx::ModelProto& model)
{
    if (model.producer_name() != "pytorch")
        return {};
    const bool opset16 = std::any_of(model.opset_import().begin(), model.opset_import().end(),
        [](const auto& o) { return (o.domain().empty() || o.domain() == "ai.onnx") && o.version() >= 16; });
    int unstated = 0;
    std::string first;
    for (const auto& node : model.graph().node())
        if (node.op_type() == "RoiAlign" && std::none_of(node.attribute().begin(), node.attribute().end(),
                                               [](const auto& a) { return a.name() == "coordinate_transformation_mode"; })) {
            if (unstated++ == 0)
                first = node.name();
        }
    if (!opset16 || unstated == 0)
        return {};
    return "RoiAlign '" + first + "'" + (unstated > 1 ? " and " + std::to_string(unstated - 1) + " more" : std::string())
        + (unstated > 1 ? " state" : " states") + " no coordinate_transformation_mode: opset 16 on reads half_pixel, but torchvision's exporter (before 0.15)"
          " writes it so for roi_align(aligned=False), which computes output_half_pixel; runs follow the file";
}

// The values whose size inference tells differently without the value given for graph input
// `input` (its shape kept): what that value sizes, in the order of `names`. Empty when it sizes
// nothing, as token ids a model only computes with.
std::vector<std::string> sizedByGivenValue(const onnx::ModelProto& model, const std::vector<const onnx::TensorProto*>& initializers,
    const std::vector<std::string>& names, std::unordered_map<std::string, ValueFacts> given, const std::string& input,
    const InferenceResult& with)
{
    given[input].value.reset();
    const auto without = inferModel(model, initializers, names, 0, given);
    std::vector<std::string> sized;
    for (const auto& name : names) {
        const auto a = with.facts.find(name), b = without.facts.find(name);
        if (a == with.facts.end())
            continue;
        const bool same = b != without.facts.end() && factsBytes(a->second) == factsBytes(b->second)
            && a->second.estimated == b->second.estimated && a->second.rankKnown == b->second.rankKnown
            && a->second.dims == b->second.dims && a->second.length == b->second.length;
        if (!same)
            sized.push_back(name);
    }
    return sized;
}

// The model as read, with MemPlan's own checks (validateModel) and the ONNX checker's first
// complaint as a note (it is advisory: exporters break its rules in harmless ways).
Expected<onnx::ModelProto> readChecked(const std::filesystem::path& file, std::vector<std::string>& notes)
{
    auto loaded = readModel(file, &notes);
    if (!loaded)
        return loaded.error();
    if (auto s = validateModel(*loaded, file.string(), &notes); !s)
        return s.error();
    try {
        onnx::checker::check_model(*loaded);
    } catch (const std::exception& e) {
        std::string what = e.what();
        what = what.substr(0, what.find('\n')).substr(0, 200);
        notes.push_back("ONNX checker: " + what + " (ignored)");
    }
    return loaded;
}

// Given input shapes that differ from a dimension the model declares as a number: named if the
// model then contradicts itself (a constant made for the declared size).
std::vector<std::string> inputsGivenOtherShapes(const onnx::ModelProto& model, const ShapeBindings& bindings)
{
    std::vector<std::string> overridden;
    for (const auto& input : model.graph().input()) {
        const auto given = bindings.inputShapes.find(input.name());
        if (given == bindings.inputShapes.end() || !input.type().tensor_type().has_shape())
            continue;
        const auto& dims = input.type().tensor_type().shape().dim();
        bool differs = dims.size() != static_cast<int>(given->second.size());
        std::string declared;
        for (int k = 0; k < dims.size(); ++k) {
            const auto& d = dims[k];
            declared += (k ? "x" : "") + (d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param().empty() ? "?" : d.dim_param());
            differs = differs || (d.has_dim_value() && k < static_cast<int>(given->second.size()) && d.dim_value() != given->second[std::size_t(k)]);
        }
        if (differs)
            overridden.push_back("'" + input.name() + "' " + dimsText(given->second) + " where the model declares " + declared);
    }
    return overridden;
}

// Inference of every value's facts. A file whose stored shapes its ops contradict (left from other
// input shapes) gets them dropped and inferred again, as a runtime lets the ops decide; MemPlan's own
// exports state every size on purpose and keep theirs.
InferenceResult inferSizes(onnx::ModelProto& model, const std::vector<const onnx::TensorProto*>& initializers,
                           const std::vector<std::string>& names, const std::unordered_map<std::string, ValueFacts>& givenInputs,
                           std::vector<std::string>& notes)
{
    auto inferred = inferModel(model, initializers, names, 0, givenInputs);
    if (!inferred.stale.empty() && model.producer_name() != "memplan") {
        const auto& first = inferred.stale.front();
        notes.push_back("the file states shape " + dimsText(first.stated) + " for '" + first.name + "'"
                        + (inferred.stale.size() > 1 ? " (and " + std::to_string(inferred.stale.size() - 1) + " more)" : std::string())
                        + " but its producer computes " + dimsText(first.computed)
                        + " from the input shapes: the file's stored shapes were ignored and computed again");
        model.mutable_graph()->clear_value_info();
        for (auto& vi : *model.mutable_graph()->mutable_output())
            if (vi.type().has_tensor_type())
                vi.mutable_type()->mutable_tensor_type()->clear_shape();
        inferred = inferModel(model, initializers, names, 0, givenInputs);
    }
    notes.insert(notes.end(), inferred.notes.begin(), inferred.notes.end());
    return inferred;
}

// One Tensor per value of `names`, in that order, from its inferred facts: kind, element type, shape or
// estimate, a sequence's or optional's nature, the values a run must be given again (those of the
// given inputs in `binding`, whose values the plan holds for), the byte size.
// Returns how many are sequences or maps; an error names a tensor whose byte count overflows.
Expected<int> addTensors(Graph& g, const std::vector<std::string>& names, InferenceResult& inferred, const std::vector<TensorKind>& kinds,
                         const std::unordered_map<std::string, ValueFacts>& givenInputs, const ShapeBindings& bindings,
                         const std::set<std::string>& binding, const std::string& fileName)
{
    int sequences = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
        const auto& f = inferred.facts[names[i]];
        Tensor t;
        t.name = names[i];
        t.kind = kinds[i];
        t.dtype = dtypeFromOnnx(f.elemType).value_or(DType::Undefined);
        t.estimated = f.estimated;
        if (f.kind != ValueKind::Sequence && f.kind != ValueKind::Map && f.rankKnown) {
            t.rankKnown = true;
            t.shape = f.dims;
        }
        if (f.kind == ValueKind::Sequence || f.kind == ValueKind::Map)
            ++sequences;
        if (f.kind == ValueKind::Sequence) {
            t.sequence = t.estimated = true;
            t.listExact = !f.estimated && f.elementsKnown();
        }
        if (f.optional)
            t.optional = t.estimated = true;
        // A small integer weight (an initializer, a Constant's output) keeps its values, as folded
        // constants do: an exported file holds them, so a Reshape's target shape survives.
        if (t.kind == TensorKind::Weight && f.value && !f.value->given && isIntegerType(f.value->elemType)
            && f.value->count() == elementCount(f.value->dims))
            t.values = f.value->ints;
        // What a given file told import about an input, the run must be given again.
        if (const auto given = givenInputs.find(names[i]); given != givenInputs.end()) {
            if (given->second.value && binding.count(names[i]))
                t.values = given->second.value->ints;
            if (const auto e = bindings.sequenceElements.find(names[i]); e != bindings.sequenceElements.end() && given->second.length >= 0)
                t.items = e->second;
        }
        const std::int64_t bytes = factsBytes(f);
        t.size = bytes >= 0 ? bytes : kUnknownSize;
        if (t.rankKnown && t.dtype != DType::Undefined && t.size == kUnknownSize && elementCount(t.shape) < 0
            && std::all_of(t.shape.begin(), t.shape.end(), [](std::int64_t d) { return d >= 0; }))
            return makeError(ErrorCode::InvalidModel, fileName + ": tensor '" + t.name + "' is too large: shape "
                                 + dimsText(t.shape) + " overflows a 64-bit byte count");
        g.tensors.push_back(std::move(t));
    }
    return sequences;
}

// What reading the nodes found besides the ops themselves.
struct NodesRead {
    int controlFlow = 0;        // ops with subgraphs
    std::vector<bool> computed; // per node: its outputs are constants now (foldAtLoad drops it)
    std::set<std::string> ruled; // op types MemPlan's own shape rules sized
};

// One Op per node, in file order: type, domain, name, scalar and list attributes, input and output
// slots, the outer values its subgraphs read; Constants and folded integer ops are marked computed.
NodesRead addOps(Graph& g, const onnx::GraphProto& graph, std::unordered_map<std::string, TensorIndex>& index,
                 InferenceResult& inferred, const std::vector<bool>& weightAlias, std::vector<std::string>& notes)
{
    NodesRead read;
    read.computed.assign(std::size_t(graph.node_size()), false);
    for (int i = 0; i < graph.node_size(); ++i) {
        const auto& node = graph.node(i);
        Op op;
        op.type = node.op_type();
        op.domain = node.domain() == "ai.onnx" ? std::string() : node.domain();
        op.name = opNameOf(node, i);
        for (const auto& a : node.attribute())
            if (isScalarOrListAttribute(a))
                op.attributes.emplace(a.name(), toAttribute(a));
        if (const auto fill = fillValue(node))
            op.attributes.emplace("value", *fill);
        for (int k = 0; k < node.input_size(); ++k)
            if (!node.input(k).empty()) {
                op.inputs.push_back(index[node.input(k)]);
                op.inputSlots.push_back(k);
            }
        for (int k = 0; k < node.output_size(); ++k)
            if (!node.output(k).empty()) {
                op.outputs.push_back(index[node.output(k)]);
                op.outputSlots.push_back(k);
            }
        trimSlots(op.inputSlots);
        trimSlots(op.outputSlots);
        for (const auto& name : subgraphReads(node))
            if (auto it = index.find(name); it != index.end())
                op.captured.push_back(it->second);
        if (std::any_of(node.attribute().begin(), node.attribute().end(),
                        [](const auto& a) { return a.has_g() || a.graphs_size() > 0; }))
            ++read.controlFlow;
        if (op.type == "Constant" && op.domain.empty())
            read.computed[std::size_t(i)] = !op.outputs.empty() && std::all_of(op.outputs.begin(), op.outputs.end(), [&](TensorIndex t) {
                return g.tensors[std::size_t(t)].kind == TensorKind::Weight;
            });
        else if (inferred.folded[i] && !weightAlias[i] && op.domain.empty())
            read.computed[std::size_t(i)] = becomeConstants(op, g, inferred.facts);
        if (inferred.owned[i] && op.type != "Constant")
            read.ruled.insert(op.domain.empty() ? op.type : op.domain + "." + op.type);
        const bool scanOutputs = node.input_size() >= 2 && node.output_size() > node.input_size() - 2;
        if (op.type == "Loop" && scanOutputs && (node.input(0).empty() || !inferred.facts[node.input(0)].value))
            notes.push_back("Loop '" + op.name + "': trip count unknown at import; its scan outputs are sized for one iteration (estimate)");
        g.ops.push_back(std::move(op));
    }
    return read;
}

// The plan holds for the given values that size something, and only for them: which inputs, which values.
std::string givenValuesNote(const std::map<std::string, std::vector<std::string>>& sizedBy, const std::vector<std::string>& names)
{
    std::vector<std::string> givenNames;
    std::set<std::string> sized;
    for (const auto& [name, values] : sizedBy) {
        givenNames.push_back("'" + name + "'");
        sized.insert(values.begin(), values.end());
    }
    std::vector<std::string> sizedNames; // in graph order
    for (const auto& name : names)
        if (sized.count(name))
            sizedNames.push_back("'" + name + "'");
    return "the values given for " + joinNames(givenNames, 8) + " size " + std::to_string(sizedNames.size()) + " value"
                    + (sizedNames.size() > 1 ? "s" : "") + " (" + joinNames(sizedNames, 4)
                    + "): the plan holds for these input values (the ops computing them still run)";
}

// Where estimates start (data-dependent shapes, named) and how much is bounded downstream of them.
std::string estimatesNote(const Graph& g, const std::vector<OpIndex>& producer)
{
    std::vector<std::string> bounded;
    int downstream = 0; // estimated because an input is: counted, with their bytes, not named
    Bytes downstreamBytes = 0;
    for (std::size_t t = 0; t < g.tensors.size(); ++t) {
        if (!g.tensors[t].estimated || g.tensors[t].sequence || producer[t] < 0)
            continue; // sequences have their own note
        // Name where estimates start, not everything downstream of them.
        const auto& op = g.ops[producer[t]];
        if (std::none_of(op.inputs.begin(), op.inputs.end(), [&](TensorIndex in) { return g.tensors[in].estimated; }))
            bounded.push_back("'" + g.tensors[t].name + "' (" + op.name + ")");
        else if (g.tensors[t].kind != TensorKind::Weight) {
            ++downstream;
            downstreamBytes += std::max<Bytes>(g.tensors[t].size, 0);
        }
    }
    if (bounded.empty())
        return {};
    return (std::to_string(bounded.size()) + " tensor" + (bounded.size() > 1 ? "s have" : " has")
                        + " data-dependent shapes, sized by an estimate (an upper bound where one exists): "
                        + joinNames(bounded, 5)
                        + (downstream > 0 ? "; " + std::to_string(downstream) + " tensor" + (downstream > 1 ? "s" : "") + " computed from "
                                   + (bounded.size() > 1 ? "them" : "it") + " are bounded too (" + formatBytes(downstreamBytes) + " in all)"
                                            : std::string()));
}

Expected<Graph> importImpl(const std::filesystem::path& file, const ShapeBindings& bindings)
{
    const std::string fileName = file.string();
    std::vector<std::string> notes;
    auto loaded = readChecked(file, notes);
    if (!loaded)
        return loaded.error();
    onnx::ModelProto& model = *loaded;
    const auto overridden = inputsGivenOtherShapes(model, bindings);
    if (auto s = applyBindings(model, bindings, fileName); !s)
        return s.error();
    if (!bindings.dims.empty() || !bindings.inputShapes.empty()) {
        std::vector<std::string> given;
        for (const auto& [name, value] : bindings.dims)
            given.push_back(name + " = " + std::to_string(value));
        for (const auto& [name, dims] : bindings.inputShapes)
            given.push_back("input '" + name + "' " + dimsText(dims));
        notes.push_back("planned for the sizes given: " + joinNames(given, 16));
    }

    // Weights stay out of the copies inference makes; only their dims and small values are read.
    google::protobuf::RepeatedPtrField<onnx::TensorProto> weights;
    weights.Swap(model.mutable_graph()->mutable_initializer());
    std::vector<const onnx::TensorProto*> initializers;
    const auto listInitializers = [&] {
        initializers.clear();
        for (const auto& t : weights)
            initializers.push_back(&t);
    };
    listInitializers();

    Graph g;
    const auto& graph = model.graph();
    const auto givenInputs = givenFacts(graph, bindings);
    std::vector<std::string> inferNotes;
    auto inferred = inferSizes(model, initializers, valueNames(graph, initializers), givenInputs, inferNotes);
    // Ifs whose condition is known become their branch; a round may make another condition known
    // (an If inside the branch, or one computed from its outputs).
    std::set<std::string> decidingInputs; // given inputs whose values chose a branch: the plan holds for them only
    std::set<std::string> refused;
    for (int round = 0; round < kMostInlineRounds; ++round) {
        if (round == 0 && std::none_of(graph.node().begin(), graph.node().end(), [](const auto& n) { return n.op_type() == "If"; }))
            break;
        if (g.inlinedIfs.empty())
            nameNodes(*model.mutable_graph());
        bool inlined = false;
        for (const auto& known : knownIfs(graph, inferred.facts)) {
            if (refused.count(known.name))
                continue;
            if (!inlineIf(model, known.name, known.thenBranch, weights)) {
                refused.insert(known.name);
                continue;
            }
            inlined = true;
            g.inlinedIfs.push_back({ known.name, known.thenBranch });
            std::vector<std::string> quoted;
            for (const auto& name : known.given) {
                quoted.push_back("'" + name + "'");
                decidingInputs.insert(name);
            }
            notes.push_back("If '" + known.name + "': " + (known.thenBranch ? "then" : "else") + "-branch inlined (condition known: "
                + (quoted.empty() ? std::string("a constant") : "computed from the value given for " + joinNames(quoted, 4))
                + "); its nodes are ops of the schedule, the " + (known.thenBranch ? "else" : "then") + "-branch is not planned");
        }
        if (!inlined)
            break;
        listInitializers();
        inferNotes.clear();
        inferred = inferSizes(model, initializers, valueNames(graph, initializers), givenInputs, inferNotes);
    }
    notes.insert(notes.end(), inferNotes.begin(), inferNotes.end());

    // Every top-level value, numbered in order of first appearance.
    g.name = graph.name().empty() ? file.stem().string() : graph.name();
    for (const auto& o : model.opset_import())
        if (o.version() > 0) // an unset version: an export falls back to its default
            g.opsets[o.domain() == "ai.onnx" ? std::string() : o.domain()] = o.version();
    const std::vector<std::string> names = valueNames(graph, initializers);
    std::unordered_map<std::string, TensorIndex> index;
    for (std::size_t i = 0; i < names.size(); ++i)
        index.emplace(names[i], TensorIndex(i));

    // A given value binds the plan (Tensor::values: a run must be given it again) only where it
    // sizes something or chose a branch; each given value costs one more inference.
    std::map<std::string, std::vector<std::string>> sizedBy; // given input -> the values its contents size
    for (const auto& [name, f] : givenInputs)
        if (f.value)
            if (auto sized = sizedByGivenValue(model, initializers, names, givenInputs, name, inferred); !sized.empty())
                sizedBy[name] = std::move(sized);
    std::set<std::string> binding = decidingInputs;
    for (const auto& [name, sized] : sizedBy)
        binding.insert(name);

    std::unordered_set<std::string> weightNames;
    for (const auto* t : initializers)
        weightNames.insert(t->name());
    for (const auto& s : graph.sparse_initializer())
        weightNames.insert(s.values().name());
    std::vector<bool> weightAlias;
    auto kinds = tensorKinds(graph, index, weightNames, weightAlias);
    for (const auto& name : persistentNames(model))
        if (const auto it = index.find(name); it != index.end() && kinds[std::size_t(it->second)] == TensorKind::Activation)
            kinds[std::size_t(it->second)] = TensorKind::Persistent;
    for (const auto& vi : graph.input())
        if (!weightNames.count(vi.name()))
            g.inputs.push_back(index[vi.name()]);
    for (const auto& vi : graph.output())
        g.outputs.push_back(index[vi.name()]);

    const auto sequences = addTensors(g, names, inferred, kinds, givenInputs, bindings, binding, fileName);
    if (!sequences)
        return sequences.error();

    auto [controlFlow, computed, ruled] = addOps(g, graph, index, inferred, weightAlias, notes);

    if (const auto note = roiAlignModeNote(model); !note.empty())
        notes.push_back(note);
    const auto folds = foldAtLoad(g, weightAlias, computed);
    attachBodies(g, model, inferred.facts, notes);
    const auto producer = producers(g);
    if (folds.computed > 0) {
        const auto plural = [](int n, const char* what) { return std::to_string(n) + " " + what + (n > 1 ? "s" : ""); };
        notes.push_back("folded " + plural(folds.computed, "integer op") + " into constants (shape arithmetic, constant fills)"
                        + ", as a runtime does at load; " + (folds.computed > 1 ? "they" : "it")
                        + (folds.unread > 0 ? " and " + plural(folds.unread, "op") + (folds.computed > 1 ? " only they read" : " only it reads") : std::string())
                        + (folds.computed > 1 || folds.unread > 0 ? " leave" : " leaves") + " the schedule");
    }
    if (!sizedBy.empty())
        notes.push_back(givenValuesNote(sizedBy, names));
    if (folds.constants > 0)
        notes.push_back(std::to_string(folds.constants) + " Constant op" + (folds.constants > 1 ? "s are weights, not steps" : " is a weight, not a step")
                        + " of the schedule");
    if (folds.aliases > 0)
        notes.push_back("removed " + std::to_string(folds.aliases) + " Identity op" + (folds.aliases > 1 ? "s" : "")
                        + " that only alias weights: their readers read the weights directly");
    if (!ruled.empty())
        notes.push_back("MemPlan's own shape rules sized ops the ONNX library does not know or would misread at this opset: "
                        + joinNames(std::vector<std::string>(ruled.begin(), ruled.end())));
    if (controlFlow > 0) {
        const auto inside = std::count_if(g.ops.begin(), g.ops.end(), [](const Op& op) { return !op.bodies.empty(); });
        notes.push_back(std::to_string(controlFlow) + " control-flow op" + (controlFlow > 1 ? "s" : "")
                        + " with subgraphs: planned as single ops whose lifetime covers their captured inputs"
                        + (inside > 0 ? "; " + std::string(inside == controlFlow ? "each" : std::to_string(inside) + " of them")
                                   + " reserves the arena its graphs are planned in at its step"
                                      : std::string()));
    }
    if (*sequences > 0)
        notes.push_back(std::to_string(*sequences) + " sequence/map value" + (*sequences > 1 ? "s" : "")
                        + " sized by the tensors they hold (an upper bound where how many depends on the data)");
    if (auto note = estimatesNote(g, producer); !note.empty())
        notes.push_back(std::move(note));

    // A contradiction is the cause of any size that stays unknown below it: report it first.
    const KnownValues knownValues = [&](TensorIndex t) -> const std::vector<std::int64_t>* {
        const auto it = inferred.facts.find(g.tensors[std::size_t(t)].name);
        return it != inferred.facts.end() && it->second.value && !it->second.value->isReal() ? &it->second.value->ints : nullptr;
    };
    const KnownReals knownReals = [&](TensorIndex t) -> const std::vector<double>* {
        const auto it = inferred.facts.find(g.tensors[std::size_t(t)].name);
        return it != inferred.facts.end() && it->second.value && it->second.value->isReal() ? &it->second.value->reals : nullptr;
    };
    if (const auto invalid = firstInvalidOp(g, knownValues, knownReals))
        return makeError(ErrorCode::InvalidModel, fileName + ": " + invalid->message);
    if (const auto conflict = firstShapeConflict(g, knownValues)) {
        const bool bound = !bindings.dims.empty() || !bindings.inputShapes.empty();
        return makeError(ErrorCode::InvalidModel,
                         fileName + ": " + conflict->message + "; "
                             + (!overridden.empty() ? "the input sizes given (--input-shape or --input) differ from the model's (" + joinNames(overridden, 4)
                                        + "), and a size it fixes as a constant does not follow them: use the input shape it was exported with"
                                 : bound ? "a size the model fixes as a constant does not follow the sizes given (--input, --input-shape, "
                                           "--dim): use the input shape the model was exported with"
                                         : "the model cannot run at these shapes"));
    }
    const auto unsized = unsizedTensors(g);
    if (!unsized.empty()) {
        std::vector<std::string> listed;
        for (auto t : unsized)
            listed.push_back("'" + g.tensors[t].name + "' ("
                             + (producer[t] >= 0 ? "from " + g.ops[producer[t]].name : std::string("graph input")) + ")");
        return makeError(ErrorCode::InvalidModel,
                         fileName + ": " + std::to_string(unsized.size()) + " tensor" + (unsized.size() > 1 ? "s have" : " has")
                             + " no known size: " + joinNames(listed, 5) + "; " + hintFor(graph, weightNames, g, unsized, producer, [&](const std::string& name) {
                                 const auto it = inferred.facts.find(name);
                                 return it != inferred.facts.end() && it->second.value && it->second.value->given;
                             }));
    }
    g.notes = std::move(notes);
    return g;
}

} // namespace

Expected<OpenInputs> openInputs(const std::filesystem::path& file)
{
    auto model = readModel(file);
    if (!model)
        return model.error();
    const auto& graph = model->graph();
    OpenInputs open;
    open.symbols = symbolicInputDims(graph);
    std::unordered_set<std::string> initializers;
    for (const auto& t : graph.initializer())
        initializers.insert(t.name());
    for (const auto& vi : graph.input()) {
        if (initializers.count(vi.name()))
            continue;
        open.names.push_back(vi.name());
        if (!vi.type().has_tensor_type())
            continue;
        const auto& type = vi.type().tensor_type();
        OpenInputs::Input input { vi.name(), {}, type.has_shape() };
        bool fixable = !input.shapeDeclared;
        for (const auto& d : type.shape().dim()) {
            input.dims.push_back(d.has_dim_value() ? std::to_string(d.dim_value()) : !d.dim_param().empty() ? d.dim_param() : "?");
            fixable = fixable || input.dims.back() == "?";
        }
        open.declared.push_back(input);
        if (fixable)
            open.inputs.push_back(std::move(input));
    }
    return open;
}

Expected<Graph> importOnnx(const std::filesystem::path& file, const ShapeBindings& bindings)
{
    try {
        return importImpl(file, bindings);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::InvalidModel, file.string() + ": cannot be imported: " + e.what());
    } catch (...) {
        return makeError(ErrorCode::InvalidModel, file.string() + ": cannot be imported (unexpected error)");
    }
}

} // namespace core
