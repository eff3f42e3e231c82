// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Run-time shapes on the CPU executor: data-dependent ops (NonZero, NonMaxSuppression, Compress,
// Unique) and the ops computed from them run for real inside the room their upper bounds reserve;
// the shape rules against the ONNX definitions; a bound the data overruns falls back to the
// synthetic kernels without writing past the room; every plan agrees with the no-reuse run.
#include "boundedgraphs.h"
#include "exec/tensordata.h"
#include "io/workload.h"
#include "exec/branch.h"
#include "exec/executor.h"
#include "exec/runshape.h"
#include "kerneltest.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "strategies/strategy.h"

#include <QtTest>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>

using core::exec::Shape;
using boundedgraphs::aboveThreshold;
using boundedgraphs::checkEveryPlanner;
using boundedgraphs::fixture;
using boundedgraphs::floats;
using boundedgraphs::thresholdInputs;
using boundedgraphs::valuesOf;
using boundedgraphs::withModelData;
using kerneltest::ints;

namespace {

// A KernelCall over views with these shapes; integer inputs hold `values` (by slot).
struct Call {
    core::Op op;
    std::vector<std::vector<std::int64_t>> storage;
    core::exec::KernelCall call;

    Call(const std::string& type, std::vector<Shape> inputs, std::size_t outputs, std::map<std::size_t, Shape> values = {})
    {
        op.type = type;
        storage.resize(inputs.size());
        for (std::size_t k = 0; k < inputs.size(); ++k) {
            core::exec::TensorView v;
            v.shape = inputs[k];
            v.count = kerneltest::countOf(v.shape);
            const auto it = values.find(k);
            v.dtype = it != values.end() ? core::DType::Int64 : core::DType::Float32;
            storage[k] = it != values.end() ? it->second : std::vector<std::int64_t>(std::size_t(v.count));
            storage[k].push_back(0); // never empty: an empty input is still present
            v.data = reinterpret_cast<std::byte*>(storage[k].data());
            call.in.push_back(v);
        }
        call.out.resize(outputs);
        call.op = &op;
    }
    std::vector<Shape> shapes()
    {
        call.op = &op; // attributes may have been set after construction
        std::vector<Shape> s;
        if (!core::exec::runtimeShapes(call, s))
            return {};
        return s;
    }
};

} // namespace

class TestRunShapes : public QObject {
    Q_OBJECT
private slots:
    void dataDependentOpsRunForReal();
    void boundTooSmallRunsSynthetic();
    void concatOfBoundedTensorsStaysACopy();
    void ifRunsTheBranchItsConditionPicks();
    void roiPoolingOverKeptBoxes();
    void loopBuildsATensorRowByRow();
    void loopRunsItsBodyEachIteration();
    void loopBodyHoldsAnIf();
    void loopStopsWhenCancelled();
    void loopThatNeverEndsIsStopped();
    void scanRunsItsBodyPerSlice();
    void shapeRules();
    void sizingKernels();
    void nmsMatchesTheDefinition();
};

// The NonZero chain runs on real kernels with run-time shapes, in every planner's arena.
void TestRunShapes::dataDependentOpsRunForReal()
{
    const auto w = aboveThreshold(8);
    const auto options = thresholdInputs(0.2f);
    const auto reference = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, options);
    QVERIFY2(reference, reference ? "" : reference.error().message.c_str());
    QCOMPARE(reference->opsSynthetic, 0);
    QCOMPARE(reference->opsReal, 7);
    // 0.5, 2, 3 and 0.7 lie above 0.2: four of them, the best three in falling order.
    QCOMPARE(reference->outputs.size(), std::size_t(3));
    QCOMPARE(valuesOf<std::int64_t>(reference->outputs[0]), (std::vector<std::int64_t> { 4 }));
    QCOMPARE(reference->outputs[1].shape, (Shape { 3 }));
    QCOMPARE(valuesOf<float>(reference->outputs[1]), (std::vector<float> { 3.0f, 2.0f, 0.7f }));
    QCOMPARE(reference->outputs[2].shape, (Shape { 3 }));
    QCOMPARE(valuesOf<std::int64_t>(reference->outputs[2]), (std::vector<std::int64_t> { 2, 1, 3 }));
    // The bounds reserve nz [2,8] + idx [8,2] (int64), picked and top [8] (float), where [8] (int64);
    // the data filled [2,4], [4,2], [4], [3] and [3] of them. NonZero, Transpose, GatherND and TopK
    // sized their outputs.
    QCOMPARE(reference->boundedTensors, 5);
    QCOMPARE(reference->boundedBytes, core::Bytes(128 + 128 + 32 + 32 + 64));
    QCOMPARE(reference->boundedUsedBytes, core::Bytes(64 + 64 + 16 + 12 + 24));
    QCOMPARE(reference->opsRuntimeShaped, 4);
    checkEveryPlanner(w, options, reference->outputs);

    // Nothing above the threshold: every run-time shape is empty, and still nothing is synthetic.
    const auto none = thresholdInputs(10.0f);
    const auto empty = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, none);
    QVERIFY2(empty, empty ? "" : empty.error().message.c_str());
    QCOMPARE(empty->opsSynthetic, 0);
    QCOMPARE(valuesOf<std::int64_t>(empty->outputs[0]), (std::vector<std::int64_t> { 0 }));
    QCOMPARE(empty->outputs[1].shape, (Shape { 0 }));
    QVERIFY(empty->outputs[1].data.empty());
    checkEveryPlanner(w, none, empty->outputs);
}

// Four elements above the threshold but room for three: NonZero refuses rather than write past its
// room, it and everything computed from its output run synthetic over the planned bounds, and the
// arena still agrees with the no-reuse run.
void TestRunShapes::boundTooSmallRunsSynthetic()
{
    const auto w = aboveThreshold(3);
    const auto options = thresholdInputs(0.2f);
    const auto reference = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, options);
    QVERIFY2(reference, reference ? "" : reference.error().message.c_str());
    QCOMPARE(reference->opsReal, 2); // Greater, and Min on a Shape of fixed size
    QCOMPARE(reference->opsSynthetic, 5);
    QCOMPARE(reference->outputs[1].shape, (Shape { 3 })); // the bound, as without run-time shapes
    QCOMPARE(reference->outputs[1].data.size(), std::size_t(3 * sizeof(float)));
    QCOMPARE(reference->opsRuntimeShaped, 0);
    QCOMPARE(reference->boundedUsedBytes, reference->boundedBytes); // unknown shapes count whole
    checkEveryPlanner(w, options, reference->outputs);
    // With room enough the same data runs real: the fallback above is the bound's doing.
    const auto roomy = aboveThreshold(4);
    const auto fits = core::runOnCpu(*roomy.graph, roomy.schedule, roomy.problem, core::noReusePlan(roomy.problem), roomy.bufferTensor, options);
    QVERIFY(fits);
    QCOMPARE(fits->opsSynthetic, 0);
}

