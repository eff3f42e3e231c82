// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/workspace.h"

#include "exec/channelslast.h"
#include "exec/opcall.h"

#include <algorithm>

namespace core {

Bytes opWorkspaceBytes(const Graph& graph, const Op& op, const std::vector<bool>& channelsLast)
{
    if (!op.body.empty()) { // a fused op: its body's ops run one at a time, so one workspace serves every Conv
        Bytes most = 0;
        for (const auto& part : op.body)
            most = std::max(most, opWorkspaceBytes(graph, part, channelsLast));
        return most;
    }
    if (!(op.domain.empty() || op.domain == "ai.onnx") || op.type == "Constant")
        return 0;
    // The kernel's call as the executor prepares it, its views pointing at a marker: workspaceFloats
    // reads shapes only, but tells a present input from an absent one by its pointer.
    static std::byte marker;
    exec::KernelCall call;
    call.op = &op;
    const auto stored = [&](TensorIndex t) { return std::size_t(t) < channelsLast.size() && channelsLast[std::size_t(t)]; };
    for (auto t : op.inputs) {
        if (t < 0 || t >= TensorIndex(graph.tensors.size()))
            return 0;
        call.in.push_back(exec::tensorView(graph, t, &marker));
        call.in.back().channelsLast = stored(t);
    }
    for (auto t : op.outputs) {
        if (t < 0 || t >= TensorIndex(graph.tensors.size()))
            return 0;
        call.out.push_back(exec::tensorView(graph, t, &marker));
        call.out.back().channelsLast = stored(t);
    }
    for (auto t : op.outputs)
        if (graph.tensors[t].estimated)
            return 0; // the executor runs such an op synthetic
    return Bytes(exec::workspaceFloats(call)) * Bytes(sizeof(float));
}

std::string workspaceName(const Op& op)
{
    return op.name + " workspace";
}

Expected<std::vector<int>> workspaceAtStep(const Graph& graph, const Schedule& schedule, const PlanProblem& problem,
    const std::vector<TensorIndex>& bufferTensor)
{
    const Step steps = schedule.steps();
    const auto channelsLast = exec::channelsLastTensors(graph);
    std::vector<int> at(std::size_t(std::max<Step>(steps, 0)), -1);
    for (std::size_t b = 0; b < problem.buffers.size() && b < bufferTensor.size(); ++b) {
        if (bufferTensor[b] >= 0)
            continue;
        const auto& buffer = problem.buffers[b];
        const std::string where = "buffer '" + buffer.name + "'";
        if (buffer.kind != TensorKind::Workspace)
            return makeError(ErrorCode::InvalidArgument, where + " has no tensor and is not an op's workspace");
        const Step s = buffer.lifetime.start;
        if (s < 0 || s >= steps || buffer.lifetime.end != s + 1)
            return makeError(ErrorCode::InvalidArgument, where + ": a workspace must live for exactly one step of the schedule");
        if (at[std::size_t(s)] >= 0)
            return makeError(ErrorCode::InvalidArgument, where + ": step " + std::to_string(s) + " already has a workspace");
        const auto& op = graph.ops[std::size_t(schedule.order[std::size_t(s)])];
        // A control-flow op's buffer reserves its graphs' arenas (NestedPlan), which their plans size.
        const Bytes need = op.bodies.empty() ? opWorkspaceBytes(graph, op, channelsLast) : 1;
        if (need <= 0 || need > buffer.size)
            return makeError(ErrorCode::InvalidArgument, where + ": op '" + op.name + "' at step " + std::to_string(s) + " needs "
                                 + std::to_string(need) + " bytes of workspace, the buffer holds " + std::to_string(buffer.size));
        at[std::size_t(s)] = int(b);
    }
    return at;
}

} // namespace core
