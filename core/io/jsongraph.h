// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "graph/graph.h"

#include <filesystem>
#include <string>

namespace core {

// A small hand-writable graph format for teaching:
// { "name": "tiny", "tensors": [ { "name": "x", "dtype": "float32", "shape": ["batch", 3], "kind": "input" },
//                                { "name": "h", "bytes": 512 },            // size without a shape
//                                { "name": "y", "dtype": "float32", "shape": ["batch", 3] } ],
//   "ops": [ { "name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["h"] },
//            { "name": "sig", "type": "Sigmoid", "inputs": ["h"], "outputs": ["y"] } ],
//   "inputs": ["x"], "outputs": ["y"] }
// Every tensor an op names must be listed, with "bytes" or "dtype" + "shape" (a dimension is an integer,
// null for unknown, or a symbolic name bound by ShapeBindings::dims); "bytes" wins over dtype × shape.
// "kind" defaults to activation, or input/output for tensors in the "inputs"/"outputs" lists. An op's
// "inputs" and "outputs" may hold "" for an optional one left out, as in ONNX: ["x", "", "max"].
// Op "attributes": name -> integer, float, string, or list of numbers or of strings (a list stays
// a list even with one element). "opsets": the ONNX operator set per domain the ops follow, as in
// {"": 11} (an export to ONNX writes them). A tensor may also state "sequence", "list_exact" and
// "optional" (true or false, as Tensor's flags), "values" (the contents of a small integer constant
// or of a graph input given by file) and "items" (a sequence input's element shapes). A control-flow
// op's graphs (Op::bodies) are its "bodies": [{"attribute": "then_branch", "graph": {...}}], each
// graph in this format (ops may be empty; ONNX's shape rules are not checked in them, since their ops
// list only the inputs the graph defines). Errors name the file, line and entry.
// exportJsonGraph writes this format; parsing its output gives back the same graph.
Expected<Graph> parseJsonGraph(const std::string& text, const std::string& source, const ShapeBindings& bindings = {});
Expected<Graph> importJsonGraph(const std::filesystem::path& file, const ShapeBindings& bindings = {});
std::string exportJsonGraph(const Graph& graph);

} // namespace core