// Two NonZero results joined by a Concat: the inplace strategy must not write them into slices of
// the Concat's output placed by their bounds (the run packs their run-time shapes), so the
// transformed model still computes the original's outputs.
void TestRunShapes::concatOfBoundedTensorsStaysACopy()
{
    using core::DType;
    using core::TensorKind;
    GraphBuilder b;
    const auto x = b.tensor("x", { 6 }, TensorKind::Input);
    const auto lo = b.tensor("lo", { 1 }, TensorKind::Input), hi = b.tensor("hi", { 1 }, TensorKind::Input);
    const auto above = b.tensor("above", { 6 }, TensorKind::Activation, DType::Bool);
    const auto below = b.tensor("below", { 6 }, TensorKind::Activation, DType::Bool);
    const auto up = b.tensor("up", { 1, 6 }, TensorKind::Activation, DType::Int64);
    const auto down = b.tensor("down", { 1, 6 }, TensorKind::Activation, DType::Int64);
    const auto both = b.tensor("both", { 1, 12 }, TensorKind::Output, DType::Int64);
    for (auto t : { up, down, both })
        b.g.tensors[std::size_t(t)].estimated = true;
    b.op("above", "Greater", { x, lo }, { above });
    b.op("below", "Less", { x, hi }, { below });
    b.op("up", "NonZero", { above }, { up });
    b.op("down", "NonZero", { below }, { down });
    b.op("join", "Concat", { up, down }, { both })->attributes["axis"] = ints({ 1 });
    const auto original = b.workload("bounded-concat", 8);

    core::RunOptions options;
    options.inputs["x"] = floats({ 6 }, { 0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f });
    options.inputs["lo"] = floats({ 1 }, { 0.5f }); // 5 above
    options.inputs["hi"] = floats({ 1 }, { 3.5f }); // 4 below
    const auto expected = core::runOnCpu(*original.graph, original.schedule, original.problem, core::noReusePlan(original.problem),
        original.bufferTensor, options);
    QVERIFY(expected);
    QCOMPARE(expected->opsSynthetic, 0);
    QCOMPARE(expected->outputs[0].shape, (Shape { 1, 9 }));
    QCOMPARE(valuesOf<std::int64_t>(expected->outputs[0]), (std::vector<std::int64_t> { 1, 2, 3, 4, 5, 0, 1, 2, 3 }));

    core::StrategyOptions strategyOptions;
    strategyOptions.alignment = original.problem.alignment;
    const auto applied = core::applyStrategies(original, { "inplace" }, strategyOptions);
    QVERIFY2(applied, applied ? "" : applied.error().message.c_str());
    for (const auto& report : applied->reports)
        for (const auto& detail : report.details)
            QVERIFY2(detail.find("slices") == std::string::npos, detail.c_str());
    const auto& w = applied->workload;
    const auto transformed = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, options);
    QVERIFY(transformed);
    const auto mismatch = core::compareOutputs(*w.graph, expected->outputs, transformed->outputs);
    QVERIFY2(mismatch.empty(), mismatch.c_str());
    checkEveryPlanner(w, options, expected->outputs);
}

