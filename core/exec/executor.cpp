// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/executor.h"

#include "exec/hostops.h"
#include "exec/kernels.h"
#include "exec/layout.h"
#include "util/stats.h"

#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

namespace core {

namespace {

constexpr Bytes kHostAlignment = 64; // cache line; also enough for any element type

struct AlignedFree {
    void operator()(std::byte* p) const { std::free(p); }
};
using Memory = std::unique_ptr<std::byte[], AlignedFree>;

Memory allocate(Bytes bytes, Bytes alignment)
{
    alignment = std::max(alignment, kHostAlignment);
    const Bytes rounded = std::max<Bytes>(alignUp(bytes, alignment), alignment);
    auto* p = static_cast<std::byte*>(std::aligned_alloc(std::size_t(alignment), std::size_t(rounded)));
    if (p)
        std::memset(p, 0, std::size_t(rounded)); // touch every page: the arena is resident, as on a device
    return Memory(p);
}

// Where each tensor lives for one run and how the kernels see it.
struct Layout {
    Memory arena, side;
    std::vector<std::byte*> address; // per tensor; nullptr for tensors of size 0 (PerTensor: until allocated)
    std::vector<int> bufferOf;       // per tensor: its buffer in the problem, -1 for side-region tensors
    std::vector<bool> stored;        // per tensor: has memory in this run (a buffer or a side slot)
    Bytes arenaBytes = 0, sideBytes = 0;
    exec::Placement placement;
};

std::int64_t elementsOf(const Tensor& t)
{
    const Bytes w = dtypeBytes(t.dtype);
    return w > 0 && t.size > 0 ? t.size / w : 0;
}

exec::TensorView viewOf(const Graph& g, const Layout& layout, TensorIndex t)
{
    exec::TensorView v;
    const auto& tensor = g.tensors[t];
    v.dtype = tensor.dtype;
    v.count = elementsOf(tensor);
    v.data = layout.address[t];
    const bool shapeKnown = tensor.rankKnown && !tensor.estimated
        && std::all_of(tensor.shape.begin(), tensor.shape.end(), [](std::int64_t d) { return d >= 0; });
    v.shape = shapeKnown ? tensor.shape : exec::Shape { v.count };
    return v;
}

// Pointers for the device-independent placement (exec/layout.h): the arena and the side region
// are host allocations. PerTensor: buffers get no address here; the run allocates each one at its
// first use. Fused ops' internal tensors get nothing here: they live in the fused scratch (FusedScratch).
Expected<Layout> makeLayout(const Graph& g, const PlanProblem& problem, const Plan& plan, const std::vector<TensorIndex>& bufferTensor,
    Allocation allocation, const std::vector<bool>& internal)
{
    const bool arena = allocation == Allocation::Arena;
    auto placement = exec::placeTensors(g, problem, plan, bufferTensor, exec::PlacementOptions { arena, kHostAlignment, &internal });
    if (!placement)
        return placement.error();
    Layout layout;
    layout.address.assign(g.tensors.size(), nullptr);
    layout.bufferOf.assign(g.tensors.size(), -1);
    layout.stored.assign(g.tensors.size(), false);
    layout.arenaBytes = placement->arenaBytes;
    layout.sideBytes = placement->sideBytes;
    if (arena) {
        layout.arena = allocate(plan.arenaSize, problem.alignment);
        if (!layout.arena)
            return makeError(ErrorCode::Io, "cannot allocate an arena of " + std::to_string(plan.arenaSize) + " bytes");
    }
    layout.side = allocate(layout.sideBytes, kHostAlignment);
    if (!layout.side)
        return makeError(ErrorCode::Io, "cannot allocate " + std::to_string(layout.sideBytes) + " bytes for weights");
    for (std::size_t t = 0; t < g.tensors.size(); ++t) {
        const auto& p = placement->tensors[t];
        layout.bufferOf[t] = p.buffer;
        layout.stored[t] = p.stored;
        if (p.kind == exec::PlaceKind::Buffer && arena)
            layout.address[t] = layout.arena.get() + p.offset;
        else if (p.kind == exec::PlaceKind::Side)
            layout.address[t] = layout.side.get() + p.offset;
    }
    layout.placement = std::move(*placement);
    return layout;
}

// The internal tensors of fused ops (fusedInternals): one allocation holding, at different offsets,
// the internals of the fused op that needs most; every fused op's internals start at offset 0, since
// fused ops run one at a time. Internals never reach the arena: that is what fusion saves.
struct FusedScratch {
    std::vector<bool> internal; // per tensor
    std::vector<Bytes> offset;  // per tensor: offset in the scratch, -1 when not internal
    Memory memory;
    Bytes bytes = 0;
    std::byte* address(TensorIndex t) const { return memory.get() + offset[std::size_t(t)]; }
};

Expected<FusedScratch> makeFusedScratch(const Graph& g, const Schedule& schedule)
{
    FusedScratch scratch;
    scratch.internal.assign(g.tensors.size(), false);
    scratch.offset.assign(g.tensors.size(), -1);
    for (const auto o : schedule.order) {
        const auto& op = g.ops[std::size_t(o)];
        for (const auto& part : op.body)
            for (const auto* list : { &part.inputs, &part.outputs })
                for (const auto t : *list)
                    if (t < 0 || t >= TensorIndex(g.tensors.size()))
                        return makeError(ErrorCode::InvalidArgument,
                            "fused op '" + op.name + "': body op '" + part.name + "' names a tensor index out of range");
        Bytes used = 0;
        for (const auto t : fusedInternals(op)) {
            if (scratch.internal[std::size_t(t)])
                continue; // a recompute clone of a fused op shares its internals; same offsets, same size
            scratch.internal[std::size_t(t)] = true;
            scratch.offset[std::size_t(t)] = used;
            used += alignUp(std::max<Bytes>(g.tensors[std::size_t(t)].size, 0), kHostAlignment);
        }
        scratch.bytes = std::max(scratch.bytes, used);
    }
    if (scratch.bytes > 0) {
        scratch.memory = allocate(scratch.bytes, kHostAlignment);
        if (!scratch.memory)
            return makeError(ErrorCode::Io, "cannot allocate " + std::to_string(scratch.bytes) + " bytes of fused-op scratch");
    }
    return scratch;
}

// One kernel call as prepared for the run: an op of the schedule, or one op of a fused op's body.
struct Prepared {
    exec::KernelCall call;
    std::vector<TensorIndex> inTensor, outTensor; // per slot; -1 for an absent optional input
    exec::Kernel kernel = nullptr;
    bool constant = false; // Constant op: its output is a preloaded weight
    bool fill = false;     // ConstantOfShape
    OpIndex opIndex = 0;
    std::vector<Prepared> body; // a fused op: its body's calls, in order
};

// Weights into their places.
void fillWeights(const Graph& g, const Layout& layout, const RunOptions& options)
{
    for (std::size_t t = 0; t < g.tensors.size(); ++t) {
        const auto& tensor = g.tensors[t];
        if (layout.address[t] && (tensor.kind == TensorKind::Weight || tensor.kind == TensorKind::Persistent))
            exec::weightContents(g, TensorIndex(t), layout.address[t], options);
    }
}

// Graph inputs into their places (PerTensor: once their buffers are allocated); errors name the tensor.
Status fillGraphInputs(const Graph& g, const Layout& layout, const RunOptions& options)
{
    for (auto t : g.inputs) {
        const auto& tensor = g.tensors[t];
        std::byte* p = layout.address[t];
        if (!p)
            continue;
        const auto it = options.inputs.find(tensor.name);
        if (it == options.inputs.end()) {
            exec::fillRandom(tensor, p, options.seed, false);
            continue;
        }
        if (it->second.dtype != tensor.dtype || Bytes(it->second.data.size()) != tensor.size)
            return makeError(ErrorCode::InvalidArgument, "input '" + tensor.name + "': the model expects " + std::string(dtypeName(tensor.dtype))
                                 + " of " + std::to_string(tensor.size) + " bytes, the file gives " + std::string(dtypeName(it->second.dtype))
                                 + " of " + std::to_string(it->second.data.size()) + " bytes");
        std::memcpy(p, it->second.data.data(), it->second.data.size());
    }
    for (const auto& [name, value] : options.inputs)
        if (!g.findTensor(name) || std::none_of(g.inputs.begin(), g.inputs.end(), [&](TensorIndex t) { return g.tensors[t].name == name; }))
            return makeError(ErrorCode::InvalidArgument, "input '" + name + "': the model has no such graph input");
    return {};
}

// Writes an op's outputs from the constant values import folded, when it knows all of them.
bool writeKnownValues(const Graph& g, const exec::KernelCall& call, const Op& op)
{
    for (std::size_t k = 0; k < op.outputs.size(); ++k) {
        const auto& t = g.tensors[op.outputs[k]];
        if (t.dtype != DType::Int64 || t.values.empty() || std::int64_t(t.values.size()) != call.out[k].count)
            return false;
    }
    for (std::size_t k = 0; k < op.outputs.size(); ++k)
        std::memcpy(call.out[k].data, g.tensors[op.outputs[k]].values.data(), std::size_t(call.out[k].bytes()));
    return true;
}

// Constant: a weight output was filled before the run; any other (a graph output) is copied from
// the model's data each run. False when the contents are unknown (synthetic then).
bool runConstant(const Graph& g, const exec::KernelCall& call, const RunOptions& options)
{
    if (call.out.size() != 1)
        return false;
    const TensorIndex t = call.op->outputs[0];
    if (g.tensors[t].kind == TensorKind::Weight)
        return true;
    if (!options.modelData)
        return false;
    const auto it = options.modelData->weights.find(t);
    if (it == options.modelData->weights.end() || Bytes(it->second.data.size()) != call.out[0].bytes())
        return false;
    std::memcpy(call.out[0].data, it->second.data.data(), it->second.data.size());
    return true;
}

// ConstantOfShape: every element the `value` attribute (from the model file), float 0 without one.
// Needs the model's data to know whether the attribute exists; false without it (synthetic then).
bool runConstantOfShape(const exec::KernelCall& call, OpIndex opIndex, const RunOptions& options)
{
    if (!options.modelData || call.out.size() != 1)
        return false;
    const auto& y = call.out[0];
    const Bytes w = dtypeBytes(y.dtype);
    const auto it = options.modelData->fillValues.find(opIndex);
    if (it == options.modelData->fillValues.end()) {
        if (y.dtype != DType::Float32)
            return false;
        std::fill(y.f32(), y.f32() + y.count, 0.0f);
        return true;
    }
    if (it->second.dtype != y.dtype || Bytes(it->second.data.size()) != w)
        return false;
    for (std::int64_t i = 0; i < y.count; ++i)
        std::memcpy(y.data + i * w, it->second.data.data(), std::size_t(w));
    return true;
}

// One op with the executor's rules; true when real (the synthetic kernel did not run).
bool runOp(const Graph& g, const exec::KernelCall& call, OpIndex opIndex, exec::Kernel kernel, bool constant, bool fill,
    const RunOptions& options)
{
    bool ok = (constant && runConstant(g, call, options)) || (fill && runConstantOfShape(call, opIndex, options));
    if (!ok && kernel)
        ok = kernel(call);
    if (!ok)
        ok = writeKnownValues(g, call, *call.op);
    if (!ok)
        exec::syntheticKernel(call);
    return ok;
}


} // namespace

// Deterministic contents for a tensor nobody gave: per tensor its own stream (seed ^ hash(name)),
// so adding a tensor does not change the others.
void exec::fillRandom(const Tensor& t, std::byte* p, std::uint64_t seed, bool isWeight)
{
    std::mt19937_64 rng(seed ^ std::hash<std::string> {}(t.name));
    const auto n = elementsOf(t);
    if (t.dtype == DType::Float32) {
        float scale = 1.0f, shift = 0.0f;
        if (isWeight && t.shape.size() >= 2 && t.shape[0] > 0)
            scale = 1.0f / std::sqrt(float(std::max<std::int64_t>(1, n / t.shape[0])));
        else if (isWeight) { // 1-D weights (scales, variances, biases): positive, near 1
            scale = 0.5f;
            shift = 1.0f;
        }
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        auto* f = reinterpret_cast<float*>(p);
        for (std::int64_t i = 0; i < n; ++i)
            f[i] = dist(rng) * scale + shift;
        return;
    }
    const Bytes w = dtypeBytes(t.dtype);
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t v = isWeight ? 0 : std::int64_t(rng() % 4);
        if (t.dtype == DType::Int64)
            std::memcpy(p + i * w, &v, 8);
        else if (t.dtype == DType::Int32) {
            const auto v32 = std::int32_t(v);
            std::memcpy(p + i * w, &v32, 4);
        } else if (t.dtype == DType::Bool)
            p[i] = std::byte(v & 1);
        else
            std::memset(p + i * w, 0, std::size_t(w));
    }
}

