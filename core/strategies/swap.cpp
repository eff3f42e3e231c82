// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/swap.h"

#include "cost/opcost.h"
#include "strategies/gaps.h"
#include "util/format.h"

#include <algorithm>
#include <cstdio>

namespace core {

namespace {
// At least two ops between the two reads: one for SwapOut, one for the data to be away.
constexpr Step kMinGap = 3;

std::string milliseconds(double seconds)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
    return text;
}

std::optional<GapRewrite> swapGap(const Transformed& current, const IdleGap& gap, const DeviceProfile& device)
{
    if (device.hostLinkBandwidth <= 0)
        return std::nullopt;
    GapRewrite result;
    result.state = current;
    auto& state = result.state;
    const auto t = gap.tensor;
    const auto name = state.graph.tensors[t].name;
    double gapSeconds = 0; // compute the copies can hide behind: the ops strictly inside the gap
    for (Step s = gap.from + 1; s < gap.to; ++s)
        gapSeconds += opSeconds(state.graph, state.graph.ops[state.schedule.order[s]], device);
    const auto host = state.addCopyTensor(t, name + ".host");
    state.onHost[host] = true;
    const auto back = state.addCopyTensor(t, name + ".swapin");
    // Redirect the reads from step `to` on, then insert SwapIn at `to` and SwapOut right after `from`.
    for (Step s = gap.to; s < state.schedule.steps(); ++s)
        replaceTensor(state.graph.ops[state.schedule.order[s]], t, back); // a fused op's body reads `back` too
    insertOp(state, Op { name + ".swap_in", "SwapIn", "", {}, { host }, { back }, {}, {} }, gap.to);
    insertOp(state, Op { name + ".swap_out", "SwapOut", "", {}, { t }, { host }, {}, {} }, gap.from + 1);
    const double transfer = static_cast<double>(gap.size) / device.hostLinkBandwidth;
    const double stall = std::max(0.0, 2 * transfer - gapSeconds);
    result.swappedBytes = gap.size;
    result.extraSeconds = stall;
    result.detail = name + ": " + formatBytes(gap.size) + " to host after step " + std::to_string(gap.from) + ", back before step "
        + std::to_string(gap.to) + "; transfer 2 × " + milliseconds(transfer) + " over a "
        + milliseconds(gapSeconds) + " gap, stall " + milliseconds(stall);
    return result;
}
} // namespace

Expected<Transformed> SwapStrategy::apply(Transformed state, const StrategyOptions& options) const
{
    StrategyReport report;
    report.name = std::string(name());
    const auto& device = options.device;
    state = greedyGapRewrites(
        std::move(state), kMinGap, [&](const Transformed& s, const IdleGap& gap) { return swapGap(s, gap, device); }, options,
        report);
    if (report.details.empty())
        report.details.push_back("no swap lowers the peak");
    state.reports.push_back(std::move(report));
    return state;
}

} // namespace core
