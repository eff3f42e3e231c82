// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/tensordata.h"

#include "exec/branch.h"

#include "graph/shapemath.h"
#include "onnx/onnxexternal.h"
#include "onnx/onnxinline.h"
#include "onnx/onnxload.h"
#include "onnx/onnxvalue.h"
#include "util/memory.h"
#include "util/readfile.h"

#include <onnx/onnx-data.pb.h>

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <system_error>
#include <cstring>
#include <functional>
#include <unordered_set>
#include <fstream>

namespace core {

namespace {
using onnx::TensorProto;

template <class T>
void appendAs(std::vector<std::byte>& out, T value)
{
    const auto at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &value, sizeof(T));
}

// Reads a tensor's external data after onnxdetail::locateExternalData confined it to the model's
// folder and checked its range against the file and the tensor's dims.
Status readExternal(const TensorProto& t, const std::filesystem::path& baseDir, const std::string& what, std::vector<std::byte>& out)
{
    const auto range = onnxdetail::locateExternalData(t, baseDir, onnxdetail::declaredBytes(t), what, true);
    if (!range)
        return range.error();
    if (auto s = checkAllocation(range->length, what + ": external data of '" + t.name() + "'"); !s)
        return s;
    std::ifstream in(range->file, std::ios::binary);
    out.resize(std::size_t(range->length));
    if (in && range->length > 0) {
        in.seekg(range->offset);
        in.read(reinterpret_cast<char*>(out.data()), range->length);
    }
    if (!in)
        return makeError(ErrorCode::Io, what + ": tensor '" + t.name() + "': cannot read its external data from " + range->file.string());
    return {};
}

// Decodes one TensorProto; `what` names it in errors.
Expected<HostTensor> decode(const TensorProto& t, const std::filesystem::path& baseDir, const std::string& what)
{
    HostTensor h;
    const auto dtype = onnxdetail::dtypeFromOnnx(t.data_type());
    if (!dtype || *dtype == DType::String || *dtype == DType::Undefined)
        return makeError(ErrorCode::UnsupportedOp, what + ": tensor '" + t.name() + "' has an element type the executor cannot hold");
    h.dtype = *dtype;
    h.shape.assign(t.dims().begin(), t.dims().end());
    const auto count = h.elementCount();
    if (count < 0 || count > std::numeric_limits<std::int64_t>::max() / std::max<std::int64_t>(1, dtypeBytes(h.dtype)))
        return makeError(ErrorCode::InvalidModel, what + ": tensor '" + t.name() + "' has negative dims or more bytes than 64 bits count");
    const std::size_t bytes = std::size_t(count * dtypeBytes(h.dtype));
    if (t.data_location() == TensorProto::EXTERNAL) {
        if (auto s = readExternal(t, baseDir, what, h.data); !s)
            return s.error();
    } else if (t.has_raw_data()) {
        h.data.resize(t.raw_data().size());
        if (!h.data.empty()) // memcpy from an empty string's data is undefined
            std::memcpy(h.data.data(), t.raw_data().data(), h.data.size());
    } else {
        auto& out = h.data;
        switch (t.data_type()) {
        case TensorProto::FLOAT: case TensorProto::COMPLEX64:
            for (float v : t.float_data()) appendAs(out, v);
            break;
        case TensorProto::DOUBLE: case TensorProto::COMPLEX128:
            for (double v : t.double_data()) appendAs(out, v);
            break;
        case TensorProto::INT64:
            for (std::int64_t v : t.int64_data()) appendAs(out, v);
            break;
        case TensorProto::UINT32:
            for (auto v : t.uint64_data()) appendAs(out, std::uint32_t(v));
            break;
        case TensorProto::UINT64:
            for (auto v : t.uint64_data()) appendAs(out, std::uint64_t(v));
            break;
        case TensorProto::INT32:
            for (auto v : t.int32_data()) appendAs(out, std::int32_t(v));
            break;
        case TensorProto::INT16: case TensorProto::UINT16: case TensorProto::FLOAT16: case TensorProto::BFLOAT16:
            for (auto v : t.int32_data()) appendAs(out, std::uint16_t(v));
            break;
        default: // INT8, UINT8, BOOL, FLOAT8 variants: one byte each in int32_data
            for (auto v : t.int32_data()) appendAs(out, std::uint8_t(v));
            break;
        }
    }
    if (h.data.size() != bytes)
        return makeError(ErrorCode::InvalidModel, what + ": tensor '" + t.name() + "' holds " + std::to_string(h.data.size())
                             + " bytes of data, its dims need " + std::to_string(bytes));
    return h;
}

// A Constant node's value as a TensorProto (value, value_float(s), value_int(s)); nullopt otherwise.
std::optional<TensorProto> constantValue(const onnx::NodeProto& node)
{
    for (const auto& a : node.attribute()) {
        TensorProto t;
        if (a.name() == "value" && a.has_t())
            return a.t();
        if (a.name() == "value_float") {
            t.set_data_type(TensorProto::FLOAT);
            t.add_float_data(a.f());
            return t;
        }
        if (a.name() == "value_floats") {
            t.set_data_type(TensorProto::FLOAT);
            t.add_dims(a.floats_size());
            for (float f : a.floats()) t.add_float_data(f);
            return t;
        }
        if (a.name() == "value_int") {
            t.set_data_type(TensorProto::INT64);
            t.add_int64_data(a.i());
            return t;
        }
        if (a.name() == "value_ints") {
            t.set_data_type(TensorProto::INT64);
            t.add_dims(a.ints_size());
            for (auto i : a.ints()) t.add_int64_data(i);
            return t;
        }
    }
    return std::nullopt;
}
// Declares outer value `name`, which a branch reads, in `vi` (element type and, where known, shape);
// false when the enclosing graphs do not have it.
using DeclareOuter = std::function<bool(const std::string& name, onnx::ValueInfoProto& vi)>;

// An If branch or a Loop or Scan body as exec::runControlFlow runs it: its nodes as ops, its
// constants decoded, the element type of every value it computes from ONNX type inference over the
// branch (its outer reads declared by `declare`), and the graphs of the If, Loop and Scan ops in it.
// A branch that cannot run says why (Branch::unsupported).
// The outer values whose element types a Loop or Scan body's formal inputs take, formal by formal
// ("" where none: a Loop's iteration number and condition; every formal of an If branch).
std::vector<std::string> actualsOf(const onnx::NodeProto& node)
{
    std::vector<std::string> actuals;
    if (node.op_type() == "Loop") {
        actuals = { std::string(), std::string() };
        for (int k = 2; k < node.input_size(); ++k)
            actuals.push_back(node.input(k));
    } else if (node.op_type() == "Scan") {
        actuals.assign(node.input().begin(), node.input().end()); // opset 9 on: formals = state, then scan inputs
        const auto* body = onnxdetail::findAttr(node, "body");
        if (body && body->has_g() && body->g().input_size() + 1 == node.input_size())
            actuals.erase(actuals.begin()); // Scan-8: sequence_lens first, and no formal for it
    }
    return actuals;
}

Expected<exec::Branch> loadBranch(const onnx::ModelProto& model, const onnx::GraphProto& body, const DeclareOuter& declare,
    const std::vector<std::string>& actuals, const std::filesystem::path& baseDir, const std::string& file)
{
    exec::Branch b;
    onnx::ModelProto sub;
    sub.set_ir_version(model.ir_version());
    *sub.mutable_opset_import() = model.opset_import();
    *sub.mutable_functions() = model.functions();
    auto* g = sub.mutable_graph();
    g->set_name(body.name());
    *g->mutable_node() = body.node();
    *g->mutable_output() = body.output();
    *g->mutable_initializer() = body.initializer();
    *g->mutable_input() = body.input();
    for (const auto& vi : body.input())
        b.formals.push_back(vi.name());
    // A formal declared without an element type (a function's expansion may leave it open) takes
    // its actual's, so that inference can type what the body computes from it. Only the element
    // type: a carried value's shape may change from one iteration to the next.
    for (int k = 0; k < g->input_size() && std::size_t(k) < actuals.size(); ++k) {
        auto* type = g->mutable_input(k)->mutable_type();
        onnx::ValueInfoProto actual;
        if (actuals[std::size_t(k)].empty() || type->has_sequence_type() || type->has_optional_type() || type->has_map_type()
            || (type->has_tensor_type() && type->tensor_type().elem_type() != 0) || !declare(actuals[std::size_t(k)], actual))
            continue;
        if (actual.type().has_tensor_type())
            type->mutable_tensor_type()->set_elem_type(actual.type().tensor_type().elem_type());
        else if (actual.type().has_sequence_type() && actual.type().sequence_type().elem_type().has_tensor_type())
            type->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
                actual.type().sequence_type().elem_type().tensor_type().elem_type());
    }
    std::vector<std::string> reads;
    std::unordered_set<std::string> seen;
    onnxdetail::freeNames(body, reads, seen);
    for (const auto& name : reads) {
        onnx::ValueInfoProto vi;
        vi.set_name(name);
        if (declare(name, vi))
            *g->add_input() = std::move(vi);
    }
    try {
        // Element types are all the executor takes from here. Without data propagation, too:
        // ONNX 1.12's for Shape dereferences the missing type a failed inference leaves.
        onnx::shape_inference::InferShapes(sub, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions(false, 0, false));
    } catch (const std::exception& e) {
        b.unsupported = "type inference over the branch failed: " + std::string(e.what()).substr(0, 200);
    }
    auto typeOf = [&](const onnx::ValueInfoProto& vi) {
        const onnx::TypeProto* type = &vi.type();
        const bool optional = type->has_optional_type();
        if (optional)
            type = &type->optional_type().elem_type();
        if (type->has_tensor_type()) {
            if (const auto d = onnxdetail::dtypeFromOnnx(type->tensor_type().elem_type()))
                b.types[vi.name()] = *d;
        } else if (type->has_sequence_type() && type->sequence_type().elem_type().has_tensor_type()) {
            if (const auto d = onnxdetail::dtypeFromOnnx(type->sequence_type().elem_type().tensor_type().elem_type())) {
                b.types[vi.name()] = *d;
                b.sequences.insert(vi.name());
            }
        }
        if (optional && b.types.count(vi.name()))
            b.optionals.insert(vi.name());
    };
    for (const auto& vi : sub.graph().value_info())
        typeOf(vi);
    for (const auto& vi : sub.graph().output())
        typeOf(vi);
    for (const auto& vi : sub.graph().input())
        typeOf(vi);
    for (const auto& t : body.initializer()) {
        auto h = decode(t, baseDir, file);
        if (!h)
            return h.error();
        b.types[t.name()] = h->dtype;
        b.constants[t.name()] = std::move(*h);
    }
    for (int i = 0; i < body.node_size(); ++i) {
        const auto& node = body.node(i);
        Op op;
        op.type = node.op_type();
        op.domain = node.domain() == "ai.onnx" ? std::string() : node.domain();
        op.name = onnxdetail::opNameOf(node, i);
        for (const auto& a : node.attribute()) {
            if (onnxdetail::isScalarOrListAttribute(a))
                op.attributes.emplace(a.name(), onnxdetail::toAttribute(a));
            if (op.type == "ConstantOfShape" && a.name() == "value" && a.has_t()) {
                auto h = decode(a.t(), baseDir, file);
                if (!h)
                    return h.error();
                b.fills[std::size_t(i)] = std::move(*h);
            }
            if (!(a.has_g() || a.graphs_size() > 0) || !b.unsupported.empty())
                continue;
            const bool controlFlow = exec::runsGraphs(op.type) && op.domain.empty();
            if (!controlFlow || !a.has_g()) {
                b.unsupported = op.type + " '" + op.name + "' holds a subgraph the executor does not run";
                continue;
            }
            // The nested graphs as type inference left them (inside `sub`), reading this branch's values.
            const auto& inferred = sub.graph().node(i);
            const DeclareOuter here = [&](const std::string& name, onnx::ValueInfoProto& vi) {
                if (const auto t = b.types.find(name); t != b.types.end()) {
                    auto* type = vi.mutable_type();
                    if (b.optionals.count(name))
                        type = type->mutable_optional_type()->mutable_elem_type();
                    if (b.sequences.count(name))
                        type = type->mutable_sequence_type()->mutable_elem_type();
                    type->mutable_tensor_type()->set_elem_type(onnxdetail::onnxFromDType(t->second));
                    return true;
                }
                return declare(name, vi);
            };
            for (const auto& attribute : inferred.attribute())
                if (attribute.name() == a.name() && attribute.has_g()) {
                    auto nested = loadBranch(model, attribute.g(), here, actualsOf(inferred), baseDir, file);
                    if (!nested)
                        return nested.error();
                    auto& graphs = b.nested[std::size_t(i)];
                    if (!graphs)
                        graphs = std::make_shared<exec::Subgraphs>();
                    auto& into = const_cast<exec::Subgraphs&>(*graphs);
                    (a.name() == "then_branch" ? into.then : a.name() == "else_branch" ? into.otherwise : into.body) = std::move(*nested);
                }
        }
        if (op.type == "Constant" && op.domain.empty()) {
            const auto value = constantValue(node);
            if (!value || node.output_size() != 1 || value->data_type() == TensorProto::STRING) {
                if (b.unsupported.empty())
                    b.unsupported = "Constant '" + op.name + "' has no value the executor reads";
            } else {
                auto h = decode(*value, baseDir, file);
                if (!h)
                    return h.error();
                b.types[node.output(0)] = h->dtype;
                b.constants[node.output(0)] = std::move(*h);
            }
        }
        b.inputs.emplace_back(node.input().begin(), node.input().end());
        b.outputs.emplace_back(node.output().begin(), node.output().end());
        b.ops.push_back(std::move(op));
    }
    for (const auto& vi : body.output())
        b.results.push_back(vi.name());
    return b;
}

} // namespace

