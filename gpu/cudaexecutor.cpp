// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The CUDA executor's entry points: device availability, and runOnCuda, which sets up the run
// (placement, prepared steps, streams, events, kernel scratch, pool) and turns the passes'
// records into a Measurement. Placement: devicelayout.cpp; steps: steps.cpp; passes: passes.cpp,
// launch.cpp.
#include "cudaexecutor.h"

#include "passes.h"

#include "exec/workspace.h"
#include "util/format.h"
#include "util/stats.h"

#include <algorithm>
#include <cstdio>

namespace gpu {

using core::Bytes;
using core::ErrorCode;
using core::Graph;
using core::Step;
using core::TensorIndex;

std::string_view cudaAllocationName(CudaAllocation allocation)
{
    switch (allocation) {
    case CudaAllocation::Arena: return "arena";
    case CudaAllocation::PerTensor: return "per-tensor";
    case CudaAllocation::Pool: return "pool";
    }
    return "arena";
}

bool cudaAvailable(std::string* why)
{
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    std::string reason;
    if (e == cudaErrorInsufficientDriver)
        reason = "no CUDA driver is loaded, or it is older than this build's CUDA runtime (cudaErrorInsufficientDriver)";
    else if (e == cudaErrorNoDevice)
        reason = "the CUDA driver sees no device (cudaErrorNoDevice)";
    else if (e != cudaSuccess)
        reason = "cudaGetDeviceCount failed: " + cudaText(e);
    else if (count < 1)
        reason = "the CUDA driver sees no device";
    cudaGetLastError(); // the failed query leaves its error as the thread's last error: clear it
    if (why)
        *why = reason;
    return reason.empty();
}

std::string cudaDeviceDescription()
{
    if (!cudaAvailable())
        return {};
    cudaDeviceProp prop {};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess)
        return {};
    char text[64];
    std::snprintf(text, sizeof text, ", %.1f GiB, compute capability %d.%d", double(prop.totalGlobalMem) / (1024.0 * 1024 * 1024), prop.major,
        prop.minor);
    return std::string(prop.name) + text;
}

