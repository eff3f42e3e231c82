// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// ONNX Runtime profiles: the reader on hand-written profiles (passes, fences, missing memory numbers,
// every refusal with its message), the overlay on a hand-built graph (names, unnamed nodes renumbered
// by ORT, unmapped and unrun), the report and `memplan trace PROFILE --model`, and real profiles
// written at test time by scripts/ort_profile.js with onnxruntime-node (skipped, saying why, when
// node or onnxruntime-node is missing; the tests/models cases also when scripts/make_models.sh has
// not run). The CPU executor's outputs on the torchvision models against ONNX Runtime's (all
// optimizations) for the same input, within 1e-4 of each output's largest magnitude.
#include "clirun.h"
#include "graphbuilder.h"

#include "exec/tensordata.h"
#include "io/workload.h"
#include "planners/metrics.h"
#include "planners/validate.h"
#include "trace/ortreport.h"

#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace core;
using json = nlohmann::json;

namespace {
const std::string kModels = MEMPLAN_SOURCE_DIR "/tests/models/";
const std::string kNodeTests = "/usr/share/libonnx-testdata/data/node/";

json sessionEvent(const std::string& name, std::int64_t ts, std::int64_t dur)
{
    return { { "cat", "Session" }, { "pid", 7 }, { "tid", 7 }, { "dur", dur }, { "ts", ts }, { "ph", "X" }, { "name", name }, { "args", json::object() } };
}

// A kernel event as ONNX Runtime 1.31 writes it: numbers in args as strings.
json nodeEvent(const std::string& name, const std::string& type, int index, std::int64_t ts, std::int64_t inUse, std::int64_t output = 64)
{
    return { { "cat", "Node" }, { "pid", 7 }, { "tid", 7 }, { "dur", 10 + index }, { "ts", ts }, { "ph", "X" }, { "name", name + "_kernel_time" },
        { "args",
            { { "op_name", type }, { "node_index", std::to_string(index) }, { "provider", "CPUExecutionProvider" },
                { "output_size", std::to_string(output) }, { "activation_size", "32" }, { "parameter_size", "16" },
                { "mem_bytes_in_use", std::to_string(inUse) }, { "mem_bytes_requested_in_use", std::to_string(inUse - 8) },
                { "mem_arena_held", std::to_string(inUse * 2) }, { "mem_in_use_peak", std::to_string(inUse + 4) }, { "mem_in_use_delta", "-64" },
                { "thread_scheduling_stats", "" }, { "output_type_shape", json::array({ { { "float", { 1, 16 } } } }) } } } };
}

json fence(const std::string& name, const std::string& which, std::int64_t ts)
{
    return { { "cat", "Node" }, { "ph", "X" }, { "name", name + "_fence_" + which }, { "ts", ts }, { "dur", 0 }, { "args", { { "op_name", "Relu" } } } };
}

// One run of three nodes: "first" (Relu), an unnamed Add (ORT's "Add_1") and "last" (Relu).
json oneRun(std::int64_t start = 1000, std::int64_t base = 4096)
{
    return json::array({ nodeEvent("first", "Relu", 0, start + 1, base), nodeEvent("Add_1", "Add", 1, start + 20, base + 512),
        nodeEvent("last", "Relu", 2, start + 40, base + 256), sessionEvent("model_run", start, 100) });
}

json profileOf(std::vector<json> parts)
{
    json events = json::array({ sessionEvent("model_loading_uri", 1, 50), sessionEvent("session_initialization", 60, 30) });
    for (auto& part : parts)
        for (auto& e : part)
            events.push_back(e);
    return events;
}

OrtProfile parseOrFail(const json& events, std::optional<int> pass = std::nullopt)
{
    auto profile = parseOrtProfile(events.dump(), "p.json", pass);
    if (!profile)
        qFatal("%s", profile.error().message.c_str());
    return std::move(*profile);
}

bool contains(const std::vector<std::string>& notes, const std::string& text)
{
    for (const auto& note : notes)
        if (note.find(text) != std::string::npos)
            return true;
    return false;
}

// x -> first (Relu) -> Add_2 (Add, unnamed: MemPlan's name from ONNX index 2) -> Sub_3 -> Sub_4 -> last (Relu).
// ORT drops a Constant node at index 0, so it calls the unnamed ones Add_1, Sub_2 and Sub_3: its Sub_3
// must map onto MemPlan's Sub_4, not onto MemPlan's Sub_3.
Workload smallGraph()
{
    GraphBuilder b;
    const auto x = b.tensor("x", { 1, 16 }, TensorKind::Input);
    const auto a = b.tensor("a", { 1, 16 }), c = b.tensor("c", { 1, 16 }), d = b.tensor("d", { 1, 16 }), e = b.tensor("e", { 1, 16 });
    const auto y = b.tensor("y", { 1, 16 }, TensorKind::Output);
    const auto w = b.tensor("w", { 1, 16 }, TensorKind::Weight);
    b.op("first", "Relu", { x }, { a });
    b.op("Add_2", "Add", { a, w }, { c });
    b.op("Sub_3", "Sub", { c, w }, { d });
    b.op("Sub_4", "Sub", { d, w }, { e });
    b.op("last", "Relu", { e }, { y });
    return b.workload("small", 64);
}

// Runs scripts/ort_profile.js; an empty string when it wrote `out`, else why not. `skip` is set
// when node or onnxruntime-node is missing (the test then skips rather than fails).
QString writeProfile(const QString& model, const QString& out, const QString& level, int runs, bool* skip,
    const QStringList& extra = {})
{
    *skip = false;
    const auto node = QStandardPaths::findExecutable(QStringLiteral("node"));
    if (node.isEmpty()) {
        *skip = true;
        return QStringLiteral("node is not installed (scripts/setup.sh installs nodejs)");
    }
    const auto run = runProgram(
        node, QStringList { QStringLiteral(MEMPLAN_SOURCE_DIR "/scripts/ort_profile.js"), model, out, level, QString::number(runs) } + extra);
    if (run.exitCode != 0) {
        *skip = run.err.contains(QStringLiteral("onnxruntime-node is not installed"));
        return QStringLiteral("ort_profile.js %1: exit %2: %3").arg(model).arg(run.exitCode).arg(run.err.trimmed());
    }
    return {};
}
} // namespace

