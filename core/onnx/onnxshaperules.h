// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to core/onnx: MemPlan's own output-shape rules.
// - They cover ops the ONNX library (which knows opsets <= 17) gets wrong or does not know:
//   Reduce* / Split / Pad / Resize in their opset-18+ signatures, ops new in 18+ (Gelu, Col2Im,
//   GroupNormalization, ...), and they fill gaps where ONNX inference produced nothing.
// - Data-dependent ops (NonZero, NonMaxSuppression, Unique, Compress, TopK without a constant k)
//   get an upper bound with ValueFacts::estimated set.
// - Sequences get a byte estimate (ValueFacts::bytes), control-flow ops take their output shapes
//   from their subgraphs' outputs.
// Limits: rules read constant inputs only through ValueFacts::value (the folder supplies them);
// an output whose inputs are unknown stays unknown (kind Unknown).

#include "onnx/onnxvalue.h"

#include <string>
#include <vector>

namespace core::onnxdetail {

struct RuleInput {
    const onnx::NodeProto* node = nullptr;
    int opset = 0;                             // the model's opset for the node's domain
    std::vector<const ValueFacts*> inputs;     // aligned with node->input(), nullptr when absent
    // Output facts of each graph attribute (If: then/else; Loop/Scan: body), in attribute order.
    std::vector<std::vector<ValueFacts>> subgraphOutputs;
    // A Loop's outputs from inferring its body per iteration (unrolledLoopOutputs); empty when not.
    std::vector<ValueFacts> unrolled;
    // Second phase: allow guesses that later facts could have made exact (TopK with unknown k sized
    // by its axis, a Loop with unknown trip count sized for one iteration, sequences by their inputs).
    bool allowGuesses = false;
};

// True when MemPlan's rule replaces ONNX inference for this node: the library has no schema for
// it, or the model's opset gives the op a signature newer than the library's (see file comment).
bool ruleOwnsOp(const std::string& domain, const std::string& opType, int opset, bool libraryHasSchema);

// One ValueFacts per node output; kind Unknown where the rule cannot tell. Never throws.
std::vector<ValueFacts> applyShapeRule(const RuleInput& in);

// Rule families, one per source file. Each returns false when it does not handle the op type.
bool applyLayoutRule(const RuleInput& in, std::vector<ValueFacts>& out);  // onnxlayoutrules.cpp
bool applyComputeRule(const RuleInput& in, std::vector<ValueFacts>& out); // onnxshaperules.cpp
bool applyControlRule(const RuleInput& in, std::vector<ValueFacts>& out); // onnxcontrolrules.cpp
bool applySignalRule(const RuleInput& in, std::vector<ValueFacts>& out);  // onnxsignalrules.cpp

// Small helpers shared by the rule files.
ValueFacts tensorFacts(int elemType, Dims dims, bool estimated = false);
int elemTypeOf(const RuleInput& in, std::size_t i);
const ValueFacts* inputAt(const RuleInput& in, std::size_t i); // nullptr when absent
bool rankKnown(const ValueFacts* f);

} // namespace core::onnxdetail
