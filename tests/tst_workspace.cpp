// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Op workspaces planned like any other buffer: the buffers makeProblem adds, the size both
// executors use, the plan check with workspaces in the arena (every planner), a workspace placed
// over a live tensor caught, scratch and per-step memory, strategies and training keeping them,
// and the command line.
#include "clirun.h"
#include "graphbuilder.h"

#include "exec/executor.h"
#include "exec/layout.h"
#include "exec/workspace.h"
#include "io/planjson.h"
#include "onnx/onnximport.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "strategies/strategy.h"
#include "strategies/training.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace {

const fs::path kTestData = "/usr/share/libonnx-testdata/data";

core::Attribute ints(std::vector<std::int64_t> values)
{
    core::Attribute a;
    a.ints = std::move(values);
    return a;
}

// x -> conv3x3 (pad 1) -> a -> conv1x1 (direct) -> b -> conv3x3 stride 2 -> y.
// Columns: 2*3*3 x 25 = 450 floats; none; 4*3*3 x 9 = 324 floats.
core::Workload smallConvNet(bool workspaces, core::Bytes alignment = 256)
{
    GraphBuilder gb;
    const auto x = gb.tensor("x", { 1, 2, 5, 5 }, core::TensorKind::Input);
    const auto w1 = gb.tensor("w1", { 4, 2, 3, 3 }, core::TensorKind::Weight);
    const auto a = gb.tensor("a", { 1, 4, 5, 5 });
    const auto w2 = gb.tensor("w2", { 4, 4, 1, 1 }, core::TensorKind::Weight);
    const auto b = gb.tensor("b", { 1, 4, 5, 5 });
    const auto w3 = gb.tensor("w3", { 3, 4, 3, 3 }, core::TensorKind::Weight);
    const auto y = gb.tensor("y", { 1, 3, 3, 3 }, core::TensorKind::Output);
    gb.op("c1", "Conv", { x, w1 }, { a })->attributes["pads"] = ints({ 1, 1, 1, 1 });
    gb.op("c2", "Conv", { a, w2 }, { b });
    auto* c3 = gb.op("c3", "Conv", { b, w3 }, { y });
    c3->attributes["strides"] = ints({ 2, 2 });
    c3->attributes["pads"] = ints({ 1, 1, 1, 1 });
    core::LoadOptions options;
    options.alignment = alignment;
    options.workspaces = workspaces;
    auto w = core::workloadFromGraph(std::move(gb.g), "small-conv", options);
    if (!w)
        qFatal("%s", w.error().message.c_str());
    return std::move(*w);
}

core::Workload load(const std::string& spec, bool workspaces)
{
    core::LoadOptions options;
    options.workspaces = workspaces;
    auto w = core::loadWorkload(spec, options);
    if (!w)
        qFatal("%s: %s", spec.c_str(), w.error().message.c_str());
    return std::move(*w);
}

std::vector<int> workspaceBuffers(const core::Workload& w)
{
    std::vector<int> result;
    for (std::size_t b = 0; b < w.problem.buffers.size(); ++b)
        if (w.problem.buffers[b].kind == core::TensorKind::Workspace)
            result.push_back(int(b));
    return result;
}

core::Plan planWith(const char* planner, const core::PlanProblem& problem)
{
    auto plan = core::runPlanner(*core::plannerByName(planner), problem);
    if (!plan)
        qFatal("%s", plan.error().message.c_str());
    if (!core::validatePlan(problem, *plan).ok())
        qFatal("%s: invalid plan", planner);
    return *plan;
}

core::Measurement run(const core::Workload& w, const core::Plan& plan, const core::RunOptions& options = {})
{
    auto m = core::runOnCpu(*w.graph, w.schedule, w.problem, plan, w.bufferTensor, options);
    if (!m)
        qFatal("%s", m.error().message.c_str());
    return std::move(*m);
}

} // namespace

