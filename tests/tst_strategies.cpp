// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "cost/device.h"
#include "cost/opcost.h"
#include "exec/executor.h"
#include "io/planjson.h"
#include "io/workload.h"
#include "onnx/onnximport.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "strategies/budget.h"
#include "strategies/reorder.h"
#include "strategies/strategy.h"
#include "strategies/training.h"

#include "graphbuilder.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <regex>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

using namespace core;

namespace {
Workload loadExample(const std::string& spec)
{
    auto workload = loadWorkload(spec, {});
    if (!workload)
        qFatal("%s", workload.error().message.c_str());
    return std::move(*workload);
}

// A small graph, ops in the given order, float32 activations of `size` bytes (size / 4 elements).
struct TinyGraph {
    Graph graph;
    TensorIndex tensor(const std::string& name, Bytes size, TensorKind kind = TensorKind::Activation)
    {
        Tensor t;
        t.name = name;
        t.dtype = DType::Float32;
        t.shape = { size / 4 };
        t.rankKnown = true;
        t.size = size;
        t.kind = kind;
        graph.tensors.push_back(t);
        const auto index = static_cast<TensorIndex>(graph.tensors.size() - 1);
        if (kind == TensorKind::Input)
            graph.inputs.push_back(index);
        if (kind == TensorKind::Output)
            graph.outputs.push_back(index);
        return index;
    }
    void op(const std::string& name, const std::string& type, std::vector<TensorIndex> in, std::vector<TensorIndex> out)
    {
        Op o;
        o.name = name;
        o.type = type;
        o.inputs = std::move(in);
        o.outputs = std::move(out);
        graph.ops.push_back(std::move(o));
    }
    Workload workload()
    {
        LoadOptions options;
        options.alignment = 1;
        auto w = workloadFromGraph(graph, "tiny", options);
        if (!w)
            qFatal("%s", w.error().message.c_str());
        return std::move(*w);
    }
};

// Model order is bad: both big branches are produced before either is reduced.
Workload badOrderGraph()
{
    TinyGraph g;
    const auto x = g.tensor("x", 16, TensorKind::Input);
    const auto a = g.tensor("a", 1000), b = g.tensor("b", 1000), a2 = g.tensor("a2", 8), b2 = g.tensor("b2", 8);
    const auto out = g.tensor("out", 8, TensorKind::Output);
    g.op("make_a", "Conv", { x }, { a });
    g.op("make_b", "Conv", { x }, { b });
    g.op("reduce_a", "ReduceSum", { a }, { a2 });
    g.op("reduce_b", "ReduceSum", { b }, { b2 });
    g.op("join", "Add", { a2, b2 }, { out });
    return g.workload();
}

// A long skip whose idle gap contains the peak: skip (1000) waits while mid1 and mid2 (2000 each) run;
// the peak (5000 at mid_b) is above the concat step (skip + up + out = 4000).
Workload skipGraph()
{
    TinyGraph g;
    const auto x = g.tensor("x", 40, TensorKind::Input);
    const auto skip = g.tensor("skip", 1000), down = g.tensor("down", 100), mid1 = g.tensor("mid1", 2000),
               mid2 = g.tensor("mid2", 2000), mid3 = g.tensor("mid3", 100), up = g.tensor("up", 1000);
    const auto out = g.tensor("out", 2000, TensorKind::Output);
    g.op("enc", "Conv", { x }, { skip });
    g.op("pool", "MaxPool", { skip }, { down });
    g.op("mid_a", "Conv", { down }, { mid1 });
    g.op("mid_b", "Conv", { mid1 }, { mid2 });
    g.op("mid_c", "Conv", { mid2 }, { mid3 });
    g.op("upsample", "ConvTranspose", { mid3 }, { up });
    g.op("cat", "Concat", { skip, up }, { out });
    return g.workload();
}

// Every op of the original graph still runs (itself or in a fused op's body, with the same type and
// attributes) and reads the same values; every input is produced before its reader and resident (in a
// device buffer live at that step); a fused op's body reads only the fused op's inputs and its own internals.
QString meaningProblem(const Workload& original, const StrategyRun& run)
{
    const auto& before = *original.graph;
    const auto& state = run.state;
    const auto& graph = state.graph;
    if (!isTopological(graph, state.schedule))
        return QStringLiteral("schedule is not topological");
    std::map<std::string, const Op*> byName; // the first op of that name: originals come before recompute clones
    for (const auto& op : graph.ops) {
        byName.emplace(op.name, &op);
        const auto internals = fusedInternals(op);
        for (const auto& part : op.body) {
            byName.emplace(part.name, &part);
            for (auto t : part.inputs)
                if (std::find(op.inputs.begin(), op.inputs.end(), t) == op.inputs.end()
                    && std::find(internals.begin(), internals.end(), t) == internals.end())
                    return QStringLiteral("fused op %1 reads %2 that it does not take")
                        .arg(QString::fromStdString(op.name), QString::fromStdString(graph.tensors[t].name));
        }
        if (!op.body.empty() && op.body.back().outputs != op.outputs)
            return QStringLiteral("fused op %1 does not write its last op's outputs").arg(QString::fromStdString(op.name));
    }
    const std::set<std::string> fused(state.fusedOps.begin(), state.fusedOps.end());
    for (const auto& op : before.ops) {
        const auto it = byName.find(op.name);
        if (fused.count(op.name) && (it == byName.end() || it->second->type != op.type || it->second->attributes != op.attributes))
            return QStringLiteral("fused op %1 is not in a fused body as it was").arg(QString::fromStdString(op.name));
        if (it == byName.end())
            return QStringLiteral("op %1 disappeared").arg(QString::fromStdString(op.name));
        if (it->second->inputs.size() != op.inputs.size())
            return QStringLiteral("op %1 lost inputs").arg(QString::fromStdString(op.name));
        for (std::size_t i = 0; i < op.inputs.size(); ++i)
            if (state.origin[it->second->inputs[i]] != op.inputs[i])
                return QStringLiteral("op %1 reads another value").arg(QString::fromStdString(op.name));
    }
    // Residency: the buffer holding each read tensor is live at the reading step.
    std::map<std::string, Lifetime> lifeOf;
    for (const auto& buffer : run.workload.problem.buffers)
        for (const auto& name : buffer.tensors)
            lifeOf[name] = buffer.lifetime;
    for (Step s = 0; s < state.schedule.steps(); ++s) {
        const auto& op = graph.ops[state.schedule.order[s]];
        for (auto t : op.inputs) {
            const auto& tensor = graph.tensors[t];
            if (state.onHost[t]) {
                if (op.type != "SwapIn")
                    return QStringLiteral("%1 reads %2 while it is on host").arg(QString::fromStdString(op.name), QString::fromStdString(tensor.name));
                continue;
            }
            if (tensor.kind == TensorKind::Weight || tensor.kind == TensorKind::Persistent || tensor.size <= 0)
                continue;
            const auto it = lifeOf.find(tensor.name);
            if (it == lifeOf.end() || it->second.start > s || it->second.end <= s)
                return QStringLiteral("%1 is not resident at step %2").arg(QString::fromStdString(tensor.name)).arg(s);
        }
    }
    return {};
}

StrategyOptions testOptions(const Workload& workload)
{
    StrategyOptions options;
    options.alignment = workload.problem.alignment;
    return options;
}
} // namespace

class TestStrategies : public QObject {
    Q_OBJECT
private slots:
    void builtinDevices();
    void deviceErrors_data();
    void deviceErrors();
    void opCosts();
    void meaningAndValidPlans_data();
    void meaningAndValidPlans();
    void fusionRemovesExactlyIntermediates();
    void fusedGraphExportsToOnnx();
    void simplifyCancelsTransposePairs();
    void simplifyNhwcSandwich();
    void simplifyRemovesNoOps();
    void simplifyFoldsConstants();
    void simplifyComputesTheSame_data();
    void simplifyComputesTheSame();
    void fuseLeftOutWhenInplaceDoesBetter();
    void fusionKeepsQuantizedTensorsOnly();
    void inPlaceNeverAliasesLiveTensor();
    void concatInPlaceOnlyWhenItHelps();
    void concatFamilyHeldOnce();
    void outdoneStrategiesLeftOut();
    void reorderHelpsBadOrder();
    void recomputeAndSwapLowerSkipPeak();
    void swapPrefetchHidesTransfer();
    void unetStrategiesCosted();
    void unetTrainingRecomputeAndSwap_data();
    void unetTrainingRecomputeAndSwap();
    void unetTrainingBudget();
    void reportedStepsAreFinalSteps();
    void swapStallWhenTransferExceedsGap();
    void unknownStrategyAndProblemWithoutGraph();
    void budgetFeasibleAndInfeasible();
    void cliPlanAndCompare();
};

void TestStrategies::builtinDevices()
{
    const auto devices = core::builtinDevices();
    QVERIFY2(devices.size() >= 5, qPrintable(QString::fromStdString(builtinDeviceDir().string())));
    for (const char* name : { "h200", "rtx4090", "jetson-orin-nano", "cpu", "groq-lpu" }) {
        const auto device = findDevice(name);
        QVERIFY2(device, device ? "" : device.error().message.c_str());
        QVERIFY(device->memoryBandwidth > 0 && device->hostLinkBandwidth > 0 && device->flopsFor(DType::Float32) > 0);
    }
    QCOMPARE(findDevice("groq-lpu")->memoryCapacity, Bytes(230000000));
    const auto unknown = findDevice("tpu-v9");
    QVERIFY(!unknown);
    QVERIFY(unknown.error().message.find("h200") != std::string::npos); // lists what exists
}

