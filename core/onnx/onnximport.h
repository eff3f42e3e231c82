// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "graph/graph.h"

#include <filesystem>

namespace core {

// Loads an ONNX model: ops in model order, every tensor with dtype, shape and byte size.
// Runs ONNX shape inference, folds the shape arithmetic exporters leave in the graph, and applies
// MemPlan's own shape rules for ops the ONNX library does not know (opset > 17). Initializers and
// Constant outputs are weights (sizes read without loading external data). If/Loop/Scan become one op
// whose `captured` lists the outer tensors their subgraphs read. Data-dependent shapes get an upper
// bound and Tensor::estimated. Fails with a message naming the file and the tensor/op when the file
// is missing, not ONNX, corrupt, or a tensor needed for planning stays unsized (with a --dim hint).
Expected<Graph> importOnnx(const std::filesystem::path& file, const ShapeBindings& bindings = {});

// What an ONNX model's declared graph inputs leave open, for a user to fix (ShapeBindings): its
// symbolic dimension names in order of first use, and each tensor input (initializers and sequences
// aside) with a dimension that is neither a number nor a name, or with no shape at all; and the
// name of every graph input (initializers aside), whose contents a file may give (readGivenInputs).
struct OpenInputs {
    struct Input {
        std::string name;
        std::vector<std::string> dims; // as declared: "3", "batch", "?"; empty when no shape is declared
        bool shapeDeclared = false;
    };
    std::vector<std::string> symbols;
    std::vector<Input> inputs;
    std::vector<std::string> names;
    std::vector<Input> declared; // every tensor input (initializers aside) as declared: where each symbol sits
    bool empty() const { return symbols.empty() && inputs.empty() && names.empty(); }
};
Expected<OpenInputs> openInputs(const std::filesystem::path& file);

// Writes a graph as an ONNX model (ops keep their type and names; weights become initializers
// filled with zeros, but for the small integer values import kept). Tensors an op writes that are
// persistent (outside the arena) are named in the model's metadata under kPersistentKey, which
// importOnnx reads back. Used to export the built-in examples and transformed graphs.
inline constexpr std::string_view kPersistentKey = "memplan.persistent";
Status exportOnnx(const Graph& graph, const std::filesystem::path& file);

} // namespace core
