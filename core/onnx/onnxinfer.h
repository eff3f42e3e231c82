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

#include <string>
#include <unordered_map>
#include <vector>

namespace core::onnxdetail {

struct InferenceResult {
    std::unordered_map<std::string, ValueFacts> facts; // every top-level value
    std::vector<bool> folded;                          // per top-level node: evaluated at import
    std::vector<bool> owned;                           // per top-level node: sized by MemPlan's rules
    int rounds = 0;
    std::vector<std::string> notes;
};

// `model` holds the graph without initializers; `initializers` are the model's initializers (read
// for dims and, when small, values). `names` lists every top-level value name.
InferenceResult inferModel(const onnx::ModelProto& model, const std::vector<const onnx::TensorProto*>& initializers,
                           const std::vector<std::string>& names);

} // namespace core::onnxdetail
