// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/channelslast.h"

#include "exec/executor.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <string>

namespace core::exec {

namespace {

bool defaultDomain(const Op& op) { return op.domain.empty() || op.domain == "ai.onnx"; }

const Tensor* tensorAt(const Graph& g, TensorIndex t)
{
    return t >= 0 && std::size_t(t) < g.tensors.size() ? &g.tensors[std::size_t(t)] : nullptr;
}

// A float32 activation of known rank-4 shape with H·W > 1: the tensors whose layout matters.
bool spatial(const Tensor& t)
{
    if (t.dtype != DType::Float32 || !t.rankKnown || t.estimated || t.sequence || t.optional || t.shape.size() != 4)
        return false;
    for (auto d : t.shape)
        if (d <= 0)
            return false;
    return t.shape[2] * t.shape[3] > 1;
}

struct Sets {
    std::vector<TensorIndex> parent;
    TensorIndex find(TensorIndex t)
    {
        while (parent[std::size_t(t)] != t)
            t = parent[std::size_t(t)] = parent[std::size_t(parent[std::size_t(t)])];
        return t;
    }
    void join(TensorIndex a, TensorIndex b) { parent[std::size_t(find(a))] = find(b); }
};

std::int64_t intAttr(const Op& op, const std::string& name)
{
    const auto it = op.attributes.find(name);
    return it == op.attributes.end() || it->second.ints.empty() ? 0 : it->second.ints.front();
}

const std::set<std::string> kUnary { "Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSwish", "Clip" };
const std::set<std::string> kCopies { "Identity", "SwapOut", "SwapIn" }; // bytes copied as they are
const std::set<std::string> kBinary { "Add", "Sub", "Mul", "Div" };

} // namespace

std::vector<bool> channelsLastTensors(const Graph& graph)
{
    const std::size_t n = graph.tensors.size();
    std::vector<bool> result(n, false);
    if (cpuKernels() != CpuKernels::OneDnn || !cpuChannelsLast())
        return result;
    Sets sets { std::vector<TensorIndex>(n) };
    std::iota(sets.parent.begin(), sets.parent.end(), TensorIndex(0));
    std::vector<bool> banned(n, false), nearConv(n, false);
    for (std::size_t t = 0; t < n; ++t)
        banned[t] = !spatial(graph.tensors[t]) || graph.tensors[t].kind != TensorKind::Activation;
    for (auto list : { &graph.inputs, &graph.outputs })
        for (auto t : *list)
            if (tensorAt(graph, t))
                banned[std::size_t(t)] = true;
    const auto banAll = [&](const Op& op) {
        for (auto list : { &op.inputs, &op.outputs })
            for (auto t : *list)
                if (tensorAt(graph, t))
                    banned[std::size_t(t)] = true;
    };
    // A fused op's body ops count one by one, its internal tensors among them: the body's kernels then
    // see the layouts the unfused ops see, and compute their bits.
    std::vector<const Op*> ops;
    for (const auto& op : graph.ops) {
        if (op.body.empty())
            ops.push_back(&op);
        for (const auto& part : op.body)
            ops.push_back(&part);
    }
    for (const auto* each : ops) {
        const Op& op = *each;
        const bool known = defaultDomain(op) && op.body.empty() && op.captured.empty() && !op.outputs.empty()
            && std::all_of(op.outputs.begin(), op.outputs.end(), [&](TensorIndex t) { return tensorAt(graph, t); })
            && std::all_of(op.inputs.begin(), op.inputs.end(), [&](TensorIndex t) { return t < 0 || tensorAt(graph, t); });
        if (!known) {
            banAll(op);
            continue;
        }
        const TensorIndex y = op.outputs[0];
        const Tensor& out = graph.tensors[std::size_t(y)];
        const auto input = [&](std::size_t k) { return k < op.inputs.size() ? op.inputs[k] : TensorIndex(-1); };
        if (op.type == "Conv" && op.outputs.size() == 1 && input(0) >= 0 && input(1) >= 0
            && graph.tensors[std::size_t(input(1))].shape.size() == 4) {
            // Either side in either layout: the convolution stages the NCHW one.
            nearConv[std::size_t(input(0))] = true;
            nearConv[std::size_t(y)] = true;
            for (std::size_t k = 1; k < op.inputs.size(); ++k)
                if (input(k) >= 0)
                    banned[std::size_t(input(k))] = true;
        } else if ((kUnary.count(op.type) || kCopies.count(op.type)) && op.outputs.size() == 1 && input(0) >= 0
            && graph.tensors[std::size_t(input(0))].shape == out.shape) {
            sets.join(input(0), y);
        } else if (kBinary.count(op.type) && op.outputs.size() == 1 && op.inputs.size() == 2 && input(0) >= 0 && input(1) >= 0) {
            for (std::size_t k = 0; k < 2; ++k) {
                const Tensor& x = graph.tensors[std::size_t(input(k))];
                if (x.shape == out.shape)
                    sets.join(input(k), y);
                else if (spatial(x) || !x.rankKnown || x.estimated)
                    banAll(op); // a broadcast operand with a spatial extent: NCHW
            }
        } else if ((op.type == "MaxPool" || op.type == "AveragePool") && op.outputs.size() == 1 && input(0) >= 0
            && intAttr(op, "ceil_mode") == 0 && intAttr(op, "storage_order") == 0) {
            sets.join(input(0), y);
        } else if (op.type == "GlobalAveragePool" && op.outputs.size() == 1 && input(0) >= 0) {
            // reads either layout; its output has H·W = 1
        } else {
            banAll(op);
        }
    }
    std::vector<bool> componentBanned(n, false), componentConv(n, false);
    for (std::size_t t = 0; t < n; ++t) {
        const auto root = std::size_t(sets.find(TensorIndex(t)));
        componentBanned[root] = componentBanned[root] || banned[t];
        componentConv[root] = componentConv[root] || nearConv[t];
    }
    for (std::size_t t = 0; t < n; ++t) {
        const auto root = std::size_t(sets.find(TensorIndex(t)));
        result[t] = !componentBanned[root] && componentConv[root];
    }
    return result;
}

} // namespace core::exec
