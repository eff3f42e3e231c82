// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/recompute.h"

#include "cost/opcost.h"
#include "graph/capture.h"
#include "strategies/gaps.h"
#include "strategies/training.h"
#include "util/format.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace core {

// An op whose output cannot be computed again with the same result, or cannot be cloned at all; an op
// that updates a tensor in place (writes a version token, graph/capture.h) would update it twice.
bool opCannotRerun(const Graph& graph, const Op& op)
{
    const auto random = op.type == "Dropout" || op.type.rfind("Random", 0) == 0 || op.type == "Multinomial";
    return random || !op.captured.empty() || op.type == "SwapIn" || op.type == "SwapOut" || op.domain == kTrainingDomain
        || std::any_of(op.outputs.begin(), op.outputs.end(), [&](TensorIndex t) { return isVersionToken(graph.tensors[t]); });
}

namespace {
constexpr Step kMinGap = 2;

bool cannotRerun(const Graph& graph, const Op& op) { return opCannotRerun(graph, op); }

// `wanted`, or with a suffix (.2, .3, ...) when the graph has a tensor of that name (a tensor recomputed twice).
std::string uniqueTensorName(const Graph& graph, const std::string& wanted)
{
    auto name = wanted;
    for (int i = 2; graph.findTensor(name); ++i)
        name = wanted + "." + std::to_string(i);
    return name;
}

// One recomputation: clones of the producers of `targets` run right before step `at`, and every read of
// a target from `at` on reads its clone. A clone's input that is not resident at `at` (dead, not yet
// needed again, or itself a target) is recomputed too, depth first, up to `maxChain` ops; weights, graph
// inputs and tensors `kept` says yes to are read where they are (which keeps them alive until `at`).
struct Recomputation {
    std::vector<TensorIndex> targets;
    Step at = 0;
    int maxChain = RecomputeStrategy::kMaxChain;
    std::function<bool(TensorIndex)> kept; // may be empty
};

// The rewrite, or nullopt when a needed op cannot be re-run or the chain is too long.
// GapRewrite::detail says "re-running A, B (N FLOPs)".
std::optional<GapRewrite> recomputeBefore(const Transformed& current, const Recomputation& r, const DeviceProfile& device)
{
    const auto& graph = current.graph;
    const auto lifetimes = computeLifetimes(graph, current.schedule);
    const auto prod = producers(graph);
    std::vector<Step> stepOf(graph.ops.size(), -1);
    for (Step s = 0; s < current.schedule.steps(); ++s)
        stepOf[current.schedule.order[s]] = s;
    auto isTarget = [&](TensorIndex u) { return std::find(r.targets.begin(), r.targets.end(), u) != r.targets.end(); };
    auto available = [&](TensorIndex u) {
        const auto kind = graph.tensors[u].kind;
        if (kind == TensorKind::Weight || kind == TensorKind::Persistent || prod[u] < 0 || (r.kept && r.kept(u)))
            return true;
        return !isTarget(u) && lifetimes[u].start < r.at && lifetimes[u].end > r.at && !current.onHost[u];
    };
    std::vector<OpIndex> chain;
    std::vector<TensorIndex> work(r.targets.rbegin(), r.targets.rend());
    while (!work.empty()) {
        const auto u = work.back();
        work.pop_back();
        const auto p = prod[u];
        if (p < 0 || std::find(chain.begin(), chain.end(), p) != chain.end())
            continue;
        const auto& op = graph.ops[p];
        if (cannotRerun(graph, op) || stepOf[p] < 0 || stepOf[p] >= r.at)
            return std::nullopt;
        chain.push_back(p);
        if (static_cast<int>(chain.size()) > r.maxChain)
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
    Step at = r.at;
    std::string names;
    for (std::size_t i = 0; i < chain.size(); ++i) {
        const auto p = chain[i];
        Op clone = state.graph.ops[p];
        clone.name += ".recompute";
        // replaceTensor keeps a fused op's body on the clone's tensors; its internals stay shared (scratch only).
        for (const auto in : std::vector<TensorIndex>(clone.inputs))
            if (auto it = cloneOf.find(in); it != cloneOf.end())
                replaceTensor(clone, in, it->second);
        for (const auto out : std::vector<TensorIndex>(clone.outputs)) {
            const auto copy = state.addCopyTensor(out, uniqueTensorName(state.graph, state.graph.tensors[out].name + ".recompute"));
            cloneOf[out] = copy;
            replaceTensor(clone, out, copy);
        }
        result.extraFlops += opCost(state.graph, clone).flops;
        result.extraSeconds += opSeconds(state.graph, clone, device);
        if (i < 4)
            names += (names.empty() ? "" : ", ") + state.graph.ops[p].name;
        else if (i == 4)
            names += " and " + std::to_string(chain.size() - 4) + " more";
        // Redirect later reads first (positions from `at` on hold the original ops), then insert.
        insertOp(state, std::move(clone), at++);
    }
    for (auto target : r.targets) {
        const auto replacement = cloneOf.at(target);
        for (Step s = at; s < state.schedule.steps(); ++s)
            replaceTensor(state.graph.ops[state.schedule.order[s]], target, replacement);
    }
    result.detail = "re-running " + names + " (" + formatFlops(result.extraFlops) + " FLOPs)";
    return result;
}

std::optional<GapRewrite> recomputeGap(const Transformed& current, const IdleGap& gap, const DeviceProfile& device)
{
    auto result = recomputeBefore(current, Recomputation { { gap.tensor }, gap.to, RecomputeStrategy::kMaxChain, {} }, device);
    if (result)
        result->detail = current.graph.tensors[gap.tensor].name + ": " + formatBytes(gap.size) + " dropped after step "
            + stepOf(current.schedule.order[std::size_t(gap.from)], gap.from) + ", recomputed before step "
            + stepOf(current.schedule.order[std::size_t(gap.to)], gap.to) + " by " + result->detail;
    return result;
}

// Checkpoint policy. The checkpoints are forward steps whose outputs stay resident: the ones
// StrategyOptions::checkpointSteps names, else steps k-1, 2k-1, .... Each segment of forward ops between two
// checkpoints drops its outputs that the backward pass reads, and recomputes them all (from the checkpoint
// before it) just before the first backward read of any of them. The forward ops after the last checkpoint are
// kept: their gradients come first, so dropping them would save nothing.
// Segments are processed last first, so a later segment's recomputation reads a tensor of an earlier segment
// (a skip connection across a checkpoint) where it is instead of recomputing it; that tensor then stays alive
// until that recomputation, and its own segment's clone serves its backward reads.
Transformed checkpointSegments(Transformed state, const StrategyOptions& options, StrategyReport& report)
{
    const Step forwardEnd = backwardStart(state.graph, state.schedule);
    if (forwardEnd == state.schedule.steps()) {
        report.details.push_back("no backward pass (use training mode): checkpointing has nothing to drop");
        return state;
    }
    const int n = forwardEnd;
    std::vector<Step> checkpoints;
    if (!options.checkpointSteps.empty()) {
        for (auto s : options.checkpointSteps)
            if (s >= 0 && s < n)
                checkpoints.push_back(s);
        std::sort(checkpoints.begin(), checkpoints.end());
        checkpoints.erase(std::unique(checkpoints.begin(), checkpoints.end()), checkpoints.end());
        report.details.push_back("checkpoint policy: the outputs of " + std::to_string(checkpoints.size()) + " chosen checkpoints of "
            + std::to_string(n) + " forward ops stay; the segments before them are recomputed before the backward pass");
    } else {
        const int k = options.checkpointEvery > 0 ? options.checkpointEvery : std::max(1, static_cast<int>(std::lround(std::sqrt(n))));
        for (Step s = k - 1; s < (n / k) * k; s += k)
            checkpoints.push_back(s);
        report.details.push_back("checkpoint policy: k = " + std::to_string(k) + " of " + std::to_string(n) + " forward ops: the outputs of "
            + std::to_string(n / k) + " checkpoints (every k-th op) stay; the segments before them are recomputed before the backward pass");
    }
    const std::vector<OpIndex> forwardOps(state.schedule.order.begin(), state.schedule.order.begin() + forwardEnd);
    const auto firstClone = static_cast<OpIndex>(state.graph.ops.size()); // ops from here on are this pass's clones
    std::vector<bool> keptTensor(state.graph.tensors.size(), false);
    const Step tail = checkpoints.empty() ? 0 : checkpoints.back() + 1; // from here on every forward op is kept
    for (Step s = 0; s < n; ++s) {
        const auto& op = state.graph.ops[forwardOps[s]];
        if (std::binary_search(checkpoints.begin(), checkpoints.end(), s) || cannotRerun(state.graph, op) || s >= tail)
            for (auto out : op.outputs)
                keptTensor[out] = true;
    }
    for (auto t : state.graph.outputs)
        keptTensor[t] = true;
    const auto kept = [keptTensor](TensorIndex t) { return t < static_cast<TensorIndex>(keptTensor.size()) && keptTensor[t]; };
    int recomputed = 0;
    for (int segment = static_cast<int>(checkpoints.size()) - 1; segment >= 0; --segment) {
        const Step first = segment == 0 ? 0 : checkpoints[std::size_t(segment) - 1] + 1, end = checkpoints[std::size_t(segment)];
        const auto reads = readSteps(state.graph, state.schedule);
        Recomputation r;
        r.at = state.schedule.steps();
        r.maxChain = static_cast<int>(state.graph.ops.size());
        r.kept = kept;
        Bytes bytes = 0;
        for (Step s = first; s < end; ++s)
            for (auto out : state.graph.ops[forwardOps[s]].outputs) {
                const auto& tensor = state.graph.tensors[out];
                const auto& when = reads[out];
                // The first read by a backward op; reads by clones of later segments stay on the original.
                const auto forwardReads = std::lower_bound(when.begin(), when.end(), forwardEnd);
                const auto backward = std::find_if(forwardReads, when.end(),
                    [&](Step step) { return state.schedule.order[step] < firstClone; });
                if (kept(out) || tensor.kind != TensorKind::Activation || tensor.size <= 0 || state.onHost[out]
                    || state.bufferRoot(out) != out || backward == when.end())
                    continue;
                const Step idleFrom = forwardReads == when.begin() ? s : *(forwardReads - 1); // last forward read, or production
                if (*backward - idleFrom < kMinGap)
                    continue;
                r.targets.push_back(out);
                r.at = std::min(r.at, *backward);
                bytes += tensor.size;
            }
        if (r.targets.empty())
            continue;
        const std::string before = r.at < state.schedule.steps() ? stepOf(state.schedule.order[std::size_t(r.at)], r.at) : std::to_string(r.at);
        auto rewrite = recomputeBefore(state, r, options.device);
        const Step last = std::max(first, end - 1);
        const auto range = "segment of forward steps " + stepOf(forwardOps[std::size_t(first)], first) + "-" + stepOf(forwardOps[std::size_t(last)], last);
        if (!rewrite) {
            report.details.push_back(range + ": kept (an op in it cannot be re-run)");
            continue;
        }
        ++recomputed;
        report.extraFlops += rewrite->extraFlops;
        report.extraSeconds += rewrite->extraSeconds;
        report.details.push_back(range + ": " + std::to_string(r.targets.size()) + " tensors (" + formatBytes(bytes)
            + ") dropped after the forward pass, recomputed before step " + before + " by " + rewrite->detail);
        state = std::move(rewrite->state);
    }
    if (recomputed == 0)
        report.details.push_back("no segment has a tensor the backward pass reads later");
    return state;
}
} // namespace

Expected<Transformed> RecomputeStrategy::apply(Transformed state, const StrategyOptions& options) const
{
    StrategyReport report;
    report.name = std::string(name());
    const auto& device = options.device;
    if (options.recomputePolicy == RecomputePolicy::Checkpoint) {
        state = checkpointSegments(std::move(state), options, report);
        state.reports.push_back(std::move(report));
        return state;
    }
    state = greedyGapRewrites(
        std::move(state), kMinGap, [&](const Transformed& s, const IdleGap& gap) { return recomputeGap(s, gap, device); },
        options, report);
    if (report.details.empty())
        report.details.push_back("no recomputation lowers the peak");
    state.reports.push_back(std::move(report));
    return state;
}

} // namespace core
