// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Swap: send a tensor to host memory during a long idle gap and bring it back before its next read.
// - Rewrite: after the read at step a, a SwapOut op copies T to T.host (host memory: no device
//   buffer); just before the read at step b, a SwapIn op copies T.host to T.swapin, and every read
//   of T from step b on reads T.swapin. T is therefore two device buffers, before and after its trip,
//   and is never read while it is away.
// - Cost: each direction moves size / host link bandwidth seconds (device profile). The copies overlap
//   the compute of the ops in the gap (roofline time); only what does not fit shows as a stall,
//   reported as extra time. Swapped bytes are reported once per tensor.
// - Choice: greedy, the tensor whose swap lowers the lower bound most, until none does (at most
//   StrategyOptions::maxRewrites tensors).
// Limits: one trip per tensor; no graph inputs or outputs; the host link is assumed idle otherwise.

#include "strategies/strategy.h"

namespace core {

class SwapStrategy : public Strategy {
public:
    std::string_view name() const override { return "swap"; }
    std::string_view description() const override { return "move long-idle tensors to host memory and back"; }
    Expected<Transformed> apply(Transformed state, const StrategyOptions& options) const override;
};

} // namespace core