std::int64_t HostTensor::elementCount() const
{
    return core::elementCount(shape);
}

ModelData remapModelData(const ModelData& data, const Graph& from, const Graph& to)
{
    ModelData out;
    for (const auto& [index, tensor] : data.weights)
        if (index >= 0 && index < TensorIndex(from.tensors.size()))
            if (const auto t = to.findTensor(from.tensors[index].name))
                out.weights[*t] = tensor;
    std::map<std::string, OpIndex> fromOp;
    for (std::size_t o = 0; o < from.ops.size(); ++o)
        fromOp.emplace(from.ops[o].name, OpIndex(o));
    static const std::string kClone = ".recompute";
    for (std::size_t o = 0; o < to.ops.size(); ++o) {
        std::string name = to.ops[o].name;
        while (name.size() > kClone.size() && name.compare(name.size() - kClone.size(), kClone.size(), kClone) == 0)
            name.resize(name.size() - kClone.size());
        const auto it = fromOp.find(name);
        if (it == fromOp.end() || from.ops[it->second].type != to.ops[o].type)
            continue;
        if (const auto f = data.fillValues.find(it->second); f != data.fillValues.end())
            out.fillValues[OpIndex(o)] = f->second;
        if (const auto b = data.subgraphs.find(it->second); b != data.subgraphs.end())
            out.subgraphs[OpIndex(o)] = b->second;
    }
    return out;
}

