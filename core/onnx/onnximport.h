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

// Writes a graph as an ONNX model (ops keep their type and names; weights become initializers
// filled with zeros). Used to export the built-in examples.
Status exportOnnx(const Graph& graph, const std::filesystem::path& file);

} // namespace core
