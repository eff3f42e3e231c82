// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to core/onnx: reading a model file and checking what it declares, before inference.
// Every function names `file` in its errors and never throws.

#include "graph/graph.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <unordered_set>
#include <vector>

namespace core::onnxdetail {

// Parses the file; Io when it cannot be read, InvalidModel when it is not an ONNX model
// (text, random bytes, truncated protobuf, no graph) or its nodes form a cycle. Nodes out of
// dependency order are put in order (sortNodes), and `notes`, when given, says so.
Expected<onnx::ModelProto> readModel(const std::filesystem::path& file, std::vector<std::string>* notes = nullptr);

// Declared types of inputs, outputs, value_info and initializers: known data types, no negative
// dims, byte sizes that fit in 64 bits. Also: the graph has nodes, every top-level node input is
// defined, and no value is defined twice. `notes`, when given, names external-data files that are
// missing (planning needs only the dims; a run refuses them).
Status validateModel(const onnx::ModelProto& model, const std::string& file, std::vector<std::string>* notes = nullptr);

// The tensor type inside sequence/optional wrappers; nullptr for maps and untyped values.
const onnx::TypeProto_Tensor* tensorTypeOf(const onnx::TypeProto& type);

// Names a subgraph reads but does not define (recursively through nested subgraphs), appended
// to `out` in order of first use; `seen` deduplicates across calls.
void freeNames(const onnx::GraphProto& g, std::vector<std::string>& out, std::unordered_set<std::string>& seen);
// Outer-scope names read by the subgraphs of `node` (If/Loop/Scan bodies), in order of first use.
std::vector<std::string> subgraphReads(const onnx::NodeProto& node);

// Every value name of `g`, once, in order of first appearance: inputs, `initializers` (the graph's,
// which callers may keep outside it), sparse initializers, node inputs and outputs, outputs.
std::vector<std::string> valueNames(const onnx::GraphProto& g, const std::vector<const onnx::TensorProto*>& initializers);

// Symbolic dimension names (dim_param) of the graph inputs, in order of first use.
std::vector<std::string> symbolicInputDims(const onnx::GraphProto& graph);

// Applies --dim and --input-shape bindings to the graph's declared types. Unknown names, negative
// values and rank mismatches are InvalidArgument errors that list what the model offers.
Status applyBindings(onnx::ModelProto& model, const ShapeBindings& bindings, const std::string& file);

// "node 3 'conv1' (Conv)": a node of `g` as errors and notes name it (its op type when it has no name).
std::string nodeDescription(const onnx::GraphProto& g, int index);

// The name an imported op gets: the node's name, or "<op_type>_<index in the node list>" when it has none.
std::string opNameOf(const onnx::NodeProto& node, int index);

// "a, b, c" of at most `limit` items, then "and N more".
std::string joinNames(const std::vector<std::string>& names, std::size_t limit = 8);

// An attribute as Op::attributes holds it (ints, floats or text); and whether it is one of those
// kinds at all (not a tensor, graph or type).
Attribute toAttribute(const onnx::AttributeProto& a);
bool isScalarOrListAttribute(const onnx::AttributeProto& a);

} // namespace core::onnxdetail