Expected<ModelData> loadTensorData(const std::filesystem::path& modelFile, const Graph& graph)
{
    auto model = onnxdetail::readModel(modelFile);
    if (!model)
        return model.error();
    const auto baseDir = modelFile.parent_path();
    const std::string file = modelFile.string();
    if (auto s = onnxdetail::reinlineIfs(*model, graph, file); !s)
        return s.error();
    ModelData data;
    auto& out = data.weights;
    try {
        // Constant outputs can be graph outputs too (kind Output), so they are kept whatever their kind.
        auto keep = [&](const std::string& name, const TensorProto& t, bool constant) -> Status {
            const auto index = graph.findTensor(name);
            if (!index || (!constant && graph.tensors[*index].kind != TensorKind::Weight))
                return {};
            if (t.data_type() == TensorProto::STRING)
                return {};
            auto h = decode(t, baseDir, file);
            if (!h)
                return h.error();
            out[*index] = std::move(*h);
            return {};
        };
        for (const auto& t : model->graph().initializer())
            if (auto s = keep(t.name(), t, false); !s)
                return s.error();
        // A branch's outer reads as the graph knows them: element type, and shape where it is exact.
        const DeclareOuter declareFromGraph = [&](const std::string& name, onnx::ValueInfoProto& vi) {
            const auto t = graph.findTensor(name);
            if (!t)
                return false;
            const auto& tensor = graph.tensors[std::size_t(*t)];
            auto* value = tensor.optional ? vi.mutable_type()->mutable_optional_type()->mutable_elem_type() : vi.mutable_type();
            if (tensor.sequence) {
                value->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(onnxdetail::onnxFromDType(tensor.dtype));
                return true;
            }
            auto* type = value->mutable_tensor_type();
            type->set_elem_type(onnxdetail::onnxFromDType(tensor.dtype));
            if (tensor.rankKnown) {
                auto* shape = type->mutable_shape();
                for (auto d : tensor.shape) {
                    auto* dim = shape->add_dim();
                    if (d >= 0 && !tensor.estimated)
                        dim->set_dim_value(d);
                }
            }
            return true;
        };
        // Import keeps the nodes' order but removes weight aliases: node i is op `o` when the names agree.
        OpIndex o = 0;
        for (int i = 0; i < model->graph().node_size() && o < OpIndex(graph.ops.size()); ++i) {
            const auto& node = model->graph().node(i);
            if (graph.ops[std::size_t(o)].name != onnxdetail::opNameOf(node, i))
                continue;
            const OpIndex op = o++;
            const bool controlFlow = exec::runsGraphs(node.op_type());
            if (controlFlow && (node.domain().empty() || node.domain() == "ai.onnx")) {
                auto subgraphs = std::make_shared<exec::Subgraphs>();
                for (const auto& a : node.attribute()) {
                    if (!a.has_g() || (a.name() != "then_branch" && a.name() != "else_branch" && a.name() != "body"))
                        continue;
                    auto branch = loadBranch(*model, a.g(), declareFromGraph, actualsOf(node), baseDir, file);
                    if (!branch)
                        return branch.error();
                    (a.name() == "then_branch" ? subgraphs->then : a.name() == "else_branch" ? subgraphs->otherwise : subgraphs->body)
                        = std::move(*branch);
                }
                data.subgraphs[op] = std::move(subgraphs);
            }
            if (node.op_type() == "ConstantOfShape")
                for (const auto& a : node.attribute())
                    if (a.name() == "value" && a.has_t()) {
                        auto h = decode(a.t(), baseDir, file);
                        if (!h)
                            return h.error();
                        data.fillValues[op] = std::move(*h);
                    }
        }
        for (const auto& node : model->graph().node()) {
            if (node.op_type() != "Constant" || node.output_size() != 1)
                continue;
            if (auto t = constantValue(node))
                if (auto s = keep(node.output(0), *t, true); !s)
                    return s.error();
        }
    } catch (const std::exception& e) {
        return makeError(ErrorCode::InvalidModel, file + ": cannot read weights: " + e.what());
    }
    return data;
}

