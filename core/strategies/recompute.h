// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Recompute: drop a tensor after an early read and compute it again just before a later read.
// - Rewrite: for a tensor T idle between reads at steps a and b, clone T's producer right before b,
//   and every read of T from b on reads the clone's output (T.recompute). A clone's input that is
//   not resident at b (dead or not yet needed again) is itself recomputed, up to kMaxChain ops; weights
//   and graph inputs are read as they are (a graph input then stays resident until b).
// - Cost: the clones' FLOPs and roofline time on the device profile.
// - Choice: greedy, the tensor whose recomputation lowers the lower bound most, until none does.
// Limits: no random ops (Dropout, Random*) are recomputed; one recomputation per tensor and gap.

#include "strategies/strategy.h"

namespace core {

class RecomputeStrategy : public Strategy {
public:
    static constexpr int kMaxChain = 6; // ops cloned for one tensor at most
    std::string_view name() const override { return "recompute"; }
    std::string_view description() const override { return "drop long-lived tensors and recompute them before a later read"; }
    Expected<Transformed> apply(Transformed state, const StrategyOptions& options) const override;
};

} // namespace core