// tricky/if_nms.onnx (scripts/make_tricky_models.py): NonMaxSuppression inside an If's then-branch,
// a Gather after the If on the kept list's run-time length.
void TestRunShapes::ifRunsTheBranchItsConditionPicks()
{
    const auto file = fixture("if_nms");
    if (!std::filesystem::exists(file))
        QSKIP("tests/models/tricky/if_nms.onnx is missing: run scripts/make_models.sh to make the test models");
    const auto w = core::loadWorkload(file, {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    auto options = withModelData(file, *w->graph);
    QVERIFY(options.modelData);
    QCOMPARE(options.modelData->subgraphs.size(), std::size_t(1));
    boundedgraphs::ifNmsInputs(options, true);
    const auto run = core::runOnCpu(*w->graph, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    QCOMPARE(run->opsSynthetic, 0);
    QCOMPARE(valuesOf<std::int64_t>(run->outputs[0]), (std::vector<std::int64_t> { 5, 0, 2 }));
    QCOMPARE(valuesOf<float>(run->outputs[1]), (std::vector<float> { 0.95f, 0.9f, 0.7f }));
    QVERIFY(run->scratchBytes > 0); // the branch's values
    checkEveryPlanner(*w, options, run->outputs);

    // Every score under 0.5: the else-branch's empty list, and an empty Gather after it.
    boundedgraphs::ifNmsInputs(options, false);
    const auto none = core::runOnCpu(*w->graph, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
    QVERIFY(none);
    QCOMPARE(none->opsSynthetic, 0);
    QCOMPARE(none->outputs[0].shape, (Shape { 0 }));
    QCOMPARE(none->outputs[1].shape, (Shape { 0 }));
    checkEveryPlanner(*w, options, none->outputs);

    // A branch op without a kernel or shape rule: the If runs synthetic and the run says why.
    auto broken = *options.modelData;
    auto branches = std::make_shared<core::exec::Subgraphs>(*broken.subgraphs.begin()->second);
    auto nms = std::find_if(branches->then.ops.begin(), branches->then.ops.end(), [](const core::Op& op) { return op.type == "NonMaxSuppression"; });
    QVERIFY(nms != branches->then.ops.end());
    nms->type = "NoSuchOp";
    broken.subgraphs.begin()->second = branches;
    auto brokenOptions = options;
    brokenOptions.modelData = std::make_shared<const core::ModelData>(std::move(broken));
    boundedgraphs::ifNmsInputs(brokenOptions, true);
    const auto refused = core::runOnCpu(*w->graph, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, brokenOptions);
    QVERIFY(refused);
    QCOMPARE(refused->opsSynthetic, 2); // the If and the Gather on its unknown result
    const auto iff = std::find_if(refused->ops.begin(), refused->ops.end(), [](const core::OpMeasurement& op) { return op.type == "If"; });
    QVERIFY(iff != refused->ops.end() && !iff->real);
    QVERIFY2(iff->refusal.find("NoSuchOp") != std::string::npos && iff->refusal.find("no run-time shape rule") != std::string::npos,
        iff->refusal.c_str());

    // Without the model's data the branches are unknown: the If and the Gather after it run synthetic.
    options.modelData.reset();
    const auto blind = core::runOnCpu(*w->graph, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
    QVERIFY(blind);
    QCOMPARE(blind->opsSynthetic, 2);
}

// tricky/roi_pool_kept.onnx: a two-stage detector's RoI pooling over the boxes a threshold keeps.
// The batch indices come out of an If of unknown rank (a byte bound) and are cast to int64; RoiAlign,
// Gemm and ScatterElements then run on the kept count. Every op runs for real.
void TestRunShapes::roiPoolingOverKeptBoxes()
{
    const auto file = fixture("roi_pool_kept");
    if (!std::filesystem::exists(file))
        QSKIP("tests/models/tricky/roi_pool_kept.onnx is missing: run scripts/make_models.sh to make the test models");
    const auto w = core::loadWorkload(file, {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    // The cast batch indices are bounded by 5 int64s, not by the 5 floats (20 bytes) the If gives.
    const auto batch = std::find_if(w->graph->tensors.begin(), w->graph->tensors.end(), [](const core::Tensor& t) { return t.name == "batch"; });
    QVERIFY(batch != w->graph->tensors.end());
    QCOMPARE(batch->size, core::Bytes(5 * 8));
    auto options = withModelData(file, *w->graph);
    QVERIFY(options.modelData);
    // feats[0][c][y][x] = 100c + x + 10y: bilinear sampling of a linear map gives each bin's centre.
    std::vector<float> feats;
    for (int c = 0; c < 2; ++c)
        for (int y = 0; y < 8; ++y)
            for (int x = 0; x < 8; ++x)
                feats.push_back(float(100 * c + x + 10 * y));
    options.inputs["feats"] = floats({ 1, 2, 8, 8 }, feats);
    const std::vector<std::array<float, 4>> boxes { { 1, 1, 5, 3 }, { 0, 0, 2, 2 }, { 2, 4, 6, 6 }, { 0, 0, 7, 7 }, { 3, 0, 7, 4 } };
    std::vector<float> flatBoxes;
    for (const auto& b : boxes)
        flatBoxes.insert(flatBoxes.end(), b.begin(), b.end());
    options.inputs["boxes"] = floats({ 5, 4 }, flatBoxes);
    options.inputs["scores"] = floats({ 5 }, { 0.9f, 0.1f, 0.5f, 0.2f, 0.8f }); // keeps boxes 0, 2 and 4
    const auto run = core::runOnCpu(*w->graph, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    QCOMPARE(run->opsSynthetic, 0);
    QCOMPARE(run->outputs.size(), std::size_t(3));
    QCOMPARE(run->outputs[0].shape, (Shape { 3, 3 }));
    QCOMPARE(run->outputs[1].shape, (Shape { 3, 3 }));
    QCOMPARE(valuesOf<float>(run->outputs[1]), valuesOf<float>(run->outputs[0])); // each row scattered to its own index
    QCOMPARE(run->outputs[2].shape, (Shape { 3, 2, 2, 2 }));
    const auto pooled = valuesOf<float>(run->outputs[2]);
    std::size_t at = 0;
    for (const int kept : { 0, 2, 4 }) {
        const auto& b = boxes[std::size_t(kept)];
        for (int c = 0; c < 2; ++c)
            for (int i = 0; i < 2; ++i)
                for (int j = 0; j < 2; ++j, ++at) {
                    const float cx = b[0] + (float(j) + 0.5f) * (b[2] - b[0]) / 2, cy = b[1] + (float(i) + 0.5f) * (b[3] - b[1]) / 2;
                    QVERIFY2(std::abs(pooled[at] - (100.0f * float(c) + cx + 10 * cy)) < 1e-3f,
                        qPrintable(QStringLiteral("box %1 channel %2 bin %3,%4: %5").arg(kept).arg(c).arg(i).arg(j).arg(pooled[at])));
                }
    }
    checkEveryPlanner(*w, options, run->outputs);

    // Fusion leaves ops on tensors sized by a bound alone (a group runs on planned shapes): the
    // fused model still runs every op for real and computes the same outputs.
    core::StrategyOptions strategyOptions;
    strategyOptions.alignment = w->problem.alignment;
    const auto fused = core::applyStrategies(*w, { "fuse" }, strategyOptions);
    QVERIFY2(fused, fused ? "" : fused.error().message.c_str());
    const auto& f = fused->workload;
    for (const auto& op : f.graph->ops)
        if (op.type == "Fused")
            for (const auto* list : { &op.inputs, &op.outputs })
                for (const auto t : *list)
                    QVERIFY2(!f.graph->tensors[std::size_t(t)].estimated, op.name.c_str());
    auto fusedOptions = options;
    fusedOptions.modelData = std::make_shared<const core::ModelData>(core::remapModelData(*options.modelData, *w->graph, *f.graph));
    const auto fusedRun = core::runOnCpu(*f.graph, f.schedule, f.problem, core::noReusePlan(f.problem), f.bufferTensor, fusedOptions);
    QVERIFY2(fusedRun, fusedRun ? "" : fusedRun.error().message.c_str());
    QCOMPARE(fusedRun->opsSynthetic, 0);
    const auto mismatch = core::compareOutputs(*f.graph, run->outputs, fusedRun->outputs);
    QVERIFY2(mismatch.empty(), mismatch.c_str());
}

// tricky/loop_concat_rows.onnx: acc = Concat(acc, resized row) over 3 iterations from an empty
// [0, 8] initializer. Import sizes the result at 3 rows (the growth times the trip count); the
// body's ConstantOfShape fills int64 ones from its value attribute and Resize takes its sizes input.
void TestRunShapes::loopBuildsATensorRowByRow()
{
    const auto file = fixture("loop_concat_rows");
    if (!std::filesystem::exists(file))
        QSKIP("tests/models/tricky/loop_concat_rows.onnx is missing: run scripts/make_models.sh to make the test models");
    const auto w = core::loadWorkload(file, {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    const auto& rows = w->graph->tensors[std::size_t(w->graph->outputs.at(0))];
    QCOMPARE(rows.size, core::Bytes(3 * 8 * 4));
    auto options = withModelData(file, *w->graph);
    QVERIFY(options.modelData);
    const std::vector<float> x { 1, 2, 3, 4, -1, -2, -3, -4, 0.5f, 0.25f, 0.125f, 0 };
    options.inputs["X"] = floats({ 3, 4 }, x);
    const auto run = core::runOnCpu(*w->graph, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    QVERIFY2(run->opsSynthetic == 0, run->ops.front().refusal.c_str());
    QCOMPARE(run->outputs.at(0).shape, (Shape { 3, 8 }));
    std::vector<float> expected;
    for (const float v : x)
        expected.insert(expected.end(), { v, v }); // nearest resize 4 -> 8: each element twice
    QCOMPARE(valuesOf<float>(run->outputs[0]), expected);
    checkEveryPlanner(*w, options, run->outputs);
}

// tricky/loop_accumulate.onnx: five iterations adding the outer X to a carried accumulator, which
// is also the scan output.
void TestRunShapes::loopRunsItsBodyEachIteration()
{
    const auto file = fixture("loop_accumulate");
    if (!std::filesystem::exists(file))
        QSKIP("tests/models/tricky/loop_accumulate.onnx is missing: run scripts/make_models.sh to make the test models");
    const auto w = core::loadWorkload(file, {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    auto options = withModelData(file, *w->graph);
    QVERIFY(options.modelData);
    std::vector<float> x { 1, 2, 3, 4, 5, 6, 7, 8 };
    options.inputs["X"] = floats({ 1, 8 }, x);
    const auto run = core::runOnCpu(*w->graph, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    QCOMPARE(run->opsSynthetic, 0);
    std::vector<float> acc, trace;
    for (float v : x)
        acc.push_back(5 * v);
    for (int i = 1; i <= 5; ++i)
        for (float v : x)
            trace.push_back(float(i) * v);
    QCOMPARE(run->outputs[0].shape, (Shape { 1, 8 }));
    QCOMPARE(valuesOf<float>(run->outputs[0]), acc);
    QCOMPARE(run->outputs[1].shape, (Shape { 5, 1, 8 }));
    QCOMPARE(valuesOf<float>(run->outputs[1]), trace);
    checkEveryPlanner(*w, options, run->outputs);
}

// tricky/loop_nested_if.onnx: four iterations of a body whose If adds the outer X (two graphs up)
// to the carried accumulator on even iterations and doubles it on odd ones.
void TestRunShapes::loopBodyHoldsAnIf()
{
    const auto file = fixture("loop_nested_if");
    if (!std::filesystem::exists(file))
        QSKIP("tests/models/tricky/loop_nested_if.onnx is missing: run scripts/make_models.sh to make the test models");
    const auto w = core::loadWorkload(file, {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    auto options = withModelData(file, *w->graph);
    QVERIFY(options.modelData);
    const std::vector<float> x { 1, -2, 0.5f, 3 };
    options.inputs["X"] = floats({ 1, 4 }, x);
    const auto run = core::runOnCpu(*w->graph, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    const auto loop = std::find_if(run->ops.begin(), run->ops.end(), [](const core::OpMeasurement& op) { return op.type == "Loop"; });
    QVERIFY(loop != run->ops.end());
    QVERIFY2(loop->real, loop->refusal.c_str());
    QCOMPARE(run->opsSynthetic, 0);
    std::vector<float> acc, trace;
    for (float times : { 1, 2, 3, 6 })
        for (float v : x)
            trace.push_back(times * v);
    acc.assign(trace.end() - 4, trace.end());
    QCOMPARE(run->outputs[0].shape, (Shape { 1, 4 }));
    QCOMPARE(valuesOf<float>(run->outputs[0]), acc);
    QCOMPARE(run->outputs[1].shape, (Shape { 4, 1, 4 }));
    QCOMPARE(valuesOf<float>(run->outputs[1]), trace);
    checkEveryPlanner(*w, options, run->outputs);
}

// tricky/loop_accumulate.onnx's Loop run directly: a cancelled token stops it before its first
// body op, writing nothing; an untouched one runs its five iterations.
void TestRunShapes::loopStopsWhenCancelled()
{
    const auto file = fixture("loop_accumulate");
    if (!std::filesystem::exists(file))
        QSKIP("tests/models/tricky/loop_accumulate.onnx is missing: run scripts/make_models.sh to make the test models");
    const auto w = core::loadWorkload(file, {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    const auto options = withModelData(file, *w->graph);
    QVERIFY(options.modelData && options.modelData->subgraphs.size() == 1);
    const auto& [loopIndex, graphs] = *options.modelData->subgraphs.begin();
    const auto& g = *w->graph;
    const auto& loop = g.ops[std::size_t(loopIndex)];
    QCOMPARE(loop.type, std::string("Loop"));
    auto x = floats({ 1, 8 }, { 1, 2, 3, 4, 5, 6, 7, 8 });
    const auto view = [](const core::HostTensor& h) {
        core::exec::TensorView v;
        v.dtype = h.dtype;
        v.shape = h.shape;
        v.count = kerneltest::countOf(h.shape);
        v.data = const_cast<std::byte*>(h.data.data());
        return v;
    };
    core::exec::KernelCall call;
    call.op = &loop;
    for (auto t : loop.inputs)
        call.in.push_back(view(options.modelData->weights.at(t)));
    std::vector<float> acc(8, -1.0f), trace(40, -1.0f);
    for (auto* room : { &acc, &trace }) {
        core::exec::TensorView v;
        v.dtype = core::DType::Float32;
        v.shape = { std::int64_t(room->size()) };
        v.count = std::int64_t(room->size());
        v.data = reinterpret_cast<std::byte*>(room->data());
        call.out.push_back(v);
    }
    const core::exec::OuterLookup outer = [&](const std::string& name, core::exec::TensorView& v) {
        if (name != "X")
            return false;
        v = view(x);
        v.shape = { 1, 8 };
        return true;
    };
    auto flag = std::make_shared<std::atomic<bool>>(true);
    std::vector<Shape> shapes;
    std::vector<std::vector<Shape>> items;
    std::vector<bool> none;
    core::Bytes held = 0;
    std::string why;
    QVERIFY(!core::exec::runControlFlow(*graphs, call, { false, false }, outer, shapes, items, none, held, why, core::CancelToken(flag)));
    QCOMPARE(why, std::string("the run was cancelled"));
    QCOMPARE(acc, std::vector<float>(8, -1.0f));
    flag->store(false);
    QVERIFY2(core::exec::runControlFlow(*graphs, call, { false, false }, outer, shapes, items, none, held, why, core::CancelToken(flag)), why.c_str());
    QCOMPARE(acc[7], 40.0f);
    QCOMPARE(shapes, (std::vector<Shape> { { 1, 8 }, { 5, 1, 8 } }));
}

// tricky/loop_without_end.onnx: a Loop whose condition stays true grows its carried tensor by
// 16 KiB per iteration inside a Loop that runs once. The inner result has no planned room, so the
// bound on what a Loop's iterations write (kMostLoopBytes) stops it: both Loops refused, the outer
// synthetic, naming the inner one and the iteration it stopped at.
void TestRunShapes::loopThatNeverEndsIsStopped()
{
    const auto file = fixture("loop_without_end");
    if (!std::filesystem::exists(file))
        QSKIP("tests/models/tricky/loop_without_end.onnx is missing: run scripts/make_models.sh to make the test models");
    const auto w = core::loadWorkload(file, {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    auto options = withModelData(file, *w->graph);
    QVERIFY(options.modelData);
    options.inputs["X"] = floats({ 1, 4096 }, std::vector<float>(4096, 1.0f));
    const auto plan = core::noReusePlan(w->problem);
    QVERIFY(core::validatePlan(w->problem, plan).ok());
    const auto run = core::runOnCpu(*w->graph, w->schedule, w->problem, plan, w->bufferTensor, options);
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    QCOMPARE(run->ops.size(), std::size_t(1));
    const auto& loop = run->ops.front();
    QVERIFY(!loop.real);
    // Each iteration writes the whole carried tensor again: 16 KiB x n(n+1)/2 passes 4 GiB at n = 724.
    QVERIFY2(loop.refusal.find("Loop 'Loop_1': its body wrote more than 4 GiB in all by iteration 724") != std::string::npos,
        loop.refusal.c_str());
}

// tricky/scan_axes.onnx: a state and two scan inputs, one scanned along axis 1 from the end; one
// scan output stacked along axis 1, the other along axis 0 from the end.
void TestRunShapes::scanRunsItsBodyPerSlice()
{
    const auto file = fixture("scan_axes");
    if (!std::filesystem::exists(file))
        QSKIP("tests/models/tricky/scan_axes.onnx is missing: run scripts/make_models.sh to make the test models");
    const auto w = core::loadWorkload(file, {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    auto options = withModelData(file, *w->graph);
    QVERIFY(options.modelData);
    options.inputs["A"] = floats({ 2, 3 }, { 1, 2, 3, 4, 5, 6 });
    options.inputs["B"] = floats({ 3, 2 }, { 10, 20, 30, 40, 50, 60 });
    const auto run = core::runOnCpu(*w->graph, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    QCOMPARE(run->opsSynthetic, 0);
    // Iteration t reads A's column 2 - t and B's row t: a = (3, 6), (2, 5), (1, 4); b = (10, 20), (30, 40), (50, 60).
    QCOMPARE(run->outputs[0].shape, (Shape { 2 }));
    QCOMPARE(valuesOf<float>(run->outputs[0]), (std::vector<float> { 96, 135 }));
    QCOMPARE(run->outputs[1].shape, (Shape { 2, 3 })); // a * b per iteration, as columns
    QCOMPARE(valuesOf<float>(run->outputs[1]), (std::vector<float> { 30, 60, 50, 120, 200, 240 }));
    QCOMPARE(run->outputs[2].shape, (Shape { 3, 2 })); // the states, last iteration first
    QCOMPARE(valuesOf<float>(run->outputs[2]), (std::vector<float> { 96, 135, 45, 71, 13, 26 }));
    checkEveryPlanner(*w, options, run->outputs);
}

// Output shapes as the ONNX operator definitions give them.
void TestRunShapes::shapeRules()
{
    {
        // Conv: [N, M, ...] from the weights [M, C/group, kH, kW]; pads 1, stride 2, dilation 2 on 14:
        // (14 + 2 - 5) / 2 + 1 = 6. SAME_UPPER: ceil(14 / 2) = 7. A mask head's count of RoIs is N.
        Call c("Conv", { { 37, 8, 14, 14 }, { 16, 8, 3, 3 } }, 1);
        c.op.attributes["strides"] = ints({ 2, 2 });
        c.op.attributes["dilations"] = ints({ 2, 2 });
        c.op.attributes["pads"] = ints({ 1, 1, 1, 1 });
        QCOMPARE(c.shapes(), (std::vector<Shape> { { 37, 16, 6, 6 } }));
        c.op.attributes.erase("pads");
        c.op.attributes.erase("dilations");
        c.op.attributes["auto_pad"].text = "SAME_UPPER";
        QCOMPARE(c.shapes(), (std::vector<Shape> { { 37, 16, 7, 7 } }));
        Call rankless("Conv", { { 37, 8, 14, 14 }, { 16, 8 } }, 1);
        QVERIFY(rankless.shapes().empty());
        // ConvTranspose: M = w[1] × group; 2 × (14 - 1) + 1 + 2 - 0 = 29 with output_padding 1.
        Call t("ConvTranspose", { { 5, 4, 14, 14 }, { 4, 3, 2, 2 } }, 1);
        t.op.attributes["strides"] = ints({ 2, 2 });
        t.op.attributes["group"] = ints({ 2 });
        t.op.attributes["output_padding"] = ints({ 1, 1 });
        QCOMPARE(t.shapes(), (std::vector<Shape> { { 5, 6, 29, 29 } }));
        t.op.attributes["output_shape"] = ints({ 30, 28 });
        QCOMPARE(t.shapes(), (std::vector<Shape> { { 5, 6, 30, 28 } }));
        // MaxPool 3x3 stride 2 on 8: floor(5 / 2) + 1 = 3, ceil_mode 4; its indices the same shape.
        Call pool("MaxPool", { { 2, 3, 8, 8 } }, 2);
        pool.op.attributes["kernel_shape"] = ints({ 3, 3 });
        pool.op.attributes["strides"] = ints({ 2, 2 });
        QCOMPARE(pool.shapes(), (std::vector<Shape> { { 2, 3, 3, 3 }, { 2, 3, 3, 3 } }));
        pool.op.attributes["ceil_mode"] = ints({ 1 });
        QCOMPARE(pool.shapes(), (std::vector<Shape> { { 2, 3, 4, 4 }, { 2, 3, 4, 4 } }));
        Call global("GlobalAveragePool", { { 7, 3, 5, 9 } }, 1);
        QCOMPARE(global.shapes(), (std::vector<Shape> { { 7, 3, 1, 1 } }));
    }
    {
        // Resize-11+: sizes (input 3) when given; else floor(length × scale) from input 2.
        Call sized("Resize", { { 1, 1, 28, 28 }, { 0 }, { 0 }, { 4 } }, 1, { { 3, { 1, 1, 320, 200 } } });
        QCOMPARE(sized.shapes(), (std::vector<Shape> { { 1, 1, 320, 200 } }));
        Call scaled("Resize", { { 2, 3, 5, 7 }, { 0 }, { 4 } }, 1);
        const float scales[] = { 1.0f, 1.0f, 2.5f, 0.5f };
        std::memcpy(scaled.storage[2].data(), scales, sizeof scales);
        QCOMPARE(scaled.shapes(), (std::vector<Shape> { { 2, 3, 12, 3 } }));
        Call upsample("Upsample", { { 1, 2, 3, 3 }, { 4 } }, 1);
        const float twice[] = { 1.0f, 1.0f, 2.0f, 2.0f };
        std::memcpy(upsample.storage[1].data(), twice, sizeof twice);
        QCOMPARE(upsample.shapes(), (std::vector<Shape> { { 1, 2, 6, 6 } }));
        Call crop("Resize", { { 1, 1, 28, 28 }, { 8 }, { 0 }, { 4 } }, 1, { { 3, { 1, 1, 14, 14 } } });
        crop.op.attributes["coordinate_transformation_mode"].text = "tf_crop_and_resize";
        QVERIFY(crop.shapes().empty()); // the region decides the length: not supported
    }
    {
        Call c("Reshape", { { 2, 3, 4 }, { 3 } }, 1, { { 1, { 0, -1, 2 } } });
        QCOMPARE(c.shapes(), (std::vector<Shape> { { 2, 6, 2 } }));
        Call bad("Reshape", { { 2, 3, 4 }, { 2 } }, 1, { { 1, { 5, -1 } } });
        QVERIFY(bad.shapes().empty()); // 24 elements do not split into rows of 5
    }
    {
        // Slice from the end backwards with step -2 over 7 elements: 6, 4, 2.
        Call c("Slice", { { 7, 3 }, { 1 }, { 1 }, { 1 }, { 1 } }, 1, { { 1, { -1 } }, { 2, { 0 } }, { 3, { 0 } }, { 4, { -2 } } });
        QCOMPARE(c.shapes(), (std::vector<Shape> { { 3, 3 } }));
        // Backwards past the start: 4, 2, 0; a step that does not divide the distance: 6, 2.
        Call past("Slice", { { 7 }, { 1 }, { 1 }, { 1 }, { 1 } }, 1, { { 1, { 4 } }, { 2, { -100 } }, { 3, { 0 } }, { 4, { -2 } } });
        QCOMPARE(past.shapes(), (std::vector<Shape> { { 3 } }));
        Call uneven("Slice", { { 7 }, { 1 }, { 1 }, { 1 }, { 1 } }, 1, { { 1, { 6 } }, { 2, { 0 } }, { 3, { 0 } }, { 4, { -4 } } });
        QCOMPARE(uneven.shapes(), (std::vector<Shape> { { 2 } }));
        Call clamp("Slice", { { 5 }, { 1 }, { 1 } }, 1, { { 1, { 2 } }, { 2, { std::numeric_limits<std::int64_t>::max() } } });
        QCOMPARE(clamp.shapes(), (std::vector<Shape> { { 3 } }));
    }
    {
        Call c("Split", { { 7, 2 } }, 3);
        c.op.attributes["num_outputs"] = ints({ 3 });
        QCOMPARE(c.shapes(), (std::vector<Shape> { { 3, 2 }, { 3, 2 }, { 1, 2 } }));
        Call given("Split", { { 7, 2 }, { 2 } }, 2, { { 1, { 5, 2 } } });
        QCOMPARE(given.shapes(), (std::vector<Shape> { { 5, 2 }, { 2, 2 } }));
    }
    {
        Call c("GatherND", { { 2, 5, 4 }, { 2, 3, 1 } }, 1, { { 1, { 0, 1, 2, 3, 4, 0 } } });
        c.op.attributes["batch_dims"] = ints({ 1 });
        QCOMPARE(c.shapes(), (std::vector<Shape> { { 2, 3, 4 } }));
    }
    {
        Call c("Gather", { { 5, 4 }, { 0 } }, 1, { { 1, {} } });
        c.op.attributes["axis"] = ints({ 0 });
        QCOMPARE(c.shapes(), (std::vector<Shape> { { 0, 4 } })); // no rows picked
    }
    {
        Call c("MatMul", { { 4 }, { 3, 4, 5 } }, 1);
        QCOMPARE(c.shapes(), (std::vector<Shape> { { 3, 5 } }));
        Call mismatch("MatMul", { { 2, 3 }, { 4, 5 } }, 1);
        QVERIFY(mismatch.shapes().empty());
    }
    {
        Call c("Add", { { 3, 1 }, { 1, 4 } }, 1);
        QCOMPARE(c.shapes(), (std::vector<Shape> { { 3, 4 } }));
        Call bad("Add", { { 3, 2 }, { 4 } }, 1);
        QVERIFY(bad.shapes().empty());
    }
    {
        Call squeeze("Squeeze", { { 1, 3, 1, 2 } }, 1);
        QCOMPARE(squeeze.shapes(), (std::vector<Shape> { { 3, 2 } }));
        Call unsqueeze("Unsqueeze", { { 3, 2 }, { 2 } }, 1, { { 1, { 0, -1 } } });
        QCOMPARE(unsqueeze.shapes(), (std::vector<Shape> { { 1, 3, 2, 1 } }));
    }
    {
        Call c("ReduceMin", { { 2, 3, 4 }, { 1 } }, 1, { { 1, { -2 } } });
        c.op.attributes["keepdims"] = ints({ 0 });
        QCOMPARE(c.shapes(), (std::vector<Shape> { { 2, 4 } }));
        Call all("ReduceMin", { { 2, 3 } }, 1);
        QCOMPARE(all.shapes(), (std::vector<Shape> { { 1, 1 } }));
    }
    {
        Call c("TopK", { { 2, 9 }, { 1 } }, 2, { { 1, { 4 } } });
        QCOMPARE(c.shapes(), (std::vector<Shape> { { 2, 4 }, { 2, 4 } }));
        Call tooMany("TopK", { { 2, 9 }, { 1 } }, 2, { { 1, { 10 } } });
        QVERIFY(tooMany.shapes().empty());
    }
    {
        Call c("ConstantOfShape", { { 3 } }, 1, { { 0, { 2, 0, 5 } } });
        QCOMPARE(c.shapes(), (std::vector<Shape> { { 2, 0, 5 } }));
        Call c2("Concat", { { 2, 3 }, { 4, 3 } }, 1);
        QCOMPARE(c2.shapes(), (std::vector<Shape> { { 6, 3 } }));
        Call c3("Expand", { { 3, 1 }, { 3 } }, 1, { { 1, { 2, 1, 6 } } });
        QCOMPARE(c3.shapes(), (std::vector<Shape> { { 2, 3, 6 } }));
        Call c4("Pad", { { 3, 4 }, { 4 } }, 1, { { 1, { 1, 0, 2, 3 } } });
        QCOMPARE(c4.shapes(), (std::vector<Shape> { { 6, 7 } }));
    }
    {
        // RoiAlign: one pooled map per region (a detector's regions come from NMS, so their count is the data's).
        Call c("RoiAlign", { { 2, 3, 8, 8 }, { 5, 4 }, { 5 } }, 1);
        c.op.attributes["output_height"] = ints({ 7 });
        c.op.attributes["output_width"] = ints({ 6 });
        QCOMPARE(c.shapes(), (std::vector<Shape> { { 5, 3, 7, 6 } }));
    }
    {
        // Losses: the target's shape per element, a scalar reduced; log_prob has the scores' shape.
        Call perElement("SoftmaxCrossEntropyLoss", { { 4, 3, 2 }, { 4, 2 } }, 2);
        perElement.op.attributes["reduction"].text = "none";
        QCOMPARE(perElement.shapes(), (std::vector<Shape> { { 4, 2 }, { 4, 3, 2 } }));
        Call mean("NegativeLogLikelihoodLoss", { { 4, 3 }, { 4 } }, 1);
        QCOMPARE(mean.shapes(), (std::vector<Shape> { {} }));
    }
    // An op without a rule has no run-time shape (it runs synthetic).
    Call unknown("NoSuchOp", { { 1, 3, 8, 8 } }, 1);
    QVERIFY(unknown.shapes().empty());
}

namespace {

// A view of `data` with this type and shape.
core::exec::TensorView view(core::DType dtype, Shape shape, void* data)
{
    core::exec::TensorView v;
    v.dtype = dtype;
    v.shape = shape;
    v.count = kerneltest::countOf(shape);
    v.data = static_cast<std::byte*>(data);
    return v;
}

// NonMaxSuppression by its definition, every candidate against every kept box: per batch and class,
// candidates above minScore by falling score (ties: lower index), kept unless a kept box overlaps
// it by IoU > iou, at most maxOut. Rows (batch, class, box).
std::vector<std::int64_t> nmsByDefinition(const std::vector<float>& boxes, const std::vector<float>& scores, std::int64_t batches,
    std::int64_t classes, std::int64_t n, std::int64_t maxOut, float iou, float minScore, bool center)
{
    struct Box {
        float y0, x0, y1, x1, area;
    };
    const auto boxAt = [&](std::int64_t b, std::int64_t i) {
        const float* v = boxes.data() + (b * n + i) * 4;
        Box r = center ? Box { v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2, 0 }
                       : Box { std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3]), 0 };
        r.area = (r.x1 - r.x0) * (r.y1 - r.y0);
        return r;
    };
    const auto overlaps = [&](const Box& a, const Box& b) {
        const float x0 = std::max(a.x0, b.x0), x1 = std::min(a.x1, b.x1), y0 = std::max(a.y0, b.y0), y1 = std::min(a.y1, b.y1);
        if (x1 <= x0 || y1 <= y0)
            return false;
        const float inter = (x1 - x0) * (y1 - y0), uni = a.area + b.area - inter;
        return inter > 0 && a.area > 0 && b.area > 0 && uni > 0 && inter / uni > iou;
    };
    std::vector<std::int64_t> rows;
    for (std::int64_t b = 0; b < batches; ++b)
        for (std::int64_t k = 0; k < classes; ++k) {
            const float* s = scores.data() + (b * classes + k) * n;
            std::vector<std::int64_t> order;
            for (std::int64_t i = 0; i < n; ++i)
                if (s[i] > minScore)
                    order.push_back(i);
            std::stable_sort(order.begin(), order.end(), [&](std::int64_t l, std::int64_t r) { return s[l] > s[r]; });
            std::vector<Box> kept;
            for (auto i : order) {
                if (std::int64_t(kept.size()) == maxOut)
                    break;
                const Box box = boxAt(b, i);
                if (std::any_of(kept.begin(), kept.end(), [&](const Box& j) { return overlaps(j, box); }))
                    continue;
                kept.push_back(box);
                rows.insert(rows.end(), { b, k, i });
            }
        }
    return rows;
}

} // namespace

// The NonMaxSuppression kernel (which checks only the kept boxes a candidate overlaps in x) selects
// what the definition does: random boxes in both box formats, batches and classes, clusters along
// a diagonal as batched NMS offsets classes, degenerate and non-finite boxes among them.
void TestRunShapes::nmsMatchesTheDefinition()
{
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const auto nms = core::exec::findSizingKernel("NonMaxSuppression");
    QVERIFY(nms);
    int compared = 0, suppressedSome = 0;
    for (bool center : { false, true })
        for (float iou : { 0.0f, 0.3f, 0.7f })
            for (std::int64_t maxOut : { 5, 1000 }) {
                const std::int64_t batches = 2, classes = 3, n = 300;
                std::vector<float> boxes, scores;
                for (std::int64_t i = 0; i < batches * n; ++i) {
                    const float group = float(i % 7) * 120.0f; // clusters far apart, as offset classes are
                    const float x = group + 100 * unit(rng), y = group + 100 * unit(rng), w = 40 * unit(rng), h = 40 * unit(rng);
                    if (center)
                        boxes.insert(boxes.end(), { x, y, w, h });
                    else if (i % 2) // corners in either order
                        boxes.insert(boxes.end(), { y + h, x + w, y, x });
                    else
                        boxes.insert(boxes.end(), { y, x, y + h, x + w });
                }
                for (std::int64_t i : { 3, 50, 411 }) // no area; a NaN corner; an infinite box
                    boxes[std::size_t(i * 4 + 2)] = boxes[std::size_t(i * 4)];
                boxes[std::size_t(60 * 4 + 1)] = nan;
                boxes[std::size_t(420 * 4)] = -inf;
                boxes[std::size_t(420 * 4 + 2)] = inf;
                for (std::int64_t i = 0; i < batches * classes * n; ++i)
                    scores.push_back(i % 11 == 0 ? 0.5f : unit(rng)); // ties too
                const float minScore = 0.2f;
                std::vector<float> args { iou, minScore };
                std::vector<std::int64_t> limit { maxOut }, selected(std::size_t(batches * classes * n * 3), -1);
                core::Op op;
                op.type = "NonMaxSuppression";
                op.attributes["center_point_box"] = ints({ center ? 1 : 0 });
                core::exec::KernelCall call;
                call.op = &op;
                call.in = { view(core::DType::Float32, { batches, n, 4 }, boxes.data()),
                    view(core::DType::Float32, { batches, classes, n }, scores.data()), view(core::DType::Int64, { 1 }, limit.data()),
                    view(core::DType::Float32, { 1 }, &args[0]), view(core::DType::Float32, { 1 }, &args[1]) };
                call.out = { view(core::DType::Int64, { std::int64_t(selected.size()) }, selected.data()) };
                std::vector<Shape> shapes;
                QVERIFY(nms(call, shapes));
                const auto expected = nmsByDefinition(boxes, scores, batches, classes, n, maxOut, iou, minScore, center);
                QCOMPARE(shapes, (std::vector<Shape> { { std::int64_t(expected.size() / 3), 3 } }));
                QCOMPARE(std::vector<std::int64_t>(selected.begin(), selected.begin() + std::ptrdiff_t(expected.size())), expected);
                ++compared;
                std::int64_t candidates = 0;
                for (float v : scores)
                    candidates += v > minScore ? 1 : 0;
                suppressedSome += iou < 0.5f && maxOut == 1000 && std::int64_t(expected.size() / 3) < candidates ? 1 : 0;
            }
    QCOMPARE(compared, 12);
    QCOMPARE(suppressedSome, 4); // IoU 0 and 0.3 removed boxes in both formats: the comparison is not vacuous
}

// The sizing kernels on hand-checked data (the ONNX backend cases run in tst_executor too).
void TestRunShapes::sizingKernels()
{
    // NonMaxSuppression: box 1 overlaps box 0 (IoU 0.81 > 0.5) and loses; box 2 stays apart.
    std::vector<float> boxes { 0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 5, 1, 6 };
    std::vector<float> scores { 0.9f, 0.8f, 0.7f };
    std::vector<std::int64_t> maxOut { 10 };
    std::vector<float> iou { 0.5f };
    std::vector<std::int64_t> selected(30, -1);
    core::Op op;
    op.type = "NonMaxSuppression";
    core::exec::KernelCall call;
    call.op = &op;
    call.in = { view(core::DType::Float32, { 1, 3, 4 }, boxes.data()), view(core::DType::Float32, { 1, 1, 3 }, scores.data()),
        view(core::DType::Int64, { 1 }, maxOut.data()), view(core::DType::Float32, { 1 }, iou.data()) };
    call.out = { view(core::DType::Int64, { 30 }, selected.data()) };
    const auto nms = core::exec::findSizingKernel("NonMaxSuppression");
    QVERIFY(nms);
    std::vector<Shape> shapes;
    QVERIFY(nms(call, shapes));
    QCOMPARE(shapes, (std::vector<Shape> { { 2, 3 } }));
    QCOMPARE(std::vector<std::int64_t>(selected.begin(), selected.begin() + 7), (std::vector<std::int64_t> { 0, 0, 0, 0, 0, 2, -1 }));
    // Room for one selection only: refused, and nothing past that room is written.
    std::fill(selected.begin(), selected.end(), -1);
    call.out[0].count = 3;
    QVERIFY(!nms(call, shapes));
    QVERIFY(std::all_of(selected.begin() + 3, selected.end(), [](std::int64_t v) { return v == -1; }));

    // Unique over rows (axis 0), not sorted: rows in order of first appearance.
    std::vector<float> x { 1, 2, 3, 4, 1, 2 };
    std::vector<float> y(6, -1);
    std::vector<std::int64_t> first(3, -1), inverse(3, -1), counts(3, -1);
    core::Op unique;
    unique.type = "Unique";
    unique.attributes["axis"] = ints({ 0 });
    unique.attributes["sorted"] = ints({ 0 });
    core::exec::KernelCall u;
    u.op = &unique;
    u.in = { view(core::DType::Float32, { 3, 2 }, x.data()) };
    u.out = { view(core::DType::Float32, { 6 }, y.data()), view(core::DType::Int64, { 3 }, first.data()),
        view(core::DType::Int64, { 3 }, inverse.data()), view(core::DType::Int64, { 3 }, counts.data()) };
    QVERIFY(core::exec::findSizingKernel("Unique")(u, shapes));
    QCOMPARE(shapes, (std::vector<Shape> { { 2, 2 }, { 2 }, { 3 }, { 2 } }));
    QCOMPARE(std::vector<float>(y.begin(), y.begin() + 4), (std::vector<float> { 1, 2, 3, 4 }));
    QCOMPARE(std::vector<std::int64_t>(first.begin(), first.begin() + 2), (std::vector<std::int64_t> { 0, 1 }));
    QCOMPARE(inverse, (std::vector<std::int64_t> { 0, 1, 0 }));
    QCOMPARE(std::vector<std::int64_t>(counts.begin(), counts.begin() + 2), (std::vector<std::int64_t> { 2, 1 }));
}

QTEST_GUILESS_MAIN(TestRunShapes)
#include "tst_runshapes.moc"