void exec::weightContents(const Graph& g, TensorIndex t, std::byte* p, const RunOptions& options)
{
    const auto& tensor = g.tensors[t];
    if (options.modelData) {
        const auto it = options.modelData->weights.find(t);
        if (it != options.modelData->weights.end() && Bytes(it->second.data.size()) == tensor.size) {
            std::memcpy(p, it->second.data.data(), it->second.data.size());
            return;
        }
    }
    if (tensor.dtype == DType::Int64 && std::int64_t(tensor.values.size()) == elementsOf(tensor) && !tensor.values.empty()) {
        std::memcpy(p, tensor.values.data(), std::size_t(tensor.size));
        return;
    }
    fillRandom(tensor, p, options.seed, true);
}

bool exec::runHostOp(const Graph& g, const KernelCall& call, OpIndex opIndex, Kernel kernel, const RunOptions& options)
{
    const auto& op = *call.op;
    const bool defaultDomain = op.domain.empty() || op.domain == "ai.onnx";
    const bool constant = defaultDomain && op.type == "Constant";
    const bool fill = defaultDomain && op.type == "ConstantOfShape" && op.outputs.size() == 1 && !g.tensors[op.outputs[0]].estimated;
    return runOp(g, call, opIndex, kernel, constant, fill, options);
}

