// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/fusion.h"

#include "cost/opcost.h"

#include <algorithm>
#include <set>

namespace core {

namespace {
// The ops a chain may start with besides epilogues: the heavy ops, and the pooling ops (in a
// quantized model DQ -> MaxPool -> QuantizeLinear is a group like DQ -> Conv -> QuantizeLinear).
bool isAnchor(const std::string& type)
{
    return type == "Conv" || type == "ConvTranspose" || type == "Gemm" || type == "MatMul" || type == "MaxPool"
        || type == "AveragePool" || type == "GlobalAveragePool" || type == "GlobalMaxPool";
}

// A DequantizeLinear is never an epilogue: a chain ending in one would write the float tensor a QDQ
// model keeps out of memory. It joins the chain of the op that reads it instead (a prologue).
bool isEpilogue(const std::string& type)
{
    return type != "DequantizeLinear" && (type == "BatchNormalization" || isElementwiseOp(type));
}
} // namespace

Expected<Transformed> FusionStrategy::apply(Transformed state, const StrategyOptions& options) const
{
    auto& graph = state.graph;
    const auto& order = state.schedule.order;
    const Step steps = state.schedule.steps();
    std::vector<Step> stepOf(graph.ops.size(), -1);
    for (Step s = 0; s < steps; ++s)
        stepOf[order[s]] = s;
    // Readers of each tensor (op indices) and whether it is a graph output.
    std::vector<std::vector<OpIndex>> readers(graph.tensors.size());
    for (auto o : order) {
        for (const auto* list : { &graph.ops[o].inputs, &graph.ops[o].captured })
            for (auto t : *list)
                if (std::find(readers[t].begin(), readers[t].end(), o) == readers[t].end())
                    readers[t].push_back(o);
    }
    const auto producerOf = producers(graph);
    std::vector<bool> isOutput(graph.tensors.size(), false);
    for (auto t : graph.outputs)
        isOutput[t] = true;

    // An op that reads or writes a tensor sized by an upper bound (its shape known only at run time:
    // after NonZero, NMS, ...) stays out of every group: a fused kernel runs on planned shapes.
    const auto bounded = [&](OpIndex o) {
        const auto& op = graph.ops[o];
        const auto estimated = [&](TensorIndex t) { return graph.tensors[std::size_t(t)].estimated; };
        return std::any_of(op.inputs.begin(), op.inputs.end(), estimated) || std::any_of(op.outputs.begin(), op.outputs.end(), estimated);
    };

    StrategyReport report;
    report.name = std::string(name());
    std::vector<bool> inChain(graph.ops.size(), false);
    std::vector<bool> removed(graph.ops.size(), false);
    double savedTraffic = 0;
    for (Step s = 0; s < steps; ++s) {
        const auto first = order[s];
        const auto& head = graph.ops[first];
        if (inChain[first] || head.outputs.size() != 1 || !head.captured.empty()
            || !(isAnchor(head.type) || isEpilogue(head.type)) || bounded(first))
            continue;
        if (head.type == "DequantizeLinear")
            continue; // a prologue of its reader's chain
        std::vector<OpIndex> chain { first };
        while (true) {
            const auto& last = graph.ops[chain.back()];
            if (last.outputs.size() != 1)
                break;
            const auto t = last.outputs[0];
            if (isOutput[t] || readers[t].size() != 1 || graph.tensors[t].kind != TensorKind::Activation)
                break;
            const auto next = readers[t][0];
            const auto& op = graph.ops[next];
            if (inChain[next] || !isEpilogue(op.type) || op.outputs.size() != 1 || !op.captured.empty() || bounded(next))
                break;
            chain.push_back(next);
        }
        // Prologues: a DequantizeLinear whose float output only this chain op reads runs inside the
        // group, just before its reader, so the float tensor never exists (the QDQ form of a
        // quantized model: DQ(x), DQ(w), DQ(bias) -> Conv -> Relu -> QuantizeLinear).
        std::vector<OpIndex> members;
        for (auto o : chain) {
            for (auto t : graph.ops[o].inputs) {
                const auto producer = producerOf[std::size_t(t)];
                if (producer < 0 || graph.tensors[t].kind != TensorKind::Activation || isOutput[t] || readers[t].size() != 1)
                    continue;
                const auto& dq = graph.ops[producer];
                if (dq.type == "DequantizeLinear" && !inChain[producer] && dq.outputs.size() == 1 && dq.captured.empty() && !bounded(producer)
                    && std::find(members.begin(), members.end(), producer) == members.end())
                    members.push_back(producer);
            }
            members.push_back(o);
        }
        if (members.size() < 2)
            continue;
        for (auto o : members)
            inChain[o] = true;

        // Outside inputs in first-use order; intermediates are the outputs of all but the last op.
        std::set<TensorIndex> intermediates;
        for (std::size_t i = 0; i + 1 < members.size(); ++i)
            intermediates.insert(graph.ops[members[i]].outputs[0]);
        Op fused;
        fused.type = "Fused";
        // Named after the chain's ops; the prologues are counted in the types ("DequantizeLinear x3+Conv+...").
        std::string types;
        int prologues = 0;
        for (auto o : members) {
            const auto& op = graph.ops[o];
            if (std::find(chain.begin(), chain.end(), o) == chain.end()) {
                ++prologues;
            } else {
                fused.name += (fused.name.empty() ? "" : "+") + op.name;
                types += (types.empty() ? "" : "+") + op.type;
            }
            for (auto t : op.inputs)
                if (!intermediates.count(t) && std::find(fused.inputs.begin(), fused.inputs.end(), t) == fused.inputs.end())
                    fused.inputs.push_back(t);
            state.fusedOps.push_back(op.name);
            fused.body.push_back(op); // with its attributes: an executor runs the group op by op
        }
        fused.outputs = graph.ops[chain.back()].outputs;
        if (prologues > 0)
            types = "DequantizeLinear x" + std::to_string(prologues) + "+" + types;
        fused.attributes["fused_types"].text = types;
        for (auto t : intermediates)
            savedTraffic += 2.0 * std::max<Bytes>(graph.tensors[t].size, 0);
        std::string names;
        for (auto t : intermediates)
            names += (names.empty() ? "" : ", ") + graph.tensors[t].name;
        report.details.push_back(types + ": " + fused.name + " (drops " + names + ")"); // types first: names are long paths
        // The fused op takes the last op's slot in the schedule; the others leave it.
        for (std::size_t i = 0; i + 1 < members.size(); ++i)
            removed[members[i]] = true;
        graph.ops[chain.back()] = std::move(fused);
    }
    if (report.details.empty()) {
        report.details.push_back("nothing to fuse");
        state.reports.push_back(std::move(report));
        return state;
    }

    // Drop the removed ops and renumber the schedule.
    std::vector<OpIndex> newIndex(graph.ops.size(), -1);
    std::vector<Op> kept;
    for (std::size_t o = 0; o < graph.ops.size(); ++o)
        if (!removed[o]) {
            newIndex[o] = static_cast<OpIndex>(kept.size());
            kept.push_back(std::move(graph.ops[o]));
        }
    graph.ops = std::move(kept);
    Schedule schedule;
    for (auto o : state.schedule.order)
        if (newIndex[o] >= 0)
            schedule.order.push_back(newIndex[o]);
    state.schedule = std::move(schedule);
    report.extraSeconds = options.device.memoryBandwidth > 0 ? -savedTraffic / options.device.memoryBandwidth : 0.0;
    state.reports.push_back(std::move(report));
    return state;
}

} // namespace core
