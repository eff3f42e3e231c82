// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The placement both executors share (core/exec/layout.h): buffer tensors at the plan's offsets,
// views sharing their input's buffer, side slots for everything else, excluded tensors nowhere,
// and a plan for another problem or outside the arena reported, not crashed on.
#include "graphbuilder.h"
#include "exec/layout.h"
#include "exec/executor.h"
#include "io/workload.h"
#include "planners/planner.h"
#include "planners/validate.h"

#include <QtTest>

namespace {

// x (input) -> Relu -> r -> Reshape(shape) -> v (a view of r) -> Mul(w) -> out.
core::Workload viewGraph()
{
    GraphBuilder gb;
    const auto x = gb.tensor("x", { 4, 8 }, core::TensorKind::Input);
    const auto r = gb.tensor("r", { 4, 8 }, core::TensorKind::Activation);
    const auto shape = gb.tensor("shape", { 1 }, core::TensorKind::Weight, core::DType::Int64);
    gb.g.tensors[shape].values = { 32 };
    const auto v = gb.tensor("v", { 32 }, core::TensorKind::Activation);
    const auto w = gb.tensor("w", { 32 }, core::TensorKind::Weight);
    const auto out = gb.tensor("out", { 32 }, core::TensorKind::Output);
    gb.op("relu", "Relu", { x }, { r });
    gb.op("flat", "Reshape", { r, shape }, { v });
    gb.op("scale", "Mul", { v, w }, { out });
    return gb.workload("view-graph", 64);
}

} // namespace

class TestLayout : public QObject {
    Q_OBJECT
private slots:
    void buffersAliasesAndSide();
    void perTensorAndExcluded();
    void badPlansReported();
};

void TestLayout::buffersAliasesAndSide()
{
    const auto w = viewGraph();
    const auto& g = *w.graph;
    const auto plan = core::runPlanner(*core::plannerByName("greedy-by-size"), w.problem);
    QVERIFY(plan);
    QVERIFY(core::validatePlan(w.problem, *plan).ok());
    const auto placement = core::exec::placeTensors(g, w.problem, *plan, w.bufferTensor, { true, 64, nullptr });
    QVERIFY2(placement, placement ? "" : placement.error().message.c_str());
    QCOMPARE(placement->arenaBytes, plan->arenaSize);
    for (std::size_t b = 0; b < w.problem.buffers.size(); ++b) {
        const auto& own = placement->tensors[std::size_t(w.bufferTensor[b])];
        QCOMPARE(own.kind, core::exec::PlaceKind::Buffer);
        QCOMPARE(own.buffer, int(b));
        QCOMPARE(own.offset, plan->offsets[b]);
        QCOMPARE(own.aliasOf, core::TensorIndex(-1));
    }
    // The view shares its input's buffer (when the workload made it an alias) and names it.
    const auto r = *g.findTensor("r"), v = *g.findTensor("v");
    const auto& pr = placement->tensors[std::size_t(r)];
    const auto& pv = placement->tensors[std::size_t(v)];
    QCOMPARE(pv.kind, core::exec::PlaceKind::Buffer);
    if (pv.buffer == pr.buffer) {
        QCOMPARE(pv.offset, pr.offset);
        QCOMPARE(pv.aliasOf, r);
    } else {
        QCOMPARE(pv.aliasOf, core::TensorIndex(-1));
    }
    // Weights: side slots in tensor order, each 64-byte aligned, the total their aligned sum.
    const auto shape = *g.findTensor("shape"), wt = *g.findTensor("w");
    const auto& ps = placement->tensors[std::size_t(shape)];
    const auto& pw = placement->tensors[std::size_t(wt)];
    QCOMPARE(ps.kind, core::exec::PlaceKind::Side);
    QCOMPARE(pw.kind, core::exec::PlaceKind::Side);
    QCOMPARE(ps.offset, core::Bytes(0));
    QCOMPARE(pw.offset, core::Bytes(64));
    QCOMPARE(placement->sideBytes, core::Bytes(64 + 128));
    QVERIFY(ps.stored && pw.stored);
    // Stored tensors per buffer: every buffer-placed tensor once, in its buffer's list.
    const auto byBuffer = core::exec::storedTensorsByBuffer(*placement, w.problem.buffers.size());
    std::size_t listed = 0;
    for (std::size_t b = 0; b < byBuffer.size(); ++b)
        for (auto t : byBuffer[b]) {
            QCOMPARE(placement->tensors[std::size_t(t)].buffer, int(b));
            ++listed;
        }
    std::size_t inBuffers = 0;
    for (const auto& p : placement->tensors)
        inBuffers += p.kind == core::exec::PlaceKind::Buffer && p.stored ? 1 : 0;
    QCOMPARE(listed, inBuffers);
    // Buffer use from the ops: the input's buffer from before step 0, the output's until the last step.
    const auto use = core::exec::bufferUse(g, w.schedule, *placement, w.problem.buffers.size());
    const auto x = *g.findTensor("x"), out = *g.findTensor("out");
    QCOMPARE(use.first[std::size_t(placement->tensors[std::size_t(x)].buffer)], core::Step(-1));
    QCOMPARE(use.last[std::size_t(placement->tensors[std::size_t(out)].buffer)], w.schedule.steps() - 1);
}