Plan noReusePlan(const PlanProblem& problem)
{
    Plan plan;
    plan.planner = "no-reuse";
    for (const auto& b : problem.buffers) {
        plan.offsets.push_back(plan.arenaSize);
        plan.arenaSize += alignUp(b.size, std::max<Bytes>(problem.alignment, 1));
    }
    return plan;
}

std::string_view allocationName(Allocation allocation)
{
    return allocation == Allocation::PerTensor ? "per-tensor" : "arena";
}

namespace {

// Bytes the C allocator has handed out: small chunks from its heaps plus large mmapped blocks.
Bytes allocatorInUse()
{
    const auto info = mallinfo2();
    return Bytes(info.uordblks) + Bytes(info.hblkhd);
}

} // namespace

Expected<Measurement> runOnCpu(const Graph& graph, const Schedule& schedule, const PlanProblem& problem, const Plan& plan,
    const std::vector<TensorIndex>& bufferTensor, const RunOptions& options)
{
    const bool perTensor = options.allocation == Allocation::PerTensor;
    auto fusedScratch = makeFusedScratch(graph, schedule);
    if (!fusedScratch)
        return fusedScratch.error();
    auto layout = makeLayout(graph, problem, plan, bufferTensor, options.allocation, fusedScratch->internal);
    if (!layout)
        return layout.error();
    fillWeights(graph, *layout, options);
    if (!perTensor)
        if (auto s = fillGraphInputs(graph, *layout, options); !s)
            return s.error();

    // Kernel calls are prepared once: views point into the layout (PerTensor: re-pointed every step).
    // A fused op with a body is its body's calls, run in order; their internal tensors point into the
    // fused scratch, which no other op touches.
    auto addressOf = [&](TensorIndex t) {
        return fusedScratch->internal[std::size_t(t)] ? fusedScratch->address(t) : layout->address[std::size_t(t)];
    };
    // An internal of unknown size has no room in the scratch: the body ops around it run synthetic.
    auto storedOf = [&](TensorIndex t) {
        return fusedScratch->internal[std::size_t(t)] ? graph.tensors[std::size_t(t)].size > 0 : layout->stored[std::size_t(t)];
    };
    auto prepare = [&](const Op& op, const std::vector<int>* slots) {
        Prepared p;
        p.call.op = &op;
        for (std::size_t k = 0; k < op.inputs.size(); ++k) {
            const std::size_t slot = slots && k < slots->size() ? std::size_t((*slots)[k]) : k;
            if (p.call.in.size() <= slot) {
                p.call.in.resize(slot + 1);
                p.inTensor.resize(slot + 1, -1);
            }
            p.call.in[slot] = viewOf(graph, *layout, op.inputs[k]);
            p.call.in[slot].data = addressOf(op.inputs[k]);
            p.inTensor[slot] = op.inputs[k];
        }
        for (auto t : op.outputs) {
            p.call.out.push_back(viewOf(graph, *layout, t));
            p.call.out.back().data = addressOf(t);
        }
        p.outTensor = op.outputs;
        const bool defaultDomain = op.domain.empty() || op.domain == "ai.onnx";
        p.constant = defaultDomain && op.type == "Constant";
        p.fill = defaultDomain && op.type == "ConstantOfShape" && op.outputs.size() == 1 && !graph.tensors[op.outputs[0]].estimated;
        p.kernel = defaultDomain && op.captured.empty() ? exec::findKernel(op.type) : nullptr;
        // Kernels need every input they read present; an unsized or estimated tensor means the
        // static shapes cannot be trusted, so such ops run synthetic.
        for (auto t : op.outputs)
            if (graph.tensors[t].estimated || !storedOf(t))
                p.kernel = nullptr;
        if (p.inTensor.empty() || p.inTensor[0] < 0 || !storedOf(p.inTensor[0]))
            p.kernel = nullptr;
        return p;
    };
    std::vector<Prepared> steps;
    for (const auto opIndex : schedule.order) {
        const auto& op = graph.ops[opIndex];
        const std::vector<int>* slots = nullptr;
        if (options.modelData)
            if (auto it = options.modelData->inputSlots.find(opIndex); it != options.modelData->inputSlots.end())
                slots = &it->second;
        Prepared p = prepare(op, slots);
        for (std::size_t k = 0; k < op.body.size(); ++k) {
            const std::vector<int>* bodySlots = nullptr;
            if (options.modelData)
                if (auto it = options.modelData->bodyInputSlots.find({ opIndex, int(k) }); it != options.modelData->bodyInputSlots.end())
                    bodySlots = &it->second;
            p.body.push_back(prepare(op.body[k], bodySlots));
        }
        p.opIndex = opIndex;
        steps.push_back(std::move(p));
    }

    // Measured memory: which buffers hold a value still to be read (arena), or what malloc holds (per-tensor).
    const auto use = exec::bufferUse(graph, schedule, layout->placement, problem.buffers.size());
    const Step stepCount = Step(steps.size());
    std::vector<std::vector<int>> bornAt(std::size_t(stepCount) + 1), diesAt(std::size_t(stepCount) + 1);
    for (std::size_t b = 0; b < problem.buffers.size(); ++b) {
        if (use.first[b] >= stepCount)
            continue; // never touched by the run
        bornAt[std::size_t(use.first[b] + 1)].push_back(int(b)); // slot 0: before step 0
        diesAt[std::size_t(std::max({ use.last[b], use.first[b], Step(0) }) + 1)].push_back(int(b));
    }
    std::vector<Memory> owned(perTensor ? problem.buffers.size() : 0); // PerTensor: one allocation per buffer
    // No memset, unlike the arena: a fresh cudaMalloc is not cleared either, and kernels write every output byte.
    auto allocateBuffer = [&](int b) -> Status {
        const auto& buffer = problem.buffers[std::size_t(b)];
        const Bytes bytes = std::max<Bytes>(alignUp(buffer.size, kHostAlignment), kHostAlignment);
        owned[std::size_t(b)] = Memory(static_cast<std::byte*>(std::aligned_alloc(std::size_t(kHostAlignment), std::size_t(bytes))));
        if (!owned[std::size_t(b)])
            return makeError(ErrorCode::Io, "cannot allocate " + std::to_string(buffer.size) + " bytes for '" + buffer.name + "'");
        return {};
    };
    const auto tensorsOf = exec::storedTensorsByBuffer(layout->placement, perTensor ? problem.buffers.size() : 0);
    // Points the tensors of buffer b at its memory (nullptr once freed).
    auto pointTensors = [&](int b) {
        for (auto t : tensorsOf[std::size_t(b)])
            layout->address[t] = owned[std::size_t(b)].get();
    };

    Measurement m;
    m.planner = perTensor ? std::string("per-tensor") : plan.planner;
    m.allocation = options.allocation;
    m.arenaBytes = layout->arenaBytes;
    m.weightsBytes = layout->sideBytes;
    const int repeat = std::max(1, options.repeat);
    const int totalOps = int(steps.size()) * repeat;
    std::vector<std::vector<double>> opTimes(steps.size());
    std::vector<bool> real(steps.size(), false);
    std::vector<double> totals;
    std::vector<Bytes> stepBytes(steps.size(), 0);
    using Clock = std::chrono::steady_clock;
    for (int r = 0; r < repeat; ++r) {
        const Bytes baseline = perTensor ? allocatorInUse() : 0;
        Bytes live = 0;
        for (int b : bornAt[0]) {
            if (perTensor) {
                if (auto s = allocateBuffer(b); !s)
                    return s.error();
                pointTensors(b);
            }
            live += problem.buffers[b].size;
        }
        if (perTensor)
            if (auto s = fillGraphInputs(graph, *layout, options); !s)
                return s.error();
        const auto runStart = Clock::now();
        for (std::size_t s = 0; s < steps.size(); ++s) {
            if (options.cancel.isCancelled())
                return makeError(ErrorCode::Cancelled,
                    "the run was cancelled at op " + std::to_string(s) + " of " + std::to_string(steps.size()));
            auto& p = steps[s];
            const auto start = Clock::now();
            for (int b : bornAt[s + 1]) {
                if (perTensor) {
                    if (auto st = allocateBuffer(b); !st)
                        return st.error();
                    pointTensors(b);
                }
                live += problem.buffers[b].size;
            }
            auto repoint = [&](Prepared& q) {
                for (std::size_t k = 0; k < q.call.in.size(); ++k)
                    if (q.inTensor[k] >= 0)
                        q.call.in[k].data = addressOf(q.inTensor[k]);
                for (std::size_t k = 0; k < q.call.out.size(); ++k)
                    q.call.out[k].data = addressOf(q.outTensor[k]);
            };
            auto execute = [&](Prepared& q, OpIndex opIndex) {
                if (perTensor)
                    repoint(q);
                return runOp(graph, q.call, opIndex, q.kernel, q.constant, q.fill, options);
            };
            if (p.body.empty())
                real[s] = execute(p, p.opIndex);
            else {
                // A fused op is real when every op of its body ran a real kernel.
                bool all = true;
                for (auto& part : p.body)
                    all = execute(part, -1) && all;
                real[s] = all;
            }
            stepBytes[s] = perTensor ? allocatorInUse() - baseline : live;
            // Graph outputs die after the last step; they are read back below first.
            if (s + 1 < steps.size())
                for (int b : diesAt[s + 1]) {
                    live -= problem.buffers[b].size;
                    if (perTensor) {
                        owned[b].reset();
                        pointTensors(b);
                    }
                }
            opTimes[s].push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
            if (options.progress)
                options.progress(r * int(steps.size()) + int(s) + 1, totalOps);
        }
        totals.push_back(std::chrono::duration<double, std::milli>(Clock::now() - runStart).count());
        if (r == 0)
            for (auto t : graph.outputs) {
                HostTensor h;
                const auto& tensor = graph.tensors[t];
                h.dtype = tensor.dtype;
                h.shape = viewOf(graph, *layout, t).shape;
                if (const auto* p = layout->address[t])
                    h.data.assign(p, p + std::max<Bytes>(tensor.size, 0));
                m.outputs.push_back(std::move(h));
            }
        for (std::size_t b = 0; b < owned.size(); ++b) {
            owned[b].reset();
            pointTensors(int(b));
        }
    }
    if (steps.empty() && options.progress)
        options.progress(0, 0);
    for (std::size_t s = 0; s < steps.size(); ++s) {
        const auto& op = *steps[s].call.op;
        (real[s] ? m.opsReal : m.opsSynthetic)++;
        m.ops.push_back(OpMeasurement { op.name, op.type, real[s], median(opTimes[s]), percentile(opTimes[s], 0.99) });
    }
    m.stepBytes = std::move(stepBytes);
    m.stepPeakBytes = m.stepBytes.empty() ? 0 : *std::max_element(m.stepBytes.begin(), m.stepBytes.end());
    m.latencyMs = LatencyStats { median(totals), percentile(totals, 0.5), percentile(totals, 0.99) };
    m.scratchBytes = exec::scratchHighWater() + fusedScratch->bytes;
    m.peakBytes = (perTensor ? m.stepPeakBytes : m.arenaBytes) + m.weightsBytes + m.scratchBytes;
    rusage usage {};
    if (getrusage(RUSAGE_SELF, &usage) == 0)
        m.peakRssBytes = Bytes(usage.ru_maxrss) * 1024;
    return m;
}

