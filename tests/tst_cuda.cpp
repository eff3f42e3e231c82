// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The CUDA executor: the plan check on the GPU (arena run == no-reuse GPU run, bit for bit) for the
// built-in examples, every allocation mode, the GPU's outputs against the CPU executor's, a broken
// plan caught, the arena run's per-step bytes, swap transfers through pinned host memory, and fused
// ops on the host path with real kernels, and Pad/Resize/the reductions/ConvTranspose on the device.
// Without the CUDA executor in the build, or without a device, every test skips with the reason.
#include "cpukernels.h"
#include "boundedgraphs.h"
#include "graphbuilder.h"
#include "exec/executor.h"
#include "exec/tensordata.h"
#include "exec/workspace.h"
#include "io/workload.h"
#include "exec/tolerance.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "strategies/strategy.h"
#include "util/format.h"

#ifdef MEMPLAN_HAVE_CUDA
#include "cudaexecutor.h"
#endif
#ifdef MEMPLAN_CUDA_EMULATION
#include "cudaemu.h"
#endif

#include <QtTest>

#include <filesystem>
#include <tuple>

#include <regex>
#include <set>

namespace {

core::Workload load(const std::string& spec, bool workspaces = false)
{
    core::LoadOptions options;
    options.workspaces = workspaces;
    auto w = core::loadWorkload(spec, options);
    if (!w)
        qFatal("%s", w.error().message.c_str());
    return std::move(*w);
}

core::Plan planFor(const core::Workload& w)
{
    auto plan = core::runPlanner(*core::plannerByName("greedy-by-size"), w.problem);
    if (!plan)
        qFatal("%s", plan.error().message.c_str());
    return std::move(*plan);
}

// A long-lived skip connection around wider middle tensors: the swap strategy sends the skip to
// the host and back, and every op has a device kernel.
core::Workload skipWorkload()
{
    using core::TensorKind;
    GraphBuilder gb;
    const auto x = gb.tensor("x", { 1, 4096 }, TensorKind::Input);
    const auto w = gb.tensor("w", { 4, 4096 }, TensorKind::Weight);
    const auto skip = gb.tensor("skip", { 1, 4096 }), down = gb.tensor("down", { 1, 4096 });
    const auto m1 = gb.tensor("m1", { 4, 4096 }), m2 = gb.tensor("m2", { 4, 4096 }), m3 = gb.tensor("m3", { 1, 4096 });
    const auto soft = gb.tensor("soft", { 1, 4096 }), up = gb.tensor("up", { 1, 4096 });
    const auto out = gb.tensor("out", { 1, 4096 }, TensorKind::Output);
    gb.op("act", "Relu", { x }, { skip });
    gb.op("squeeze", "Sigmoid", { skip }, { down });
    gb.op("widen", "Add", { down, w }, { m1 });
    gb.op("scale", "Mul", { m1, w }, { m2 });
    gb.op("mean", "ReduceMean", { m2 }, { m3 })->attributes["axes"].ints = { 0 };
    gb.op("softmax", "Softmax", { m3 }, { soft });
    gb.op("squash", "Tanh", { soft }, { up });
    gb.op("join", "Add", { skip, up }, { out });
    return gb.workload("skip", 256);
}

// `original` after the swap strategy, on a host link fast against these small ops' compute, so the
// strategy issues the SwapIn ahead of its read (on the h200 profile the SwapOut's copy would still
// hold the link until the read). A failing strategy ends the test.
core::StrategyRun swapOnFastLink(const core::Workload& original)
{
    core::StrategyOptions options;
    options.alignment = original.problem.alignment;
    options.device.hostLinkBandwidth = 100 * options.device.memoryBandwidth;
    auto applied = core::applyStrategies(original, { "swap" }, options);
    if (!applied)
        qFatal("%s", applied.error().message.c_str());
    return std::move(*applied);
}

// The skip workload after the swap strategy; fails the test when nothing was swapped.
core::Workload swappedSkip()
{
    auto applied = swapOnFastLink(skipWorkload());
    const auto& ops = applied.workload.graph->ops;
    if (std::none_of(ops.begin(), ops.end(), [](const core::Op& op) { return op.type == "SwapOut"; }))
        qFatal("the swap strategy swapped nothing in the skip workload");
    // The SwapIn is prefetched: an op computes while it copies, so the executor's deferred wait for
    // it (at the first read, not at the SwapIn) is what the swap tests check.
    const auto& order = applied.workload.schedule.order;
    const auto in = std::find_if(order.begin(), order.end(), [&](core::OpIndex i) { return ops[std::size_t(i)].type == "SwapIn"; });
    if (in == order.end() || in + 1 == order.end() || ops[std::size_t(*(in + 1))].name == "join")
        qFatal("the skip workload's SwapIn is not issued ahead of its read");
    return std::move(applied.workload);
}

// A skip around a 3x3 Conv (with its planned workspace) and wider tensors, after the swap strategy
// with workspaces: the skip goes to the host right before the Conv. Fails the test when the op after
// the SwapOut is not that Conv.
core::Workload swappedConvSkip()
{
    using core::TensorKind;
    GraphBuilder gb;
    const auto x = gb.tensor("x", { 1, 8, 16, 16 }, TensorKind::Input);
    const auto skip = gb.tensor("skip", { 1, 8, 16, 16 }), down = gb.tensor("down", { 1, 8, 16, 16 });
    const auto wide = gb.tensor("wide", { 1, 32, 16, 16 }), act = gb.tensor("act", { 1, 32, 16, 16 });
    const auto narrow = gb.tensor("narrow", { 1, 8, 16, 16 }), up = gb.tensor("up", { 1, 8, 16, 16 });
    const auto out = gb.tensor("out", { 1, 8, 16, 16 }, TensorKind::Output);
    gb.op("relu", "Relu", { x }, { skip });
    gb.op("squeeze", "Sigmoid", { skip }, { down });
    gb.op("widen", "Conv", { down, gb.tensor("w1", { 32, 8, 3, 3 }, TensorKind::Weight) }, { wide })->attributes["pads"].ints = { 1, 1, 1, 1 };
    gb.op("act", "Relu", { wide }, { act });
    gb.op("narrow", "Conv", { act, gb.tensor("w2", { 8, 32, 1, 1 }, TensorKind::Weight) }, { narrow });
    gb.op("squash", "Tanh", { narrow }, { up });
    gb.op("join", "Add", { skip, up }, { out });
    auto applied = swapOnFastLink(gb.workload("conv_skip", 256, true));
    const auto& ops = applied.workload.graph->ops;
    const auto& order = applied.workload.schedule.order;
    const auto outStep = std::find_if(order.begin(), order.end(), [&](core::OpIndex i) { return ops[std::size_t(i)].type == "SwapOut"; });
    if (outStep == order.end() || outStep + 1 == order.end() || ops[std::size_t(*(outStep + 1))].name != "widen")
        qFatal("the swap strategy did not send the skip to the host right before the 3x3 Conv");
    return std::move(applied.workload);
}

// `w` planned (the plan validated) and run in its arena on the GPU, and without reuse on the CPU, with
// `data`'s weights. Fails the calling test when either run fails.
struct GpuAndCpu {
    core::Measurement gpu, cpu;
};
std::optional<GpuAndCpu> runOnBoth(const core::Workload& w, std::shared_ptr<const core::ModelData> data)
{
    const auto plan = planFor(w);
    if (!core::validatePlan(w.problem, plan).ok())
        qFatal("invalid plan for %s", w.source.c_str());
    core::RunOptions options;
    options.modelData = std::move(data);
    auto gpuRun = gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, options);
    auto cpuRun = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, options);
    if (!gpuRun || !cpuRun) {
        qWarning("%s", (gpuRun ? cpuRun.error() : gpuRun.error()).message.c_str());
        return std::nullopt;
    }
    return GpuAndCpu { std::move(*gpuRun), std::move(*cpuRun) };
}

// runOnBoth, then: every op on a real kernel on the CPU, `hostOps` of them on the host in the GPU
// run, and the GPU's outputs within 1e-4 of the CPU's. Fails the calling test otherwise.
void runsLikeTheCpu(const core::Workload& w, std::shared_ptr<const core::ModelData> data, int hostOps)
{
    const auto runs = runOnBoth(w, std::move(data));
    QVERIFY(runs);
    QCOMPARE(runs->cpu.opsSynthetic, 0);
    QCOMPARE(runs->gpu.opsHost, hostOps);
    const auto off = core::compareWithin(*w.graph, runs->cpu.outputs, runs->gpu.outputs, 1e-4);
    QVERIFY2(off.empty(), off.c_str());
}

// runOnBoth, then: every op on a real kernel on the CPU, every op on the device (none on the host
// or precomputed) in the GPU run, and the GPU's outputs bit for bit the CPU's. Nothing, after
// failing the calling test, otherwise.
std::optional<GpuAndCpu> identicalOnTheDevice(const core::Workload& w, std::shared_ptr<const core::ModelData> data)
{
    auto runs = runOnBoth(w, std::move(data));
    std::string why;
    if (!runs)
        why = "a run failed";
    else if (runs->cpu.opsSynthetic != 0 || runs->gpu.opsHost != 0 || runs->gpu.opsPrecomputed != 0)
        why = std::to_string(runs->cpu.opsSynthetic) + " synthetic on the CPU, " + std::to_string(runs->gpu.opsHost) + " on the host, "
            + std::to_string(runs->gpu.opsPrecomputed) + " precomputed";
    else
        why = core::compareOutputs(*w.graph, runs->cpu.outputs, runs->gpu.outputs);
    if (why.empty())
        return runs;
    QTest::qFail(why.c_str(), __FILE__, __LINE__);
    return std::nullopt;
}

// A weight tensor with the given contents (`values`: as many bytes as its dtype and shape take).
core::TensorIndex weightWithValues(GraphBuilder& b, core::ModelData& data, const std::string& name, core::DType dtype,
    const std::vector<std::int64_t>& shape, const void* values)
{
    const auto t = b.tensor(name, shape, core::TensorKind::Weight, dtype);
    core::HostTensor h;
    h.dtype = dtype;
    h.shape = shape;
    h.data.resize(std::size_t(b.g.tensors[t].size));
    std::memcpy(h.data.data(), values, h.data.size());
    data.weights[t] = std::move(h);
    return t;
}

} // namespace

class TestCuda : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
#ifdef MEMPLAN_CUDA_EMULATION
    void init();
    void cleanup();
#endif
#ifdef MEMPLAN_HAVE_CUDA
    void planCheck_data();
    void planCheck();
    void allocationModes();
    void brokenPlanCaught();
    void swapThroughPinnedMemory();
    void swapOutSourceNotOverwrittenByWorkspace();
    void fusedOpsOnTheDevice();
    void fusedBodyReadsAPrecomputedConstant();
    void hostOpReadsAWeightAnOpWrites_data();
    void hostOpReadsAWeightAnOpWrites();
    void workspaces_data();
    void workspaces();
    void dropoutDropsNothingOnDevice();
    void constantSubgraphPrecomputed_data();
    void constantSubgraphPrecomputed();
    void cancelled();
    void resampleOpsOnTheDevice();
    void reductionsAndCopiesOnTheDevice();
    void maskOpsOnTheDevice();
    void indexOpsOnTheDevice();
    void recurrentOpsOnTheDevice();
    void selectOpsOnTheDevice();
    void integerOpsOnTheDevice();
    void layerNormStatisticsOnTheDevice();
    void concatInPlaceOnTheDevice();
    void einsumOnTheDevice();
    void volumesOnTheDevice();
    void pixelShuffleOnTheDevice();
    void quantizedGroupOnTheDevice_data();
    void quantizedGroupOnTheDevice();
    void runTimeShapesOnTheHost_data();
    void runTimeShapesOnTheHost();
    void boundTooSmallRunsSynthetic();
    void hostOpsGiveTheCpuOutputs();
    void halfPrecisionRunsOnTheDevice();
#endif
#ifdef MEMPLAN_CUDA_EMULATION
    void missingStreamWaitsCaught();
    void everyCallChecked();
    void noDevice();
#endif
};

void TestCuda::initTestCase()
{
#ifdef MEMPLAN_CUDA_EMULATION
    cudaemu::reset();
    qInfo("CUDA emulated on the host (tests/cudaemu), %s", cudaemu::orderName(cudaemu::order()));
#endif
#ifdef MEMPLAN_HAVE_CUDA
    std::string why;
    if (!gpu::cudaAvailable(&why))
        QSKIP(qPrintable(QStringLiteral("no CUDA device: %1").arg(QString::fromStdString(why))));
    qInfo("device: %s", gpu::cudaDeviceDescription().c_str());
#else
    QSKIP("no CUDA device: this build has no CUDA executor (no CUDA compiler found, or MEMPLAN_CUDA=OFF)");
#endif
}

#ifdef MEMPLAN_CUDA_EMULATION

void TestCuda::init() { cudaemu::reset(); }

// After every test: nothing the hardware would have faulted on, nothing left allocated or created.
void TestCuda::cleanup()
{
    const auto violations = cudaemu::violations();
    for (const auto& v : violations)
        qWarning("emulation: %s", v.c_str());
    QVERIFY2(violations.empty(), violations.empty() ? "" : violations.front().c_str());
    const auto live = cudaemu::live();
    QCOMPARE(live.deviceBlocks, 0);
    QCOMPARE(live.pinnedBlocks, 0);
    QCOMPARE(live.streams, 0);
    QCOMPARE(live.events, 0);
    QCOMPARE(live.blasHandles, 0);
}

#endif

#ifdef MEMPLAN_HAVE_CUDA

void TestCuda::planCheck_data()
{
    QTest::addColumn<QString>("model");
    for (const char* spec : { "example:cnn", "example:unet", "example:transformer" }) {
#ifdef MEMPLAN_CUDA_EMULATION
        if (std::string_view(spec) == "example:unet")
            continue; // its transposed convolutions take minutes in the one-thread emulation
#endif
        QTest::newRow(spec) << QString::fromLatin1(spec);
    }
}

