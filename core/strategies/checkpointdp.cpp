// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/checkpointdp.h"

#include "cost/opcost.h"
#include "strategies/recompute.h"
#include "strategies/training.h"

#include <algorithm>
#include <limits>
#include <set>

namespace core {

CheckpointChain checkpointChain(const Transformed& state, const DeviceProfile& device, int maxCandidates)
{
    CheckpointChain chain;
    const auto& graph = state.graph;
    const Step forwardEnd = backwardStart(graph, state.schedule);
    if (forwardEnd >= state.schedule.steps())
        return chain;
    const auto reads = readSteps(graph, state.schedule);
    const auto n = static_cast<std::size_t>(forwardEnd);
    chain.bytes.assign(n, 0);
    chain.keep.assign(n, 0);
    chain.seconds.assign(n, 0.0);
    chain.forced.assign(n, false);
    chain.candidate.assign(n, true);
    chain.inputs.assign(n, {});
    std::vector<Step> madeAt(graph.tensors.size(), -1);
    for (std::size_t s = 0; s < n; ++s)
        for (auto out : graph.ops[state.schedule.order[s]].outputs)
            madeAt[std::size_t(out)] = static_cast<Step>(s);
    for (std::size_t s = 0; s < n; ++s) {
        for (auto in : graph.ops[state.schedule.order[s]].inputs) {
            const auto& tensor = graph.tensors[std::size_t(in)];
            if (madeAt[std::size_t(in)] >= 0 && tensor.kind == TensorKind::Activation && tensor.size > 0)
                chain.inputs[s].push_back({ madeAt[std::size_t(in)], tensor.size });
        }
        const auto& op = graph.ops[state.schedule.order[s]];
        chain.seconds[s] = opSeconds(graph, op, device);
        chain.forced[s] = opCannotRerun(graph, op);
        for (auto out : op.outputs) {
            const auto& tensor = graph.tensors[out];
            const auto& when = reads[out];
            if (tensor.kind != TensorKind::Activation || tensor.size <= 0 || state.onHost[out])
                continue;
            chain.keep[s] += tensor.size;
            if (!when.empty() && when.back() >= forwardEnd)
                chain.bytes[s] += tensor.size;
        }
    }
    if (maxCandidates > 0 && n > static_cast<std::size_t>(maxCandidates)) {
        // Block ends only: block b holds steps [b * n / m, (b + 1) * n / m).
        const auto m = static_cast<std::size_t>(maxCandidates);
        std::fill(chain.candidate.begin(), chain.candidate.end(), false);
        for (std::size_t b = 1; b <= m; ++b)
            chain.candidate[b * n / m - 1] = true;
    }
    for (std::size_t s = 0; s < n; ++s)
        if (chain.forced[s])
            chain.candidate[s] = true;
    return chain;
}

Bytes CheckpointChain::skipBytes(Step last, Step c) const
{
    std::set<std::pair<Step, Bytes>> seen;
    Bytes held = 0;
    if (inputs.empty())
        return 0;
    for (Step s = last + 1; s < c; ++s)
        for (const auto& [from, bytes] : inputs[std::size_t(s)])
            if (from < last && seen.insert({ from, bytes }).second)
                held += bytes;
    return held;
}

std::vector<Step> withForcedCheckpoints(const CheckpointChain& chain, std::vector<Step> checkpoints)
{
    const Step last = checkpoints.empty() ? -1 : *std::max_element(checkpoints.begin(), checkpoints.end());
    for (Step s = 0; s < last; ++s)
        if (chain.forced[std::size_t(s)])
            checkpoints.push_back(s);
    std::sort(checkpoints.begin(), checkpoints.end());
    checkpoints.erase(std::unique(checkpoints.begin(), checkpoints.end()), checkpoints.end());
    return checkpoints;
}

CheckpointChoice checkpointModel(const CheckpointChain& chain, std::vector<Step> checkpoints)
{
    checkpoints = withForcedCheckpoints(chain, std::move(checkpoints));
    CheckpointChoice choice;
    Bytes prefix = 0;
    Step previous = -1;
    for (auto c : checkpoints) {
        Bytes segment = 0;
        for (Step s = previous + 1; s < c; ++s) {
            segment += chain.bytes[std::size_t(s)];
            choice.modelSeconds += chain.seconds[std::size_t(s)];
        }
        const Bytes skip = chain.skipBytes(previous, c);
        choice.modelPeak = std::max(choice.modelPeak, prefix + skip + segment + chain.kept(c));
        prefix += skip + chain.kept(c);
        previous = c;
    }
    Bytes tail = 0;
    for (Step s = previous + 1; s < chain.steps(); ++s)
        tail += chain.bytes[std::size_t(s)];
    choice.modelPeak = std::max(choice.modelPeak, prefix + tail);
    choice.checkpoints = std::move(checkpoints);
    return choice;
}

namespace {
struct Entry {
    Bytes held = 0;    // bytes of the checkpoints so far, this one included
    double seconds = 0; // recompute seconds so far
    Bytes peak = 0;    // model peak so far
    int from = -1;     // previous state (candidate index; -1: the start)
    int fromEntry = -1;
};

// Keeps the entries no other entry beats in both held bytes and seconds, by held bytes ascending; above
// `cap`, evenly spaced ones (the first and the last always).
void prune(std::vector<Entry>& list, int cap)
{
    std::sort(list.begin(), list.end(), [](const Entry& a, const Entry& b) {
        return a.held != b.held ? a.held < b.held : (a.seconds != b.seconds ? a.seconds < b.seconds : a.peak < b.peak);
    });
    std::vector<Entry> kept;
    for (const auto& e : list)
        if (kept.empty() || e.seconds < kept.back().seconds)
            kept.push_back(e);
    if (cap > 1 && kept.size() > static_cast<std::size_t>(cap)) {
        std::vector<Entry> thinned;
        for (int i = 0; i < cap; ++i)
            thinned.push_back(kept[std::size_t(i) * (kept.size() - 1) / std::size_t(cap - 1)]);
        kept = std::move(thinned);
    }
    list = std::move(kept);
}
} // namespace

std::optional<CheckpointChoice> bestCheckpoints(const CheckpointChain& chain, Bytes budget, int listCap)
{
    const int n = chain.steps();
    if (n == 0)
        return std::nullopt;
    std::vector<Bytes> bytesBefore(std::size_t(n) + 1, 0); // prefix sums
    std::vector<double> secondsBefore(std::size_t(n) + 1, 0.0);
    for (int s = 0; s < n; ++s) {
        bytesBefore[std::size_t(s) + 1] = bytesBefore[std::size_t(s)] + chain.bytes[std::size_t(s)];
        secondsBefore[std::size_t(s) + 1] = secondsBefore[std::size_t(s)] + chain.seconds[std::size_t(s)];
    }
    std::vector<Step> position; // candidate steps, ascending
    for (int s = 0; s < n; ++s)
        if (chain.candidate[std::size_t(s)])
            position.push_back(s);
    const int m = static_cast<int>(position.size());
    std::vector<std::vector<Entry>> lists(static_cast<std::size_t>(m));
    // Best final state: (seconds, peak, candidate index or -1 for none, entry).
    double bestSeconds = std::numeric_limits<double>::infinity();
    Bytes bestPeak = 0;
    int bestState = -2, bestEntry = -1;
    const auto finish = [&](int state, int entry, const Entry& e, Step last) {
        const Bytes peak = std::max(e.peak, e.held + bytesBefore[std::size_t(n)] - bytesBefore[std::size_t(last) + 1]);
        if (peak <= budget && (e.seconds < bestSeconds || (e.seconds == bestSeconds && peak < bestPeak))) {
            bestSeconds = e.seconds;
            bestPeak = peak;
            bestState = state;
            bestEntry = entry;
        }
    };
    // skips[j]: what the segment from the current state's checkpoint to candidate j holds of before it.
    std::vector<Bytes> skips(static_cast<std::size_t>(m), 0);
    // Transitions into candidate j from a state whose last checkpoint is `last`.
    const auto expand = [&](int state, int entry, const Entry& e, Step last) {
        for (int j = 0; j < m; ++j) {
            const Step c = position[std::size_t(j)];
            if (c <= last)
                continue;
            const Bytes segment = bytesBefore[std::size_t(c)] - bytesBefore[std::size_t(last) + 1];
            Entry next;
            const Bytes skip = skips[std::size_t(j)];
            next.peak = std::max(e.peak, e.held + skip + segment + chain.kept(c));
            if (e.held + skip + segment > budget)
                break; // later candidates only hold more
            if (next.peak > budget) {
                if (chain.forced[std::size_t(c)])
                    break; // a forced checkpoint may not fall inside a segment
                continue;
            }
            next.held = e.held + skip + chain.kept(c);
            next.seconds = e.seconds + secondsBefore[std::size_t(c)] - secondsBefore[std::size_t(last) + 1];
            next.from = state;
            next.fromEntry = entry;
            lists[std::size_t(j)].push_back(next);
            if (chain.forced[std::size_t(c)])
                break; // a forced checkpoint may not fall inside a segment
        }
    };
    const auto skipsFrom = [&](Step last) {
        std::set<std::pair<Step, Bytes>> seen; // as CheckpointChain::skipBytes counts
        if (chain.inputs.empty())
            return;
        Bytes held = 0;
        Step s = last + 1;
        for (int j = 0; j < m; ++j) {
            const Step c = position[std::size_t(j)];
            for (; s < c; ++s) // segment steps (last, c)
                for (const auto& [from, bytes] : chain.inputs[std::size_t(s)])
                    if (from < last && seen.insert({ from, bytes }).second)
                        held += bytes;
            skips[std::size_t(j)] = c > last ? held : 0;
        }
    };
    const Entry start;
    finish(-1, -1, start, -1);
    skipsFrom(-1);
    expand(-1, -1, start, -1);
    for (int i = 0; i < m; ++i) {
        prune(lists[std::size_t(i)], listCap);
        skipsFrom(position[std::size_t(i)]);
        for (int k = 0; k < static_cast<int>(lists[std::size_t(i)].size()); ++k) {
            const auto e = lists[std::size_t(i)][std::size_t(k)];
            finish(i, k, e, position[std::size_t(i)]);
            expand(i, k, e, position[std::size_t(i)]);
        }
    }
    if (bestState == -2)
        return std::nullopt;
    std::vector<Step> checkpoints;
    for (int state = bestState, entry = bestEntry; state >= 0;) {
        checkpoints.push_back(position[std::size_t(state)]);
        const auto& e = lists[std::size_t(state)][std::size_t(entry)];
        state = e.from;
        entry = e.fromEntry;
    }
    std::reverse(checkpoints.begin(), checkpoints.end());
    // The state's own account (a list thinned by `listCap` keeps exact entries, so it matches the model).
    return checkpointModel(chain, std::move(checkpoints));
}

std::vector<CheckpointChoice> checkpointSweep(const CheckpointChain& chain, int budgets, int listCap)
{
    std::vector<CheckpointChoice> choices;
    if (chain.steps() == 0 || budgets < 1)
        return choices;
    Bytes high = 0;
    for (int s = 0; s < chain.steps(); ++s)
        high += chain.kept(s);
    // The least feasible budget: the program is monotone in it.
    Bytes low = 0, top = high;
    while (low < top) {
        const Bytes mid = low + (top - low) / 2;
        if (bestCheckpoints(chain, mid, listCap))
            top = mid;
        else
            low = mid + 1;
    }
    std::set<std::vector<Step>> seen;
    for (int i = 0; i < budgets; ++i) {
        const double f = budgets == 1 ? 0.0 : static_cast<double>(i) / (budgets - 1);
        const auto budget = static_cast<Bytes>(static_cast<double>(low) + f * static_cast<double>(high - low));
        auto choice = bestCheckpoints(chain, std::max(budget, low), listCap);
        if (!choice || choice->modelSeconds <= 0 || !seen.insert(choice->checkpoints).second)
            continue;
        choices.push_back(std::move(*choice));
    }
    return choices;
}

} // namespace core
