// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/recompute.h"

#include "cost/opcost.h"
#include "strategies/gaps.h"
#include "util/format.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace core {

namespace {
constexpr Step kMinGap = 2;

bool isRandom(const std::string& type) { return type == "Dropout" || type.rfind("Random", 0) == 0 || type == "Multinomial"; }

std::optional<GapRewrite> recomputeGap(const Transformed& current, const IdleGap& gap, const DeviceProfile& device)
{
    const auto& graph = current.graph;
    const auto lifetimes = computeLifetimes(graph, current.schedule);
    const auto prod = producers(graph);
    std::vector<Step> stepOf(graph.ops.size(), -1);
    for (Step s = 0; s < current.schedule.steps(); ++s)
        stepOf[current.schedule.order[s]] = s;
    // Resident at step `to` anyway: read at or after it, or weight/graph input (read from where it is).
    auto available = [&](TensorIndex u) {
        const auto kind = graph.tensors[u].kind;
        if (kind == TensorKind::Weight || kind == TensorKind::Persistent || prod[u] < 0)
            return true;
        return lifetimes[u].start < gap.to && lifetimes[u].end > gap.to && !current.onHost[u];
    };
    // Ops to clone: the producer of the tensor, and of every input that is not available, depth first.
    std::vector<OpIndex> chain;
    std::vector<TensorIndex> work { gap.tensor };
    while (!work.empty()) {
        const auto u = work.back();
        work.pop_back();
        const auto p = prod[u];
        if (p < 0 || std::find(chain.begin(), chain.end(), p) != chain.end())
            continue;
        const auto& op = graph.ops[p];
        if (isRandom(op.type) || !op.captured.empty() || op.type == "SwapIn" || op.type == "SwapOut")
            return std::nullopt;
        chain.push_back(p);
        if (static_cast<int>(chain.size()) > RecomputeStrategy::kMaxChain)
            return std::nullopt;
        for (auto in : op.inputs)
            if (current.onHost[in])
                return std::nullopt;
            else if (!available(in))
                work.push_back(in);
    }
    std::sort(chain.begin(), chain.end(), [&](OpIndex a, OpIndex b) { return stepOf[a] < stepOf[b]; });

    GapRewrite result;
    result.state = current;
    auto& state = result.state;
    std::map<TensorIndex, TensorIndex> cloneOf;
    Step at = gap.to;
    std::string names;
    for (auto p : chain) {
        Op clone = state.graph.ops[p];
        clone.name += ".recompute";
        for (auto& in : clone.inputs)
            if (auto it = cloneOf.find(in); it != cloneOf.end())
                in = it->second;
        for (auto& out : clone.outputs) {
            const auto copy = state.addCopyTensor(out, state.graph.tensors[out].name + ".recompute");
            cloneOf[out] = copy;
            out = copy;
        }
        const auto cost = opCost(state.graph, clone);
        result.extraFlops += cost.flops;
        result.extraSeconds += opSeconds(state.graph, clone, device);
        names += (names.empty() ? "" : ", ") + state.graph.ops[p].name;
        // Redirect later reads first (positions from `to` on hold the original ops), then insert.
        insertOp(state, std::move(clone), at++);
    }
    const auto replacement = cloneOf.at(gap.tensor);
    for (Step s = at; s < state.schedule.steps(); ++s) {
        auto& op = state.graph.ops[state.schedule.order[s]];
        for (auto* list : { &op.inputs, &op.captured })
            std::replace(list->begin(), list->end(), gap.tensor, replacement);
    }
    char flops[32];
    std::snprintf(flops, sizeof flops, "%.3g", result.extraFlops);
    result.detail = graph.tensors[gap.tensor].name + ": " + formatBytes(gap.size) + " dropped after step " + std::to_string(gap.from)
        + ", recomputed before step " + std::to_string(gap.to) + " by re-running " + names + " (" + flops + " FLOPs)";
    return result;
}
} // namespace

Expected<Transformed> RecomputeStrategy::apply(Transformed state, const StrategyOptions& options) const
{
    StrategyReport report;
    report.name = std::string(name());
    const auto& device = options.device;
    state = greedyGapRewrites(
        std::move(state), kMinGap, [&](const Transformed& s, const IdleGap& gap) { return recomputeGap(s, gap, device); },
        options, report);
    if (report.details.empty())
        report.details.push_back("no recomputation lowers the peak");
    state.reports.push_back(std::move(report));
    return state;
}

} // namespace core
