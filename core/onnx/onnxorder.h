// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to core/onnx: node order. ONNX requires the nodes of every graph in an order where each
// node follows the producers of what it reads; graph-editing tools do not always keep it, and
// runtimes sort such files rather than refuse them.

#include "graph/graph.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace core::onnxdetail {

// Puts the nodes of the model's graph, and of every subgraph, in such an order. The file's order
// stays wherever it already is one: the earliest ready node always goes next. A subgraph's reads
// of outer values count as reads of the node that holds it. Returns the first read that came
// before its producer ("node 11 'x' (Expand) reads 'c', which node 33 'k' (Constant) makes"),
// empty when every graph was in order; an InvalidModel error naming the nodes of a cycle when no
// order exists.
Expected<std::string> sortNodes(onnx::ModelProto& model, const std::string& file);

} // namespace core::onnxdetail