void TestStrategies::deviceErrors_data()
{
    QTest::addColumn<QString>("content");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("not json") << QStringLiteral("{ name: ") << QStringLiteral("not valid JSON");
    QTest::newRow("array") << QStringLiteral("[1]") << QStringLiteral("JSON object");
    QTest::newRow("no name") << QStringLiteral(R"({"memory_capacity_bytes": 1})") << QStringLiteral("'name'");
    QTest::newRow("negative bandwidth")
        << QStringLiteral(R"({"name":"x","memory_capacity_bytes":1,"memory_bandwidth_gb_s":-5,"host_link_gb_s":1,"flops":{"float32":1}})")
        << QStringLiteral("memory_bandwidth_gb_s");
    // 1e308 bytes became a negative 64-bit capacity, and the over-capacity warning crashed.
    QTest::newRow("capacity beyond 2^60")
        << QStringLiteral(R"({"name":"x","memory_capacity_bytes":1e308,"memory_bandwidth_gb_s":5,"host_link_gb_s":1,"flops":{"float32":1}})")
        << QStringLiteral("memory_capacity_bytes");
    QTest::newRow("alignment beyond 2^30")
        << QStringLiteral(R"({"name":"x","memory_capacity_bytes":1,"memory_bandwidth_gb_s":5,"host_link_gb_s":1,"alignment":1e12,"flops":{"float32":1}})")
        << QStringLiteral("alignment");
    QTest::newRow("no host link")
        << QStringLiteral(R"({"name":"x","memory_capacity_bytes":1,"memory_bandwidth_gb_s":5,"flops":{"float32":1}})")
        << QStringLiteral("host_link_gb_s");
    QTest::newRow("no flops") << QStringLiteral(R"({"name":"x","memory_capacity_bytes":1,"memory_bandwidth_gb_s":5,"host_link_gb_s":1})")
                              << QStringLiteral("'flops'");
    QTest::newRow("bad dtype")
        << QStringLiteral(R"({"name":"x","memory_capacity_bytes":1,"memory_bandwidth_gb_s":5,"host_link_gb_s":1,"flops":{"float99":1}})")
        << QStringLiteral("float99");
}

void TestStrategies::deviceErrors()
{
    QFETCH(QString, content);
    QFETCH(QString, mentions);
    QTemporaryDir dir;
    const auto path = dir.filePath(QStringLiteral("device.json")).toStdString();
    std::ofstream(path) << content.toStdString();
    const auto device = loadDeviceProfile(path);
    QVERIFY(!device);
    QVERIFY2(device.error().message.find(path) != std::string::npos, device.error().message.c_str()); // names the file
    QVERIFY2(device.error().message.find(mentions.toStdString()) != std::string::npos, device.error().message.c_str());

    const auto missing = findDevice(dir.filePath(QStringLiteral("absent.json")).toStdString());
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, ErrorCode::Io);
    QVERIFY(missing.error().message.find("absent.json") != std::string::npos);
}

void TestStrategies::opCosts()
{
    const auto workload = loadExample("example:cnn");
    const auto& graph = *workload.graph;
    const auto& conv1 = graph.ops[0]; // 7x7 stride 2, 3 -> 64 channels, 112x112 out
    QCOMPARE(conv1.type, std::string("Conv"));
    const auto cost = opCost(graph, conv1);
    QCOMPARE(cost.flops, 2.0 * 64 * 112 * 112 * 3 * 7 * 7);
    QCOMPARE(cost.bytesWritten, 64.0 * 112 * 112 * 4);
    QVERIFY(cost.bytesRead > 3.0 * 224 * 224 * 4);
    const auto& fc = graph.ops.back(); // Gemm 512 -> 1000
    QCOMPARE(opCost(graph, fc).flops, 2.0 * 1000 * 512);
    for (const auto& op : graph.ops)
        if (op.type == "Flatten")
            QCOMPARE(opCost(graph, op).bytesRead + opCost(graph, op).bytesWritten, 0.0); // a view moves nothing
    // Roofline: the conv on the edge device is compute bound, so slower than on the datacenter GPU.
    QVERIFY(opSeconds(graph, conv1, *findDevice("jetson-orin-nano")) > opSeconds(graph, conv1, *findDevice("h200")));
    QVERIFY(scheduleCost(graph, workload.schedule, *findDevice("cpu")).seconds > 0);

    // A control-flow op costs its graphs' work: a Scan's body once per scanned row, an If's larger branch.
    auto controlFlow = [](const std::string& path) -> std::optional<std::pair<Graph, std::size_t>> {
        if (!std::filesystem::exists(path))
            return std::nullopt;
        auto g = importOnnx(path);
        if (!g)
            return std::nullopt;
        for (std::size_t k = 0; k < g->ops.size(); ++k)
            if (!g->ops[k].bodies.empty())
                return std::make_pair(std::move(*g), k);
        return std::nullopt;
    };
    auto bodyFlops = [](const OpBody& body) {
        double flops = 0;
        for (const auto& op : body.graph->ops)
            flops += opCost(*body.graph, op).flops;
        return flops;
    };
    if (const auto scan = controlFlow("/usr/share/libonnx-testdata/data/node/test_scan9_sum/model.onnx")) {
        const auto& [g, k] = *scan;
        const auto& op = g.ops[k];
        const auto& rows = g.tensors[std::size_t(op.inputs.back())]; // the one scan input, scanned along axis 0
        QCOMPARE(op.type, std::string("Scan"));
        QVERIFY(rows.shape.size() == 2 && rows.shape[0] > 1);
        QVERIFY(bodyFlops(op.bodies[0]) > 0);
        QCOMPARE(opCost(g, op).flops, double(rows.shape[0]) * bodyFlops(op.bodies[0]));
        QVERIFY(opCost(g, op).bytesRead > double(rows.size));
    } else {
        qWarning("libonnx-testdata's test_scan9_sum is missing: the Scan cost is not checked");
    }
    if (const auto vad = controlFlow(MEMPLAN_SOURCE_DIR "/tests/models/tricky/vad_if.onnx")) {
        const auto& [g, k] = *vad;
        const auto& op = g.ops[k];
        QCOMPARE(op.type, std::string("If"));
        QCOMPARE(op.bodies.size(), std::size_t(2));
        const double larger = std::max(bodyFlops(op.bodies[0]), bodyFlops(op.bodies[1]));
        QVERIFY(larger > 1e5); // an LSTM and convolutions
        QVERIFY(bodyFlops(op.bodies[0]) != bodyFlops(op.bodies[1]));
        QCOMPARE(opCost(g, op).flops, larger);
    } else {
        qWarning("tests/models/tricky/vad_if.onnx is missing: the If cost is not checked");
    }
}

void TestStrategies::meaningAndValidPlans_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<QStringList>("names");
    for (const char* model : { "example:cnn", "example:unet", "example:transformer" }) {
        for (const auto& name : strategyNames())
            QTest::addRow("%s/%s", model, name.c_str()) << QString::fromLatin1(model) << QStringList { QString::fromStdString(name) };
        QStringList all;
        for (const auto& name : strategyNames())
            all << QString::fromStdString(name);
        QTest::addRow("%s/all", model) << QString::fromLatin1(model) << all;
    }
    const auto real = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/models/mobilenet_v2.onnx");
    QTest::addRow("mobilenet_v2/all") << real << QStringList { QStringLiteral("fuse"), QStringLiteral("reorder"), QStringLiteral("recompute"),
        QStringLiteral("swap"), QStringLiteral("inplace") };
    QTest::addRow("skip/all") << QStringLiteral("skip") << QStringList { QStringLiteral("recompute"), QStringLiteral("swap"), QStringLiteral("inplace") };
}

void TestStrategies::meaningAndValidPlans()
{
    QFETCH(QString, model);
    QFETCH(QStringList, names);
    const auto workload = model == QStringLiteral("skip") ? skipGraph() : loadExample(model.toStdString());
    std::vector<std::string> list;
    for (const auto& n : names)
        list.push_back(n.toStdString());
    const auto run = applyStrategies(workload, list, testOptions(workload));
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    // Simplify removes and rewrites ops (simplifyComputesTheSame runs its graphs): the later
    // strategies keep the meaning of the graph it made.
    const auto simplified = run->reports.empty() || run->reports[0].name != "simplify" || run->reports[0].details[0].starts_with("left out")
            || run->reports[0].details[0] == "nothing to simplify"
        ? std::optional<StrategyRun>()
        : std::optional<StrategyRun>(*applyStrategies(workload, { "simplify" }, testOptions(workload)));
    const auto problem = meaningProblem(simplified ? simplified->workload : workload, *run);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY(lowerBound(run->workload.problem) <= lowerBound(workload.problem)); // each strategy keeps only improvements
    PlanOptions options;
    options.timeLimitSeconds = 0.2;
    for (const auto& planner : planners()) {
        const auto plan = runPlanner(*planner, run->workload.problem, {}, options);
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        const auto check = validatePlan(run->workload.problem, *plan);
        QVERIFY2(check.ok(), (std::string(planner->name()) + ": " + check.message).c_str());
    }
}

void TestStrategies::fusionRemovesExactlyIntermediates()
{
    for (const char* model : { "example:cnn", "example:transformer" }) {
        const auto workload = loadExample(model);
        const auto run = applyStrategies(workload, { "fuse" }, testOptions(workload));
        QVERIFY(run);
        const auto& before = *workload.graph;
        // Expected: outputs of fused ops that are read only by another op of the same fused group.
        std::set<std::string> fusedNames(run->state.fusedOps.begin(), run->state.fusedOps.end());
        QVERIFY(!fusedNames.empty());
        std::map<std::string, std::string> groupOf; // original op -> fused op name
        for (const auto& op : run->state.graph.ops)
            if (op.type == "Fused") {
                std::string part;
                for (char c : op.name + "+")
                    if (c == '+') {
                        groupOf[part] = op.name;
                        part.clear();
                    } else {
                        part += c;
                    }
            }
        std::set<std::string> expected;
        for (const auto& op : before.ops) {
            if (!groupOf.count(op.name) || op.outputs.size() != 1)
                continue;
            const auto t = op.outputs[0];
            std::vector<const Op*> readers;
            for (const auto& other : before.ops)
                if (std::find(other.inputs.begin(), other.inputs.end(), t) != other.inputs.end())
                    readers.push_back(&other);
            if (readers.size() == 1 && groupOf.count(readers[0]->name) && groupOf[readers[0]->name] == groupOf[op.name])
                expected.insert(before.tensors[t].name);
        }
        std::set<std::string> namesBefore, namesAfter;
        for (const auto& b : workload.problem.buffers)
            namesBefore.insert(b.tensors.begin(), b.tensors.end());
        for (const auto& b : run->workload.problem.buffers)
            namesAfter.insert(b.tensors.begin(), b.tensors.end());
        std::set<std::string> removed;
        std::set_difference(namesBefore.begin(), namesBefore.end(), namesAfter.begin(), namesAfter.end(), std::inserter(removed, removed.end()));
        QCOMPARE(removed, expected);
        QVERIFY(std::includes(namesBefore.begin(), namesBefore.end(), namesAfter.begin(), namesAfter.end())); // nothing new
        QCOMPARE(run->reports.size(), std::size_t(1));
        QCOMPARE(run->reports[0].extraFlops, 0.0);
        QVERIFY(run->reports[0].savedBytes() > 0);
    }
}