class TestOrtProfile : public QObject {
    Q_OBJECT
private slots:
    void readsOneRun();
    void passesByModelRun();
    void passesByNodeIndex();
    void traceEventsObjectAndNoMemory();
    void refusals_data();
    void refusals();
    void deepNestingIsRefusedNotCrashed();
    void overlayByNameAndUnnamedIndex();
    void overlayNeedsGraph();
    void reportTextAndJson();
    void cliProfile();
    void cliRefusals_data();
    void cliRefusals();
    void realProfileOnnxNodeTest();
    void realModels_data();
    void realModels();
    void realModelOptimized();
    void executorMatchesOnnxRuntime_data();
    void executorMatchesOnnxRuntime();
};

void TestOrtProfile::readsOneRun()
{
    auto run = oneRun();
    run.insert(run.begin(), fence("first", "before", 1000)); // ignored, as are other categories
    run.push_back(fence("first", "after", 1012));
    run.push_back({ { "cat", "Api" }, { "name", "OrtRun" }, { "ts", 1 } });
    const auto profile = parseOrFail(profileOf({ run }));
    QCOMPARE(profile.runs, 1);
    QCOMPARE(profile.pass, 0);
    QVERIFY(profile.runsFromSessionEvents);
    QVERIFY(profile.hasMemory);
    QCOMPARE(profile.skippedEvents, 3);
    QVERIFY(profile.notes.empty());
    QCOMPARE(profile.loadUs, 50);
    QCOMPARE(profile.initUs, 30);
    QCOMPARE(profile.runUs, 100);
    QCOMPARE(profile.nodes.size(), std::size_t(3));
    const auto& add = profile.nodes[1];
    QCOMPARE(add.name, std::string("Add_1"));
    QCOMPARE(add.opType, std::string("Add"));
    QCOMPARE(add.provider, std::string("CPUExecutionProvider"));
    QCOMPARE(add.nodeIndex, 1);
    QCOMPARE(add.event, 4); // load, init, fence, first, Add_1
    QCOMPARE(add.tsUs, 1020);
    QCOMPARE(add.durUs, 11);
    QCOMPARE(add.outputBytes, 64);
    QCOMPARE(add.activationBytes, 32);
    QCOMPARE(add.parameterBytes, 16);
    QCOMPARE(add.inUse, 4608);
    QCOMPARE(add.requestedInUse, 4600);
    QCOMPARE(add.arenaHeld, 9216);
    QCOMPARE(add.inUsePeak, 4612);
    QCOMPARE(profile.peakIndex(&OrtNodeEvent::inUse), 1);
    QCOMPARE(profile.peak(&OrtNodeEvent::arenaHeld), 9216);
    QCOMPARE(profile.kernelUs(), 10 + 11 + 12);
}

void TestOrtProfile::passesByModelRun()
{
    // ORT writes each model_run after its nodes; the second run has less in use.
    const auto events = profileOf({ oneRun(1000, 8192), oneRun(2000, 4096) });
    const auto last = parseOrFail(events);
    QCOMPARE(last.runs, 2);
    QCOMPARE(last.pass, 1);
    QCOMPARE(last.nodes.size(), std::size_t(3));
    QCOMPARE(last.nodes[0].tsUs, 2001);
    QCOMPARE(last.peak(&OrtNodeEvent::inUse), 4096 + 512);
    QCOMPARE(last.skippedEvents, 3);
    QVERIFY(contains(last.notes, "2 runs in the profile (told apart by its model_run events); run 2, the last, is used"));
    const auto first = parseOrFail(events, 0);
    QCOMPARE(first.pass, 0);
    QCOMPARE(first.peak(&OrtNodeEvent::inUse), 8192 + 512);
    QVERIFY(contains(first.notes, "run 1 is used"));
    const auto beyond = parseOrtProfile(events.dump(), "p.json", 2);
    QVERIFY(!beyond);
    QCOMPARE(beyond.error().message, std::string("p.json: run 3 asked for; the profile holds 2 runs"));
}

