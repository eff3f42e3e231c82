// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Recompute: drop a tensor after an early read and compute it again just before a later read.
// - Rewrite: for a tensor T idle between reads at steps a and b, clone T's producer right before b,
//   and every read of T from b on reads the clone's output (T.recompute). A clone's input that is
//   not resident at b (dead or not yet needed again) is itself recomputed, up to kMaxChain ops; weights
//   and graph inputs are read as they are (a graph input then stays resident until b).
// - Cost: the clones' FLOPs and roofline time on the device profile.
// - Choice (StrategyOptions::recomputePolicy):
//   greedy: the tensor whose recomputation lowers the lower bound most, until none does;
//   checkpoint (training graphs, see training.h): the outputs of every k-th forward op stay (default
//   k = round(sqrt(forward ops))), or of the forward steps StrategyOptions::checkpointSteps names; the outputs of each segment between two checkpoints that the backward pass
//   reads are dropped and the whole segment re-runs, from the checkpoint before it, just before the first
//   backward read of any of them. Peak ~ n/k checkpoints + one segment; extra work ~ one forward pass.
//   Both policies use the same rewrite (clone producers before a step, redirect later reads).
//   The forward ops after the last checkpoint are not dropped (their gradients run first).
// Limits: no random ops (Dropout, Random*) or gradient ops are recomputed (under checkpoint their outputs
// stay like checkpoints); greedy: one recomputation per tensor and gap, chains of at most kMaxChain ops.

#include "strategies/strategy.h"

namespace core {

// True for an op the recompute rewrite never re-runs: random ops, ops with subgraph captures, swaps,
// gradient ops, ops that update a tensor in place (a version token, graph/capture.h).
bool opCannotRerun(const Graph& graph, const Op& op);

class RecomputeStrategy : public Strategy {
public:
    static constexpr int kMaxChain = 6; // greedy: ops cloned for one tensor at most
    std::string_view name() const override { return "recompute"; }
    std::string_view description() const override { return "drop long-lived tensors and recompute them before a later read"; }
    Expected<Transformed> apply(Transformed state, const StrategyOptions& options) const override;
};

} // namespace core
