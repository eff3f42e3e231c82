// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The CPU executor's oneDNN kernels against its own: every configuration the own kernels run, oneDNN
// runs to within float rounding; the arena run stays bit-identical to the no-reuse run; oneDNN's
// scratchpad is the op's planned workspace (measured = predicted, no kernel scratch); the thread
// count is reported.
#include "cpukernels.h"
#include "exec/channelslast.h"
#include "exec/executor.h"
#include "exec/kernels.h"
#include "exec/onednn.h"
#include "exec/tolerance.h"
#include "exec/workspace.h"
#include "graphbuilder.h"
#include "planners/planner.h"
#include "planners/metrics.h"
#include "planners/validate.h"
#include "strategies/strategy.h"

#include <QTest>

#include <functional>

using core::TensorKind;

namespace {

// One op, its inputs graph inputs (random in a run), its output the graph output.
struct Case {
    const char* name;
    const char* type;
    std::vector<std::vector<std::int64_t>> in;
    std::vector<std::int64_t> out;
    std::function<void(core::Op&)> attrs;
};

core::Workload build(const Case& c, bool workspaces)
{
    GraphBuilder gb;
    std::vector<core::TensorIndex> in;
    for (std::size_t i = 0; i < c.in.size(); ++i)
        in.push_back(gb.tensor("in" + std::to_string(i), c.in[i], TensorKind::Input));
    const auto y = gb.tensor("y", c.out, TensorKind::Output);
    auto* op = gb.op(c.name, c.type, in, { y });
    if (c.attrs)
        c.attrs(*op);
    return gb.workload(c.name, 64, workspaces);
}

core::Plan planFor(const core::Workload& w)
{
    auto plan = core::runPlanner(*core::plannerByName("best-of-greedy"), w.problem);
    if (!plan)
        qFatal("%s", plan.error().message.c_str());
    const auto check = core::validatePlan(w.problem, *plan);
    if (!check.ok())
        qFatal("%s", check.message.c_str());
    return *plan;
}

void ints(core::Op& op, const char* name, std::vector<std::int64_t> v)
{
    op.attributes[name].ints = std::move(v);
}

const std::vector<Case>& cases()
{
    static const std::vector<Case> all {
        { "grouped dilated strided conv", "Conv", { { 2, 4, 9, 9 }, { 6, 2, 3, 3 }, { 6 } }, { 2, 6, 4, 4 },
            [](core::Op& op) {
                ints(op, "group", { 2 });
                ints(op, "strides", { 2, 2 });
                ints(op, "dilations", { 2, 2 });
                ints(op, "pads", { 1, 1, 1, 1 });
            } },
        { "strided 1x1 conv", "Conv", { { 1, 8, 8, 8 }, { 4, 8, 1, 1 } }, { 1, 4, 4, 4 }, [](core::Op& op) { ints(op, "strides", { 2, 2 }); } },
        { "1-D conv", "Conv", { { 1, 3, 10 }, { 5, 3, 3 }, { 5 } }, { 1, 5, 10 }, [](core::Op& op) { ints(op, "pads", { 1, 1 }); } },
        { "3-D conv", "Conv", { { 1, 2, 5, 5, 5 }, { 3, 2, 3, 3, 3 } }, { 1, 3, 3, 3, 3 }, {} },
        { "depthwise conv", "Conv", { { 1, 6, 7, 7 }, { 6, 1, 3, 3 } }, { 1, 6, 7, 7 },
            [](core::Op& op) {
                ints(op, "group", { 6 });
                ints(op, "pads", { 1, 1, 1, 1 });
            } },
        { "conv transpose", "ConvTranspose", { { 1, 4, 5, 5 }, { 4, 3, 3, 3 }, { 3 } }, { 1, 3, 10, 10 },
            [](core::Op& op) {
                ints(op, "strides", { 2, 2 });
                ints(op, "pads", { 1, 1, 1, 1 });
                ints(op, "output_padding", { 1, 1 });
            } },
        // output_padding beyond the end pad: a negative right pad in oneDNN's terms.
        { "conv transpose, output padding", "ConvTranspose", { { 1, 2, 4, 4 }, { 2, 3, 3, 3 } }, { 1, 3, 10, 10 },
            [](core::Op& op) {
                ints(op, "strides", { 2, 2 });
                ints(op, "output_padding", { 1, 1 });
            } },
        { "grouped conv transpose", "ConvTranspose", { { 1, 4, 5, 5 }, { 4, 2, 2, 2 } }, { 1, 4, 10, 10 },
            [](core::Op& op) {
                ints(op, "group", { 2 });
                ints(op, "strides", { 2, 2 });
            } },
        { "broadcast matmul", "MatMul", { { 2, 1, 5, 7 }, { 3, 7, 4 } }, { 2, 3, 5, 4 }, {} },
        { "vector matmul", "MatMul", { { 7 }, { 7, 4 } }, { 4 }, {} },
        { "transposed gemm", "Gemm", { { 7, 5 }, { 4, 7 }, { 1, 4 } }, { 5, 4 },
            [](core::Op& op) {
                ints(op, "transA", { 1 });
                ints(op, "transB", { 1 });
            } },
        { "relu", "Relu", { { 2, 3, 4, 5 } }, { 2, 3, 4, 5 }, {} },
        { "clip", "Clip", { { 2, 3, 4, 5 } }, { 2, 3, 4, 5 },
            [](core::Op& op) {
                op.attributes["min"].floats = { -0.25f };
                op.attributes["max"].floats = { 0.5f };
            } },
        { "broadcast add", "Add", { { 1, 6, 1, 1 }, { 2, 6, 4, 4 } }, { 2, 6, 4, 4 }, {} },
        { "broadcast sub", "Sub", { { 2, 6, 4, 4 }, { 6, 1, 1 } }, { 2, 6, 4, 4 }, {} },
        { "max pool", "MaxPool", { { 1, 3, 9, 9 } }, { 1, 3, 5, 5 },
            [](core::Op& op) {
                ints(op, "kernel_shape", { 3, 3 });
                ints(op, "strides", { 2, 2 });
                ints(op, "pads", { 1, 1, 1, 1 });
            } },
        { "average pool", "AveragePool", { { 1, 3, 8, 8 } }, { 1, 3, 4, 4 },
            [](core::Op& op) {
                ints(op, "kernel_shape", { 3, 3 });
                ints(op, "strides", { 2, 2 });
                ints(op, "pads", { 1, 1, 1, 1 });
            } },
        { "global average pool", "GlobalAveragePool", { { 2, 5, 6, 6 } }, { 2, 5, 1, 1 }, {} },
        { "softmax", "Softmax", { { 2, 5, 3 } }, { 2, 5, 3 }, [](core::Op& op) { ints(op, "axis", { 1 }); } },
        { "log softmax", "LogSoftmax", { { 4, 7 } }, { 4, 7 }, {} },
        { "layer norm", "LayerNormalization", { { 2, 3, 8 }, { 8 }, { 8 } }, { 2, 3, 8 }, {} },
        { "transpose", "Transpose", { { 2, 3, 4, 5 } }, { 2, 4, 5, 3 }, [](core::Op& op) { ints(op, "perm", { 0, 2, 3, 1 }); } },
        { "slice", "Slice", { { 4, 6, 8 } }, { 2, 6, 6 },
            [](core::Op& op) {
                ints(op, "starts", { 1, 2 });
                ints(op, "ends", { 3, 8 });
                ints(op, "axes", { 0, 2 });
            } },
    };
    return all;
}

} // namespace

