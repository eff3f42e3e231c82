// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/swap.h"

#include "cost/opcost.h"
#include "planners/metrics.h"
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

// Step at which a SwapIn of `gap` should be issued in `state` (the just-in-time rewrite: SwapOut at
// gap.from + 1, SwapIn at gap.to + 1, first read after the trip at gap.to + 2), and the stall that remains.
// Timeline on the device profile: the SwapOut copy starts when compute reaches it; the SwapIn copy
// starts when compute reaches the SwapIn and the copy link is free, and the read waits for its end.
// The prefetch is as late as hides the transfer (or as early as the link allows), and never earlier
// than keeps every step's live bytes, with the copy resident, at or under the just-in-time peak
// (`live`: the just-in-time rewrite's live bytes per step; empty keeps the SwapIn just in time).
struct Prefetch {
    Step swapIn = 0;
    double stall = 0;
};
Prefetch planPrefetch(const Transformed& state, const IdleGap& gap, double transfer, const std::vector<Bytes>& live, Bytes peak,
    Bytes alignedSize, const DeviceProfile& device)
{
    const Step out = gap.from + 1, jit = gap.to + 1;
    std::vector<double> startTime(std::size_t(jit) + 1, 0.0); // compute time before each step
    for (Step s = 0; s < jit; ++s)
        startTime[std::size_t(s) + 1] = startTime[std::size_t(s)] + opSeconds(state.graph, state.graph.ops[state.schedule.order[s]], device);
    const double readTime = startTime[std::size_t(jit)]; // the SwapIn itself takes no compute
    const double outEnd = startTime[std::size_t(out)] + transfer;
    const double target = std::max(outEnd, readTime - transfer);
    Step byTime = out + 1;
    while (byTime < jit && startTime[std::size_t(byTime) + 1] <= target)
        ++byTime;
    Step byMemory = jit;
    while (byMemory > out + 1 && std::size_t(byMemory - 1) < live.size() && live[std::size_t(byMemory - 1)] + alignedSize <= peak)
        --byMemory;
    Prefetch result;
    result.swapIn = std::max(byTime, byMemory);
    result.stall = std::max(0.0, std::max(outEnd, startTime[std::size_t(result.swapIn)]) + transfer - readTime);
    return result;
}

std::optional<GapRewrite> swapGap(const Transformed& current, const IdleGap& gap, const StrategyOptions& options)
{
    const auto& device = options.device;
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
    // Redirect the reads from step `to` on, then insert SwapIn at `to` and SwapOut right after `from`:
    // the just-in-time trip, which the prefetch below may move the SwapIn of.
    for (Step s = gap.to; s < state.schedule.steps(); ++s)
        replaceTensor(state.graph.ops[state.schedule.order[s]], t, back); // a fused op's body reads `back` too
    const OpIndex lastReader = state.schedule.order[std::size_t(gap.from)], nextReader = state.schedule.order[std::size_t(gap.to)];
    const auto copyOp = [&](const char* suffix, const char* type, TensorIndex from, TensorIndex to) {
        Op op;
        op.name = name + suffix;
        op.type = type;
        op.inputs = { from };
        op.outputs = { to };
        return op;
    };
    const auto swapIn = insertOp(state, copyOp(".swap_in", "SwapIn", host, back), gap.to);
    insertOp(state, copyOp(".swap_out", "SwapOut", t, host), gap.from + 1);
    const Step jit = gap.to + 1;
    const double transfer = static_cast<double>(gap.size) / device.hostLinkBandwidth;
    std::vector<Bytes> live; // empty: no step may hold the copy early, so the SwapIn stays just in time
    Bytes peak = 0;
    if (options.swapPrefetch) {
        const auto built = buildProblem(state, ProblemOptions { options.alignment, options.workspaces });
        if (!built)
            return std::nullopt;
        live = liveBytesCurve(built->problem);
        peak = live.empty() ? 0 : *std::max_element(live.begin(), live.end());
    }
    const Bytes alignment = std::max<Bytes>(1, options.alignment);
    const Bytes aligned = (gap.size + alignment - 1) / alignment * alignment;
    const auto prefetch = planPrefetch(state, gap, transfer, live, peak, aligned, device);
    auto& order = state.schedule.order;
    order.erase(order.begin() + jit);
    order.insert(order.begin() + prefetch.swapIn, swapIn);
    result.swappedBytes = gap.size;
    result.transferSeconds = 2 * transfer;
    result.extraSeconds = prefetch.stall;
    const auto ahead = jit - prefetch.swapIn;
    result.detail = name + ": " + formatBytes(gap.size) + " to host after step " + stepOf(lastReader, gap.from)
        + (ahead > 0 ? ", prefetched back at step " + stepOf(swapIn, prefetch.swapIn) + " for its read at step "
                     : ", back just before its read at step ")
        + stepOf(nextReader, jit + 1) + "; transfer 2 × " + milliseconds(transfer) + " over a " + milliseconds(gapSeconds) + " gap, stall " + milliseconds(prefetch.stall);
    return result;
}
} // namespace

Expected<Transformed> SwapStrategy::apply(Transformed state, const StrategyOptions& options) const
{
    StrategyReport report;
    report.name = std::string(name());
    state = greedyGapRewrites(
        std::move(state), kMinGap, [&](const Transformed& s, const IdleGap& gap) { return swapGap(s, gap, options); }, options,
        report);
    if (report.details.empty())
        report.details.push_back("no swap lowers the peak");
    state.reports.push_back(std::move(report));
    return state;
}

} // namespace core