class TestWorkspace : public QObject {
    Q_OBJECT
private slots:
    // The workspaces here are the own kernels' im2col columns (tst_onednn covers oneDNN's scratchpads).
    void initTestCase() { core::setCpuKernels(core::CpuKernels::Own); }
    void problemHasWorkspaceBuffers();
    void offByDefault();
    void planCheck_data();
    void planCheck();
    void sameOutputsAsScratch();
    void overlapCaught();
    void scratchAndStepBytes();
    void perTensorAllocatesAtItsStep();
    void malformedWorkspaceRejected();
    void strategiesKeepWorkspaces();
    void trainingKeepsWorkspaces();
    void planJsonListsWorkspaces();
    void cliPlanAndErrors();
    void cliRunReportsWorkspaces();
};

void TestWorkspace::problemHasWorkspaceBuffers()
{
    const auto w = smallConvNet(true);
    const auto& g = *w.graph;
    QCOMPARE(core::opWorkspaceBytes(g, g.ops[0]), core::Bytes(450 * 4));
    QCOMPARE(core::opWorkspaceBytes(g, g.ops[1]), core::Bytes(0)); // 1x1, stride 1, no pads: the GEMM reads the input
    QCOMPARE(core::opWorkspaceBytes(g, g.ops[2]), core::Bytes(324 * 4));
    const auto ws = workspaceBuffers(w);
    QCOMPARE(ws.size(), std::size_t(2));
    QCOMPARE(w.bufferTensor.size(), w.problem.buffers.size());
    QCOMPARE(w.bufferOp.size(), w.problem.buffers.size());
    QVERIFY(w.workspaces);
    const struct {
        const char* name;
        core::OpIndex op;
        core::Step step;
        core::Bytes bytes;
    } expected[] = { { "c1 workspace", 0, 0, 1800 }, { "c3 workspace", 2, 2, 1296 } };
    for (std::size_t i = 0; i < ws.size(); ++i) {
        const auto& b = w.problem.buffers[std::size_t(ws[i])];
        QCOMPARE(b.name, std::string(expected[i].name));
        QVERIFY(b.lifetime == (core::Lifetime { expected[i].step, expected[i].step + 1 }));
        QCOMPARE(b.size, core::alignUp(expected[i].bytes, 256));
        QCOMPARE(b.size, core::alignUp(core::opWorkspaceBytes(g, g.ops[std::size_t(expected[i].op)]), 256));
        QVERIFY(b.tensors.empty());
        QCOMPARE(w.bufferTensor[std::size_t(ws[i])], core::TensorIndex(-1));
        QCOMPARE(w.bufferOp[std::size_t(ws[i])], expected[i].op);
    }
    for (std::size_t b = 0; b < w.problem.buffers.size(); ++b)
        if (w.problem.buffers[b].kind != core::TensorKind::Workspace) {
            QVERIFY(w.bufferTensor[b] >= 0);
            QCOMPARE(w.bufferOp[b], core::OpIndex(-1));
        }
    QCOMPARE(core::kindName(core::TensorKind::Workspace), std::string_view("workspace"));
    QVERIFY(core::parseKind("workspace") == core::TensorKind::Workspace);
    for (const auto& planner : core::planners()) {
        const auto plan = core::runPlanner(*planner, w.problem);
        QVERIFY2(plan, planner->name().data());
        const auto check = core::validatePlan(w.problem, *plan);
        QVERIFY2(check.ok(), check.message.c_str());
    }
    // Alignment 1: the exact bytes.
    const auto exact = smallConvNet(true, 1);
    QCOMPARE(exact.problem.buffers[std::size_t(workspaceBuffers(exact)[0])].size, core::Bytes(1800));
}

void TestWorkspace::offByDefault()
{
    for (const char* spec : { "example:cnn", "example:transformer" }) {
        const auto plain = load(spec, false);
        const auto with = load(spec, true);
        QVERIFY(!plain.workspaces);
        QVERIFY(workspaceBuffers(plain).empty());
        QVERIFY(std::all_of(plain.bufferOp.begin(), plain.bufferOp.end(), [](core::OpIndex o) { return o == -1; }));
        // The tensors' buffers come first and are the same with workspaces on.
        QVERIFY(with.problem.buffers.size() >= plain.problem.buffers.size());
        for (std::size_t b = 0; b < plain.problem.buffers.size(); ++b) {
            QCOMPARE(with.problem.buffers[b].name, plain.problem.buffers[b].name);
            QCOMPARE(with.bufferTensor[b], plain.bufferTensor[b]);
        }
    }
    // The arena numbers without the option are what they were: cnn's lower bound is its 6.12 MiB.
    QCOMPARE(core::lowerBound(load("example:cnn", false).problem), core::Bytes(6422528));
    QCOMPARE(workspaceBuffers(load("example:cnn", true)).size(), std::size_t(20));
    QVERIFY(workspaceBuffers(load("example:transformer", true)).empty()); // no Conv
}

