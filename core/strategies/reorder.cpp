// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/reorder.h"

#include <algorithm>

namespace core {

Schedule memoryAwareOrder(const Graph& graph, const Schedule& current)
{
    const auto ops = graph.ops.size();
    const auto prod = producers(graph);
    std::vector<Step> rank(ops, 0); // position in the current schedule: the tie-break
    for (Step s = 0; s < current.steps(); ++s)
        rank[current.order[s]] = s;
    std::vector<bool> isOutput(graph.tensors.size(), false);
    for (auto t : graph.outputs)
        isOutput[t] = true;
    // Remaining readers per tensor (each reading op counted once) and unmet dependencies per op.
    std::vector<int> readersLeft(graph.tensors.size(), 0), pending(ops, 0);
    std::vector<std::vector<OpIndex>> users(ops);
    auto distinctInputs = [&](const Op& op) {
        std::vector<TensorIndex> list = op.inputs;
        list.insert(list.end(), op.captured.begin(), op.captured.end());
        std::sort(list.begin(), list.end());
        list.erase(std::unique(list.begin(), list.end()), list.end());
        return list;
    };
    std::vector<std::vector<TensorIndex>> inputsOf(ops);
    for (std::size_t o = 0; o < ops; ++o) {
        inputsOf[o] = distinctInputs(graph.ops[o]);
        for (auto t : inputsOf[o]) {
            ++readersLeft[t];
            if (prod[t] >= 0 && prod[t] != static_cast<OpIndex>(o)) {
                ++pending[o];
                users[prod[t]].push_back(static_cast<OpIndex>(o));
            }
        }
    }
    auto freesOnDevice = [&](TensorIndex t) {
        const auto kind = graph.tensors[t].kind;
        return !isOutput[t] && kind != TensorKind::Weight && kind != TensorKind::Persistent;
    };
    std::vector<OpIndex> ready;
    for (std::size_t o = 0; o < ops; ++o)
        if (pending[o] == 0)
            ready.push_back(static_cast<OpIndex>(o));
    Schedule result;
    while (!ready.empty()) {
        std::size_t best = 0;
        Bytes bestGain = 0;
        for (std::size_t i = 0; i < ready.size(); ++i) {
            const auto& op = graph.ops[ready[i]];
            Bytes gain = 0;
            for (auto t : inputsOf[ready[i]])
                if (readersLeft[t] == 1 && freesOnDevice(t))
                    gain += std::max<Bytes>(graph.tensors[t].size, 0);
            for (auto t : op.outputs)
                gain -= std::max<Bytes>(graph.tensors[t].size, 0);
            if (i == 0 || gain > bestGain || (gain == bestGain && rank[ready[i]] < rank[ready[best]])) {
                best = i;
                bestGain = gain;
            }
        }
        const auto op = ready[best];
        ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(best));
        result.order.push_back(op);
        for (auto t : inputsOf[op])
            --readersLeft[t];
        for (auto u : users[op])
            if (--pending[u] == 0)
                ready.push_back(u);
    }
    return result;
}

Expected<Transformed> ReorderStrategy::apply(Transformed state, const StrategyOptions& options) const
{
    StrategyReport report;
    report.name = std::string(name());
    auto order = memoryAwareOrder(state.graph, state.schedule);
    if (!isTopological(state.graph, order))
        return makeError(ErrorCode::InvalidModel, "the graph has a cycle; no topological order exists");
    const Bytes before = transformedLowerBound(state, options.alignment, options.workspaces);
    auto candidate = state;
    candidate.schedule = std::move(order);
    const Bytes after = transformedLowerBound(candidate, options.alignment, options.workspaces);
    int moved = 0;
    for (Step s = 0; s < state.schedule.steps(); ++s)
        moved += candidate.schedule.order[s] != state.schedule.order[s];
    if (after >= 0 && after < before) {
        report.details.push_back("memory-aware order: " + std::to_string(moved) + " of " + std::to_string(state.schedule.steps())
            + " steps run a different op");
        candidate.reports.push_back(std::move(report));
        return candidate;
    }
    report.details.push_back("kept the current order: the memory-aware order does not lower the bound");
    state.reports.push_back(std::move(report));
    return state;
}

} // namespace core