void TestOrtProfile::passesByNodeIndex()
{
    // No model_run events: a pass ends where a node index repeats.
    json events = json::array();
    for (int pass = 0; pass < 3; ++pass)
        for (int i = 0; i < 2; ++i)
            events.push_back(nodeEvent("n" + std::to_string(i), "Relu", i, 100 * pass + 10 * i, 1000 + 100 * pass));
    const auto profile = parseOrFail(events);
    QCOMPARE(profile.runs, 3);
    QCOMPARE(profile.pass, 2);
    QVERIFY(!profile.runsFromSessionEvents);
    QCOMPARE(profile.nodes.size(), std::size_t(2));
    QCOMPARE(profile.nodes[0].inUse, 1200);
    QVERIFY(contains(profile.notes, "told apart by node indices restarting"));
}

void TestOrtProfile::traceEventsObjectAndNoMemory()
{
    json events = json::array();
    for (int i = 0; i < 2; ++i) {
        auto e = nodeEvent("n" + std::to_string(i), "Relu", i, 10 * i, 1000);
        for (const auto* key : { "mem_bytes_in_use", "mem_bytes_requested_in_use", "mem_arena_held", "mem_in_use_peak" })
            e["args"].erase(key);
        e["args"]["output_size"] = 4096; // a JSON number, not a string: read the same
        events.push_back(e);
    }
    const auto profile = parseOrFail(json { { "traceEvents", events }, { "displayTimeUnit", "ms" } });
    QVERIFY(!profile.hasMemory);
    QCOMPARE(profile.peak(&OrtNodeEvent::inUse), -1);
    QCOMPARE(profile.peakIndex(&OrtNodeEvent::arenaHeld), -1);
    QCOMPARE(profile.nodes[1].outputBytes, 4096);
    QCOMPARE(profile.runUs, -1);
    QVERIFY(contains(profile.notes, "no arena numbers"));
    const auto text = formatOrtReport(profile);
    QVERIFY2(text.find("not recorded") != std::string::npos, text.c_str());
}

void TestOrtProfile::refusals_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("message"); // exact, or a prefix when it ends in "..."
    const auto withArg = [](const char* key, json value) {
        auto events = profileOf({ oneRun() });
        events[2]["args"][key] = std::move(value);
        return QByteArray::fromStdString(events.dump());
    };
    const auto without = [](const char* key, bool inArgs) {
        auto events = profileOf({ oneRun() });
        (inArgs ? events[2]["args"] : events[2]).erase(key);
        return QByteArray::fromStdString(events.dump());
    };
    const auto full = QByteArray::fromStdString(profileOf({ oneRun() }).dump());
    QTest::newRow("not json") << QByteArray("PK\x03\x04 zip") << QStringLiteral("p.json: not an ONNX Runtime profile: invalid JSON: ...");
    QTest::newRow("truncated") << full.left(full.size() / 2) << QStringLiteral("p.json: not an ONNX Runtime profile: invalid JSON: ...");
    QTest::newRow("empty file") << QByteArray() << QStringLiteral("p.json: not an ONNX Runtime profile: invalid JSON: ...");
    QTest::newRow("number overflow") << QByteArray(R"([{"cat":"Node","ts":1e999}])") << QStringLiteral("p.json: not an ONNX Runtime profile: invalid JSON: ...");
    QTest::newRow("object") << QByteArray(R"({"tensors":[]})") << QStringLiteral("p.json: not an ONNX Runtime profile: expected a JSON array of trace events");
    QTest::newRow("scalar") << QByteArray("42") << QStringLiteral("p.json: not an ONNX Runtime profile: expected a JSON array of trace events");
    QTest::newRow("empty array") << QByteArray("[]") << QStringLiteral("p.json: not an ONNX Runtime profile: no event has cat \"Node\" or \"Session\"");
    QTest::newRow("other trace") << QByteArray(R"([{"cat":"gpu","name":"k","ph":"X","ts":1,"dur":2}])")
                                 << QStringLiteral("p.json: not an ONNX Runtime profile: no event has cat \"Node\" or \"Session\"");
    QTest::newRow("not an object") << QByteArray(R"([{"cat":"Session","name":"model_run","ts":1,"dur":2}, 7])") << QStringLiteral("p.json: event 1: expected an object");
    QTest::newRow("no run") << QByteArray::fromStdString(profileOf({}).dump())
                            << QStringLiteral("p.json: the profile holds no node event: no run was profiled (profiling ends before the first run?)");
    QTest::newRow("nameless") << without("name", false) << QStringLiteral("p.json: event 2: a Node event without a 'name'");
    QTest::newRow("no args") << without("args", false) << QStringLiteral("p.json: event 2: node 'first' has no 'args' object");
    QTest::newRow("no op_name") << without("op_name", true) << QStringLiteral("p.json: event 2: node 'first' has no 'op_name'");
    QTest::newRow("no node_index") << without("node_index", true) << QStringLiteral("p.json: event 2: node 'first' has no 'node_index'");
    QTest::newRow("no ts") << without("ts", false) << QStringLiteral("p.json: event 2: node 'first' has no 'ts'");
    QTest::newRow("in use not a number") << withArg("mem_bytes_in_use", "12x")
                                         << QStringLiteral("p.json: event 2: 'mem_bytes_in_use' is not a number ('12x')");
    QTest::newRow("in use empty") << withArg("mem_bytes_in_use", "") << QStringLiteral("p.json: event 2: 'mem_bytes_in_use' is not a number ('')");
    QTest::newRow("held a list") << withArg("mem_arena_held", json::array()) << QStringLiteral("p.json: event 2: 'mem_arena_held' is not a number");
    QTest::newRow("negative") << withArg("mem_bytes_requested_in_use", "-5") << QStringLiteral("p.json: event 2: 'mem_bytes_requested_in_use' is negative (-5)");
    QTest::newRow("negative number") << withArg("output_size", -5) << QStringLiteral("p.json: event 2: 'output_size' is negative (-5)");
    QTest::newRow("absurd") << withArg("output_size", "99999999999999999999999")
                            << QStringLiteral("p.json: event 2: 'output_size' is 99999999999999999999999, more than 2^60");
    QTest::newRow("over 2^60") << withArg("activation_size", "1152921504606846977")
                               << QStringLiteral("p.json: event 2: 'activation_size' is 1152921504606846977, more than 2^60");
    QTest::newRow("over 2^60 number") << withArg("parameter_size", std::uint64_t(1) << 62)
                                      << QStringLiteral("p.json: event 2: 'parameter_size' is 4611686018427387904, more than 2^60");
    auto fractional = profileOf({ oneRun() });
    fractional[2]["dur"] = 1.5;
    QTest::newRow("fractional dur") << QByteArray::fromStdString(fractional.dump()) << QStringLiteral("p.json: event 2: 'dur' is not a number");
    auto runWithoutDur = profileOf({ oneRun() });
    runWithoutDur[5].erase("dur");
    QTest::newRow("model_run without dur") << QByteArray::fromStdString(runWithoutDur.dump())
                                           << QStringLiteral("p.json: event 5: a model_run event without 'ts' and 'dur'");
    auto outside = profileOf({ oneRun() });
    outside[5]["ts"] = 5000; // the run starts after every node
    QTest::newRow("nodes outside the run") << QByteArray::fromStdString(outside.dump()) << QStringLiteral("p.json: run 1 executed no node");
}