namespace {

// Reads `file` as one protobuf message of type `kind` (errors name the file).
template <typename Message>
Status parseFile(const std::filesystem::path& file, Message& message, const char* kind)
{
    if (auto size = checkReadableFile(file, kMaxProtobufBytes, std::string("an ONNX ") + kind); !size)
        return size.error();
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return makeError(ErrorCode::Io, file.string() + ": cannot open");
    if (!message.ParseFromIstream(&in))
        return makeError(ErrorCode::InvalidArgument, file.string() + ": not an ONNX " + kind + " file");
    return {};
}

} // namespace

Expected<std::pair<std::string, HostTensor>> readTensorFile(const std::filesystem::path& file)
{
    TensorProto t;
    if (auto read = parseFile(file, t, "TensorProto"); !read)
        return read.error();
    auto h = decode(t, file.parent_path(), file.string());
    if (!h)
        return h.error();
    return std::make_pair(t.name(), std::move(*h));
}

Expected<std::vector<DeclaredInput>> declaredInputs(const std::filesystem::path& modelFile)
{
    auto model = onnxdetail::readModel(modelFile);
    if (!model)
        return model.error();
    std::unordered_set<std::string> initializers;
    for (const auto& t : model->graph().initializer())
        initializers.insert(t.name());
    std::vector<DeclaredInput> inputs;
    for (const auto& vi : model->graph().input()) {
        if (initializers.count(vi.name()))
            continue;
        DeclaredInput d;
        d.name = vi.name();
        const onnx::TypeProto* type = &vi.type();
        if (type->has_optional_type()) {
            d.optional = true;
            type = &type->optional_type().elem_type();
        }
        if (type->has_sequence_type()) {
            d.sequence = true;
            type = &type->sequence_type().elem_type();
        }
        if (type->has_tensor_type()) {
            d.dtype = onnxdetail::dtypeFromOnnx(type->tensor_type().elem_type()).value_or(DType::Undefined);
            const auto& shape = type->tensor_type().shape();
            d.fixedShape = type->tensor_type().has_shape()
                && std::all_of(shape.dim().begin(), shape.dim().end(), [](const auto& dim) { return dim.has_dim_value(); });
        }
        inputs.push_back(std::move(d));
    }
    return inputs;
}