class TestOnednn : public QObject {
    Q_OBJECT
private slots:
    void sameAsOwnKernels_data();
    void sameAsOwnKernels();
    void scratchpadIsTheWorkspace();
    void threadsReported();
    void channelsLastBetweenConvolutions();
    void channelsLastCallsOneDnnRefusesRunOnCopies();
    void fusedConvChainsArePostOps();
};

void TestOnednn::sameAsOwnKernels_data()
{
    QTest::addColumn<int>("index");
    for (std::size_t i = 0; i < cases().size(); ++i)
        QTest::newRow(cases()[i].name) << int(i);
}

void TestOnednn::sameAsOwnKernels()
{
    QFETCH(int, index);
    const CpuKernelsInScope restore(core::CpuKernels::OneDnn);
    const auto& c = cases()[std::size_t(index)];
    const auto w = build(c, false);
    const auto plan = planFor(w);
    core::RunOptions options;
    options.seed = 5;

    core::setCpuKernels(core::CpuKernels::Own);
    const auto own = core::runOnCpu(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, options);
    QVERIFY2(own, own ? "" : own.error().message.c_str());
    QCOMPARE(own->onednnCalls, 0);
    QCOMPARE(own->opsReal, 1);

    core::setCpuKernels(core::CpuKernels::OneDnn);
    const auto check = core::checkPlanByRunning(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, options);
    QVERIFY2(check, check ? "" : check.error().message.c_str());
    QVERIFY2(check->outputsMatch, check->mismatch.c_str());
    const auto& dnnl = check->planned;
    QCOMPARE(dnnl.onednnCalls, 1); // oneDNN took it
    QVERIFY2(dnnl.kernelNotes.empty(), dnnl.kernelNotes.empty() ? "" : dnnl.kernelNotes.front().c_str());
    QCOMPARE(dnnl.opsReal, 1);
    const auto off = core::compareWithin(*w.graph, own->outputs, dnnl.outputs, 1e-5);
    QVERIFY2(off.empty(), off.c_str());

    // With workspaces planned, whatever scratchpad the primitive wants is in the plan: no kernel
    // scratch, and the measured live peak is the planned one.
    const auto planned = build(c, true);
    const auto withWorkspaces = core::checkPlanByRunning(*planned.graph, planned.schedule, planned.problem, planFor(planned),
        planned.bufferTensor, options);
    QVERIFY2(withWorkspaces, withWorkspaces ? "" : withWorkspaces.error().message.c_str());
    QVERIFY2(withWorkspaces->outputsMatch, withWorkspaces->mismatch.c_str());
    QCOMPARE(withWorkspaces->planned.scratchBytes, core::Bytes(0));
    QCOMPARE(withWorkspaces->planned.stepPeakBytes, core::lowerBound(planned.problem));
    QCOMPARE(withWorkspaces->planned.outputs[0].data, dnnl.outputs[0].data);
}

