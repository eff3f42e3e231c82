// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Training mode (backward pass) and the checkpoint policy of recompute.
#include "cost/opcost.h"
#include "exec/executor.h"
#include "io/workload.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "strategies/strategy.h"
#include "strategies/training.h"

#include "clirun.h"

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <map>
#include <set>

using namespace core;

namespace {
Workload load(const std::string& spec)
{
    auto workload = loadWorkload(spec, {});
    if (!workload)
        qFatal("%s", workload.error().message.c_str());
    return std::move(*workload);
}

Workload training(const Workload& forward, bool weightGradientsInArena = true)
{
    TrainingOptions options;
    options.weightGradientsInArena = weightGradientsInArena;
    auto result = appendBackwardPass(forward, options);
    if (!result)
        qFatal("%s", result.error().message.c_str());
    return std::move(*result);
}

// Plans with greedy-by-size, checks the plan with the validator and returns its arena.
Bytes plannedArena(const Workload& w)
{
    const auto* planner = plannerByName("greedy-by-size");
    auto plan = runPlanner(*planner, w.problem);
    if (!plan)
        qFatal("%s", plan.error().message.c_str());
    const auto check = validatePlan(w.problem, *plan);
    if (!check.ok())
        qFatal("invalid plan for %s: %s", w.source.c_str(), check.message.c_str());
    return plan->arenaSize;
}

// A graph built by hand: float32 tensors of the given shapes.
struct Builder {
    Graph graph;
    TensorIndex tensor(const std::string& name, std::vector<std::int64_t> shape, TensorKind kind = TensorKind::Activation)
    {
        Tensor t;
        t.name = name;
        t.dtype = DType::Float32;
        t.shape = std::move(shape);
        t.rankKnown = true;
        t.size = tensorBytes(t.dtype, t.shape);
        t.kind = kind;
        graph.tensors.push_back(t);
        const auto index = static_cast<TensorIndex>(graph.tensors.size() - 1);
        if (kind == TensorKind::Input)
            graph.inputs.push_back(index);
        if (kind == TensorKind::Output)
            graph.outputs.push_back(index);
        return index;
    }
    Op& op(const std::string& name, const std::string& type, std::vector<TensorIndex> in, std::vector<TensorIndex> out)
    {
        Op o;
        o.name = name;
        o.type = type;
        o.inputs = std::move(in);
        o.outputs = std::move(out);
        graph.ops.push_back(std::move(o));
        return graph.ops.back();
    }
    Workload workload(const std::string& source)
    {
        auto w = workloadFromGraph(graph, source, {});
        if (!w)
            qFatal("%s", w.error().message.c_str());
        return std::move(*w);
    }
};

// `layers` × (Conv 3x3 same padding, Relu) on 1x8x16x16 float32: 2 × layers forward ops.
Workload deepChain(int layers)
{
    Builder b;
    const std::vector<std::int64_t> shape { 1, 8, 16, 16 };
    auto x = b.tensor("x", shape, TensorKind::Input);
    for (int i = 0; i < layers; ++i) {
        const auto n = std::to_string(i);
        const auto w = b.tensor("w" + n, { 8, 8, 3, 3 }, TensorKind::Weight);
        const auto y = b.tensor("conv" + n, shape);
        const auto r = b.tensor("relu" + n, shape, i + 1 == layers ? TensorKind::Output : TensorKind::Activation);
        auto& conv = b.op("Conv_" + n, "Conv", { x, w }, { y });
        conv.attributes["kernel_shape"].ints = { 3, 3 };
        conv.attributes["pads"].ints = { 1, 1, 1, 1 };
        b.op("Relu_" + n, "Relu", { y }, { r });
        x = r;
    }
    return b.workload("deep-chain");
}

// `blocks` residual blocks (Conv, Relu, Conv, Add with the block input, Relu) on 1x8x8x8 float32: skip
// connections cross checkpoint boundaries.
Workload residualNet(int blocks)
{
    Builder b;
    const std::vector<std::int64_t> shape { 1, 8, 8, 8 };
    auto x = b.tensor("x", shape, TensorKind::Input);
    for (int i = 0; i < blocks; ++i) {
        const auto n = std::to_string(i);
        const auto w1 = b.tensor("w1_" + n, { 8, 8, 3, 3 }, TensorKind::Weight), w2 = b.tensor("w2_" + n, { 8, 8, 3, 3 }, TensorKind::Weight);
        const auto c1 = b.tensor("c1_" + n, shape), r1 = b.tensor("r1_" + n, shape), c2 = b.tensor("c2_" + n, shape),
                   sum = b.tensor("sum_" + n, shape);
        const auto out = b.tensor("out_" + n, shape, i + 1 == blocks ? TensorKind::Output : TensorKind::Activation);
        b.op("conv1_" + n, "Conv", { x, w1 }, { c1 }).attributes["pads"].ints = { 1, 1, 1, 1 };
        b.op("relu1_" + n, "Relu", { c1 }, { r1 });
        b.op("conv2_" + n, "Conv", { r1, w2 }, { c2 }).attributes["pads"].ints = { 1, 1, 1, 1 };
        b.op("add_" + n, "Add", { c2, x }, { sum });
        b.op("relu2_" + n, "Relu", { sum }, { out });
        x = out;
    }
    return b.workload("residual");
}

bool isGradient(const Op& op) { return op.domain == kTrainingDomain && op.type != kLossSeedType; }

bool contains(const std::vector<TensorIndex>& list, TensorIndex t) { return std::find(list.begin(), list.end(), t) != list.end(); }

double forwardFlops(const Workload& w)
{
    double flops = 0;
    const auto end = backwardStart(*w.graph, w.schedule);
    for (Step s = 0; s < end; ++s)
        flops += opCost(*w.graph, w.graph->ops[w.schedule.order[s]]).flops;
    return flops;
}

} // namespace

