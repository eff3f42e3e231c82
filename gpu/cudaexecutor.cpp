// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "cudaexecutor.h"

#include "ops.h"

#include "exec/hostops.h"
#include "exec/kernels.h"
#include "exec/layout.h"
#include "util/stats.h"

#include <cublas_v2.h>
#include <cuda_runtime.h> // the typed cudaMalloc overloads

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>

namespace gpu {

using core::Bytes;
using core::Error;
using core::ErrorCode;
using core::Graph;
using core::Step;
using core::TensorIndex;
using core::exec::KernelCall;
using core::exec::TensorView;

namespace {

constexpr Bytes kDeviceAlignment = 256; // cudaMalloc's own alignment; side slots keep it

Error cudaFailure(const char* call, const std::string& where, const std::string& error)
{
    return core::makeError(ErrorCode::CudaFailure, where + ": " + call + " failed: " + error);
}

// Every CUDA call of the executor: a failure returns an error naming the call and `where` (an op or a phase).
#define CUDA_TRY(expr, where)                                                                                                              \
    do {                                                                                                                                   \
        const cudaError_t error_ = (expr);                                                                                                 \
        if (error_ != cudaSuccess)                                                                                                         \
            return cudaFailure(#expr, (where), cudaText(error_));                                                                          \
    } while (0)

struct DeviceFree {
    void operator()(std::byte* p) const { cudaFree(p); }
};
using DeviceMemory = std::unique_ptr<std::byte, DeviceFree>;
struct HostFree {
    void operator()(std::byte* p) const { cudaFreeHost(p); }
};
using PinnedMemory = std::unique_ptr<std::byte, HostFree>;

// Streams, the cuBLAS handle and events, released in any case.
struct Context {
    cudaStream_t compute = nullptr, copy = nullptr;
    cublasHandle_t blas = nullptr;
    std::vector<cudaEvent_t> events;

    ~Context()
    {
        for (auto e : events)
            cudaEventDestroy(e);
        if (blas)
            cublasDestroy(blas);
        if (copy)
            cudaStreamDestroy(copy);
        if (compute)
            cudaStreamDestroy(compute);
    }
};

std::int64_t elementsOf(const core::Tensor& t)
{
    const Bytes w = core::dtypeBytes(t.dtype);
    return w > 0 && t.size > 0 ? t.size / w : 0;
}

// The CPU executor's view shape rule: the graph's shape when fully known, else one dimension.
core::exec::Shape shapeOf(const core::Tensor& tensor)
{
    const bool known = tensor.rankKnown && !tensor.estimated
        && std::all_of(tensor.shape.begin(), tensor.shape.end(), [](std::int64_t d) { return d >= 0; });
    return known ? tensor.shape : core::exec::Shape { elementsOf(tensor) };
}


#define BLAS_TRY(expr, where)                                                                                                              \
    do {                                                                                                                                   \
        const cublasStatus_t status_ = (expr);                                                                                             \
        if (status_ != CUBLAS_STATUS_SUCCESS)                                                                                              \
            return cudaFailure(#expr, (where), cublasText(status_));                                                                       \
    } while (0)

// Where each tensor lives for one run.
struct Layout {
    DeviceMemory arena, side;
    std::vector<std::byte> sideHost;         // the side region's initial contents (weights), kept for host ops
    std::vector<PinnedMemory> pinned;        // swap-strategy host tensors
    std::vector<std::byte*> address;         // per tensor: device (or pinned host) address; PerTensor/Pool: set per pass
    std::vector<const std::byte*> hostCopy;  // per tensor: its contents in sideHost (weights only), else nullptr
    std::vector<int> bufferOf;               // per tensor: its buffer, -1 outside the arena
    std::vector<bool> stored, onHost;
    Bytes arenaBytes = 0, sideBytes = 0;
    core::exec::Placement placement;
};

bool isSwapOut(const core::Op& op) { return (op.domain.empty() || op.domain == "ai.onnx") && op.type == "SwapOut"; }

// Device pointers for the device-independent placement (exec/layout.h): the arena and the side
// region are cudaMallocs; swap-out outputs outside any buffer are pinned host memory instead of side slots.
core::Expected<Layout> makeLayout(const Graph& g, const core::PlanProblem& problem, const core::Plan& plan,
    const std::vector<TensorIndex>& bufferTensor, bool arena, const core::RunOptions& options)
{
    const auto n = g.tensors.size();
    std::vector<bool> swapped(n, false); // pinned unless a buffer holds them
    std::vector<bool> excluded(n, false); // swapped, and fused ops' internals (host scratch of the host path)
    for (const auto& op : g.ops) {
        if (isSwapOut(op))
            for (auto t : op.outputs)
                if (t >= 0 && t < TensorIndex(n))
                    swapped[std::size_t(t)] = excluded[std::size_t(t)] = true;
        for (auto t : core::fusedInternals(op))
            if (t >= 0 && t < TensorIndex(n))
                excluded[std::size_t(t)] = true;
    }
    auto placement = core::exec::placeTensors(g, problem, plan, bufferTensor, core::exec::PlacementOptions { arena, kDeviceAlignment, &excluded });
    if (!placement)
        return placement.error();
    const auto& places = placement->tensors;
    if (arena) {
        const auto byBuffer = core::exec::storedTensorsByBuffer(*placement, problem.buffers.size());
        for (std::size_t b = 0; b < byBuffer.size(); ++b)
            for (auto t : byBuffer[b])
                if (const Bytes w = core::dtypeBytes(g.tensors[t].dtype); w > 1 && plan.offsets[b] % w != 0)
                    return core::makeError(ErrorCode::InvalidArgument, "the plan puts '" + g.tensors[t].name + "' at offset "
                            + std::to_string(plan.offsets[b]) + ", not a multiple of its " + std::to_string(w)
                            + "-byte elements: the GPU needs aligned tensors (plan with a larger --alignment, e.g. 256)");
    }
    Layout layout;
    layout.address.assign(n, nullptr);
    layout.hostCopy.assign(n, nullptr);
    layout.bufferOf.assign(n, -1);
    layout.stored.assign(n, false);
    layout.onHost.assign(n, false);
    layout.arenaBytes = placement->arenaBytes;
    layout.sideBytes = placement->sideBytes;
    if (arena) {
        std::byte* p = nullptr;
        CUDA_TRY(cudaMalloc(&p, std::size_t(std::max<Bytes>(plan.arenaSize, kDeviceAlignment))), "allocating the arena");
        layout.arena.reset(p);
    }
    for (std::size_t t = 0; t < n; ++t) {
        layout.bufferOf[t] = places[t].buffer;
        layout.stored[t] = places[t].stored;
        if (places[t].kind == core::exec::PlaceKind::Buffer && arena)
            layout.address[t] = layout.arena.get() + places[t].offset;
    }
    for (std::size_t t = 0; t < n; ++t)
        if (swapped[t] && places[t].kind == core::exec::PlaceKind::None && g.tensors[t].size > 0) {
            std::byte* p = nullptr;
            CUDA_TRY(cudaMallocHost(&p, std::size_t(g.tensors[t].size)), "allocating pinned host memory for '" + g.tensors[t].name + "'");
            layout.pinned.emplace_back(p);
            layout.address[t] = p;
            layout.onHost[t] = true;
            layout.stored[t] = true;
        }
    std::byte* side = nullptr;
    CUDA_TRY(cudaMalloc(&side, std::size_t(std::max<Bytes>(layout.sideBytes, kDeviceAlignment))), "allocating the weights");
    layout.side.reset(side);
    layout.sideHost.assign(std::size_t(layout.sideBytes), std::byte(0));
    for (std::size_t t = 0; t < n; ++t) {
        if (places[t].kind != core::exec::PlaceKind::Side)
            continue;
        const Bytes offset = places[t].offset;
        layout.address[t] = side + offset;
        const auto& tensor = g.tensors[t];
        if (tensor.kind == core::TensorKind::Weight || tensor.kind == core::TensorKind::Persistent)
            core::exec::weightContents(g, TensorIndex(t), layout.sideHost.data() + offset, options);
        if (tensor.kind == core::TensorKind::Weight)
            layout.hostCopy[t] = layout.sideHost.data() + offset;
    }
    if (layout.sideBytes > 0)
        CUDA_TRY(cudaMemcpy(side, layout.sideHost.data(), layout.sideHost.size(), cudaMemcpyHostToDevice), "uploading the weights");
    layout.placement = std::move(*placement);
    return layout;
}

// Contents of every stored graph input, as the CPU executor makes them; errors name the input.
core::Expected<std::vector<std::pair<TensorIndex, std::vector<std::byte>>>> inputImages(const Graph& g, const Layout& layout,
    const core::RunOptions& options)
{
    std::vector<std::pair<TensorIndex, std::vector<std::byte>>> images;
    for (auto t : g.inputs) {
        const auto& tensor = g.tensors[t];
        if (!layout.stored[t] || tensor.size <= 0)
            continue;
        std::vector<std::byte> data(std::size_t(tensor.size));
        const auto it = options.inputs.find(tensor.name);
        if (it == options.inputs.end())
            core::exec::fillRandom(tensor, data.data(), options.seed, false);
        else if (it->second.dtype != tensor.dtype || Bytes(it->second.data.size()) != tensor.size)
            return core::makeError(ErrorCode::InvalidArgument, "input '" + tensor.name + "': the model expects "
                    + std::string(core::dtypeName(tensor.dtype)) + " of " + std::to_string(tensor.size) + " bytes, the file gives "
                    + std::string(core::dtypeName(it->second.dtype)) + " of " + std::to_string(it->second.data.size()) + " bytes");
        else
            data = it->second.data;
        images.emplace_back(t, std::move(data));
    }
    for (const auto& [name, value] : options.inputs)
        if (std::none_of(g.inputs.begin(), g.inputs.end(), [&](TensorIndex t) { return g.tensors[t].name == name; }))
            return core::makeError(ErrorCode::InvalidArgument, "input '" + name + "': the model has no such graph input");
    return images;
}

enum class Where { Device, Host, SwapOut, SwapIn, Nothing };

struct Prepared {
    DeviceCall device; // views into device (or pinned host) memory
    KernelCall host;   // the same op on host memory: staging, weight copies, pinned tensors
    std::vector<TensorIndex> inTensor, outTensor; // per slot; -1 for an absent optional input
    std::vector<std::vector<std::byte>> inStage, outStage; // per slot: staging when the host view needs a copy
    core::exec::Kernel cpuKernel = nullptr;
    DeviceKernel deviceKernel = nullptr;
    Where where = Where::Host;
    core::OpIndex opIndex = 0;
    std::string label; // "op 'name' (Type)"
};

TensorView viewOf(const Graph& g, TensorIndex t, std::byte* data)
{
    TensorView v;
    const auto& tensor = g.tensors[t];
    v.dtype = tensor.dtype;
    v.count = elementsOf(tensor);
    v.shape = shapeOf(tensor);
    v.data = data;
    return v;
}

std::vector<Prepared> prepare(const Graph& g, const core::Schedule& schedule, const Layout& layout, const core::RunOptions& options)
{
    std::vector<Prepared> steps(schedule.order.size());
    for (std::size_t s = 0; s < schedule.order.size(); ++s) {
        const auto opIndex = schedule.order[s];
        const auto& op = g.ops[opIndex];
        auto& p = steps[s];
        p.opIndex = opIndex;
        p.label = "op '" + op.name + "' (" + op.type + ")";
        p.device.call.op = p.host.op = &op;
        std::vector<int> slots;
        if (options.modelData)
            if (auto it = options.modelData->inputSlots.find(opIndex); it != options.modelData->inputSlots.end())
                slots = it->second;
        for (std::size_t k = 0; k < op.inputs.size(); ++k) {
            const std::size_t slot = k < slots.size() ? std::size_t(slots[k]) : k;
            if (p.inTensor.size() <= slot) {
                p.inTensor.resize(slot + 1, -1);
                p.device.call.in.resize(slot + 1);
                p.host.in.resize(slot + 1);
                p.inStage.resize(slot + 1);
                p.device.hostContents.resize(slot + 1, nullptr);
            }
            p.inTensor[slot] = op.inputs[k];
        }
        p.outTensor = op.outputs;
        p.outStage.resize(op.outputs.size());
        const bool defaultDomain = op.domain.empty() || op.domain == "ai.onnx";
        p.cpuKernel = defaultDomain && op.captured.empty() ? core::exec::findKernel(op.type) : nullptr;
        for (auto t : op.outputs)
            if (g.tensors[t].estimated || !layout.stored[t])
                p.cpuKernel = nullptr;
        if (p.inTensor.empty() || p.inTensor[0] < 0 || !layout.stored[p.inTensor[0]])
            p.cpuKernel = nullptr;
        const bool constant = defaultDomain && op.type == "Constant";
        const bool fill = defaultDomain && op.type == "ConstantOfShape";
        const bool swap = defaultDomain && (op.type == "SwapOut" || op.type == "SwapIn") && op.inputs.size() == 1 && op.outputs.size() == 1
            && g.tensors[op.inputs[0]].size == g.tensors[op.outputs[0]].size && layout.stored[op.inputs[0]] && layout.stored[op.outputs[0]];
        if (constant && op.outputs.size() == 1 && g.tensors[op.outputs[0]].kind == core::TensorKind::Weight)
            p.where = Where::Nothing; // its output is a weight, uploaded with the others
        else if (swap && op.type == "SwapOut" && layout.onHost[op.outputs[0]] && !layout.onHost[op.inputs[0]])
            p.where = Where::SwapOut;
        else if (swap && op.type == "SwapIn" && layout.onHost[op.inputs[0]] && !layout.onHost[op.outputs[0]])
            p.where = Where::SwapIn;
        else if (p.cpuKernel && !constant && !fill && (p.deviceKernel = findDeviceKernel(op.type)))
            p.where = Where::Device;
        else
            p.where = Where::Host;
        // Host views: pinned and weight tensors in place, everything else through staging.
        for (std::size_t k = 0; k < p.inTensor.size(); ++k) {
            const auto t = p.inTensor[k];
            if (t < 0)
                continue;
            std::byte* host = nullptr;
            if (layout.onHost[t])
                host = layout.address[t];
            else if (layout.hostCopy[t])
                host = const_cast<std::byte*>(layout.hostCopy[t]);
            else if (layout.stored[t]) {
                p.inStage[k].resize(std::size_t(g.tensors[t].size));
                host = p.inStage[k].data();
            }
            p.host.in[k] = viewOf(g, t, host);
            p.device.hostContents[k] = layout.hostCopy[t];
        }
        for (std::size_t k = 0; k < op.outputs.size(); ++k) {
            const auto t = op.outputs[k];
            std::byte* host = nullptr;
            if (layout.onHost[t])
                host = layout.address[t];
            else if (layout.stored[t]) {
                p.outStage[k].resize(std::size_t(g.tensors[t].size));
                host = p.outStage[k].data();
            }
            p.host.out.push_back(viewOf(g, t, host));
        }
    }
    return steps;
}

// Points the device views at the tensors' current addresses.
void pointDeviceViews(const Graph& g, Prepared& p, const Layout& layout)
{
    p.device.call.in.assign(p.inTensor.size(), TensorView {});
    for (std::size_t k = 0; k < p.inTensor.size(); ++k)
        if (p.inTensor[k] >= 0)
            p.device.call.in[k] = viewOf(g, p.inTensor[k], layout.address[p.inTensor[k]]);
    p.device.call.out.clear();
    for (auto t : p.outTensor)
        p.device.call.out.push_back(viewOf(g, t, layout.address[t]));
}

} // namespace

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
    auto steps = prepare(graph, schedule, *layout, options);
    const std::size_t stepCount = steps.size();

    Context ctx;
    CUDA_TRY(cudaStreamCreateWithFlags(&ctx.compute, cudaStreamNonBlocking), "creating the compute stream");
    CUDA_TRY(cudaStreamCreateWithFlags(&ctx.copy, cudaStreamNonBlocking), "creating the copy stream");
    BLAS_TRY(cublasCreate(&ctx.blas), "creating the cuBLAS handle");
    BLAS_TRY(cublasSetStream(ctx.blas, ctx.compute), "setting the cuBLAS stream");
    BLAS_TRY(cublasSetMathMode(ctx.blas, CUBLAS_DEFAULT_MATH), "setting the cuBLAS math mode (float32, no TF32)");
    // Per step: start, end, and "inputs ready" for the copy stream; then pass start/end and the copy stream's tail.
    ctx.events.resize(3 * stepCount + 3, nullptr);
    for (auto& e : ctx.events)
        CUDA_TRY(cudaEventCreate(&e), "creating events");
    auto startEvent = [&](std::size_t s) { return ctx.events[3 * s]; };
    auto endEvent = [&](std::size_t s) { return ctx.events[3 * s + 1]; };
    auto readyEvent = [&](std::size_t s) { return ctx.events[3 * s + 2]; };
    const auto passStart = ctx.events[3 * stepCount], passEnd = ctx.events[3 * stepCount + 1], copyTail = ctx.events[3 * stepCount + 2];

    std::int64_t scratchNeed = 0;
    for (auto& p : steps)
        if (p.where == Where::Device) {
            pointDeviceViews(graph, p, *layout);
            scratchNeed = std::max(scratchNeed, scratchFloats(p.device.call));
        }
    DeviceMemory scratch;
    if (scratchNeed > 0) {
        std::byte* q = nullptr;
        CUDA_TRY(cudaMalloc(&q, std::size_t(scratchNeed) * sizeof(float)), "allocating the im2col scratch");
        scratch.reset(q);
    }
    for (auto& p : steps) {
        p.device.stream = ctx.compute;
        p.device.blas = ctx.blas;
        p.device.scratch = reinterpret_cast<float*>(scratch.get());
    }
    cudaMemPool_t memPool = nullptr;
    if (pool) {
        CUDA_TRY(cudaDeviceGetDefaultMemPool(&memPool, 0), "getting the default memory pool");
        std::uint64_t keep = ~std::uint64_t(0); // the pool keeps its memory between passes, as a serving process would
        CUDA_TRY(cudaMemPoolSetAttribute(memPool, cudaMemPoolAttrReleaseThreshold, &keep), "setting the pool's release threshold");
    }

    const auto use = core::exec::bufferUse(graph, schedule, layout->placement, problem.buffers.size());
    const auto &first = use.first, &last = use.last;
    std::vector<std::vector<int>> bornAt(stepCount + 1), diesAt(stepCount + 1);
    for (std::size_t b = 0; b < problem.buffers.size(); ++b) {
        if (first[b] >= Step(stepCount))
            continue;
        bornAt[std::size_t(first[b] + 1)].push_back(int(b));
        diesAt[std::size_t(std::max({ last[b], first[b], Step(0) }) + 1)].push_back(int(b));
    }
    const auto tensorsOf = core::exec::storedTensorsByBuffer(layout->placement, problem.buffers.size());

    core::Measurement m;
    m.device = "cuda";
    m.planner = arena ? plan.planner : std::string(cudaAllocationName(allocation));
    m.allocation = arena ? core::Allocation::Arena : core::Allocation::PerTensor;
    m.arenaBytes = layout->arenaBytes;
    m.weightsBytes = layout->sideBytes;
    m.scratchBytes = scratchNeed * Bytes(sizeof(float));
    const int repeat = std::max(1, options.repeat);
    std::vector<std::vector<double>> opTimes(stepCount);
    std::vector<double> totals;
    std::vector<bool> real(stepCount, true), onHostRun(stepCount, false);
    std::vector<Bytes> stepBytes(stepCount, 0);

    enum class Pass { Warmup, Timed, Traced };
    auto runPass = [&](Pass kind, int passIndex) -> core::Status {
        std::vector<DeviceMemory> owned(arena ? 0 : problem.buffers.size());
        struct PendingSwap {
            int buffer;
            Bytes from, to; // arena byte range of the source
            cudaEvent_t done;
        };
        std::vector<PendingSwap> pending;
        auto waitPending = [&](int b, bool blockHost) -> core::Status {
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
        };
        auto point = [&](int b) {
            for (auto t : tensorsOf[std::size_t(b)])
                layout->address[t] = owned[std::size_t(b)].get();
        };
        auto allocate = [&](int b) -> core::Status {
            const auto& buffer = problem.buffers[std::size_t(b)];
            std::byte* q = nullptr;
            const auto bytes = std::size_t(std::max<Bytes>(buffer.size, 1));
            if (pool)
                CUDA_TRY(cudaMallocAsync(&q, bytes, ctx.compute), "allocating '" + buffer.name + "' from the pool");
            else
                CUDA_TRY(cudaMalloc(&q, bytes), "allocating '" + buffer.name + "'");
            owned[std::size_t(b)].reset(q);
            point(b);
            return {};
        };
        auto release = [&](int b) -> core::Status {
            if (auto st = waitPending(b, !pool); !st)
                return st;
            std::byte* q = owned[std::size_t(b)].release();
            if (q && pool)
                CUDA_TRY(cudaFreeAsync(q, ctx.compute), "returning '" + problem.buffers[std::size_t(b)].name + "' to the pool");
            else if (q)
                CUDA_TRY(cudaFree(q), "freeing '" + problem.buffers[std::size_t(b)].name + "'");
            point(b);
            return {};
        };
        auto poolInUse = [&](Bytes& used) -> core::Status {
            std::uint64_t v = 0;
            CUDA_TRY(cudaMemPoolGetAttribute(memPool, cudaMemPoolAttrUsedMemCurrent, &v), "reading the pool's usage");
            used = Bytes(v);
            return {};
        };
        Bytes baseline = 0, live = 0; // live: bytes of the buffers allocated (arena: holding a value still to be read)
        if (kind == Pass::Traced && pool) {
            CUDA_TRY(cudaStreamSynchronize(ctx.compute), "synchronising before the traced pass");
            if (auto st = poolInUse(baseline); !st)
                return st;
        }
        CUDA_TRY(cudaEventRecord(passStart, ctx.compute), "starting the pass");
        for (int b : bornAt[0]) {
            if (!arena)
                if (auto st = allocate(b); !st)
                    return st;
            live += problem.buffers[std::size_t(b)].size;
        }
        for (const auto& [t, data] : *inputs)
            if (layout->address[t])
                CUDA_TRY(cudaMemcpyAsync(layout->address[t], data.data(), data.size(), cudaMemcpyHostToDevice, ctx.compute),
                    "uploading input '" + graph.tensors[t].name + "'");
        for (std::size_t s = 0; s < stepCount; ++s) {
            if (options.cancel.isCancelled())
                return core::makeError(ErrorCode::Cancelled,
                    "the run was cancelled at op " + std::to_string(s) + " of " + std::to_string(stepCount));
            auto& p = steps[s];
            const bool onCopy = p.where == Where::SwapOut || p.where == Where::SwapIn;
            if (!onCopy)
                CUDA_TRY(cudaEventRecord(startEvent(s), ctx.compute), p.label);
            for (int b : bornAt[s + 1]) {
                if (!arena)
                    if (auto st = allocate(b); !st)
                        return st;
                live += problem.buffers[std::size_t(b)].size;
            }
            for (auto t : p.outTensor) // nothing overwrites a swap-out's source before its copy is done
                if (layout->bufferOf[t] >= 0 && arena)
                    if (auto st = waitPending(layout->bufferOf[t], false); !st)
                        return st;
            pointDeviceViews(graph, p, *layout);
            auto where = p.where;
            if (where == Where::Device) {
                const auto outcome = p.deviceKernel(p.device);
                if (!outcome.failure.empty())
                    return core::makeError(ErrorCode::CudaFailure, p.label + ": " + outcome.failure);
                if (!outcome.supported)
                    where = Where::Host;
            }
            if (where == Where::Host) {
                onHostRun[s] = true;
                CUDA_TRY(cudaStreamSynchronize(ctx.compute), p.label);
                CUDA_TRY(cudaStreamSynchronize(ctx.copy), p.label); // a swapped tensor it reads is complete
                for (std::size_t k = 0; k < p.inTensor.size(); ++k)
                    if (!p.inStage[k].empty() && p.device.call.in[k].data)
                        CUDA_TRY(cudaMemcpy(p.inStage[k].data(), p.device.call.in[k].data, p.inStage[k].size(), cudaMemcpyDeviceToHost),
                            p.label + " (input " + std::to_string(k) + " to the host)");
                real[s] = core::exec::runHostOp(graph, p.host, p.opIndex, p.cpuKernel, options);
                for (std::size_t k = 0; k < p.outTensor.size(); ++k)
                    if (!p.outStage[k].empty() && p.device.call.out[k].data)
                        CUDA_TRY(cudaMemcpyAsync(p.device.call.out[k].data, p.outStage[k].data(), p.outStage[k].size(), cudaMemcpyHostToDevice,
                                     ctx.compute),
                            p.label + " (output " + std::to_string(k) + " to the device)");
            } else if (onCopy) {
                const auto &in = p.device.call.in[0], &out = p.device.call.out[0];
                CUDA_TRY(cudaEventRecord(readyEvent(s), ctx.compute), p.label);
                CUDA_TRY(cudaStreamWaitEvent(ctx.copy, readyEvent(s), 0), p.label);
                CUDA_TRY(cudaEventRecord(startEvent(s), ctx.copy), p.label);
                CUDA_TRY(cudaMemcpyAsync(out.data, in.data, std::size_t(out.bytes()),
                             where == Where::SwapOut ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice, ctx.copy),
                    p.label);
                CUDA_TRY(cudaEventRecord(endEvent(s), ctx.copy), p.label);
                if (where == Where::SwapIn)
                    CUDA_TRY(cudaStreamWaitEvent(ctx.compute, endEvent(s), 0), p.label);
                else {
                    const auto t = p.inTensor[0];
                    const int b = layout->bufferOf[t];
                    const Bytes from = arena && b >= 0 ? plan.offsets[std::size_t(b)] : 0;
                    pending.push_back(PendingSwap { b, from, from + graph.tensors[t].size, endEvent(s) });
                }
            }
            if (!onCopy)
                CUDA_TRY(cudaEventRecord(endEvent(s), ctx.compute), p.label);
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
                        if (auto st = release(b); !st)
                            return st;
                }
            if (kind == Pass::Timed && options.progress)
                options.progress(passIndex * int(stepCount) + int(s) + 1, repeat * int(stepCount));
        }
        CUDA_TRY(cudaEventRecord(copyTail, ctx.copy), "ending the pass");
        CUDA_TRY(cudaStreamWaitEvent(ctx.compute, copyTail, 0), "ending the pass");
        CUDA_TRY(cudaEventRecord(passEnd, ctx.compute), "ending the pass");
        CUDA_TRY(cudaStreamSynchronize(ctx.compute), "ending the pass");
        if (kind == Pass::Warmup)
            for (auto t : graph.outputs) {
                core::HostTensor h;
                const auto& tensor = graph.tensors[t];
                h.dtype = tensor.dtype;
                h.shape = shapeOf(tensor);
                if (const auto* q = layout->address[t]) {
                    h.data.resize(std::size_t(std::max<Bytes>(tensor.size, 0)));
                    CUDA_TRY(cudaMemcpy(h.data.data(), q, h.data.size(), cudaMemcpyDefault), "reading output '" + tensor.name + "'");
                }
                m.outputs.push_back(std::move(h));
            }
        for (std::size_t b = 0; b < owned.size(); ++b)
            if (owned[b])
                if (auto st = release(int(b)); !st)
                    return st;
        CUDA_TRY(cudaStreamSynchronize(ctx.compute), "ending the pass");
        if (kind == Pass::Timed) {
            for (std::size_t s = 0; s < stepCount; ++s) {
                float ms = 0;
                CUDA_TRY(cudaEventElapsedTime(&ms, startEvent(s), endEvent(s)), steps[s].label + " (timing)");
                opTimes[s].push_back(double(ms));
            }
            float ms = 0;
            CUDA_TRY(cudaEventElapsedTime(&ms, passStart, passEnd), "timing the pass");
            totals.push_back(double(ms));
        }
        return {};
    };