void TestWorkspace::planCheck_data()
{
    QTest::addColumn<QString>("model");
    QTest::newRow("small-conv") << QString();
    QTest::newRow("example:cnn") << QStringLiteral("example:cnn");
    const auto mobilenet = fs::path(MEMPLAN_SOURCE_DIR) / "tests" / "models" / "mobilenet_v2.onnx";
    if (fs::exists(mobilenet))
        QTest::newRow("mobilenet_v2") << QString::fromStdString(mobilenet.string());
    if (fs::exists(kTestData / "pytorch-converted"))
        for (const char* name : { "test_Conv2d", "test_Conv2d_groups", "test_Conv2d_dilated", "test_Conv2d_strided", "test_Conv1d_pad2",
                 "test_Conv2d_depthwise_padded", "test_ConvTranspose2d", "test_ConvTranspose2d_no_bias" })
            if (fs::exists(kTestData / "pytorch-converted" / name / "model.onnx"))
                QTest::newRow(name) << QString::fromStdString((kTestData / "pytorch-converted" / name / "model.onnx").string());
}

// Every planner's arena run with workspaces in the arena gives the no-reuse run's outputs bit for bit,
// and the arena run measures exactly the predicted live bytes at every step.
void TestWorkspace::planCheck()
{
    QFETCH(QString, model);
    const auto w = model.isEmpty() ? smallConvNet(true) : load(model.toStdString(), true);
    QVERIFY(!workspaceBuffers(w).empty());
    core::RunOptions options;
    if (!model.isEmpty() && !model.startsWith(QLatin1String("example:"))) {
        auto data = core::loadTensorData(model.toStdString(), *w.graph);
        QVERIFY2(data, data ? "" : data.error().message.c_str());
        options.modelData = std::make_shared<const core::ModelData>(std::move(*data));
    }
    const auto reference = run(w, core::noReusePlan(w.problem), options);
    QCOMPARE(reference.opsSynthetic, 0);
    std::vector<std::vector<core::Bytes>> ran;
    for (const auto& planner : core::planners()) {
        core::PlanOptions planOptions;
        planOptions.timeLimitSeconds = 0.2;
        const auto plan = core::runPlanner(*planner, w.problem, {}, planOptions);
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        QVERIFY(core::validatePlan(w.problem, *plan).ok());
        if (std::find(ran.begin(), ran.end(), plan->offsets) != ran.end())
            continue;
        ran.push_back(plan->offsets);
        const auto m = run(w, *plan, options);
        const auto mismatch = core::compareOutputs(*w.graph, reference.outputs, m.outputs);
        QVERIFY2(mismatch.empty(), (std::string(planner->name()) + ": " + mismatch).c_str());
        QVERIFY(m.stepBytes == core::liveBytesCurve(w.problem));
    }
    if (model == QStringLiteral("example:cnn"))
        QVERIFY(ran.size() >= 2); // the planners do differ somewhere
}

// The columns in a planned workspace or in kernel scratch: the same bits (one code path).
void TestWorkspace::sameOutputsAsScratch()
{
    for (const char* spec : { "example:cnn" }) {
        const auto plain = load(spec, false);
        const auto with = load(spec, true);
        const auto a = run(plain, planWith("greedy-by-size", plain.problem));
        const auto b = run(with, planWith("greedy-by-size", with.problem));
        QVERIFY(core::compareOutputs(*plain.graph, a.outputs, b.outputs).empty());
        QCOMPARE(b.opsReal, a.opsReal);
    }
}