class TestTraining : public QObject {
    Q_OBJECT
private slots:
    void backwardFollowsTheTable_data();
    void backwardFollowsTheTable();
    void weightGradientsAreOutputs();
    void sharedTensorGetsAnAccumulation();
    void badInputIsAnError();
    void trainingPeakAboveInference();
    void checkpointLowersTheChainPeak();
    void checkpointOnRealModels_data();
    void checkpointOnRealModels();
    void executorRunsTrainingGraph();
    void cli();
};

void TestTraining::backwardFollowsTheTable_data()
{
    QTest::addColumn<QString>("spec");
    for (const auto* spec : { "example:cnn", "example:unet", "example:transformer" })
        QTest::newRow(spec) << QString::fromLatin1(spec);
}

void TestTraining::backwardFollowsTheTable()
{
    QFETCH(QString, spec);
    const auto forward = load(spec.toStdString());
    const auto w = training(forward);
    const auto& g = *w.graph;
    QVERIFY(isTopological(g, w.schedule));
    QCOMPARE(backwardStart(g, w.schedule), forward.schedule.steps()); // the forward schedule is kept as it was
    for (Step s = 0; s < forward.schedule.steps(); ++s)
        QCOMPARE(w.schedule.order[s], forward.schedule.order[s]);

    std::map<std::string, OpIndex> forwardByName;
    for (Step s = 0; s < forward.schedule.steps(); ++s)
        forwardByName[g.ops[forward.schedule.order[s]].name] = forward.schedule.order[s];
    const auto prod = producers(g);
    int gradients = 0;
    for (Step s = backwardStart(g, w.schedule) + 1; s < w.schedule.steps(); ++s) {
        const auto& op = g.ops[w.schedule.order[s]];
        if (!isGradient(op)) {
            QCOMPARE(op.type, std::string("Sum")); // the only other backward op: accumulations
            continue;
        }
        ++gradients;
        const auto name = op.name.substr(0, op.name.size() - std::string(".grad").size());
        QVERIFY2(forwardByName.count(name), op.name.c_str());
        const auto& fwd = g.ops[forwardByName[name]];
        QCOMPARE(op.type, fwd.type + "Grad");
        const auto needs = gradientNeeds(fwd);
        std::set<TensorIndex> saved;
        for (auto slot : needs.inputs)
            saved.insert(fwd.inputs[slot]);
        for (auto slot : needs.outputs)
            saved.insert(fwd.outputs[slot]);
        for (auto t : saved)
            QVERIFY2(contains(op.inputs, t), (op.name + " does not read " + g.tensors[t].name).c_str());
        // Everything else it reads is a gradient of one of the forward op's outputs.
        for (auto t : op.inputs) {
            if (saved.count(t))
                continue;
            const bool gradientOfOutput = std::any_of(fwd.outputs.begin(), fwd.outputs.end(),
                [&](TensorIndex o) { return g.tensors[t].name.rfind(g.tensors[o].name + ".grad", 0) == 0; });
            QVERIFY2(gradientOfOutput, (op.name + " reads " + g.tensors[t].name).c_str());
            QVERIFY(prod[t] >= 0);
        }
        // One gradient per input that gets one: same dtype and shape as the input.
        for (auto out : op.outputs) {
            const auto& grad = g.tensors[out];
            const auto source = std::find_if(fwd.inputs.begin(), fwd.inputs.end(),
                [&](TensorIndex i) { return grad.name.rfind(g.tensors[i].name + ".grad", 0) == 0; });
            QVERIFY2(source != fwd.inputs.end(), grad.name.c_str());
            QCOMPARE(grad.shape, g.tensors[*source].shape);
            QCOMPARE(grad.dtype, g.tensors[*source].dtype);
            QVERIFY(isDifferentiableDType(grad.dtype));
        }
    }
    QVERIFY(gradients > forward.schedule.steps() / 2);
    plannedArena(w);
}

