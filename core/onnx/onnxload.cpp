// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "onnx/onnxload.h"
#include "onnx/onnxexternal.h"
#include "onnx/onnxorder.h"

#include "onnx/onnxvalue.h"
#include "util/format.h"
#include "util/printable.h"

#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace core::onnxdetail {

namespace {

Error invalid(const std::string& file, const std::string& what) { return makeError(ErrorCode::InvalidModel, file + ": " + what); }

// Text holds no control bytes but line breaks and tabs (UTF-8 bytes >= 0x80 allowed); protobuf
// data always has some (field tags and lengths), even when its strings are mostly printable.
bool looksLikeText(const std::string& head)
{
    if (head.empty())
        return false;
    for (unsigned char c : head)
        if ((c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == 0x7f)
            return false;
    return true;
}

std::string describe(const onnx::ValueInfoProto& vi, const char* role) { return std::string(role) + " '" + vi.name() + "'"; }

// `dims` must be non-negative; unknown dims are left out by the caller.
Status checkDims(const std::string& file, const std::string& what, int elemType, const Dims& dims, bool typeRequired)
{
    const auto dtype = dtypeFromOnnx(elemType);
    if (!dtype && (typeRequired || elemType != 0))
        return invalid(file, what + " has an unknown data type (" + std::to_string(elemType) + ")");
    const std::int64_t count = elementCount(dims);
    if (dtype && (count < 0 || (count > 0 && tensorBytes(*dtype, dims) == kUnknownSize)))
        return invalid(file, what + " is too large: shape " + dimsText(dims) + " overflows a 64-bit byte count");
    return {};
}

// A declared type: negative dims are errors, unknown ones are allowed.
Status checkType(const std::string& file, const std::string& what, const onnx::TypeProto& type, bool typeRequired)
{
    if (type.has_sequence_type())
        return checkType(file, what, type.sequence_type().elem_type(), false);
    if (type.has_optional_type())
        return checkType(file, what, type.optional_type().elem_type(), false);
    if (!type.has_tensor_type())
        return {};
    const auto& t = type.tensor_type();
    Dims dims;
    bool allKnown = t.has_shape();
    if (t.has_shape())
        for (const auto& d : t.shape().dim()) {
            if (d.has_dim_value() && d.dim_value() < 0)
                return invalid(file, what + " has a negative dimension (" + std::to_string(d.dim_value()) + ") in its declared shape");
            if (!d.has_dim_value())
                allKnown = false;
            dims.push_back(d.has_dim_value() ? d.dim_value() : 0);
        }
    return checkDims(file, what, t.elem_type(), allKnown ? dims : Dims {}, typeRequired);
}

} // namespace

std::string opNameOf(const onnx::NodeProto& node, int index)
{
    return node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
}

std::string nodeDescription(const onnx::GraphProto& g, int index)
{
    const auto& node = g.node(index);
    return "node " + std::to_string(index) + " '" + (node.name().empty() ? node.op_type() : node.name()) + "' (" + node.op_type() + ")";
}

std::string joinNames(const std::vector<std::string>& names, std::size_t limit)
{
    std::string text;
    for (std::size_t i = 0; i < names.size() && i < limit; ++i)
        text += (i ? ", " : "") + names[i];
    if (names.size() > limit)
        text += " and " + std::to_string(names.size() - limit) + " more";
    return text;
}

Expected<onnx::ModelProto> readModel(const std::filesystem::path& file, std::vector<std::string>* notes)
{
    const std::string name = file.string();
    try {
        std::error_code ec;
        const auto status = std::filesystem::status(file, ec);
        if (ec || !std::filesystem::exists(status))
            return makeError(ErrorCode::Io, name + ": no such file");
        if (std::filesystem::is_directory(status))
            return makeError(ErrorCode::Io, name + ": is a directory, not an ONNX model file");
        const auto size = std::filesystem::file_size(file, ec);
        if (ec)
            return makeError(ErrorCode::Io, name + ": cannot read the file size (" + ec.message() + ")");
        if (size == 0)
            return invalid(name, "empty file, not an ONNX model");
        if (size > std::uintmax_t(INT_MAX))
            return invalid(name, "larger than 2 GiB, the protobuf limit; keep the weights in external data files");
        std::ifstream in(file, std::ios::binary);
        if (!in)
            return makeError(ErrorCode::Io, name + ": cannot open (" + std::strerror(errno) + ")");
        std::string head(std::min<std::uintmax_t>(size, 256), '\0');
        in.read(head.data(), std::streamsize(head.size()));
        in.clear();
        in.seekg(0);
        onnx::ModelProto model;
        google::protobuf::io::IstreamInputStream stream(&in);
        if (!model.ParseFromZeroCopyStream(&stream)) {
            if (looksLikeText(head))
                return invalid(name, "not an ONNX model (it looks like a text file)");
            return invalid(name, "not a valid ONNX model: the protobuf data is truncated or corrupt");
        }
        if (!model.has_graph() || model.ir_version() <= 0) {
            if (looksLikeText(head))
                return invalid(name, "not an ONNX model (it looks like a text file)");
            return invalid(name, std::string("not an ONNX model: ") + (model.has_graph() ? "no IR version" : "no graph"));
        }
        const auto late = sortNodes(model, name);
        if (!late)
            return late.error();
        if (notes && !late->empty())
            notes->push_back("the file's nodes are not in dependency order, which ONNX requires (" + *late
                             + "); they run in an order that is, as in a runtime");
        return model;
    } catch (const std::exception& e) {
        return invalid(name, std::string("cannot be read: ") + e.what());
    }
}

Status validateModel(const onnx::ModelProto& model, const std::string& file, std::vector<std::string>* notes)
{
    const auto& graph = model.graph();
    if (graph.node_size() == 0)
        return invalid(file, "the graph has no nodes");
    std::unordered_set<std::string> initializers;
    for (const auto& t : graph.initializer()) {
        initializers.insert(t.name());
        Dims dims(t.dims().begin(), t.dims().end());
        for (auto d : dims)
            if (d < 0)
                return invalid(file, "initializer '" + t.name() + "' has a negative dimension in its shape " + dimsText(dims));
        if (auto s = checkDims(file, "initializer '" + t.name() + "'", t.data_type(), dims, true); !s)
            return s;
    }
    for (const auto& s : graph.sparse_initializer()) {
        initializers.insert(s.values().name());
        Dims dims(s.dims().begin(), s.dims().end());
        const std::string what = "sparse initializer '" + s.values().name() + "'";
        if (std::any_of(dims.begin(), dims.end(), [](std::int64_t d) { return d < 0; }))
            return invalid(file, what + " has a negative dimension in its shape " + dimsText(dims));
        if (auto status = checkDims(file, what, s.values().data_type(), dims, true); !status)
            return status;
    }
    for (const auto& vi : graph.input()) {
        // ONNX requires a type on every graph input; inference (ONNX's own included) cannot work without one.
        if (!initializers.count(vi.name()) && vi.type().value_case() == onnx::TypeProto::VALUE_NOT_SET)
            return invalid(file, describe(vi, "input") + " has no type: a graph input must declare one (an element type "
                                 "and a shape), e.g. tensor(float) [1,3,224,224]");
        if (auto s = checkType(file, describe(vi, "input"), vi.type(), !initializers.count(vi.name())); !s)
            return s;
    }
    // External data is confined to the model's folder and checked against the file and the tensor's
    // dims now, so that planning refuses what a run could not read (a missing file excepted: planning
    // needs only the dims).
    std::map<std::string, std::pair<int, std::int64_t>> missing; // file -> initializers, bytes
    for (const auto& t : graph.initializer())
        if (t.data_location() == onnx::TensorProto::EXTERNAL) {
            auto r = locateExternalData(t, std::filesystem::path(file).parent_path(), declaredBytes(t), file, false);
            if (!r)
                return r.error();
            if (r->missing) {
                auto& [count, bytes] = missing[r->file.filename().string()];
                ++count;
                bytes += std::max<std::int64_t>(r->length, 0);
            }
        }
    if (notes)
        for (const auto& [name, what] : missing)
            notes->push_back(std::to_string(what.first) + " initializer" + (what.first > 1 ? "s keep" : " keeps") + " " + formatBytes(what.second)
                             + " of data in '" + printable(name) + "', which is not in the model's folder: planned from their dims; a run needs the file");
    for (const auto& vi : graph.output())
        if (auto s = checkType(file, describe(vi, "output"), vi.type(), false); !s)
            return s;
    for (const auto& vi : graph.value_info())
        if (auto s = checkType(file, describe(vi, "tensor"), vi.type(), false); !s)
            return s;

    // Single definition of every value; every top-level read defined somewhere.
    std::unordered_map<std::string, std::string> definedBy;
    for (const auto& vi : graph.input())
        definedBy.emplace(vi.name(), "graph input");
    for (const auto& name : initializers)
        definedBy.emplace(name, "initializer");
    auto nodeName = [&](int i) { return nodeDescription(graph, i); };
    for (int i = 0; i < graph.node_size(); ++i)
        for (const auto& out : graph.node(i).output()) {
            if (out.empty())
                continue;
            auto [it, fresh] = definedBy.emplace(out, nodeName(i));
            if (!fresh)
                return invalid(file, "tensor '" + out + "' is produced by " + nodeName(i) + " but is already defined by " + it->second);
        }
    for (int i = 0; i < graph.node_size(); ++i)
        for (const auto& in : graph.node(i).input())
            if (!in.empty() && !definedBy.count(in))
                return invalid(file, nodeName(i) + " reads '" + in + "', which no node, initializer or graph input defines");
    for (const auto& vi : graph.output())
        if (!definedBy.count(vi.name()))
            return invalid(file, "graph output '" + vi.name() + "' is not produced by any node");
    return {};
}

const onnx::TypeProto_Tensor* tensorTypeOf(const onnx::TypeProto& type)
{
    if (type.has_sequence_type())
        return tensorTypeOf(type.sequence_type().elem_type());
    if (type.has_optional_type())
        return tensorTypeOf(type.optional_type().elem_type());
    return type.has_tensor_type() ? &type.tensor_type() : nullptr;
}

void freeNames(const onnx::GraphProto& g, std::vector<std::string>& out, std::unordered_set<std::string>& seen)
{
    std::unordered_set<std::string> defined;
    for (const auto& vi : g.input())
        defined.insert(vi.name());
    for (const auto& t : g.initializer())
        defined.insert(t.name());
    for (const auto& s : g.sparse_initializer())
        defined.insert(s.values().name());
    for (const auto& node : g.node())
        for (const auto& o : node.output())
            defined.insert(o);
    auto use = [&](const std::string& name) {
        if (!name.empty() && !defined.count(name) && seen.insert(name).second)
            out.push_back(name);
    };
    for (const auto& node : g.node()) {
        for (const auto& in : node.input())
            use(in);
        for (const auto& a : node.attribute()) {
            std::vector<std::string> inner;
            std::unordered_set<std::string> innerSeen;
            if (a.has_g())
                freeNames(a.g(), inner, innerSeen);
            for (const auto& sub : a.graphs())
                freeNames(sub, inner, innerSeen);
            for (const auto& name : inner)
                use(name);
        }
    }
    for (const auto& vi : g.output())
        use(vi.name());
}

std::vector<std::string> subgraphReads(const onnx::NodeProto& node)
{
    std::vector<std::string> names;
    std::unordered_set<std::string> seen;
    for (const auto& a : node.attribute()) {
        if (a.has_g())
            freeNames(a.g(), names, seen);
        for (const auto& sub : a.graphs())
            freeNames(sub, names, seen);
    }
    return names;
}

std::vector<std::string> valueNames(const onnx::GraphProto& g, const std::vector<const onnx::TensorProto*>& initializers)
{
    std::vector<std::string> names;
    std::unordered_set<std::string> seen;
    auto add = [&](const std::string& name) {
        if (!name.empty() && seen.insert(name).second)
            names.push_back(name);
    };
    for (const auto& vi : g.input())
        add(vi.name());
    for (const auto* t : initializers)
        add(t->name());
    for (const auto& s : g.sparse_initializer())
        add(s.values().name());
    for (const auto& node : g.node()) {
        for (const auto& in : node.input())
            add(in);
        for (const auto& out : node.output())
            add(out);
    }
    for (const auto& vi : g.output())
        add(vi.name());
    return names;
}

std::vector<std::string> symbolicInputDims(const onnx::GraphProto& graph)
{
    std::vector<std::string> names;
    std::unordered_set<std::string> seen;
    for (const auto& vi : graph.input())
        if (const auto* t = tensorTypeOf(vi.type()); t && t->has_shape())
            for (const auto& d : t->shape().dim())
                if (!d.has_dim_value() && !d.dim_param().empty() && seen.insert(d.dim_param()).second)
                    names.push_back(d.dim_param());
    return names;
}

namespace {
void bindDims(onnx::TypeProto& type, const std::map<std::string, std::int64_t>& dims)
{
    onnx::TensorShapeProto* shape = nullptr;
    if (type.has_tensor_type() && type.tensor_type().has_shape())
        shape = type.mutable_tensor_type()->mutable_shape();
    else if (type.has_sequence_type())
        return bindDims(*type.mutable_sequence_type()->mutable_elem_type(), dims);
    else if (type.has_optional_type())
        return bindDims(*type.mutable_optional_type()->mutable_elem_type(), dims);
    if (!shape)
        return;
    for (auto& d : *shape->mutable_dim())
        if (!d.has_dim_value() && !d.dim_param().empty())
            if (auto it = dims.find(d.dim_param()); it != dims.end())
                d.set_dim_value(it->second); // clears dim_param (same oneof)
}
} // namespace

Status applyBindings(onnx::ModelProto& model, const ShapeBindings& bindings, const std::string& file)
{
    auto* graph = model.mutable_graph();
    auto bad = [&](const std::string& what) { return makeError(ErrorCode::InvalidArgument, file + ": " + what); };

    // A symbolic dimension has one size: a shape given for an input that names it must agree with
    // the size given for the dimension, and with the other given shapes that name it.
    std::map<std::string, std::pair<std::int64_t, std::string>> sizeOf; // dim_param -> size, and what gave it
    for (const auto& [dim, value] : bindings.dims)
        sizeOf[dim] = { value, "is given as " + std::to_string(value) };
    for (const auto& [name, shape] : bindings.inputShapes) {
        const std::string& wanted = name; // clang 14 cannot capture a structured binding in a lambda
        const auto vi = std::find_if(graph->input().begin(), graph->input().end(), [&](const auto& v) { return v.name() == wanted; });
        if (vi == graph->input().end())
            continue; // refused below, with the model's inputs
        const auto& type = vi->type().has_optional_type() ? vi->type().optional_type().elem_type() : vi->type();
        if (!type.has_tensor_type() || !type.tensor_type().has_shape() || type.tensor_type().shape().dim_size() != int(shape.size()))
            continue;
        for (int d = 0; d < int(shape.size()); ++d) {
            const auto& dim = type.tensor_type().shape().dim(d);
            if (dim.has_dim_value() || dim.dim_param().empty())
                continue;
            const auto [it, first] = sizeOf.try_emplace(dim.dim_param(), shape[d], "the shape given for input '" + name + "' makes "
                    + std::to_string(shape[d]));
            if (!first && it->second.first != shape[d])
                return bad("input '" + name + "': its dimension " + std::to_string(d) + " is '" + dim.dim_param() + "', which "
                           + it->second.second + ", but the shape given for it, " + dimsText(shape) + ", makes it " + std::to_string(shape[d]));
        }
    }

    if (!bindings.dims.empty()) {
        // Any dim_param in the graph's declared types may be bound; the hint lists the inputs' ones.
        std::unordered_set<std::string> known;
        auto collect = [&](const onnx::ValueInfoProto& vi) {
            const onnx::TypeProto* t = &vi.type();
            while (t->has_sequence_type() || t->has_optional_type())
                t = t->has_sequence_type() ? &t->sequence_type().elem_type() : &t->optional_type().elem_type();
            if (t->has_tensor_type() && t->tensor_type().has_shape())
                for (const auto& d : t->tensor_type().shape().dim())
                    if (!d.dim_param().empty())
                        known.insert(d.dim_param());
        };
        for (const auto& vi : graph->input())
            collect(vi);
        for (const auto& vi : graph->output())
            collect(vi);
        for (const auto& vi : graph->value_info())
            collect(vi);
        for (const auto& [name, value] : bindings.dims) {
            if (value < 0)
                return bad("dimension '" + name + "' must not be negative (got " + std::to_string(value) + ")");
            if (!known.count(name)) {
                const auto symbols = symbolicInputDims(*graph);
                return bad("unknown dimension '" + name + "'; "
                           + (symbols.empty() ? std::string("the model has no symbolic dimensions")
                                              : "the model's symbolic dimensions are: " + joinNames(symbols, 32)));
            }
        }
        for (auto& vi : *graph->mutable_input())
            bindDims(*vi.mutable_type(), bindings.dims);
        for (auto& vi : *graph->mutable_output())
            bindDims(*vi.mutable_type(), bindings.dims);
        for (auto& vi : *graph->mutable_value_info())
            bindDims(*vi.mutable_type(), bindings.dims);
    }

    for (const auto& [name, bytes] : bindings.sequenceBytes) {
        const std::string& wanted = name; // clang 14 cannot capture a structured binding in a lambda
        const auto it = std::find_if(graph->input().begin(), graph->input().end(), [&](const auto& vi) { return vi.name() == wanted; });
        if (it == graph->input().end())
            return bad("unknown input '" + name + "'");
        const auto& type = it->type().has_optional_type() ? it->type().optional_type().elem_type() : it->type();
        if (!type.has_sequence_type())
            return bad("input '" + name + "' is not a sequence");
        if (bytes < 0)
            return bad("input '" + name + "': a sequence cannot hold " + std::to_string(bytes) + " bytes");
    }
    for (const auto& [name, value] : bindings.inputValues) {
        const std::string& wanted = name; // clang 14 cannot capture a structured binding in a lambda
        const auto it = std::find_if(graph->input().begin(), graph->input().end(), [&](const auto& vi) { return vi.name() == wanted; });
        if (it == graph->input().end())
            return bad("unknown input '" + name + "'");
        if (it->type().has_sequence_type())
            return bad("input '" + name + "' is a sequence; its values cannot be given as a tensor");
    }
    if (bindings.inputShapes.empty())
        return {};
    std::unordered_set<std::string> initializers;
    for (const auto& t : graph->initializer())
        initializers.insert(t.name());
    std::vector<std::string> inputNames;
    std::unordered_map<std::string, onnx::ValueInfoProto*> inputs;
    for (auto& vi : *graph->mutable_input())
        if (!initializers.count(vi.name())) {
            inputNames.push_back(vi.name());
            inputs.emplace(vi.name(), &vi);
        }
    bool changedKnownDim = false;
    for (const auto& [name, shape] : bindings.inputShapes) {
        auto it = inputs.find(name);
        if (it == inputs.end())
            return bad("unknown input '" + name + "'; the model's inputs are: " + joinNames(inputNames, 32));
        for (auto d : shape)
            if (d < 0)
                return bad("input '" + name + "': the given shape " + dimsText(shape) + " has a negative dimension");
        auto* type = it->second->mutable_type();
        if (type->has_optional_type()) // an optional tensor: the tensor it holds
            type = type->mutable_optional_type()->mutable_elem_type();
        if (!type->has_tensor_type() && type->value_case() != onnx::TypeProto::VALUE_NOT_SET)
            return bad("input '" + name + "' is not a tensor; its shape cannot be set");
        auto* tensor = type->mutable_tensor_type();
        if (tensor->has_shape() && tensor->shape().dim_size() != int(shape.size()))
            return bad("input '" + name + "' has rank " + std::to_string(tensor->shape().dim_size()) + " but the given shape "
                       + dimsText(shape) + " has " + std::to_string(shape.size()) + " dimensions");
        if (tensor->has_shape())
            for (int d = 0; d < tensor->shape().dim_size(); ++d)
                if (tensor->shape().dim(d).has_dim_value() && tensor->shape().dim(d).dim_value() != shape[d])
                    changedKnownDim = true;
        auto* s = tensor->mutable_shape();
        s->clear_dim();
        for (auto d : shape)
            s->add_dim()->set_dim_value(d);
    }
    if (changedKnownDim) {
        // The model's stored intermediate shapes were computed for the old input shapes.
        graph->clear_value_info();
        for (auto& vi : *graph->mutable_output())
            if (vi.type().has_tensor_type())
                vi.mutable_type()->mutable_tensor_type()->clear_shape();
    }
    return {};
}

Attribute toAttribute(const onnx::AttributeProto& a)
{
    Attribute result;
    using A = onnx::AttributeProto;
    switch (a.type()) {
    case A::INT: result.ints = { a.i() }; break;
    case A::INTS: result.ints.assign(a.ints().begin(), a.ints().end()); break;
    case A::FLOAT: result.floats = { a.f() }; break;
    case A::FLOATS: result.floats.assign(a.floats().begin(), a.floats().end()); break;
    case A::STRING: result.text = a.s(); break;
    case A::STRINGS: result.strings.assign(a.strings().begin(), a.strings().end()); break;
    default: // untyped attributes of very old models: take whichever field is set
        if (a.has_i())
            result.ints = { a.i() };
        else if (a.has_f())
            result.floats = { a.f() };
        else if (a.has_s())
            result.text = a.s();
        else if (a.ints_size())
            result.ints.assign(a.ints().begin(), a.ints().end());
        else if (a.floats_size())
            result.floats.assign(a.floats().begin(), a.floats().end());
        else if (a.strings_size())
            result.strings.assign(a.strings().begin(), a.strings().end());
        break;
    }
    result.list = a.type() == A::INTS || a.type() == A::FLOATS || a.type() == A::STRINGS
        || (a.type() == A::UNDEFINED && (a.ints_size() || a.floats_size() || a.strings_size()));
    return result;
}

bool isScalarOrListAttribute(const onnx::AttributeProto& a)
{
    return !a.has_t() && !a.has_g() && !a.has_sparse_tensor() && !a.has_tp() && a.tensors_size() == 0
        && a.graphs_size() == 0 && a.sparse_tensors_size() == 0 && a.type_protos_size() == 0;
}

} // namespace core::onnxdetail