void TestOnednn::scratchpadIsTheWorkspace()
{
    const CpuKernelsInScope restore(core::CpuKernels::OneDnn);
    // A 3x3 convolution oneDNN runs as im2col + GEMM: its scratchpad holds columns.
    const Case conv { "conv", "Conv", { { 1, 16, 20, 20 }, { 32, 16, 3, 3 } }, { 1, 32, 20, 20 },
        [](core::Op& op) { ints(op, "pads", { 1, 1, 1, 1 }); } };
    core::setCpuKernels(core::CpuKernels::OneDnn);
    const auto w = build(conv, true);
    const auto& op = w.graph->ops[0];
    const core::Bytes need = core::opWorkspaceBytes(*w.graph, op);
    QVERIFY(need > 0);
    core::setCpuKernels(core::CpuKernels::Own);
    QCOMPARE(core::opWorkspaceBytes(*w.graph, op), core::Bytes(16 * 9 * 400 * 4)); // the own kernel's columns
    core::setCpuKernels(core::CpuKernels::OneDnn);

    std::size_t workspaceBuffers = 0;
    for (const auto& b : w.problem.buffers)
        if (b.kind == TensorKind::Workspace) {
            ++workspaceBuffers;
            QVERIFY(b.size >= need);
        }
    QCOMPARE(workspaceBuffers, std::size_t(1));
    const auto plan = planFor(w);
    const auto check = core::checkPlanByRunning(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, {});
    QVERIFY2(check, check ? "" : check.error().message.c_str());
    QVERIFY2(check->outputsMatch, check->mismatch.c_str());
    QCOMPARE(check->planned.onednnCalls, 1);
    QCOMPARE(check->planned.scratchBytes, core::Bytes(0)); // the scratchpad was the planned workspace
    QCOMPARE(check->planned.stepPeakBytes, core::lowerBound(w.problem));

    // Planned without workspaces, the same scratchpad is kernel scratch outside the plan.
    const auto bare = build(conv, false);
    const auto bareRun = core::runOnCpu(*bare.graph, bare.schedule, bare.problem, planFor(bare), bare.bufferTensor, {});
    QVERIFY2(bareRun, bareRun ? "" : bareRun.error().message.c_str());
    QVERIFY(bareRun->scratchBytes >= need);
}