core::Expected<core::Measurement> runOnCuda(const Graph& graph, const core::Schedule& schedule, const core::PlanProblem& problem,
    const core::Plan& plan, const std::vector<TensorIndex>& bufferTensor, const core::RunOptions& options, CudaAllocation allocation)
{
    std::string why;
    if (!cudaAvailable(&why))
        return core::makeError(ErrorCode::NoGpu, "no CUDA device: " + why);
    CUDA_TRY(cudaSetDevice(0), "selecting device 0");
    const bool arena = allocation == CudaAllocation::Arena, pool = allocation == CudaAllocation::Pool;
    auto layout = makeLayout(graph, problem, plan, bufferTensor, arena, options);
    if (!layout)
        return layout.error();
    const auto inputs = inputImages(graph, *layout, options);
    if (!inputs)
        return inputs.error();
    const auto workspaceAt = core::workspaceAtStep(graph, schedule, problem, bufferTensor);
    if (!workspaceAt)
        return workspaceAt.error();
    auto steps = prepareSteps(graph, schedule, *layout, options);
    const std::size_t stepCount = steps.size();

    Context ctx;
    CUDA_TRY(cudaStreamCreateWithFlags(&ctx.compute, cudaStreamNonBlocking), "creating the compute stream");
    CUDA_TRY(cudaStreamCreateWithFlags(&ctx.copy, cudaStreamNonBlocking), "creating the copy stream");
    BLAS_TRY(cublasCreate(&ctx.blas), "creating the cuBLAS handle");
    BLAS_TRY(cublasSetStream(ctx.blas, ctx.compute), "setting the cuBLAS stream");
    BLAS_TRY(cublasSetMathMode(ctx.blas, CUBLAS_DEFAULT_MATH), "setting the cuBLAS math mode (float32, no TF32)");
    ctx.events.resize(3 * stepCount + 3, nullptr);
    for (auto& e : ctx.events)
        CUDA_TRY(cudaEventCreate(&e), "creating events");

    // Conv columns: in the op's planned workspace when there is one (arena: at its offset; otherwise
    // the passes allocate it at its step), else in one kernel scratch allocation sized for the op
    // that needs most (a Conv without a planned workspace, a recurrent op's projections and state).
    // Half-precision ops run on float32 copies in one staging allocation sized for the op that
    // needs most (halfprecision.cpp); their scratch is sized for the float32 call.
    // The workspace is planned for the CPU executor (oneDNN's scratchpad where oneDNN runs the op),
    // which may be less than the device kernel's columns: such a step uses the kernel scratch and
    // leaves its workspace unused (deviceWorkspaceAt -1).
    std::vector<int> deviceWorkspaceAt = *workspaceAt;
    std::int64_t scratchNeed = 0, stagingNeed = 0;
    for (std::size_t s = 0; s < stepCount; ++s) {
        auto& p = steps[s];
        if (p.where == Where::Device) {
            pointDeviceViews(graph, p, *layout);
            stagingNeed = std::max(stagingNeed, stagingFloats(p.device.call));
            std::int64_t need = scratchFloats(widenedShapes(p.device.call));
            for (const auto& part : p.body.body) {
                stagingNeed = std::max(stagingNeed, stagingFloats(part.call));
                need = std::max(need, scratchFloats(widenedShapes(part.call)));
            }
            const int b = deviceWorkspaceAt[s];
            if (b >= 0 && problem.buffers[std::size_t(b)].size < need * Bytes(sizeof(float)))
                deviceWorkspaceAt[s] = -1;
            if (deviceWorkspaceAt[s] < 0)
                scratchNeed = std::max(scratchNeed, need);
        }
    }
    DeviceMemory scratch, staging;
    if (scratchNeed > 0) {
        std::byte* q = nullptr;
        CUDA_TRY(cudaMalloc(&q, std::size_t(scratchNeed) * sizeof(float)), "allocating the kernel scratch (" + core::formatBytes(scratchNeed * Bytes(sizeof(float))) + ")");
        scratch.reset(q);
    }
    if (stagingNeed > 0) {
        std::byte* q = nullptr;
        CUDA_TRY(cudaMalloc(&q, std::size_t(stagingNeed) * sizeof(float)),
            "allocating the half-precision staging (" + core::formatBytes(stagingNeed * Bytes(sizeof(float))) + ")");
        staging.reset(q);
    }
    for (std::size_t s = 0; s < stepCount; ++s) {
        auto& p = steps[s];
        p.device.stream = ctx.compute;
        p.device.blas = ctx.blas;
        p.device.staging = reinterpret_cast<float*>(staging.get());
        const int b = deviceWorkspaceAt[s];
        p.device.scratch = b < 0 ? reinterpret_cast<float*>(scratch.get())
            : arena              ? reinterpret_cast<float*>(layout->arena.get() + plan.offsets[std::size_t(b)])
                                 : nullptr; // set by the pass that allocates it
    }
    cudaMemPool_t memPool = nullptr;
    if (pool) {
        CUDA_TRY(cudaDeviceGetDefaultMemPool(&memPool, 0), "getting the default memory pool");
        std::uint64_t keep = ~std::uint64_t(0); // the pool keeps its memory between passes, as a serving process would
        CUDA_TRY(cudaMemPoolSetAttribute(memPool, cudaMemPoolAttrReleaseThreshold, &keep), "setting the pool's release threshold");
    }

    const int repeat = std::max(1, options.repeat);
    Passes passes(graph, problem, plan, options, *layout, steps, *inputs, ctx);
    passes.arena = arena;
    passes.pool = pool;
    passes.memPool = memPool;
    passes.repeat = repeat;
    const auto use = core::exec::bufferUse(graph, schedule, layout->placement, problem.buffers.size(), *workspaceAt);
    passes.workspaceAt = std::move(deviceWorkspaceAt);
    passes.bornAt.resize(stepCount + 1);
    passes.diesAt.resize(stepCount + 1);
    for (std::size_t b = 0; b < problem.buffers.size(); ++b) {
        if (use.first[b] >= Step(stepCount))
            continue;
        passes.bornAt[std::size_t(use.first[b] + 1)].push_back(int(b));
        passes.diesAt[std::size_t(std::max({ use.last[b], use.first[b], Step(0) }) + 1)].push_back(int(b));
    }
    passes.tensorsOf = core::exec::storedTensorsByBuffer(layout->placement, problem.buffers.size());
    passes.init();

    if (auto st = passes.run(Pass::Warmup, 0); !st)
        return st.error();
    for (int r = 0; r < repeat; ++r)
        if (auto st = passes.run(Pass::Timed, r); !st)
            return st.error();
    if (auto st = passes.run(Pass::Traced, 0); !st)
        return st.error();
    if (stepCount == 0 && options.progress)
        options.progress(0, 0);

    core::Measurement m;
    m.device = "cuda";
    m.planner = arena ? plan.planner : std::string(cudaAllocationName(allocation));
    m.allocation = arena ? core::Allocation::Arena : core::Allocation::PerTensor;
    m.arenaBytes = layout->arenaBytes;
    m.weightsBytes = layout->sideBytes;
    m.scratchBytes = (scratchNeed + stagingNeed) * Bytes(sizeof(float)) + layout->fusedBytes;
    m.outputs = std::move(passes.outputs);
    for (std::size_t s = 0; s < stepCount; ++s) {
        const auto& op = *steps[s].device.call.op;
        const bool real = passes.real[s], onHost = passes.onHost[s];
        (real ? m.opsReal : m.opsSynthetic)++;
        const bool copy = steps[s].where == Where::SwapOut || steps[s].where == Where::SwapIn; // of a bounded tensor: keeps its shape
        const auto copied = copy ? std::size_t(steps[s].outTensor[0]) : 0;
        m.opsRuntimeShaped += real
                && ((steps[s].shaped && steps[s].shapedCall.dynamic) || (copy && graph.tensors[copied].estimated && passes.shapes.known[copied]))
            ? 1 : 0;
        const bool precomputed = steps[s].where == Where::Precomputed;
        m.opsHost += onHost ? 1 : 0;
        m.opsHostWaited += onHost && passes.waited[s] ? 1 : 0;
        m.opsPrecomputed += precomputed ? 1 : 0;
        const auto& times = passes.opTimes[s];
        m.ops.push_back(
            core::OpMeasurement { op.name, op.type, real, core::median(times), core::percentile(times, 0.99), onHost, precomputed,
                real ? std::string() : passes.refusals[s], onHost && passes.waited[s] });
    }
    core::exec::countBounds(graph, [&](TensorIndex t) { return bool(layout->stored[std::size_t(t)]); }, passes.shapes, m);
    m.stepBytes = std::move(passes.stepBytes);
    m.stepPeakBytes = m.stepBytes.empty() ? 0 : *std::max_element(m.stepBytes.begin(), m.stepBytes.end());
    const auto& totals = passes.totals;
    m.latencyMs = core::LatencyStats { core::median(totals), core::percentile(totals, 0.5), core::percentile(totals, 0.99) };
    m.peakBytes = (arena ? m.arenaBytes : m.stepPeakBytes) + m.weightsBytes + m.scratchBytes;
    return m;
}

} // namespace gpu
