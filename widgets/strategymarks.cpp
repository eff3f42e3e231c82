// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategymarks.h"

#include "planners/metrics.h"
#include "util/format.h"

#include <algorithm>
#include <map>
#include <optional>

namespace {

bool endsWith(const std::string& text, const std::string& suffix)
{
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Step of every op in a schedule (-1: not scheduled).
std::vector<core::Step> stepsOf(const core::Graph& graph, const core::Schedule& schedule)
{
    std::vector<core::Step> step(graph.ops.size(), -1);
    for (core::Step s = 0; s < schedule.steps(); ++s)
        step[static_cast<std::size_t>(schedule.order[s])] = s;
    return step;
}

// Per tensor of `after`, the tensor of `before` of the same name (-1: none). Strategies keep the
// names of the tensors they keep; simplify renumbers them, so indices do not carry over.
std::vector<core::TensorIndex> originalTensors(const core::Graph& before, const core::Graph& after)
{
    std::map<std::string, core::TensorIndex> byName;
    for (std::size_t t = 0; t < before.tensors.size(); ++t)
        byName.emplace(before.tensors[t].name, static_cast<core::TensorIndex>(t));
    std::vector<core::TensorIndex> original(after.tensors.size(), -1);
    for (std::size_t t = 0; t < after.tensors.size(); ++t)
        if (const auto it = byName.find(after.tensors[t].name); it != byName.end())
            original[t] = it->second;
    return original;
}
} // namespace

unsigned StrategyFacts::presentMarks() const
{
    unsigned all = 0;
    for (unsigned m : marks)
        all |= m;
    return all;
}

int StrategyFacts::countWith(StrategyMark mark) const
{
    return static_cast<int>(std::count_if(marks.begin(), marks.end(), [mark](unsigned m) { return (m & mark) != 0; }));
}

const char* strategyMarkName(StrategyMark mark)
{
    switch (mark) {
    case MarkFused:
        return "fused";
    case MarkInPlace:
        return "in-place";
    case MarkRecomputed:
        return "recomputed";
    case MarkSwapOut:
        return "swap-out";
    case MarkSwapIn:
        return "swap-in";
    case MarkNone:
        break;
    }
    return "unchanged";
}

std::vector<core::Bytes> alignBeforeCurve(const core::Workload& original, const core::Transformed& state)
{
    if (!original.graph)
        return {};
    const core::Graph& before = *original.graph;
    const auto curve = core::liveBytesCurve(original.problem);
    const auto originalOf = originalTensors(before, state.graph);
    // Original step of each original tensor's producer.
    std::vector<core::Step> producedAt(before.tensors.size(), -1);
    for (core::Step s = 0; s < original.schedule.steps(); ++s)
        for (auto t : before.ops[static_cast<std::size_t>(original.schedule.order[s])].outputs)
            producedAt[static_cast<std::size_t>(t)] = s;
    auto valueAt = [&](core::Step s) {
        return s >= 0 && s < static_cast<core::Step>(curve.size()) ? curve[static_cast<std::size_t>(s)] : core::Bytes(0);
    };

    // Original tensors the new graph still produces; an original op whose outputs are all gone was fused away.
    std::vector<bool> stillProduced(before.tensors.size(), false);
    for (const auto& op : state.graph.ops)
        for (auto t : op.outputs)
            if (const auto o = originalOf[static_cast<std::size_t>(t)]; o >= 0)
                stillProduced[static_cast<std::size_t>(o)] = true;
    // Readers of each original tensor in the original graph, to walk a fused-away op to its group's last op.
    std::vector<std::vector<core::OpIndex>> readers(before.tensors.size());
    for (core::OpIndex o = 0; o < static_cast<core::OpIndex>(before.ops.size()); ++o)
        for (auto t : before.ops[static_cast<std::size_t>(o)].inputs)
            readers[static_cast<std::size_t>(t)].push_back(o);
    // Largest original value folded into the op that produces each surviving original tensor.
    std::map<core::TensorIndex, core::Bytes> folded;
    for (core::Step s = 0; s < original.schedule.steps(); ++s) {
        const auto* op = &before.ops[static_cast<std::size_t>(original.schedule.order[s])];
        if (op->outputs.empty() || stillProduced[static_cast<std::size_t>(op->outputs[0])])
            continue;
        // Fusion only folds an op whose single output has a single reader: follow that chain.
        for (int hops = 0; hops < 64 && op->outputs.size() == 1; ++hops) {
            const auto& next = readers[static_cast<std::size_t>(op->outputs[0])];
            if (next.size() != 1)
                break;
            op = &before.ops[static_cast<std::size_t>(next[0])];
            if (!op->outputs.empty() && stillProduced[static_cast<std::size_t>(op->outputs[0])]) {
                auto& value = folded[op->outputs[0]];
                value = std::max(value, valueAt(s));
                break;
            }
        }
    }

    std::vector<core::Bytes> aligned(static_cast<std::size_t>(state.schedule.steps()), 0);
    core::Bytes previous = curve.empty() ? 0 : curve.front();
    for (core::Step k = 0; k < state.schedule.steps(); ++k) {
        const auto& op = state.graph.ops[static_cast<std::size_t>(state.schedule.order[k])];
        std::optional<core::Bytes> value;
        for (auto t : op.outputs) {
            t = originalOf[static_cast<std::size_t>(t)];
            if (t < 0 || producedAt[static_cast<std::size_t>(t)] < 0)
                continue;
            value = valueAt(producedAt[static_cast<std::size_t>(t)]);
            if (auto it = folded.find(t); it != folded.end())
                value = std::max(*value, it->second);
            break;
        }
        previous = value.value_or(previous);
        aligned[static_cast<std::size_t>(k)] = previous;
    }
    return aligned;
}

std::vector<double> stepsOnOriginalAxis(const core::Workload& original, const core::Workload& transformed)
{
    if (!original.graph || !transformed.graph || transformed.schedule.steps() != transformed.problem.steps)
        return {};
    const core::Graph& before = *original.graph;
    const core::Graph& after = *transformed.graph;
    std::vector<core::Step> producedAt(before.tensors.size(), -1);
    for (core::Step s = 0; s < original.schedule.steps(); ++s)
        for (auto t : before.ops[static_cast<std::size_t>(original.schedule.order[s])].outputs)
            producedAt[static_cast<std::size_t>(t)] = s;
    const auto originalOf = originalTensors(before, after);
    const core::Step steps = transformed.schedule.steps();
    std::vector<core::Step> mapped(static_cast<std::size_t>(steps), -1);
    const auto originalStep = [&](core::TensorIndex t) {
        const auto o = t >= 0 && t < static_cast<core::TensorIndex>(originalOf.size()) ? originalOf[static_cast<std::size_t>(t)] : -1;
        return o >= 0 ? producedAt[static_cast<std::size_t>(o)] : core::Step(-1);
    };
    for (core::Step k = 0; k < steps; ++k) {
        const core::Op& op = after.ops[static_cast<std::size_t>(transformed.schedule.order[k])];
        core::Step& at = mapped[static_cast<std::size_t>(k)];
        // A fused group starts where its first member ran, so it spans all its members' steps.
        for (const core::Op& member : op.body)
            for (auto t : member.outputs)
                if (const core::Step s = originalStep(t); s >= 0 && (at < 0 || s < at))
                    at = s;
        for (auto t : op.outputs)
            if (at < 0)
                at = originalStep(t);
    }
    std::vector<double> x(static_cast<std::size_t>(steps), 0.0);
    for (core::Step k = 0; k < steps;) {
        if (mapped[static_cast<std::size_t>(k)] >= 0) {
            x[static_cast<std::size_t>(k)] = static_cast<double>(mapped[static_cast<std::size_t>(k)]);
            ++k;
            continue;
        }
        // A run of inserted ops: after the op before them (or before step 0's op when they lead).
        core::Step end = k;
        while (end < steps && mapped[static_cast<std::size_t>(end)] < 0)
            ++end;
        const double base = k > 0 ? x[static_cast<std::size_t>(k - 1)] : -1.0;
        const double count = static_cast<double>(end - k);
        for (core::Step i = k; i < end; ++i)
            x[static_cast<std::size_t>(i)] = base + static_cast<double>(i - k + 1) / (count + 1.0);
        k = end;
    }
    return x;
}

StrategyFacts computeStrategyFacts(const core::Workload& original, std::shared_ptr<const core::Workload> transformed,
    const core::Transformed& state)
{
    StrategyFacts facts;
    facts.workload = std::move(transformed);
    const core::Workload& workload = *facts.workload;
    const auto buffers = workload.problem.buffers.size();
    facts.marks.assign(buffers, MarkNone);
    facts.notes.assign(buffers, {});
    facts.beforeCurve = alignBeforeCurve(original, state);
    facts.beforeLowerBound = core::lowerBound(original.problem);

    const core::Graph& graph = state.graph;
    const auto step = stepsOf(graph, state.schedule);
    const auto producer = core::producers(graph);
    std::map<core::TensorIndex, int> bufferOfRoot;
    for (std::size_t b = 0; b < workload.bufferTensor.size() && b < buffers; ++b)
        if (workload.bufferTensor[b] >= 0) // an op's workspace has no tensor: no strategy marks it
            bufferOfRoot[workload.bufferTensor[b]] = static_cast<int>(b);
    auto bufferOf = [&](core::TensorIndex t) {
        if (t < 0 || static_cast<std::size_t>(t) >= state.onHost.size() || state.onHost[static_cast<std::size_t>(t)])
            return -1;
        const auto it = bufferOfRoot.find(state.bufferRoot(t));
        return it == bufferOfRoot.end() ? -1 : it->second;
    };
    auto mark = [&](int b, StrategyMark m, std::string note) {
        if (b < 0)
            return;
        facts.marks[static_cast<std::size_t>(b)] |= m;
        auto& lines = facts.notes[static_cast<std::size_t>(b)];
        if (std::find(lines.begin(), lines.end(), note) == lines.end())
            lines.push_back(std::move(note));
    };
    auto nameOf = [&](core::TensorIndex t) { return graph.tensors[static_cast<std::size_t>(t)].name; };

    for (core::TensorIndex t = 0; t < static_cast<core::TensorIndex>(graph.tensors.size()); ++t) {
        const int b = bufferOf(t);
        if (b < 0)
            continue;
        const core::TensorIndex root = state.bufferRoot(t);
        const core::OpIndex p = producer[static_cast<std::size_t>(t)];
        const core::OpIndex rootProducer = producer[static_cast<std::size_t>(root)];
        const bool joined = p >= 0 && graph.ops[static_cast<std::size_t>(p)].type == "Concat";
        if (root != t && joined)
            mark(b, MarkInPlace,
                "in-place: Concat output " + nameOf(t) + " is a view of its inputs' range of Concat output " + nameOf(root)
                    + " (at +" + core::formatBytes(state.offsetInRoot(t)) + "): it copies nothing");
        else if (root != t && rootProducer >= 0 && graph.ops[static_cast<std::size_t>(rootProducer)].type == "Concat")
            mark(b, MarkInPlace,
                "in-place: " + nameOf(t) + " is written into its slice of Concat output " + nameOf(root) + " (at +"
                    + core::formatBytes(state.offsetInRoot(t)) + ")");
        else if (root != t)
            mark(b, MarkInPlace, "in-place: " + nameOf(t) + " is written into " + nameOf(root) + "'s buffer");
        if (p < 0)
            continue;
        const core::Op& op = graph.ops[static_cast<std::size_t>(p)];
        if (op.type == "Fused") {
            const auto types = op.attributes.find("fused_types");
            mark(b, MarkFused,
                "fuse: written by fused op " + op.name
                    + (types != op.attributes.end() ? " (" + types->second.text + ")" : std::string()));
        } else if (op.type == "SwapIn") {
            const auto source = state.origin[static_cast<std::size_t>(t)];
            mark(b, MarkSwapIn,
                "swap: " + nameOf(source) + " back from host at step " + std::to_string(step[static_cast<std::size_t>(p)]));
        } else if (endsWith(op.name, ".recompute")) {
            const auto source = state.origin[static_cast<std::size_t>(t)];
            mark(b, MarkRecomputed,
                "recompute: copy of " + nameOf(source) + ", re-run by " + op.name.substr(0, op.name.size() - 10)
                    + " at step " + std::to_string(step[static_cast<std::size_t>(p)]));
            // The original: dropped after its early reads.
            if (const int first = bufferOf(source); first >= 0 && source != t)
                facts.notes[static_cast<std::size_t>(first)].push_back(
                    "recompute: dropped early, recomputed as " + nameOf(t));
        }
    }

    // Host trips: SwapOut reads the device value and writes the host copy; SwapIn reads that copy back.
    for (core::Step s = 0; s < state.schedule.steps(); ++s) {
        const core::Op& out = graph.ops[static_cast<std::size_t>(state.schedule.order[s])];
        if (out.type != "SwapOut" || out.inputs.empty() || out.outputs.empty())
            continue;
        HostTrip trip;
        trip.outBuffer = bufferOf(out.inputs[0]);
        trip.swapOutStep = s;
        trip.tensor = nameOf(state.origin[static_cast<std::size_t>(out.inputs[0])]);
        trip.size = graph.tensors[static_cast<std::size_t>(out.inputs[0])].size;
        const core::TensorIndex host = out.outputs[0];
        for (core::Step r = s + 1; r < state.schedule.steps(); ++r) {
            const core::Op& in = graph.ops[static_cast<std::size_t>(state.schedule.order[r])];
            if (in.type == "SwapIn" && !in.inputs.empty() && in.inputs[0] == host && !in.outputs.empty()) {
                trip.inBuffer = bufferOf(in.outputs[0]);
                trip.swapInStep = r;
                break;
            }
        }
        mark(trip.outBuffer, MarkSwapOut,
            "swap: " + trip.tensor + " (" + core::formatBytes(trip.size) + ") goes to host at step " + std::to_string(s)
                + (trip.inBuffer >= 0 ? ", back at step " + std::to_string(trip.swapInStep) : std::string()));
        if (trip.outBuffer >= 0 && trip.inBuffer >= 0)
            facts.trips.push_back(std::move(trip));
    }
    return facts;
}