void TestOnednn::threadsReported()
{
    const CpuKernelsInScope restore(core::CpuKernels::OneDnn);
    const Case conv { "conv", "Conv", { { 1, 8, 16, 16 }, { 8, 8, 3, 3 } }, { 1, 8, 14, 14 }, {} };
    const auto w = build(conv, false);
    const auto plan = planFor(w);
    core::setCpuThreads(1);
    QCOMPARE(core::cpuThreads(), 1);
    const auto one = core::runOnCpu(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, {});
    QVERIFY2(one, one ? "" : one.error().message.c_str());
    QCOMPARE(one->threads, 1);
    core::setCpuThreads(2);
    const auto two = core::runOnCpu(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, {});
    QVERIFY2(two, two ? "" : two.error().message.c_str());
    QCOMPARE(two->threads, 2);
    const auto off = core::compareWithin(*w.graph, one->outputs, two->outputs, 1e-5);
    QVERIFY2(off.empty(), off.c_str());
    core::setCpuThreads(0);
    QVERIFY(core::cpuThreads() >= 1); // every core
}

namespace {

// x -> Conv 3x3 -> Relu (r) -> depthwise Conv -> Add(r) -> MaxPool -> Conv 1x1 -> Sigmoid -> Softmax
//   -> y, and GlobalAveragePool of the pooled tensor -> g: the layouts a CNN has.
struct CnnChain {
    core::Workload workload;
    core::TensorIndex x, c1, r, dw, sum, pooled, c3, s, y, g;
};

CnnChain cnnChain(bool workspaces)
{
    GraphBuilder b;
    CnnChain n;
    n.x = b.tensor("x", { 1, 8, 12, 12 }, TensorKind::Input);
    n.c1 = b.tensor("c1", { 1, 16, 12, 12 });
    n.r = b.tensor("r", { 1, 16, 12, 12 });
    n.dw = b.tensor("dw", { 1, 16, 12, 12 });
    n.sum = b.tensor("sum", { 1, 16, 12, 12 });
    n.pooled = b.tensor("pooled", { 1, 16, 6, 6 });
    n.c3 = b.tensor("c3", { 1, 24, 6, 6 });
    n.s = b.tensor("s", { 1, 24, 6, 6 });
    n.y = b.tensor("y", { 1, 24, 6, 6 }, TensorKind::Output);
    n.g = b.tensor("g", { 1, 16, 1, 1 }, TensorKind::Output);
    ints(*b.op("conv1", "Conv", { n.x, b.tensor("w1", { 16, 8, 3, 3 }, TensorKind::Weight), b.tensor("b1", { 16 }, TensorKind::Weight) },
             { n.c1 }),
        "pads", { 1, 1, 1, 1 });
    b.op("relu", "Relu", { n.c1 }, { n.r });
    auto* dw = b.op("depthwise", "Conv", { n.r, b.tensor("w2", { 16, 1, 3, 3 }, TensorKind::Weight) }, { n.dw });
    ints(*dw, "pads", { 1, 1, 1, 1 });
    ints(*dw, "group", { 16 });
    b.op("residual", "Add", { n.dw, n.r }, { n.sum });
    auto* pool = b.op("pool", "MaxPool", { n.sum }, { n.pooled });
    ints(*pool, "kernel_shape", { 2, 2 });
    ints(*pool, "strides", { 2, 2 });
    b.op("conv3", "Conv", { n.pooled, b.tensor("w3", { 24, 16, 1, 1 }, TensorKind::Weight) }, { n.c3 });
    b.op("gate", "Sigmoid", { n.c3 }, { n.s });
    ints(*b.op("softmax", "Softmax", { n.s }, { n.y }), "axis", { 1 });
    b.op("gap", "GlobalAveragePool", { n.pooled }, { n.g });
    n.workload = b.workload("cnn chain", 64, workspaces);
    return n;
}

} // namespace

