// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "schedule/schedule.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace core {

namespace {
// Ops each op depends on (producers of its inputs and captured tensors), without duplicates.
std::vector<std::vector<OpIndex>> dependencies(const Graph& graph, const std::vector<OpIndex>& producer)
{
    std::vector<std::vector<OpIndex>> deps(graph.ops.size());
    for (std::size_t op = 0; op < graph.ops.size(); ++op) {
        auto add = [&](TensorIndex t) {
            const auto p = producer[t];
            if (p >= 0 && std::find(deps[op].begin(), deps[op].end(), p) == deps[op].end())
                deps[op].push_back(p);
        };
        for (auto t : graph.ops[op].inputs)
            add(t);
        for (auto t : graph.ops[op].captured)
            add(t);
    }
    return deps;
}

std::string describeCycle(const Graph& graph, const std::vector<std::vector<OpIndex>>& deps, const std::vector<bool>& done)
{
    // Walk dependencies among the unscheduled ops until one repeats: that walk closes a cycle.
    OpIndex start = 0;
    while (done[start])
        ++start;
    std::vector<int> seenAt(graph.ops.size(), -1);
    std::vector<OpIndex> path;
    OpIndex current = start;
    while (seenAt[current] < 0) {
        seenAt[current] = static_cast<int>(path.size());
        path.push_back(current);
        OpIndex next = -1;
        for (auto d : deps[current])
            if (!done[d]) {
                next = d;
                break;
            }
        if (next < 0)
            break; // cannot happen for an unschedulable op, but never loop forever
        current = next;
    }
    // path[i] depends on path[i + 1], and the last one depends on path[from]: data flows backwards along path.
    auto label = [&](OpIndex op) { return "'" + (graph.ops[op].name.empty() ? graph.ops[op].type + "#" + std::to_string(op) : graph.ops[op].name) + "'"; };
    const int from = seenAt[current] >= 0 ? seenAt[current] : 0;
    std::string text;
    for (int i = static_cast<int>(path.size()) - 1; i >= from; --i)
        text += label(path[i]) + " -> ";
    text += label(path.back());
    return text;
}
} // namespace

Expected<Schedule> modelOrder(const Graph& graph)
{
    std::vector<OpIndex> producer(graph.tensors.size(), -1);
    for (std::size_t op = 0; op < graph.ops.size(); ++op)
        for (auto t : graph.ops[op].outputs) {
            if (producer[t] >= 0)
                return makeError(ErrorCode::InvalidModel,
                    "tensor '" + graph.tensors[t].name + "' is produced by two ops: '" + graph.ops[producer[t]].name
                        + "' and '" + graph.ops[op].name + "'");
            producer[t] = static_cast<OpIndex>(op);
        }
    const auto deps = dependencies(graph, producer);

    Schedule schedule;
    schedule.order.resize(graph.ops.size());
    for (std::size_t i = 0; i < graph.ops.size(); ++i)
        schedule.order[i] = static_cast<OpIndex>(i);
    if (isTopological(graph, schedule))
        return schedule;

    // Kahn's algorithm, always taking the ready op that comes first in model order.
    std::vector<std::vector<OpIndex>> users(graph.ops.size());
    std::vector<int> pending(graph.ops.size(), 0);
    for (std::size_t op = 0; op < graph.ops.size(); ++op) {
        pending[op] = static_cast<int>(deps[op].size());
        for (auto d : deps[op])
            users[d].push_back(static_cast<OpIndex>(op));
    }
    std::priority_queue<OpIndex, std::vector<OpIndex>, std::greater<>> ready;
    for (std::size_t op = 0; op < graph.ops.size(); ++op)
        if (pending[op] == 0)
            ready.push(static_cast<OpIndex>(op));
    schedule.order.clear();
    std::vector<bool> done(graph.ops.size(), false);
    while (!ready.empty()) {
        const auto op = ready.top();
        ready.pop();
        done[op] = true;
        schedule.order.push_back(op);
        for (auto u : users[op])
            if (--pending[u] == 0)
                ready.push(u);
    }
    if (schedule.order.size() != graph.ops.size())
        return makeError(ErrorCode::InvalidModel, "the graph has a cycle: " + describeCycle(graph, deps, done));
    return schedule;
}

bool isTopological(const Graph& graph, const Schedule& schedule)
{
    if (schedule.order.size() != graph.ops.size())
        return false;
    std::vector<bool> produced(graph.tensors.size(), true);
    for (const auto& op : graph.ops)
        for (auto t : op.outputs)
            produced[t] = false;
    std::vector<bool> seen(graph.ops.size(), false);
    for (auto opIndex : schedule.order) {
        if (opIndex < 0 || opIndex >= static_cast<OpIndex>(graph.ops.size()) || seen[opIndex])
            return false;
        seen[opIndex] = true;
        const auto& op = graph.ops[opIndex];
        for (auto t : op.inputs)
            if (!produced[t])
                return false;
        for (auto t : op.captured)
            if (!produced[t])
                return false;
        for (auto t : op.outputs)
            produced[t] = true;
    }
    return true;
}

} // namespace core