// Arena run == no-reuse GPU run bit for bit; outputs within tolerance of the CPU executor's; the
// arena run's per-step live bytes are the problem's curve, its maximum the planned live peak.
void TestCuda::planCheck()
{
    QFETCH(QString, model);
    const auto w = load(model.toStdString());
    const auto plan = planFor(w);
    QVERIFY(core::validatePlan(w.problem, plan).ok());
    const auto reference = gpu::runOnCuda(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, {});
    QVERIFY2(reference, reference ? "" : reference.error().message.c_str());
    core::RunOptions options;
    options.repeat = 3;
    const auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, options);
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    QCOMPARE(run->device, std::string("cuda"));
    const auto mismatch = core::compareOutputs(*w.graph, reference->outputs, run->outputs);
    QVERIFY2(mismatch.empty(), mismatch.c_str());
    QCOMPARE(run->arenaBytes, plan.arenaSize);
    QCOMPARE(run->stepBytes.size(), std::size_t(w.problem.steps));
    QCOMPARE(run->stepPeakBytes, core::lowerBound(w.problem));
    QVERIFY(run->stepPeakBytes <= plan.arenaSize);
    QCOMPARE(int(run->ops.size()), run->opsReal + run->opsSynthetic);
    QVERIFY(run->opsHost < int(run->ops.size())); // most ops have a device kernel

    const auto cpu = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, {});
    QVERIFY(cpu);
    QCOMPARE(run->opsSynthetic, cpu->opsSynthetic);
    if (cpu->opsSynthetic == 0) {
        const auto off = core::compareWithin(*w.graph, cpu->outputs, run->outputs, 1e-3);
        QVERIFY2(off.empty(), off.c_str());
    } else {
        qInfo("%s: %d synthetic ops: the CPU comparison does not apply", qPrintable(model), cpu->opsSynthetic);
    }
    qInfo("%s: %d ops (%d on the host), arena %lld B, median %.3f ms", qPrintable(model), int(run->ops.size()), run->opsHost,
        static_cast<long long>(run->arenaBytes), run->latencyMs.median);
}

// Per-tensor cudaMalloc/cudaFree and the stream-ordered pool compute the same bits as the arena.
void TestCuda::allocationModes()
{
    const auto w = load("example:cnn");
    const auto plan = planFor(w);
    QVERIFY(core::validatePlan(w.problem, plan).ok());
    const auto arena = gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, {});
    QVERIFY2(arena, arena ? "" : arena.error().message.c_str());
    for (auto mode : { gpu::CudaAllocation::PerTensor, gpu::CudaAllocation::Pool }) {
        const auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, {}, mode);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        const auto mismatch = core::compareOutputs(*w.graph, arena->outputs, run->outputs);
        QVERIFY2(mismatch.empty(), mismatch.c_str());
        QCOMPARE(run->arenaBytes, core::Bytes(0));
        QCOMPARE(run->planner, std::string(gpu::cudaAllocationName(mode)));
        // The same ops on the device as in the arena run (a Conv's columns need scratch in every mode),
        // so the modes' latencies compare allocation, not where the ops ran.
        QCOMPARE(run->opsHost, arena->opsHost);
        QCOMPARE(run->scratchBytes, arena->scratchBytes);
        QCOMPARE(run->stepBytes.size(), std::size_t(w.problem.steps));
        // Per-tensor: the executor's count of what it holds from cudaMalloc, the live curve's peak.
        // Pool: the pool's count, rounded up by the pool, never less than the live activations.
        if (mode == gpu::CudaAllocation::PerTensor)
            QCOMPARE(run->stepPeakBytes, core::lowerBound(w.problem));
        else
            QVERIFY(run->stepPeakBytes >= core::lowerBound(w.problem));
        qInfo("%s: measured peak %lld B, live activations %lld B, median %.3f ms", gpu::cudaAllocationName(mode).data(),
            static_cast<long long>(run->stepPeakBytes), static_cast<long long>(core::lowerBound(w.problem)), run->latencyMs.median);
    }
}

// Two live tensors overlapped in the arena: the GPU run's outputs differ from the no-reuse run's.
void TestCuda::brokenPlanCaught()
{
    for (const char* spec : { "example:cnn", "example:transformer" }) {
        const auto w = load(spec);
        const auto plan = planFor(w);
        QVERIFY(core::validatePlan(w.problem, plan).ok());
        const auto& buffers = w.problem.buffers;
        int broken = -1, victim = -1;
        for (std::size_t a = 0; a < buffers.size() && broken < 0; ++a)
            for (std::size_t b = 0; b < buffers.size(); ++b)
                if (buffers[a].kind == core::TensorKind::Activation && buffers[a].lifetime.start < buffers[b].lifetime.start
                    && buffers[b].lifetime.start + 1 < buffers[a].lifetime.end && buffers[b].size <= buffers[a].size) {
                    victim = int(a);
                    broken = int(b);
                    break;
                }
        QVERIFY(broken >= 0);
        auto bad = plan;
        bad.offsets[broken] = bad.offsets[victim];
        QVERIFY(!core::validatePlan(w.problem, bad).ok());
        const auto reference = gpu::runOnCuda(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, {});
        const auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, bad, w.bufferTensor, {});
        QVERIFY(reference && run);
        const auto mismatch = core::compareOutputs(*w.graph, reference->outputs, run->outputs);
        QVERIFY2(!mismatch.empty(), spec);
        qInfo("%s: broken plan caught on the GPU: %s", spec, mismatch.c_str());
    }
}

// A workspace planned over a tensor that was just sent to the host (valid: the tensor's last read
// is its SwapOut, the workspace lives at the next step) is written only after the copy has read the
// tensor: the compute stream waits for the SwapOut's copy, as for an op's outputs. Without that
// wait the emulation runs the Conv's im2col first under one of its stream orders, and the skip comes
// back as columns.
void TestCuda::swapOutSourceNotOverwrittenByWorkspace()
{
    const auto w = swappedConvSkip();
    const auto& ops = w.graph->ops;
    int skipBuffer = -1, workspace = -1;
    for (std::size_t b = 0; b < w.problem.buffers.size(); ++b) {
        if (w.bufferOp[b] >= 0 && ops[std::size_t(w.bufferOp[b])].name == "widen")
            workspace = int(b);
        if (w.bufferTensor[b] >= 0 && w.graph->tensors[std::size_t(w.bufferTensor[b])].name == "skip")
            skipBuffer = int(b);
    }
    QVERIFY(skipBuffer >= 0 && workspace >= 0);
    // The skip and the workspace share a region of their own at the arena's end.
    auto plan = planFor(w);
    const core::Bytes region = plan.arenaSize;
    plan.offsets[std::size_t(skipBuffer)] = region;
    plan.offsets[std::size_t(workspace)] = region;
    plan.arenaSize = region + std::max(w.problem.buffers[std::size_t(skipBuffer)].size, w.problem.buffers[std::size_t(workspace)].size);
    const auto check = core::validatePlan(w.problem, plan);
    QVERIFY2(check.ok(), check.message.c_str());
    const auto reference = gpu::runOnCuda(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, {});
    QVERIFY2(reference, reference ? "" : reference.error().message.c_str());
    const auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, {});
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    QCOMPARE(run->opsHost, 0);
    const auto mismatch = core::compareOutputs(*w.graph, reference->outputs, run->outputs);
    QVERIFY2(mismatch.empty(), mismatch.c_str());
}

// The swap strategy's SwapOut/SwapIn go through pinned host memory on the copy stream; the values
// come back intact (arena == no-reuse in every mode, and == the untransformed model within the CPU
// tolerance), the copies never fall back to the host path.
void TestCuda::swapThroughPinnedMemory()
{
    const auto original = skipWorkload();
    const auto w = swappedSkip();
    const auto plan = planFor(w);
    QVERIFY(core::validatePlan(w.problem, plan).ok());
    const auto reference = gpu::runOnCuda(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, {});
    QVERIFY2(reference, reference ? "" : reference.error().message.c_str());
    QCOMPARE(reference->opsHost, 0);
    for (auto mode : { gpu::CudaAllocation::Arena, gpu::CudaAllocation::PerTensor, gpu::CudaAllocation::Pool }) {
        const auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, {}, mode);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        const auto mismatch = core::compareOutputs(*w.graph, reference->outputs, run->outputs);
        QVERIFY2(mismatch.empty(), mismatch.c_str());
        QCOMPARE(run->opsHost, 0);
        if (mode != gpu::CudaAllocation::Pool)
            QCOMPARE(run->stepPeakBytes, core::lowerBound(w.problem));
    }
    const auto untransformed = gpu::runOnCuda(*original.graph, original.schedule, original.problem, core::noReusePlan(original.problem),
        original.bufferTensor, {});
    QVERIFY(untransformed);
    const auto off = core::compareWithin(*w.graph, untransformed->outputs, reference->outputs, 1e-3);
    QVERIFY2(off.empty(), off.c_str());
    const auto cpu = core::runOnCpu(*original.graph, original.schedule, original.problem, core::noReusePlan(original.problem),
        original.bufferTensor, {});
    QVERIFY(cpu);
    QCOMPARE(cpu->opsSynthetic, 0);
    const auto offCpu = core::compareWithin(*w.graph, cpu->outputs, reference->outputs, 1e-3);
    QVERIFY2(offCpu.empty(), offCpu.c_str());
}

// A fused op runs its body on the device kernel by kernel, its internal tensors in a device scratch
// of their own (counted as kernel scratch): the fused model on the GPU computes what the unfused
// model computes on the CPU, with no host round trip.
void TestCuda::fusedOpsOnTheDevice()
{
    const auto w = load("example:cnn");
    const auto applied = core::applyStrategies(w, { "fuse" }, core::StrategyOptions {});
    QVERIFY2(applied, applied ? "" : applied.error().message.c_str());
    const auto& fw = applied->workload;
    const auto plan = planFor(fw);
    QVERIFY(core::validatePlan(fw.problem, plan).ok());
    const auto run = gpu::runOnCuda(*fw.graph, fw.schedule, fw.problem, plan, fw.bufferTensor, {});
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    const auto unfused = gpu::runOnCuda(*w.graph, w.schedule, w.problem, planFor(w), w.bufferTensor, {});
    QVERIFY2(unfused, unfused ? "" : unfused.error().message.c_str());
    const auto cpu = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, {});
    QVERIFY(cpu);
    QCOMPARE(cpu->opsSynthetic, 0);
    core::Bytes internals = 0;
    for (const auto& op : fw.graph->ops)
        for (auto t : core::fusedInternals(op))
            internals = std::max(internals, fw.graph->tensors[std::size_t(t)].size);
    QVERIFY(internals > 0);
    QVERIFY2(run->scratchBytes >= unfused->scratchBytes + internals,
        (std::to_string(run->scratchBytes) + " vs " + std::to_string(unfused->scratchBytes)).c_str());
    int fused = 0;
    for (const auto& op : run->ops)
        if (op.type == "Fused") {
            ++fused;
            QVERIFY2(!op.host, op.name.c_str());
            QVERIFY2(op.real, op.name.c_str());
        }
    QVERIFY(fused > 0);
    QCOMPARE(run->opsHost, 0);
    QCOMPARE(run->opsSynthetic, 0);
    const auto off = core::compareWithin(*w.graph, cpu->outputs, run->outputs, 1e-3);
    QVERIFY2(off.empty(), off.c_str());
    // The same kernels in the same order: the fused run equals the unfused GPU run bit for bit.
    QVERIFY(core::compareOutputs(*w.graph, unfused->outputs, run->outputs).empty());
    qInfo("example:cnn fused: %d fused ops on the device, %s of internals", fused, core::formatBytes(internals).c_str());
}

// A fused Conv+Clip whose Clip bounds come through an exporter's Identity alias: the alias is
// precomputed, so the body's Clip gets its bounds on the host and the fused op stays on the device.
void TestCuda::fusedBodyReadsAPrecomputedConstant()
{
    using core::DType;
    using core::TensorKind;
    const float low = -0.25f, high = 0.5f;
    auto build = [&](bool fused, core::ModelData& data) {
        GraphBuilder b;
        const auto x = b.tensor("x", { 1, 4, 6, 6 }, TensorKind::Input);
        const auto w = b.tensor("w", { 8, 4, 3, 3 }, TensorKind::Weight);
        const auto lo = weightWithValues(b, data, "lo", DType::Float32, {}, &low);
        const auto hi = weightWithValues(b, data, "hi", DType::Float32, {}, &high);
        const auto loAlias = b.tensor("lo_alias", {}, TensorKind::Weight);
        const auto c = b.tensor("c", { 1, 8, 4, 4 }), y = b.tensor("y", { 1, 8, 4, 4 }, TensorKind::Output);
        b.op("alias_op", "Identity", { lo }, { loAlias });
        core::Op conv { .name = "conv", .type = "Conv", .inputs = { x, w }, .outputs = { c } };
        conv.attributes["kernel_shape"].ints = { 3, 3 };
        const core::Op clip { .name = "clip", .type = "Clip", .inputs = { c, loAlias, hi }, .outputs = { y } };
        if (fused)
            b.op("conv+clip", "Fused", { x, w, loAlias, hi }, { y })->body = { conv, clip };
        else
            b.g.ops.insert(b.g.ops.end(), { conv, clip });
        return b.workload(fused ? "fused clip" : "clip", 256);
    };
    auto data = std::make_shared<core::ModelData>(), fusedData = std::make_shared<core::ModelData>();
    const auto w = build(false, *data), fw = build(true, *fusedData);
    const auto runs = runOnBoth(fw, fusedData);
    QVERIFY(runs);
    QCOMPARE(runs->gpu.ops.back().type, std::string("Fused"));
    QVERIFY(!runs->gpu.ops.back().host);
    QCOMPARE(runs->gpu.opsSynthetic, 0);
    core::RunOptions options;
    options.modelData = data;
    const auto cpu = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, options);
    QVERIFY(cpu);
    const auto off = core::compareWithin(*w.graph, cpu->outputs, runs->gpu.outputs, 1e-3);
    QVERIFY2(off.empty(), off.c_str());
    // The bounds bite: some outputs sit exactly at them.
    const auto* out = reinterpret_cast<const float*>(cpu->outputs[0].data.data());
    const auto count = cpu->outputs[0].data.size() / sizeof(float);
    QVERIFY(std::count(out, out + count, low) > 0 && std::count(out, out + count, high) > 0);
}