// A QDQ model (8-bit tensors between DequantizeLinear -> op -> QuantizeLinear): each DequantizeLinear
// read by one op of a chain runs inside that chain, so only the 8-bit tensors stay; one read by two
// ops stays an op of its own, and no fused op ends in a DequantizeLinear.
void TestStrategies::fusionKeepsQuantizedTensorsOnly()
{
    TinyGraph g;
    const auto x = g.tensor("x", 100, TensorKind::Input);
    const auto xq = g.tensor("xq", 100), xf = g.tensor("xf", 400), wq = g.tensor("wq", 36, TensorKind::Weight);
    const auto wf = g.tensor("wf", 144), y = g.tensor("y", 400), r = g.tensor("r", 400), yq = g.tensor("yq", 100);
    const auto c = g.tensor("c", 100), cf = g.tensor("cf", 400), a = g.tensor("a", 400), b = g.tensor("b", 400);
    const auto sum = g.tensor("sum", 400), out = g.tensor("out", 100, TensorKind::Output);
    g.op("quant", "QuantizeLinear", { x }, { xq });
    g.op("dq_x", "DequantizeLinear", { xq }, { xf });
    g.op("dq_w", "DequantizeLinear", { wq }, { wf });
    g.op("conv", "Conv", { xf, wf }, { y });
    g.op("relu", "Relu", { y }, { r });
    g.op("q", "QuantizeLinear", { r }, { yq });
    g.op("cast", "Cast", { yq }, { c });
    g.op("dq_c", "DequantizeLinear", { c }, { cf }); // cf has two readers: dq_c stays an op
    g.op("left", "Conv", { cf }, { a });
    g.op("right", "Conv", { cf }, { b });
    g.op("add", "Add", { a, b }, { sum });
    g.op("q_out", "QuantizeLinear", { sum }, { out });
    // A pooling op heads a group as a convolution does.
    const auto pf = g.tensor("pf", 400), pm = g.tensor("pm", 100), pq = g.tensor("pq", 25, TensorKind::Output);
    g.op("dq_p", "DequantizeLinear", { c }, { pf });
    g.op("pool", "MaxPool", { pf }, { pm });
    g.op("q_pool", "QuantizeLinear", { pm }, { pq });
    const auto workload = g.workload();
    const auto run = applyStrategies(workload, { "fuse" }, testOptions(workload));
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    const auto problem = meaningProblem(workload, *run);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const auto& graph = run->state.graph;
    std::map<std::string, std::string> typesOf;
    for (const auto& op : graph.ops) {
        if (op.type == "Fused")
            typesOf[op.name] = op.attributes.at("fused_types").text;
        QVERIFY2(op.body.empty() || op.body.back().type != "DequantizeLinear", op.name.c_str());
    }
    const std::map<std::string, std::string> expectedTypes { { "quant", "QuantizeLinear" }, // alone: not fused
        { "conv+relu+q+cast", "DequantizeLinear x2+Conv+Relu+QuantizeLinear+Cast" },
        { "left+add+q_out", "Conv+Add+QuantizeLinear" }, { "pool+q_pool", "DequantizeLinear x1+MaxPool+QuantizeLinear" } };
    typesOf.emplace("quant", graph.ops[0].type);
    QCOMPARE(typesOf, expectedTypes);
    QVERIFY(std::any_of(graph.ops.begin(), graph.ops.end(), [](const Op& op) { return op.name == "dq_c"; }));
    std::set<std::string> namesAfter;
    for (const auto& buffer : run->workload.problem.buffers)
        namesAfter.insert(buffer.tensors.begin(), buffer.tensors.end());
    for (const auto t : { xf, wf, y, r, yq, a, sum, pf, pm })
        QVERIFY2(!namesAfter.count(graph.tensors[t].name), graph.tensors[t].name.c_str());
    for (const auto t : { xq, c, cf, b })
        QVERIFY2(namesAfter.count(graph.tensors[t].name), graph.tensors[t].name.c_str());
    // Peak before: xf + wf + y (conv's step) = 944 B; after, the 8-bit tensors and cf, a, b's group.
    const auto plan = runPlanner(*plannerByName(kDefaultPlanner), run->workload.problem);
    QVERIFY(plan && validatePlan(run->workload.problem, *plan).ok());
    QVERIFY(lowerBound(run->workload.problem) < lowerBound(workload.problem));
}

// A fused graph still exports: each fused op is one node (its body is not ONNX), and the file
// imports back with the same sizes, so the same problem.
void TestStrategies::fusedGraphExportsToOnnx()
{
    const auto workload = loadExample("example:cnn");
    const auto run = applyStrategies(workload, { "fuse" }, testOptions(workload));
    QVERIFY(run);
    QTemporaryDir dir;
    const auto file = dir.filePath(QStringLiteral("fused.onnx")).toStdString();
    const auto exported = exportOnnx(run->state.graph, file);
    QVERIFY2(exported, exported ? "" : exported.error().message.c_str());
    const auto back = loadWorkload(file, {});
    QVERIFY2(back, back ? "" : back.error().message.c_str());
    QCOMPARE(back->graph->ops.size(), run->state.graph.ops.size());
    QCOMPARE(lowerBound(back->problem), lowerBound(run->workload.problem));
}

namespace {
// Runs the strategies' graph (planned, validated) and the original (no reuse) on the CPU executor with
// the same seeded inputs and weights (matched by name): empty when their outputs agree bit for bit.
QString runMismatch(const Workload& original, const StrategyRun& run)
{
    const auto& w = run.workload;
    const auto plan = runPlanner(*plannerByName(kDefaultPlanner), w.problem);
    if (!plan)
        return QString::fromStdString("no plan: " + plan.error().message);
    if (const auto check = validatePlan(w.problem, *plan); !check.ok())
        return QString::fromStdString("invalid plan: " + check.message);
    const auto after = runOnCpu(*w.graph, w.schedule, w.problem, *plan, w.bufferTensor, {});
    const auto before = runOnCpu(*original.graph, original.schedule, original.problem, noReusePlan(original.problem), original.bufferTensor, {});
    if (!after || !before)
        return QString::fromStdString("run failed: " + (!after ? after.error().message : before.error().message));
    if (after->opsSynthetic > 0 || before->opsSynthetic > 0)
        return QStringLiteral("an op ran without a real kernel");
    std::vector<std::string> namesBefore, namesAfter;
    for (auto t : original.graph->outputs)
        namesBefore.push_back(original.graph->tensors[t].name);
    for (auto t : w.graph->outputs)
        namesAfter.push_back(w.graph->tensors[t].name);
    if (namesBefore != namesAfter)
        return QStringLiteral("graph outputs renamed");
    return QString::fromStdString(compareOutputs(*w.graph, before->outputs, after->outputs));
}

int countOps(const Graph& graph, const std::string& type)
{
    return int(std::count_if(graph.ops.begin(), graph.ops.end(), [&](const Op& op) { return op.type == type; }));
}

Op* transposeOp(GraphBuilder& b, const std::string& name, TensorIndex in, TensorIndex out, std::vector<std::int64_t> perm)
{
    auto* op = b.op(name, "Transpose", { in }, { out });
    op->attributes["perm"].ints = std::move(perm);
    op->attributes["perm"].list = true;
    return op;
}

Op* convOp(GraphBuilder& b, const std::string& name, TensorIndex in, TensorIndex weight, TensorIndex out)
{
    auto* op = b.op(name, "Conv", { in, weight }, { out });
    op->attributes["kernel_shape"].ints = { 3, 3 };
    op->attributes["pads"].ints = { 1, 1, 1, 1 };
    return op;
}

// A TensorFlow export's NHWC graph: each Conv between a Transpose to NCHW and one back, the
// elementwise ops (Relu, a residual Add, a scalar Mul) in NHWC between them.
Workload nhwcSandwich()
{
    GraphBuilder b;
    const auto x = b.tensor("x", { 1, 8, 8, 3 }, TensorKind::Input);
    const auto xc = b.tensor("x_nchw", { 1, 3, 8, 8 }), c1 = b.tensor("c1", { 1, 8, 8, 8 }), c1n = b.tensor("c1_nhwc", { 1, 8, 8, 8 });
    const auto r = b.tensor("r", { 1, 8, 8, 8 }), rc = b.tensor("r_nchw", { 1, 8, 8, 8 }), c2 = b.tensor("c2", { 1, 8, 8, 8 });
    const auto c2n = b.tensor("c2_nhwc", { 1, 8, 8, 8 }), sum = b.tensor("sum", { 1, 8, 8, 8 }), scaled = b.tensor("scaled", { 1, 8, 8, 8 });
    const auto out = b.tensor("out", { 1, 8, 8, 8 }, TensorKind::Output);
    const std::vector<std::int64_t> toNchw { 0, 3, 1, 2 }, toNhwc { 0, 2, 3, 1 };
    transposeOp(b, "to_nchw", x, xc, toNchw);
    convOp(b, "conv1", xc, b.tensor("w1", { 8, 3, 3, 3 }, TensorKind::Weight), c1);
    transposeOp(b, "conv1_nhwc", c1, c1n, toNhwc);
    b.op("relu", "Relu", { c1n }, { r });
    transposeOp(b, "relu_nchw", r, rc, toNchw);
    convOp(b, "conv2", rc, b.tensor("w2", { 8, 8, 3, 3 }, TensorKind::Weight), c2);
    transposeOp(b, "conv2_nhwc", c2, c2n, toNhwc);
    b.op("residual", "Add", { c2n, r }, { sum });
    b.op("scale", "Mul", { sum, b.tensor("half", { 1 }, TensorKind::Weight) }, { scaled });
    b.op("final", "Relu", { scaled }, { out });
    return b.workload("nhwc", 256);
}
} // namespace

