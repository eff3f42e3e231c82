// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Captured training steps (graph/capture.h): the JSON graph's categories, modules, phases and capture
// map, their regions, the peak breakdown, --grads-in-arena, and the strategies on a captured graph.
#include "cost/opcost.h"
#include "graph/capture.h"
#include "io/breakdown.h"
#include "io/jsongraph.h"
#include "io/planjson.h"
#include "io/workload.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "strategies/strategy.h"
#include "strategies/training.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <sstream>

using namespace core;

namespace {
const std::string kFixture = MEMPLAN_SOURCE_DIR "/tests/data/captured_mlp.json";

Workload load(const std::string& spec)
{
    auto workload = loadWorkload(spec, {});
    if (!workload)
        qFatal("%s", workload.error().message.c_str());
    return std::move(*workload);
}

std::string fixtureText()
{
    std::ifstream in(kFixture);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Plans with the default planner and checks the plan with the validator.
Plan validPlan(const Workload& w)
{
    auto plan = runPlanner(*plannerByName(kDefaultPlanner), w.problem);
    if (!plan)
        qFatal("%s", plan.error().message.c_str());
    const auto check = validatePlan(w.problem, *plan);
    if (!check.ok())
        qFatal("invalid plan for %s: %s", w.source.c_str(), check.message.c_str());
    return std::move(*plan);
}

const Region* findRegion(const Workload& w, const std::string& name)
{
    const auto it = std::find_if(w.regions.begin(), w.regions.end(), [&](const Region& r) { return r.name == name; });
    return it == w.regions.end() ? nullptr : &*it;
}

Bytes regionBytes(const Workload& w)
{
    Bytes sum = 0;
    for (const auto& r : w.regions)
        sum += r.size;
    return sum;
}

// The fixture's text with the first `from` replaced by `to`, and the line it is on.
std::pair<std::string, int> broken(const std::string& from, const std::string& to)
{
    auto text = fixtureText();
    const auto at = text.find(from);
    if (at == std::string::npos)
        qFatal("fixture has no %s", from.c_str());
    text.replace(at, from.size(), to);
    return { text, 1 + int(std::count(text.begin(), text.begin() + std::ptrdiff_t(at), '\n')) };
}
} // namespace

class TestCaptured : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void parseAndRoundTrip();
    void refusesBadFields_data();
    void refusesBadFields();
    void regionsByCategory();
    void phasesAndBackwardStart();
    void costFromFlops();
    void peakBreakdownSums();
    void gradsInArena();
    void strategiesOnCapturedGraph_data();
    void strategiesOnCapturedGraph();
    void trainingRefused();
};

void TestCaptured::parseAndRoundTrip()
{
    const auto graph = importJsonGraph(kFixture);
    QVERIFY2(graph, graph ? "" : graph.error().message.c_str());
    const auto& g = *graph;
    QCOMPARE(g.capture.at("framework"), std::string("torch"));
    QCOMPARE(g.capture.at("batch"), std::string("4"));
    QCOMPARE(g.capture.at("lr"), std::string("0.01"));
    const auto w1 = g.findTensor("w1");
    QVERIFY(w1);
    QCOMPARE(g.tensors[*w1].category, std::string("parameter"));
    QCOMPARE(g.tensors[*w1].module, std::string("fc1"));
    QCOMPARE(tensorCategory(g.tensors[*w1]), std::optional(TensorCategory::Parameter));
    const auto token = g.findTensor("mom_w1@1");
    QVERIFY(token);
    QCOMPARE(g.tensors[*token].size, Bytes(0));
    QVERIFY(isVersionToken(g.tensors[*token]));
    QCOMPARE(g.ops[0].domain, std::string(kAtenDomain));
    QCOMPARE(g.ops[0].phase, std::string("forward"));
    QCOMPARE(g.ops[0].module, std::string("fc1"));
    QCOMPARE(g.ops[0].attributes.at("overload").text, std::string("default"));
    QCOMPARE(g.ops[0].attributes.at("flops").ints, std::vector<std::int64_t> { 1024 });
    QVERIFY(hasCategories(g));

    const auto exported = exportJsonGraph(g);
    const auto back = parseJsonGraph(exported, "exported.json");
    QVERIFY2(back, back ? "" : (back.error().message + "\n" + exported).c_str());
    QCOMPARE(back->capture, g.capture);
    QVERIFY(exported.find("\"batch\":4") != std::string::npos); // numbers stay numbers
    QVERIFY(exported.find("\"torch_version\":\"2.3.0\"") != std::string::npos);
    for (std::size_t t = 0; t < g.tensors.size(); ++t) {
        QCOMPARE(back->tensors[t].category, g.tensors[t].category);
        QCOMPARE(back->tensors[t].module, g.tensors[t].module);
        QCOMPARE(back->tensors[t].size, g.tensors[t].size);
    }
    for (std::size_t o = 0; o < g.ops.size(); ++o) {
        QCOMPARE(back->ops[o].phase, g.ops[o].phase);
        QCOMPARE(back->ops[o].module, g.ops[o].module);
        QVERIFY(back->ops[o].attributes == g.ops[o].attributes);
    }
    QCOMPARE(exportJsonGraph(*back), exported);
}