// Exporters alias shared weights through Identity ops (47 in torchvision's ResNet-50): the alias is
// a weight an op writes at run time. A fused op on the host (its Shape has no device kernel)
// must read what the Identity wrote, whether or not the Identity was small enough to precompute.
void TestCuda::hostOpReadsAWeightAnOpWrites_data()
{
    QTest::addColumn<qint64>("channels");
    QTest::newRow("precomputed alias (4.5 KiB)") << qint64(8);
    QTest::newRow("device alias (576 KiB)") << qint64(128);
}

void TestCuda::hostOpReadsAWeightAnOpWrites()
{
    QFETCH(qint64, channels);
    using core::TensorKind;
    auto build = [&](bool fused) {
        GraphBuilder b;
        const auto x = b.tensor("x", { 1, channels, 6, 6 }, TensorKind::Input);
        const auto shared = b.tensor("shared", { 16, channels, 3, 3 }, TensorKind::Weight);
        const auto alias = b.tensor("alias", { 16, channels, 3, 3 }, TensorKind::Weight);
        const auto y = b.tensor("y", { 1, 16, 4, 4 }, TensorKind::Output);
        const auto shape = b.tensor("shape", { 4 }, TensorKind::Output, core::DType::Int64);
        b.op("alias_op", "Identity", { shared }, { alias });
        core::Op conv { .name = "conv", .type = "Conv", .inputs = { x, alias }, .outputs = { y } };
        conv.attributes["kernel_shape"].ints = { 3, 3 };
        const core::Op measure { .name = "measure", .type = "Shape", .inputs = { y }, .outputs = { shape } };
        if (fused)
            b.op("conv+measure", "Fused", { x, alias }, { y, shape })->body = { conv, measure };
        else
            b.g.ops.insert(b.g.ops.end(), { conv, measure });
        return b.workload(fused ? "fused alias" : "alias", 256);
    };
    const auto w = build(false), fw = build(true);
    const auto plan = planFor(fw);
    QVERIFY(core::validatePlan(fw.problem, plan).ok());
    const auto run = gpu::runOnCuda(*fw.graph, fw.schedule, fw.problem, plan, fw.bufferTensor, {});
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    QCOMPARE(run->ops.back().type, std::string("Fused"));
    QVERIFY(run->ops.back().host);
    const auto cpu = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, {});
    QVERIFY(cpu);
    QCOMPARE(cpu->opsSynthetic, 0);
    QCOMPARE(run->opsSynthetic, 0);
    const auto off = core::compareWithin(*w.graph, cpu->outputs, run->outputs, 1e-3);
    QVERIFY2(off.empty(), off.c_str());
}

// Two ConvTranspose layers (one grouped, with a bias) between Relus, so that their inputs are
// planned activations.
core::Workload deconvWorkload(bool workspaces)
{
    using core::TensorKind;
    GraphBuilder b;
    const auto x = b.tensor("x", { 2, 4, 6, 5 }, TensorKind::Input);
    const auto a = b.tensor("a", { 2, 4, 6, 5 }), t = b.tensor("t", { 2, 6, 12, 10 }), u = b.tensor("u", { 2, 6, 12, 10 });
    const auto y = b.tensor("y", { 2, 3, 13, 11 }, TensorKind::Output);
    b.op("act", "Relu", { x }, { a });
    auto* up = b.op("up", "ConvTranspose", { a, b.tensor("w1", { 4, 3, 3, 3 }, TensorKind::Weight), b.tensor("b1", { 6 }, TensorKind::Weight) }, { t });
    up->attributes["group"].ints = { 2 };
    up->attributes["strides"].ints = { 2, 2 };
    up->attributes["pads"].ints = { 1, 1, 0, 1 };
    b.op("act2", "Relu", { t }, { u });
    b.op("out", "ConvTranspose", { u, b.tensor("w2", { 6, 3, 2, 2 }, TensorKind::Weight) }, { y });
    return b.workload("deconv", 256, workspaces);
}

// Planned workspaces on the GPU: a Conv's columns (example:cnn) and a ConvTranspose's transposed
// weights and columns in the arena at the workspace's offset, or in their own
// cudaMalloc/cudaMallocAsync at its step; the same bits as the scratch run, no device scratch left,
// the workspace counted at its step; a workspace over its op's input is caught.
void TestCuda::workspaces_data()
{
    QTest::addColumn<bool>("deconv");
    QTest::newRow("example:cnn") << false;
    QTest::newRow("ConvTranspose") << true;
}

void TestCuda::workspaces()
{
    QFETCH(bool, deconv);
    // Planned for the own CPU kernels, the workspaces hold the device kernels' columns exactly.
    const CpuKernelsInScope ownKernels(core::CpuKernels::Own);
    const auto plain = deconv ? deconvWorkload(false) : load("example:cnn");
    const auto w = deconv ? deconvWorkload(true) : load("example:cnn", true);
    const auto plan = planFor(w);
    QVERIFY(core::validatePlan(w.problem, plan).ok());
    const auto scratchRun = gpu::runOnCuda(*plain.graph, plain.schedule, plain.problem, planFor(plain), plain.bufferTensor, {});
    QVERIFY2(scratchRun, scratchRun ? "" : scratchRun.error().message.c_str());
    core::Bytes largest = 0;
    for (const auto& op : w.graph->ops)
        largest = std::max(largest, core::opWorkspaceBytes(*w.graph, op));
    QCOMPARE(scratchRun->scratchBytes, largest); // the device scratch is sized by the same function
    QCOMPARE(scratchRun->opsHost, 0);
    if (deconv) { // the device's GEMM + col2im against the CPU kernel
        const auto cpu = core::runOnCpu(*plain.graph, plain.schedule, plain.problem, core::noReusePlan(plain.problem), plain.bufferTensor, {});
        QVERIFY2(cpu, cpu ? "" : cpu.error().message.c_str());
        const auto off = core::compareWithin(*plain.graph, cpu->outputs, scratchRun->outputs, 1e-3);
        QVERIFY2(off.empty(), off.c_str());
    }
    for (auto mode : { gpu::CudaAllocation::Arena, gpu::CudaAllocation::PerTensor, gpu::CudaAllocation::Pool }) {
        const auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, {}, mode);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        const auto mismatch = core::compareOutputs(*w.graph, scratchRun->outputs, run->outputs);
        QVERIFY2(mismatch.empty(), (std::string(gpu::cudaAllocationName(mode)) + ": " + mismatch).c_str());
        QCOMPARE(run->scratchBytes, core::Bytes(0));
        if (mode == gpu::CudaAllocation::Pool)
            continue; // the pool's own count, with its rounding
        QCOMPARE(run->stepPeakBytes, core::lowerBound(w.problem));
        for (std::size_t b = 0; b < w.problem.buffers.size(); ++b)
            if (w.problem.buffers[b].kind == core::TensorKind::Workspace) // counted at its op's step
                QVERIFY(run->stepBytes[std::size_t(w.problem.buffers[b].lifetime.start)] >= w.problem.buffers[b].size);
    }
    bool caught = false;
    for (std::size_t b = 0; b < w.problem.buffers.size(); ++b) {
        if (w.problem.buffers[b].kind != core::TensorKind::Workspace)
            continue;
        const auto& op = w.graph->ops[std::size_t(w.bufferOp[b])];
        const auto victim = std::find(w.bufferTensor.begin(), w.bufferTensor.end(), op.inputs[0]) - w.bufferTensor.begin();
        if (victim >= std::ptrdiff_t(w.bufferTensor.size()))
            continue;
        auto bad = plan;
        bad.offsets[b] = plan.offsets[std::size_t(victim)];
        bad.arenaSize = std::max(bad.arenaSize, bad.offsets[b] + w.problem.buffers[b].size);
        QVERIFY(!core::validatePlan(w.problem, bad).ok());
        const auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, bad, w.bufferTensor, {});
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        QVERIFY2(!core::compareOutputs(*w.graph, scratchRun->outputs, run->outputs).empty(), op.name.c_str());
        caught = true;
        break;
    }
    QVERIFY(caught);

    // Planned for oneDNN, a workspace may be smaller than the device's columns: the device kernel
    // then takes its scratch and computes the same outputs.
    core::setCpuKernels(core::CpuKernels::OneDnn);
    const auto small = deconv ? deconvWorkload(true) : load("example:cnn", true);
    const auto smallPlan = planFor(small);
    QVERIFY(core::validatePlan(small.problem, smallPlan).ok());
    const auto smallRun = gpu::runOnCuda(*small.graph, small.schedule, small.problem, smallPlan, small.bufferTensor, {});
    QVERIFY2(smallRun, smallRun ? "" : smallRun.error().message.c_str());
    const auto mismatch = core::compareOutputs(*small.graph, scratchRun->outputs, smallRun->outputs);
    QVERIFY2(mismatch.empty(), mismatch.c_str());
}

void TestCuda::cancelled()
{
    const auto w = load("example:cnn");
    const auto plan = planFor(w);
    QVERIFY(core::validatePlan(w.problem, plan).ok());
    core::RunOptions options;
    options.cancel = core::CancelToken(std::make_shared<std::atomic<bool>>(true));
    const auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, options);
    QVERIFY(!run);
    QCOMPARE(run.error().code, core::ErrorCode::Cancelled);
}

// ConvTranspose, Pad (reflect, constant), Resize (linear, nearest) and ReduceMean with their shape
// arguments as weights: each runs on the device, and the outputs match the CPU executor's. Pad of
// int32 data has no device kernel: it runs on the host.
void TestCuda::resampleOpsOnTheDevice()
{
    using core::DType;
    using core::TensorKind;
    GraphBuilder b;
    auto data = std::make_shared<core::ModelData>();
    auto weight = [&](const std::string& name, DType dtype, std::vector<std::int64_t> shape, const void* values) {
        return weightWithValues(b, *data, name, dtype, shape, values);
    };
    std::vector<float> w(4 * 3 * 3 * 3);
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = float(int(i * 37 % 19) - 9) / 9.0f;
    const float bias[3] = { 0.5f, -0.25f, 1.0f };
    const std::int64_t reflectPads[8] = { 0, 0, 1, 2, 0, 0, 2, 1 };
    const std::int64_t constantPads[8] = { 0, 1, 0, 1, 0, 0, 2, 0 };
    const float downScales[4] = { 1, 1, 0.5f, 0.5f }, upScales[4] = { 1, 1, 1.5f, 2 };
    const std::int64_t intPads[4] = { 1, 1, 0, 2 };
    const auto x = b.tensor("x", { 1, 4, 8, 8 }, TensorKind::Input);
    const auto wt = weight("w", DType::Float32, { 4, 3, 3, 3 }, w.data());
    const auto bt = weight("b", DType::Float32, { 3 }, bias);
    const auto t1 = b.tensor("t1", { 1, 3, 16, 16 });
    auto* deconv = b.op("deconv", "ConvTranspose", { x, wt, bt }, { t1 });
    deconv->attributes["strides"].ints = { 2, 2 };
    deconv->attributes["pads"].ints = { 1, 1, 1, 1 };
    deconv->attributes["output_padding"].ints = { 1, 1 };
    const auto t2 = b.tensor("t2", { 1, 3, 19, 19 });
    b.op("reflect", "Pad", { t1, weight("reflect_pads", DType::Int64, { 8 }, reflectPads) }, { t2 })->attributes["mode"].text = "reflect";
    const auto t3 = b.tensor("t3", { 1, 4, 21, 20 });
    b.op("constant", "Pad", { t2, weight("constant_pads", DType::Int64, { 8 }, constantPads) }, { t3 });
    // Resize(X, scales) as in opset 10.
    const auto t4 = b.tensor("t4", { 1, 4, 10, 10 });
    b.op("down", "Resize", { t3, weight("down_scales", DType::Float32, { 4 }, downScales) }, { t4 })->attributes["mode"].text = "linear";
    const auto t5 = b.tensor("t5", { 1, 4, 15, 20 });
    b.op("up", "Resize", { t4, weight("up_scales", DType::Float32, { 4 }, upScales) }, { t5 });
    const auto y = b.tensor("y", { 1, 4, 1, 1 }, TensorKind::Output);
    b.op("mean", "ReduceMean", { t5 }, { y })->attributes["axes"].ints = { 2, 3 };
    const auto xi = b.tensor("xi", { 3, 5 }, TensorKind::Input, DType::Int32);
    const auto yi = b.tensor("yi", { 4, 8 }, TensorKind::Output, DType::Int32);
    b.op("int_pad", "Pad", { xi, weight("int_pads", DType::Int64, { 4 }, intPads) }, { yi })->attributes["mode"].text = "edge";
    const auto wl = b.workload("resample", 256);
    const auto runs = runOnBoth(wl, data);
    QVERIFY(runs);
    const auto *run = &runs->gpu, *cpu = &runs->cpu;
    QCOMPARE(cpu->opsSynthetic, 0);
    QCOMPARE(run->opsSynthetic, 0);
    for (const auto& op : run->ops) {
        qInfo("%s (%s): %s", op.name.c_str(), op.type.c_str(), op.host ? "host" : "device");
        QVERIFY2(op.host == (op.name == "int_pad"), op.name.c_str());
    }
    const auto off = core::compareWithin(*wl.graph, cpu->outputs, run->outputs, 1e-3);
    QVERIFY2(off.empty(), off.c_str());
}