// Transpose(Transpose(x)) whose permutations compose to the identity is x; one that does not is one
// Transpose of x with the composed permutation, not nothing.
void TestStrategies::simplifyCancelsTransposePairs()
{
    for (const bool inverse : { true, false }) {
        GraphBuilder b;
        const auto x = b.tensor("x", { 1, 4, 6, 8 }, TensorKind::Input);
        const auto a = b.tensor("a", { 1, 6, 8, 4 });
        const auto y = b.tensor("y", inverse ? std::vector<std::int64_t> { 1, 4, 6, 8 } : std::vector<std::int64_t> { 1, 8, 4, 6 });
        const auto out = b.tensor("out", b.g.tensors[std::size_t(y)].shape, TensorKind::Output);
        b.op("pre", "Relu", { x }, { b.tensor("xr", { 1, 4, 6, 8 }) });
        const auto xr = *b.g.findTensor("xr");
        transposeOp(b, "t1", xr, a, { 0, 2, 3, 1 });
        transposeOp(b, "t2", a, y, inverse ? std::vector<std::int64_t> { 0, 3, 1, 2 } : std::vector<std::int64_t> { 0, 2, 3, 1 });
        b.op("post", "Softmax", { y }, { out })->attributes["axis"].ints = { -1 }; // no Transpose passes it
        const auto workload = b.workload("pair", 256);
        const auto run = applyStrategies(workload, { "simplify" }, testOptions(workload));
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        const auto& graph = run->state.graph;
        QCOMPARE(countOps(graph, "Transpose"), inverse ? 0 : 1);
        if (!inverse)
            QCOMPARE(graph.ops[std::size_t(run->state.schedule.order[1])].attributes.at("perm").ints, (std::vector<std::int64_t> { 0, 3, 1, 2 }));
        QCOMPARE(run->reports.size(), std::size_t(1));
        QVERIFY(run->reports[0].details.size() == 2); // the counts, then the one rewrite
        QVERIFY2(run->reports[0].details[1].find(inverse ? "cancelled" : "one Transpose [0,3,1,2]") != std::string::npos,
            run->reports[0].details[1].c_str());
        QVERIFY(lowerBound(run->workload.problem) <= lowerBound(workload.problem));
        const auto mismatch = runMismatch(workload, *run);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }
}

// The NHWC sandwich keeps the Transposes at its ends only: the Relu, the residual Add and the
// scalar Mul run in NCHW between the Convs, and the graph output keeps its name and layout.
void TestStrategies::simplifyNhwcSandwich()
{
    const auto workload = nhwcSandwich();
    QCOMPARE(countOps(*workload.graph, "Transpose"), 4);
    const auto run = applyStrategies(workload, { "simplify" }, testOptions(workload));
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    const auto& graph = run->state.graph;
    QCOMPARE(countOps(graph, "Transpose"), 2);
    QCOMPARE(graph.ops[std::size_t(run->state.schedule.order.front())].name, std::string("to_nchw"));
    // The Transpose back to NHWC goes down to the last op it passes (the Relu writing the graph output stays last).
    const auto& last = graph.ops[std::size_t(run->state.schedule.order.back())];
    QCOMPARE(graph.tensors[std::size_t(last.outputs[0])].name, std::string("out"));
    QCOMPARE(graph.ops[std::size_t(run->state.schedule.order[run->state.schedule.order.size() - 2])].type, std::string("Transpose"));
    QCOMPARE(graph.tensors[std::size_t(graph.outputs[0])].shape, (std::vector<std::int64_t> { 1, 8, 8, 8 }));
    QVERIFY(lowerBound(run->workload.problem) <= lowerBound(workload.problem)); // the residual's three tensors stay the peak
    QCOMPARE(run->workload.problem.buffers.size(), workload.problem.buffers.size() - 2);
    QVERIFY2(run->reports[0].details[0].find("Transpose") != std::string::npos, run->reports[0].details[0].c_str());
    const auto mismatch = runMismatch(workload, *run);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    // With fuse and inplace after it, still the same outputs, and no more than inplace reaches alone.
    const auto all = applyStrategies(workload, { "simplify", "fuse", "inplace" }, testOptions(workload));
    const auto inplace = applyStrategies(workload, { "inplace" }, testOptions(workload));
    QVERIFY(all && inplace);
    QVERIFY(lowerBound(all->workload.problem) < lowerBound(inplace->workload.problem));
    const auto combined = runMismatch(workload, *all);
    QVERIFY2(combined.isEmpty(), qPrintable(combined));
}

