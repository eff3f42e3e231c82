// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/gaps.h"

#include <algorithm>

namespace core {

std::vector<IdleGap> idleGaps(const Transformed& state, Step minGap)
{
    const auto& graph = state.graph;
    const auto reads = readSteps(graph, state.schedule);
    const auto lifetimes = computeLifetimes(graph, state.schedule);
    std::vector<bool> excluded(graph.tensors.size(), false);
    for (auto t : graph.outputs)
        excluded[t] = true;
    for (auto t : graph.inputs)
        excluded[t] = true;
    for (std::size_t t = 0; t < graph.tensors.size(); ++t)
        if (state.sharesWith[t] != static_cast<TensorIndex>(t))
            excluded[t] = excluded[state.sharesWith[t]] = true;
    std::vector<IdleGap> gaps;
    for (std::size_t t = 0; t < graph.tensors.size(); ++t) {
        const auto& tensor = graph.tensors[t];
        if (excluded[t] || state.onHost[t] || tensor.kind != TensorKind::Activation || tensor.size <= 0 || reads[t].empty())
            continue;
        IdleGap best;
        Step previous = lifetimes[t].start; // the producing step
        for (auto r : reads[t]) {
            if (r - previous >= minGap && r - previous > best.to - best.from)
                best = IdleGap { static_cast<TensorIndex>(t), previous, r, tensor.size };
            previous = r;
        }
        if (best.tensor >= 0)
            gaps.push_back(best);
    }
    std::stable_sort(gaps.begin(), gaps.end(), [](const IdleGap& a, const IdleGap& b) {
        return static_cast<double>(a.size) * (a.to - a.from) > static_cast<double>(b.size) * (b.to - b.from);
    });
    return gaps;
}

Transformed greedyGapRewrites(Transformed state, Step minGap, const GapRewriter& rewrite, const StrategyOptions& options,
    StrategyReport& report)
{
    for (int round = 0; round < options.maxRewrites; ++round) {
        const Bytes current = transformedLowerBound(state, options.alignment, options.workspaces);
        auto gaps = idleGaps(state, minGap);
        if (gaps.size() > static_cast<std::size_t>(options.candidates))
            gaps.resize(static_cast<std::size_t>(options.candidates));
        std::optional<GapRewrite> best;
        Bytes bestBound = current;
        for (const auto& gap : gaps) {
            auto trial = rewrite(state, gap);
            if (!trial)
                continue;
            const Bytes bound = transformedLowerBound(trial->state, options.alignment, options.workspaces);
            // Strictly lower; on a tie the cheaper rewrite wins.
            if (bound >= 0 && (bound < bestBound || (best && bound == bestBound && trial->extraSeconds < best->extraSeconds))) {
                bestBound = bound;
                best = std::move(trial);
            }
        }
        if (!best)
            break;
        report.extraFlops += best->extraFlops;
        report.swappedBytes += best->swappedBytes;
        report.transferSeconds += best->transferSeconds;
        report.extraSeconds += best->extraSeconds;
        report.details.push_back(best->detail);
        state = std::move(best->state);
    }
    return state;
}

} // namespace core