// A classifier head and attention statistics: GlobalMaxPool, ReduceSum/Max/Min/Prod/SumSquare/L1/L2
// (axes as an attribute, as an opset-18 input, and none: all axes), LogSoftmax; InstanceNormalization;
// Expand of a bool mask (1-byte elements) and Tile; GridSample (bilinear with reflection, bicubic
// with border padding). Each runs on the device and matches the CPU executor's outputs.
void TestCuda::reductionsAndCopiesOnTheDevice()
{
    using core::DType;
    using core::TensorKind;
    GraphBuilder b;
    auto data = std::make_shared<core::ModelData>();
    const std::int64_t lastAxis[1] = { -1 };
    const auto x = b.tensor("x", { 2, 6, 5, 4 }, TensorKind::Input);
    const auto pooled = b.tensor("pooled", { 2, 6, 1, 1 });
    b.op("pool", "GlobalMaxPool", { x }, { pooled });
    const auto flat = b.tensor("flat", { 2, 6 });
    b.op("flatten", "Flatten", { pooled }, { flat });
    const auto logits = b.tensor("logits", { 2, 6 }, TensorKind::Output);
    b.op("log_softmax", "LogSoftmax", { flat }, { logits })->attributes["axis"].ints = { 1 };
    struct Reduction {
        const char* type;
        std::vector<std::int64_t> outShape;
        int axes; // 0: attribute {1, 3}; 1: input {-1}; 2: none (every axis)
    };
    const Reduction reductions[] = { { "ReduceSum", { 2, 1, 5, 1 }, 0 }, { "ReduceMax", { 2, 6, 5, 1 }, 1 }, { "ReduceMin", { 1, 1, 1, 1 }, 2 },
        { "ReduceProd", { 2, 1, 5, 1 }, 0 }, { "ReduceSumSquare", { 2, 6, 5, 1 }, 1 }, { "ReduceL1", { 1, 1, 1, 1 }, 2 },
        { "ReduceL2", { 2, 1, 5, 1 }, 0 }, { "ReduceLogSumExp", { 2, 1, 5, 1 }, 0 } };
    for (const auto& r : reductions) {
        const auto y = b.tensor(std::string("y_") + r.type, r.outShape, TensorKind::Output);
        std::vector<core::TensorIndex> in { x };
        if (r.axes == 1)
            in.push_back(weightWithValues(b, *data, std::string("axes_") + r.type, DType::Int64, { 1 }, lastAxis));
        auto* op = b.op(r.type, r.type, in, { y });
        if (r.axes == 0)
            op->attributes["axes"].ints = { 1, 3 };
    }
    const float scale[6] = { 1, -0.5f, 2, 0.25f, 1.5f, -1 }, shift[6] = { 0, 0.5f, -1, 2, 0.1f, 0 };
    const auto normalized = b.tensor("normalized", { 2, 6, 5, 4 }, TensorKind::Output);
    b.op("instance_norm", "InstanceNormalization",
        { x, weightWithValues(b, *data, "scale", DType::Float32, { 6 }, scale), weightWithValues(b, *data, "shift", DType::Float32, { 6 }, shift) },
        { normalized });
    const auto local = b.tensor("local_response", { 2, 6, 5, 4 }, TensorKind::Output);
    auto* lrn = b.op("lrn", "LRN", { x }, { local });
    lrn->attributes["size"].ints = { 3 };
    lrn->attributes["alpha"].floats = { 0.5f }; // large enough that the neighbours' squares matter
    const std::int64_t maskShape[4] = { 2, 6, 5, 4 }, repeats[4] = { 1, 1, 2, 1 };
    const auto mask = b.tensor("mask", { 5, 1 }, TensorKind::Input, DType::Bool);
    const auto wide = b.tensor("wide_mask", { 2, 6, 5, 4 }, TensorKind::Output, DType::Bool);
    b.op("expand", "Expand", { mask, weightWithValues(b, *data, "mask_shape", DType::Int64, { 4 }, maskShape) }, { wide });
    const auto tiled = b.tensor("tiled", { 2, 6, 10, 4 }, TensorKind::Output);
    b.op("tile", "Tile", { x, weightWithValues(b, *data, "repeats", DType::Int64, { 4 }, repeats) }, { tiled });
    // GridSample at points partly outside the image (grid = 1.6 * input, inputs in [-1, 1)).
    const float spread = 1.6f;
    const auto gridIn = b.tensor("grid_in", { 2, 3, 7, 2 }, TensorKind::Input), grid = b.tensor("grid", { 2, 3, 7, 2 });
    b.op("spread", "Mul", { gridIn, weightWithValues(b, *data, "spread", DType::Float32, { 1 }, &spread) }, { grid });
    const auto bilinear = b.tensor("sampled_bilinear", { 2, 6, 3, 7 }, TensorKind::Output);
    auto* reflected = b.op("sample_reflection", "GridSample", { x, grid }, { bilinear });
    reflected->attributes["padding_mode"].text = "reflection";
    reflected->attributes["align_corners"].ints = { 1 };
    const auto bicubic = b.tensor("sampled_bicubic", { 2, 6, 3, 7 }, TensorKind::Output);
    auto* cubic = b.op("sample_border", "GridSample", { x, grid }, { bicubic });
    cubic->attributes["mode"].text = "bicubic";
    cubic->attributes["padding_mode"].text = "border";
    const auto wl = b.workload("reductions", 256);
    const auto runs = runOnBoth(wl, data);
    QVERIFY(runs);
    QCOMPARE(runs->cpu.opsSynthetic, 0);
    QCOMPARE(runs->gpu.opsSynthetic, 0);
    for (const auto& op : runs->gpu.ops)
        QVERIFY2(!op.host, op.name.c_str());
    const auto off = core::compareWithin(*wl.graph, runs->cpu.outputs, runs->gpu.outputs, 1e-3);
    QVERIFY2(off.empty(), off.c_str());
}

// An attention mask built at run time, as Swin-T's shifted windows build it (Sub, Equal, Not, Cast
// to bool, Where), with int64 comparisons, Cast between types, Max and HardSwish: every op runs on
// the device, bool and int64 outputs equal the CPU executor's, float ones within tolerance.
void TestCuda::maskOpsOnTheDevice()
{
    using core::DType;
    using core::TensorKind;
    GraphBuilder b;
    auto data = std::make_shared<core::ModelData>();
    const float zero = 0.0f, fill = -100.0f;
    const std::int64_t one = 1;
    const auto x = b.tensor("x", { 4, 8 }, TensorKind::Input);
    const auto floored = b.tensor("floor", { 4, 8 }), diff = b.tensor("diff", { 4, 8 });
    const auto same = b.tensor("same", { 4, 8 }, TensorKind::Output, DType::Bool);
    const auto differ = b.tensor("differ", { 4, 8 }, TensorKind::Activation, DType::Bool);
    const auto cond = b.tensor("cond", { 4, 8 }, TensorKind::Activation, DType::Bool);
    const auto masked = b.tensor("masked", { 4, 8 }), hard = b.tensor("hard", { 4, 8 }), most = b.tensor("most", { 4, 8 });
    const auto whole = b.tensor("whole", { 4, 8 }, TensorKind::Activation, DType::Int64);
    const auto positive = b.tensor("positive", { 4, 8 }, TensorKind::Activation, DType::Bool);
    const auto y = b.tensor("y", { 4, 8 }, TensorKind::Output);
    const auto asInt = b.tensor("as_int", { 4, 8 }, TensorKind::Output, DType::Int32);
    b.op("floor", "Floor", { x }, { floored });
    b.op("sub", "Sub", { x, floored }, { diff });
    b.op("equal", "Equal", { floored, weightWithValues(b, *data, "zero", DType::Float32, { 1 }, &zero) }, { same });
    b.op("not", "Not", { same }, { differ });
    b.op("cast_bool", "Cast", { differ }, { cond })->attributes["to"].ints = { 9 };
    b.op("where", "Where", { cond, weightWithValues(b, *data, "fill", DType::Float32, { 1 }, &fill), diff }, { masked });
    b.op("hardswish", "HardSwish", { masked }, { hard });
    b.op("max", "Max", { hard, x }, { most });
    b.op("cast_int64", "Cast", { floored }, { whole })->attributes["to"].ints = { 7 };
    b.op("greater", "Greater", { whole, weightWithValues(b, *data, "one", DType::Int64, { 1 }, &one) }, { positive });
    b.op("select", "Where", { positive, most, x }, { y });
    b.op("cast_int32", "Cast", { whole }, { asInt })->attributes["to"].ints = { 6 };
    const auto w = b.workload("mask", 256);
    const auto runs = runOnBoth(w, data);
    QVERIFY(runs);
    const auto *run = &runs->gpu, *cpu = &runs->cpu;
    QCOMPARE(cpu->opsSynthetic, 0);
    QCOMPARE(run->opsHost, 0);
    QCOMPARE(run->opsPrecomputed, 0);
    const auto off = core::compareWithin(*w.graph, cpu->outputs, run->outputs, 1e-3);
    QVERIFY2(off.empty(), off.c_str());
    // The mask is neither all true nor all false, so the comparison says something.
    const auto& mask = run->outputs.at(0).data;
    QVERIFY(std::count(mask.begin(), mask.end(), std::byte(1)) > 0);
    QVERIFY(std::count(mask.begin(), mask.end(), std::byte(0)) > 0);
}

// The ops decoder exports add (ArgMax, CumSum position ids, a Trilu mask) and the other index and
// logical ops run on the device, none on the host, with the CPU executor's outputs bit for bit.
void TestCuda::indexOpsOnTheDevice()
{
    using core::DType;
    using core::TensorKind;
    GraphBuilder b;
    auto data = std::make_shared<core::ModelData>();
    const std::int64_t axisOne = 1, axisZero = 0, below = -1;
    const float zero = 0.0f, half = 0.5f;
    std::vector<std::int64_t> picks(2 * 3 * 5);
    for (std::size_t i = 0; i < picks.size(); ++i)
        picks[i] = std::int64_t(i * 7 % 9) - 3; // -3..5: negative ones count from the end, 5 wraps
    const bool pattern[5] = { true, false, true, true, false };
    const auto x = b.tensor("x", { 2, 6, 5 }, TensorKind::Input);
    const auto am = b.tensor("argmax", { 2, 5 }, TensorKind::Output, DType::Int64);
    const auto an = b.tensor("argmin", { 2, 6, 1 }, TensorKind::Output, DType::Int64);
    const auto cs = b.tensor("cumsum", { 2, 6, 5 }), tr = b.tensor("trilu", { 2, 6, 5 }, TensorKind::Output);
    const auto cs64 = b.tensor("cumsum64", { 2, 5 }, TensorKind::Output, DType::Int64);
    const auto ge = b.tensor("gather_elements", { 2, 3, 5 }, TensorKind::Output);
    const auto p = b.tensor("p", { 2, 6, 5 }, TensorKind::Activation, DType::Bool), q = b.tensor("q", { 2, 6, 5 }, TensorKind::Activation, DType::Bool);
    const auto both = b.tensor("and", { 2, 6, 5 }, TensorKind::Output, DType::Bool), either = b.tensor("or", { 2, 6, 5 }, TensorKind::Output, DType::Bool);
    const auto other = b.tensor("xor", { 2, 6, 5 }, TensorKind::Output, DType::Bool);
    auto* argmax = b.op("argmax", "ArgMax", { x }, { am });
    argmax->attributes["axis"].ints = { 1 };
    argmax->attributes["keepdims"].ints = { 0 };
    auto* argmin = b.op("argmin", "ArgMin", { x }, { an });
    argmin->attributes["axis"].ints = { -1 };
    argmin->attributes["select_last_index"].ints = { 1 };
    b.op("cumsum", "CumSum", { x, weightWithValues(b, *data, "axis1", DType::Int64, {}, &axisOne) }, { cs })->attributes["reverse"].ints = { 1 };
    b.op("trilu", "Trilu", { cs, weightWithValues(b, *data, "k", DType::Int64, {}, &below) }, { tr })->attributes["upper"].ints = { 0 };
    b.op("cumsum64", "CumSum", { am, weightWithValues(b, *data, "axis0", DType::Int64, {}, &axisZero) }, { cs64 })->attributes["exclusive"].ints = { 1 };
    b.op("gather_elements", "GatherElements", { x, weightWithValues(b, *data, "picks", DType::Int64, { 2, 3, 5 }, picks.data()) }, { ge })
        ->attributes["axis"].ints = { 1 };
    b.op("positive", "Greater", { x, weightWithValues(b, *data, "zero", DType::Float32, { 1 }, &zero) }, { p });
    b.op("small", "Less", { x, weightWithValues(b, *data, "half", DType::Float32, { 1 }, &half) }, { q });
    b.op("and", "And", { p, q }, { both });
    b.op("or", "Or", { p, q }, { either });
    b.op("xor", "Xor", { p, weightWithValues(b, *data, "pattern", DType::Bool, { 5 }, pattern) }, { other }); // broadcast
    const auto w = b.workload("index ops", 256);
    const auto runs = identicalOnTheDevice(w, data);
    QVERIFY(runs);
    // Not degenerate: the mask holds both values and the argmax more than one index.
    const auto output = [&](core::TensorIndex t) -> const std::vector<std::byte>& {
        return runs->gpu.outputs.at(std::size_t(std::find(w.graph->outputs.begin(), w.graph->outputs.end(), t) - w.graph->outputs.begin())).data;
    };
    const auto& mask = output(both);
    QCOMPARE(mask.size(), std::size_t(60));
    QVERIFY(std::count(mask.begin(), mask.end(), std::byte(1)) > 0 && std::count(mask.begin(), mask.end(), std::byte(0)) > 0);
    const auto* index = reinterpret_cast<const std::int64_t*>(output(am).data());
    QVERIFY(std::any_of(index, index + 10, [&](std::int64_t v) { return v != index[0]; }));
}

