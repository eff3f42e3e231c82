// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Training mode: the forward schedule followed by its backward pass, so lifetimes are those of one
// training step (forward activations stay alive until the gradient op that reads them).
// - Which tensors get a gradient: float tensors that depend on a float weight through differentiable
//   inputs and from which a loss output is reachable. Graph inputs (data) and integer/bool tensors
//   (shapes, indices, masks) get none; nor do setting inputs (Resize scales, Clip bounds, BatchNorm
//   running statistics, ...), one-element float weights (constants such as 1/sqrt(d)) and weights of
//   unknown size (both noted). Ops such as Shape, ArgMax, comparisons and rounding pass no gradient.
// - After the forward ops: one loss-gradient seed ("loss.grad", type LossGrad) that reads the loss
//   outputs and writes "<output>.grad" for each. Then, for each forward op in reverse schedule order
//   that has a gradient on an output and an input that needs one: "<op>.grad" (type "<Type>Grad")
//   reading the gradients of its outputs plus the forward tensors its gradient needs (gradientNeeds),
//   writing one gradient per distinct input that needs one, same dtype and shape.
// - A tensor whose gradient comes from several ops gets one accumulation ("<t>.grad.sum", type Sum)
//   over the partial gradients ("<t>.grad@<op>") right after the last of them; otherwise the one
//   gradient is "<t>.grad" directly.
// - Weight gradients are graph outputs (kind output): they live to the end, for the optimizer step
//   (or persistent, outside the arena: TrainingOptions::weightGradientsInArena).
// - Gradient ops and the seed are in domain kTrainingDomain (the CPU executor runs them with its
//   synthetic kernel); accumulations are ordinary Sum ops.
// - Dropout without a mask output gets one (bool, its input's shape): training keeps the mask.
// Limits: one loss over all float outputs that depend on weights (or TrainingOptions::lossOutputs);
// no optimizer state; gradient ops are costed by opcost's default rule (1 FLOP per output element),
// not their real work; ops with subgraphs (If/Loop/Scan) get a conservative all-inputs rule.

#include "io/workload.h"

#include <string>
#include <vector>

namespace core {

inline constexpr const char* kTrainingDomain = "ai.memplan.training";
inline constexpr const char* kLossSeedType = "LossGrad";

struct TrainingOptions {
    std::vector<std::string> lossOutputs; // graph output names the loss reads; empty: every eligible output
    // true: weight gradients are graph outputs in the arena (born when computed, alive to the end);
    // false: persistent state in their own region outside the arena, as a framework's preallocated
    // gradient buffers, so the arena shows what checkpointing can change (activations and their gradients).
    bool weightGradientsInArena = true;
};

// What the gradient of one op reads besides the gradients of its outputs.
struct GradientNeeds {
    std::vector<int> inputs;  // input slots (0-based) whose forward values it reads
    std::vector<int> outputs; // output slots whose forward values it reads
    bool known = true;        // false: no rule for the op type; reads every input (conservative)
};

// The op type's row of the backward-pass rules (strategies/backwardrules.cpp), limited to the slots
// the op has: Conv/ConvTranspose/Gemm/MatMul read X and W; Relu/Sigmoid/Tanh/Softmax/Exp/Sqrt read
// their output; Gelu/Erf/LeakyRelu/Elu/Log/... read their input; normalizations read X and the scale;
// MaxPool reads X and Y; Mul/Div/Pow/Min/Max read both inputs; Gather reads its indices, Where its
// condition, Dropout its mask; Add/Sub/Concat/Reshape/Transpose/pooling by average/... read nothing.
GradientNeeds gradientNeeds(const Op& op);

// True for float dtypes (the ones that carry gradients).
bool isDifferentiableDType(DType dtype);

// The workload with the backward pass appended (schedule: forward, seed, backward), lifetimes and
// problem rebuilt with the same alignment. Errors: no graph (allocation problem), a graph already in
// training mode or captured with its backward pass (an op of phase backward), an unknown name in
// lossOutputs, nothing to differentiate (no float output depends on a weight).
Expected<Workload> appendBackwardPass(const Workload& workload, const TrainingOptions& options);

// The first backward step: on a captured graph (an op has phase "backward", graph/capture.h) the step
// of the first such op, else the step of the loss-gradient seed; schedule.steps() when there is none.
Step backwardStart(const Graph& graph, const Schedule& schedule);

// A captured graph's gradients in the arena (--grads-in-arena): every tensor of category gradient and
// kind persistent (version tokens aside) becomes a graph output of kind output, so it is born at the
// op that computes it and lives to the end of the step, as a framework keeps `.grad`; the problem is
// rebuilt on the same schedule, alignment and workspaces, and a note says how many moved.
// Errors: no graph, no such gradient.
Expected<Workload> gradientsInArena(const Workload& workload);

} // namespace core