Expected<std::map<std::string, HostTensor>> readGivenInputs(const std::filesystem::path& modelFile,
    const std::vector<std::pair<std::string, std::filesystem::path>>& files, ShapeBindings& bindings)
{
    auto declared = declaredInputs(modelFile);
    if (!declared)
        return declared.error();
    std::map<std::string, HostTensor> given;
    for (const auto& [name, file] : files) {
        const std::string& wanted = name; // clang 14 cannot capture a structured binding in a lambda
        const auto d = std::find_if(declared->begin(), declared->end(), [&](const DeclaredInput& i) { return i.name == wanted; });
        if (d == declared->end()) {
            std::string names;
            for (const auto& i : *declared)
                names += (names.empty() ? "'" : ", '") + i.name + "'";
            return makeError(ErrorCode::InvalidArgument, "input '" + name + "': " + modelFile.string()
                                 + " has no such graph input (its inputs: " + (names.empty() ? "none" : names) + ")");
        }
        auto read = d->optional ? readOptionalFile(file) : d->sequence ? readSequenceFile(file) : readTensorFile(file);
        if (!read && d->optional)
            return read.error();
        if (!read) {
            // The other kind of file given by mistake reads as nonsense: say which kind it is.
            const bool other = d->sequence ? bool(readTensorFile(file)) : bool(readSequenceFile(file));
            if (other)
                return makeError(ErrorCode::InvalidArgument, "input '" + name + "' is a " + (d->sequence ? "sequence" : "tensor")
                                     + ", but " + file.string() + " holds a " + (d->sequence ? "tensor (TensorProto)" : "sequence (SequenceProto)"));
            return read.error();
        }
        HostTensor h = std::move(read->second);
        if (d->optional && !h.none && h.sequence != d->sequence)
            return makeError(ErrorCode::InvalidArgument, "input '" + name + "' is an optional " + (d->sequence ? "sequence" : "tensor")
                                 + ", but " + file.string() + " holds an optional " + (h.sequence ? "sequence" : "tensor"));
        if (h.none) {
            h.dtype = d->dtype; // nothing to size the plan by: the declared type does
            h.sequence = d->sequence;
        } else if (d->sequence) {
            if (h.data.empty())
                h.dtype = d->dtype;
            bindings.sequenceBytes[name] = Bytes(h.data.size());
            bindings.sequenceElements[name] = h.items;
        } else {
            if (!d->fixedShape && !bindings.inputShapes.count(name))
                bindings.inputShapes[name] = h.shape;
            const auto count = h.elementCount();
            if (count >= 0 && count <= kMostGivenValues && onnxdetail::isIntegerType(onnxdetail::onnxFromDType(h.dtype)))
                bindings.inputValues[name] = InputValue { h.dtype, h.shape, h.data };
        }
        given[name] = std::move(h);
    }
    return given;
}