// GatherND (batch_dims 1, negative indices), ScatterND (no reduction; add over repeated
// int32 tuples; max into single elements), ScatterElements (repeated indices, with and without a
// reduction), TopK (largest along an axis; smallest along the last, over rounded values full of
// ties), Hardmax, OneHot, IsInf and IsNaN on the device, bit for bit as on the CPU.
void TestCuda::selectOpsOnTheDevice()
{
    using core::DType;
    using core::TensorKind;
    GraphBuilder b;
    auto data = std::make_shared<core::ModelData>();
    const std::int64_t picks[6] = { -1, 4, 2, 0, 5, -6 }; // in range: out-of-range indices are refused
    const std::int64_t rows[6] = { 0, 1, 1, -1, 1, 3 };
    const std::int32_t planes[4] = { 1, 0, 1, -2 };
    const std::int64_t cells[9] = { 0, 0, 0, 0, 0, 0, 1, 5, 4 };
    const std::int64_t three = 3, two = 2;
    const auto x = b.tensor("x", { 2, 6, 5 }, TensorKind::Input);
    const auto gathered = b.tensor("gathered", { 2, 3, 5 }, TensorKind::Output);
    b.op("gather_nd", "GatherND", { x, weightWithValues(b, *data, "picks", DType::Int64, { 2, 3, 1 }, picks) }, { gathered })
        ->attributes["batch_dims"].ints = { 1 };
    const auto replaced = b.tensor("replaced", { 2, 6, 5 }, TensorKind::Output);
    b.op("scatter", "ScatterND", { x, weightWithValues(b, *data, "rows", DType::Int64, { 3, 2 }, rows), b.tensor("row_updates", { 3, 5 }, TensorKind::Weight) },
        { replaced });
    const auto added = b.tensor("added", { 2, 6, 5 }, TensorKind::Output);
    b.op("scatter_add", "ScatterND",
         { x, weightWithValues(b, *data, "planes", DType::Int32, { 4, 1 }, planes), b.tensor("plane_updates", { 4, 6, 5 }, TensorKind::Weight) }, { added })
        ->attributes["reduction"].text = "add";
    const auto maxed = b.tensor("maxed", { 2, 6, 5 }, TensorKind::Output);
    b.op("scatter_max", "ScatterND",
         { x, weightWithValues(b, *data, "cells", DType::Int64, { 3, 3 }, cells), b.tensor("cell_updates", { 3 }, TensorKind::Weight) }, { maxed })
        ->attributes["reduction"].text = "max";
    const auto topValues = b.tensor("top_values", { 2, 3, 5 }, TensorKind::Output);
    const auto topIndices = b.tensor("top_indices", { 2, 3, 5 }, TensorKind::Output, DType::Int64);
    b.op("top", "TopK", { x, weightWithValues(b, *data, "three", DType::Int64, { 1 }, &three) }, { topValues, topIndices })->attributes["axis"].ints = { 1 };
    const auto rounded = b.tensor("rounded", { 2, 6, 5 });
    b.op("round", "Round", { x }, { rounded });
    const auto lowValues = b.tensor("low_values", { 2, 6, 2 }, TensorKind::Output);
    const auto lowIndices = b.tensor("low_indices", { 2, 6, 2 }, TensorKind::Output, DType::Int64);
    b.op("low", "TopK", { rounded, weightWithValues(b, *data, "two", DType::Int64, { 1 }, &two) }, { lowValues, lowIndices })
        ->attributes["largest"].ints = { 0 };
    // ScatterElements along axis 1 with repeated indices: the last write wins, or all add up, as on the CPU.
    std::int64_t along[2 * 4 * 5];
    std::int32_t alongAdd[2 * 4 * 5];
    for (int i = 0; i < 40; ++i) {
        along[i] = (i * 5) % 7 - 2; // -2..4: repeats within each line, negative ones count from the end
        alongAdd[i] = std::int32_t(i % 3);
    }
    const auto written = b.tensor("written", { 2, 6, 5 }, TensorKind::Output);
    b.op("scatter_elements", "ScatterElements",
         { x, weightWithValues(b, *data, "along", DType::Int64, { 2, 4, 5 }, along), b.tensor("along_updates", { 2, 4, 5 }, TensorKind::Weight) },
         { written })
        ->attributes["axis"].ints = { 1 };
    const auto summed = b.tensor("summed", { 2, 6, 5 }, TensorKind::Output);
    auto* scatterAdd = b.op("scatter_elements_add", "ScatterElements",
        { x, weightWithValues(b, *data, "along_add", DType::Int32, { 2, 4, 5 }, alongAdd), b.tensor("add_updates", { 2, 4, 5 }, TensorKind::Weight) },
        { summed });
    scatterAdd->attributes["axis"].ints = { 1 };
    scatterAdd->attributes["reduction"].text = "add";
    // Hardmax along axis 1; OneHot of each column's argmax (int64 indices from the device); IsInf (positive
    // only) of x / 0 and IsNaN of log(x), which hold ±inf and NaN.
    const float zero = 0.0f, offOn[2] = { -1.0f, 3.0f };
    const std::int64_t six = 6;
    const auto hard = b.tensor("hard", { 2, 6, 5 }, TensorKind::Output);
    b.op("hardmax", "Hardmax", { x }, { hard })->attributes["axis"].ints = { 1 };
    const auto winner = b.tensor("winner", { 2, 5 }, TensorKind::Activation, DType::Int64);
    auto* argmax = b.op("argmax", "ArgMax", { x }, { winner });
    argmax->attributes["axis"].ints = { 1 };
    argmax->attributes["keepdims"].ints = { 0 };
    const auto hot = b.tensor("hot", { 2, 5, 6 }, TensorKind::Output);
    b.op("one_hot", "OneHot", { winner, weightWithValues(b, *data, "six", DType::Int64, { 1 }, &six),
                                  weightWithValues(b, *data, "off_on", DType::Float32, { 2 }, offOn) }, { hot });
    const auto infinite = b.tensor("infinite", { 2, 6, 5 }), logs = b.tensor("logs", { 2, 6, 5 });
    b.op("divide", "Div", { x, weightWithValues(b, *data, "zero", DType::Float32, { 1 }, &zero) }, { infinite });
    b.op("log", "Log", { x }, { logs });
    const auto isInf = b.tensor("is_inf", { 2, 6, 5 }, TensorKind::Output, DType::Bool);
    const auto isNan = b.tensor("is_nan", { 2, 6, 5 }, TensorKind::Output, DType::Bool);
    b.op("is_inf", "IsInf", { infinite }, { isInf })->attributes["detect_negative"].ints = { 0 };
    b.op("is_nan", "IsNaN", { logs }, { isNan });
    const auto w = b.workload("select ops", 256);
    const auto runs = identicalOnTheDevice(w, data);
    QVERIFY(runs);
    // Not degenerate: the rounded rows hold ties, and the smallest-first indices are not all in order.
    const auto& low = runs->gpu.outputs.at(7).data;
    const auto* lowIndex = reinterpret_cast<const std::int64_t*>(low.data());
    bool reordered = false;
    for (int r = 0; r < 12; ++r)
        reordered = reordered || lowIndex[2 * r] > lowIndex[2 * r + 1];
    QVERIFY(reordered);
    for (const auto t : { isInf, isNan }) { // both values present
        const auto& mask = runs->gpu.outputs.at(std::size_t(std::find(w.graph->outputs.begin(), w.graph->outputs.end(), t) - w.graph->outputs.begin())).data;
        QVERIFY(std::count(mask.begin(), mask.end(), std::byte(1)) > 0 && std::count(mask.begin(), mask.end(), std::byte(0)) > 0);
    }
}

// The operators of QOperator-format quantized models on the device, bit for bit as on the CPU:
// QLinearConv (groups, strides, pads, dilations, per-channel weight scales and zero points, int32
// bias), ConvInteger (uint8 weights with a zero point), QLinearMatMul (batched A, int8 output,
// per-column scales) and MatMulInteger (per-row zero points of A, B broadcast over A's batch), all
// reading the uint8 tensor QuantizeLinear makes on the device; DynamicQuantizeLinear feeding
// MatMulInteger the zero point it chose, as dynamically quantized transformers do.
void TestCuda::integerOpsOnTheDevice()
{
    using core::DType;
    using core::TensorKind;
    GraphBuilder b;
    auto data = std::make_shared<core::ModelData>();
    const auto bytes = [](std::size_t n, unsigned seed) {
        std::vector<std::uint8_t> v(n);
        for (auto& e : v)
            e = std::uint8_t((seed = seed * 1664525u + 1013904223u) >> 24);
        return v;
    };
    const auto x = b.tensor("x", { 1, 4, 7, 6 }, TensorKind::Input);
    const float xScale = 0.02f, yScale = 0.3f, mmScale = 0.7f;
    const std::uint8_t xZero = 128, yZero = 100;
    const auto xs = weightWithValues(b, *data, "x_scale", DType::Float32, { 1 }, &xScale);
    const auto xz = weightWithValues(b, *data, "x_zero", DType::UInt8, { 1 }, &xZero);
    const auto xq = b.tensor("xq", { 1, 4, 7, 6 }, TensorKind::Activation, DType::UInt8);
    b.op("quantize", "QuantizeLinear", { x, xs, xz }, { xq });

    const float wScales[6] = { 0.01f, 0.02f, 0.05f, 0.1f, 0.003f, 1.0f };
    const std::int8_t wZeros[6] = { 0, 1, -1, 2, 0, -3 };
    const std::int32_t bias[6] = { -500, 0, 1000, 70000, -3, 12 };
    const auto wConv = bytes(6 * 2 * 3 * 3, 7);
    const auto conv = b.tensor("conv", { 1, 6, 4, 4 }, TensorKind::Output, DType::UInt8);
    auto* qconv = b.op("qlinear_conv", "QLinearConv",
        { xq, xs, xz, weightWithValues(b, *data, "w", DType::Int8, { 6, 2, 3, 3 }, wConv.data()),
          weightWithValues(b, *data, "w_scale", DType::Float32, { 6 }, wScales), weightWithValues(b, *data, "w_zero", DType::Int8, { 6 }, wZeros),
          weightWithValues(b, *data, "y_scale", DType::Float32, { 1 }, &yScale), weightWithValues(b, *data, "y_zero", DType::UInt8, { 1 }, &yZero),
          weightWithValues(b, *data, "bias", DType::Int32, { 6 }, bias) },
        { conv });
    qconv->attributes["group"].ints = { 2 };
    qconv->attributes["strides"].ints = { 2, 1 };
    qconv->attributes["pads"].ints = { 1, 0, 1, 2 };
    qconv->attributes["dilations"].ints = { 1, 2 };

    const std::uint8_t w2Zero = 131;
    const auto w2 = bytes(3 * 4 * 2 * 2, 11);
    const auto sums = b.tensor("sums", { 1, 3, 6, 5 }, TensorKind::Output, DType::Int32);
    b.op("conv_integer", "ConvInteger",
        { xq, weightWithValues(b, *data, "w2", DType::UInt8, { 3, 4, 2, 2 }, w2.data()), xz,
          weightWithValues(b, *data, "w2_zero", DType::UInt8, { 1 }, &w2Zero) },
        { sums });

    const float bScales[5] = { 0.01f, 0.2f, 3.0f, 0.05f, 0.5f };
    const std::int8_t bZeros[5] = { 0, 5, -7, 1, 127 }, mmZero = -5;
    const auto bm = bytes(6 * 5, 13);
    const auto product = b.tensor("product", { 1, 4, 7, 5 }, TensorKind::Output, DType::Int8);
    b.op("qlinear_matmul", "QLinearMatMul",
        { xq, xs, xz, weightWithValues(b, *data, "b", DType::Int8, { 6, 5 }, bm.data()), weightWithValues(b, *data, "b_scale", DType::Float32, { 5 }, bScales),
          weightWithValues(b, *data, "b_zero", DType::Int8, { 5 }, bZeros), weightWithValues(b, *data, "mm_scale", DType::Float32, { 1 }, &mmScale),
          weightWithValues(b, *data, "mm_zero", DType::Int8, { 1 }, &mmZero) },
        { product });

    const auto rowZeros = bytes(7, 17), bi = bytes(4 * 6 * 3, 19);
    const auto exact = b.tensor("exact", { 1, 4, 7, 3 }, TensorKind::Output, DType::Int32);
    b.op("matmul_integer", "MatMulInteger",
        { xq, weightWithValues(b, *data, "bi", DType::UInt8, { 4, 6, 3 }, bi.data()), weightWithValues(b, *data, "row_zeros", DType::UInt8, { 7 }, rowZeros.data()) },
        { exact });
    // Dynamic quantization as ONNX Runtime writes it: DynamicQuantizeLinear, MatMulInteger with the
    // zero point it chose (computed on the device), Cast to float, times the scale it chose.
    const auto xd = b.tensor("xd", { 1, 4, 7, 6 }, TensorKind::Activation, DType::UInt8);
    const auto xdScale = b.tensor("xd_scale", {}, TensorKind::Output), xdZero = b.tensor("xd_zero", {}, TensorKind::Activation, DType::UInt8);
    b.op("dynamic_quantize", "DynamicQuantizeLinear", { x }, { xd, xdScale, xdZero });
    const auto bd = bytes(6 * 3, 23);
    const auto dynamicSums = b.tensor("dynamic_sums", { 1, 4, 7, 3 }, TensorKind::Activation, DType::Int32);
    b.op("dynamic_matmul", "MatMulInteger", { xd, weightWithValues(b, *data, "bd", DType::Int8, { 6, 3 }, bd.data()), xdZero }, { dynamicSums });
    const auto asFloat = b.tensor("as_float", { 1, 4, 7, 3 });
    b.op("to_float", "Cast", { dynamicSums }, { asFloat })->attributes["to"].ints = { 1 };
    const auto dequantized = b.tensor("dequantized", { 1, 4, 7, 3 }, TensorKind::Output);
    b.op("rescale", "Mul", { asFloat, xdScale }, { dequantized });
    const auto w = b.workload("integer ops", 256);
    const auto runs = identicalOnTheDevice(w, data);
    QVERIFY(runs);
    // Not degenerate: the requantized outputs take many values, not one saturated end.
    for (std::size_t k : { 0, 2 }) {
        const auto& out = runs->gpu.outputs.at(k).data;
        QVERIFY(std::set<std::byte>(out.begin(), out.end()).size() > 8);
    }
}

