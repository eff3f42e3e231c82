// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/layout.h"

#include <algorithm>
#include <string>

namespace core::exec {

Expected<Placement> placeTensors(const Graph& g, const PlanProblem& problem, const Plan& plan, const std::vector<TensorIndex>& bufferTensor,
    const PlacementOptions& options)
{
    const bool arena = options.arena;
    if ((arena && plan.offsets.size() != problem.buffers.size()) || bufferTensor.size() != problem.buffers.size())
        return makeError(ErrorCode::InvalidArgument, "the plan does not match the problem (" + std::to_string(plan.offsets.size())
                             + " offsets, " + std::to_string(problem.buffers.size()) + " buffers)");
    const auto n = g.tensors.size();
    if (options.excluded && options.excluded->size() != n)
        return makeError(ErrorCode::InvalidArgument, "the placement's exclusion mask does not match the graph's tensors");
    Placement placement;
    placement.tensors.assign(n, TensorPlace {});
    if (arena)
        placement.arenaBytes = plan.arenaSize;
    for (std::size_t b = 0; b < problem.buffers.size(); ++b) {
        const auto& buffer = problem.buffers[b];
        if (arena && (plan.offsets[b] < 0 || plan.offsets[b] + buffer.size > plan.arenaSize))
            return makeError(ErrorCode::InvalidArgument, "buffer '" + buffer.name + "' lies outside the arena");
        const TensorIndex own = bufferTensor[b];
        auto place = [&](TensorIndex t, Bytes inside) {
            if (t < 0 || t >= TensorIndex(n) || inside < 0 || inside + g.tensors[t].size > buffer.size)
                return;
            auto& p = placement.tensors[std::size_t(t)];
            p.kind = PlaceKind::Buffer;
            p.buffer = int(b);
            p.inBuffer = inside;
            p.offset = (arena ? plan.offsets[b] : 0) + inside;
            p.bytes = std::max<Bytes>(g.tensors[t].size, 0);
            p.aliasOf = t != own && own >= 0 && own < TensorIndex(n) ? own : -1;
            p.stored = g.tensors[t].size > 0;
        };
        Bytes ownInside = 0;
        for (std::size_t k = 0; k < buffer.tensors.size(); ++k) {
            const Bytes inside = k < buffer.tensorOffsets.size() ? buffer.tensorOffsets[k] : 0;
            if (auto t = g.findTensor(buffer.tensors[k])) {
                if (*t == own)
                    ownInside = inside;
                else
                    place(*t, inside);
            }
        }
        place(own, ownInside);
    }
    const Bytes alignment = std::max<Bytes>(options.sideAlignment, 1);
    for (std::size_t t = 0; t < n; ++t) {
        auto& p = placement.tensors[t];
        if (p.kind != PlaceKind::None || (options.excluded && (*options.excluded)[t]) || g.tensors[t].size <= 0)
            continue;
        p.kind = PlaceKind::Side;
        p.offset = placement.sideBytes;
        p.bytes = g.tensors[t].size;
        p.stored = true;
        placement.sideBytes += alignUp(g.tensors[t].size, alignment);
    }
    return placement;
}

std::vector<std::vector<TensorIndex>> storedTensorsByBuffer(const Placement& placement, std::size_t buffers)
{
    std::vector<std::vector<TensorIndex>> result(buffers);
    for (std::size_t t = 0; t < placement.tensors.size(); ++t) {
        const auto& p = placement.tensors[t];
        if (p.kind == PlaceKind::Buffer && p.stored && p.buffer >= 0 && std::size_t(p.buffer) < buffers)
            result[std::size_t(p.buffer)].push_back(TensorIndex(t));
    }
    return result;
}

BufferUse bufferUse(const Graph& g, const Schedule& schedule, const Placement& placement, std::size_t buffers,
    const std::vector<int>& workspaceAt)
{
    const Step steps = schedule.steps();
    BufferUse use { std::vector<Step>(buffers, steps), std::vector<Step>(buffers, -1) };
    auto touch = [&](TensorIndex t, Step s) {
        const int b = t >= 0 && t < TensorIndex(placement.tensors.size()) ? placement.tensors[std::size_t(t)].buffer : -1;
        if (b < 0 || std::size_t(b) >= buffers)
            return;
        use.first[std::size_t(b)] = std::min(use.first[std::size_t(b)], s);
        use.last[std::size_t(b)] = std::max(use.last[std::size_t(b)], s);
    };
    for (auto t : g.inputs)
        touch(t, -1);
    for (Step s = 0; s < steps; ++s) {
        const auto& op = g.ops[std::size_t(schedule.order[std::size_t(s)])];
        for (const auto* list : { &op.inputs, &op.outputs, &op.captured })
            for (auto t : *list)
                touch(t, s);
    }
    for (auto t : g.outputs)
        touch(t, std::max<Step>(steps - 1, 0));
    for (std::size_t s = 0; s < workspaceAt.size() && Step(s) < steps; ++s)
        if (const int b = workspaceAt[s]; b >= 0 && std::size_t(b) < buffers)
            use.first[std::size_t(b)] = use.last[std::size_t(b)] = Step(s);
    return use;
}

} // namespace core::exec
