// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/inplace.h"

#include "cost/opcost.h"

#include <algorithm>

namespace core {

Expected<Transformed> InPlaceStrategy::apply(Transformed state, const StrategyOptions& options) const
{
    (void)options;
    StrategyReport report;
    report.name = std::string(name());
    const auto& graph = state.graph;
    const auto reads = readSteps(graph, state.schedule);
    std::vector<bool> isOutput(graph.tensors.size(), false), isInput(graph.tensors.size(), false);
    for (auto t : graph.outputs)
        isOutput[t] = true;
    for (auto t : graph.inputs)
        isInput[t] = true;
    // A tensor whose buffer another tensor has taken over cannot give it away twice.
    std::vector<bool> handedOver(graph.tensors.size(), false);
    for (Step s = 0; s < state.schedule.steps(); ++s) {
        const auto& op = graph.ops[state.schedule.order[s]];
        if (op.outputs.size() != 1 || !(isElementwiseOp(op.type) || isViewOp(op.type)))
            continue;
        const auto y = op.outputs[0];
        const auto& out = graph.tensors[y];
        if (state.sharesWith[y] != y || state.onHost[y] || out.size <= 0
            || !(out.kind == TensorKind::Activation || out.kind == TensorKind::Output))
            continue;
        for (auto x : op.inputs) {
            const auto& in = graph.tensors[x];
            if (x == y || in.kind != TensorKind::Activation || isOutput[x] || isInput[x] || state.onHost[x] || handedOver[x]
                || in.size != out.size)
                continue;
            if (reads[x].empty() || reads[x].back() != s)
                continue; // read again later: overwriting it would corrupt that read
            state.sharesWith[y] = x;
            handedOver[x] = true;
            report.details.push_back(op.name + ": " + out.name + " reuses " + in.name + " (" + std::to_string(out.size) + " bytes)");
            break;
        }
    }
    if (report.details.empty())
        report.details.push_back("no op can run in place");
    state.reports.push_back(std::move(report));
    return state;
}

} // namespace core
