// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Simplify: the graph rewrites a runtime makes when it loads a model for inference, so the plan
// holds only the tensors a runtime's kernels write. Every rewrite keeps the value of every tensor
// that stays (graph outputs keep their names); the ops are repeated until none applies:
// - Identity, Dropout (inference: no training_mode input or a constant false one; its mask unread),
//   Cast and CastLike to the type they read, and Reshape/Flatten/Squeeze/Unsqueeze whose output has
//   its input's shape are removed: their readers read the input.
// - A chain of views (Reshape, Flatten, Squeeze, Unsqueeze) becomes one Reshape of the chain's input
//   to the last shape (a new int64 shape constant), or nothing when that is the input's shape.
// - Transpose of a Transpose: removed when the permutations compose to the identity (its readers read
//   the first one's input), else one Transpose with the composed permutation.
// - A Transpose is pushed down through an elementwise op (unary, or n-ary when every operand is
//   transposed the same way or holds one element) or a Concat (every input transposed the same way;
//   the axis follows) whose only reader it is, and hoisted above such an op whose only reader is a
//   Transpose when that removes more Transposes than it adds
//   (an operand already transposed by the inverse loses its Transpose; another operand gets one).
//   Pushed and hoisted Transposes meet their inverses and cancel: the TensorFlow NHWC sandwich
//   Transpose -> Conv -> Transpose -> Relu -> Transpose -> Conv keeps no Transpose between the Convs.
// - Ops whose inputs are all weights (float constant subgraphs: a transposed or reshaped weight, an
//   expanded class token) write weights: their outputs leave the arena for the weights region, as a
//   runtime folds them into initializers at load. (The op still runs, to compute the value once; the
//   ONNX import already folds integer shape arithmetic.) Not on a training graph (one with a backward
//   phase): its weights change every step.
// Runs first in the pipeline, on the model as loaded. Limits: ops of other domains, with subgraphs,
// or reading or writing tensors of unknown or bounded (data-dependent) size are left alone;
// Transposes pass only elementwise ops and Concat (not Resize, Softmax, pooling or reductions); an
// operand of a broadcasting op must have the output's rank or hold one element.

#include "strategies/strategy.h"

namespace core {

class SimplifyStrategy : public Strategy {
public:
    std::string_view name() const override { return "simplify"; }
    std::string_view description() const override
    {
        return "remove Identity, Dropout, no-op Cast and view chains, cancel Transpose pairs, fold constant subgraphs";
    }
    Expected<Transformed> apply(Transformed state, const StrategyOptions& options) const override;
};

} // namespace core
