// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/executor.h"

#include "exec/bodyslots.h"
#include "exec/channelslast.h"
#include "exec/hostops.h"
#include "exec/kernels.h"
#include "exec/layout.h"
#include "exec/opcall.h"
#include "exec/runshape.h"
#include "exec/onednn.h"
#include "exec/workspace.h"
#include "liveness/lifetimes.h"
#include "util/format.h"
#include "util/memory.h"
#include "util/stats.h"

#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

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

// "its largest buffer is 'y' (3.73 GiB), output of ConstantOfShape 'fill'": what an arena too
// large for memory comes from.
std::string largestBuffer(const Graph& g, const PlanProblem& problem, const std::vector<TensorIndex>& bufferTensor)
{
    if (problem.buffers.empty())
        return "it has no buffers";
    const auto largest = std::size_t(std::max_element(problem.buffers.begin(), problem.buffers.end(),
        [](const auto& a, const auto& b) { return a.size < b.size; }) - problem.buffers.begin());
    const auto& buffer = problem.buffers[largest];
    std::string text = "its largest buffer is '" + buffer.name + "' (" + formatBytes(buffer.size) + ")";
    const auto t = largest < bufferTensor.size() ? bufferTensor[largest] : TensorIndex(-1);
    if (t >= 0 && std::size_t(t) < g.tensors.size())
        for (const auto& op : g.ops)
            if (std::find(op.outputs.begin(), op.outputs.end(), t) != op.outputs.end()) {
                text += ", output of " + op.type + " '" + op.name + "'";
                break;
            }
    return text;
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
        // Refused before it is made: memset would touch pages the system does not have.
        if (auto s = checkAllocation(plan.arenaSize, "the arena of the " + plan.planner + " plan"); !s)
            return makeError(s.error().code, s.error().message + "; " + largestBuffer(g, problem, bufferTensor));
        layout.arena = allocate(plan.arenaSize, problem.alignment);
        if (!layout.arena)
            return makeError(ErrorCode::Io, "cannot allocate an arena of " + formatBytes(plan.arenaSize) + " (" + std::to_string(plan.arenaSize) + " bytes)");
    }
    if (auto s = checkAllocation(layout.sideBytes, "the weights and tensors outside the arena"); !s)
        return s.error();
    layout.side = allocate(layout.sideBytes, kHostAlignment);
    if (!layout.side)
        return makeError(ErrorCode::Io, "cannot allocate " + formatBytes(layout.sideBytes) + " (" + std::to_string(layout.sideBytes) + " bytes) for weights");
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
    if (auto s = exec::checkGivenInputs(g, options.inputs); !s)
        return s;
    for (auto t : g.inputs) {
        const auto& tensor = g.tensors[t];
        std::byte* p = layout.address[t];
        if (!p)
            continue;
        const auto it = options.inputs.find(tensor.name);
        if (it == options.inputs.end())
            exec::inputContents(tensor, p, options.seed);
        else if (!it->second.data.empty())
            std::memcpy(p, it->second.data.data(), it->second.data.size());
    }
    return {};
}


