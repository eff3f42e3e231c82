// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "onnx/onnxorder.h"

#include "onnx/onnxload.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace core::onnxdetail {

namespace {

std::string nodeLabel(const onnx::GraphProto& g, int i)
{
    const auto& node = g.node(i);
    return "'" + (node.name().empty() ? node.op_type() + " " + std::to_string(i) : node.name()) + "' (" + node.op_type() + ")";
}

// Sorts one graph's nodes, then its nodes' subgraphs. `late` takes the first read found ahead of
// its producer, when it is still empty.
Status sortGraph(onnx::GraphProto& g, const std::string& file, std::string& late)
{
    const int n = g.node_size();
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < n; ++i)
        for (const auto& out : g.node(i).output())
            if (!out.empty())
                producer.emplace(out, i); // a second producer is validateModel's to report
    std::vector<std::vector<int>> waitsFor(n), readers(n);
    std::vector<int> pending(n, 0);
    for (int i = 0; i < n; ++i) {
        const auto& node = g.node(i);
        std::vector<std::string> reads(node.input().begin(), node.input().end());
        const auto captured = subgraphReads(node);
        reads.insert(reads.end(), captured.begin(), captured.end());
        std::unordered_set<int> seen;
        for (const auto& name : reads) {
            const auto it = name.empty() ? producer.end() : producer.find(name);
            if (it == producer.end() || !seen.insert(it->second).second)
                continue;
            const int p = it->second;
            if (p == i)
                return makeError(ErrorCode::InvalidModel, file + ": " + nodeDescription(g, i) + " reads '" + name + "', its own output");
            waitsFor[i].push_back(p);
            readers[p].push_back(i);
            ++pending[i];
            if (late.empty() && p > i)
                late = nodeDescription(g, i) + " reads '" + name + "', which " + nodeDescription(g, p) + " makes";
        }
    }

    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (int i = 0; i < n; ++i)
        if (pending[i] == 0)
            ready.push(i);
    std::vector<int> order;
    order.reserve(std::size_t(n));
    std::vector<bool> placed(std::size_t(n), false);
    while (!ready.empty()) {
        const int i = ready.top();
        ready.pop();
        order.push_back(i);
        placed[std::size_t(i)] = true;
        for (int r : readers[i])
            if (--pending[r] == 0)
                ready.push(r);
    }
    if (int(order.size()) < n) {
        // Every unplaced node waits for an unplaced one: walking back from any of them repeats.
        int at = int(std::find(placed.begin(), placed.end(), false) - placed.begin());
        std::vector<int> path;
        std::unordered_map<int, std::size_t> step;
        while (!step.count(at)) {
            step.emplace(at, path.size());
            path.push_back(at);
            at = *std::find_if(waitsFor[at].begin(), waitsFor[at].end(), [&](int p) { return !placed[std::size_t(p)]; });
        }
        std::vector<int> cycle(path.begin() + std::ptrdiff_t(step[at]), path.end());
        std::reverse(cycle.begin(), cycle.end()); // producers first
        std::string text;
        for (int i : cycle)
            text += nodeLabel(g, i) + " -> ";
        text += nodeLabel(g, cycle.front());
        return makeError(ErrorCode::InvalidModel, file + ": the nodes of graph '" + g.name() + "' form a cycle, so no order runs them: " + text);
    }
    if (!std::is_sorted(order.begin(), order.end())) {
        google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
        for (int i : order)
            sorted.Add()->Swap(g.mutable_node(i));
        g.mutable_node()->Swap(&sorted);
    }
    for (auto& node : *g.mutable_node())
        for (auto& a : *node.mutable_attribute()) {
            if (a.has_g())
                if (auto s = sortGraph(*a.mutable_g(), file, late); !s)
                    return s;
            for (auto& sub : *a.mutable_graphs())
                if (auto s = sortGraph(sub, file, late); !s)
                    return s;
        }
    return {};
}

} // namespace

Expected<std::string> sortNodes(onnx::ModelProto& model, const std::string& file)
{
    std::string late;
    if (auto s = sortGraph(*model.mutable_graph(), file, late); !s)
        return s.error();
    return late;
}

} // namespace core::onnxdetail
