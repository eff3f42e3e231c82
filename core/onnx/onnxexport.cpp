// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// exportOnnx: a Graph as an ONNX model (IR 8, the graph's opsets or 17) whose declared types carry every size,
// so importOnnx gives the same sizes back even for ops ONNX cannot infer.
#include "onnx/onnximport.h"

#include "onnx/onnxattribute.h"
#include "onnx/onnxvalue.h"

#include <climits>
#include <cmath>
#include <fstream>
#include <map>
#include <unordered_set>

namespace core {

using namespace onnxdetail;

namespace {

// Attributes ONNX defines as lists, for graphs whose attributes do not say (Attribute::list): a
// one-element list must not be written as a scalar.
const std::unordered_set<std::string> kListAttributes {
    "kernel_shape", "strides", "pads", "dilations", "output_padding", "output_shape", "perm", "axes", "shape",
    "sizes", "split", "starts", "ends", "steps", "scales", "pooled_shape", "repeats", "value_ints", "value_floats",
    "activation_alpha", "activation_beta", "scan_input_axes", "scan_output_axes", "scan_input_directions",
    "scan_output_directions", "image_shape", "block_shape", "classlabels_ints", "nodes_featureids",
};

bool shapeGivesSize(const Tensor& t)
{
    return t.rankKnown && t.dtype != DType::Undefined && tensorBytes(t.dtype, t.shape) == t.size;
}

// The declared type of a tensor: its shape when that gives its size, otherwise a flat byte-sized
// stand-in so a re-import still finds the size.
void writeType(const Tensor& t, onnx::TypeProto& type)
{
    ValueFacts f;
    f.kind = ValueKind::Tensor;
    f.elemType = onnxFromDType(t.dtype);
    if (shapeGivesSize(t) || (t.size == kUnknownSize && t.rankKnown)) {
        f.rankKnown = true;
        f.dims = t.shape;
    } else if (t.size != kUnknownSize) {
        const Bytes element = dtypeBytes(t.dtype);
        f.rankKnown = true;
        if (element > 0 && t.size % element == 0) {
            f.dims = { t.size / element };
        } else {
            f.elemType = onnx::TensorProto::UINT8;
            f.dims = { t.size };
        }
    }
    factsToType(f, type);
    if (!type.tensor_type().has_elem_type())
        type.mutable_tensor_type()->set_elem_type(onnx::TensorProto::UINT8);
}

// An optional tensor whose shape gives its size is declared an optional, so ONNX's checker and a
// re-import see one; anything else keeps the flat stand-in that carries its size.
void writeValueInfo(const Tensor& t, onnx::ValueInfoProto& vi)
{
    vi.set_name(t.name);
    writeType(t, *vi.mutable_type());
    if (t.optional && !t.sequence && shapeGivesSize(t)) {
        onnx::TypeProto element;
        element.Swap(vi.mutable_type());
        *vi.mutable_type()->mutable_optional_type()->mutable_elem_type() = element;
    }
}

// A tensor of the tensor's declared type and shape: its known values (Tensor::values), else zeros.
Status writeWeight(const Tensor& t, onnx::TensorProto& tensor, const std::string& file)
{
    onnx::TypeProto type;
    writeType(t, type);
    const auto& tt = type.tensor_type();
    tensor.set_name(t.name);
    tensor.set_data_type(tt.elem_type());
    Dims dims;
    for (const auto& d : tt.shape().dim()) {
        tensor.add_dims(d.dim_value());
        dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    }
    const auto dtype = dtypeFromOnnx(tt.elem_type()).value_or(DType::UInt8);
    const Bytes bytes = tensorBytes(dtype, dims);
    if (bytes == kUnknownSize)
        return makeError(ErrorCode::InvalidArgument, file + ": weight '" + t.name + "' has no known size to export");
    if (bytes > Bytes(INT_MAX))
        return makeError(ErrorCode::InvalidArgument, file + ": weight '" + t.name + "' is larger than 2 GiB, which ONNX files cannot hold inline");
    const auto count = elementCount(dims);
    if (isIntegerType(tt.elem_type()) && count >= 0 && std::int64_t(t.values.size()) == count && !t.values.empty()) {
        ConstValue known; // a constant import folded: its values, so shape inference sees them again
        known.elemType = tt.elem_type();
        known.dims = dims;
        known.ints = t.values;
        writeConst(known, tensor);
    } else if (dtype == DType::String) {
        for (Bytes i = 0; i < bytes / dtypeBytes(dtype); ++i)
            tensor.add_string_data("");
    } else {
        tensor.set_raw_data(std::string(std::size_t(bytes), '\0'));
    }
    return {};
}

} // namespace

void onnxdetail::writeAttribute(const std::string& name, const Attribute& a, onnx::AttributeProto& out)
{
    out.set_name(name);
    const bool list = a.list || kListAttributes.count(name) != 0;
    if (!a.ints.empty()) {
        if (a.ints.size() == 1 && !list) {
            out.set_type(onnx::AttributeProto::INT);
            out.set_i(a.ints[0]);
        } else {
            out.set_type(onnx::AttributeProto::INTS);
            for (auto v : a.ints)
                out.add_ints(v);
        }
    } else if (!a.floats.empty()) {
        if (a.floats.size() == 1 && !list) {
            out.set_type(onnx::AttributeProto::FLOAT);
            out.set_f(a.floats[0]);
        } else {
            out.set_type(onnx::AttributeProto::FLOATS);
            for (auto v : a.floats)
                out.add_floats(v);
        }
    } else if (!a.strings.empty()) {
        out.set_type(onnx::AttributeProto::STRINGS);
        for (const auto& text : a.strings)
            out.add_strings(text);
    } else if (list) {
        out.set_type(onnx::AttributeProto::INTS); // an empty list
    } else {
        out.set_type(onnx::AttributeProto::STRING);
        out.set_s(a.text);
    }
}

namespace {

// A ConstantOfShape's value: a one-element tensor of the output's element type holding the fill
// the graph kept (Attribute "value"), or zero; left out for float32 zeros, ONNX's default.
void writeFillValue(const Op& op, DType dtype, onnx::NodeProto& node)
{
    const auto it = op.attributes.find("value");
    ConstValue fill;
    fill.elemType = onnxFromDType(dtype);
    fill.dims = { 1 };
    if (fill.elemType == 0 || (it == op.attributes.end() && dtype == DType::Float32))
        return;
    const Attribute kept = it == op.attributes.end() ? Attribute {} : it->second;
    const double real = !kept.floats.empty() ? double(kept.floats[0]) : !kept.ints.empty() ? double(kept.ints[0]) : 0.0;
    if (isIntegerType(fill.elemType))
        fill.ints = { !kept.ints.empty() ? kept.ints[0] : std::abs(real) < 9e18 ? std::int64_t(real) : 0 };
    else
        fill.reals = { real };
    auto* attr = node.add_attribute();
    attr->set_name("value");
    attr->set_type(onnx::AttributeProto::TENSOR);
    writeConst(fill, *attr->mutable_t());
}

Status exportImpl(const Graph& graph, const std::filesystem::path& file)
{
    const std::string fileName = file.string();
    auto bad = [&](const std::string& what) { return makeError(ErrorCode::InvalidArgument, fileName + ": " + what); };
    const auto count = TensorIndex(graph.tensors.size());
    auto valid = [&](TensorIndex t) { return t >= 0 && t < count; };
    // A graph keeps only what an If, Loop or Scan's subgraphs read, not the subgraphs: a file
    // without them would be another model, planned differently.
    for (const auto& op : graph.ops)
        if ((op.domain.empty() || op.domain == "ai.onnx")
            && (op.type == "If" || op.type == "Loop" || op.type == "Scan" || op.type == "SequenceMap"))
            return bad("op '" + op.name + "' (" + op.type + ") runs subgraphs, which MemPlan's graph does not keep, so it cannot "
                       "be written as ONNX; export the plan's sizes with --graph-json or --csv");

    onnx::ModelProto model;
    model.set_ir_version(8);
    model.set_producer_name("memplan");
    // The file's own operator sets where the graph came from one; opset 17 and version 1 otherwise.
    std::map<std::string, std::int64_t> opsets = graph.opsets;
    opsets.emplace("", 17);
    for (const auto& op : graph.ops)
        opsets.emplace(op.domain == "ai.onnx" ? std::string() : op.domain, 1);
    for (const auto& [domain, version] : opsets) {
        auto* o = model.add_opset_import();
        o->set_domain(domain);
        o->set_version(version);
    }
    auto* g = model.mutable_graph();
    g->set_name(graph.name.empty() ? "memplan" : graph.name);

    std::vector<bool> produced(graph.tensors.size(), false), declared(graph.tensors.size(), false);
    for (const auto& op : graph.ops)
        for (auto t : op.outputs) {
            if (!valid(t))
                return bad("op '" + op.name + "' has an output index out of range");
            produced[t] = true;
        }
    for (auto t : graph.inputs) {
        if (!valid(t))
            return bad("graph input index out of range");
        writeValueInfo(graph.tensors[t], *g->add_input());
        declared[t] = true;
    }
    for (TensorIndex t = 0; t < count; ++t) {
        const auto& tensor = graph.tensors[t];
        if (declared[t] || produced[t] || tensor.kind != TensorKind::Weight)
            continue;
        if (auto s = writeWeight(tensor, *g->add_initializer(), fileName); !s)
            return s;
        declared[t] = true;
    }
    // Anything else read but never produced (persistent state, inputs not listed) becomes an input.
    for (const auto& op : graph.ops)
        for (auto list : { &op.inputs, &op.captured })
            for (auto t : *list) {
                if (!valid(t))
                    return bad("op '" + op.name + "' has an input index out of range");
                if (!declared[t] && !produced[t]) {
                    writeValueInfo(graph.tensors[t], *g->add_input());
                    declared[t] = true;
                }
            }

    for (const auto& op : graph.ops) {
        auto* node = g->add_node();
        node->set_op_type(op.type);
        node->set_name(op.name);
        if (!op.domain.empty())
            node->set_domain(op.domain);
        for (const auto& name : slotNames(graph, op.inputs, op.inputSlots))
            node->add_input(name);
        for (const auto& name : slotNames(graph, op.outputs, op.outputSlots))
            node->add_output(name);
        const bool fills = op.type == "ConstantOfShape" && op.domain.empty() && op.outputs.size() == 1;
        for (const auto& [name, a] : op.attributes)
            if (!(fills && name == "value"))
                writeAttribute(name, a, *node->add_attribute());
        if (fills)
            writeFillValue(op, graph.tensors[op.outputs[0]].dtype, *node);
        // A Constant needs its value; the graph only knows its type and shape.
        if (op.type == "Constant" && op.outputs.size() == 1 && !op.attributes.count("value")) {
            auto* attr = node->add_attribute();
            attr->set_name("value");
            attr->set_type(onnx::AttributeProto::TENSOR);
            if (auto s = writeWeight(graph.tensors[op.outputs[0]], *attr->mutable_t(), fileName); !s)
                return s;
            attr->mutable_t()->clear_name();
        }
    }
    std::unordered_set<TensorIndex> outputs(graph.outputs.begin(), graph.outputs.end());
    for (auto t : graph.outputs) {
        if (!valid(t))
            return bad("graph output index out of range");
        writeValueInfo(graph.tensors[t], *g->add_output());
    }
    for (TensorIndex t = 0; t < count; ++t)
        if (produced[t] && !outputs.count(t))
            writeValueInfo(graph.tensors[t], *g->add_value_info());
    // ONNX has no word for a tensor an op writes that lives outside the arena; MemPlan's import reads it back.
    std::string persistent;
    for (TensorIndex t = 0; t < count; ++t)
        if (produced[t] && graph.tensors[t].kind == TensorKind::Persistent)
            persistent += (persistent.empty() ? "" : "\n") + graph.tensors[t].name;
    if (!persistent.empty()) {
        auto* entry = model.add_metadata_props();
        entry->set_key(std::string(kPersistentKey));
        entry->set_value(persistent);
    }

    if (model.ByteSizeLong() > std::size_t(INT_MAX))
        return bad("the model would be larger than 2 GiB, the protobuf limit");
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    if (!out)
        return makeError(ErrorCode::Io, fileName + ": cannot open for writing");
    if (!model.SerializeToOstream(&out) || !out.flush())
        return makeError(ErrorCode::Io, fileName + ": write failed");
    return {};
}

} // namespace

Status exportOnnx(const Graph& graph, const std::filesystem::path& file)
{
    try {
        return exportImpl(graph, file);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Io, file.string() + ": export failed: " + e.what());
    }
}

} // namespace core
