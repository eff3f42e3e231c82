// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "scenarios/chipstage.h"

#include <algorithm>
#include <unordered_map>

namespace core {

namespace {
bool isHeld(TensorKind kind) { return kind == TensorKind::Weight || kind == TensorKind::Persistent; }
} // namespace

StageIndex indexStages(const Graph& graph, const Schedule& schedule, Bytes alignment)
{
    StageIndex index;
    index.graph = &graph;
    index.schedule = &schedule;
    index.alignment = std::max<Bytes>(alignment, 1);
    const auto tensorCount = graph.tensors.size();
    index.producedAt.assign(tensorCount, -1);
    index.readAt.assign(tensorCount, {});
    index.graphOutput.assign(tensorCount, 0);
    index.weightRoot.assign(tensorCount, -1);
    index.forwardsWeight.assign(schedule.order.size(), 0);
    for (std::size_t t = 0; t < tensorCount; ++t)
        if (isHeld(graph.tensors[t].kind))
            index.weightRoot[t] = static_cast<TensorIndex>(t);
    for (auto t : graph.outputs)
        index.graphOutput[t] = 1;
    for (Step step = 0; step < schedule.steps(); ++step) {
        const auto& op = graph.ops[schedule.order[step]];
        for (auto t : op.outputs)
            index.producedAt[t] = step;
        auto read = [&](TensorIndex t) {
            auto& steps = index.readAt[t];
            if (steps.empty() || steps.back() != step)
                steps.push_back(step);
        };
        for (auto t : op.inputs)
            read(t);
        for (auto t : op.captured)
            read(t);
        // An Identity from a weight to a weight is an alias: the weight is held once, by its readers.
        if (op.type == "Identity" && op.inputs.size() == 1 && op.outputs.size() == 1
            && graph.tensors[op.inputs[0]].kind == TensorKind::Weight && graph.tensors[op.outputs[0]].kind == TensorKind::Weight) {
            index.forwardsWeight[step] = 1;
            index.weightRoot[op.outputs[0]] = index.weightRoot[op.inputs[0]];
        }
    }
    return index;
}

StageProblem buildStageProblem(const StageIndex& index, Step begin, Step end)
{
    const auto& graph = *index.graph;
    const auto& order = index.schedule->order;
    const Step length = end - begin;
    StageProblem stage;
    stage.begin = begin;
    stage.end = end;
    stage.problem.alignment = index.alignment;
    stage.problem.steps = length;

    std::unordered_map<TensorIndex, int> bufferOf;
    // The last read of `t` inside the stage, or -1.
    auto lastReadBefore = [&](TensorIndex t) -> Step {
        const auto& reads = index.readAt[t];
        const auto it = std::lower_bound(reads.begin(), reads.end(), end);
        return it == reads.begin() ? -1 : *std::prev(it);
    };
    auto addBuffer = [&](TensorIndex t, Lifetime life, StageBufferRole role) {
        const auto& tensor = graph.tensors[t];
        bufferOf.emplace(t, static_cast<int>(stage.problem.buffers.size()));
        stage.problem.buffers.push_back(
            Buffer { tensor.name, life, alignUp(tensor.size, index.alignment), tensor.kind, { tensor.name } });
        stage.bufferTensor.push_back(t);
        stage.roles.push_back(role);
    };
    auto touchWeight = [&](TensorIndex t) {
        if (index.weightRoot[t] >= 0)
            stage.weights.push_back(index.weightRoot[t]);
    };

    for (Step step = begin; step < end; ++step) {
        if (index.forwardsWeight[step])
            continue;
        const auto& op = graph.ops[order[step]];
        auto read = [&](TensorIndex t) {
            const auto& tensor = graph.tensors[t];
            if (isHeld(tensor.kind)) {
                touchWeight(t);
                return;
            }
            if (tensor.size <= 0 || bufferOf.count(t) || index.producedAt[t] >= begin)
                return; // empty, seen already, or produced here (placed with its producer)
            addBuffer(t, Lifetime { 0, lastReadBefore(t) - begin + 1 }, StageBufferRole::Received);
        };
        for (auto t : op.inputs)
            read(t);
        for (auto t : op.captured)
            read(t);
        for (auto t : op.outputs) {
            const auto& tensor = graph.tensors[t];
            if (isHeld(tensor.kind)) {
                touchWeight(t);
                continue;
            }
            if (tensor.size <= 0 || bufferOf.count(t))
                continue;
            const auto& reads = index.readAt[t];
            const bool leaves = index.graphOutput[t] || (!reads.empty() && reads.back() >= end);
            const Step local = step - begin;
            if (leaves)
                addBuffer(t, Lifetime { local, length }, StageBufferRole::Sent);
            else
                addBuffer(t, Lifetime { local, std::max(local, lastReadBefore(t) - begin) + 1 }, StageBufferRole::Local);
        }
    }

    std::sort(stage.weights.begin(), stage.weights.end());
    stage.weights.erase(std::unique(stage.weights.begin(), stage.weights.end()), stage.weights.end());
    for (auto t : stage.weights)
        stage.weightBytes += std::max<Bytes>(graph.tensors[t].size, 0);
    for (std::size_t b = 0; b < stage.roles.size(); ++b) {
        if (stage.roles[b] == StageBufferRole::Received)
            stage.receivedBytes += stage.problem.buffers[b].size;
        else if (stage.roles[b] == StageBufferRole::Sent)
            stage.sentBytes += stage.problem.buffers[b].size;
    }
    return stage;
}

} // namespace core
