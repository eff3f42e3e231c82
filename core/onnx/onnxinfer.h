// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to core/onnx: shape and type inference for a whole model.
//
//   declared types ──► ONNX InferShapes (working copy) ──► fold constants ──► own shape rules ──┐
//          ▲                                                                                  │
//          └────────── folded values as initializers, known shapes as value_info ◄────────────┘
//
// Rounds repeat until nothing new is learnt; a second phase then allows guesses (see RuleInput).
// The working copy never holds large initializer data, so a round costs O(nodes), not O(weights).
// Ops whose ONNX schema is missing or too old (ruleOwnsOp) are left out of the working copy and
// sized by MemPlan's rules only.

#include "onnx/onnxvalue.h"

#include <functional>
#include <string>
#include <utility>
#include <unordered_map>
#include <vector>

namespace core::onnxdetail {

struct InferenceResult {
    std::unordered_map<std::string, ValueFacts> facts; // every top-level value
    std::vector<bool> folded;                          // per top-level node: evaluated at import
    std::vector<bool> owned;                           // per top-level node: sized by MemPlan's rules
    int rounds = 0;
    std::vector<std::string> notes;
    // Values whose shape the file states (value_info, graph outputs) but whose producer computes
    // another from its inputs: the file's stored shapes were left from other input shapes.
    struct StaleShape {
        std::string name;
        Dims stated, computed;
    };
    std::vector<StaleShape> stale;
};

// `model` holds the graph without initializers; `initializers` are the model's initializers (read
// for dims and, when small, values). `names` lists every top-level value name. `depth` counts the
// subgraphs around `model`'s graph (0: the model itself); see inferSubgraphOutputs. `given`:
// facts of graph inputs that a type cannot carry (a sequence's bytes and length, as a Loop's
// carried sequence enters its body or a file gives it; a value given by file, ConstValue::given).
InferenceResult inferModel(const onnx::ModelProto& model, const std::vector<const onnx::TensorProto*>& initializers,
                           const std::vector<std::string>& names, int depth = 0,
                           const std::unordered_map<std::string, ValueFacts>& given = {});

// Subgraphs nested deeper than this keep the output types ONNX inference gives them.
constexpr int kMaxSubgraphDepth = 4;

// What the enclosing scope knows about a value it defines; nullptr when it does not define it.
using OuterLookup = std::function<const ValueFacts*(const std::string&)>;

// Output facts of each subgraph of an If (then, else), Loop or Scan (body), inferred by inferModel
// over the subgraph: its formal inputs take their facts from the node's `inputs` (Loop: iteration
// number, condition, carried values as they enter; Scan-9+: states and one slice of each scanned
// input), the outer values it reads from `outer` (constants with their values). Outputs computed
// from an estimated outer value are estimated. `depth` is the depth of the graph holding `node`.
std::vector<std::vector<ValueFacts>> inferSubgraphOutputs(const onnx::ModelProto& model, const onnx::NodeProto& node,
                                                          int opset, const std::vector<const ValueFacts*>& inputs,
                                                          const OuterLookup& outer, int depth);

// Every value of one subgraph as inferSubgraphOutputs infers it (estimated: computed from an
// estimated outer value too).
struct BodyFacts {
    std::unordered_map<std::string, ValueFacts> facts;
};
// Per graph of the node (If: then, else; Loop, Scan, SequenceMap: body): its attribute and the facts
// of all its values, for one iteration.
std::vector<std::pair<const onnx::AttributeProto*, BodyFacts>> inferSubgraphValues(const onnx::ModelProto& model,
    const onnx::NodeProto& node, int opset, const std::vector<const ValueFacts*>& inputs, const OuterLookup& outer, int depth);

// A Loop's outputs from inferring its body once per iteration, each iteration seeing its number
// and the carried values the one before produced: exact where one body inference with an unknown
// iteration number is not (a list growing by i + 1 elements in iteration i). Only for a Loop of the
// model's own graph (depth 0: nested Loops keep the one-inference rule, so the cost stays linear)
// with a trip count known at import of 1 to kMostUnrolledIterations, at most kMostUnrolledNodes
// body nodes inferred in all, a condition that enters true, and a body whose condition result import
// can tell in every iteration (a false one ends the loop there); empty otherwise, or when a result
// is not fully known or a scan output changes shape between iterations.
constexpr std::int64_t kMostUnrolledIterations = 32;
constexpr std::int64_t kMostUnrolledNodes = 4096;
std::vector<ValueFacts> unrolledLoopOutputs(const onnx::ModelProto& model, const onnx::NodeProto& node,
                                            const std::vector<const ValueFacts*>& inputs, const OuterLookup& outer, int depth);

} // namespace core::onnxdetail