void TestOrtProfile::refusals()
{
    QFETCH(QByteArray, text);
    QFETCH(QString, message);
    const auto profile = parseOrtProfile(text.toStdString(), "p.json");
    QVERIFY(!profile);
    const auto got = QString::fromStdString(profile.error().message);
    if (message.endsWith(QStringLiteral("...")))
        QVERIFY2(got.startsWith(message.chopped(3)), qPrintable(got));
    else
        QCOMPARE(got, message);
}

void TestOrtProfile::deepNestingIsRefusedNotCrashed()
{
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    const auto profile = parseOrtProfile(deep, "p.json");
    QVERIFY(!profile);
    QCOMPARE(profile.error().message, std::string("p.json: event 0: expected an object"));
}

void TestOrtProfile::overlayByNameAndUnnamedIndex()
{
    const auto workload = smallGraph();
    QCOMPARE(workload.schedule.steps(), 5);
    // ORT's names: "first", the unnamed Add_1, Sub_2, Sub_3 (indices one lower than the file's), an
    // Identity MemPlan folded away (Identity_0), a node ORT made ("ghost"); "last" fused away.
    json run = json::array({ nodeEvent("Identity_0", "Identity", 0, 1, 100), nodeEvent("first", "Relu", 4, 10, 1000, 64),
        nodeEvent("Add_1", "Add", 1, 20, 3000, 64), nodeEvent("ghost", "FusedThing", 9, 25, 9000), nodeEvent("Sub_3", "Sub", 3, 40, 500, 64),
        nodeEvent("Sub_2", "Sub", 2, 30, 2000, 64), sessionEvent("model_run", 0, 100) });
    const auto profile = parseOrFail(profileOf({ run }));
    // Execution order is by start time: Sub_2 (ts 30) ran before Sub_3 (ts 40).
    QCOMPARE(profile.nodes[4].name, std::string("Sub_2"));
    auto overlay = overlayOrtProfile(profile, workload);
    QVERIFY(overlay);
    QCOMPARE(overlay->steps.size(), std::size_t(5));
    QCOMPARE(overlay->mapped, 4);
    const auto nodeAt = [&](Step s) {
        const int n = overlay->steps[std::size_t(s)].node;
        return n < 0 ? std::string("-") : profile.nodes[std::size_t(n)].name;
    };
    QCOMPARE(nodeAt(0), std::string("first"));
    QCOMPARE(nodeAt(1), std::string("Add_1"));
    QCOMPARE(nodeAt(2), std::string("Sub_2")); // MemPlan's Sub_3, whose name ORT's Sub_3 also has
    QCOMPARE(nodeAt(3), std::string("Sub_3"));
    QCOMPARE(nodeAt(4), std::string("-"));
    QCOMPARE(overlay->unrunSteps, std::vector<Step> { 4 });
    std::vector<std::string> unmapped;
    for (const int n : overlay->unmappedNodes)
        unmapped.push_back(profile.nodes[std::size_t(n)].name);
    QCOMPARE(unmapped, (std::vector<std::string> { "Identity_0", "ghost" }));
    QVERIFY(overlay->typeMismatches.empty());

    const auto& step1 = overlay->steps[1];
    QCOMPARE(step1.inUse, 3000);
    QCOMPARE(step1.requestedInUse, 2992);
    QCOMPARE(step1.arenaHeld, 6000);
    QCOMPARE(step1.kernelUs, 11);
    QCOMPARE(step1.ortOutputBytes, 64);
    QCOMPARE(step1.plannedOutputBytes, 64); // 1x16 floats
    const auto live = liveBytesCurve(workload.problem);
    for (const auto& step : overlay->steps)
        QCOMPARE(step.liveBytes, live[std::size_t(step.step)]);
    QCOMPARE(overlay->steps[4].inUse, -1);
    // Gaps |in use - live|, largest first: step 1 (3000), 2 (2000), 0 (1000), 3 (500).
    QCOMPARE(overlay->largestGaps(3), (std::vector<Step> { 1, 2, 0 }));
    QCOMPARE(overlay->largestGaps(0), (std::vector<Step> { 1, 2, 0, 3 })); // 0: all

    // An op ORT ran as another type is mapped, and counted.
    run[1]["args"]["op_name"] = "FusedRelu";
    const auto fused = overlayOrtProfile(parseOrFail(profileOf({ run })), workload);
    QVERIFY(fused);
    QCOMPARE(fused->typeMismatches, std::vector<Step> { 0 });
}

