// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "graph/graph.h"

#include <filesystem>
#include <string>

namespace core {

// A small hand-writable graph format for teaching:
// { "name": "tiny", "tensors": [ { "name": "x", "dtype": "float32", "shape": [1, 3], "kind": "input" },
//                                { "name": "b", "bytes": 512 } ],            // size without a shape
//   "ops": [ { "name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["y"] } ],
//   "inputs": ["x"], "outputs": ["y"] }
// Tensors named by ops but not listed are activations whose size must come from "bytes" or "shape";
// "dims" in a shape may be a symbolic name bound by ShapeBindings. Errors name the file and the entry.
Expected<Graph> parseJsonGraph(const std::string& text, const std::string& source, const ShapeBindings& bindings = {});
Expected<Graph> importJsonGraph(const std::filesystem::path& file, const ShapeBindings& bindings = {});
std::string exportJsonGraph(const Graph& graph);

} // namespace core