namespace {

// The tensors of sequence `s` (read from `file`) as one HostTensor (sequence = true).
Expected<HostTensor> sequenceValue(const onnx::SequenceProto& s, const std::filesystem::path& file)
{
    if (s.elem_type() != onnx::SequenceProto::TENSOR && !(s.elem_type() == onnx::SequenceProto::UNDEFINED && s.tensor_values_size() == 0))
        return makeError(ErrorCode::InvalidArgument, file.string() + ": a sequence of " + std::to_string(s.elem_type())
                             + " values (only sequences of tensors are read)");
    HostTensor h;
    h.sequence = true;
    for (int i = 0; i < s.tensor_values_size(); ++i) {
        auto e = decode(s.tensor_values(i), file.parent_path(), file.string());
        if (!e)
            return e.error();
        if (i > 0 && e->dtype != h.dtype)
            return makeError(ErrorCode::InvalidArgument, file.string() + ": element " + std::to_string(i) + " is "
                                 + std::string(dtypeName(e->dtype)) + ", element 0 " + std::string(dtypeName(h.dtype)));
        h.dtype = e->dtype;
        h.items.push_back(e->shape);
        h.data.insert(h.data.end(), e->data.begin(), e->data.end());
    }
    h.shape = { std::int64_t(h.data.size()) / std::max<Bytes>(dtypeBytes(h.dtype), 1) };
    return h;
}

} // namespace