void TestCaptured::refusesBadFields_data()
{
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::addColumn<QString>("needle");
    QTest::newRow("category") << QStringLiteral(R"("category": "saved")") << QStringLiteral(R"("category": "activations")")
                              << QStringLiteral("'a1': unknown category 'activations' (expected input, parameter");
    QTest::newRow("category not a string") << QStringLiteral(R"("category": "gradient")") << QStringLiteral(R"("category": 3)")
                                           << QStringLiteral("'g_w2': unknown category an integer");
    QTest::newRow("phase") << QStringLiteral(R"("phase": "backward")") << QStringLiteral(R"("phase": "backprop")")
                           << QStringLiteral("'ones_like': unknown phase 'backprop' (expected forward, backward or optimizer)");
    QTest::newRow("module") << QStringLiteral(R"("module": "act")") << QStringLiteral(R"("module": ["act"])")
                            << QStringLiteral("'a1': \"module\" must be a string");
    QTest::newRow("capture value") << QStringLiteral(R"("batch": 4)") << QStringLiteral(R"("batch": [4])")
                                   << QStringLiteral("capture: 'batch' must be a string or a number, found a list");
}

void TestCaptured::refusesBadFields()
{
    QFETCH(QString, from);
    QFETCH(QString, to);
    QFETCH(QString, needle);
    const auto [text, line] = broken(from.toStdString(), to.toStdString());
    const auto graph = parseJsonGraph(text, "bad.json");
    QVERIFY(!graph);
    const auto message = QString::fromStdString(graph.error().message);
    QVERIFY2(message.startsWith(QStringLiteral("bad.json:%1: ").arg(line)), qPrintable(message));
    QVERIFY2(message.contains(needle), qPrintable(message));
}

void TestCaptured::regionsByCategory()
{
    const auto w = load(kFixture);
    const auto* parameters = findRegion(w, "parameters");
    const auto* gradients = findRegion(w, "gradients");
    const auto* state = findRegion(w, "optimizer state");
    QVERIFY(parameters && gradients && state);
    // w1 16x8, b1 16, w2 4x16, b2 4 float32: 512 + 64 + 256 + 16 bytes; tokens hold nothing and do not count.
    for (const auto* r : { parameters, gradients, state }) {
        QCOMPARE(r->size, Bytes(848));
        QCOMPARE(r->tensorCount, 4);
    }
    QVERIFY(!findRegion(w, "weights") && !findRegion(w, "persistent") && !findRegion(w, "buffers"));
    const auto plan = validPlan(w);
    const auto json = nlohmann::json::parse(exportPlanJson(w, plan));
    std::vector<std::string> names;
    for (const auto& r : json["regions"])
        names.push_back(r["name"].get<std::string>());
    QCOMPARE(names, (std::vector<std::string> { "parameters", "gradients", "optimizer state" }));
    QCOMPARE(json["regions"][0]["tensors"].get<std::vector<std::string>>(), (std::vector<std::string> { "w1", "b1", "w2", "b2" }));
    QCOMPARE(json["regions"][0]["size_bytes"].get<Bytes>(), Bytes(848));
    // Zero-byte tokens of activations get no buffer; every buffer has a size.
    for (const auto& b : w.problem.buffers)
        QVERIFY(b.size > 0);
}

void TestCaptured::phasesAndBackwardStart()
{
    const auto w = load(kFixture);
    const auto phases = phaseRanges(*w.graph, w.schedule);
    QCOMPARE(phases.size(), std::size_t(3));
    QCOMPARE(phases[0].name, std::string("forward"));
    QCOMPARE((std::pair { phases[0].first, phases[0].last }), (std::pair { Step(0), Step(3) }));
    QCOMPARE((std::pair { phases[1].first, phases[1].last }), (std::pair { Step(4), Step(11) }));
    QCOMPARE(phases[2].name, std::string("optimizer"));
    QCOMPARE((std::pair { phases[2].first, phases[2].last }), (std::pair { Step(12), Step(19) }));
    QCOMPARE(backwardStart(*w.graph, w.schedule), Step(4));
    const auto plan = validPlan(w);
    const auto json = nlohmann::json::parse(exportPlanJson(w, plan));
    QCOMPARE(json["phases"][1]["name"].get<std::string>(), std::string("backward"));
    QCOMPARE(json["phases"][1]["start"].get<int>(), 4);
    QCOMPARE(json["phases"][1]["end"].get<int>(), 12); // half-open, as a buffer's
    // Without phases the first backward step is the loss-gradient seed's, and an inference graph has none.
    const auto inference = load("example:cnn");
    QCOMPARE(backwardStart(*inference.graph, inference.schedule), inference.schedule.steps());
    QVERIFY(phaseRanges(*inference.graph, inference.schedule).empty());
}