void TestOnednn::channelsLastBetweenConvolutions()
{
    const CpuKernelsInScope restore(core::CpuKernels::OneDnn);
    const auto n = cnnChain(false);
    const auto& g = *n.workload.graph;
    // Between the convolutions N,H,W,C; the graph's input and outputs, and the Sigmoid's output that
    // Softmax (N,C,H,W only) reads, with the Sigmoid's input joined to it, stay N,C,H,W.
    const auto layout = core::exec::channelsLastTensors(g);
    for (auto t : { n.c1, n.r, n.dw, n.sum, n.pooled })
        QVERIFY2(layout[std::size_t(t)], g.tensors[std::size_t(t)].name.c_str());
    for (auto t : { n.x, n.c3, n.s, n.y, n.g })
        QVERIFY2(!layout[std::size_t(t)], g.tensors[std::size_t(t)].name.c_str());
    core::setCpuChannelsLast(false);
    const auto planar = core::exec::channelsLastTensors(g);
    QVERIFY(std::none_of(planar.begin(), planar.end(), [](bool b) { return b; }));

    core::RunOptions options;
    options.seed = 3;
    const auto plan = planFor(n.workload);
    const auto nchw = core::runOnCpu(g, n.workload.schedule, n.workload.problem, plan, n.workload.bufferTensor, options);
    QVERIFY2(nchw, nchw ? "" : nchw.error().message.c_str());
    QCOMPARE(nchw->channelsLastTensors, 0);
    core::setCpuKernels(core::CpuKernels::Own);
    const auto own = core::runOnCpu(g, n.workload.schedule, n.workload.problem, plan, n.workload.bufferTensor, options);
    QVERIFY2(own, own ? "" : own.error().message.c_str());
    core::setCpuKernels(core::CpuKernels::OneDnn);
    core::setCpuChannelsLast(true);

    // The arena run is bit for bit the no-reuse run, and both layouts compute the own kernels' outputs.
    const auto check = core::checkPlanByRunning(g, n.workload.schedule, n.workload.problem, plan, n.workload.bufferTensor, options);
    QVERIFY2(check, check ? "" : check.error().message.c_str());
    QVERIFY2(check->outputsMatch, check->mismatch.c_str());
    const auto& nhwc = check->planned;
    QCOMPARE(nhwc.channelsLastTensors, 5);
    QVERIFY(nhwc.packedWeightsBytes >= core::Bytes((16 * 8 * 9 + 16 * 9 + 24 * 16) * 4));
    QVERIFY2(nhwc.kernelNotes.empty(), nhwc.kernelNotes.empty() ? "" : nhwc.kernelNotes.front().c_str());
    QCOMPARE(nhwc.opsReal, 9);
    for (const auto* other : { &*nchw, &*own }) {
        const auto off = core::compareWithin(g, other->outputs, nhwc.outputs, 1e-5);
        QVERIFY2(off.empty(), off.c_str());
    }

    // Planned with workspaces, the staging of conv1's N,C,H,W input and of conv3's output is in
    // the plan: no kernel scratch, and the measured live peak is the planned one.
    const auto planned = cnnChain(true);
    const auto withWorkspaces = core::checkPlanByRunning(*planned.workload.graph, planned.workload.schedule, planned.workload.problem,
        planFor(planned.workload), planned.workload.bufferTensor, options);
    QVERIFY2(withWorkspaces, withWorkspaces ? "" : withWorkspaces.error().message.c_str());
    QVERIFY2(withWorkspaces->outputsMatch, withWorkspaces->mismatch.c_str());
    QCOMPARE(withWorkspaces->planned.scratchBytes, core::Bytes(0));
    QCOMPARE(withWorkspaces->planned.stepPeakBytes, core::lowerBound(planned.workload.problem));
    const auto same = core::compareWithin(g, withWorkspaces->planned.outputs, nhwc.outputs, 0);
    QVERIFY2(same.empty(), same.c_str());
}

void TestOnednn::channelsLastCallsOneDnnRefusesRunOnCopies()
{
    const CpuKernelsInScope restore(core::CpuKernels::OneDnn);
    // A max pooling reading N,H,W,C and writing N,C,H,W: oneDNN has only its reference implementation
    // for that mix, so the call runs the own kernel on N,C,H,W copies and leaves a note naming the op.
    core::Op op;
    op.name = "mixed pool";
    op.type = "MaxPool";
    ints(op, "kernel_shape", { 3, 3 });
    ints(op, "pads", { 1, 1, 1, 1 });
    const std::vector<std::int64_t> shape { 1, 5, 7, 6 };
    const std::int64_t count = 5 * 7 * 6;
    const auto size = std::size_t(count);
    std::vector<float> planar(size), last(size), expected(size), got(size);
    for (std::int64_t i = 0; i < count; ++i)
        planar[std::size_t(i)] = float((i * 37) % 101) / 17.0f - 3.0f;
    for (std::int64_t c = 0; c < 5; ++c)
        for (std::int64_t p = 0; p < 42; ++p)
            last[std::size_t(p * 5 + c)] = planar[std::size_t(c * 42 + p)];
    const auto view = [&](std::vector<float>& v, bool channelsLast) {
        core::exec::TensorView t;
        t.dtype = core::DType::Float32;
        t.shape = shape;
        t.count = count;
        t.data = reinterpret_cast<std::byte*>(v.data());
        t.channelsLast = channelsLast;
        return t;
    };
    const auto kernel = core::exec::findKernel("MaxPool");
    QVERIFY(kernel);
    core::exec::KernelCall plain;
    plain.op = &op;
    plain.in = { view(planar, false) };
    plain.out = { view(expected, false) };
    QVERIFY(core::exec::runKernel(kernel, plain));
    core::exec::takeOnednnNotes();

    core::exec::KernelCall mixed = plain;
    mixed.in = { view(last, true) };
    mixed.out = { view(got, false) };
    QVERIFY(core::exec::runKernel(kernel, mixed));
    QCOMPARE(got, expected);
    const auto notes = core::exec::takeOnednnNotes();
    QCOMPARE(int(notes.size()), 1);
    QVERIFY2(notes[0].find("'mixed pool' (MaxPool)") != std::string::npos && notes[0].find("N,H,W,C") != std::string::npos,
        notes[0].c_str());

    // And back: N,C,H,W in, N,H,W,C out, through the same copies.
    std::vector<float> lastOut(size);
    mixed.in = { view(planar, false) };
    mixed.out = { view(lastOut, true) };
    QVERIFY(core::exec::runKernel(kernel, mixed));
    for (std::int64_t c = 0; c < 5; ++c)
        for (std::int64_t p = 0; p < 42; ++p)
            QCOMPARE(lastOut[std::size_t(p * 5 + c)], expected[std::size_t(c * 42 + p)]);
}