// A workspace placed over a tensor its op still needs: the validator reports it, and the run's
// outputs differ from the no-reuse run's (the columns overwrite the Conv's own input).
void TestWorkspace::overlapCaught()
{
    const auto transposed = kTestData / "pytorch-converted" / "test_ConvTranspose2d" / "model.onnx";
    std::vector<std::string> specs { "", "example:cnn" };
    if (fs::exists(transposed))
        specs.push_back(transposed.string()); // a ConvTranspose's workspace (transposed weights, columns)
    for (const auto& name : specs) {
        const char* spec = name.c_str();
        const auto w = *spec ? load(spec, true) : smallConvNet(true);
        const auto& g = *w.graph;
        const auto plan = planWith("greedy-by-size", w.problem);
        bool tried = false;
        for (int ws : workspaceBuffers(w)) {
            const auto op = g.ops[std::size_t(w.bufferOp[std::size_t(ws)])];
            // The buffer of the Conv's input x, which the op reads while it fills the columns.
            const auto victim = std::find(w.bufferTensor.begin(), w.bufferTensor.end(), op.inputs[0]) - w.bufferTensor.begin();
            if (victim >= core::Bytes(w.bufferTensor.size()))
                continue;
            auto bad = plan;
            bad.offsets[std::size_t(ws)] = plan.offsets[std::size_t(victim)];
            bad.arenaSize = std::max(bad.arenaSize, bad.offsets[std::size_t(ws)] + w.problem.buffers[std::size_t(ws)].size);
            const auto validation = core::validatePlan(w.problem, bad);
            QCOMPARE(validation.check, core::PlanCheck::Overlap);
            const auto check = core::checkPlanByRunning(g, w.schedule, w.problem, bad, w.bufferTensor, {});
            QVERIFY2(check, check ? "" : check.error().message.c_str());
            QVERIFY2(!check->outputsMatch, (op.name + ": a workspace over its op's input went unnoticed").c_str());
            qInfo("%s: workspace of '%s' over '%s' caught: %s", *spec ? spec : "small-conv", op.name.c_str(),
                w.problem.buffers[std::size_t(victim)].name.c_str(), check->mismatch.c_str());
            tried = true;
            break;
        }
        QVERIFY(tried);
        const auto good = core::checkPlanByRunning(g, w.schedule, w.problem, plan, w.bufferTensor, {});
        QVERIFY(good && good->outputsMatch);
    }
}

// Planned columns leave kernel scratch; the measured bytes at a Conv's step include its workspace.
void TestWorkspace::scratchAndStepBytes()
{
    const auto plain = load("example:cnn", false);
    const auto with = load("example:cnn", true);
    const auto a = run(plain, planWith("greedy-by-size", plain.problem));
    const auto b = run(with, planWith("greedy-by-size", with.problem));
    core::Bytes largest = 0;
    for (const auto& op : with.graph->ops)
        largest = std::max(largest, core::opWorkspaceBytes(*with.graph, op));
    QVERIFY(largest > 0);
    // cnn's other scratch user (the classifier Gemm's transposed weight) sits in the second slot.
    QCOMPARE(a.scratchBytes - b.scratchBytes, largest);
    QCOMPARE(b.peakBytes, b.arenaBytes + b.weightsBytes + b.scratchBytes);
    QVERIFY(b.stepBytes == core::liveBytesCurve(with.problem));
    for (int ws : workspaceBuffers(with)) {
        const auto& buffer = with.problem.buffers[std::size_t(ws)];
        const auto s = std::size_t(buffer.lifetime.start);
        QCOMPARE(b.stepBytes[s] - a.stepBytes[s], buffer.size); // the same tensor buffers plus the workspace
    }
}

void TestWorkspace::perTensorAllocatesAtItsStep()
{
    const auto w = load("example:cnn", true);
    const auto plan = planWith("greedy-by-size", w.problem);
    core::RunOptions options;
    options.allocation = core::Allocation::PerTensor;
    const auto reference = run(w, core::noReusePlan(w.problem));
    const auto m = run(w, plan, options);
    QVERIFY(core::compareOutputs(*w.graph, reference.outputs, m.outputs).empty());
    const auto predicted = core::liveBytesCurve(w.problem);
    for (int ws : workspaceBuffers(w)) {
        const auto s = std::size_t(w.problem.buffers[std::size_t(ws)].lifetime.start);
        // malloc holds at least every live buffer at that step, the workspace among them.
        QVERIFY2(m.stepBytes[s] >= predicted[s], qPrintable(QStringLiteral("step %1: %2 < %3").arg(s).arg(m.stepBytes[s]).arg(predicted[s])));
    }
    // The largest workspace (conv1's 7 MiB) is freed after its step: the next step holds less.
    const auto& first = w.problem.buffers[std::size_t(workspaceBuffers(w)[0])];
    const auto s = std::size_t(first.lifetime.start);
    QVERIFY(m.stepBytes[s + 1] + first.size / 2 < m.stepBytes[s]);
}