void TestTraining::weightGradientsAreOutputs()
{
    const auto w = training(load("example:cnn"));
    const auto& g = *w.graph;
    int weights = 0;
    for (std::size_t t = 0; t < g.tensors.size(); ++t) {
        const auto& tensor = g.tensors[t];
        if (tensor.kind != TensorKind::Weight || tensor.size <= dtypeBytes(tensor.dtype) || !isDifferentiableDType(tensor.dtype))
            continue;
        ++weights;
        const auto grad = g.findTensor(tensor.name + ".grad");
        QVERIFY2(grad, tensor.name.c_str());
        QCOMPARE(g.tensors[*grad].kind, TensorKind::Output);
        QCOMPARE(g.tensors[*grad].size, tensor.size);
        QVERIFY(contains(g.outputs, *grad));
    }
    QVERIFY(weights > 10);
    // The graph input is data: no gradient.
    QVERIFY(!g.findTensor(g.tensors[g.inputs[0]].name + ".grad"));
}

void TestTraining::sharedTensorGetsAnAccumulation()
{
    // a is read by Relu and by Sigmoid: its gradient is the sum of two partial gradients.
    Builder b;
    const auto x = b.tensor("x", { 1, 64 }, TensorKind::Input);
    const auto w = b.tensor("w", { 64, 64 }, TensorKind::Weight);
    const auto a = b.tensor("a", { 1, 64 }), r = b.tensor("r", { 1, 64 }), s = b.tensor("s", { 1, 64 });
    const auto out = b.tensor("out", { 1, 64 }, TensorKind::Output);
    b.op("mm", "MatMul", { x, w }, { a });
    b.op("relu", "Relu", { a }, { r });
    b.op("sig", "Sigmoid", { a }, { s });
    b.op("add", "Add", { r, s }, { out });
    const auto t = training(b.workload("shared"));
    const auto& g = *t.graph;
    QVERIFY(isTopological(g, t.schedule));
    Step sumStep = -1, mmGradStep = -1;
    for (Step step = 0; step < t.schedule.steps(); ++step) {
        const auto& op = g.ops[t.schedule.order[step]];
        if (op.type == "Sum") {
            QCOMPARE(op.name, std::string("a.grad.sum"));
            QCOMPARE(op.inputs.size(), std::size_t(2));
            QCOMPARE(g.tensors[op.outputs[0]].name, std::string("a.grad"));
            sumStep = step;
        }
        if (op.name == "mm.grad") {
            mmGradStep = step;
            QVERIFY(contains(op.inputs, *g.findTensor("a.grad")));
            QVERIFY(contains(op.inputs, x) && contains(op.inputs, w)); // X and W
            QCOMPARE(op.outputs.size(), std::size_t(1));               // x is data: only w.grad
            QCOMPARE(g.tensors[op.outputs[0]].name, std::string("w.grad"));
            // One gradient written (dW): as many FLOPs as the forward MatMul.
            QCOMPARE(opCost(g, op).flops, opCost(g, g.ops[0]).flops);
            QCOMPARE(opCost(g, op).flops, 2.0 * 64 * 64);
        }
        if (op.name == "relu.grad")
            QVERIFY(contains(op.inputs, r) && !contains(op.inputs, a)); // Relu's gradient reads its output
        if (op.name == "sig.grad")
            QVERIFY(contains(op.inputs, s));
        if (op.name == "add.grad")
            QCOMPARE(op.inputs.size(), std::size_t(1)); // only out.grad: Add needs no forward tensor
    }
    QVERIFY(sumStep > 0 && mmGradStep > sumStep);
    // r, s and a stay alive into the backward pass; x too (w's gradient reads it).
    const auto lifetimes = computeLifetimes(g, t.schedule);
    QVERIFY(lifetimes[x].end > backwardStart(g, t.schedule));
    QVERIFY(lifetimes[r].end > backwardStart(g, t.schedule));
    plannedArena(t);
}