void TestOnednn::fusedConvChainsArePostOps()
{
    const CpuKernelsInScope restore(core::CpuKernels::OneDnn);
    // fuse makes conv1+relu, depthwise+residual and conv3+gate groups: conv1+relu runs as one
    // convolution with a Relu post-op, computing the unfused ops' bits.
    const auto n = cnnChain(true);
    core::RunOptions options;
    options.seed = 7;
    const auto& w0 = n.workload;
    const auto unfused = core::checkPlanByRunning(*w0.graph, w0.schedule, w0.problem, planFor(w0), w0.bufferTensor, options);
    QVERIFY2(unfused, unfused ? "" : unfused.error().message.c_str());
    QCOMPARE(unfused->planned.onednnCalls, 9);

    core::StrategyOptions strategyOptions;
    strategyOptions.alignment = w0.problem.alignment;
    const auto fused = core::applyStrategies(w0, { "fuse" }, strategyOptions);
    QVERIFY2(fused, fused ? "" : fused.error().message.c_str());
    const auto& w = fused->workload;
    QVERIFY(std::count_if(w.graph->ops.begin(), w.graph->ops.end(), [](const core::Op& op) { return op.type == "Fused"; }) >= 2);
    const auto check = core::checkPlanByRunning(*w.graph, w.schedule, w.problem, planFor(w), w.bufferTensor, options);
    QVERIFY2(check, check ? "" : check.error().message.c_str());
    QVERIFY2(check->outputsMatch, check->mismatch.c_str());
    QCOMPARE(check->planned.onednnCalls, 8); // conv1+relu once; depthwise+residual (an Add) and conv3+gate (writes N,C,H,W) op by op
    QVERIFY2(check->planned.kernelNotes.empty(), check->planned.kernelNotes.empty() ? "" : check->planned.kernelNotes.front().c_str());
    QCOMPARE(check->planned.stepPeakBytes, core::lowerBound(w.problem));
    const auto same = core::compareWithin(*w0.graph, unfused->planned.outputs, check->planned.outputs, 0);
    QVERIFY2(same.empty(), same.c_str());

    // With every activation N,C,H,W (planned so: the workspaces depend on it) the groups run op by op,
    // and compute the same values to rounding.
    core::setCpuChannelsLast(false);
    const auto n2 = cnnChain(true);
    const auto fused2 = core::applyStrategies(n2.workload, { "fuse" }, strategyOptions);
    QVERIFY2(fused2, fused2 ? "" : fused2.error().message.c_str());
    const auto& w2 = fused2->workload;
    const auto planar = core::runOnCpu(*w2.graph, w2.schedule, w2.problem, planFor(w2), w2.bufferTensor, options);
    QVERIFY2(planar, planar ? "" : planar.error().message.c_str());
    QCOMPARE(planar->onednnCalls, 9);
    const auto close = core::compareWithin(*w0.graph, planar->outputs, check->planned.outputs, 1e-5);
    QVERIFY2(close.empty(), close.c_str());
}

QTEST_GUILESS_MAIN(TestOnednn)
#include "tst_onednn.moc"