Expected<std::pair<std::string, HostTensor>> readSequenceFile(const std::filesystem::path& file)
{
    onnx::SequenceProto s;
    if (auto read = parseFile(file, s, "SequenceProto"); !read)
        return read.error();
    auto h = sequenceValue(s, file);
    if (!h)
        return h.error();
    return std::make_pair(s.name(), std::move(*h));
}

Expected<std::pair<std::string, HostTensor>> readOptionalFile(const std::filesystem::path& file)
{
    onnx::OptionalProto o;
    if (auto read = parseFile(file, o, "OptionalProto"); !read)
        return read.error();
    HostTensor h;
    if (o.elem_type() == onnx::OptionalProto::TENSOR && o.has_tensor_value()) {
        auto t = decode(o.tensor_value(), file.parent_path(), file.string());
        if (!t)
            return t.error();
        h = std::move(*t);
    } else if (o.elem_type() == onnx::OptionalProto::SEQUENCE && o.has_sequence_value()) {
        auto sequence = sequenceValue(o.sequence_value(), file);
        if (!sequence)
            return sequence.error();
        h = std::move(*sequence);
    } else if (o.has_tensor_value() || o.has_sequence_value() || o.has_sparse_tensor_value() || o.has_map_value() || o.has_optional_value()) {
        return makeError(ErrorCode::InvalidArgument, file.string() + ": an optional of element type " + std::to_string(o.elem_type())
                             + " (only optionals of tensors and of sequences of tensors are read)");
    } else {
        h.none = true;
    }
    h.optional = true;
    return std::make_pair(o.name(), std::move(h));
}