void TestWorkspace::malformedWorkspaceRejected()
{
    const auto w = smallConvNet(true);
    const int ws = workspaceBuffers(w)[0];
    auto stretched = w.problem;
    stretched.buffers[std::size_t(ws)].lifetime.end += 1; // two steps: not an op's workspace
    auto r = core::runOnCpu(*w.graph, w.schedule, stretched, core::noReusePlan(stretched), w.bufferTensor, {});
    QVERIFY(!r);
    QVERIFY2(QString::fromStdString(r.error().message).contains(QStringLiteral("c1 workspace")), r.error().message.c_str());
    auto small = w.problem;
    small.buffers[std::size_t(ws)].size = 256; // smaller than the columns
    r = core::runOnCpu(*w.graph, w.schedule, small, core::noReusePlan(small), w.bufferTensor, {});
    QVERIFY(!r);
    QVERIFY2(r.error().message.find("needs 1800 bytes") != std::string::npos, r.error().message.c_str());
    auto notWorkspace = w.problem;
    notWorkspace.buffers[std::size_t(ws)].kind = core::TensorKind::Activation; // no tensor, not a workspace
    r = core::runOnCpu(*w.graph, w.schedule, notWorkspace, core::noReusePlan(notWorkspace), w.bufferTensor, {});
    QVERIFY(!r);
    // The placement gives a workspace no tensor: every tensor sits in its own buffer or the side region.
    const auto placement = core::exec::placeTensors(*w.graph, w.problem, core::noReusePlan(w.problem), w.bufferTensor, {});
    QVERIFY(placement);
    for (const auto& p : placement->tensors)
        QVERIFY(p.buffer != ws);
    // JSON graphs cannot declare a tensor of kind workspace.
    QTemporaryDir dir;
    const auto path = dir.filePath(QStringLiteral("g.json")).toStdString();
    {
        std::ofstream out(path);
        out << R"({"tensors":[{"name":"x","shape":[4],"kind":"workspace"}],"ops":[]})";
    }
    QVERIFY(!core::loadWorkload(path, {}));
}