// RNN, GRU and LSTM in the configurations exporters write and the CPU kernel takes, on the device
// (no op on the host), within tolerance of the CPU: a bidirectional LSTM with biases, initial
// states, peepholes, a cell clip and per-entry lengths (steps past a length hold zeros); a reverse
// GRU (reset before the hidden GEMM) with only Y_h; a batch-first GRU with linear_before_reset; a
// bidirectional RNN with Relu one way and Tanh the other.
void TestCuda::recurrentOpsOnTheDevice()
{
    using core::DType;
    using core::TensorKind;
    GraphBuilder b;
    auto data = std::make_shared<core::ModelData>();
    const std::int64_t seq = 5, batch = 3, input = 4;
    const std::int32_t lengths[batch] = { 5, 2, 4 };
    const auto x = b.tensor("x", { seq, batch, input }, TensorKind::Input);
    const auto xFirst = b.tensor("x_batch_first", { batch, seq, input }, TensorKind::Input);
    const auto lens = weightWithValues(b, *data, "lengths", DType::Int32, { batch }, lengths);
    const auto weight = [&](const std::string& name, std::vector<std::int64_t> shape) { return b.tensor(name, std::move(shape), TensorKind::Weight); };

    const std::int64_t lh = 6;
    const auto lstmY = b.tensor("lstm_y", { seq, 2, batch, lh }, TensorKind::Output);
    const auto lstmH = b.tensor("lstm_h", { 2, batch, lh }, TensorKind::Output), lstmC = b.tensor("lstm_c", { 2, batch, lh }, TensorKind::Output);
    auto* lstm = b.op("lstm", "LSTM",
        { x, weight("lstm_w", { 2, 4 * lh, input }), weight("lstm_r", { 2, 4 * lh, lh }), weight("lstm_b", { 2, 8 * lh }), lens,
            weight("lstm_h0", { 2, batch, lh }), weight("lstm_c0", { 2, batch, lh }), weight("lstm_p", { 2, 3 * lh }) },
        { lstmY, lstmH, lstmC });
    lstm->attributes["direction"].text = "bidirectional";
    lstm->attributes["hidden_size"].ints = { lh };
    lstm->attributes["clip"].floats = { 2.5f };

    const std::int64_t gh = 5;
    const auto gruH = b.tensor("gru_h", { 1, batch, gh }, TensorKind::Output);
    auto* gru = b.op("gru", "GRU", { x, weight("gru_w", { 1, 3 * gh, input }), weight("gru_r", { 1, 3 * gh, gh }), weight("gru_b", { 1, 6 * gh }),
                                        weight("gru_h0", { 1, batch, gh }) },
        { gruH });
    gru->attributes["direction"].text = "reverse";
    gru->inputSlots = { 0, 1, 2, 3, 5 }; // no sequence_lens
    gru->outputSlots = { 1 };            // Y left out

    const auto gruFirstY = b.tensor("gru_first_y", { batch, seq, 1, gh }, TensorKind::Output);
    auto* gruFirst = b.op("gru_first", "GRU",
        { xFirst, weight("gru_first_w", { 1, 3 * gh, input }), weight("gru_first_r", { 1, 3 * gh, gh }), weight("gru_first_b", { 1, 6 * gh }) },
        { gruFirstY });
    gruFirst->attributes["layout"].ints = { 1 };
    gruFirst->attributes["linear_before_reset"].ints = { 1 };

    const std::int64_t rh = 7;
    const auto rnnY = b.tensor("rnn_y", { seq, 2, batch, rh }, TensorKind::Output);
    auto* rnn = b.op("rnn", "RNN", { x, weight("rnn_w", { 2, rh, input }), weight("rnn_r", { 2, rh, rh }), weight("rnn_b", { 2, 2 * rh }), lens },
        { rnnY });
    rnn->attributes["direction"].text = "bidirectional";
    rnn->attributes["activations"].strings = { "Relu", "Tanh" };

    const auto w = b.workload("recurrent ops", 256);
    runsLikeTheCpu(w, data, 0);
    // Not degenerate: the LSTM's second entry (length 2) has zeros in Y from step 2 on, and values before.
    const auto runs = runOnBoth(w, data);
    QVERIFY(runs);
    const auto* y = reinterpret_cast<const float*>(runs->gpu.outputs.at(0).data.data());
    const auto at = [&](std::int64_t t, std::int64_t dir, std::int64_t entry, std::int64_t k) { return y[((t * 2 + dir) * batch + entry) * lh + k]; };
    for (std::int64_t k = 0; k < lh; ++k) {
        QCOMPARE(at(3, 0, 1, k), 0.0f);
        QCOMPARE(at(2, 1, 1, k), 0.0f);
    }
    QVERIFY(at(1, 0, 1, 0) != 0.0f && at(0, 1, 1, 0) != 0.0f);
}

// Einsum equations that are one batched GEMM run on the device through cuBLAS: attention's scores and
// values, the output's free labels in the other operand's order, batched dot products. A sum over one
// operand's label is no GEMM and runs on the host. All within tolerance of the CPU.
void TestCuda::einsumOnTheDevice()
{
    using core::DType;
    using core::TensorKind;
    GraphBuilder b;
    auto data = std::make_shared<core::ModelData>();
    std::vector<float> keys(2 * 3 * 5 * 8), values(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        keys[i] = float(i * 13 % 17) / 8.0f - 1.0f;
        values[i] = float(i * 7 % 11) / 5.0f - 1.0f;
    }
    const auto q = b.tensor("q", { 2, 3, 4, 8 }, TensorKind::Input);
    const auto k = weightWithValues(b, *data, "k", DType::Float32, { 2, 3, 5, 8 }, keys.data());
    const auto v = weightWithValues(b, *data, "v", DType::Float32, { 2, 3, 5, 8 }, values.data());
    const auto scores = b.tensor("scores", { 2, 3, 4, 5 }), context = b.tensor("context", { 2, 3, 4, 8 }, TensorKind::Output);
    const auto flipped = b.tensor("flipped", { 2, 3, 5, 4 }, TensorKind::Output), dots = b.tensor("dots", { 2, 3, 4 }, TensorKind::Output);
    const auto summed = b.tensor("summed", { 2, 3, 5 }, TensorKind::Output);
    b.op("scores", "Einsum", { q, k }, { scores })->attributes["equation"].text = "bhid,bhjd->bhij";
    b.op("context", "Einsum", { scores, v }, { context })->attributes["equation"].text = "b h i j, b h j d -> b h i d";
    b.op("flipped", "Einsum", { q, k }, { flipped })->attributes["equation"].text = "bhid,bhjd->bhji";
    b.op("dots", "Einsum", { q, q }, { dots })->attributes["equation"].text = "bhid,bhid->bhi";
    b.op("summed", "Einsum", { scores }, { summed })->attributes["equation"].text = "bhij->bhj";
    runsLikeTheCpu(b.workload("einsum", 256), data, 1);
}

// 3-D (video) Conv with groups, strides, dilations and asymmetric pads, MaxPool and AveragePool, and a
// 3-D ConvTranspose run on the device (im2col and col2im over depth), within tolerance of the CPU.
void TestCuda::volumesOnTheDevice()
{
    using core::DType;
    using core::TensorKind;
    const auto ints = [](std::vector<std::int64_t> v) {
        core::Attribute a;
        a.ints = std::move(v);
        return a;
    };
    GraphBuilder b;
    auto data = std::make_shared<core::ModelData>();
    std::vector<float> w(6 * 2 * 3 * 3 * 2), up(6 * 2 * 2 * 2 * 2);
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = float(i * 11 % 13) / 6.0f - 1.0f;
    for (std::size_t i = 0; i < up.size(); ++i)
        up[i] = float(i * 5 % 7) / 3.0f - 1.0f;
    const auto x = b.tensor("clip", { 1, 4, 5, 7, 6 }, TensorKind::Input);
    const auto features = b.tensor("features", { 1, 6, 3, 4, 3 });
    const auto maxed = b.tensor("maxed", { 1, 6, 2, 2, 2 }, TensorKind::Output), averaged = b.tensor("averaged", { 1, 6, 2, 2, 2 }, TensorKind::Output);
    const auto upsampled = b.tensor("upsampled", { 1, 4, 6, 8, 6 }, TensorKind::Output);
    auto* conv = b.op("conv3d", "Conv", { x, weightWithValues(b, *data, "w", DType::Float32, { 6, 2, 3, 3, 2 }, w.data()) }, { features });
    conv->attributes["group"] = ints({ 2 });
    conv->attributes["strides"] = ints({ 1, 2, 2 });
    conv->attributes["dilations"] = ints({ 2, 1, 1 });
    conv->attributes["pads"] = ints({ 1, 1, 0, 1, 1, 1 });
    for (const auto& [name, type, out] : { std::tuple { "max3d", "MaxPool", maxed }, std::tuple { "avg3d", "AveragePool", averaged } }) {
        auto* pool = b.op(name, type, { features }, { out });
        pool->attributes["kernel_shape"] = ints({ 2, 3, 2 });
        pool->attributes["strides"] = ints({ 1, 2, 2 });
        pool->attributes["pads"] = ints({ 0, 1, 1, 0, 0, 0 });
    }
    auto* deconv = b.op("deconv3d", "ConvTranspose", { features, weightWithValues(b, *data, "up", DType::Float32, { 6, 2, 2, 2, 2 }, up.data()) },
        { upsampled });
    deconv->attributes["group"] = ints({ 2 });
    deconv->attributes["strides"] = ints({ 2, 2, 2 });
    deconv->attributes["pads"] = ints({ 0, 0, 0, 0, 0, 0 });
    runsLikeTheCpu(b.workload("volumes", 256), data, 0);
}

// DepthToSpace in both modes (super-resolution's pixel shuffle) and SpaceToDepth run on the device as
// one permutation each, equal to the CPU kernels.
void TestCuda::pixelShuffleOnTheDevice()
{
    using core::TensorKind;
    GraphBuilder b;
    const auto x = b.tensor("x", { 2, 8, 3, 4 }, TensorKind::Input);
    const auto crd = b.tensor("crd", { 2, 2, 6, 8 }, TensorKind::Output), dcr = b.tensor("dcr", { 2, 2, 6, 8 });
    const auto back = b.tensor("back", { 2, 8, 3, 4 }, TensorKind::Output);
    for (const auto& [name, type, in, out, mode] : { std::tuple { "crd", "DepthToSpace", x, crd, "CRD" }, std::tuple { "dcr", "DepthToSpace", x, dcr, "DCR" },
             std::tuple { "back", "SpaceToDepth", dcr, back, "" } }) {
        auto* op = b.op(name, type, { in }, { out });
        op->attributes["blocksize"].ints = { 2 };
        if (*mode)
            op->attributes["mode"].text = mode;
    }
    runsLikeTheCpu(b.workload("pixel shuffle", 256), std::make_shared<core::ModelData>(), 0);
}

// A QDQ model, float input -> QuantizeLinear -> DequantizeLinear -> Conv (weights DequantizeLinear
// of int8 per output channel, bias of int32 per channel) -> Relu -> QuantizeLinear -> uint8 output
// and its DequantizeLinear -> float output, runs with no op on the host and equals the CPU bit for
// bit; after the fuse strategy, the group DQ x3+Conv+Relu+Q runs on the device as one fused op.
// Every scale is a power of two, so the convolution is exact in any summation order (even with
// TF32 inputs) and only the quantization decides the bits: the output scale puts a tie (x.5) on
// about one positive output in eight (rounded half to even) and saturates the largest at 255; the
// per-channel weight scales and zero points differ, so the axis matters.
void TestCuda::quantizedGroupOnTheDevice_data()
{
    QTest::addColumn<bool>("fused");
    QTest::newRow("ops") << false;
    QTest::newRow("fused") << true;
}

