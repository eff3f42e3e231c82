// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Shared by recompute and swap: idle gaps of tensors, and the greedy that applies the rewrite which
// lowers the lower bound most, one tensor at a time.

#include "strategies/strategy.h"

#include <functional>
#include <optional>

namespace core {

// A tensor that is resident but unused between two reads: read (or produced) at `from`, next read at `to`.
struct IdleGap {
    TensorIndex tensor = -1;
    Step from = 0;
    Step to = 0;
    Bytes size = 0;
};

// Per eligible tensor (activation, not a graph input or output, not on host or sharing a buffer,
// known size) its longest gap of at least `minGap` steps; sorted by size × gap length, largest first.
std::vector<IdleGap> idleGaps(const Transformed& state, Step minGap);

// A rewrite of one gap: the new state plus its cost, or nullopt when the gap cannot be rewritten.
struct GapRewrite {
    Transformed state;
    double extraFlops = 0;
    Bytes swappedBytes = 0;
    double transferSeconds = 0;
    double extraSeconds = 0;
    std::string detail;
};
using GapRewriter = std::function<std::optional<GapRewrite>(const Transformed&, const IdleGap&)>;

// Repeats up to options.maxRewrites times: try the first options.candidates gaps, keep the rewrite
// with the lowest lower bound if it is below the current one, else stop. Accumulates costs in `report`.
Transformed greedyGapRewrites(Transformed state, Step minGap, const GapRewriter& rewrite, const StrategyOptions& options,
    StrategyReport& report);

} // namespace core