// The op's planned workspace for its Conv calls (a fused op: every call of its body, one at a time).
void setWorkspace(exec::PreparedCall& p, float* workspace)
{
    p.call.workspace = workspace;
    for (auto& part : p.body)
        setWorkspace(part, workspace);
}

} // namespace

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
    exec::releaseScratch(); // this run's scratch high water, not an earlier run's
    exec::takeOnednnCalls();
    exec::takeOnednnNotes();
    std::vector<const Op*> scheduled;
    for (const auto o : schedule.order)
        scheduled.push_back(&graph.ops[std::size_t(o)]);
    auto fusedScratch = exec::makeFusedScratch(graph, scheduled, kHostAlignment);
    if (!fusedScratch)
        return fusedScratch.error();
    auto layout = makeLayout(graph, problem, plan, bufferTensor, options.allocation, fusedScratch->internal);
    if (!layout)
        return layout.error();
    const auto workspaceAt = workspaceAtStep(graph, schedule, problem, bufferTensor);
    if (!workspaceAt)
        return workspaceAt.error();
    fillWeights(graph, *layout, options);

    // Kernel calls are prepared once: views point into the layout (PerTensor: re-pointed every step).
    // A fused op with a body is its body's calls, run in order; their internal tensors point into the
    // fused scratch, which no other op touches.
    // Activations between convolutions stored N,H,W,C (exec/channelslast.h), and the convolutions'
    // weights packed once for the run in the layout oneDNN wants.
    const auto channelsLast = exec::channelsLastTensors(graph);
    exec::WeightPacks packs;
    exec::TensorAccess access;
    access.channelsLast = [&](TensorIndex t) { return channelsLast[std::size_t(t)]; };
    access.address = [&](TensorIndex t) {
        return fusedScratch->internal[std::size_t(t)] ? fusedScratch->address(t) : layout->address[std::size_t(t)];
    };
    // An internal of unknown size has no room in the scratch: the body ops around it run synthetic.
    access.stored = [&](TensorIndex t) {
        return fusedScratch->internal[std::size_t(t)] ? graph.tensors[std::size_t(t)].size > 0 : layout->stored[std::size_t(t)];
    };
    std::vector<exec::PreparedCall> steps;
    for (const auto opIndex : schedule.order)
        steps.push_back(exec::prepareOp(graph, graph.ops[std::size_t(opIndex)], opIndex, options, access));

    // Control-flow ops place their graphs' values in their "<op> body" buffers (the op's workspace
    // below) at the offsets their plans give.
    std::vector<std::string> bodyNotes;
    if (options.nested)
        for (std::size_t s = 0; s < steps.size(); ++s) {
            auto& p = steps[s];
            const int b = (*workspaceAt)[s];
            if (!p.subgraphs || b < 0)
                continue;
            const Op& op = *p.call.op;
            std::vector<const NestedPlan*> plans;
            for (const auto& n : *options.nested)
                if (n.step == Step(s) && n.op == op.name)
                    plans.push_back(&n);
            p.bodySlots = exec::bodySlots(op.type + " '" + op.name + "'", plans, *p.subgraphs, problem.buffers[std::size_t(b)].size, bodyNotes);
        }

    // Measured memory: which buffers hold a value still to be read (arena), or what malloc holds (per-tensor).
    const auto use = exec::bufferUse(graph, schedule, layout->placement, problem.buffers.size(), *workspaceAt);
    const Step stepCount = Step(steps.size());
    // A workspace is born before its op runs and released right after it; in the arena its
    // convolution writes at the buffer's offset (PerTensor: into the buffer's own allocation, below).
    if (!perTensor)
        for (Step s = 0; s < stepCount; ++s)
            if (const int b = (*workspaceAt)[std::size_t(s)]; b >= 0)
                setWorkspace(steps[std::size_t(s)], reinterpret_cast<float*>(layout->arena.get() + plan.offsets[std::size_t(b)]));
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
        std::byte* memory = owned[std::size_t(b)].get();
        for (auto t : tensorsOf[std::size_t(b)])
            layout->address[t] = memory ? memory + layout->placement.tensors[t].inBuffer : nullptr;
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
    std::vector<std::string> refusals(steps.size());
    std::vector<double> totals;
    std::vector<Bytes> stepBytes(steps.size(), 0);
    exec::RuntimeShapes shapes;
    // Per tensor: computed by real kernels from given inputs and the model's weights alone (no
    // random input, no synthetic value upstream). An index a kernel refuses in such a tensor is the
    // model's error, not the run's.
    std::vector<bool> givenComputed(graph.tensors.size(), true), computed;
    for (std::size_t t = 0; t < graph.tensors.size(); ++t)
        if (graph.tensors[t].kind == TensorKind::Weight)
            givenComputed[t] = options.modelData && options.modelData->weights.count(TensorIndex(t));
    for (auto t : graph.inputs)
        givenComputed[std::size_t(t)] = options.inputs.count(graph.tensors[std::size_t(t)].name) || !graph.tensors[std::size_t(t)].values.empty();
    using Clock = std::chrono::steady_clock;
    for (int r = 0; r < repeat; ++r) {
        computed = givenComputed;
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
        // Every pass starts from the given inputs: the plan may give an input's room to a tensor
        // born after its last read, so a later pass would otherwise read what that tensor left.
        if (auto s = fillGraphInputs(graph, *layout, options); !s)
            return s.error();
        shapes.reset(graph.tensors.size());
        exec::seedInputShapes(graph, options, shapes);
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
            if (perTensor) {
                exec::repoint(p, access);
                if (const int b = (*workspaceAt)[s]; b >= 0)
                    setWorkspace(p, reinterpret_cast<float*>(owned[std::size_t(b)].get()));
            }
            exec::takeDataFault();
            try {
                real[s] = exec::runWithShapes(graph, p, options, shapes);
            } catch (const std::bad_alloc&) {
                // Kernel scratch and runtime-shaped values are allocated as the op runs.
                return makeError(ErrorCode::Io, "op '" + p.call.op->name + "' (" + p.call.op->type + "): out of memory while running it");
            } catch (const std::length_error&) {
                return makeError(ErrorCode::Io, "op '" + p.call.op->name + "' (" + p.call.op->type + "): a size too large to allocate while running it");
            }
            if (options.cancel.isCancelled()) // a Loop or Scan stops between iterations
                return makeError(ErrorCode::Cancelled,
                    "the run was cancelled during op " + std::to_string(s) + " of " + std::to_string(steps.size()));
            const auto isComputed = [&](TensorIndex t) { return t < 0 || computed[std::size_t(t)]; };
            const bool fed = std::all_of(p.inTensor.begin(), p.inTensor.end(), isComputed)
                && std::all_of(p.capturedTensor.begin(), p.capturedTensor.end(), isComputed);
            std::string refusal = p.refusal;
            if (const auto fault = exec::takeDataFault(); !real[s] && !fault.why.empty()) {
                const auto text = exec::describeFault(graph, *p.call.op, fault);
                if (fed)
                    return makeError(ErrorCode::InvalidModel, text + " (computed from the given inputs; ONNX makes such an index an error)");
                refusal = text + " (from values the run made up: a random input or a synthetic kernel's output)";
            }
            for (auto t : p.outTensor)
                computed[std::size_t(t)] = real[s] && fed;
            if (r == 0)
                refusals[s] = refusal;
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
        // Graph outputs as this pass left them: the first pass's are the run's; every later pass
        // must compute the same bytes.
        std::vector<HostTensor> outputs;
        for (auto t : graph.outputs) {
            Bytes bytes = 0;
            HostTensor h = exec::outputHeader(graph, t, shapes, bytes);
            if (const auto* p = layout->address[t]; p && bytes > 0) {
                // The copy outlives the arena (a checked run holds the reference run's copies too).
                if (auto st = checkAllocation(bytes, "a copy of output '" + graph.tensors[std::size_t(t)].name + "'"); !st)
                    return st.error();
                h.data.assign(p, p + bytes);
            }
            outputs.push_back(std::move(h));
        }
        if (r == 0) {
            exec::countBounds(graph, [&](TensorIndex t) { return bool(layout->placement.tensors[std::size_t(t)].stored); }, shapes, m);
            m.outputs = std::move(outputs);
        } else {
            m.passesAgree = m.passesAgree && outputs == m.outputs;
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
        m.opsRuntimeShaped += real[s] && steps[s].dynamic ? 1 : 0;
        m.ops.push_back(OpMeasurement { op.name, op.type, real[s], median(opTimes[s]), percentile(opTimes[s], 0.99), false, false,
            real[s] ? std::string() : refusals[s] });
    }
    m.stepBytes = std::move(stepBytes);
    m.stepPeakBytes = m.stepBytes.empty() ? 0 : *std::max_element(m.stepBytes.begin(), m.stepBytes.end());
    m.latencyMs = LatencyStats { median(totals), percentile(totals, 0.5), percentile(totals, 0.99) };
    m.scratchBytes = exec::scratchHighWater() + fusedScratch->bytes;
    m.threads = cpuThreads();
    m.packedWeightsBytes = packs.bytes();
    m.channelsLastTensors = int(std::count(channelsLast.begin(), channelsLast.end(), true));
    m.onednnCalls = exec::takeOnednnCalls() / std::max(options.repeat, 1);
    m.kernelNotes = exec::takeOnednnNotes();
    for (auto& p : steps)
        bodyNotes.insert(bodyNotes.end(), p.bodyNotes.begin(), p.bodyNotes.end());
    m.kernelNotes.insert(m.kernelNotes.end(), bodyNotes.begin(), bodyNotes.end());
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
        if (expected[k].none != actual[k].none)
            return "output '" + name + "': " + (expected[k].none ? "the reference run's" : "this run's") + " holds nothing, the other's a value";
        if (a.size() != b.size())
            return "output '" + name + "': different sizes";
        if (expected[k].items != actual[k].items)
            return "output '" + name + "': the sequences' element shapes differ";
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
    auto referenceOptions = options;
    referenceOptions.nested = nullptr;
    auto reference = runOnCpu(graph, schedule, problem, noReusePlan(problem), bufferTensor, referenceOptions);
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
