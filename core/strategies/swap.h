// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Swap: send a tensor to host memory during a long idle gap and bring it back before its next read.
// - Rewrite: after the read at step a, a SwapOut op copies T to T.host (host memory: no device
//   buffer); a SwapIn op copies T.host to T.swapin before the read at step b, and every read of T
//   from step b on reads T.swapin. T is therefore two device buffers, before and after its trip,
//   and is never read while it is away.
// - Prefetch (StrategyOptions::swapPrefetch): the SwapIn is issued as many ops ahead of the read
//   as its copy needs to hide behind their compute, but never so early that holding T.swapin
//   raises any step above the peak of the just-in-time trip.
// - Cost: each direction moves size / host link bandwidth seconds (device profile) on one copy
//   link. The SwapOut copy starts when compute passes the SwapOut, the SwapIn copy when compute
//   passes the SwapIn and the link is free; the read waits for it. That wait is the stall,
//   reported as extra time. Swapped bytes are reported once per tensor.
// - Choice: greedy, the tensor whose swap lowers the lower bound most, until none does (at most
//   StrategyOptions::maxRewrites tensors).
// Limits: one trip per tensor; no graph inputs or outputs; the host link is assumed idle otherwise;
// a reuse of T's buffer right after the SwapOut (the executor waits for the copy first) is not costed.

#include "strategies/strategy.h"

namespace core {

class SwapStrategy : public Strategy {
public:
    std::string_view name() const override { return "swap"; }
    std::string_view description() const override { return "move long-idle tensors to host memory and back"; }
    Expected<Transformed> apply(Transformed state, const StrategyOptions& options) const override;
};

} // namespace core