void TestTraining::badInputIsAnError()
{
    const auto hotel = appendBackwardPass(load("example:hotel"), {});
    QVERIFY(!hotel);
    QVERIFY2(hotel.error().message.find("example:hotel") != std::string::npos, hotel.error().message.c_str());
    const auto twice = appendBackwardPass(training(load("example:cnn")), {});
    QVERIFY(!twice);
    QVERIFY2(twice.error().message.find("already has a backward pass") != std::string::npos, twice.error().message.c_str());
    TrainingOptions options;
    options.lossOutputs = { "no-such-output" };
    const auto unknown = appendBackwardPass(load("example:cnn"), options);
    QVERIFY(!unknown);
    QVERIFY2(unknown.error().message.find("no-such-output") != std::string::npos, unknown.error().message.c_str());
}

void TestTraining::trainingPeakAboveInference()
{
    const auto forward = load("example:cnn");
    const auto t = training(forward);
    const auto inferenceArena = plannedArena(forward), trainingArena = plannedArena(t);
    qInfo("example:cnn: inference lower bound %lld, arena %lld; training lower bound %lld, arena %lld",
        static_cast<long long>(lowerBound(forward.problem)), static_cast<long long>(inferenceArena),
        static_cast<long long>(lowerBound(t.problem)), static_cast<long long>(trainingArena));
    QVERIFY(lowerBound(forward.problem) < lowerBound(t.problem));
    QVERIFY(inferenceArena < trainingArena);
}

void TestTraining::checkpointLowersTheChainPeak()
{
    const auto t = training(deepChain(64));
    const Bytes trainingBound = lowerBound(t.problem);
    const auto trainingArena = plannedArena(t);
    StrategyOptions options;
    options.alignment = t.problem.alignment;
    options.recomputePolicy = RecomputePolicy::Checkpoint;
    const auto run = applyStrategies(t, { "recompute" }, options);
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    QVERIFY(isTopological(*run->workload.graph, run->workload.schedule));
    const auto checkpointArena = plannedArena(run->workload);
    const auto& report = run->reports.at(0);
    const double forward = static_cast<double>(forwardFlops(t));
    qInfo("64-layer chain: training lower bound %lld, arena %lld; checkpoint every sqrt(128) = 11: lower bound %lld, arena "
          "%lld, extra FLOPs %.3g (forward %.3g)",
        static_cast<long long>(trainingBound), static_cast<long long>(trainingArena),
        static_cast<long long>(report.lowerBoundAfter), static_cast<long long>(checkpointArena), report.extraFlops, forward);
    QCOMPARE(report.lowerBoundBefore, trainingBound);
    QVERIFY(report.lowerBoundAfter < trainingBound / 2);
    QVERIFY(checkpointArena < trainingArena / 2);
    // Each segment re-runs once: between half a forward pass and one forward pass of extra work.
    QVERIFY2(report.extraFlops > 0.5 * forward && report.extraFlops <= 1.05 * forward, std::to_string(report.extraFlops).c_str());
    QVERIFY(report.extraSeconds > 0);
    QVERIFY(report.details.front().find("k = 11 of 128 forward ops") != std::string::npos);

    // Every original read still happens on a value computed the same way: each op reads, from the
    // original or a clone, the tensor it read before.
    const auto& g = *run->workload.graph;
    const auto& state = run->state;
    for (std::size_t op = 0; op < t.graph->ops.size(); ++op) {
        const auto& before = t.graph->ops[op].inputs;
        const auto& after = g.ops[op].inputs;
        QCOMPARE(after.size(), before.size());
        for (std::size_t i = 0; i < before.size(); ++i)
            QCOMPARE(state.origin[after[i]], before[i]);
    }

    // A coarser checkpoint interval keeps fewer checkpoints; k = 1 keeps everything and costs nothing.
    options.checkpointEvery = 1;
    const auto all = applyStrategies(t, { "recompute" }, options);
    QVERIFY(all);
    QCOMPARE(all->reports.at(0).extraFlops, 0.0);
    QCOMPARE(all->reports.at(0).lowerBoundAfter, trainingBound);
}