void TestOrtProfile::overlayNeedsGraph()
{
    PlanProblem problem;
    problem.steps = 1;
    Buffer buffer;
    buffer.name = "a";
    buffer.lifetime = { 0, 1 };
    buffer.size = 64;
    problem.buffers.push_back(buffer);
    const auto workload = workloadFromProblem(problem, "x.csv", {});
    const auto overlay = overlayOrtProfile(parseOrFail(profileOf({ oneRun() })), workload);
    QVERIFY(!overlay);
    QCOMPARE(overlay.error().message, std::string("x.csv: has no graph to lay the profile p.json over (an ONNX model is needed)"));
}

void TestOrtProfile::reportTextAndJson()
{
    const auto workload = smallGraph();
    auto run = oneRun();
    run[0]["name"] = "first\x1b[31m_kernel_time"; // a terminal escape in a name is printed escaped
    const auto profile = parseOrFail(profileOf({ run }));
    const auto alone = formatOrtReport(profile);
    QVERIFY2(alone.find("kernel time by op type") != std::string::npos, alone.c_str());
    QVERIFY(alone.find('\x1b') == std::string::npos);
    const auto aloneJson = json::parse(ortReportJson(profile));
    QCOMPARE(aloneJson["peak_in_use_bytes"].get<std::int64_t>(), 4096 + 512);
    QCOMPARE(aloneJson["peak_in_use_node"]["name"].get<std::string>(), std::string("Add_1"));
    QVERIFY(!aloneJson.contains("model"));
    QCOMPARE(aloneJson["op_types"].size(), std::size_t(2));

    const auto overlay = overlayOrtProfile(profile, workload);
    QVERIFY(overlay);
    const auto plan = planForProfile(workload, *plannerByName(kDefaultPlanner));
    QVERIFY(plan);
    QVERIFY(validatePlan(workload.problem, plan->plan).ok());
    const OrtComparison with { &workload, &*overlay, &*plan };
    const auto text = formatOrtReport(profile, with);
    // "first" no longer matches (its name has the escape); the unnamed Add_1 pairs with MemPlan's Add_2.
    for (const auto* part : { "planned arena", "lower bound", "mapped              2 of 5 steps", "unmapped ORT nodes  1 (Relu x1)",
             "steps not run       3", "largest gaps" })
        QVERIFY2(text.find(part) != std::string::npos, (std::string(part) + " not in\n" + text).c_str());
    QVERIFY(text.find('\x1b') == std::string::npos);
    const auto j = json::parse(ortReportJson(profile, with));
    const auto& m = j["model"];
    QCOMPARE(m["steps"].get<int>(), 5);
    QCOMPARE(m["mapped_steps"].get<int>(), 2);
    QCOMPARE(m["planned_arena_bytes"].get<std::int64_t>(), plan->plan.arenaSize);
    QCOMPARE(m["lower_bound_bytes"].get<std::int64_t>(), lowerBound(workload.problem));
    QCOMPARE(m["per_step"].size(), std::size_t(5));
    QVERIFY(m["per_step"][0]["ort_node"].is_null());
    QCOMPARE(m["per_step"][0]["in_use_bytes"].get<std::int64_t>(), -1);
    QCOMPARE(m["per_step"][1]["ort_node"].get<std::string>(), std::string("Add_1"));
    QCOMPARE(m["per_step"][4]["in_use_bytes"].get<std::int64_t>(), 4096 + 256);
    QCOMPARE(m["per_step"][4]["planned_output_bytes"].get<std::int64_t>(), 64);
    QCOMPARE(m["unmapped_nodes"][0]["name"].get<std::string>(), std::string("first\x1b[31m"));
    QCOMPARE(m["unrun_steps"].size(), std::size_t(3));
    QCOMPARE(m["largest_gaps"].size(), std::size_t(2));
}

