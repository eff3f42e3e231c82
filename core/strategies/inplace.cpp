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

// Where a Concat's inputs sit in its output: the normalised axis and each input's slice offset.
// Empty offsets when the Concat cannot hold its inputs in slices: its one output must be an
// activation or graph output in device memory that shares nothing, of its inputs' total size, with
// every dimension before the axis 1 (each slice one contiguous range). No tensor of it may be sized
// by an upper bound: slices placed by bounds do not hold run-time shapes, which the Concat packs.
struct Slices {
    TensorIndex output = -1;
    std::int64_t axis = 0;
    std::vector<Bytes> offsets;
};

Slices slicesOf(const Transformed& state, const std::vector<int>& sharers, const Op& op)
{
    Slices result;
    const auto& graph = state.graph;
    if (op.type != "Concat" || !op.domain.empty() || op.outputs.size() != 1)
        return result;
    const auto y = op.outputs[0];
    const auto& out = graph.tensors[std::size_t(y)];
    if (out.size <= 0 || !out.rankKnown || state.onHost[std::size_t(y)] || !sharesNothing(state, sharers, y)
        || !(out.kind == TensorKind::Activation || out.kind == TensorKind::Output))
        return result;
    const auto rank = std::int64_t(out.shape.size());
    const auto a = op.attributes.find("axis");
    std::int64_t axis = a != op.attributes.end() && !a->second.ints.empty() ? a->second.ints[0] : 0;
    axis = axis < 0 ? axis + rank : axis;
    if (axis < 0 || axis >= rank || std::any_of(out.shape.begin(), out.shape.begin() + axis, [](std::int64_t d) { return d != 1; }))
        return result;
    if (out.estimated || std::any_of(op.inputs.begin(), op.inputs.end(), [&](TensorIndex x) { return graph.tensors[std::size_t(x)].estimated; }))
        return result;
    std::vector<Bytes> offsets;
    Bytes at = 0;
    for (auto x : op.inputs) {
        offsets.push_back(at);
        at += std::max<Bytes>(graph.tensors[std::size_t(x)].size, 0);
    }
    if (at != out.size)
        return result;
    result.output = y;
    result.axis = axis;
    result.offsets = std::move(offsets);
    return result;
}

// Whether input k of a Concat (see slicesOf) may be written by its producer into its slice: an
// activation produced by an op, not a graph input or output, in device memory, sharing nothing,
// occurring once among the inputs, its slice starting at a multiple of 16 bytes.
bool takesSlice(const Transformed& state, const Uses& uses, const std::vector<int>& sharers, const Op& op, const Slices& slices, std::size_t k)
{
    const auto x = op.inputs[k];
    const auto& in = state.graph.tensors[std::size_t(x)];
    return x != slices.output && in.size > 0 && in.kind == TensorKind::Activation && !uses.isInput[std::size_t(x)]
        && !uses.isOutput[std::size_t(x)] && uses.produced[std::size_t(x)] >= 0 && !state.onHost[std::size_t(x)]
        && sharesNothing(state, sharers, x) && slices.offsets[k] % 16 == 0 && std::count(op.inputs.begin(), op.inputs.end(), x) == 1;
}

std::vector<int> sharerCounts(const Transformed& state)
{
    std::vector<int> sharers(state.graph.tensors.size(), 0);
    for (std::size_t t = 0; t < state.graph.tensors.size(); ++t)
        if (state.sharesWith[t] != TensorIndex(t))
            ++sharers[std::size_t(state.sharesWith[t])];
    return sharers;
}

void share(Transformed& state, std::vector<int>& sharers, TensorIndex t, TensorIndex into, Bytes offset)
{
    state.sharesWith[std::size_t(t)] = into;
    state.shareOffset[std::size_t(t)] = offset;
    ++sharers[std::size_t(into)];
}

// Places the Concat `host` (see slicesOf) and the Concats before it whose inputs are a contiguous run
// of its inputs: each such Concat is a view of that run's range of host's output, and host's inputs
// are written into their slices. Returns how many Concats became views (the state is unchanged when
// none did) and adds to `inputs` how many inputs went into their slices.
int placeFamily(Transformed& state, const Uses& uses, std::vector<int>& sharers, Step hostStep, int& inputs)
{
    const auto& graph = state.graph;
    const auto& op = graph.ops[std::size_t(state.schedule.order[std::size_t(hostStep)])];
    const auto slices = slicesOf(state, sharers, op);
    if (slices.offsets.empty())
        return 0;
    const auto rank = graph.tensors[std::size_t(slices.output)].shape.size();
    int members = 0;
    for (Step e = 0; e < hostStep; ++e) {
        const auto& earlier = graph.ops[std::size_t(state.schedule.order[std::size_t(e)])];
        const auto inner = slicesOf(state, sharers, earlier);
        if (inner.offsets.empty() || inner.axis != slices.axis || earlier.inputs.empty() || uses.isOutput[std::size_t(inner.output)]
            || graph.tensors[std::size_t(inner.output)].shape.size() != rank)
            continue;
        const auto run = std::search(op.inputs.begin(), op.inputs.end(), earlier.inputs.begin(), earlier.inputs.end());
        if (run == op.inputs.end() || slices.offsets[std::size_t(run - op.inputs.begin())] % 16 != 0)
            continue;
        share(state, sharers, inner.output, slices.output, slices.offsets[std::size_t(run - op.inputs.begin())]);
        ++members;
    }
    if (members == 0)
        return 0;
    for (std::size_t k = 0; k < op.inputs.size(); ++k)
        if (takesSlice(state, uses, sharers, op, slices, k)) {
            share(state, sharers, op.inputs[k], slices.output, slices.offsets[k]);
            ++inputs;
        }
    return members;
}

