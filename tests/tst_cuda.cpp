// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The CUDA executor: the plan check on the GPU (arena run == no-reuse GPU run, bit for bit) for the
// built-in examples, every allocation mode, the GPU's outputs against the CPU executor's, a broken
// plan caught, the arena run's per-step bytes, swap transfers through pinned host memory, and fused
// ops on the host path with real kernels.
// Without the CUDA executor in the build, or without a device, every test skips with the reason.
#include "exec/executor.h"
#include "exec/workspace.h"
#include "io/workload.h"
#include "exec/tolerance.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "strategies/strategy.h"

#ifdef MEMPLAN_HAVE_CUDA
#include "cudaexecutor.h"
#endif

#include <QtTest>

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

} // namespace

class TestCuda : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
#ifdef MEMPLAN_HAVE_CUDA
    void planCheck_data();
    void planCheck();
    void allocationModes();
    void brokenPlanCaught();
    void swapThroughPinnedMemory();
    void fusedOpsOnTheHost();
    void workspaces();
    void cancelled();
#endif
};

void TestCuda::initTestCase()
{
#ifdef MEMPLAN_HAVE_CUDA
    std::string why;
    if (!gpu::cudaAvailable(&why))
        QSKIP(qPrintable(QStringLiteral("no CUDA device: %1").arg(QString::fromStdString(why))));
    qInfo("device: %s", gpu::cudaDeviceDescription().c_str());
#else
    QSKIP("no CUDA device: this build has no CUDA executor (no CUDA compiler found, or MEMPLAN_CUDA=OFF)");
#endif
}

#ifdef MEMPLAN_HAVE_CUDA

void TestCuda::planCheck_data()
{
    QTest::addColumn<QString>("model");
    for (const char* spec : { "example:cnn", "example:unet", "example:transformer" })
        QTest::newRow(spec) << QString::fromLatin1(spec);
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

// The swap strategy's SwapOut/SwapIn go through pinned host memory on the copy stream; the values
// come back intact (arena == no-reuse, and == the untransformed model within the CPU tolerance).
void TestCuda::swapThroughPinnedMemory()
{
    const auto original = load("example:transformer");
    core::StrategyOptions strategyOptions;
    strategyOptions.alignment = original.problem.alignment;
    const auto applied = core::applyStrategies(original, { "swap" }, strategyOptions);
    QVERIFY2(applied, applied ? "" : applied.error().message.c_str());
    const auto& w = applied->workload;
    const bool swapped = std::any_of(w.graph->ops.begin(), w.graph->ops.end(), [](const core::Op& op) { return op.type == "SwapOut"; });
    if (!swapped)
        QSKIP("the swap strategy found no gap to swap in example:transformer");
    const auto plan = planFor(w);
    QVERIFY(core::validatePlan(w.problem, plan).ok());
    const auto reference = gpu::runOnCuda(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, {});
    QVERIFY2(reference, reference ? "" : reference.error().message.c_str());
    for (auto mode : { gpu::CudaAllocation::Arena, gpu::CudaAllocation::PerTensor, gpu::CudaAllocation::Pool }) {
        const auto run = gpu::runOnCuda(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, {}, mode);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        const auto mismatch = core::compareOutputs(*w.graph, reference->outputs, run->outputs);
        QVERIFY2(mismatch.empty(), mismatch.c_str());
        for (const auto& op : run->ops)
            if (op.type == "SwapOut" || op.type == "SwapIn")
                QVERIFY2(!op.host, op.name.c_str());
    }
    const auto untransformed = gpu::runOnCuda(*original.graph, original.schedule, original.problem, core::noReusePlan(original.problem),
        original.bufferTensor, {});
    QVERIFY(untransformed);
    const auto off = core::compareWithin(*w.graph, untransformed->outputs, reference->outputs, 1e-3);
    QVERIFY2(off.empty(), off.c_str());
}

// Fused ops have no device kernel: they run on the host, their bodies on the CPU executor's real
// kernels, so the fused model on the GPU computes what the unfused model computes on the CPU.
void TestCuda::fusedOpsOnTheHost()
{
    const auto w = load("example:cnn");
    const auto applied = core::applyStrategies(w, { "fuse" }, core::StrategyOptions {});
    QVERIFY2(applied, applied ? "" : applied.error().message.c_str());
    const auto& fw = applied->workload;
    const auto plan = planFor(fw);
    QVERIFY(core::validatePlan(fw.problem, plan).ok());
    const auto run = gpu::runOnCuda(*fw.graph, fw.schedule, fw.problem, plan, fw.bufferTensor, {});
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    const auto cpu = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, {});
    QVERIFY(cpu);
    int fused = 0;
    for (const auto& op : run->ops)
        if (op.type == "Fused") {
            ++fused;
            QVERIFY(op.host);
            if (cpu->opsSynthetic == 0)
                QVERIFY2(op.real, op.name.c_str());
        }
    QVERIFY(fused > 0);
    if (cpu->opsSynthetic == 0) {
        QCOMPARE(run->opsSynthetic, 0);
        const auto off = core::compareWithin(*w.graph, cpu->outputs, run->outputs, 1e-3);
        QVERIFY2(off.empty(), off.c_str());
    }
    qInfo("example:cnn fused: %d fused ops on the host, %d synthetic ops", fused, run->opsSynthetic);
}

// Planned workspaces on the GPU: the Conv's columns in the arena at the workspace's offset, or in
// their own cudaMalloc/cudaMallocAsync at its step; the same bits as the scratch run, no device
// scratch left, the workspace counted at its step; a workspace over its Conv's input is caught.
void TestCuda::workspaces()
{
    const auto plain = load("example:cnn");
    const auto w = load("example:cnn", true);
    const auto plan = planFor(w);
    QVERIFY(core::validatePlan(w.problem, plan).ok());
    const auto scratchRun = gpu::runOnCuda(*plain.graph, plain.schedule, plain.problem, planFor(plain), plain.bufferTensor, {});
    QVERIFY2(scratchRun, scratchRun ? "" : scratchRun.error().message.c_str());
    core::Bytes largest = 0;
    for (const auto& op : w.graph->ops)
        largest = std::max(largest, core::convWorkspaceBytes(*w.graph, op));
    QCOMPARE(scratchRun->scratchBytes, largest); // the device scratch is sized by the same function
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
        break;
    }
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

#endif

QTEST_GUILESS_MAIN(TestCuda)
#include "tst_cuda.moc"