void TestOrtProfile::cliProfile()
{
    QTemporaryDir dir;
    const auto path = dir.filePath(QStringLiteral("p.json"));
    {
        std::ofstream out(path.toStdString());
        out << "\n  " << profileOf({ oneRun(1000, 8192), oneRun(2000, 4096) }).dump(1);
    }
    auto run = memplan({ QStringLiteral("trace"), path });
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(run.out.contains(QStringLiteral("ONNX Runtime profile, run 2 of 2, 3 nodes")), qPrintable(run.out));
    QVERIFY(run.out.contains(QStringLiteral("run 2, the last, is used")));
    const auto jsonPath = dir.filePath(QStringLiteral("r.json"));
    run = memplan({ QStringLiteral("trace"), path, QStringLiteral("--run"), QStringLiteral("1"), QStringLiteral("--json"), jsonPath });
    QCOMPARE(run.exitCode, 0);
    std::ifstream in(jsonPath.toStdString());
    const auto j = json::parse(in);
    QCOMPARE(j["run_used"].get<int>(), 1);
    QCOMPARE(j["peak_in_use_bytes"].get<std::int64_t>(), 8192 + 512);
    QCOMPARE(j["format"].get<std::string>(), std::string("onnxruntime-profile"));
}

void TestOrtProfile::cliRefusals_data()
{
    QTest::addColumn<QStringList>("arguments"); // P: the written profile, B: the bad one
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");
    QTest::newRow("bad number") << QStringList { QStringLiteral("B") } << 1 << QStringLiteral("memplan: B: event 2: 'mem_bytes_in_use' is not a number ('lots')");
    QTest::newRow("run out of range") << QStringList { QStringLiteral("P"), QStringLiteral("--run"), QStringLiteral("3") } << 1
                                      << QStringLiteral("memplan: P: run 3 asked for; the profile holds 1 run");
    QTest::newRow("run zero") << QStringList { QStringLiteral("P"), QStringLiteral("--run"), QStringLiteral("0") } << 2
                              << QStringLiteral("memplan: trace: --run '0': expected a run number (1 for the first)");
    QTest::newRow("two files") << QStringList { QStringLiteral("P"), QStringLiteral("P") } << 2
                               << QStringLiteral("memplan: trace: an ONNX Runtime profile is read alone (with --model MODEL to compare it with MemPlan's plan); two files compare snapshots and models");
    QTest::newRow("csv") << QStringList { QStringLiteral("P"), QStringLiteral("--csv"), QStringLiteral("x.csv") } << 2
                         << QStringLiteral("memplan: trace: --csv applies to PyTorch snapshots, not to an ONNX Runtime profile");
    QTest::newRow("missing model") << QStringList { QStringLiteral("P"), QStringLiteral("--model"), QStringLiteral("/nonexistent/m.onnx") } << 1 << QString();
    QTest::newRow("model without graph") << QStringList { QStringLiteral("P"), QStringLiteral("--model"), QStringLiteral("example:hotel") } << 1
                                         << QStringLiteral("memplan: example:hotel: has no graph to lay the profile P over (an ONNX model is needed)");
}

void TestOrtProfile::cliRefusals()
{
    QFETCH(QStringList, arguments);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const auto good = dir.filePath(QStringLiteral("p.json")), bad = dir.filePath(QStringLiteral("b.json"));
    auto events = profileOf({ oneRun() });
    std::ofstream(good.toStdString()) << events.dump();
    events[2]["args"]["mem_bytes_in_use"] = "lots";
    std::ofstream(bad.toStdString()) << events.dump();
    QStringList words { QStringLiteral("trace") };
    for (const auto& a : arguments)
        words << (a == QStringLiteral("P") ? good : a == QStringLiteral("B") ? bad : a);
    const auto run = memplan(words);
    QCOMPARE(run.exitCode, exitCode);
    auto expected = message;
    expected.replace(QStringLiteral(" P:"), QStringLiteral(" ") + good + QStringLiteral(":"))
        .replace(QStringLiteral(" B:"), QStringLiteral(" ") + bad + QStringLiteral(":"))
        .replace(QStringLiteral("profile P "), QStringLiteral("profile ") + good + QStringLiteral(" "));
    if (expected.isEmpty())
        QVERIFY2(run.err.startsWith(QStringLiteral("memplan: ")) && run.err.count(QLatin1Char('\n')) == 1, qPrintable(run.err));
    else
        QCOMPARE(run.err.trimmed(), expected);
    QVERIFY(run.out.isEmpty());
}

