// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// One step of a pass: a device kernel (a fused op: its body's kernels) on the compute stream; a precomputed op's outputs copied to
// the device on the compute stream; a host op (no device kernel, an
// unsupported configuration, or a fused op whose body cannot run on the device) between a device-to-host and a host-to-device copy,
// on the CPU executor's code (core::exec::runHostOp); a SwapOut/SwapIn copy on the copy stream,
// ordered by events: a swap-out is waited for only before its source is overwritten or freed, a
// swap-in only by the first step that reads what it brought back, so a SwapIn the swap strategy
// issued ahead of its read (prefetch) copies while the ops in between compute.
#include "passes.h"

#include "exec/hostops.h"
#include "exec/opcall.h"

namespace gpu {

using core::Bytes;
using core::ErrorCode;

core::Status Passes::launch(PassState& state, std::size_t s)
{
    auto& p = steps[s];
    pointDeviceViews(graph, p, layout);
    auto where = p.where;
    if (where != Where::SwapOut && where != Where::SwapIn) // the copy stream keeps its own order
        for (std::size_t k = 0; k < p.inTensor.size(); ++k)
            if (const auto t = p.inTensor[k]; t >= 0 && state.arrival[std::size_t(t)]) {
                CUDA_TRY(cudaStreamWaitEvent(ctx.compute, state.arrival[std::size_t(t)], 0), p.label + " (waiting for its swap-in)");
                state.arrival[std::size_t(t)] = nullptr;
            }
    if (where == Where::Device) {
        const auto outcome = p.bodyKernels.empty() ? launchDeviceOp(p.deviceKernel, p.device) : launchBody(p);
        if (!outcome.failure.empty())
            return core::makeError(ErrorCode::CudaFailure, p.label + ": " + outcome.failure);
        if (!outcome.supported)
            where = Where::Host;
    }
    if (where == Where::Host) {
        onHost[s] = true;
        // Reading only host images, weights and constants (steps.h), it need not wait: its outputs
        // reach the device through copies ordered on the compute stream like any kernel.
        waited[s] = p.readsDevice;
        if (waited[s]) {
            CUDA_TRY(cudaStreamSynchronize(ctx.compute), p.label);
            CUDA_TRY(cudaStreamSynchronize(ctx.copy), p.label); // a swapped tensor it reads is complete
        }
        for (std::size_t k = 0; k < p.inTensor.size(); ++k)
            if (!p.inStage[k].empty() && p.device.call.in[k].data)
                CUDA_TRY(cudaMemcpy(p.inStage[k].data(), p.device.call.in[k].data, p.inStage[k].size(), cudaMemcpyDeviceToHost),
                    p.label + " (input " + std::to_string(k) + " to the host)");
        const auto& captured = graph.ops[std::size_t(p.opIndex)].captured;
        for (std::size_t k = 0; k < p.capturedStage.size(); ++k)
            if (const auto* q = layout.address[std::size_t(captured[k])]; !p.capturedStage[k].empty() && q)
                CUDA_TRY(cudaMemcpy(p.capturedStage[k].data(), q, p.capturedStage[k].size(), cudaMemcpyDeviceToHost),
                    p.label + " (outer tensor '" + graph.tensors[std::size_t(captured[k])].name + "' to the host)");
        if (p.shaped) {
            real[s] = core::exec::runWithShapes(graph, p.shapedCall, options, state.shapes);
            refusals[s] = p.shapedCall.refusal;
        } else
            real[s] = core::exec::runHostOp(graph, p.host, p.opIndex, p.cpuKernel, options);
        for (std::size_t k = 0; k < p.outTensor.size(); ++k)
            if (!p.outStage[k].empty() && p.device.call.out[k].data)
                CUDA_TRY(cudaMemcpyAsync(p.device.call.out[k].data, p.outStage[k].data(), p.outStage[k].size(), cudaMemcpyHostToDevice,
                             ctx.compute),
                    p.label + " (output " + std::to_string(k) + " to the device)");
    } else if (where == Where::Precomputed) {
        for (std::size_t k = 0; k < p.outTensor.size(); ++k)
            if (!p.outStage[k].empty() && p.device.call.out[k].data)
                CUDA_TRY(cudaMemcpyAsync(p.device.call.out[k].data, p.outStage[k].data(), p.outStage[k].size(), cudaMemcpyHostToDevice,
                             ctx.compute),
                    p.label + " (its precomputed output " + std::to_string(k) + ")");
    } else if (where == Where::SwapOut || where == Where::SwapIn) {
        const auto &in = p.device.call.in[0], &out = p.device.call.out[0];
        CUDA_TRY(cudaEventRecord(ctx.readyEvent(s), ctx.compute), p.label);
        CUDA_TRY(cudaStreamWaitEvent(ctx.copy, ctx.readyEvent(s), 0), p.label);
        CUDA_TRY(cudaEventRecord(ctx.startEvent(s), ctx.copy), p.label);
        CUDA_TRY(cudaMemcpyAsync(out.data, in.data, std::size_t(out.bytes()),
                     where == Where::SwapOut ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice, ctx.copy),
            p.label);
        CUDA_TRY(cudaEventRecord(ctx.endEvent(s), ctx.copy), p.label);
        // A copy keeps the run-time shape of a tensor sized by an upper bound.
        const auto src = std::size_t(p.inTensor[0]), dst = std::size_t(p.outTensor[0]);
        if (graph.tensors[dst].estimated) {
            state.shapes.copy(src, dst);
            state.shapes.known[dst] = graph.tensors[src].estimated && state.shapes.known[src];
        }
        if (where == Where::SwapIn)
            state.arrival[std::size_t(p.outTensor[0])] = ctx.endEvent(s);
        else {
            const auto t = p.inTensor[0];
            const int b = layout.bufferOf[t];
            const Bytes from = arena && b >= 0 ? layout.placement.tensors[std::size_t(t)].offset : 0;
            state.pending.push_back(PendingSwap { b, from, from + graph.tensors[t].size, ctx.endEvent(s) });
        }
    }
    return {};
}

} // namespace gpu
