// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "passes.h"

#include "exec/opcall.h"
#include "util/format.h"

#include <algorithm>
#include <utility>

namespace gpu {

using core::Bytes;
using core::ErrorCode;

Passes::PassState::~PassState()
{
    if (std::none_of(owned.begin(), owned.end(), [](std::byte* q) { return q != nullptr; }))
        return;
    cudaDeviceSynchronize(); // nothing queued may still use them; errors here change nothing
    for (std::byte* q : owned)
        if (q && poolStream)
            cudaFreeAsync(q, poolStream);
        else if (q)
            cudaFree(q);
}

void Passes::init()
{
    const auto stepCount = steps.size();
    opTimes.assign(stepCount, {});
    totals.clear();
    real.assign(stepCount, true);
    onHost.assign(stepCount, false);
    waited.assign(stepCount, false);
    stepBytes.assign(stepCount, 0);
    refusals.assign(stepCount, {});
    outputs.clear();
}

core::Status Passes::waitPending(PassState& state, int b, bool blockHost)
{
    auto& pending = state.pending;
    for (std::size_t i = 0; i < pending.size();) {
        const auto& buffer = problem.buffers[std::size_t(b)];
        const bool hit = arena ? pending[i].from < plan.offsets[b] + buffer.size && plan.offsets[b] < pending[i].to : pending[i].buffer == b;
        if (!hit) {
            ++i;
            continue;
        }
        if (blockHost)
            CUDA_TRY(cudaEventSynchronize(pending[i].done), "waiting for a swap-out");
        else
            CUDA_TRY(cudaStreamWaitEvent(ctx.compute, pending[i].done, 0), "waiting for a swap-out");
        pending.erase(pending.begin() + std::ptrdiff_t(i));
    }
    return {};
}

void Passes::point(PassState& state, int b)
{
    std::byte* memory = state.owned[std::size_t(b)];
    for (auto t : tensorsOf[std::size_t(b)])
        layout.address[t] = memory ? memory + layout.placement.tensors[t].inBuffer : nullptr;
}

core::Status Passes::allocate(PassState& state, int b)
{
    const auto& buffer = problem.buffers[std::size_t(b)];
    std::byte* q = nullptr;
    const auto bytes = std::size_t(std::max<Bytes>(buffer.size, 1));
    if (pool)
        CUDA_TRY(cudaMallocAsync(&q, bytes, ctx.compute), "allocating '" + buffer.name + "' (" + core::formatBytes(buffer.size) + ") from the pool");
    else
        CUDA_TRY(cudaMalloc(&q, bytes), "allocating '" + buffer.name + "' (" + core::formatBytes(buffer.size) + ")");
    state.owned[std::size_t(b)] = q;
    point(state, b);
    return {};
}

core::Status Passes::release(PassState& state, int b)
{
    if (auto st = waitPending(state, b, !pool); !st)
        return st;
    std::byte* q = std::exchange(state.owned[std::size_t(b)], nullptr);
    if (q && pool)
        CUDA_TRY(cudaFreeAsync(q, ctx.compute), "returning '" + problem.buffers[std::size_t(b)].name + "' to the pool");
    else if (q)
        CUDA_TRY(cudaFree(q), "freeing '" + problem.buffers[std::size_t(b)].name + "'");
    point(state, b);
    return {};
}

core::Status Passes::poolInUse(Bytes& used)
{
    std::uint64_t v = 0;
    CUDA_TRY(cudaMemPoolGetAttribute(memPool, cudaMemPoolAttrUsedMemCurrent, &v), "reading the pool's usage");
    used = Bytes(v);
    return {};
}

core::Status Passes::readOutputs(const core::exec::RuntimeShapes& runShapes)
{
    for (auto t : graph.outputs) {
        Bytes bytes = 0;
        core::HostTensor h = core::exec::outputHeader(graph, t, runShapes, bytes);
        if (const auto* q = layout.address[t]; q && bytes > 0) {
            h.data.resize(std::size_t(bytes));
            CUDA_TRY(cudaMemcpy(h.data.data(), q, h.data.size(), cudaMemcpyDefault), "reading output '" + graph.tensors[t].name + "'");
        }
        outputs.push_back(std::move(h));
    }
    return {};
}

core::Status Passes::run(Pass kind, int passIndex)
{
    const std::size_t stepCount = steps.size();
    PassState state;
    state.owned.assign(arena ? 0 : problem.buffers.size(), nullptr);
    state.poolStream = pool ? ctx.compute : nullptr;
    state.arrival.assign(graph.tensors.size(), nullptr);
    state.shapes.reset(graph.tensors.size());
    core::exec::seedInputShapes(graph, options, state.shapes);
    Bytes baseline = 0, live = 0; // live: bytes of the buffers allocated (arena: holding a value still to be read)
    if (kind == Pass::Traced && pool) {
        CUDA_TRY(cudaStreamSynchronize(ctx.compute), "synchronising before the traced pass");
        if (auto st = poolInUse(baseline); !st)
            return st;
    }
    CUDA_TRY(cudaEventRecord(ctx.passStart(), ctx.compute), "starting the pass");
    for (int b : bornAt[0]) {
        if (!arena)
            if (auto st = allocate(state, b); !st)
                return st;
        live += problem.buffers[std::size_t(b)].size;
    }
    for (const auto& [t, data] : inputs)
        if (layout.address[t])
            CUDA_TRY(cudaMemcpyAsync(layout.address[t], data.data(), data.size(), cudaMemcpyHostToDevice, ctx.compute),
                "uploading input '" + graph.tensors[t].name + "'");
    for (std::size_t s = 0; s < stepCount; ++s) {
        if (options.cancel.isCancelled())
            return core::makeError(ErrorCode::Cancelled,
                "the run was cancelled at op " + std::to_string(s) + " of " + std::to_string(stepCount));
        auto& p = steps[s];
        const bool onCopy = p.where == Where::SwapOut || p.where == Where::SwapIn;
        if (!onCopy)
            CUDA_TRY(cudaEventRecord(ctx.startEvent(s), ctx.compute), p.label);
        for (int b : bornAt[s + 1]) {
            if (!arena)
                if (auto st = allocate(state, b); !st)
                    return st;
            live += problem.buffers[std::size_t(b)].size;
        }
        if (!arena && s < workspaceAt.size() && workspaceAt[s] >= 0) // the Conv's columns in its own allocation
            p.device.scratch = reinterpret_cast<float*>(state.owned[std::size_t(workspaceAt[s])]);
        // Nothing overwrites a swap-out's source before its copy is done: not the op's outputs, nor
        // its workspace.
        for (auto t : p.outTensor)
            if (layout.bufferOf[t] >= 0 && arena)
                if (auto st = waitPending(state, layout.bufferOf[t], false); !st)
                    return st;
        if (arena && s < workspaceAt.size() && workspaceAt[s] >= 0)
            if (auto st = waitPending(state, workspaceAt[s], false); !st)
                return st;
        if (auto st = launch(state, s); !st)
            return st;
        if (options.cancel.isCancelled()) // a host Loop or Scan stops between iterations
            return core::makeError(ErrorCode::Cancelled,
                "the run was cancelled during op " + std::to_string(s) + " of " + std::to_string(stepCount));
        if (!onCopy)
            CUDA_TRY(cudaEventRecord(ctx.endEvent(s), ctx.compute), p.label);
        if (kind == Pass::Traced) {
            CUDA_TRY(cudaStreamSynchronize(ctx.compute), p.label);
            CUDA_TRY(cudaStreamSynchronize(ctx.copy), p.label);
            if (!pool)
                stepBytes[s] = live;
            else {
                Bytes used = 0;
                if (auto st = poolInUse(used); !st)
                    return st;
                stepBytes[s] = std::max<Bytes>(0, used - baseline);
            }
        }
        if (s + 1 < stepCount) // graph outputs die after the last step; they are read back first
            for (int b : diesAt[s + 1]) {
                live -= problem.buffers[std::size_t(b)].size;
                if (!arena)
                    if (auto st = release(state, b); !st)
                        return st;
            }
        if (kind == Pass::Timed && options.progress)
            options.progress(passIndex * int(stepCount) + int(s) + 1, repeat * int(stepCount));
    }
    CUDA_TRY(cudaEventRecord(ctx.copyTail(), ctx.copy), "ending the pass");
    CUDA_TRY(cudaStreamWaitEvent(ctx.compute, ctx.copyTail(), 0), "ending the pass");
    CUDA_TRY(cudaEventRecord(ctx.passEnd(), ctx.compute), "ending the pass");
    CUDA_TRY(cudaStreamSynchronize(ctx.compute), "ending the pass");
    if (kind == Pass::Warmup) {
        if (auto st = readOutputs(state.shapes); !st)
            return st;
        shapes = state.shapes;
    }
    for (std::size_t b = 0; b < state.owned.size(); ++b)
        if (state.owned[b])
            if (auto st = release(state, int(b)); !st)
                return st;
    CUDA_TRY(cudaStreamSynchronize(ctx.compute), "ending the pass");
    if (kind == Pass::Timed) {
        for (std::size_t s = 0; s < stepCount; ++s) {
            float ms = 0;
            CUDA_TRY(cudaEventElapsedTime(&ms, ctx.startEvent(s), ctx.endEvent(s)), steps[s].label + " (timing)");
            opTimes[s].push_back(double(ms));
        }
        float ms = 0;
        CUDA_TRY(cudaEventElapsedTime(&ms, ctx.passStart(), ctx.passEnd()), "timing the pass");
        totals.push_back(double(ms));
    }
    return {};
}

} // namespace gpu