std::string compareOutputs(const Graph& graph, const std::vector<HostTensor>& expected, const std::vector<HostTensor>& actual)
{
    if (expected.size() != actual.size())
        return "different number of outputs";
    for (std::size_t k = 0; k < expected.size(); ++k) {
        const auto& a = expected[k].data;
        const auto& b = actual[k].data;
        const std::string name = k < graph.outputs.size() ? graph.tensors[graph.outputs[k]].name : std::to_string(k);
        if (a.size() != b.size())
            return "output '" + name + "': different sizes";
        const auto diff = std::mismatch(a.begin(), a.end(), b.begin());
        if (diff.first != a.end())
            return "output '" + name + "' differs first at byte " + std::to_string(diff.first - a.begin()) + " of " + std::to_string(a.size());
    }
    return {};
}

Expected<PlanRunCheck> checkPlanByRunning(const Graph& graph, const Schedule& schedule, const PlanProblem& problem,
    const Plan& plan, const std::vector<TensorIndex>& bufferTensor, const RunOptions& options)
{
    PlanRunCheck check;
    auto reference = runOnCpu(graph, schedule, problem, noReusePlan(problem), bufferTensor, options);
    if (!reference)
        return reference.error();
    auto planned = runOnCpu(graph, schedule, problem, plan, bufferTensor, options);
    if (!planned)
        return planned.error();
    check.mismatch = compareOutputs(graph, reference->outputs, planned->outputs);
    check.outputsMatch = check.mismatch.empty();
    check.reference = std::move(*reference);
    check.planned = std::move(*planned);
    return check;
}

} // namespace core
