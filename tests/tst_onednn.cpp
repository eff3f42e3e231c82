// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The CPU executor's oneDNN kernels against its own: every configuration the own kernels run, oneDNN
// runs to within float rounding; the arena run stays bit-identical to the no-reuse run; oneDNN's
// scratchpad is the op's planned workspace (measured = predicted, no kernel scratch); the thread
// count is reported.
#include "cpukernels.h"
#include "exec/executor.h"
#include "exec/tolerance.h"
#include "exec/workspace.h"
#include "graphbuilder.h"
#include "planners/planner.h"
#include "planners/metrics.h"
#include "planners/validate.h"

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

QTEST_GUILESS_MAIN(TestOnednn)
#include "tst_onednn.moc"