void TestCuda::quantizedGroupOnTheDevice()
{
    using core::DType;
    using core::TensorKind;
    QFETCH(bool, fused);
    GraphBuilder b;
    auto data = std::make_shared<core::ModelData>();
    const float xScale = 1.0f / 64, yScale = 1.0f / 32;
    const std::uint8_t xZero = 128, yZero = 3;
    std::vector<std::int8_t> w(8 * 4 * 3 * 3);
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = std::int8_t(int(i * 7 % 9) - 4);
    const std::vector<float> wScale { 0.25f, 1.0f, 0.5f, 2.0f, 0.125f, 1.0f, 0.5f, 0.25f };
    const std::vector<std::int8_t> wZero { 0, 1, -1, 0, 2, 0, -2, 1 };
    std::vector<float> bScale(8);
    std::vector<std::int32_t> bias(8);
    for (std::size_t c = 0; c < 8; ++c) {
        bScale[c] = xScale * wScale[c];
        bias[c] = std::int32_t(c * 37 % 61) - 20;
    }
    const auto x = b.tensor("x", { 1, 4, 8, 8 }, TensorKind::Input);
    const auto xq = b.tensor("xq", { 1, 4, 8, 8 }, TensorKind::Activation, DType::UInt8), xf = b.tensor("xf", { 1, 4, 8, 8 });
    const auto wf = b.tensor("wf", { 8, 4, 3, 3 }), bf = b.tensor("bf", { 8 });
    const auto conv = b.tensor("conv", { 1, 8, 8, 8 }), relu = b.tensor("relu", { 1, 8, 8, 8 });
    const auto yq = b.tensor("yq", { 1, 8, 8, 8 }, TensorKind::Output, DType::UInt8), y = b.tensor("y", { 1, 8, 8, 8 }, TensorKind::Output);
    const auto xs = weightWithValues(b, *data, "x_scale", DType::Float32, {}, &xScale);
    const auto xz = weightWithValues(b, *data, "x_zero", DType::UInt8, {}, &xZero);
    const auto ys = weightWithValues(b, *data, "y_scale", DType::Float32, {}, &yScale);
    const auto yz = weightWithValues(b, *data, "y_zero", DType::UInt8, {}, &yZero);
    b.op("quantize_x", "QuantizeLinear", { x, xs, xz }, { xq });
    b.op("dq_x", "DequantizeLinear", { xq, xs, xz }, { xf });
    b.op("dq_w", "DequantizeLinear",
         { weightWithValues(b, *data, "w", DType::Int8, { 8, 4, 3, 3 }, w.data()),
             weightWithValues(b, *data, "w_scale", DType::Float32, { 8 }, wScale.data()),
             weightWithValues(b, *data, "w_zero", DType::Int8, { 8 }, wZero.data()) },
         { wf })
        ->attributes["axis"].ints = { 0 };
    b.op("dq_b", "DequantizeLinear",
         { weightWithValues(b, *data, "b", DType::Int32, { 8 }, bias.data()),
             weightWithValues(b, *data, "b_scale", DType::Float32, { 8 }, bScale.data()) },
         { bf })
        ->attributes["axis"].ints = { 0 };
    auto* c = b.op("conv", "Conv", { xf, wf, bf }, { conv });
    c->attributes["kernel_shape"].ints = { 3, 3 };
    c->attributes["pads"].ints = { 1, 1, 1, 1 };
    b.op("relu", "Relu", { conv }, { relu });
    b.op("quantize_y", "QuantizeLinear", { relu, ys, yz }, { yq });
    b.op("dq_y", "DequantizeLinear", { yq, ys, yz }, { y });
    auto w0 = b.workload("qdq", 256);
    if (fused) {
        auto applied = core::applyStrategies(w0, { "fuse" }, core::StrategyOptions {});
        QVERIFY2(applied, applied ? "" : applied.error().message.c_str());
        w0 = std::move(applied->workload);
    }
    const auto runs = runOnBoth(w0, data);
    QVERIFY(runs);
    QCOMPARE(runs->cpu.opsSynthetic, 0);
    QCOMPARE(runs->gpu.opsSynthetic, 0);
    QCOMPARE(runs->gpu.opsHost, 0);
    int groups = 0;
    for (const auto& op : w0.graph->ops)
        if (op.type == "Fused") {
            ++groups;
            QCOMPARE(op.attributes.at("fused_types").text, std::string("DequantizeLinear x3+Conv+Relu+QuantizeLinear"));
        }
    QCOMPARE(groups, fused ? 1 : 0);
    for (const auto& op : runs->gpu.ops)
        QVERIFY2(!op.host, op.name.c_str());
    const auto off = core::compareOutputs(*w0.graph, runs->cpu.outputs, runs->gpu.outputs);
    QVERIFY2(off.empty(), off.c_str());
    // The quantized output spans the range: zeros from the Relu (the zero point) and saturation.
    const auto& q = runs->cpu.outputs.at(std::size_t(std::find(w0.graph->outputs.begin(), w0.graph->outputs.end(), yq) - w0.graph->outputs.begin())).data;
    QVERIFY(std::count(q.begin(), q.end(), std::byte(yZero)) > 0 && std::count(q.begin(), q.end(), std::byte(255)) > 0);
}

// LayerNormalization with its optional Mean and InvStdDev outputs (as training graphs keep them for
// the backward pass) runs on the device, all three outputs within tolerance of the CPU's.
void TestCuda::layerNormStatisticsOnTheDevice()
{
    using core::DType;
    using core::TensorKind;
    GraphBuilder b;
    auto data = std::make_shared<core::ModelData>();
    std::vector<float> scale(16), bias(16);
    for (int i = 0; i < 16; ++i) {
        scale[std::size_t(i)] = 0.5f + 0.1f * float(i);
        bias[std::size_t(i)] = 0.25f * float(i % 3) - 0.25f;
    }
    const auto x = b.tensor("x", { 2, 3, 16 }, TensorKind::Input);
    const auto y = b.tensor("y", { 2, 3, 16 }, TensorKind::Output);
    const auto mean = b.tensor("mean", { 2, 3, 1 }, TensorKind::Output), inv = b.tensor("inv_std_dev", { 2, 3, 1 }, TensorKind::Output);
    b.op("norm", "LayerNormalization",
        { x, weightWithValues(b, *data, "scale", DType::Float32, { 16 }, scale.data()), weightWithValues(b, *data, "bias", DType::Float32, { 16 }, bias.data()) },
        { y, mean, inv });
    const auto w = b.workload("layernorm", 256);
    const auto runs = runOnBoth(w, data);
    QVERIFY(runs);
    QCOMPARE(runs->gpu.opsHost, 0);
    const auto off = core::compareWithin(*w.graph, runs->cpu.outputs, runs->gpu.outputs, 1e-4);
    QVERIFY2(off.empty(), off.c_str());
}

// Exporters leave Dropout in training mode at ratio 0 (Swin-T does): it drops nothing, so it runs on
// the device as a copy with its mask all true, the CPU kernel's bits. At ratio 0.5 neither executor
// has a real kernel: the op goes to the host, synthetic.
void TestCuda::dropoutDropsNothingOnDevice()
{
    using core::DType;
    using core::TensorKind;
    for (const float ratio : { 0.0f, 0.5f }) {
        GraphBuilder b;
        auto data = std::make_shared<core::ModelData>();
        const bool training = true;
        const auto x = b.tensor("x", { 2, 64 }, TensorKind::Input);
        const auto r = weightWithValues(b, *data, "ratio", DType::Float32, {}, &ratio);
        const auto t = weightWithValues(b, *data, "training", DType::Bool, {}, &training);
        const auto y = b.tensor("y", { 2, 64 });
        const auto mask = b.tensor("mask", { 2, 64 }, TensorKind::Output, DType::Bool);
        const auto out = b.tensor("out", { 2, 64 }, TensorKind::Output);
        b.op("drop", "Dropout", { x, r, t }, { y, mask });
        b.op("act", "Relu", { y }, { out });
        const auto w = b.workload("dropout", 256);
        const auto runs = runOnBoth(w, data);
        QVERIFY(runs);
        const auto *run = &runs->gpu, *cpu = &runs->cpu;
        QCOMPARE(run->ops.at(0).host, ratio != 0.0f);
        QCOMPARE(run->opsSynthetic, ratio != 0.0f ? 1 : 0);
        QCOMPARE(cpu->opsSynthetic, run->opsSynthetic);
        if (ratio == 0.0f) {
            const auto mismatch = core::compareOutputs(*w.graph, cpu->outputs, run->outputs);
            QVERIFY2(mismatch.empty(), mismatch.c_str());
            const auto& maskOut = run->outputs.at(0);
            QVERIFY(std::all_of(maskOut.data.begin(), maskOut.data.end(), [](std::byte v) { return v == std::byte(1); }));
        }
    }
}

// Shape -> Gather -> ConstantOfShape depends on static shapes and weights only: computed once before
// the passes and copied in at each step, none on the host. The Add that reads the graph input runs
// on the device. Pads concatenated from weights are precomputed too, and the Pad that reads them
// runs on the device (it takes them as host contents, like weights). A float32 op on a weight (the
// Identity) keeps its device kernel. The fuse strategy fuses such shape arithmetic too: the fused
// op is precomputed like the ops it holds.
void TestCuda::constantSubgraphPrecomputed_data()
{
    QTest::addColumn<bool>("fused");
    QTest::newRow("ops") << false;
    QTest::newRow("fused Shape+Gather") << true;
}

void TestCuda::constantSubgraphPrecomputed()
{
    QFETCH(bool, fused);
    using core::DType;
    using core::TensorKind;
    GraphBuilder b;
    auto data = std::make_shared<core::ModelData>();
    const std::int64_t last = 2;
    const auto x = b.tensor("x", { 2, 3, 4 }, TensorKind::Input);
    const auto shape = b.tensor("shape", { 3 }, TensorKind::Activation, DType::Int64);
    const auto dim = b.tensor("dim", { 1 }, TensorKind::Activation, DType::Int64);
    const auto which = weightWithValues(b, *data, "which", DType::Int64, { 1 }, &last);
    const core::Op shapeOf { .name = "shape_of", .type = "Shape", .inputs = { x }, .outputs = { shape } };
    const core::Op lastDim { .name = "last_dim", .type = "Gather", .inputs = { shape, which }, .outputs = { dim } };
    if (fused)
        b.op("shape_of+last_dim", "Fused", { x, which }, { dim })->body = { shapeOf, lastDim };
    else
        b.g.ops.insert(b.g.ops.end(), { shapeOf, lastDim });
    const auto zeros = b.tensor("zeros", { 4 });
    b.op("fill", "ConstantOfShape", { dim }, { zeros });
    const auto y = b.tensor("y", { 2, 3, 4 });
    b.op("add", "Add", { x, zeros }, { y });
    const auto out = b.tensor("out", { 2, 3, 4 }, TensorKind::Output);
    b.op("act", "Relu", { y }, { out });
    const std::int64_t before[3] = { 0, 0, 1 }, after[3] = { 0, 1, 0 };
    const auto pads = b.tensor("pads", { 6 }, TensorKind::Activation, DType::Int64);
    b.op("join_pads", "Concat", { weightWithValues(b, *data, "before", DType::Int64, { 3 }, before),
                                     weightWithValues(b, *data, "after", DType::Int64, { 3 }, after) },
         { pads })->attributes["axis"].ints = { 0 };
    const auto padded = b.tensor("padded", { 2, 4, 5 }, TensorKind::Output);
    b.op("pad", "Pad", { x, pads }, { padded });
    const float biasValues[4] = { 0.5f, -1.0f, 2.0f, 0.25f };
    const auto bias = b.tensor("bias", { 4 });
    b.op("bias_copy", "Identity", { weightWithValues(b, *data, "bias_weight", DType::Float32, { 4 }, biasValues) }, { bias });
    const auto biased = b.tensor("biased", { 2, 3, 4 }, TensorKind::Output);
    b.op("add_bias", "Add", { x, bias }, { biased });
    const auto w = b.workload("constant-subgraph", 256);
    const auto runs = runOnBoth(w, data);
    QVERIFY(runs);
    const auto& run = runs->gpu;
    QCOMPARE(runs->cpu.opsSynthetic, 0);
    QCOMPARE(run.opsSynthetic, 0);
    QCOMPARE(run.opsHost, 0);
    QCOMPARE(run.opsPrecomputed, fused ? 3 : 4);
    for (const auto& op : run.ops)
        QVERIFY2(op.precomputed
                == (op.name == "shape_of" || op.name == "last_dim" || op.name == "shape_of+last_dim" || op.name == "fill" || op.name == "join_pads"),
            op.name.c_str());
    const auto mismatch = core::compareOutputs(*w.graph, runs->cpu.outputs, run.outputs);
    QVERIFY2(mismatch.empty(), mismatch.c_str());
}

// aboveThreshold (NonZero -> Transpose -> GatherND -> Shape -> Min -> TopK on tensors sized by an
// upper bound): the shaped ops run on the host on their run-time shapes in every allocation mode,
// and the outputs are the CPU executor's, shapes and bits. Swapped: the NonZero output goes to the
// host and back on the copy stream, keeping its run-time shape.
void TestCuda::runTimeShapesOnTheHost_data()
{
    QTest::addColumn<bool>("swapped");
    QTest::newRow("on the device") << false;
    QTest::newRow("swapped") << true;
}

void TestCuda::runTimeShapesOnTheHost()
{
    QFETCH(bool, swapped);
    const auto w = boundedgraphs::aboveThreshold(8, swapped);
    const auto options = boundedgraphs::thresholdInputs(0.3f);
    const auto cpu = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, options);
    QVERIFY2(cpu, cpu ? "" : cpu.error().message.c_str());
    QCOMPARE(cpu->opsSynthetic, 0);
    QCOMPARE(cpu->outputs[1].shape, (core::exec::Shape { 3 }));
    QCOMPARE(cpu->boundedTensors, swapped ? 7 : 5); // the copies on the host and back are bounded too
    const auto plan = planFor(w);
    QVERIFY(core::validatePlan(w.problem, plan).ok());
    for (auto mode : { gpu::CudaAllocation::Arena, gpu::CudaAllocation::PerTensor, gpu::CudaAllocation::Pool }) {
        const auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, options, mode);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        const char* name = gpu::cudaAllocationName(mode).data();
        QCOMPARE(run->opsSynthetic, 0);
        QCOMPARE(run->opsRuntimeShaped, cpu->opsRuntimeShaped);
        QVERIFY(run->opsRuntimeShaped >= 4);
        for (const auto& op : run->ops) // these read or write a bounded tensor; Greater and Min do not
            if (op.type.rfind("Swap", 0) == 0)
                QVERIFY2(!op.host, op.name.c_str()); // on the copy stream
            else if (op.type != "Greater" && op.type != "Min")
                QVERIFY2(op.host && !op.precomputed, (std::string(name) + ": " + op.name).c_str());
        // On the host: NonZero, Transpose, GatherND, Shape, TopK, and Min (its device kernel is float-only).
        // Transpose reads NonZero's output and Shape GatherND's where those host ops left them (when
        // swapped, Transpose reads what the SwapIn brought back): they need not wait for the device.
        QCOMPARE(run->opsHost, 6);
        QCOMPARE(run->opsHostWaited, swapped ? 5 : 4);
        QCOMPARE(run->boundedTensors, cpu->boundedTensors);
        QCOMPARE(run->boundedUsedBytes, cpu->boundedUsedBytes);
        QVERIFY(run->boundedUsedBytes < run->boundedBytes);
        for (std::size_t k = 0; k < cpu->outputs.size(); ++k)
            QCOMPARE(run->outputs[k].shape, cpu->outputs[k].shape);
        const auto mismatch = core::compareOutputs(*w.graph, cpu->outputs, run->outputs);
        QVERIFY2(mismatch.empty(), (std::string(name) + ": " + mismatch).c_str());
    }
    QCOMPARE(boundedgraphs::valuesOf<float>(cpu->outputs[1]), (std::vector<float> { 3.0f, 2.0f, 0.7f }));
}

