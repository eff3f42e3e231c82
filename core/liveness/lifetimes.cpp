// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "liveness/lifetimes.h"

#include "exec/channelslast.h"
#include "exec/workspace.h"
#include "graph/capture.h"

#include <algorithm>

namespace core {

std::vector<Lifetime> computeLifetimes(const Graph& graph, const Schedule& schedule)
{
    const Step steps = schedule.steps();
    constexpr Step kUnset = -1;
    std::vector<Step> first(graph.tensors.size(), kUnset), last(graph.tensors.size(), kUnset);
    auto touch = [&](TensorIndex t, Step step) {
        if (first[t] == kUnset || step < first[t])
            first[t] = step;
        last[t] = std::max(last[t], step);
    };
    for (Step step = 0; step < steps; ++step) {
        const auto& op = graph.ops[schedule.order[step]];
        for (auto t : op.outputs)
            touch(t, step);
        for (auto t : op.inputs)
            touch(t, step);
        for (auto t : op.captured)
            touch(t, step);
    }
    for (auto t : graph.inputs)
        if (first[t] != kUnset || std::find(graph.outputs.begin(), graph.outputs.end(), t) != graph.outputs.end())
            touch(t, 0);

    std::vector<Lifetime> result(graph.tensors.size());
    for (std::size_t t = 0; t < graph.tensors.size(); ++t)
        if (first[t] != kUnset)
            result[t] = { first[t], last[t] + 1 };
    for (auto t : graph.outputs)
        result[t] = { first[t] == kUnset ? 0 : first[t], steps };
    for (std::size_t t = 0; t < graph.tensors.size(); ++t) {
        const auto kind = graph.tensors[t].kind;
        if ((kind == TensorKind::Weight || kind == TensorKind::Persistent) && first[t] != kUnset)
            result[t] = { 0, steps };
    }
    return result;
}

Expected<GraphProblem> makeProblem(const Graph& graph, const Schedule& schedule, const ProblemOptions& options)
{
    if (graph.ops.empty())
        return makeError(ErrorCode::InvalidModel, "the graph has no ops: nothing to plan");
    if (options.alignment < 1)
        return makeError(ErrorCode::InvalidArgument, "alignment must be at least 1 byte");

    const auto unsized = unsizedTensors(graph);
    if (!unsized.empty()) {
        std::string names;
        for (std::size_t i = 0; i < unsized.size() && i < 5; ++i)
            names += (i ? ", '" : "'") + graph.tensors[unsized[i]].name + "'";
        if (unsized.size() > 5)
            names += " and " + std::to_string(unsized.size() - 5) + " more";
        return makeError(ErrorCode::InvalidModel,
            std::to_string(unsized.size()) + " tensor(s) have no known size: " + names
                + "; set the missing dimensions with --dim NAME=VALUE or --input-shape INPUT=D0,D1,...");
    }

    const auto lifetimes = computeLifetimes(graph, schedule);
    GraphProblem result;
    result.problem.alignment = options.alignment;
    result.problem.steps = schedule.steps();
    std::vector<Region> regions;
    for (auto name : kRegionNames)
        regions.push_back(Region { std::string(name), 0, 0 });
    for (std::size_t t = 0; t < graph.tensors.size(); ++t) {
        const auto& tensor = graph.tensors[t];
        const auto& life = lifetimes[t];
        if (life.end <= life.start)
            continue; // no op touches it
        if (const auto name = regionOf(tensor); !name.empty()) {
            auto& region = *std::find_if(regions.begin(), regions.end(), [&](const Region& r) { return r.name == name; });
            region.size += std::max<Bytes>(tensor.size, 0);
            region.tensorCount += isVersionToken(tensor) ? 0 : 1;
            continue;
        }
        if (tensor.size <= 0)
            continue; // empty tensors need no memory
        if (options.resultsOutside && tensor.kind == TensorKind::Output)
            continue; // the op around holds it as its output
        result.problem.buffers.push_back(
            Buffer { tensor.name, life, alignUp(tensor.size, options.alignment), tensor.kind, { tensor.name } });
        result.bufferTensor.push_back(static_cast<TensorIndex>(t));
        result.bufferOp.push_back(-1);
    }
    const auto channelsLast = options.workspaces ? exec::channelsLastTensors(graph) : std::vector<bool>();
    if (options.workspaces)
        for (Step step = 0; step < schedule.steps(); ++step) {
            const OpIndex o = schedule.order[std::size_t(step)];
            const auto& op = graph.ops[std::size_t(o)];
            const Bytes bytes = opWorkspaceBytes(graph, op, channelsLast);
            if (bytes <= 0)
                continue;
            result.problem.buffers.push_back(
                Buffer { workspaceName(op), Lifetime { step, step + 1 }, alignUp(bytes, options.alignment), TensorKind::Workspace, {} });
            result.bufferTensor.push_back(-1);
            result.bufferOp.push_back(o);
        }
    if (options.bodies)
        for (Step step = 0; step < schedule.steps(); ++step) {
            const OpIndex o = schedule.order[std::size_t(step)];
            const auto& op = graph.ops[std::size_t(o)];
            auto plans = planBodies(op, options);
            if (!plans)
                return plans.error();
            const Bytes bytes = reservedBytes(*plans);
            for (auto& plan : *plans) {
                plan.step = step;
                result.nested.push_back(std::move(plan));
            }
            if (bytes <= 0)
                continue;
            result.problem.buffers.push_back(
                Buffer { op.name + " body", Lifetime { step, step + 1 }, alignUp(bytes, options.alignment), TensorKind::Workspace, {} });
            result.bufferTensor.push_back(-1);
            result.bufferOp.push_back(o);
        }
    if (auto s = checkProblemSize(result.problem); !s)
        return s.error();
    for (auto& region : regions)
        if (region.tensorCount > 0)
            result.regions.push_back(std::move(region));
    return result;
}

} // namespace core