// A model of libonnx-testdata (installed with MemPlan's build dependencies) holding a Constant node
// before unnamed nodes: ORT numbers them one lower than the file; every one must still map.
void TestOrtProfile::realProfileOnnxNodeTest()
{
    const auto model = kNodeTests + "test_softmax_example_expanded/model.onnx";
    if (!std::filesystem::exists(model))
        QSKIP("libonnx-testdata is not installed (scripts/setup.sh installs it)");
    QTemporaryDir dir;
    const auto out = dir.filePath(QStringLiteral("softmax.json"));
    bool skip = false;
    if (const auto error = writeProfile(QString::fromStdString(model), out, QStringLiteral("disabled"), 1, &skip); !error.isEmpty()) {
        if (skip)
            QSKIP(qPrintable(error));
        QFAIL(qPrintable(error));
    }
    const auto profile = loadOrtProfile(out.toStdString());
    QVERIFY2(profile, profile ? "" : profile.error().message.c_str());
    auto workload = loadWorkload(model, {});
    QVERIFY(workload);
    const auto overlay = overlayOrtProfile(*profile, *workload);
    QVERIFY(overlay);
    QCOMPARE(profile->nodes.size(), std::size_t(5));
    QCOMPARE(overlay->mapped, workload->schedule.steps());
    QVERIFY(overlay->unmappedNodes.empty());
    QCOMPARE(profile->nodes[0].name, std::string("ReduceMax_0")); // MemPlan's ReduceMax_1
    for (const auto& step : overlay->steps)
        QCOMPARE(step.ortOutputBytes, step.plannedOutputBytes);
}

void TestOrtProfile::realModels_data()
{
    QTest::addColumn<QString>("model");
    for (const auto* name : { "mobilenet_v2", "resnet50", "efficientnet_b0" })
        QTest::newRow(name) << QString::fromLatin1(name);
}

// With optimizations disabled every MemPlan step ran as an ORT node of the same type and output
// size; the ORT nodes left over are the Identity ops of weights MemPlan folds at import.
void TestOrtProfile::realModels()
{
    QFETCH(QString, model);
    const auto file = QString::fromStdString(kModels) + model + QStringLiteral(".onnx");
    if (!QFile::exists(file))
        QSKIP(qPrintable(file + QStringLiteral(" is missing: run scripts/make_models.sh to export the test models")));
    QTemporaryDir dir;
    const auto out = dir.filePath(QStringLiteral("profile.json"));
    bool skip = false;
    if (const auto error = writeProfile(file, out, QStringLiteral("disabled"), 2, &skip); !error.isEmpty()) {
        if (skip)
            QSKIP(qPrintable(error));
        QFAIL(qPrintable(error));
    }
    const auto profile = loadOrtProfile(out.toStdString());
    QVERIFY2(profile, profile ? "" : profile.error().message.c_str());
    QCOMPARE(profile->runs, 2);
    QCOMPARE(profile->pass, 1);
    QVERIFY(profile->runsFromSessionEvents);
    QVERIFY(profile->hasMemory);
    auto workload = loadWorkload(file.toStdString(), {});
    QVERIFY(workload);
    const auto overlay = overlayOrtProfile(*profile, *workload);
    QVERIFY(overlay);
    QCOMPARE(overlay->mapped, workload->schedule.steps());
    QVERIFY(overlay->unrunSteps.empty());
    QVERIFY(overlay->typeMismatches.empty());
    for (const int n : overlay->unmappedNodes)
        QCOMPARE(profile->nodes[std::size_t(n)].opType, std::string("Identity"));
    for (const auto& step : overlay->steps)
        QCOMPARE(step.ortOutputBytes, step.plannedOutputBytes);
    const auto plan = planForProfile(*workload, *plannerByName(kDefaultPlanner));
    QVERIFY(plan);
    QVERIFY(validatePlan(workload->problem, plan->plan).ok());
    // ORT's arena numbers are self-consistent, and its peak in use is at least MemPlan's lower bound:
    // the bytes live at MemPlan's peak step are the tensors ORT holds there too.
    const auto inUse = profile->peak(&OrtNodeEvent::inUse);
    QVERIFY(profile->peak(&OrtNodeEvent::requestedInUse) <= inUse);
    QVERIFY(inUse <= profile->peak(&OrtNodeEvent::arenaHeld));
    QVERIFY2(inUse >= plan->lowerBound, qPrintable(QStringLiteral("ORT in use %1, MemPlan lower bound %2").arg(inUse).arg(plan->lowerBound)));

    const auto jsonPath = dir.filePath(QStringLiteral("report.json"));
    const auto run = memplan({ QStringLiteral("trace"), out, QStringLiteral("--model"), file, QStringLiteral("--json"), jsonPath });
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(run.out.contains(QStringLiteral("planned arena")), qPrintable(run.out));
    std::ifstream in(jsonPath.toStdString());
    const auto j = json::parse(in);
    QCOMPARE(j["model"]["mapped_steps"].get<int>(), workload->schedule.steps());
    QCOMPARE(j["model"]["planned_arena_bytes"].get<std::int64_t>(), plan->plan.arenaSize);
    QCOMPARE(j["peak_in_use_bytes"].get<std::int64_t>(), inUse);
}