void TestTraining::checkpointOnRealModels_data()
{
    QTest::addColumn<QString>("spec");
    QTest::newRow("transformer") << QStringLiteral("example:transformer");
    QTest::newRow("unet") << QStringLiteral("example:unet");
    const auto resnet = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/models/resnet50.onnx");
    if (QFile::exists(resnet))
        QTest::newRow("resnet50") << resnet;
}

void TestTraining::checkpointOnRealModels()
{
    QFETCH(QString, spec);
    const auto forward = load(spec.toStdString());
    const auto inference = plannedArena(forward);
    for (bool inArena : { true, false }) {
        const auto t = training(forward, inArena);
        StrategyOptions options;
        options.alignment = t.problem.alignment;
        options.recomputePolicy = RecomputePolicy::Checkpoint;
        const auto checkpoint = applyStrategies(t, { "recompute" }, options);
        QVERIFY2(checkpoint, checkpoint ? "" : checkpoint.error().message.c_str());
        QVERIFY(isTopological(*checkpoint->workload.graph, checkpoint->workload.schedule));
        options.recomputePolicy = RecomputePolicy::Greedy;
        const auto greedy = applyStrategies(t, { "recompute" }, options);
        QVERIFY(greedy);
        const auto train = plannedArena(t), ckpt = plannedArena(checkpoint->workload), greedyArena = plannedArena(greedy->workload);
        const auto& report = checkpoint->reports[0];
        const double ratio = report.extraFlops / std::max(1.0, forwardFlops(t));
        qInfo("%s, weight gradients %s: arena inference %.1f MiB, training %.1f MiB, training+checkpoint %.1f MiB (extra %.3g "
              "FLOPs = %.2f forward), training+greedy recompute %.1f MiB",
            qPrintable(spec), inArena ? "in the arena" : "persistent", inference / 1048576.0, train / 1048576.0,
            ckpt / 1048576.0, report.extraFlops, ratio, greedyArena / 1048576.0);
        QVERIFY(inference < train);
        QVERIFY(report.lowerBoundAfter <= report.lowerBoundBefore);
        if (report.lowerBoundAfter == report.lowerBoundBefore) {
            // The weight gradients' pile at the end is the peak: checkpoints cannot lower it, so the
            // policy is not applied (no recomputation for the same peak), and the report says so.
            QCOMPARE(report.extraFlops, 0.0);
            QVERIFY(!report.details.empty() && report.details[0].starts_with("not applied: it would leave the lower bound"));
        } else {
            QVERIFY2(ratio > 0.3 && ratio <= 1.05, qPrintable(QString::number(ratio)));
        }
        // Without the weight gradients piling up at the end, the peak is the activations kept for the backward pass.
        if (!inArena)
            QVERIFY(report.lowerBoundAfter < report.lowerBoundBefore);
    }
}

void TestTraining::executorRunsTrainingGraph()
{
    for (const auto& t : { training(deepChain(6)), training(residualNet(6)) }) {
        std::vector<HostTensor> plainOutputs;
        for (bool checkpoint : { false, true }) {
            Workload w = t;
            if (checkpoint) {
                StrategyOptions options;
                options.alignment = t.problem.alignment;
                options.recomputePolicy = RecomputePolicy::Checkpoint;
                options.checkpointEvery = 4; // in the residual net, not a multiple of the block length (5)
                auto run = applyStrategies(t, { "recompute" }, options);
                QVERIFY(run);
                QVERIFY(run->reports[0].extraFlops > 0);
                w = std::move(run->workload);
            }
            const auto* planner = plannerByName("greedy-by-size");
            const auto plan = runPlanner(*planner, w.problem);
            QVERIFY(plan);
            QVERIFY(validatePlan(w.problem, *plan).ok());
            QVERIFY(plan->arenaSize < noReusePlan(w.problem).arenaSize);
            const auto check = checkPlanByRunning(*w.graph, w.schedule, w.problem, *plan, w.bufferTensor, {});
            QVERIFY2(check, check ? "" : check.error().message.c_str());
            QVERIFY2(check->outputsMatch, check->mismatch.c_str());
            QVERIFY(check->planned.opsSynthetic > 0); // gradient ops run the synthetic kernel
            QVERIFY(check->planned.opsReal > 0);
            QCOMPARE(check->planned.outputs.size(), w.graph->outputs.size()); // the output and the weight gradients
            QVERIFY(w.graph->outputs.size() > 6);
            // Recomputed values are the same bits, so the weight gradients are too.
            if (!checkpoint)
                plainOutputs = check->planned.outputs;
            else
                QCOMPARE(compareOutputs(*w.graph, plainOutputs, check->planned.outputs), std::string());
        }
    }
}

