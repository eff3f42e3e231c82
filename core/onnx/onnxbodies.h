// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to core/onnx: the graphs of the control-flow ops that stay ops (an If whose condition
// import did not know, Loop, Scan, SequenceMap) as graphs of their own (Op::bodies), so their memory
// is planned inside the op (liveness/lifetimes.h: NestedPlan). Each graph's values are sized by
// inferring it once (inferSubgraphValues: a Loop's or Scan's body for one iteration), nested graphs
// in turn, down to kMaxSubgraphDepth.

#include "graph/graph.h"
#include "onnx/onnxvalue.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace core::onnxdetail {

// Sets Op::bodies on every default-domain If, Loop, Scan and SequenceMap op of `g`, the graph import
// made of `model`'s top-level nodes (ops named by opNameOf), from `facts` (the top-level values).
// An op one of whose graphs holds a value without a known size, or nests deeper than
// kMaxSubgraphDepth, keeps no bodies and gets a note naming the op, the graph and the value.
void attachBodies(Graph& g, const onnx::ModelProto& model, const std::unordered_map<std::string, ValueFacts>& facts,
    std::vector<std::string>& notes);

} // namespace core::onnxdetail