void TestCaptured::costFromFlops()
{
    const auto w = load(kFixture);
    const auto& g = *w.graph;
    const auto op = [&](const char* name) {
        return *std::find_if(g.ops.begin(), g.ops.end(), [&](const Op& o) { return o.name == name; });
    };
    const auto addmm = opCost(g, op("addmm"));
    QCOMPARE(addmm.flops, 1024.0);
    QCOMPARE(addmm.bytesRead, 64.0 + 128 + 512); // b1, x, w1
    QCOMPARE(addmm.bytesWritten, 256.0);
    QVERIFY(costKnown(op("addmm")));
    QVERIFY(!costKnown(op("ones_like")));
    QCOMPARE(opCost(g, op("ones_like")).flops, 0.0);
    QCOMPARE(opCost(g, op("ones_like")).bytesRead, 4.0);
    QCOMPARE(opCost(g, op("sgd.w1")).bytesWritten, 0.0); // an in-place update writes a token
    const auto unknown = costUnknownOps(g, w.schedule);
    QCOMPARE(unknown.ops, 2);
    QCOMPARE(unknown.types, (std::vector<std::string> { "ones_like", "threshold_backward" }));
    QVERIFY(costKnown(Op { "relu", "Relu", "", {}, { 0 }, { 1 } })); // ONNX ops keep their rules
}

void TestCaptured::peakBreakdownSums()
{
    for (bool inArena : { false, true }) {
        auto w = load(kFixture);
        if (inArena)
            w = *gradientsInArena(w);
        validPlan(w);
        const auto live = liveBytesCurve(w.problem);
        const auto curve = categoryCurve(w);
        QCOMPARE(curve.size(), live.size());
        const Bytes regions = regionBytes(w);
        for (Step s = 0; s < w.problem.steps; ++s) {
            const auto b = peakBreakdown(w, s);
            QCOMPARE(b.total(), live[std::size_t(s)] + regions);
            QVERIFY(b.categories == curve[std::size_t(s)]);
            Bytes modules = 0;
            for (const auto& m : b.modules)
                modules += m.bytes;
            QCOMPARE(modules, b.total());
            QVERIFY(std::is_sorted(b.modules.begin(), b.modules.end(), [](const auto& x, const auto& y) { return x.bytes > y.bytes; }));
        }
        const auto peak = peakStep(w.problem);
        const auto b = peakBreakdown(w, peak);
        QCOMPARE(b.op, w.schedule.order[std::size_t(peak)]);
        QCOMPARE(b.categories[std::size_t(TensorCategory::Parameter)], Bytes(848));
        QCOMPARE(b.categories[std::size_t(TensorCategory::OptimizerState)], Bytes(848));
        QCOMPARE(b.categories[kOtherSlot], Bytes(0));
        if (!inArena)
            QCOMPARE(b.categories[std::size_t(TensorCategory::Gradient)], Bytes(848));
        const auto json = nlohmann::json::parse(exportPlanJson(w, validPlan(w)));
        const auto& breakdown = json["peak_breakdown"];
        QCOMPARE(breakdown["step"].get<Step>(), peak);
        QCOMPARE(breakdown["op"].get<std::string>(), w.graph->ops[std::size_t(b.op)].name);
        Bytes sum = 0;
        for (const auto& [name, bytes] : breakdown["categories"].items()) {
            QVERIFY2(parseCategory(name), name.c_str());
            sum += bytes.get<Bytes>();
        }
        QCOMPARE(sum, live[std::size_t(peak)] + regions);
        QCOMPARE(breakdown["modules"][0]["module"].get<std::string>(), b.modules[0].module);
        QCOMPARE(json["cost_unknown"]["ops"].get<int>(), 2);
    }
}