// Strategies rebuild the problem with the workspaces of the transformed schedule.
void TestWorkspace::strategiesKeepWorkspaces()
{
    const auto w = load("example:cnn", true);
    core::RunOptions options;
    const auto original = run(w, core::noReusePlan(w.problem));
    for (const auto& names : std::vector<std::vector<std::string>> { { "reorder" }, { "recompute" }, { "fuse" },
             { "fuse", "reorder", "recompute", "swap", "inplace" } }) {
        const auto applied = core::applyStrategies(w, names, {});
        QVERIFY2(applied, applied ? "" : applied.error().message.c_str());
        const auto& t = applied->workload;
        QVERIFY(t.workspaces);
        QCOMPARE(t.bufferOp.size(), t.problem.buffers.size());
        const auto ws = workspaceBuffers(t);
        QVERIFY(!ws.empty());
        for (int b : ws) {
            const auto& op = t.graph->ops[std::size_t(t.bufferOp[std::size_t(b)])];
            // A Conv, or a fused op holding one: its body's Convs share the largest of their columns.
            QVERIFY(op.type == "Conv" || std::any_of(op.body.begin(), op.body.end(), [](const core::Op& part) { return part.type == "Conv"; }));
            QCOMPARE(t.problem.buffers[std::size_t(b)].size, core::alignUp(core::opWorkspaceBytes(*t.graph, op), 256));
            QCOMPARE(t.schedule.order[std::size_t(t.problem.buffers[std::size_t(b)].lifetime.start)], t.bufferOp[std::size_t(b)]);
        }
        const auto before = workspaceBuffers(w).size();
        if (names == std::vector<std::string> { "reorder" })
            QCOMPARE(ws.size(), before);
        if (names == std::vector<std::string> { "recompute" })
            QVERIFY(ws.size() >= before); // a recomputed Conv gets its own workspace at its new step
        if (names.front() == "fuse") {
            QVERIFY(ws.size() <= before);
            QVERIFY(std::any_of(ws.begin(), ws.end(), [&](int b) { return !t.graph->ops[std::size_t(t.bufferOp[std::size_t(b)])].body.empty(); }));
        }
        // The reports' bounds count the workspaces, as the plan does.
        QCOMPARE(applied->reports.front().lowerBoundBefore, core::lowerBound(w.problem));
        QCOMPARE(applied->reports.back().lowerBoundAfter, core::lowerBound(t.problem));
        const auto plan = planWith("greedy-by-size", t.problem);
        const auto m = run(t, plan, options);
        QVERIFY2(core::compareOutputs(*t.graph, original.outputs, m.outputs).empty(), names.front().c_str());
        if (names.size() == 1)
            QVERIFY(m.stepBytes == core::liveBytesCurve(t.problem));
        // No Conv takes its columns from kernel scratch: what is left is the fused ops' internal
        // tensors and the classifier Gemm's transposed weight (the plain cnn run's 1.95 MiB).
        if (names == std::vector<std::string> { "fuse" }) {
            const auto plainFused = core::applyStrategies(load("example:cnn", false), names, {});
            QVERIFY(plainFused);
            const auto& p = plainFused->workload;
            const auto withScratch = run(p, planWith("greedy-by-size", p.problem));
            core::Bytes largest = 0;
            for (const auto& op : t.graph->ops)
                largest = std::max(largest, core::opWorkspaceBytes(*t.graph, op));
            QCOMPARE(withScratch.scratchBytes - m.scratchBytes, largest);
        }
    }
}

void TestWorkspace::trainingKeepsWorkspaces()
{
    const auto w = load("example:cnn", true);
    const auto training = core::appendBackwardPass(w, {});
    QVERIFY2(training, training ? "" : training.error().message.c_str());
    QVERIFY(training->workspaces);
    QCOMPARE(workspaceBuffers(*training).size(), workspaceBuffers(w).size()); // forward Convs only
    QCOMPARE(training->bufferOp.size(), training->problem.buffers.size());
    QVERIFY(core::validatePlan(training->problem, planWith("greedy-by-size", training->problem)).ok());
}

void TestWorkspace::planJsonListsWorkspaces()
{
    const auto w = smallConvNet(true);
    const auto plan = planWith("greedy-by-size", w.problem);
    const auto doc = QJsonDocument::fromJson(QByteArray::fromStdString(core::exportPlanJson(w, plan))).object();
    int found = 0;
    for (const auto& item : doc.value(QStringLiteral("buffers")).toArray()) {
        const auto o = item.toObject();
        if (o.value(QStringLiteral("kind")).toString() != QStringLiteral("workspace")) {
            QVERIFY(!o.contains(QStringLiteral("op")));
            continue;
        }
        ++found;
        QVERIFY(o.value(QStringLiteral("tensors")).toArray().isEmpty());
        const auto op = o.value(QStringLiteral("op")).toString();
        QCOMPARE(o.value(QStringLiteral("name")).toString(), op + QStringLiteral(" workspace"));
        QCOMPARE(o.value(QStringLiteral("end")).toInt() - o.value(QStringLiteral("start")).toInt(), 1);
    }
    QCOMPARE(found, 2);
}

