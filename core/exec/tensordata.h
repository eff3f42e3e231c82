// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Tensor contents for the executor: weights read from a model file on request (import for planning
// never reads them), and single tensors read from / written to ONNX TensorProto files (.pb, the
// format of the ONNX backend test data). Every function names the file in its errors and never throws.

#include "graph/graph.h"

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace core {

// A dense tensor in host memory, little-endian, row-major. `data.size()` = element count × dtypeBytes.
struct HostTensor {
    DType dtype = DType::Undefined;
    std::vector<std::int64_t> shape;
    std::vector<std::byte> data;
    // An ONNX sequence: `data` holds its elements packed in order, each of `dtype`, with these
    // shapes; `shape` is { total elements }.
    bool sequence = false;
    std::vector<std::vector<std::int64_t>> items;
    // An ONNX optional (an OptionalProto file): it holds the tensor or sequence above, or, when
    // `none`, nothing (no data; dtype may be Undefined).
    bool optional = false;
    bool none = false;

    std::int64_t elementCount() const; // -1 when a dim is negative or the product exceeds int64
    bool operator==(const HostTensor&) const = default; // same type, shape and bytes
};

namespace exec {
struct Subgraphs;
}

// What the executor needs from a model file beyond the Graph that import gives.
struct ModelData {
    // Weight contents by tensor index of the graph (matched by name): initializers (raw_data, typed
    // fields such as float_data/int64_data, external data files beside the model) and the `value*`
    // attributes of Constant nodes. Weights the file gives no contents for (strings) are left out.
    std::map<TensorIndex, HostTensor> weights;
    // ConstantOfShape ops with a `value` attribute: that one-element tensor (absent: float 0).
    std::map<OpIndex, HostTensor> fillValues;
    // If, Loop and Scan ops (default domain) and their graphs as the CPU executor runs them (exec/branch.h).
    std::map<OpIndex, std::shared_ptr<const exec::Subgraphs>> subgraphs;
};

// Reads `modelFile` again (the whole file, weights included) for the graph importOnnx made of it.
// Import for planning never calls this, so it stays as fast as before.
Expected<ModelData> loadTensorData(const std::filesystem::path& modelFile, const Graph& graph);

// The same data for `to`, a rewrite of `from` (strategies: fused, recomputed, swapped ops): weights
// follow their tensor's name, per-op facts their op's name; a recompute clone ("X.recompute") gets
// the facts of X; a fused op's body ops get the facts of the ops they were. Anything `to` does not name is dropped.
ModelData remapModelData(const ModelData& data, const Graph& from, const Graph& to);

// One TensorProto file: its name (may be empty) and contents.
Expected<std::pair<std::string, HostTensor>> readTensorFile(const std::filesystem::path& file);
// One SequenceProto file of tensors (the ONNX backend test data's sequence values): its name and
// the elements as one HostTensor (sequence = true); an empty sequence has dtype Undefined.
Expected<std::pair<std::string, HostTensor>> readSequenceFile(const std::filesystem::path& file);
// One OptionalProto file (the ONNX backend test data's optional values): its name and its value
// (optional = true), a tensor, a sequence of tensors or none.
Expected<std::pair<std::string, HostTensor>> readOptionalFile(const std::filesystem::path& file);
// The file of a value like `like` (an output the executor computed): readOptionalFile for an
// optional, readSequenceFile for a sequence, else readTensorFile.
Expected<std::pair<std::string, HostTensor>> readValueFile(const std::filesystem::path& file, const HostTensor& like);
// A graph input as the model file declares it (initializers excluded): a sequence or a tensor, either
// maybe optional, its element type, and whether every dimension of its declared shape is a number.
struct DeclaredInput {
    std::string name;
    bool optional = false;
    bool sequence = false;
    DType dtype = DType::Undefined;
    bool fixedShape = false;
};
Expected<std::vector<DeclaredInput>> declaredInputs(const std::filesystem::path& modelFile);

// Reads the files given for the graph inputs of ONNX model `modelFile` (input name -> .pb file: an
// OptionalProto for an optional input, a SequenceProto for a sequence, else a TensorProto) and adds to `bindings` what they fix: a
// tensor input whose declared shape has an open dimension takes the file's shape (unless `bindings`
// gives it one) and, when it holds at most kMostGivenValues integers (or bools), its values; a
// sequence input the bytes and shapes of its elements. An empty sequence takes the declared element type. Errors
// name the input or the file.
constexpr std::int64_t kMostGivenValues = 4096;
Expected<std::map<std::string, HostTensor>> readGivenInputs(const std::filesystem::path& modelFile,
    const std::vector<std::pair<std::string, std::filesystem::path>>& files, ShapeBindings& bindings);

// Graph inputs given as files (input name -> .pb file) for the model `spec` names: an ONNX model's
// through readGivenInputs (adding to `bindings` what they fix), a JSON graph's or an example's as
// TensorProto files; an allocation problem (.csv) has no graph inputs to give. No files: none.
Expected<std::map<std::string, HostTensor>> readInputFiles(const std::string& spec,
    const std::vector<std::pair<std::string, std::filesystem::path>>& files, ShapeBindings& bindings);

// Writes `tensor` as a TensorProto named `name` with raw_data (a sequence: a SequenceProto of them;
// an optional: an OptionalProto holding either, or nothing).
Status writeTensorFile(const std::filesystem::path& file, const std::string& name, const HostTensor& tensor);

} // namespace core