    if (auto st = runPass(Pass::Warmup, 0); !st)
        return st.error();
    for (int r = 0; r < repeat; ++r)
        if (auto st = runPass(Pass::Timed, r); !st)
            return st.error();
    if (auto st = runPass(Pass::Traced, 0); !st)
        return st.error();
    if (stepCount == 0 && options.progress)
        options.progress(0, 0);

    for (std::size_t s = 0; s < stepCount; ++s) {
        const auto& op = *steps[s].device.call.op;
        (real[s] ? m.opsReal : m.opsSynthetic)++;
        m.opsHost += onHostRun[s] ? 1 : 0;
        m.ops.push_back(core::OpMeasurement { op.name, op.type, bool(real[s]), core::median(opTimes[s]), core::percentile(opTimes[s], 0.99), bool(onHostRun[s]) });
    }
    m.stepBytes = std::move(stepBytes);
    m.stepPeakBytes = m.stepBytes.empty() ? 0 : *std::max_element(m.stepBytes.begin(), m.stepBytes.end());
    m.latencyMs = core::LatencyStats { core::median(totals), core::percentile(totals, 0.5), core::percentile(totals, 0.99) };
    m.peakBytes = (arena ? m.arenaBytes : m.stepPeakBytes) + m.weightsBytes + m.scratchBytes;
    return m;
}

std::string compareWithin(const Graph& graph, const std::vector<core::HostTensor>& expected, const std::vector<core::HostTensor>& actual,
    double tolerance)
{
    if (expected.size() != actual.size())
        return "different number of outputs";
    for (std::size_t k = 0; k < expected.size(); ++k) {
        const auto &e = expected[k], &a = actual[k];
        const std::string name = k < graph.outputs.size() ? graph.tensors[graph.outputs[k]].name : std::to_string(k);
        if (e.dtype != a.dtype || e.data.size() != a.data.size())
            return "output '" + name + "': different type or size";
        if (e.dtype != core::DType::Float32) {
            if (e.data != a.data)
                return "output '" + name + "' differs (not float: compared exactly)";
            continue;
        }
        const auto n = e.data.size() / sizeof(float);
        const auto* x = reinterpret_cast<const float*>(e.data.data());
        const auto* y = reinterpret_cast<const float*>(a.data.data());
        double scale = 0;
        for (std::size_t i = 0; i < n; ++i)
            if (std::isfinite(x[i]))
                scale = std::max(scale, std::fabs(double(x[i])));
        for (std::size_t i = 0; i < n; ++i) {
            if ((std::isnan(x[i]) && std::isnan(y[i])) || x[i] == y[i])
                continue;
            if (!(std::fabs(double(x[i]) - double(y[i])) <= tolerance * (std::fabs(double(x[i])) + scale)))
                return "output '" + name + "' element " + std::to_string(i) + ": expected " + std::to_string(x[i]) + ", got " + std::to_string(y[i]);
        }
    }
    return {};
}

} // namespace gpu