void TestCaptured::gradsInArena()
{
    const auto w = load(kFixture);
    const auto moved = gradientsInArena(w);
    QVERIFY2(moved, moved ? "" : moved.error().message.c_str());
    QVERIFY(!findRegion(*moved, "gradients"));
    QCOMPARE(moved->problem.buffers.size(), w.problem.buffers.size() + 4);
    // Each gradient is born at the op that computes it and lives to the end of the step.
    const auto prod = producers(*moved->graph);
    std::vector<Step> stepOf(moved->graph->ops.size());
    for (Step s = 0; s < moved->schedule.steps(); ++s)
        stepOf[std::size_t(moved->schedule.order[std::size_t(s)])] = s;
    int gradients = 0;
    for (std::size_t b = 0; b < moved->problem.buffers.size(); ++b) {
        const auto& tensor = moved->graph->tensors[std::size_t(moved->bufferTensor[b])];
        if (tensor.category != "gradient")
            continue;
        ++gradients;
        const auto& buffer = moved->problem.buffers[b];
        QCOMPARE(buffer.kind, TensorKind::Output);
        QCOMPARE(buffer.lifetime.start, stepOf[std::size_t(prod[std::size_t(moved->bufferTensor[b])])]);
        QCOMPARE(buffer.lifetime.end, moved->schedule.steps());
    }
    QCOMPARE(gradients, 4);
    // The peak stays before the first gradient (step 5); at the last step all four are in the arena.
    QCOMPARE(lowerBound(moved->problem), lowerBound(w.problem));
    QCOMPARE(liveBytesCurve(moved->problem).back(), liveBytesCurve(w.problem).back() + 512 + 3 * 256); // g_w1, g_w2, g_b1, g_b2 aligned
    validPlan(*moved);

    const auto refused = gradientsInArena(load("example:cnn"));
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::InvalidArgument);
    QVERIFY2(refused.error().message.find("--grads-in-arena: the graph has no persistent gradient tensors") != std::string::npos,
        refused.error().message.c_str());
}

void TestCaptured::strategiesOnCapturedGraph_data()
{
    QTest::addColumn<QString>("strategy");
    QTest::addColumn<bool>("checkpoint");
    QTest::addColumn<bool>("inArena");
    for (bool inArena : { false, true }) {
        const char* where = inArena ? "grads in arena" : "grads persistent";
        QTest::addRow("checkpoint, %s", where) << QStringLiteral("recompute") << true << inArena;
        QTest::addRow("recompute, %s", where) << QStringLiteral("recompute") << false << inArena;
        QTest::addRow("swap, %s", where) << QStringLiteral("swap") << false << inArena;
    }
}

void TestCaptured::strategiesOnCapturedGraph()
{
    QFETCH(QString, strategy);
    QFETCH(bool, checkpoint);
    QFETCH(bool, inArena);
    auto w = load(kFixture);
    if (inArena)
        w = *gradientsInArena(w);
    StrategyOptions options;
    options.alignment = w.problem.alignment;
    if (checkpoint)
        options.recomputePolicy = RecomputePolicy::Checkpoint; // k = round(sqrt(4 forward ops)) = 2
    const auto run = applyStrategies(w, { strategy.toStdString() }, options);
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    validPlan(run->workload);
    QVERIFY(lowerBound(run->workload.problem) <= lowerBound(w.problem));
    QCOMPARE(run->reports.size(), std::size_t(1));
    if (checkpoint) {
        // k = 2: y (addmm_1's output) is dropped and addmm_1 re-run before mse_loss_backward, costed by
        // its "flops" attribute (512, not the default rule's 16 output elements); the peak is where y is
        // read anyway, so the rewrite is not kept.
        const auto& details = run->reports[0].details;
        QCOMPARE(details, (std::vector<std::string> { "not applied: it would leave the lower bound at 1.75 KiB and add 512 extra FLOPs of "
                                                      "recomputation" }));
    }
    const auto& g = *run->workload.graph;
    for (const auto& op : g.ops) {
        // An in-place update is never re-run, and a clone runs in the phase of the op it precedes.
        QVERIFY2(!(op.name.find(".recompute") != std::string::npos && op.type == "add_"), op.name.c_str());
        QVERIFY2(!op.phase.empty(), op.name.c_str());
    }
    const auto phases = phaseRanges(g, run->workload.schedule);
    QCOMPARE(phases.size(), std::size_t(3));
    for (std::size_t p = 1; p < phases.size(); ++p)
        QCOMPARE(phases[p].first, phases[p - 1].last + 1);
    // Recomputed captured ops cost their "flops" attribute.
    double cloned = 0;
    for (const auto& op : g.ops)
        if (op.name.find(".recompute") != std::string::npos)
            cloned += double(op.attributes.at("flops").ints.front());
    QCOMPARE(run->reports[0].extraFlops, strategy == QLatin1String("recompute") ? cloned : 0.0);
}

void TestCaptured::trainingRefused()
{
    const auto w = load(kFixture);
    const auto training = appendBackwardPass(w, {});
    QVERIFY(!training);
    QCOMPARE(training.error().code, ErrorCode::InvalidArgument);
    QVERIFY2(training.error().message.find("captured training step") != std::string::npos
            && training.error().message.find("'ones_like' has phase backward") != std::string::npos,
        training.error().message.c_str());
}

QTEST_GUILESS_MAIN(TestCaptured)
#include "tst_captured.moc"