Expected<std::map<std::string, HostTensor>> readInputFiles(const std::string& spec,
    const std::vector<std::pair<std::string, std::filesystem::path>>& files, ShapeBindings& bindings)
{
    if (files.empty())
        return std::map<std::string, HostTensor> {};
    const bool example = spec.rfind("example:", 0) == 0;
    const auto ext = std::filesystem::path(spec).extension().string();
    if (!example && ext == ".csv")
        return makeError(ErrorCode::InvalidArgument, spec + " is an allocation problem; it has no graph inputs to give files for");
    if (!example && ext != ".json")
        return readGivenInputs(spec, files, bindings);
    std::map<std::string, HostTensor> given;
    for (const auto& [name, file] : files) {
        auto tensor = readTensorFile(file);
        if (!tensor)
            return tensor.error();
        given[name] = std::move(tensor->second);
    }
    return given;
}

Expected<std::pair<std::string, HostTensor>> readValueFile(const std::filesystem::path& file, const HostTensor& like)
{
    return like.optional ? readOptionalFile(file) : like.sequence ? readSequenceFile(file) : readTensorFile(file);
}

Status writeTensorFile(const std::filesystem::path& file, const std::string& name, const HostTensor& tensor)
{
    const auto fill = [](TensorProto& t, DType dtype, const std::vector<std::int64_t>& shape, const std::byte* data, std::size_t bytes) {
        t.set_data_type(onnxdetail::onnxFromDType(dtype));
        for (auto d : shape)
            t.add_dims(d);
        t.set_raw_data(std::string(reinterpret_cast<const char*>(data), bytes));
    };
    const auto fillSequence = [&](onnx::SequenceProto& s) {
        s.set_elem_type(onnx::SequenceProto::TENSOR);
        std::size_t at = 0;
        for (const auto& item : tensor.items) {
            const auto bytes = std::size_t(std::max<std::int64_t>(elementCount(item), 0) * dtypeBytes(tensor.dtype));
            if (at + bytes > tensor.data.size())
                return false;
            fill(*s.add_tensor_values(), tensor.dtype, item, tensor.data.data() + at, bytes);
            at += bytes;
        }
        return true;
    };
    const auto tooShort = [&] {
        return makeError(ErrorCode::InvalidArgument, file.string() + ": the sequence's element shapes exceed its data");
    };
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    bool written = false;
    if (tensor.optional) {
        onnx::OptionalProto o;
        o.set_name(name);
        if (tensor.none) {
            o.set_elem_type(onnx::OptionalProto::UNDEFINED);
        } else if (tensor.sequence) {
            o.set_elem_type(onnx::OptionalProto::SEQUENCE);
            if (!fillSequence(*o.mutable_sequence_value()))
                return tooShort();
        } else {
            o.set_elem_type(onnx::OptionalProto::TENSOR);
            fill(*o.mutable_tensor_value(), tensor.dtype, tensor.shape, tensor.data.data(), tensor.data.size());
        }
        written = out && o.SerializeToOstream(&out);
    } else if (tensor.sequence) {
        onnx::SequenceProto s;
        s.set_name(name);
        if (!fillSequence(s))
            return tooShort();
        written = out && s.SerializeToOstream(&out);
    } else {
        TensorProto t;
        t.set_name(name);
        fill(t, tensor.dtype, tensor.shape, tensor.data.data(), tensor.data.size());
        written = out && t.SerializeToOstream(&out);
    }
    if (!written)
        return makeError(ErrorCode::Io, file.string() + ": cannot write");
    return {};
}

} // namespace core