void TestWorkspace::cliPlanAndErrors()
{
    QTemporaryDir dir;
    const auto json = dir.filePath(QStringLiteral("plan.json"));
    auto r = memplan({ QStringLiteral("plan"), QStringLiteral("example:cnn"), QStringLiteral("--workspaces"), QStringLiteral("--kernels"),
        QStringLiteral("own"), QStringLiteral("--json"), json });
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QStringLiteral("workspaces       20 op workspace buffers, 56.0 MiB in all")), qPrintable(r.out));
    QFile file(json);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto buffers = QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("buffers")).toArray();
    int workspaces = 0;
    for (const auto& b : buffers)
        if (b.toObject().value(QStringLiteral("kind")).toString() == QStringLiteral("workspace")) {
            ++workspaces;
            QVERIFY(b.toObject().contains(QStringLiteral("op")));
        }
    QCOMPARE(workspaces, 20);
    r = memplan({ QStringLiteral("plan"), QStringLiteral("example:cnn") });
    QVERIFY(r.exitCode == 0 && !r.out.contains(QStringLiteral("workspace")));

    r = memplan({ QStringLiteral("compare"), QStringLiteral("example:cnn"), QStringLiteral("--workspaces"), QStringLiteral("--kernels"),
        QStringLiteral("own") });
    QVERIFY2(r.exitCode == 0 && r.out.contains(QStringLiteral("70 buffers")) && r.out.contains(QStringLiteral("of them 20 op workspace buffers")),
        qPrintable(r.out + r.err));

    // An allocation problem has no ops: exit 1, one line naming the option.
    r = memplan({ QStringLiteral("plan"), QStringLiteral("example:hotel"), QStringLiteral("--workspaces") });
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.startsWith(QStringLiteral("memplan: plan: --workspaces: example:hotel is an allocation problem")), qPrintable(r.err));
    QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
    // Chip stages plan tensors only: a usage error.
    r = memplan({ QStringLiteral("plan"), QStringLiteral("example:cnn"), QStringLiteral("--workspaces"), QStringLiteral("--chips"), QStringLiteral("2") });
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(QStringLiteral("--chips does not combine with --workspaces")), qPrintable(r.err));
    // export takes no --workspaces.
    r = memplan({ QStringLiteral("export"), QStringLiteral("example:cnn"), QStringLiteral("--workspaces"), QStringLiteral("--csv"),
        dir.filePath(QStringLiteral("p.csv")) });
    QCOMPARE(r.exitCode, 2);
}

void TestWorkspace::cliRunReportsWorkspaces()
{
    QTemporaryDir dir;
    const auto json = dir.filePath(QStringLiteral("run.json"));
    const auto r = memplan({ QStringLiteral("run"), QStringLiteral("example:cnn"), QStringLiteral("--workspaces"), QStringLiteral("--kernels"),
        QStringLiteral("own"), QStringLiteral("--repeat"),
        QStringLiteral("1"), QStringLiteral("--json"), json });
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QStringLiteral("workspaces  20 op workspace buffers")), qPrintable(r.out));
    QVERIFY(r.out.contains(QStringLiteral("arena bit-identical, per-tensor bit-identical")));
    const QString scratchHint = QStringLiteral("is outside the plan and the\n  predicted peak; --workspaces plans it");
    QVERIFY2(!r.out.contains(scratchHint), qPrintable(r.out));
    // Without --workspaces the Convs' columns (7.03 MiB, more than the 6.12 MiB arena) are scratch
    // the prediction leaves out, and the run says so.
    const auto plain = memplan({ QStringLiteral("run"), QStringLiteral("example:cnn"), QStringLiteral("--kernels"), QStringLiteral("own"),
        QStringLiteral("--repeat"), QStringLiteral("1") });
    QVERIFY2(plain.exitCode == 0, qPrintable(plain.err));
    QVERIFY2(plain.out.contains(QStringLiteral("kernel scratch: the ops' temporary memory (7.03 MiB, 115% of the arena) ") + scratchHint),
        qPrintable(plain.out));
    QFile file(json);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto o = QJsonDocument::fromJson(file.readAll()).object();
    QCOMPARE(o.value(QStringLiteral("workspace_buffers")).toInt(), 20);
    QCOMPARE(o.value(QStringLiteral("step_bytes")).toArray(), o.value(QStringLiteral("predicted_step_bytes")).toArray());
    QCOMPARE(o.value(QStringLiteral("step_peak_bytes")).toInteger(), o.value(QStringLiteral("lower_bound_bytes")).toInteger());
}

QTEST_GUILESS_MAIN(TestWorkspace)
#include "tst_workspace.moc"