// Families of Concats that join runs of one list (torchvision's DenseNet joins every earlier feature
// map again in each layer: cat(f0), cat(f0, f1), ..., cat(f0, ..., f6)). One Concat H of the family
// holds it: each earlier Concat whose inputs are a contiguous run of H's inputs is a view of that
// run's range of H's output, and H's inputs are written into their slices, so those Concats copy
// nothing and the feature maps are held once. H's buffer is then held at its full size from its
// first input's birth, so the host matters: for the latest Concat D of a family, D and each Concat
// that would be a view of it are tried as H, and the best by the profile (see profileOf) is kept
// when it is not worse than the state before.
void concatFamilyPass(Transformed& state, const Uses& uses, std::vector<Bytes>& profile, const StrategyOptions& options,
    std::vector<std::string>& details)
{
    const auto& graph = state.graph;
    auto sharers = sharerCounts(state);
    const auto firstDetail = details.size();
    const auto opAt = [&](Step s) -> const Op& { return graph.ops[std::size_t(state.schedule.order[std::size_t(s)])]; };
    for (Step d = uses.steps - 1; d >= 0 && !profile.empty(); --d) {
        if (slicesOf(state, sharers, opAt(d)).offsets.empty())
            continue;
        // Sharing as it stands; each trial starts from it.
        const auto sharesWith = state.sharesWith;
        const auto shareOffset = state.shareOffset;
        const auto sharersBefore = sharers;
        const auto restore = [&] {
            state.sharesWith = sharesWith;
            state.shareOffset = shareOffset;
            sharers = sharersBefore;
        };
        int inputs = 0;
        if (placeFamily(state, uses, sharers, d, inputs) == 0)
            continue;
        std::vector<Step> hosts { d }; // D and the Concats that became views of it
        for (Step e = 0; e < d; ++e)
            if (opAt(e).type == "Concat" && state.sharesWith[std::size_t(opAt(e).outputs[0])] == opAt(d).outputs[0]
                && sharesWith[std::size_t(opAt(e).outputs[0])] == opAt(e).outputs[0])
                hosts.push_back(e);
        restore();
        Step bestHost = -1;
        std::vector<Bytes> best;
        for (const auto h : hosts) {
            inputs = 0;
            const int members = placeFamily(state, uses, sharers, h, inputs);
            auto after = members > 0 ? profileOf(state, options) : std::vector<Bytes> {};
            restore();
            if (!after.empty() && after <= profile && (bestHost < 0 || after < best)) {
                bestHost = h;
                best = std::move(after);
            }
        }
        if (bestHost < 0)
            continue;
        inputs = 0;
        const int members = placeFamily(state, uses, sharers, bestHost, inputs);
        profile = std::move(best);
        const auto& host = opAt(bestHost);
        const auto& out = graph.tensors[std::size_t(host.outputs[0])];
        details.push_back(host.name + ": " + std::to_string(members) + " earlier Concats of the same inputs are views of " + out.name
            + " (" + formatBytes(out.size) + ") and " + std::to_string(inputs) + " of " + std::to_string(host.inputs.size())
            + " inputs are written into their slices");
    }
    std::reverse(details.begin() + std::ptrdiff_t(firstDetail), details.end()); // in step order
}

// Concat inputs into their slices of the output, one input at a time, the latest-born first (it
// stretches the output's buffer least); an input stays in its slice only when the profile (see
// profileOf) does not get worse: a skip connection born long before its Concat usually does.
void concatInputPass(Transformed& state, const Uses& uses, std::vector<Bytes>& profile, const StrategyOptions& options,
    std::vector<std::string>& details)
{
    const auto& graph = state.graph;
    auto sharers = sharerCounts(state);
    for (Step s = 0; s < uses.steps && !profile.empty(); ++s) {
        const auto& op = graph.ops[std::size_t(state.schedule.order[std::size_t(s)])];
        const auto slices = slicesOf(state, sharers, op);
        if (slices.offsets.empty())
            continue;
        const auto y = slices.output;
        std::vector<std::size_t> candidates; // input positions
        for (std::size_t k = 0; k < op.inputs.size(); ++k)
            if (takesSlice(state, uses, sharers, op, slices, k))
                candidates.push_back(k);
        std::stable_sort(candidates.begin(), candidates.end(), [&](std::size_t l, std::size_t r) {
            return uses.produced[std::size_t(op.inputs[l])] > uses.produced[std::size_t(op.inputs[r])];
        });
        int placed = 0;
        for (const auto k : candidates) {
            const auto x = op.inputs[k];
            state.sharesWith[std::size_t(x)] = y;
            state.shareOffset[std::size_t(x)] = slices.offsets[k];
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
                + " inputs written into their slices of " + graph.tensors[std::size_t(y)].name + " ("
                + formatBytes(graph.tensors[std::size_t(y)].size) + ")");
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

void concatPass(Transformed& state, const Uses& uses, const StrategyOptions& options, std::vector<std::string>& details)
{
    auto profile = profileOf(state, options);
    concatFamilyPass(state, uses, profile, options, details);
    concatInputPass(state, uses, profile, options, details);
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