// Identity, inference Dropout (its mask unread), a Cast to float of a float, and a chain of views
// go: one Reshape is left, and the Identity that wrote the graph output leaves its name to the Relu.
void TestStrategies::simplifyRemovesNoOps()
{
    GraphBuilder b;
    const auto x = b.tensor("x", { 1, 4, 8, 8 }, TensorKind::Input);
    const auto a = b.tensor("a", { 1, 4, 8, 8 }), d = b.tensor("d", { 1, 4, 8, 8 }), mask = b.tensor("mask", { 1, 4, 8, 8 }, TensorKind::Activation, DType::Bool);
    const auto c = b.tensor("c", { 1, 4, 8, 8 }), v1 = b.tensor("v1", { 1, 256 }), v2 = b.tensor("v2", { 1, 1, 256 });
    const auto v3 = b.tensor("v3", { 1, 256 }), g = b.tensor("g", { 1, 256 });
    const auto out = b.tensor("out", { 1, 256 }, TensorKind::Output);
    const auto shape = b.tensor("shape", { 2 }, TensorKind::Weight, DType::Int64);
    b.g.tensors[std::size_t(shape)].values = { 1, 256 };
    const auto axes = b.tensor("axes", { 1 }, TensorKind::Weight, DType::Int64);
    b.g.tensors[std::size_t(axes)].values = { 0 };
    b.op("copy", "Identity", { x }, { a });
    b.op("drop", "Dropout", { a }, { d, mask });
    b.op("cast", "Cast", { d }, { c })->attributes["to"].ints = { 1 };
    b.op("reshape", "Reshape", { c, shape }, { v1 });
    b.op("unsqueeze", "Unsqueeze", { v1, axes }, { v2 });
    b.op("flatten", "Flatten", { v2 }, { v3 })->attributes["axis"].ints = { 1 };
    b.op("relu", "Relu", { v3 }, { g });
    b.op("name_out", "Identity", { g }, { out });
    const auto workload = b.workload("no-ops", 256);
    const auto run = applyStrategies(workload, { "simplify" }, testOptions(workload));
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    const auto& graph = run->state.graph;
    std::vector<std::string> types;
    for (auto o : run->state.schedule.order)
        types.push_back(graph.ops[std::size_t(o)].type);
    QCOMPARE(types, (std::vector<std::string> { "Reshape", "Relu" }));
    const auto& reshape = graph.ops[std::size_t(run->state.schedule.order[0])];
    QCOMPARE(graph.tensors[std::size_t(reshape.inputs[0])].name, std::string("x"));
    QCOMPARE(graph.tensors[std::size_t(reshape.inputs[1])].values, (std::vector<std::int64_t> { 1, 256 }));
    QCOMPARE(graph.tensors[std::size_t(graph.ops[std::size_t(run->state.schedule.order[1])].outputs[0])].name, std::string("out"));
    QVERIFY(!graph.findTensor("mask") && !graph.findTensor("a") && !graph.findTensor("g"));
    const auto& details = run->reports[0].details;
    QVERIFY2(details[0].starts_with("6 rewrites: 4 no-ops removed"), details[0].c_str());
    QCOMPARE(details.size(), std::size_t(7));
    QVERIFY(lowerBound(run->workload.problem) < lowerBound(workload.problem));
    const auto mismatch = runMismatch(workload, *run);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

// An op that reads only weights (a transposed weight) writes a weight: it leaves the arena.
void TestStrategies::simplifyFoldsConstants()
{
    GraphBuilder b;
    const auto x = b.tensor("x", { 4, 16 }, TensorKind::Input);
    const auto wt = b.tensor("w_t", { 16, 32 });
    const auto out = b.tensor("out", { 4, 32 }, TensorKind::Output);
    transposeOp(b, "transpose_w", b.tensor("w", { 32, 16 }, TensorKind::Weight), wt, { 1, 0 });
    b.op("matmul", "MatMul", { x, wt }, { out });
    const auto workload = b.workload("fold", 256);
    const auto run = applyStrategies(workload, { "simplify" }, testOptions(workload));
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    const auto& graph = run->state.graph;
    QCOMPARE(graph.tensors[std::size_t(*graph.findTensor("w_t"))].kind, TensorKind::Weight);
    QVERIFY2(run->reports[0].details[1].find("folded into a constant") != std::string::npos, run->reports[0].details[1].c_str());
    QCOMPARE(lowerBound(run->workload.problem), lowerBound(workload.problem) - Bytes(16 * 32 * 4));
    for (const auto& buffer : run->workload.problem.buffers)
        QVERIFY(buffer.name != "w_t");
    const auto mismatch = runMismatch(workload, *run);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

void TestStrategies::simplifyComputesTheSame_data()
{
    QTest::addColumn<QString>("model");
    for (const char* model : { "example:cnn", "example:unet", "example:transformer" })
        QTest::addRow("%s", model) << QString::fromLatin1(model);
    QTest::addRow("nhwc_sandwich.onnx") << QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/models/tricky/nhwc_sandwich.onnx");
}

// Simplify alone and before fuse and inplace: the same outputs bit for bit, graph outputs named as
// before, valid plans, never a higher lower bound.
void TestStrategies::simplifyComputesTheSame()
{
    QFETCH(QString, model);
    if (model.endsWith(QStringLiteral(".onnx")) && !QFile::exists(model))
        QSKIP("tests/models/tricky is missing: run scripts/make_models.sh");
    const auto workload = loadExample(model.toStdString());
    std::shared_ptr<const ModelData> data;
    for (const auto& names : { std::vector<std::string> { "simplify" }, std::vector<std::string> { "simplify", "fuse", "inplace" } }) {
        const auto run = applyStrategies(workload, names, testOptions(workload));
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        QVERIFY(lowerBound(run->workload.problem) <= lowerBound(workload.problem));
        if (model.endsWith(QStringLiteral(".onnx"))) {
            // Weights from the file, matched by name, for both graphs.
            auto original = loadTensorData(model.toStdString(), *workload.graph);
            QVERIFY2(original, original ? "" : original.error().message.c_str());
            RunOptions options;
            options.modelData = std::make_shared<const ModelData>(*original);
            const auto before = runOnCpu(*workload.graph, workload.schedule, workload.problem, noReusePlan(workload.problem), workload.bufferTensor, options);
            options.modelData = std::make_shared<const ModelData>(remapModelData(*original, *workload.graph, *run->workload.graph));
            const auto plan = runPlanner(*plannerByName(kDefaultPlanner), run->workload.problem);
            QVERIFY(plan && validatePlan(run->workload.problem, *plan).ok());
            const auto after = runOnCpu(*run->workload.graph, run->workload.schedule, run->workload.problem, *plan, run->workload.bufferTensor, options);
            QVERIFY(before && after);
            QCOMPARE(after->opsSynthetic, 0);
            QCOMPARE(compareOutputs(*run->workload.graph, before->outputs, after->outputs), std::string());
            if (names.size() == 1)
                QVERIFY2(countOps(*run->workload.graph, "Transpose") < countOps(*workload.graph, "Transpose"), "the NHWC Transposes stay");
        } else {
            const auto mismatch = runMismatch(workload, *run);
            QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        }
    }
}

// Fusion runs a fused op at its last op's step, so a fused Conv keeps its input alive across a
// detour that the unfused Conv's smaller output crosses instead; inplace alone lowers the peak
// elsewhere, and the detour becomes the peak of fuse + inplace: a combination worse than its
// subset. applyStrategies runs without fuse and keeps that, and fuse's report says why.
void TestStrategies::fuseLeftOutWhenInplaceDoesBetter()
{
    TinyGraph g;
    const auto in = g.tensor("in", 400, TensorKind::Input), side = g.tensor("g", 400, TensorKind::Input);
    const auto t1 = g.tensor("t1", 10000), t2 = g.tensor("t2", 10000), t3 = g.tensor("t3", 400, TensorKind::Output);
    const auto x = g.tensor("x", 6000), c = g.tensor("c", 1000), u = g.tensor("u", 6000);
    const auto us = g.tensor("us", 400, TensorKind::Output), r = g.tensor("r", 1000, TensorKind::Output);
    g.op("soft_a", "Softmax", { in }, { t1 });
    g.op("act_a", "Relu", { t1 }, { t2 }); // inplace: t2 into t1
    g.op("soft_b", "Softmax", { t2 }, { t3 });
    g.op("soft_x", "Softmax", { side }, { x });
    g.op("conv", "Conv", { x }, { c }); // fuse: conv+act_c at act_c's step, x alive until then
    g.op("soft_u", "Softmax", { side }, { u });
    g.op("reduce_u", "ReduceSum", { u }, { us });
    g.op("act_c", "Relu", { c }, { r });
    const auto workload = g.workload();
    auto exact = testOptions(workload);
    exact.leaveOutOutdone = false;
    const auto both = applyStrategies(workload, { "fuse", "inplace" }, exact);
    const auto fuse = applyStrategies(workload, { "fuse" }, exact);
    const auto inplace = applyStrategies(workload, { "inplace" }, testOptions(workload));
    const auto best = applyStrategies(workload, { "fuse", "inplace" }, testOptions(workload));
    QVERIFY(both && fuse && inplace && best);
    QVERIFY(lowerBound(fuse->workload.problem) <= lowerBound(workload.problem)); // fuse alone is kept
    QCOMPARE(fuse->reports[0].details[0].find("not applied"), std::string::npos);
    const Bytes alone = lowerBound(inplace->workload.problem);
    QVERIFY2(lowerBound(both->workload.problem) > alone, "fuse + inplace no longer loses to inplace alone");
    QCOMPARE(lowerBound(best->workload.problem), alone);
    QCOMPARE(best->leftOut, std::vector<std::string> { "fuse" });
    QCOMPARE(best->reports.size(), std::size_t(2));
    QCOMPARE(best->reports[0].name, std::string("fuse"));
    QVERIFY2(best->reports[0].details[0].starts_with("left out: without fuse the strategies reach"), best->reports[0].details[0].c_str());
    QVERIFY(std::none_of(best->state.graph.ops.begin(), best->state.graph.ops.end(), [](const Op& op) { return op.type == "Fused"; }));
    const auto plan = runPlanner(*plannerByName(kDefaultPlanner), best->workload.problem);
    QVERIFY(plan && validatePlan(best->workload.problem, *plan).ok());
    QVERIFY(meaningProblem(workload, *best).isEmpty());
}

void TestStrategies::inPlaceNeverAliasesLiveTensor()
{
    const std::pair<const char*, std::vector<std::string>> cases[] = { { "example:cnn", { "fuse", "inplace" } },
        { "example:cnn", { "inplace" } }, { "example:unet", { "inplace" } }, { "example:transformer", { "fuse", "inplace" } },
        { "example:transformer", { "reorder", "inplace" } }, { "dense-block", { "inplace" } }, { "dense-block-training", { "inplace" } } };
    for (const auto& [model, names] : cases) {
        const std::string spec = model;
        auto workload = spec.starts_with("dense-block") ? denseBlock(256) : loadExample(spec);
        if (spec.ends_with("-training")) { // every join kept for its gradient: the families matter most here
            auto training = appendBackwardPass(workload, TrainingOptions {});
            QVERIFY2(training, training ? "" : training.error().message.c_str());
            workload = std::move(*training);
        }
        const auto run = applyStrategies(workload, names, testOptions(workload));
        QVERIFY(run);
        const auto& graph = run->state.graph;
        const auto reads = readSteps(graph, run->state.schedule);
        const auto lifetimes = computeLifetimes(graph, run->state.schedule);
        // Whether `joined` is a Concat's output holding `part` (one of its inputs) `at` bytes in: then
        // both hold the same bytes there, whoever writes them.
        const auto holds = [&](TensorIndex joined, TensorIndex part, Bytes at) {
            for (const auto& op : graph.ops) {
                if (op.type != "Concat" || op.outputs[0] != joined)
                    continue;
                Bytes offset = 0;
                for (auto x : op.inputs) {
                    if (x == part && offset == at)
                        return true;
                    offset += graph.tensors[x].size;
                }
            }
            return false;
        };
        int shared = 0;
        for (const auto& buffer : run->workload.problem.buffers) {
            if (buffer.tensors.size() < 2)
                continue;
            ++shared;
            // Any two members whose bytes overlap: the earlier-born one is last read where (or before)
            // the later one is written, or the later one is a Concat holding the earlier one there.
            // Elementwise chains overlap whole; Concat inputs and views only their Concat's output.
            const bool sliced = !buffer.tensorOffsets.empty();
            QVERIFY(!sliced || buffer.tensorOffsets.size() == buffer.tensors.size());
            std::vector<TensorIndex> members;
            std::vector<Bytes> at;
            for (std::size_t k = 0; k < buffer.tensors.size(); ++k) {
                members.push_back(*graph.findTensor(buffer.tensors[k]));
                at.push_back(sliced ? buffer.tensorOffsets[k] : 0);
                QVERIFY(at.back() >= 0 && at.back() + graph.tensors[members.back()].size <= buffer.size);
                if (!sliced)
                    QCOMPARE(graph.tensors[members.back()].size, graph.tensors[members.front()].size);
            }
            for (std::size_t i = 0; i < members.size(); ++i)
                for (std::size_t j = 0; j < members.size(); ++j) {
                    const auto earlier = members[i], later = members[j];
                    const bool overlap = at[i] < at[j] + graph.tensors[later].size && at[j] < at[i] + graph.tensors[earlier].size;
                    if (i == j || !overlap || lifetimes[earlier].start > lifetimes[later].start
                        || (lifetimes[earlier].start == lifetimes[later].start && i > j) || holds(later, earlier, at[i] - at[j]))
                        continue;
                    QVERIFY(!reads[earlier].empty());
                    QVERIFY2(reads[earlier].back() <= lifetimes[later].start,
                        (graph.tensors[earlier].name + " is read after " + graph.tensors[later].name + " overwrites it").c_str());
                    QVERIFY(graph.tensors[earlier].kind == TensorKind::Activation);
                }
        }
        QVERIFY2(shared > 0, model);
    }
}

// U-Net's decoder Concats take their upsampled inputs into their slices (the peak was the Concat
// step); a skip born long before its Concat, whose output would then be held across the encoder's
// peak, stays out (here and in the skip graph).
void TestStrategies::concatInPlaceOnlyWhenItHelps()
{
    const auto unet = loadExample("example:unet");
    const auto run = applyStrategies(unet, { "inplace" }, testOptions(unet));
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    const auto& graph = run->state.graph;
    int sliced = 0;
    for (const auto& op : graph.ops) {
        if (op.type != "Concat")
            continue;
        Bytes at = 0;
        int here = 0;
        for (auto x : op.inputs) {
            if (run->state.bufferRoot(x) == op.outputs[0]) {
                QCOMPARE(run->state.offsetInRoot(x), at);
                ++here;
            }
            at += graph.tensors[std::size_t(x)].size;
        }
        // The upsampled input, born just before its Concat, always goes in; the skip only into the
        // innermost Concat, where holding the output from the skip's birth costs little.
        QCOMPARE(here, op.name == "cat4" ? 2 : 1);
        const auto up = *graph.findTensor("up" + op.name.substr(3, 1) + ".out");
        QCOMPARE(run->state.bufferRoot(up), op.outputs[0]);
        sliced += here;
    }
    QCOMPARE(sliced, 5);
    QCOMPARE(lowerBound(run->workload.problem), Bytes(56) << 20); // 64 MiB before
    const auto plan = runPlanner(*plannerByName("greedy-by-size"), run->workload.problem);
    QVERIFY(plan && validatePlan(run->workload.problem, *plan).ok());
    // The plan JSON gives each tensor's start inside such a buffer: cat1's second input after its first.
    const auto json = QJsonDocument::fromJson(QByteArray::fromStdString(exportPlanJson(run->workload, *plan))).object();
    bool listed = false;
    for (const auto& value : json.value(QStringLiteral("buffers")).toArray()) {
        const auto buffer = value.toObject();
        if (buffer.value(QStringLiteral("name")).toString() != QStringLiteral("cat1.out"))
            continue;
        const auto names = buffer.value(QStringLiteral("tensors")).toArray();
        const auto offsets = buffer.value(QStringLiteral("tensor_offsets")).toArray();
        QCOMPARE(offsets.size(), names.size());
        for (qsizetype k = 0; k < names.size(); ++k) {
            const auto t = *graph.findTensor(names[k].toString().toStdString());
            QCOMPARE(Bytes(offsets[k].toInteger()), run->state.offsetInRoot(t));
        }
        listed = true;
    }
    QVERIFY(listed);

    const auto skip = skipGraph();
    const auto skipRun = applyStrategies(skip, { "inplace" }, testOptions(skip));
    QVERIFY(skipRun);
    const auto skipTensor = *skipRun->state.graph.findTensor("skip");
    QCOMPARE(skipRun->state.bufferRoot(skipTensor), skipTensor);
    QVERIFY(lowerBound(skipRun->workload.problem) <= lowerBound(skip.problem));
}

// A dense block's Concats join runs of one list of feature maps: one Concat holds them all, the
// others are views of their run's range of it, and each feature map is written once, into its slice.
void TestStrategies::concatFamilyHeldOnce()
{
    const auto block = denseBlock(256);
    const auto run = applyStrategies(block, { "inplace" }, testOptions(block));
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    const auto& state = run->state;
    const auto& graph = state.graph;
    const auto root = *graph.findTensor("block.out");
    constexpr Bytes feature = 8 * 8 * 8 * 4;
    for (int k = 0; k <= 4; ++k) {
        const auto f = *graph.findTensor("f" + std::to_string(k));
        QCOMPARE(state.bufferRoot(f), root);
        QCOMPARE(state.offsetInRoot(f), k * feature);
    }
    for (const char* view : { "cat1.out", "cat2.out", "cat3.out", "cat4.out", "mid.out" }) {
        const auto t = *graph.findTensor(view);
        QVERIFY2(state.bufferRoot(t) == root, view);
        QCOMPARE(state.offsetInRoot(t), std::string(view) == "mid.out" ? 2 * feature : Bytes(0)); // mid joins f2, f3
    }
    QVERIFY(run->reports.back().details.front().starts_with("block: 5 earlier Concats of the same inputs are views of block.out"));
    // The peak was squash4: f0..f3, their join, its squash and m (28 KiB); now block.out, squash4's
    // output and m (10 + 8 + 4 KiB).
    QCOMPARE(lowerBound(block.problem), Bytes(28 << 10));
    QCOMPARE(lowerBound(run->workload.problem), Bytes(22 << 10));
    const auto plan = runPlanner(*plannerByName("greedy-by-size"), run->workload.problem);
    QVERIFY(plan && validatePlan(run->workload.problem, *plan).ok());
    const auto json = QJsonDocument::fromJson(QByteArray::fromStdString(exportPlanJson(run->workload, *plan))).object();
    int listed = 0;
    for (const auto& value : json.value(QStringLiteral("buffers")).toArray()) {
        const auto names = value.toObject().value(QStringLiteral("tensors")).toArray();
        const auto offsets = value.toObject().value(QStringLiteral("tensor_offsets")).toArray();
        for (qsizetype k = 0; k < names.size(); ++k)
            if (names[k].toString() == QStringLiteral("mid.out")) {
                QCOMPARE(Bytes(offsets[k].toInteger()), 2 * feature);
                ++listed;
            }
    }
    QCOMPARE(listed, 1);

    // A 32 KiB detour right after f0 is the peak; holding any family with f0 from f0's birth would
    // raise it, so none is formed; f0 alone still goes into cat1's output (of its own size).
    const auto detour = denseBlock(256, true);
    const auto refused = applyStrategies(detour, { "inplace" }, testOptions(detour));
    QVERIFY2(refused, refused ? "" : refused.error().message.c_str());
    const auto& rs = refused->state;
    for (const char* view : { "cat1.out", "cat2.out", "cat3.out", "cat4.out", "mid.out" }) {
        const auto t = *rs.graph.findTensor(view);
        QVERIFY2(rs.sharesWith[t] == t, view);
    }
    QCOMPARE(rs.bufferRoot(*rs.graph.findTensor("f0")), *rs.graph.findTensor("cat1.out"));
    QCOMPARE(lowerBound(detour.problem), Bytes(35 << 10)); // x, f0 and the detour's 32 KiB
    QCOMPARE(lowerBound(refused->workload.problem), Bytes(35 << 10));
}

// DenseNet-121 with all five strategies: recompute's clones break a Concat family that inplace would
// form, so the run without recompute and swap does better, and is taken; each keeps a report saying so.
void TestStrategies::outdoneStrategiesLeftOut()
{
    const auto path = std::string(MEMPLAN_SOURCE_DIR "/tests/models/densenet121.onnx");
    if (!std::filesystem::exists(path))
        QSKIP("densenet121.onnx is missing: run scripts/make_models.sh to export the test models");
    const auto densenet = loadExample(path);
    const std::vector<std::string> all { "fuse", "reorder", "recompute", "swap", "inplace" };
    auto exact = testOptions(densenet);
    exact.leaveOutOutdone = false;
    const auto pipeline = applyStrategies(densenet, all, exact);
    const auto inplace = applyStrategies(densenet, { "inplace" }, testOptions(densenet));
    const auto best = applyStrategies(densenet, all, testOptions(densenet));
    QVERIFY(pipeline && inplace && best);
    const Bytes alone = lowerBound(inplace->workload.problem);
    QVERIFY2(lowerBound(pipeline->workload.problem) > alone, "the raw pipeline no longer loses to inplace alone: pick another model");
    QCOMPARE(lowerBound(best->workload.problem), alone);
    QCOMPARE(best->reports.size(), std::size_t(5)); // one per named strategy, in pipeline order
    for (std::size_t i = 0; i < best->reports.size(); ++i)
        QCOMPARE(best->reports[i].name, all[i]);
    for (const auto& r : best->reports) {
        if (r.name != "recompute" && r.name != "swap")
            continue;
        QCOMPARE(r.savedBytes(), Bytes(0));
        QVERIFY2(r.details.size() == 1 && r.details[0].starts_with("left out: without recompute and swap"), r.name.c_str());
    }
    QVERIFY(std::none_of(best->state.graph.ops.begin(), best->state.graph.ops.end(), [](const Op& op) { return op.type == "SwapOut"; }));
    const auto plan = runPlanner(*plannerByName("greedy-by-size"), best->workload.problem);
    QVERIFY(plan && validatePlan(best->workload.problem, *plan).ok());
}

void TestStrategies::reorderHelpsBadOrder()
{
    const auto workload = badOrderGraph();
    const Bytes before = lowerBound(workload.problem);
    QCOMPARE(before, Bytes(2016)); // x, a and b together
    const auto order = memoryAwareOrder(*workload.graph, workload.schedule);
    QVERIFY(isTopological(*workload.graph, order));
    const auto run = applyStrategies(workload, { "reorder" }, testOptions(workload));
    QVERIFY(run);
    QVERIFY(isTopological(run->state.graph, run->state.schedule));
    QVERIFY2(lowerBound(run->workload.problem) < before, qPrintable(QString::number(lowerBound(run->workload.problem))));
    QCOMPARE(run->reports[0].savedBytes(), before - lowerBound(run->workload.problem));
    // On the examples it lowers the bound or keeps it, and stays topological.
    for (const char* model : { "example:cnn", "example:unet", "example:transformer" }) {
        const auto w = loadExample(model);
        const auto r = applyStrategies(w, { "reorder" }, testOptions(w));
        QVERIFY(r);
        QVERIFY(isTopological(r->state.graph, r->state.schedule));
        QVERIFY(lowerBound(r->workload.problem) <= lowerBound(w.problem));
    }
}

void TestStrategies::recomputeAndSwapLowerSkipPeak()
{
    const auto workload = skipGraph();
    const Bytes before = lowerBound(workload.problem);
    {
        const auto run = applyStrategies(workload, { "recompute" }, testOptions(workload));
        QVERIFY(run);
        QVERIFY2(lowerBound(run->workload.problem) < before, qPrintable(QString::number(lowerBound(run->workload.problem))));
        QVERIFY(run->reports[0].extraFlops > 0);
        QVERIFY(run->reports[0].extraSeconds > 0);
        QCOMPARE(run->reports[0].swappedBytes, Bytes(0));
        QVERIFY(!meaningProblem(workload, *run).size());
    }
    {
        const auto run = applyStrategies(workload, { "swap" }, testOptions(workload));
        QVERIFY(run);
        QVERIFY(lowerBound(run->workload.problem) < before);
        QCOMPARE(run->reports[0].swappedBytes, Bytes(1000));
        QCOMPARE(run->reports[0].extraFlops, 0.0);
        QVERIFY(run->reports[0].extraSeconds >= 0);
        // The swapped tensor is two device buffers: before the trip and after it.
        int skipBuffers = 0;
        for (const auto& b : run->workload.problem.buffers)
            for (const auto& name : b.tensors)
                skipBuffers += name == "skip" || name == "skip.swapin";
        QCOMPARE(skipBuffers, 2);
        QVERIFY(!meaningProblem(workload, *run).size());
    }
}

namespace {
// Names of the ops in schedule order.
std::vector<std::string> scheduledNames(const Transformed& state)
{
    std::vector<std::string> names;
    for (auto op : state.schedule.order)
        names.push_back(state.graph.ops[op].name);
    return names;
}
} // namespace

void TestStrategies::swapPrefetchHidesTransfer()
{
    // skipGraph's skip goes to host after pool and comes back for cat. Holding skip.swapin during
    // mid_b would raise the peak (mid1 + mid2 are live there), so the earliest the SwapIn may go is
    // before mid_c; how far ahead it goes is set by the copy time against the ops' compute time.
    const auto workload = skipGraph();
    auto options = testOptions(workload);
    const auto& graph = *workload.graph;
    auto seconds = [&](const char* name) {
        for (const auto& op : graph.ops)
            if (op.name == name)
                return opSeconds(graph, op, options.device);
        return -1.0;
    };
    const double before = seconds("enc") + seconds("pool"), midA = seconds("mid_a"), midB = seconds("mid_b"), midC = seconds("mid_c"),
                 up = seconds("upsample");
    QVERIFY(midA > 0 && midB > 0 && midC > 0 && up > 0);
    QVERIFY(midC + up < midA + midB);
    struct Case {
        double transfer;
        std::vector<std::string> order;
    };
    const std::vector<std::string> twoAhead { "enc", "pool", "skip.swap_out", "mid_a", "mid_b", "skip.swap_in", "mid_c", "upsample", "cat" };
    const std::vector<std::string> oneAhead { "enc", "pool", "skip.swap_out", "mid_a", "mid_b", "mid_c", "skip.swap_in", "upsample", "cat" };
    const std::vector<std::string> justInTime { "enc", "pool", "skip.swap_out", "mid_a", "mid_b", "mid_c", "upsample", "skip.swap_in", "cat" };
    // Hidden behind upsample alone; needs mid_c too; would need mid_b, which the peak forbids (the
    // SwapOut's copy, on the same link, ends in time for each).
    for (const auto& c : { Case { up / 2, oneAhead }, Case { (up + std::min(midC + up, midA + midB)) / 2, twoAhead },
             Case { (midC + up + midA + midB) / 2, twoAhead } }) {
        options.device.hostLinkBandwidth = 1000 / c.transfer; // skip is 1000 bytes
        options.swapPrefetch = false;
        const auto late = applyStrategies(workload, { "swap" }, options);
        options.swapPrefetch = true;
        const auto early = applyStrategies(workload, { "swap" }, options);
        QVERIFY(late && early);
        QCOMPARE(scheduledNames(late->state), justInTime);
        QCOMPARE(scheduledNames(early->state), c.order);
        QCOMPARE(lowerBound(early->workload.problem), lowerBound(late->workload.problem));
        QVERIFY(!meaningProblem(workload, *early).size());
        // Just in time the read waits for the whole copy; ahead it waits only for what compute cannot cover.
        QVERIFY(std::abs(late->reports[0].extraSeconds - c.transfer) < 1e-12);
        QVERIFY(std::abs(early->reports[0].transferSeconds - 2 * c.transfer) < 1e-12);
        const double read = before + midA + midB + midC + up;
        const double swapIn = before + midA + midB + (c.order == oneAhead ? midC : 0);
        const double stall = std::max(0.0, std::max(before + c.transfer, swapIn) + c.transfer - read);
        QVERIFY(stall < c.transfer);
        QVERIFY2(std::abs(early->reports[0].extraSeconds - stall) < 1e-12,
            qPrintable(QString::fromStdString(early->reports[0].details[0])));
        QVERIFY(early->reports[0].details[0].find("prefetched") != std::string::npos);
        const auto plan = runPlanner(*plannerByName("greedy-by-size"), early->workload.problem);
        QVERIFY(plan);
        QVERIFY(validatePlan(early->workload.problem, *plan).ok());
    }
}

void TestStrategies::unetStrategiesCosted()
{
    // The U-Net inference peak is at the last concat, where the long skip is itself read: neither
    // recompute nor swap can lower that step, so the greedy must leave the peak as is and charge
    // nothing. In training mode they do lower it (unetTrainingRecomputeAndSwap).
    const auto workload = loadExample("example:unet");
    for (const char* name : { "recompute", "swap" }) {
        const auto run = applyStrategies(workload, { name }, testOptions(workload));
        QVERIFY(run);
        const auto& report = run->reports[0];
        QCOMPARE(report.lowerBoundAfter, lowerBound(run->workload.problem));
        QVERIFY(report.lowerBoundAfter <= report.lowerBoundBefore);
        if (report.savedBytes() == 0) {
            QCOMPARE(report.extraFlops, 0.0);
            QCOMPARE(report.swappedBytes, Bytes(0));
        } else {
            QVERIFY(report.extraFlops > 0 || report.swappedBytes > 0);
        }
    }
}

namespace {
// example:unet with its backward pass: the skips and activations live into the backward pass, so the
// peak is no longer the last concat. inArena false: weight gradients persistent (outside the arena),
// which leaves the peak to the activations kept for the backward pass.
Workload unetTraining(bool weightGradientsInArena)
{
    TrainingOptions options;
    options.weightGradientsInArena = weightGradientsInArena;
    auto t = appendBackwardPass(loadExample("example:unet"), options);
    if (!t)
        qFatal("%s", t.error().message.c_str());
    return std::move(*t);
}

Plan validPlan(const PlanProblem& problem)
{
    auto plan = runPlanner(*plannerByName("greedy-by-size"), problem);
    if (!plan)
        qFatal("%s", plan.error().message.c_str());
    const auto check = validatePlan(problem, *plan);
    if (!check.ok())
        qFatal("invalid plan: %s", check.message.c_str());
    return std::move(*plan);
}
} // namespace

// Every step a report names is a step of the final schedule (the one the views draw), though
// recompute and swap insert ops after and before the places they report: the op a swap says the
// value leaves after reads it, the op it comes back at is its SwapIn, the read is of the copy.
void TestStrategies::reportedStepsAreFinalSteps()
{
    StrategyOptions options;
    options.leaveOutOutdone = false;
    const auto run = applyStrategies(unetTraining(false), { "recompute", "swap" }, options);
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    const auto& graph = *run->workload.graph;
    const auto& order = run->workload.schedule.order;
    const auto opAt = [&](int step) -> const Op& { return graph.ops[std::size_t(order[std::size_t(step)])]; };
    const auto reads = [&](const Op& op, const std::string& tensor) {
        return std::any_of(op.inputs.begin(), op.inputs.end(), [&](TensorIndex t) { return graph.tensors[t].name == tensor; });
    };
    const std::regex trip(R"(^(\S+): .* to host after step (\d+), prefetched back at step (\d+) for its read at step (\d+);)");
    const std::regex dropped(R"(^(\S+): .* dropped after step (\d+), recomputed before step (\d+) by)");
    int trips = 0, drops = 0;
    for (const auto& report : run->reports)
        for (const auto& detail : report.details) {
            QVERIFY2(detail.find('\x1e') == std::string::npos, detail.c_str());
            std::smatch m;
            if (std::regex_search(detail, m, trip)) {
                ++trips;
                const std::string name = m[1];
                QVERIFY2(reads(opAt(std::stoi(m[2])), name), detail.c_str());
                QVERIFY2(opAt(std::stoi(m[3])).type == "SwapIn", detail.c_str());
                QVERIFY2(reads(opAt(std::stoi(m[4])), name + ".swapin"), detail.c_str());
            } else if (std::regex_search(detail, m, dropped)) {
                ++drops;
                QVERIFY2(reads(opAt(std::stoi(m[2])), m[1]), detail.c_str());
                QVERIFY2(std::stoi(m[3]) > std::stoi(m[2]), detail.c_str());
            }
        }
    QVERIFY2(trips >= 3 && drops >= 3, qPrintable(QStringLiteral("%1 trips, %2 drops").arg(trips).arg(drops)));
}

void TestStrategies::unetTrainingRecomputeAndSwap_data()
{
    QTest::addColumn<bool>("gradientsInArena");
    QTest::addColumn<QString>("strategy");
    for (const char* name : { "recompute", "swap" }) {
        QTest::addRow("gradients in arena/%s", name) << true << QString::fromLatin1(name);
        QTest::addRow("persistent gradients/%s", name) << false << QString::fromLatin1(name);
    }
}

// The issue's case: recompute and swap lower the peak of the U-Net, whose long skips live from the
// encoder into the backward pass, and each says what it costs.
void TestStrategies::unetTrainingRecomputeAndSwap()
{
    QFETCH(bool, gradientsInArena);
    QFETCH(QString, strategy);
    const auto workload = unetTraining(gradientsInArena);
    const Bytes bound = lowerBound(workload.problem);
    const Bytes arena = validPlan(workload.problem).arenaSize;
    const auto run = applyStrategies(workload, { strategy.toStdString() }, testOptions(workload));
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    const auto& report = run->reports.at(0);
    const Bytes after = lowerBound(run->workload.problem);
    const Bytes arenaAfter = validPlan(run->workload.problem).arenaSize;
    qInfo("example:unet training, weight gradients %s, %s: lower bound %.1f -> %.1f MiB, arena %.1f -> %.1f MiB, extra FLOPs "
          "%.3g, swapped %.1f MiB, extra time %.3f ms",
        gradientsInArena ? "in the arena" : "persistent", qPrintable(strategy), bound / 1048576.0, after / 1048576.0,
        arena / 1048576.0, arenaAfter / 1048576.0, report.extraFlops, report.swappedBytes / 1048576.0, report.extraSeconds * 1e3);
    QCOMPARE(report.lowerBoundBefore, bound);
    QCOMPARE(report.lowerBoundAfter, after);
    QVERIFY(after < bound);
    QVERIFY(arenaAfter < arena);
    if (!gradientsInArena) // activation-bound: the saving is a large part of the peak
        QVERIFY(after < bound * 3 / 5);
    if (strategy == QStringLiteral("recompute")) {
        QVERIFY(report.extraFlops > 0);
        QVERIFY(report.extraSeconds > 0);
        QCOMPARE(report.swappedBytes, Bytes(0));
    } else {
        QVERIFY(report.swappedBytes >= bound - after); // every byte saved went to the host and back
        QCOMPARE(report.extraFlops, 0.0);
        QVERIFY(report.extraSeconds >= 0);
        // Persistent gradients leave little compute in the gaps: the transfers outlast it and stall.
        if (!gradientsInArena)
            QVERIFY(report.extraSeconds > 0);
        int trips = 0;
        for (const auto& op : run->state.graph.ops)
            trips += op.type == "SwapOut";
        QVERIFY(trips > 0);
    }
    const auto problem = meaningProblem(workload, *run);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
}

// Budget mode on the training graph: a budget between the best single strategy and the plain arena is
// met; one below anything reachable is reported as not met, with the smallest arena reached.
void TestStrategies::unetTrainingBudget()
{
    const auto workload = unetTraining(false);
    const auto* planner = plannerByName("greedy-by-size");
    const Bytes plain = validPlan(workload.problem).arenaSize;
    Bytes best = plain;
    for (const char* name : { "recompute", "swap" }) {
        const auto run = applyStrategies(workload, { name }, testOptions(workload));
        QVERIFY(run);
        best = std::min(best, validPlan(run->workload.problem).arenaSize);
    }
    QVERIFY(best < plain);
    const Bytes budget = (best + plain) / 2;
    const auto choice = chooseForBudget(workload, budget, *planner, testOptions(workload));
    QVERIFY2(choice, choice ? "" : choice.error().message.c_str());
    QVERIFY(choice->fits);
    QVERIFY(!choice->names.empty());
    QVERIFY(choice->plan.arenaSize <= budget);
    QVERIFY(validatePlan(choice->run.workload.problem, choice->plan).ok());
    QVERIFY(meaningProblem(workload, choice->run).isEmpty());
    const Bytes impossible = 1 << 20;
    const auto tight = chooseForBudget(workload, impossible, *planner, testOptions(workload));
    QVERIFY(tight);
    QVERIFY(!tight->fits);
    QVERIFY(tight->plan.arenaSize > impossible);
    QVERIFY(tight->plan.arenaSize <= best); // the smallest arena reached, no worse than one strategy alone
    QVERIFY(validatePlan(tight->run.workload.problem, tight->plan).ok());
    qInfo("example:unet training (persistent gradients): plain arena %.1f MiB, best single strategy %.1f MiB, budget %.1f MiB met "
          "with %zu strategies at %.1f MiB; 1 MiB not met, smallest %.1f MiB",
        plain / 1048576.0, best / 1048576.0, budget / 1048576.0, choice->names.size(), choice->plan.arenaSize / 1048576.0,
        tight->plan.arenaSize / 1048576.0);
}

// Swap's time: the two transfers (size / host link each) overlap the compute strictly inside the
// idle gap; only what does not fit shows as a stall, and that is the estimated extra time.
void TestStrategies::swapStallWhenTransferExceedsGap()
{
    const auto workload = skipGraph();
    const auto& graph = *workload.graph;
    // skip is read at steps 1 (pool) and 6 (cat): the gap holds steps 2..5.
    auto options = testOptions(workload);
    double gapSeconds = 0;
    for (Step s = 2; s <= 5; ++s)
        gapSeconds += opSeconds(graph, graph.ops[workload.schedule.order[s]], options.device);
    QVERIFY(gapSeconds > 0);
    for (const double link : { 1e3, 1e15 }) { // 1 s per transfer of 1000 bytes, or next to nothing
        options.device.hostLinkBandwidth = link;
        const auto run = applyStrategies(workload, { "swap" }, options);
        QVERIFY(run);
        const auto& report = run->reports.at(0);
        QCOMPARE(report.swappedBytes, Bytes(1000));
        const double expected = std::max(0.0, 2 * 1000.0 / link - gapSeconds);
        QVERIFY2(std::abs(report.extraSeconds - expected) <= 1e-9 * std::max(1.0, expected),
            qPrintable(QStringLiteral("%1 vs %2").arg(report.extraSeconds).arg(expected)));
        QVERIFY(report.details.at(0).find("skip") != std::string::npos);
        QVERIFY(report.details.at(0).find("stall") != std::string::npos);
        if (link < 1e6)
            QVERIFY(report.extraSeconds > 1.9); // the transfers take 2 s; the gap's compute hides almost none of it
        else
            QCOMPARE(report.extraSeconds, 0.0);
        QVERIFY(lowerBound(run->workload.problem) < lowerBound(workload.problem)); // the stall does not undo the saving
        QVERIFY(meaningProblem(workload, *run).isEmpty());
        validPlan(run->workload.problem);
    }
}

void TestStrategies::unknownStrategyAndProblemWithoutGraph()
{
    const auto workload = loadExample("example:cnn");
    const auto bad = applyStrategies(workload, { "compress" }, testOptions(workload));
    QVERIFY(!bad);
    QVERIFY(bad.error().message.find("compress") != std::string::npos);
    const auto hotel = loadExample("example:hotel");
    const auto noGraph = applyStrategies(hotel, { "fuse" }, testOptions(hotel));
    QVERIFY(!noGraph);
    QVERIFY(noGraph.error().message.find("example:hotel") != std::string::npos);
}

void TestStrategies::budgetFeasibleAndInfeasible()
{
    const auto workload = loadExample("example:cnn");
    const auto* planner = plannerByName("greedy-by-size");
    const auto baseline = runPlanner(*planner, workload.problem);
    QVERIFY(baseline);
    // Feasible only with help: below the plain arena, above what fusion reaches.
    const Bytes budget = baseline->arenaSize - 1;
    const auto choice = chooseForBudget(workload, budget, *planner, testOptions(workload));
    QVERIFY2(choice, choice ? "" : choice.error().message.c_str());
    QVERIFY(choice->fits);
    QVERIFY(!choice->names.empty());
    QVERIFY(choice->plan.arenaSize <= budget);
    QCOMPARE(choice->combinationsTried, 1 << strategyNames().size());
    QVERIFY(validatePlan(choice->run.workload.problem, choice->plan).ok());
    // A budget no combination meets: reported as such, with the smallest arena reached.
    const auto tight = chooseForBudget(workload, 1024, *planner, testOptions(workload));
    QVERIFY(tight);
    QVERIFY(!tight->fits);
    QVERIFY(tight->plan.arenaSize > 1024);
    QVERIFY(tight->plan.arenaSize <= choice->plan.arenaSize);
    // Without a budget problem: the plain model fits a generous budget with no strategy (least time wins ties).
    const auto loose = chooseForBudget(workload, baseline->arenaSize * 10, *planner, testOptions(workload));
    QVERIFY(loose && loose->fits);
}

void TestStrategies::cliPlanAndCompare()
{
    QTemporaryDir dir;
    const auto json = dir.filePath(QStringLiteral("plan.json"));
    QProcess plan;
    plan.start(QStringLiteral(MEMPLAN_CLI), { QStringLiteral("plan"), QStringLiteral("example:cnn"), QStringLiteral("--fuse"),
        QStringLiteral("--inplace"), QStringLiteral("--reorder"), QStringLiteral("--device"), QStringLiteral("rtx4090"),
        QStringLiteral("--json"), json });
    QVERIFY(plan.waitForFinished(60000));
    QCOMPARE(plan.exitCode(), 0);
    QVERIFY(plan.readAllStandardOutput().contains("strategy fuse: lower bound"));
    QFile file(json);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto doc = QJsonDocument::fromJson(file.readAll());
    QVERIFY(doc.isObject());
    const auto list = doc.object().value(QStringLiteral("strategies")).toArray();
    QCOMPARE(list.size(), 3);
    for (const auto& entry : list)
        for (const char* field : { "name", "saved_bytes", "extra_flops", "swapped_bytes", "estimated_transfer_ms", "estimated_extra_ms", "details" })
            QVERIFY2(entry.toObject().contains(QLatin1String(field)), field);
    QCOMPARE(list[0].toObject().value(QStringLiteral("name")).toString(), QStringLiteral("fuse"));
    QVERIFY(list[0].toObject().value(QStringLiteral("saved_bytes")).toDouble() > 0);

    QProcess badDevice;
    badDevice.start(QStringLiteral(MEMPLAN_CLI), { QStringLiteral("plan"), QStringLiteral("example:cnn"), QStringLiteral("--fuse"),
        QStringLiteral("--device"), QStringLiteral("abacus") });
    QVERIFY(badDevice.waitForFinished(60000));
    QCOMPARE(badDevice.exitCode(), 2); // a command-line error, found before the model loads
    QVERIFY(badDevice.readAllStandardError().contains("abacus"));

    QProcess compare;
    compare.start(QStringLiteral(MEMPLAN_CLI), { QStringLiteral("compare"), QStringLiteral("example:transformer"), QStringLiteral("--strategies") });
    QVERIFY(compare.waitForFinished(120000));
    QCOMPARE(compare.exitCode(), 0);
    const auto out = compare.readAllStandardOutput();
    QVERIFY(out.contains("(none)") && out.contains("fuse+reorder+recompute+swap+inplace"));
}

QTEST_GUILESS_MAIN(TestStrategies)
#include "tst_strategies.moc"
