// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The host-op path another executor (the CUDA one) takes for ops without a device kernel
// (core/exec/hostops.h): a fused op runs its body on the CPU executor's real kernels and gives the
// unfused ops' outputs bit for bit; a malformed fused op runs synthetic without crashing.
#include "graphbuilder.h"
#include "exec/executor.h"
#include "exec/hostops.h"
#include "exec/opcall.h"
#include "io/workload.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "strategies/strategy.h"

#include <QtTest>

namespace {

// x -> Conv(w, b) -> Relu -> Mul(scale) -> Sigmoid -> out: the fuse strategy makes one fused op of it.
core::Workload convChain()
{
    GraphBuilder gb;
    const auto x = gb.tensor("x", { 1, 3, 6, 6 }, core::TensorKind::Input);
    const auto w = gb.tensor("w", { 4, 3, 3, 3 }, core::TensorKind::Weight), b = gb.tensor("b", { 4 }, core::TensorKind::Weight);
    const auto scale = gb.tensor("scale", { 1, 4, 1, 1 }, core::TensorKind::Weight);
    const auto c = gb.tensor("c", { 1, 4, 6, 6 }, core::TensorKind::Activation), r = gb.tensor("r", { 1, 4, 6, 6 }, core::TensorKind::Activation);
    const auto m = gb.tensor("m", { 1, 4, 6, 6 }, core::TensorKind::Activation);
    const auto out = gb.tensor("out", { 1, 4, 6, 6 }, core::TensorKind::Output);
    auto* conv = gb.op("conv", "Conv", { x, w, b }, { c });
    conv->attributes["kernel_shape"].ints = { 3, 3 };
    conv->attributes["pads"].ints = { 1, 1, 1, 1 };
    gb.op("relu", "Relu", { c }, { r });
    gb.op("scale", "Mul", { r, scale }, { m });
    gb.op("squash", "Sigmoid", { m }, { out });
    return gb.workload("conv-chain", 64);
}

// Host memory for op's inputs and outputs, filled as the CPU executor fills weights and graph inputs.
struct HostCall {
    std::vector<std::vector<float>> in, out; // float storage: aligned for the kernels
    core::exec::KernelCall call;
};

HostCall hostCall(const core::Graph& g, const core::Op& op, const core::RunOptions& options)
{
    HostCall h;
    h.call.op = &op;
    for (auto t : op.inputs) {
        const auto& tensor = g.tensors[std::size_t(t)];
        h.in.emplace_back(std::size_t(tensor.size) / sizeof(float));
        auto* p = reinterpret_cast<std::byte*>(h.in.back().data());
        if (tensor.kind == core::TensorKind::Weight)
            core::exec::weightContents(g, t, p, options);
        else
            core::exec::fillRandom(tensor, p, options.seed, false);
        h.call.in.push_back(core::exec::tensorView(g, t, p));
    }
    for (auto t : op.outputs) {
        h.out.emplace_back(std::size_t(g.tensors[std::size_t(t)].size) / sizeof(float), -7.0f);
        h.call.out.push_back(core::exec::tensorView(g, t, reinterpret_cast<std::byte*>(h.out.back().data())));
    }
    return h;
}

} // namespace

class TestHostOps : public QObject {
    Q_OBJECT
private slots:
    void fusedOpRunsItsBody();
    void malformedFusedOpIsSynthetic();
};

void TestHostOps::fusedOpRunsItsBody()
{
    const auto w = convChain();
    core::RunOptions options;
    options.seed = 7;
    const auto unfused = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, options);
    QVERIFY2(unfused, unfused ? "" : unfused.error().message.c_str());
    QCOMPARE(unfused->opsSynthetic, 0);
    QCOMPARE(unfused->outputs.size(), std::size_t(1));

    const auto applied = core::applyStrategies(w, { "fuse" }, core::StrategyOptions {});
    QVERIFY2(applied, applied ? "" : applied.error().message.c_str());
    const auto& g = *applied->workload.graph;
    QCOMPARE(g.ops.size(), std::size_t(1));
    const auto& fused = g.ops[0];
    QCOMPARE(fused.type, std::string("Fused"));
    QCOMPARE(fused.body.size(), std::size_t(4));
    QCOMPARE(core::fusedInternals(fused).size(), std::size_t(3));

    auto h = hostCall(g, fused, options);
    QVERIFY(core::exec::runHostOp(g, h.call, 0, core::exec::findKernel(fused.type), options));
    const auto& expected = unfused->outputs[0].data;
    QCOMPARE(std::size_t(expected.size()), h.out[0].size() * sizeof(float));
    QVERIFY2(std::memcmp(expected.data(), h.out[0].data(), expected.size()) == 0, "the fused op's host run differs from the unfused ops");

    // The CPU executor's run of the fused model agrees too (same body-running code).
    const auto plan = core::runPlanner(*core::plannerByName("greedy-by-size"), applied->workload.problem);
    QVERIFY(plan);
    QVERIFY(core::validatePlan(applied->workload.problem, *plan).ok());
    const auto run = core::runOnCpu(g, applied->workload.schedule, applied->workload.problem, *plan, applied->workload.bufferTensor, options);
    QVERIFY(run);
    QCOMPARE(run->opsReal, 1);
    QVERIFY(run->outputs[0].data == expected);

    // Unfused, op by op on the same path: the same bits again.
    const auto& ug = *w.graph;
    std::map<core::TensorIndex, std::vector<float>> values;
    for (const auto o : w.schedule.order) {
        const auto& op = ug.ops[std::size_t(o)];
        auto step = hostCall(ug, op, options);
        for (std::size_t k = 0; k < op.inputs.size(); ++k)
            if (const auto it = values.find(op.inputs[k]); it != values.end()) {
                step.in[k] = it->second;
                step.call.in[k].data = reinterpret_cast<std::byte*>(step.in[k].data());
            }
        QVERIFY(core::exec::runHostOp(ug, step.call, o, core::exec::findKernel(op.type), options));
        values[op.outputs[0]] = step.out[0];
    }
    const auto& last = values[ug.outputs[0]];
    QVERIFY(std::memcmp(last.data(), expected.data(), expected.size()) == 0);
}

void TestHostOps::malformedFusedOpIsSynthetic()
{
    const auto w = convChain();
    const auto applied = core::applyStrategies(w, { "fuse" }, core::StrategyOptions {});
    QVERIFY(applied);
    const auto& g = *applied->workload.graph;
    core::RunOptions options;
    // The body still reads the bias, but the call no longer holds it: synthetic, no crash.
    auto broken = g.ops[0];
    const auto bias = *g.findTensor("b");
    broken.inputs.erase(std::find(broken.inputs.begin(), broken.inputs.end(), bias));
    auto h = hostCall(g, broken, options);
    QVERIFY(!core::exec::runHostOp(g, h.call, 0, nullptr, options));
    // A body naming a tensor index out of range: synthetic, no crash.
    auto outOfRange = g.ops[0];
    outOfRange.body[1].inputs[0] = core::TensorIndex(g.tensors.size() + 3);
    auto h2 = hostCall(g, outOfRange, options);
    QVERIFY(!core::exec::runHostOp(g, h2.call, 0, nullptr, options));
}

QTEST_GUILESS_MAIN(TestHostOps)
#include "tst_hostops.moc"