void TestLayout::perTensorAndExcluded()
{
    const auto w = viewGraph();
    const auto& g = *w.graph;
    core::Plan noOffsets; // per-tensor allocation ignores the plan's offsets entirely
    std::vector<bool> excluded(g.tensors.size(), false);
    const auto wt = *g.findTensor("w");
    excluded[std::size_t(wt)] = true;
    const auto placement = core::exec::placeTensors(g, w.problem, noOffsets, w.bufferTensor, { false, 256, &excluded });
    QVERIFY2(placement, placement ? "" : placement.error().message.c_str());
    QCOMPARE(placement->arenaBytes, core::Bytes(0));
    for (std::size_t b = 0; b < w.problem.buffers.size(); ++b)
        QCOMPARE(placement->tensors[std::size_t(w.bufferTensor[b])].offset, core::Bytes(0));
    QCOMPARE(placement->tensors[std::size_t(wt)].kind, core::exec::PlaceKind::None);
    QVERIFY(!placement->tensors[std::size_t(wt)].stored);
    QCOMPARE(placement->sideBytes, core::Bytes(256)); // only the shape constant, in a 256-byte slot
}

void TestLayout::badPlansReported()
{
    const auto w = viewGraph();
    const auto& g = *w.graph;
    auto plan = core::runPlanner(*core::plannerByName("greedy-by-size"), w.problem);
    QVERIFY(plan);
    QVERIFY(core::validatePlan(w.problem, *plan).ok());
    auto shortPlan = *plan;
    shortPlan.offsets.pop_back();
    const auto mismatch = core::exec::placeTensors(g, w.problem, shortPlan, w.bufferTensor, {});
    QVERIFY(!mismatch);
    QVERIFY(mismatch.error().message.find("does not match the problem") != std::string::npos);

    auto outside = *plan;
    outside.offsets[0] = outside.arenaSize; // the first buffer starts where the arena ends
    QVERIFY(!core::validatePlan(w.problem, outside).ok());
    const auto beyond = core::exec::placeTensors(g, w.problem, outside, w.bufferTensor, {});
    QVERIFY(!beyond);
    QVERIFY(beyond.error().message.find("'" + w.problem.buffers[0].name + "' lies outside the arena") != std::string::npos);

    std::vector<bool> wrongMask(g.tensors.size() + 1, false);
    QVERIFY(!core::exec::placeTensors(g, w.problem, *plan, w.bufferTensor, { true, 64, &wrongMask }));
}

QTEST_GUILESS_MAIN(TestLayout)
#include "tst_layout.moc"