// With every optimization ORT fuses nodes (Conv with BatchNormalization and activations): steps
// are then left unrun and ORT's own nodes unmapped, and the report says so.
void TestOrtProfile::realModelOptimized()
{
    const auto file = QString::fromStdString(kModels) + QStringLiteral("resnet50.onnx");
    if (!QFile::exists(file))
        QSKIP(qPrintable(file + QStringLiteral(" is missing: run scripts/make_models.sh to export the test models")));
    QTemporaryDir dir;
    const auto out = dir.filePath(QStringLiteral("profile.json"));
    bool skip = false;
    if (const auto error = writeProfile(file, out, QStringLiteral("all"), 1, &skip); !error.isEmpty()) {
        if (skip)
            QSKIP(qPrintable(error));
        QFAIL(qPrintable(error));
    }
    const auto profile = loadOrtProfile(out.toStdString());
    QVERIFY2(profile, profile ? "" : profile.error().message.c_str());
    auto workload = loadWorkload(file.toStdString(), {});
    QVERIFY(workload);
    const auto overlay = overlayOrtProfile(*profile, *workload);
    QVERIFY(overlay);
    QVERIFY(overlay->mapped < workload->schedule.steps());
    QVERIFY(!overlay->unrunSteps.empty());
    // Most of ORT's nodes are its NCHWc Convs named after the tensor they compute: each lands on
    // the step producing that tensor (a Conv's, or the Relu's after it when fused).
    QVERIFY2(overlay->fused > int(profile->nodes.size()) / 2, qPrintable(QString::number(overlay->fused)));
    for (const auto& step : overlay->steps)
        if (step.fused)
            QCOMPARE(step.ortOutputBytes, step.plannedOutputBytes);
    QCOMPARE(overlay->mapped + int(overlay->unrunSteps.size()), workload->schedule.steps());
    QCOMPARE(overlay->mapped + int(overlay->unmappedNodes.size()), int(profile->nodes.size()));
}

void TestOrtProfile::executorMatchesOnnxRuntime_data()
{
    QTest::addColumn<QString>("model");
    for (const auto* name : { "mobilenet_v2", "resnet50", "efficientnet_b0", "swin_t" })
        QTest::newRow(name) << QString::fromLatin1(name);
}

// `memplan run` (oneDNN kernels, the planned arena) on the input ONNX Runtime ran with all its
// optimizations: every output within 1e-4 of the output's largest magnitude. The arena run is also
// bit-identical to the no-reuse run (run exits 1 otherwise).
void TestOrtProfile::executorMatchesOnnxRuntime()
{
    QFETCH(QString, model);
    const auto file = QString::fromStdString(kModels) + model + QStringLiteral(".onnx");
    if (!QFile::exists(file))
        QSKIP(qPrintable(file + QStringLiteral(" is missing: run scripts/make_models.sh to export the test models")));
    QTemporaryDir dir;
    const QString ortDir = dir.filePath(QStringLiteral("ort")), ours = dir.filePath(QStringLiteral("memplan"));
    bool skip = false;
    if (const auto error = writeProfile(file, dir.filePath(QStringLiteral("profile.json")), QStringLiteral("all"), 1, &skip,
            { QStringLiteral("--save-io"), ortDir });
        !error.isEmpty()) {
        if (skip)
            QSKIP(qPrintable(error));
        QFAIL(qPrintable(error));
    }
    std::ifstream ioFile((ortDir + QStringLiteral("/io.json")).toStdString());
    const json io = json::parse(ioFile);
    QStringList arguments { QStringLiteral("run"), file, QStringLiteral("--repeat"), QStringLiteral("1"),
        QStringLiteral("--save-outputs"), ours };
    for (const auto& input : io.at("inputs"))
        arguments << QStringLiteral("--input")
                  << QString::fromStdString(input.at("name").get<std::string>() + "=" + input.at("file").get<std::string>());
    const auto run = memplan(arguments, 600000);
    QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
    QVERIFY2(run.out.contains(QStringLiteral("kernels")), qPrintable(run.out));
    QVERIFY(!io.at("outputs").empty());
    int k = 0;
    for (const auto& output : io.at("outputs")) {
        const auto expected = readTensorFile(output.at("file").get<std::string>());
        const auto actual = readTensorFile((ours + QStringLiteral("/output_%1.pb").arg(k++)).toStdString());
        // The message is built only on failure: QVERIFY2 evaluates it either way.
        if (!expected || !actual)
            QFAIL((!expected ? expected.error() : actual.error()).message.c_str());
        const HostTensor& a = expected->second;
        const HostTensor& b = actual->second;
        QCOMPARE(b.dtype, DType::Float32);
        QCOMPARE(a.dtype, b.dtype);
        QCOMPARE(a.shape, b.shape);
        QCOMPARE(a.data.size(), b.data.size());
        const auto count = a.data.size() / sizeof(float);
        std::vector<float> x(count), y(count);
        std::memcpy(x.data(), a.data.data(), a.data.size());
        std::memcpy(y.data(), b.data.data(), b.data.size());
        double largest = 0, off = 0;
        for (std::size_t i = 0; i < count; ++i) {
            largest = std::max(largest, double(std::abs(x[i])));
            off = std::max(off, double(std::abs(x[i] - y[i])));
        }
        QVERIFY(largest > 0); // a real output, not zeros on both sides
        QVERIFY2(off <= 1e-4 * largest,
            qPrintable(QStringLiteral("%1 output %2: max |memplan - ort| %3, largest |ort| %4")
                           .arg(model, QString::fromStdString(output.at("name").get<std::string>()))
                           .arg(off)
                           .arg(largest)));
    }
}

QTEST_GUILESS_MAIN(TestOrtProfile)
#include "tst_ortprofile.moc"