void TestTraining::cli()
{
    const auto plain = memplan({ QStringLiteral("plan"), QStringLiteral("example:cnn") });
    QVERIFY2(plain.exitCode == 0, qPrintable(plain.err));
    const auto train = memplan({ QStringLiteral("plan"), QStringLiteral("example:cnn"), QStringLiteral("--training") });
    QVERIFY2(train.exitCode == 0, qPrintable(train.err));
    QVERIFY2(train.out.contains(QStringLiteral("training mode: backward pass")), qPrintable(train.out));
    const auto ckpt = memplan({ QStringLiteral("plan"), QStringLiteral("example:cnn"), QStringLiteral("--training"),
        QStringLiteral("--persistent-grads"), QStringLiteral("--checkpoint"), QStringLiteral("sqrt") });
    QVERIFY2(ckpt.exitCode == 0, qPrintable(ckpt.err));
    QVERIFY2(ckpt.out.contains(QStringLiteral("strategy recompute")) && ckpt.out.contains(QStringLiteral("checkpoint policy")),
        qPrintable(ckpt.out));
    // With the weight gradients in the arena their pile at the end is the peak: nothing to gain.
    const auto useless = memplan({ QStringLiteral("plan"), QStringLiteral("example:cnn"), QStringLiteral("--training"),
        QStringLiteral("--checkpoint"), QStringLiteral("sqrt") });
    QVERIFY2(useless.exitCode == 0, qPrintable(useless.err));
    QVERIFY2(useless.out.contains(QStringLiteral("not applied: it would leave the lower bound at 54.3 MiB and add")),
        qPrintable(useless.out));
    const auto every4 = memplan({ QStringLiteral("plan"), QStringLiteral("example:unet"), QStringLiteral("--training"),
        QStringLiteral("--checkpoint=4") });
    QVERIFY2(every4.exitCode == 0, qPrintable(every4.err));
    QVERIFY2(every4.out.contains(QStringLiteral("k = 4 of")), qPrintable(every4.out));

    for (const auto& bad : { QStringList { QStringLiteral("--training"), QStringLiteral("--checkpoint"), QStringLiteral("0") },
             QStringList { QStringLiteral("--training"), QStringLiteral("--checkpoint"), QStringLiteral("often") },
             QStringList { QStringLiteral("--checkpoint"), QStringLiteral("4") } }) {
        const auto run = memplan(QStringList { QStringLiteral("plan"), QStringLiteral("example:cnn") } + bad);
        QVERIFY2(run.exitCode == 2, qPrintable(bad.join(QLatin1Char(' ')) + QStringLiteral(": ") + run.err));
        QVERIFY2(run.err.startsWith(QStringLiteral("memplan: ")) && run.err.count(QLatin1Char('\n')) == 1, qPrintable(run.err));
    }
    const auto problem = memplan({ QStringLiteral("plan"), QStringLiteral("example:hotel"), QStringLiteral("--training") });
    QCOMPARE(problem.exitCode, 1);

    const auto compare = memplan({ QStringLiteral("compare"), QStringLiteral("example:transformer"), QStringLiteral("--training"),
        QStringLiteral("--strategies") });
    QVERIFY2(compare.exitCode == 0, qPrintable(compare.err));
    QVERIFY2(compare.out.contains(QStringLiteral("\ncheckpoint ")), qPrintable(compare.out));
    const auto planners = memplan({ QStringLiteral("compare"), QStringLiteral("example:cnn"), QStringLiteral("--training") });
    QVERIFY2(planners.exitCode == 0, qPrintable(planners.err));

    QTemporaryDir dir;
    const auto path = dir.filePath(QStringLiteral("train.json"));
    const auto exported = memplan({ QStringLiteral("export"), QStringLiteral("example:cnn"), QStringLiteral("--training"),
        QStringLiteral("--graph-json"), path });
    QVERIFY2(exported.exitCode == 0, qPrintable(exported.err));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto text = file.readAll();
    QVERIFY(text.contains("ConvGrad") && text.contains("LossGrad"));
    // A checkpointed training graph is written in schedule order (its recomputations come right
    // before the gradients that read them), so it plans again as it was planned.
    const auto checkpointed = dir.filePath(QStringLiteral("ckpt.json"));
    const QStringList ckptFlags { QStringLiteral("example:unet"), QStringLiteral("--training"), QStringLiteral("--persistent-grads"),
        QStringLiteral("--checkpoint"), QStringLiteral("sqrt") };
    QVERIFY(memplan(QStringList { QStringLiteral("export") } + ckptFlags + QStringList { QStringLiteral("--graph-json"), checkpointed }).exitCode == 0);
    const auto direct = memplan(QStringList { QStringLiteral("plan") } + ckptFlags);
    const auto reloaded = memplan({ QStringLiteral("plan"), checkpointed });
    QVERIFY2(reloaded.exitCode == 0 && !reloaded.out.contains(QStringLiteral("not in dependency order")), qPrintable(reloaded.out + reloaded.err));
    const auto boundOf = [](const QString& report) {
        return QRegularExpression(QStringLiteral("lower bound +(\\S+ \\S+)")).match(report).captured(1);
    };
    QVERIFY(!boundOf(direct.out).isEmpty());
    QCOMPARE(boundOf(reloaded.out), boundOf(direct.out));

    // The exported training graph plans again, and its backward pass is recognised: --checkpoint works on it.
    const auto again = memplan({ QStringLiteral("plan"), path, QStringLiteral("--checkpoint"), QStringLiteral("sqrt") });
    QVERIFY2(again.exitCode == 0, qPrintable(again.err));
    QVERIFY2(again.out.contains(QStringLiteral("strategy recompute")) && again.out.contains(QStringLiteral("not applied: it would leave")),
        qPrintable(again.out)); // as on example:cnn itself: recognised, and nothing to gain
    const auto onnx = dir.filePath(QStringLiteral("train.onnx"));
    const auto exportedOnnx = memplan({ QStringLiteral("export"), QStringLiteral("example:unet"), QStringLiteral("--training"),
        QStringLiteral("--onnx"), onnx });
    QVERIFY2(exportedOnnx.exitCode == 0, qPrintable(exportedOnnx.err));
    const auto onnxPlan = memplan({ QStringLiteral("plan"), onnx });
    QVERIFY2(onnxPlan.exitCode == 0 && onnxPlan.out.contains(QStringLiteral("steps            103")), qPrintable(onnxPlan.out + onnxPlan.err));

    // Weight gradients outside the arena: a smaller arena, and the region is reported.
    const auto persistent = memplan({ QStringLiteral("plan"), QStringLiteral("example:cnn"), QStringLiteral("--training"),
        QStringLiteral("--persistent-grads") });
    QVERIFY2(persistent.exitCode == 0 && persistent.out.contains(QStringLiteral("persistent       44.6 MiB")), qPrintable(persistent.out));
    const auto alone = memplan({ QStringLiteral("plan"), QStringLiteral("example:cnn"), QStringLiteral("--persistent-grads") });
    QCOMPARE(alone.exitCode, 2);
    // An ONNX export keeps them persistent (the file's metadata names them): the same arena and region again.
    const auto persistentOnnx = dir.filePath(QStringLiteral("persistent.onnx"));
    const auto exportedPersistent = memplan({ QStringLiteral("export"), QStringLiteral("example:cnn"), QStringLiteral("--training"),
        QStringLiteral("--persistent-grads"), QStringLiteral("--onnx"), persistentOnnx });
    QVERIFY2(exportedPersistent.exitCode == 0, qPrintable(exportedPersistent.err));
    const auto replanned = memplan({ QStringLiteral("plan"), persistentOnnx });
    QVERIFY2(replanned.exitCode == 0 && replanned.out.contains(QStringLiteral("persistent       44.6 MiB")), qPrintable(replanned.out));
    const auto arena = [](const QString& report) { return report.split(QLatin1Char('\n')).filter(QStringLiteral("arena  ")).value(0); };
    QVERIFY2(!arena(persistent.out).isEmpty() && arena(replanned.out) == arena(persistent.out),
        qPrintable(arena(persistent.out) + QStringLiteral(" / ") + arena(replanned.out)));
}

QTEST_GUILESS_MAIN(TestTraining)
#include "tst_training.moc"
