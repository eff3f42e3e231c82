// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/inplace.h"

#include "cost/opcost.h"
#include "planners/metrics.h"
#include "util/format.h"

#include <algorithm>
#include <functional>

namespace core {

namespace {

// Facts both passes read, from the state before either ran.
struct Uses {
    std::vector<std::vector<Step>> reads; // per tensor: steps that read it, ascending
    std::vector<Step> produced;           // per tensor: its producer's step; -1 for graph inputs and weights
    std::vector<bool> isInput, isOutput;
    Step steps = 0;

    explicit Uses(const Transformed& state)
        : reads(readSteps(state.graph, state.schedule))
        , produced(state.graph.tensors.size(), -1)
        , isInput(state.graph.tensors.size(), false)
        , isOutput(state.graph.tensors.size(), false)
        , steps(state.schedule.steps())
    {
        for (Step s = 0; s < steps; ++s)
            for (auto t : state.graph.ops[std::size_t(state.schedule.order[std::size_t(s)])].outputs)
                produced[std::size_t(t)] = s;
        for (auto t : state.graph.inputs)
            isInput[std::size_t(t)] = true;
        for (auto t : state.graph.outputs)
            isOutput[std::size_t(t)] = true;
    }
    // The last step at which t's bytes matter: graph outputs until the end.
    Step lastUse(TensorIndex t) const
    {
        if (isOutput[std::size_t(t)])
            return steps;
        return reads[std::size_t(t)].empty() ? produced[std::size_t(t)] : reads[std::size_t(t)].back();
    }
};

bool sharesNothing(const Transformed& state, const std::vector<int>& sharers, TensorIndex t)
{
    return state.sharesWith[std::size_t(t)] == t && sharers[std::size_t(t)] == 0;
}

// Live bytes per step of the state's problem, highest first: comparing two of these lexicographically
// prefers the state whose highest steps are lower (the peak first, then the next highest, ...).
// Empty when the problem cannot be built.
std::vector<Bytes> profileOf(const Transformed& state, const StrategyOptions& options)
{
    const auto built = buildProblem(state, ProblemOptions { options.alignment, options.workspaces });
    if (!built)
        return {};
    auto curve = liveBytesCurve(built->problem);
    std::sort(curve.begin(), curve.end(), std::greater<>());
    return curve;
}

// Concat inputs into their slices of the output, one input at a time, the latest-born first (it
// stretches the output's buffer least); an input stays in its slice only when the profile (see
// profileOf) does not get worse: a skip connection born long before its Concat usually does.
void concatPass(Transformed& state, const Uses& uses, const StrategyOptions& options, std::vector<std::string>& details)
{
    const auto& graph = state.graph;
    std::vector<int> sharers(graph.tensors.size(), 0);
    for (std::size_t t = 0; t < graph.tensors.size(); ++t)
        if (state.sharesWith[t] != TensorIndex(t))
            ++sharers[std::size_t(state.sharesWith[t])];
    auto profile = profileOf(state, options);
    for (Step s = 0; s < uses.steps && !profile.empty(); ++s) {
        const auto& op = graph.ops[std::size_t(state.schedule.order[std::size_t(s)])];
        if (op.type != "Concat" || !op.domain.empty() || op.outputs.size() != 1)
            continue;
        const auto y = op.outputs[0];
        const auto& out = graph.tensors[std::size_t(y)];
        if (out.size <= 0 || !out.rankKnown || state.onHost[std::size_t(y)] || !sharesNothing(state, sharers, y)
            || !(out.kind == TensorKind::Activation || out.kind == TensorKind::Output))
            continue;
        const auto rank = std::int64_t(out.shape.size());
        const auto a = op.attributes.find("axis");
        std::int64_t axis = a != op.attributes.end() && !a->second.ints.empty() ? a->second.ints[0] : 0;
        axis = axis < 0 ? axis + rank : axis;
        if (axis < 0 || axis >= rank || std::any_of(out.shape.begin(), out.shape.begin() + axis, [](std::int64_t d) { return d != 1; }))
            continue; // a slice per outer index: not one contiguous range
        Bytes total = 0;
        for (auto x : op.inputs)
            total += std::max<Bytes>(graph.tensors[std::size_t(x)].size, 0);
        if (total != out.size)
            continue;
        std::vector<std::pair<TensorIndex, Bytes>> candidates; // input, its slice's offset
        Bytes at = 0;
        for (auto x : op.inputs) {
            const auto& in = graph.tensors[std::size_t(x)];
            const Bytes offset = at;
            at += std::max<Bytes>(in.size, 0);
            if (x != y && in.size > 0 && in.kind == TensorKind::Activation && !uses.isInput[std::size_t(x)] && !uses.isOutput[std::size_t(x)]
                && uses.produced[std::size_t(x)] >= 0 && !state.onHost[std::size_t(x)] && sharesNothing(state, sharers, x)
                && offset % 16 == 0 && std::count(op.inputs.begin(), op.inputs.end(), x) == 1)
                candidates.emplace_back(x, offset);
        }
        std::stable_sort(candidates.begin(), candidates.end(),
            [&](const auto& l, const auto& r) { return uses.produced[std::size_t(l.first)] > uses.produced[std::size_t(r.first)]; });
        int placed = 0;
        for (const auto& [x, offset] : candidates) {
            state.sharesWith[std::size_t(x)] = y;
            state.shareOffset[std::size_t(x)] = offset;
            auto after = profileOf(state, options);
            if (after.empty() || after > profile) {
                state.sharesWith[std::size_t(x)] = x;
                state.shareOffset[std::size_t(x)] = 0;
                continue;
            }
            profile = std::move(after);
            ++placed;
            ++sharers[std::size_t(y)];
        }
        if (placed > 0)
            details.push_back(op.name + ": " + std::to_string(placed) + " of " + std::to_string(op.inputs.size())
                + " inputs written into their slices of " + out.name + " (" + formatBytes(out.size) + ")");
    }
}

// Elementwise and view ops over an input that dies there (see inplace.h for the rules).
void elementwisePass(Transformed& state, const Uses& uses, std::vector<std::string>& details)
{
    const auto& graph = state.graph;
    // Per buffer root: the last step any tensor in that buffer is used; an op may overwrite the
    // buffer only at or after it.
    std::vector<Step> rootLastUse(graph.tensors.size(), -1);
    for (std::size_t t = 0; t < graph.tensors.size(); ++t) {
        auto& last = rootLastUse[std::size_t(state.bufferRoot(TensorIndex(t)))];
        last = std::max(last, uses.lastUse(TensorIndex(t)));
    }
    // A tensor whose buffer another tensor has taken over cannot give it away twice.
    std::vector<bool> handedOver(graph.tensors.size(), false);
    for (Step s = 0; s < uses.steps; ++s) {
        const auto& op = graph.ops[std::size_t(state.schedule.order[std::size_t(s)])];
        if (op.outputs.size() != 1 || !(isElementwiseOp(op.type) || isViewOp(op.type)))
            continue;
        const auto y = op.outputs[0];
        const auto& out = graph.tensors[std::size_t(y)];
        if (state.sharesWith[std::size_t(y)] != y || state.onHost[std::size_t(y)] || out.size <= 0
            || !(out.kind == TensorKind::Activation || out.kind == TensorKind::Output))
            continue;
        for (auto x : op.inputs) {
            const auto& in = graph.tensors[std::size_t(x)];
            if (x == y || in.kind != TensorKind::Activation || uses.isOutput[std::size_t(x)] || uses.isInput[std::size_t(x)]
                || state.onHost[std::size_t(x)] || handedOver[std::size_t(x)] || in.size != out.size)
                continue;
            if (uses.reads[std::size_t(x)].empty() || uses.reads[std::size_t(x)].back() != s)
                continue; // read again later: overwriting it would corrupt that read
            const auto root = state.bufferRoot(x);
            if (rootLastUse[std::size_t(root)] > s)
                continue; // another tensor in x's buffer (a Concat around x's slice) is read later
            state.sharesWith[std::size_t(y)] = x;
            state.shareOffset[std::size_t(y)] = 0;
            rootLastUse[std::size_t(root)] = std::max(rootLastUse[std::size_t(root)], uses.lastUse(y));
            handedOver[std::size_t(x)] = true;
            details.push_back(op.name + ": " + out.name + " reuses " + in.name + " (" + std::to_string(out.size) + " bytes)");
            break;
        }
    }
}

} // namespace

Expected<Transformed> InPlaceStrategy::apply(Transformed state, const StrategyOptions& options) const
{
    const Uses uses(state);
    std::vector<std::string> concatDetails, withConcat, alone;
    Transformed concat = state;
    concatPass(concat, uses, options, concatDetails);
    if (!concatDetails.empty())
        elementwisePass(concat, uses, withConcat);
    elementwisePass(state, uses, alone);

    StrategyReport report;
    report.name = std::string(name());
    const bool useConcat = !concatDetails.empty() && profileOf(concat, options) <= profileOf(state, options);
    if (useConcat) {
        state = std::move(concat);
        report.details = std::move(concatDetails);
        report.details.insert(report.details.end(), withConcat.begin(), withConcat.end());
    } else {
        report.details = std::move(alone);
    }
    if (report.details.empty())
        report.details.push_back("no op can run in place");
    state.reports.push_back(std::move(report));
    return state;
}

} // namespace core