// A bound the data overruns (4 above the threshold, room for 3): the NonZero and everything
// computed from its output run synthetic, nothing is written past the room, and the arena run is
// the no-reuse GPU run.
void TestCuda::boundTooSmallRunsSynthetic()
{
    const auto w = boundedgraphs::aboveThreshold(3);
    const auto options = boundedgraphs::thresholdInputs(0.3f);
    const auto plan = planFor(w);
    QVERIFY(core::validatePlan(w.problem, plan).ok());
    const auto reference = gpu::runOnCuda(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, options);
    const auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, options);
    QVERIFY2(reference, reference ? "" : reference.error().message.c_str());
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    QCOMPARE(run->opsSynthetic, 5); // all but Greater, and Min on a Shape of fixed size
    QCOMPARE(run->opsRuntimeShaped, 0);
    QCOMPARE(run->boundedUsedBytes, run->boundedBytes);
    const auto mismatch = core::compareOutputs(*w.graph, reference->outputs, run->outputs);
    QVERIFY2(mismatch.empty(), mismatch.c_str());
}

// Fixtures whose ops the device has no kernels for run those on the host, on the CPU's real kernels
// and shape rules, and give the CPU executor's outputs. Control flow: tricky/if_nms
// (NonMaxSuppression in an If's then-branch, a Gather on its run-time length), tricky/loop_accumulate
// (a carried value and a scan output), tricky/loop_nested_if (an If in the body) and tricky/scan_axes:
// the If, Loop and Scan run their graphs, reading the outer tensors they capture from the device;
// bit for bit. tricky/log_mel_frontend (HannWindow, STFT, MelWeightMatrix) and tricky/pool_unpool
// (MaxPool with Indices, MaxUnpool): those ops on the host beside the device Convs (the window and
// mel matrix, of constant inputs, once before the passes); within 1e-4. tricky/list_loop: a list
// built in a Loop (sequences, their element shapes beside them) gives the same rows and element shapes.
void TestCuda::hostOpsGiveTheCpuOutputs()
{
    for (const char* name : { "if_nms", "loop_accumulate", "loop_nested_if", "scan_axes", "log_mel_frontend", "pool_unpool", "list_loop" }) {
        const auto file = boundedgraphs::fixture(name);
        if (!std::filesystem::exists(file))
            QSKIP("tests/models/tricky/ fixtures are missing: run scripts/make_models.sh to make the test models");
        const std::string_view fixture = name;
        const auto w = core::loadWorkload(file, {});
        QVERIFY2(w, w ? "" : w.error().message.c_str());
        auto options = boundedgraphs::withModelData(file, *w->graph);
        QVERIFY(options.modelData);
        if (fixture == "if_nms")
            boundedgraphs::ifNmsInputs(options, true);
        else if (fixture == "loop_accumulate")
            options.inputs["X"] = boundedgraphs::floats({ 1, 8 }, { 1, 2, 3, 4, 5, 6, 7, 8 });
        else if (fixture == "loop_nested_if")
            options.inputs["X"] = boundedgraphs::floats({ 1, 4 }, { 1, -2, 0.5f, 3 });
        const auto cpu = core::runOnCpu(*w->graph, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
        QVERIFY2(cpu, cpu ? "" : cpu.error().message.c_str());
        QCOMPARE(cpu->opsSynthetic, 0);
        const auto plan = planFor(*w);
        QVERIFY(core::validatePlan(w->problem, plan).ok());
        const auto run = gpu::runOnCuda(*w->graph, w->schedule, w->problem, plan, w->bufferTensor, options);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        QVERIFY2(run->opsSynthetic == 0, name);
        const auto opOf = [&](std::string_view type) {
            return std::find_if(run->ops.begin(), run->ops.end(), [&](const core::OpMeasurement& m) { return m.type == type; });
        };
        const bool audio = fixture == "log_mel_frontend", unpool = fixture == "pool_unpool";
        if (audio || unpool) {
            const auto hostOp = opOf(audio ? "STFT" : "MaxUnpool");
            QVERIFY(hostOp != run->ops.end() && hostOp->real && hostOp->host);
            for (const char* type : { "MelWeightMatrix", "HannWindow" })
                QVERIFY(!audio || (opOf(type) != run->ops.end() && opOf(type)->real && opOf(type)->precomputed));
            QVERIFY(opOf("Conv") != run->ops.end() && opOf("Conv")->real && !opOf("Conv")->host);
            const auto off = core::compareWithin(*w->graph, cpu->outputs, run->outputs, 1e-4);
            QVERIFY2(off.empty(), (std::string(name) + ": " + off).c_str());
            continue;
        }
        const auto branch = std::find_if(run->ops.begin(), run->ops.end(),
            [](const core::OpMeasurement& op) { return op.type == "If" || op.type == "Loop" || op.type == "Scan"; });
        QVERIFY(branch != run->ops.end() && branch->real && branch->host);
        for (std::size_t k = 0; k < cpu->outputs.size(); ++k)
            QCOMPARE(run->outputs[k].shape, cpu->outputs[k].shape);
        const auto mismatch = core::compareOutputs(*w->graph, cpu->outputs, run->outputs);
        QVERIFY2(mismatch.empty(), (std::string(name) + ": " + mismatch).c_str());
    }
}

// tricky/cnn_float16: every op of the float16 model runs on the device's float32 kernels over
// widened copies in the staging buffer (none on the host, as before this ran 10 of its 11 ops there),
// the outputs within float16 rounding of the CPU executor's, and the same in every allocation mode.
void TestCuda::halfPrecisionRunsOnTheDevice()
{
    const auto file = boundedgraphs::fixture("cnn_float16");
    if (!std::filesystem::exists(file))
        QSKIP("tests/models/tricky/ fixtures are missing: run scripts/make_models.sh to make the test models");
    const auto w = core::loadWorkload(file, {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    const auto options = boundedgraphs::withModelData(file, *w->graph);
    QVERIFY(options.modelData);
    const auto cpu = core::runOnCpu(*w->graph, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
    QVERIFY2(cpu, cpu ? "" : cpu.error().message.c_str());
    const auto plan = planFor(*w);
    QVERIFY(core::validatePlan(w->problem, plan).ok());
    std::vector<core::HostTensor> first;
    for (auto mode : { gpu::CudaAllocation::Arena, gpu::CudaAllocation::PerTensor, gpu::CudaAllocation::Pool }) {
        const auto run = gpu::runOnCuda(*w->graph, w->schedule, w->problem, plan, w->bufferTensor, options, mode);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        QCOMPARE(run->opsSynthetic, 0);
        QCOMPARE(run->opsHost, 0);
        QVERIFY(run->scratchBytes >= 16 * 16 * 8 * 2 * core::Bytes(sizeof(float))); // a Conv's widened output and more
        QCOMPARE(run->outputs[0].dtype, core::DType::Float16);
        const auto off = core::compareWithin(*w->graph, cpu->outputs, run->outputs, 1e-2);
        QVERIFY2(off.empty(), off.c_str());
        if (first.empty())
            first = run->outputs;
        else
            QVERIFY(core::compareOutputs(*w->graph, first, run->outputs).empty());
    }
}

// The inplace strategy puts a Concat's inputs in their slices of its output: the device Concat
// copies nothing, and every allocation mode gives the untransformed model's outputs bit for bit
// (per-tensor and pool modes point the inputs into the output's allocation at their offsets).
// `applied` run in the arena, per tensor and from the pool: each mode's outputs equal the run of
// `original` (its own plan), bit for bit, with every op on the device.
static void sameOutputsInEveryMode(const core::Workload& original, const core::StrategyRun& applied)
{
    const auto& w = applied.workload;
    const auto plan = planFor(w), originalPlan = planFor(original);
    QVERIFY(core::validatePlan(w.problem, plan).ok() && core::validatePlan(original.problem, originalPlan).ok());
    const auto reference = gpu::runOnCuda(*original.graph, original.schedule, original.problem, originalPlan, original.bufferTensor, {});
    QVERIFY2(reference, reference ? "" : reference.error().message.c_str());
    for (auto mode : { gpu::CudaAllocation::Arena, gpu::CudaAllocation::PerTensor, gpu::CudaAllocation::Pool }) {
        const auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, {}, mode);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        QCOMPARE(run->opsHost, 0);
        const auto mismatch = core::compareOutputs(*w.graph, reference->outputs, run->outputs);
        QVERIFY2(mismatch.empty(), (std::string(gpu::cudaAllocationName(mode)) + ": " + mismatch).c_str());
    }
}

void TestCuda::concatInPlaceOnTheDevice()
{
    const auto original = concatAndLaterRead(1, 256);
    const auto c = *original.graph->findTensor("c"), y = *original.graph->findTensor("y");
    core::StrategyOptions options;
    options.alignment = original.problem.alignment;
    const auto applied = core::applyStrategies(original, { "inplace" }, options);
    QVERIFY2(applied, applied ? "" : applied.error().message.c_str());
    QCOMPARE(applied->state.bufferRoot(c), y);
    QCOMPARE(applied->state.offsetInRoot(c), core::Bytes(8 * 8 * 8 * 4));
    sameOutputsInEveryMode(original, *applied);
    if (QTest::currentTestFailed())
        return;

    // A dense block: every Concat a view of the block's output, `mid` 4 KiB into it (see denseBlock).
    const auto block = denseBlock(256);
    const auto family = core::applyStrategies(block, { "inplace" }, options);
    QVERIFY2(family, family ? "" : family.error().message.c_str());
    const auto mid = *block.graph->findTensor("mid.out");
    QCOMPARE(family->state.bufferRoot(mid), *block.graph->findTensor("block.out"));
    QCOMPARE(family->state.offsetInRoot(mid), core::Bytes(2 * 8 * 8 * 8 * 4));
    sameOutputsInEveryMode(block, *family);
}


#endif

#ifdef MEMPLAN_CUDA_EMULATION

// The emulation's own test: with cudaStreamWaitEvent ordering nothing, the swap copies race the
// compute stream, and the emulated run under this test's stream order returns wrong outputs or a
// fault. So the passing swap test above is evidence that the executor's event waits are needed and there.
void TestCuda::missingStreamWaitsCaught()
{
    const auto w = swappedSkip();
    const auto plan = planFor(w);
    QVERIFY(core::validatePlan(w.problem, plan).ok());
    const auto reference = gpu::runOnCuda(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, {});
    QVERIFY(reference);
    cudaemu::setIgnoreStreamWaits(true);
    const auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, {});
    const auto faults = cudaemu::violations();
    cudaemu::reset(); // the faults were expected
    const std::string mismatch = run ? core::compareOutputs(*w.graph, reference->outputs, run->outputs) : run.error().message;
    QVERIFY2(!run || !mismatch.empty(), "the emulation did not notice the missing waits");
    qInfo("without stream waits (%s): %s%s", cudaemu::orderName(cudaemu::order()), mismatch.c_str(),
        faults.empty() ? "" : (" [" + faults.front() + "]").c_str());
}

// Every CUDA and cuBLAS call of a run, made to fail one at a time: the run returns an error naming
// the failed call (never success, a crash or a hang), and everything it allocated or created is
// released (cleanup() counts). Each allocation mode, with swaps on the copy stream.
void TestCuda::everyCallChecked()
{
    const auto w = swappedSkip();
    const auto plan = planFor(w);
    QVERIFY(core::validatePlan(w.problem, plan).ok());
    for (auto mode : { gpu::CudaAllocation::Arena, gpu::CudaAllocation::PerTensor, gpu::CudaAllocation::Pool }) {
        cudaemu::reset();
        QVERIFY(gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, {}, mode));
        const long calls = cudaemu::calls();
        QVERIFY(calls > 50);
        for (long k = 1; k <= calls; ++k) {
            cudaemu::reset();
            cudaemu::failCall(k);
            const auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, {}, mode);
            const auto where = std::string(gpu::cudaAllocationName(mode)) + ", call " + std::to_string(k) + " of " + std::to_string(calls);
            QVERIFY2(!run, (where + ": the run succeeded").c_str());
            const auto& message = run.error().message;
            QVERIFY2(run.error().code == core::ErrorCode::CudaFailure || run.error().code == core::ErrorCode::NoGpu, (where + ": " + message).c_str());
            static const std::regex namesTheCall("\\b(cuda|cublas|kernels::)[A-Za-z0-9]+ failed: ");
            QVERIFY2(std::regex_search(message, namesTheCall), (where + ": " + message).c_str());
            const auto live = cudaemu::live();
            QVERIFY2(live.deviceBlocks == 0 && live.pinnedBlocks == 0 && live.streams == 0 && live.events == 0 && live.blasHandles == 0,
                (where + ": left resources behind after: " + message).c_str());
            const auto faults = cudaemu::violations();
            QVERIFY2(faults.empty(), (where + ": " + (faults.empty() ? std::string() : faults.front())).c_str());
        }
        qInfo("%s: each of %ld calls failed once, each reported", gpu::cudaAllocationName(mode).data(), calls);
    }
}

void TestCuda::noDevice()
{
    cudaemu::setDeviceCount(0);
    std::string why;
    QVERIFY(!gpu::cudaAvailable(&why));
    QCOMPARE(why, std::string("the CUDA driver sees no device (cudaErrorNoDevice)"));
    QCOMPARE(gpu::cudaDeviceDescription(), std::string());
    const auto w = skipWorkload();
    const auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, planFor(w), w.bufferTensor, {});
    QVERIFY(!run);
    QCOMPARE(run.error().code, core::ErrorCode::NoGpu);
    QCOMPARE(run.error().message, std::string("no CUDA device: the CUDA driver sees no device (cudaErrorNoDevice)"));
}

#endif

QTEST_GUILESS_MAIN(TestCuda)
#include "tst_cuda.moc"
