// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to core/onnx: what a runtime folds away when it loads a model, done on the imported Graph
// so the schedule holds only ops that run.

#include "graph/graph.h"

#include <vector>

namespace core::onnxdetail {

struct LoadFolds {
    int aliases = 0;   // Identity ops that only renamed a weight
    int computed = 0;  // ops whose outputs became constant weights
    int constants = 0; // Constant ops: their outputs are weights already
    int unread = 0;    // ops (Constants included) whose outputs only removed ops read
};

// Removes, by op index (ops in node order):
// - `alias` ops (Identity of a weight, one input, one output): each reader reads the weight itself. An
//   alias a subgraph captures stays (the subgraph reads it by name);
// - `computed` ops: their outputs are weights whose contents are known at load (Constant nodes, and
//   ops the caller made weights holding the values import evaluated, Tensor::values); readers read
//   those weights;
// then every op whose outputs only removed ops read (Constants, float steps of shape arithmetic),
// and the weights and activations only removed ops read or wrote. What the model itself leaves
// unread stays. Tensor indices are renumbered; names are kept.
LoadFolds foldAtLoad(Graph& g, const std::vector<bool>& alias, const std::vector<bool>& computed);

} // namespace core::onnxdetail
