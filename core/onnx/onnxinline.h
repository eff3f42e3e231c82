// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to core/onnx: an If whose condition import knows, replaced in the model by the branch it
// takes, so inference, folding, planning, the executors and export see its nodes as ordinary ones.
//
// - The branch's nodes take the If's place in the node list, named "<If>/<node>" (a node without a
//   name by its op type and position in the branch); every value the branch defines is renamed
//   "<If>/<value>", except that a branch output a branch node computes takes the name of the If's
//   output (so a graph output keeps its name); an output the branch reads from outside or holds as
//   an initializer becomes an Identity of it.
// - The branch's initializers go to `initializers` (the graph's own, or the list import keeps
//   outside the graph), its sparse initializers and value_info to the graph's.
// - Names inside graphs nested in the branch follow the renaming.
// A prefix that would clash with a name of the model gets "_2", "_3", ... appended.

#include "graph/graph.h"
#include "onnx/onnxvalue.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace core::onnxdetail {

// Names every unnamed top-level node as import names it (opNameOf: "<op type>_<position>"), so
// that inlining, which moves nodes, keeps the names of the ops around it.
void nameNodes(onnx::GraphProto& graph);

// Replaces top-level If node `name` by its then- (else-) branch. False, the model unchanged, when
// there is no such If or the branch's outputs do not match the If's.
bool inlineIf(onnx::ModelProto& model, const std::string& name, bool thenBranch,
    google::protobuf::RepeatedPtrField<onnx::TensorProto>& initializers);

// A top-level If whose condition `facts` know (one value, not an estimate), the branch it takes, and
// the graph inputs given by file (ConstValue::given) the condition was computed from (sorted; empty
// when it is a constant). Ifs without a name are left out: nameNodes names them first.
struct KnownIf {
    std::string name;
    bool thenBranch = true;
    std::vector<std::string> given;
};
std::vector<KnownIf> knownIfs(const onnx::GraphProto& graph, const std::unordered_map<std::string, ValueFacts>& facts);

// The Ifs import inlined (Graph::inlinedIfs), inlined again in the same order in a model read
// from the same file: nameNodes, then inlineIf for each. An If it cannot find is an error naming it.
Status reinlineIfs(onnx::ModelProto& model, const Graph& graph, const std::string& file);

} // namespace core::onnxdetail
