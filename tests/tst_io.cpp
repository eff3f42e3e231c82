// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// File formats: JSON graph (parse, export, errors), allocation-problem CSV (benchmarks, errors,
// round trip, speed) and the plan JSON of docs/FILE_FORMATS.md.
#include "examples/examples.h"
#include "io/jsongraph.h"
#include "liveness/lifetimes.h"
#include "onnx/onnximport.h"
#include "schedule/schedule.h"
#include "io/planjson.h"
#include "io/problemcsv.h"
#include "planners/metrics.h"

#include <QElapsedTimer>
#include <QRegularExpression>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>

using namespace core;

namespace {
const QString kDataDir = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/data/");
const QString kBenchmarkDir = QStringLiteral(MEMPLAN_BENCHMARK_DIR "/");

std::string dataFile(const char* name) { return (kDataDir + QLatin1String(name)).toStdString(); }

QString show(const std::vector<std::int64_t>& values)
{
    QStringList parts;
    for (auto v : values)
        parts << QString::number(v);
    return QLatin1Char('[') + parts.join(QLatin1Char(',')) + QLatin1Char(']');
}

// First difference between two graphs, or an empty string when they are the same.
QString graphDifference(const Graph& a, const Graph& b)
{
    auto q = [](const std::string& s) { return QString::fromStdString(s); };
    if (a.name != b.name)
        return QStringLiteral("name %1 vs %2").arg(q(a.name), q(b.name));
    if (a.tensors.size() != b.tensors.size())
        return QStringLiteral("tensor count %1 vs %2").arg(a.tensors.size()).arg(b.tensors.size());
    for (std::size_t i = 0; i < a.tensors.size(); ++i) {
        const auto &x = a.tensors[i], &y = b.tensors[i];
        const auto where = QStringLiteral("tensor %1 '%2': ").arg(i).arg(q(x.name));
        if (x.name != y.name)
            return where + QStringLiteral("name vs '%1'").arg(q(y.name));
        if (x.dtype != y.dtype)
            return where + QStringLiteral("dtype %1 vs %2").arg(q(std::string(dtypeName(x.dtype))), q(std::string(dtypeName(y.dtype))));
        if (x.shape != y.shape || x.rankKnown != y.rankKnown)
            return where + QStringLiteral("shape %1 vs %2").arg(show(x.shape), show(y.shape));
        if (x.size != y.size)
            return where + QStringLiteral("size %1 vs %2").arg(x.size).arg(y.size);
        if (x.kind != y.kind)
            return where + QStringLiteral("kind %1 vs %2").arg(q(std::string(kindName(x.kind))), q(std::string(kindName(y.kind))));
        if (x.estimated != y.estimated)
            return where + QStringLiteral("estimated differs");
        if (x.sequence != y.sequence || x.listExact != y.listExact || x.optional != y.optional)
            return where + QStringLiteral("sequence/list_exact/optional differ");
        if (x.values != y.values)
            return where + QStringLiteral("values %1 vs %2").arg(show(x.values), show(y.values));
        if (x.items != y.items)
            return where + QStringLiteral("items differ");
        if (x.category != y.category || x.module != y.module)
            return where + QStringLiteral("category/module '%1' '%2' vs '%3' '%4'").arg(q(x.category), q(x.module), q(y.category), q(y.module));
    }
    if (a.ops.size() != b.ops.size())
        return QStringLiteral("op count %1 vs %2").arg(a.ops.size()).arg(b.ops.size());
    for (std::size_t i = 0; i < a.ops.size(); ++i) {
        const auto &x = a.ops[i], &y = b.ops[i];
        const auto where = QStringLiteral("op %1 '%2': ").arg(i).arg(q(x.name));
        if (x.name != y.name || x.type != y.type || x.domain != y.domain)
            return where + QStringLiteral("name/type/domain vs '%1' %2 %3").arg(q(y.name), q(y.type), q(y.domain));
        if (x.inputs != y.inputs || x.outputs != y.outputs || x.captured != y.captured)
            return where + QStringLiteral("tensors differ");
        if (x.inputSlots != y.inputSlots || x.outputSlots != y.outputSlots)
            return where + QStringLiteral("slots differ");
        if (x.attributes != y.attributes)
            return where + QStringLiteral("attributes differ");
        if (x.module != y.module || x.phase != y.phase)
            return where + QStringLiteral("module/phase '%1' '%2' vs '%3' '%4'").arg(q(x.module), q(x.phase), q(y.module), q(y.phase));
        if (x.bodies.size() != y.bodies.size())
            return where + QStringLiteral("%1 vs %2 bodies").arg(x.bodies.size()).arg(y.bodies.size());
        for (std::size_t k = 0; k < x.bodies.size(); ++k) {
            if (x.bodies[k].attribute != y.bodies[k].attribute)
                return where + QStringLiteral("body %1 vs %2").arg(q(x.bodies[k].attribute), q(y.bodies[k].attribute));
            if (const auto inner = graphDifference(*x.bodies[k].graph, *y.bodies[k].graph); !inner.isEmpty())
                return where + QStringLiteral("body %1: ").arg(q(x.bodies[k].attribute)) + inner;
        }
    }
    if (a.inputs != b.inputs || a.outputs != b.outputs)
        return QStringLiteral("graph inputs/outputs differ");
    if (a.notes != b.notes)
        return QStringLiteral("notes differ");
    if (a.opsets != b.opsets)
        return QStringLiteral("opsets differ");
    if (a.capture != b.capture)
        return QStringLiteral("capture differs");
    return {};
}

// A graph document with one entry per line: tensor i is on line 3 + i, op j on line 5 + tensors + j.
std::string graphText(const std::vector<std::string>& tensors, const std::vector<std::string>& ops,
    const std::string& tail = R"("inputs": ["x"], "outputs": ["y"])")
{
    std::string text = "{\n  \"tensors\": [\n";
    for (std::size_t i = 0; i < tensors.size(); ++i)
        text += "    " + tensors[i] + (i + 1 < tensors.size() ? ",\n" : "\n");
    text += "  ],\n  \"ops\": [\n";
    for (std::size_t i = 0; i < ops.size(); ++i)
        text += "    " + ops[i] + (i + 1 < ops.size() ? ",\n" : "\n");
    text += "  ]" + (tail.empty() ? std::string() : ",\n  " + tail) + "\n}\n";
    return text;
}

const std::string kX = R"({"name": "x", "dtype": "float32", "shape": [1, 4]})";
const std::string kY = R"({"name": "y", "dtype": "float32", "shape": [1, 4]})";
const std::string kRelu = R"({"name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["y"]})";

// Max live bytes by an event sweep, independent of core::lowerBound.
Bytes sweepLowerBound(const PlanProblem& problem)
{
    std::map<Step, Bytes> delta;
    for (const auto& b : problem.buffers) {
        delta[b.lifetime.start] += b.size;
        delta[b.lifetime.end] -= b.size;
    }
    Bytes live = 0, peak = 0;
    for (const auto& [step, change] : delta)
        peak = std::max(peak, live += change);
    return peak;
}
} // namespace

class TestIo : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void jsonParse();
    void jsonBindings();
    void jsonRoundTrip();
    void jsonExampleRoundTrip_data();
    void jsonExampleRoundTrip();
    void jsonErrors_data();
    void jsonBodiesRoundTrip();
    void jsonErrors();
    void jsonFiles();

    void csvBenchmarks_data();
    void csvBenchmarks();
    void csvFormats();
    void csvErrors_data();
    void csvErrors();
    void csvRoundTrip();
    void csvLarge();
    void csvFiles();

    void planJson();
    void planJsonColorsAndEmpty();
};

void TestIo::jsonParse()
{
    const std::string text = R"({
  "name": "tiny",
  "tensors": [
    { "name": "x", "dtype": "float32", "shape": [2, 3] },
    { "name": "w", "dtype": "FLOAT16", "shape": [3, 5], "kind": "weight" },
    { "name": "h", "bytes": 512 },
    { "name": "state", "bytes": 64, "kind": "persistent" },
    { "name": "y", "dtype": "int8", "shape": [2, 5], "comment": "teaching note" }
  ],
  "ops": [
    { "name": "mm", "type": "MatMul", "inputs": ["x", "w"], "outputs": ["h"],
      "attributes": { "axis": -1, "alpha": 0.5, "perm": [0, 2, 1], "scales": [1, 2.5], "mode": "nearest", "empty": [] } },
    { "name": "q", "type": "QuantizeLinear", "domain": "com.example", "inputs": ["h", "", "state"], "outputs": ["y"] }
  ],
  "inputs": ["x"], "outputs": ["y"]
})";
    const auto graph = parseJsonGraph(text, "tiny.json");
    QVERIFY2(graph, graph ? "" : graph.error().message.c_str());
    QCOMPARE(graph->name, std::string("tiny"));
    QCOMPARE(graph->tensors.size(), std::size_t(5));
    const auto& t = graph->tensors;
    QCOMPARE(t[0].size, Bytes(2 * 3 * 4));
    QCOMPARE(t[0].kind, TensorKind::Input);
    QVERIFY(t[0].rankKnown);
    QCOMPARE(t[1].size, Bytes(3 * 5 * 2));
    QCOMPARE(t[1].dtype, DType::Float16);
    QCOMPARE(t[1].kind, TensorKind::Weight);
    QCOMPARE(t[2].size, Bytes(512));
    QCOMPARE(t[2].kind, TensorKind::Activation);
    QVERIFY(!t[2].rankKnown);
    QCOMPARE(t[3].kind, TensorKind::Persistent);
    QCOMPARE(t[4].size, Bytes(10));
    QCOMPARE(t[4].kind, TensorKind::Output);
    QCOMPARE(graph->inputs, std::vector<TensorIndex>({ 0 }));
    QCOMPARE(graph->outputs, std::vector<TensorIndex>({ 4 }));

    QCOMPARE(graph->ops.size(), std::size_t(2));
    const auto& mm = graph->ops[0];
    QCOMPARE(mm.type, std::string("MatMul"));
    QCOMPARE(mm.inputs, std::vector<TensorIndex>({ 0, 1 }));
    QCOMPARE(mm.outputs, std::vector<TensorIndex>({ 2 }));
    QCOMPARE(mm.attributes.at("axis").ints, std::vector<std::int64_t>({ -1 }));
    QCOMPARE(mm.attributes.at("alpha").floats, std::vector<float>({ 0.5f }));
    QCOMPARE(mm.attributes.at("perm").ints, std::vector<std::int64_t>({ 0, 2, 1 }));
    QCOMPARE(mm.attributes.at("scales").floats, std::vector<float>({ 1.0f, 2.5f }));
    QCOMPARE(mm.attributes.at("mode").text, std::string("nearest"));
    QVERIFY(mm.attributes.at("empty") == (Attribute { {}, {}, {}, true })); // an empty list
    const auto& q = graph->ops[1];
    QCOMPARE(q.domain, std::string("com.example"));
    QCOMPARE(q.inputs, std::vector<TensorIndex>({ 2, 3 })); // "" is an optional input left out

    // Without "inputs"/"outputs" lists the kinds decide; without "name" the file name does.
    const auto implicit = parseJsonGraph(graphText({ R"({"name": "x", "bytes": 4, "kind": "input"})",
                                                       R"({"name": "y", "bytes": 4, "kind": "output"})" },
                                             { kRelu }, ""),
        "dir/implicit.json");
    QVERIFY2(implicit, implicit ? "" : implicit.error().message.c_str());
    QCOMPARE(implicit->name, std::string("implicit"));
    QCOMPARE(implicit->inputs, std::vector<TensorIndex>({ 0 }));
    QCOMPARE(implicit->outputs, std::vector<TensorIndex>({ 1 }));
}

void TestIo::jsonBindings()
{
    const auto text = graphText({ R"({"name": "x", "dtype": "float32", "shape": ["batch", "seq", 8]})",
                                    R"({"name": "y", "dtype": "float32", "shape": ["batch", null, 8], "bytes": 100})" },
        { kRelu });
    ShapeBindings bindings;
    bindings.dims = { { "batch", 2 }, { "seq", 16 } };
    const auto graph = parseJsonGraph(text, "sym.json", bindings);
    QVERIFY2(graph, graph ? "" : graph.error().message.c_str());
    QCOMPARE(graph->tensors[0].shape, std::vector<std::int64_t>({ 2, 16, 8 }));
    QCOMPARE(graph->tensors[0].size, Bytes(2 * 16 * 8 * 4));
    QCOMPARE(graph->tensors[1].shape, std::vector<std::int64_t>({ 2, -1, 8 }));
    QCOMPARE(graph->tensors[1].size, Bytes(100)); // "bytes" wins

    // An unbound symbol is fine where "bytes" gives the size; otherwise the error names it.
    const auto unbound = parseJsonGraph(text, "sym.json");
    QVERIFY(!unbound);
    QCOMPARE(unbound.error().code, ErrorCode::InvalidArgument);
    QVERIFY2(QString::fromStdString(unbound.error().message).contains(QLatin1String("'batch'")), unbound.error().message.c_str());

    // --input-shape replaces a graph input's declared shape, symbols included.
    ShapeBindings inputShape;
    inputShape.inputShapes = { { "x", { 3, 4, 8 } } };
    const auto bound = parseJsonGraph(text, "sym.json", inputShape);
    QVERIFY2(bound, bound ? "" : bound.error().message.c_str());
    QCOMPARE(bound->tensors[0].size, Bytes(3 * 4 * 8 * 4));
    ShapeBindings notAnInput;
    notAnInput.inputShapes = { { "y", { 1 } } };
    notAnInput.dims = bindings.dims;
    const auto wrong = parseJsonGraph(text, "sym.json", notAnInput);
    QVERIFY(!wrong);
    QCOMPARE(wrong.error().code, ErrorCode::InvalidArgument);
    QVERIFY2(QString::fromStdString(wrong.error().message).contains(QLatin1String("'y'")), wrong.error().message.c_str());
}

void TestIo::jsonRoundTrip()
{
    const auto text = graphText(
        {
            R"({"name": "x", "dtype": "float32", "shape": [1, 4]})",
            R"({"name": "y", "dtype": "float32", "shape": [1, 4]})",
            R"({"name": "w", "dtype": "int64", "shape": [], "kind": "weight"})",
            R"({"name": "h", "bytes": 48})",
            R"({"name": "u", "dtype": "bfloat16", "shape": [null, 3]})",
            R"({"name": "e", "dtype": "float32", "shape": [1000], "bytes": 400, "estimated": true})",
            R"({"name": "s", "bytes": null, "kind": "persistent"})",
            R"({"name": "n\u00e4me \"q\"", "dtype": "uint8", "shape": [0, 7]})",
            R"({"name": "s@1", "bytes": 0, "kind": "persistent", "category": "optimizer_state", "module": ""})",
            R"({"name": "g", "bytes": 16, "kind": "persistent", "category": "gradient", "module": "layer1.0.conv1"})",
        },
        {
            R"({"name": "a", "type": "NonZero", "inputs": ["x"], "outputs": ["e"], "attributes": {"eps": 1e-05, "k": [3, 3], "g": 1, "f": [0.1, 0.2], "mode": "x", "one": [2], "names": ["p", "q,r", ""]}})",
            R"({"name": "b", "type": "If", "domain": "ai.onnx", "inputs": ["e"], "outputs": ["", "h", "", "u"], "captured": ["w", "s"]})",
            R"({"type": "Concat", "inputs": ["h", "n\u00e4me \"q\""], "outputs": ["y"]})",
            R"({"name": "c", "type": "convolution_backward", "domain": "aten", "inputs": ["x"], "outputs": ["g"], "module": "layer1.0.conv1", "phase": "backward", "attributes": {"flops": 1234, "overload": "default"}})",
            R"({"name": "d", "type": "add_", "domain": "aten", "inputs": ["s", "g"], "outputs": ["s@1"], "module": "", "phase": "optimizer"})",
        },
        R"("inputs": ["x"], "outputs": ["y", "u"], "notes": ["one note"], "opsets": {"": 11, "com.example": 2},
  "capture": {"framework": "torch", "batch": 32, "lr": 0.1, "version": "8"})");
    const auto first = parseJsonGraph(text, "rt.json");
    QVERIFY2(first, first ? "" : first.error().message.c_str());
    QCOMPARE(first->ops[1].outputSlots, (std::vector<int> { 1, 3 }));
    QCOMPARE(first->opsets.at(""), std::int64_t(11));
    QCOMPARE(first->ops[0].attributes.at("names").strings, (std::vector<std::string> { "p", "q,r", "" }));
    QVERIFY(first->ops[0].attributes.at("one").list);
    QCOMPARE(first->tensors[2].size, Bytes(8)); // rank-0 int64
    QCOMPARE(first->tensors[4].size, kUnknownSize);
    QCOMPARE(first->tensors[7].size, Bytes(0));
    QCOMPARE(first->ops[0].attributes.at("eps").floats, std::vector<float>({ 1e-5f }));
    QCOMPARE(first->tensors[9].category, std::string("gradient"));
    QCOMPARE(first->tensors[9].module, std::string("layer1.0.conv1"));
    QCOMPARE(first->ops[3].phase, std::string("backward"));
    QCOMPARE(first->capture, (std::map<std::string, std::string> { { "batch", "32" }, { "framework", "torch" }, { "lr", "0.1" }, { "version", "8" } }));

    const auto exported = exportJsonGraph(*first);
    QVERIFY2(exported.find("1e-05") != std::string::npos, exported.c_str()); // floats written in their shortest form
    QVERIFY2(exported.find(R"("batch":32)") != std::string::npos, exported.c_str()); // capture numbers stay numbers
    QVERIFY2(exported.find(R"("framework":"torch")") != std::string::npos, exported.c_str()); // and strings strings
    const auto second = parseJsonGraph(exported, "exported.json");
    QVERIFY2(second, second ? "" : (second.error().message + "\n" + exported).c_str());
    const auto difference = graphDifference(*first, *second);
    QVERIFY2(difference.isEmpty(), qPrintable(difference + QLatin1Char('\n') + QString::fromStdString(exported)));
    QCOMPARE(exportJsonGraph(*second), exported);

    // A graph built in code (no "bytes" beside shapes, unknown rank, undefined dtype) survives too.
    Graph built;
    built.name = "built";
    built.tensors = { Tensor { "in", DType::Float32, { 2, 2 }, true, 16, TensorKind::Input, false },
        Tensor { "mid", DType::Undefined, {}, false, kUnknownSize, TensorKind::Activation, false },
        Tensor { "out", DType::Float64, { 3 }, true, 24, TensorKind::Output, false } };
    built.ops = { Op { "o1", "Relu", "", {}, { 0 }, { 1 } }, Op { "o2", "Cast", "", { { "to", Attribute { { 11 }, {}, {} } } }, { 1 }, { 2 } } };
    built.inputs = { 0 };
    built.outputs = { 2 };
    // A list of known pieces, an optional, a shape constant's contents and a list input's elements.
    built.tensors[1].sequence = built.tensors[1].listExact = built.tensors[1].estimated = true;
    built.tensors[2].optional = true;
    built.tensors[0].values = { 2, -1 };
    built.tensors.push_back(Tensor { .name = "list_in", .dtype = DType::Float32, .size = 40, .kind = TensorKind::Input,
        .estimated = true, .sequence = true, .items = { { 2, 3 }, { 4 } } });
    built.inputs.push_back(3);
    const auto builtText = exportJsonGraph(built);
    const auto back = parseJsonGraph(builtText, "built.json");
    QVERIFY2(back, back ? "" : back.error().message.c_str());
    const auto builtDifference = graphDifference(built, *back);
    QVERIFY2(builtDifference.isEmpty(), qPrintable(builtDifference + QLatin1Char('\n') + QString::fromStdString(builtText)));
    QVERIFY(!sizeIsBound(back->tensors[1])); // the list's size stays exact
}

void TestIo::jsonExampleRoundTrip_data()
{
    QTest::addColumn<QString>("name");
    for (const auto* name : { "cnn", "unet", "transformer" })
        QTest::newRow(name) << QString::fromLatin1(name);
}

void TestIo::jsonExampleRoundTrip()
{
    QFETCH(QString, name);
    const auto example = buildExample(name.toStdString());
    QVERIFY2(example, example ? "" : example.error().message.c_str());
    QVERIFY(example->graph);
    const auto text = exportJsonGraph(*example->graph);
    const auto back = parseJsonGraph(text, name.toStdString() + ".json");
    QVERIFY2(back, back ? "" : back.error().message.c_str());
    const auto difference = graphDifference(*example->graph, *back);
    QVERIFY2(difference.isEmpty(), qPrintable(difference));
    QVERIFY(text.find("\"bytes\"") == std::string::npos); // every size follows from dtype × shape
}

// Control-flow ops' graphs (Op::bodies) travel in the JSON graph: ONNX models with If, Loop and Scan
// export, read back as the same graphs, and plan the same nested arenas.
void TestIo::jsonBodiesRoundTrip()
{
    const std::string node = "/usr/share/libonnx-testdata/data/node/";
    const std::vector<std::string> models = { node + "test_if/model.onnx", node + "test_range_float_type_positive_delta_expanded/model.onnx",
        node + "test_scan9_sum/model.onnx", MEMPLAN_SOURCE_DIR "/tests/models/tricky/vad_if.onnx" };
    int checked = 0, withArena = 0;
    for (const auto& path : models) {
        if (!std::filesystem::exists(path)) {
            qWarning("skipped %s: missing (libonnx-testdata, scripts/make_tricky_models.py)", path.c_str());
            continue;
        }
        const auto graph = importOnnx(path);
        QVERIFY2(graph, graph ? "" : graph.error().message.c_str());
        QVERIFY2(std::any_of(graph->ops.begin(), graph->ops.end(), [](const Op& op) { return !op.bodies.empty(); }), path.c_str());
        const auto text = exportJsonGraph(*graph);
        QVERIFY2(text.find(R"("bodies":)") != std::string::npos, path.c_str());
        const auto back = parseJsonGraph(text, "bodies.json");
        QVERIFY2(back, back ? "" : (back.error().message + "\n" + text).c_str());
        const auto difference = graphDifference(*graph, *back);
        QVERIFY2(difference.isEmpty(), qPrintable(QString::fromStdString(path) + ": " + difference));
        QCOMPARE(exportJsonGraph(*back), text);

        auto arenas = [](const Graph& g) {
            std::vector<Bytes> out;
            const auto schedule = modelOrder(g);
            const auto built = makeProblem(g, *schedule, ProblemOptions {});
            if (!built)
                return out;
            std::function<void(const std::vector<NestedPlan>&)> walk = [&](const std::vector<NestedPlan>& plans) {
                for (const auto& n : plans) {
                    out.push_back(n.plan.arenaSize);
                    walk(n.built.nested);
                }
            };
            walk(built->nested);
            return out;
        };
        const auto before = arenas(*graph), after = arenas(*back);
        QVERIFY2(!before.empty(), path.c_str());
        QCOMPARE(after, before);
        withArena += std::any_of(before.begin(), before.end(), [](Bytes b) { return b > 0; });
        ++checked;
    }
    if (checked == 0)
        QSKIP("neither libonnx-testdata nor tests/models/tricky is there");
    QVERIFY(withArena > 0); // test_if's branches hold only constants; the Loop's and Scan's bodies compute

    // A body's errors name the file, the op's line and the body.
    const auto bad = graphText({ R"({"name": "x", "dtype": "bool", "shape": []})", R"({"name": "y", "dtype": "float32", "shape": [2]})" },
        { R"({"name": "cf", "type": "If", "inputs": ["x"], "outputs": ["y"], "bodies": [{"attribute": "then_branch", "graph": {"tensors": [], "ops": [{"type": "Relu", "inputs": ["nope"], "outputs": ["z"]}]}}]})" });
    const auto refused = parseJsonGraph(bad, "bad.json");
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.rfind("bad.json:7: ops[0] 'cf' body 'then_branch': ", 0) == 0, refused.error().message.c_str());
    QVERIFY2(refused.error().message.find("nope") != std::string::npos, refused.error().message.c_str());
    const auto shapeless = graphText({ R"({"name": "x", "dtype": "bool", "shape": []})", R"({"name": "y", "dtype": "float32", "shape": [2]})" },
        { R"({"name": "cf", "type": "If", "inputs": ["x"], "outputs": ["y"], "bodies": [{"graph": {}}]})" });
    const auto noAttribute = parseJsonGraph(shapeless, "bad.json");
    QVERIFY(!noAttribute);
    QVERIFY2(noAttribute.error().message.find("bodies[0]: expected") != std::string::npos, noAttribute.error().message.c_str());
    // Graphs nested deeper than a model would are refused, not recursed into.
    std::string deep = R"({"tensors": [], "ops": []})";
    for (int level = 0; level < 40; ++level)
        deep = R"({"tensors": [{"name": "c", "dtype": "bool", "shape": []}, {"name": "o", "bytes": 4}], "ops": [{"name": "n)"
            + std::to_string(level) + R"(", "type": "If", "inputs": ["c"], "outputs": ["o"], "bodies": [{"attribute": "then_branch", "graph": )" + deep
            + "}]}], \"inputs\": [\"c\"], \"outputs\": [\"o\"]}";
    const auto tooDeep = parseJsonGraph(deep, "deep.json");
    QVERIFY(!tooDeep);
    QVERIFY2(tooDeep.error().message.find("graphs nest more than 32 deep") != std::string::npos, tooDeep.error().message.c_str());
}

void TestIo::jsonErrors_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("code");
    QTest::addColumn<QStringList>("needles"); // every one must appear in the message
    const int invalid = int(ErrorCode::InvalidModel);
    auto row = [&](const char* name, const std::string& text, int code, QStringList needles) {
        QTest::newRow(name) << QByteArray::fromStdString(text) << code << needles;
    };
    auto strings = [](std::initializer_list<const char*> list) {
        QStringList out;
        for (auto* s : list)
            out << QString::fromUtf8(s);
        return out;
    };
    // Syntax: nlohmann's byte position becomes line:column.
    row("syntax", "{\n  \"tensors\": [\n    {\"name\": \"x\" \"dtype\": \"float32\"}\n  ]\n}\n", invalid,
        strings({ "bad.json:3:", "invalid JSON" }));
    row("truncated", "{\n  \"tensors\": [\n", invalid, strings({ "bad.json:", "invalid JSON" }));
    row("trailing garbage", graphText({ kX, kY }, { kRelu }) + "}\n", invalid, strings({ "bad.json:11:", "invalid JSON" }));
    row("empty", "", invalid, strings({ "bad.json:1:", "invalid JSON" }));
    row("not an object", "[1, 2]\n", invalid, strings({ "bad.json:1:", "expected a JSON object" }));
    row("unknown top-level field", "{\n  \"tensor\": []\n}", invalid, strings({ "bad.json:2:", "'tensor'", "unknown top-level" }));
    row("opset not a number", graphText({ kX, kY }, { kRelu }, R"("inputs": ["x"], "outputs": ["y"],
  "opsets": {"": "17"})"), invalid, strings({ "bad.json:10:", "opsets", "operator set version" }));
    row("tensors not a list", "{\n  \"tensors\": {},\n  \"ops\": []\n}", invalid, strings({ "bad.json:2:", "tensors" }));
    row("no tensors", "{\n  \"ops\": []\n}", invalid, strings({ "bad.json", "tensors" }));
    row("name wrong type", "{\n  \"name\": 3, \"tensors\": [], \"ops\": []\n}", invalid, strings({ "bad.json:2:", "name", "string" }));

    // Tensors: line 3 + index.
    row("tensor not an object", graphText({ kX, "[1]" }, { kRelu }), invalid, strings({ "bad.json:4:", "tensors[1]", "object" }));
    row("tensor without name", graphText({ kX, R"({"bytes": 4})" }, { kRelu }), invalid, strings({ "bad.json:4:", "tensors[1]", "name" }));
    row("tensor unknown field", graphText({ kX, R"({"name": "y", "shpae": [1]})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "tensors[1] 'y'", "'shpae'" }));
    row("unknown dtype", graphText({ kX, R"({"name": "y", "dtype": "flaot32", "shape": [1]})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "unknown dtype 'flaot32'" }));
    row("dtype wrong type", graphText({ kX, R"({"name": "y", "dtype": 1, "shape": [1]})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "dtype" }));
    row("unknown kind", graphText({ kX, R"({"name": "y", "bytes": 4, "kind": "scratch"})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "unknown kind 'scratch'" }));
    row("kind wrong type", graphText({ kX, R"({"name": "y", "bytes": 4, "kind": 2})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "\"kind\" must be a string" }));
    row("estimated wrong type", graphText({ kX, R"({"name": "y", "bytes": 4, "estimated": 1})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "estimated" }));
    row("sequence wrong type", graphText({ kX, R"({"name": "y", "bytes": 4, "sequence": "yes"})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "\"sequence\" must be true or false" }));
    row("list_exact without sequence", graphText({ kX, R"({"name": "y", "bytes": 4, "list_exact": true})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "\"list_exact\" is for a sequence" }));
    row("values not integers", graphText({ kX, R"({"name": "y", "bytes": 4, "values": [1, 2.5]})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "\"values\" must be a list of integers" }));
    row("items negative dimension", graphText({ kX, R"({"name": "y", "bytes": 4, "sequence": true, "items": [[2, -1]]})" }, { kRelu }),
        invalid, strings({ "bad.json:4:", "'y'", "\"items\" must be a list of element shapes" }));
    row("no size", graphText({ kX, R"({"name": "y", "dtype": "float32"})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "\"bytes\"" }));
    row("shape without dtype", graphText({ kX, R"({"name": "y", "shape": [4]})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "no \"dtype\"" }));
    row("shape not a list", graphText({ kX, R"({"name": "y", "dtype": "float32", "shape": 4})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "\"shape\" must be a list" }));
    row("float dimension", graphText({ kX, R"({"name": "y", "dtype": "float32", "shape": [1, 2.5]})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "dimension 1", "a float" }));
    row("negative dimension", graphText({ kX, R"({"name": "y", "dtype": "float32", "shape": [1, -4]})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "dimension 1 is -4" }));
    row("dimension too large", graphText({ kX, R"({"name": "y", "dtype": "float32", "shape": [10000000000000000000]})" }, { kRelu }),
        invalid, strings({ "bad.json:4:", "'y'", "dimension 0 is too large" }));
    row("size overflow", graphText({ kX, R"({"name": "y", "dtype": "float32", "shape": [4294967296, 4294967296]})" }, { kRelu }),
        invalid, strings({ "bad.json:4:", "'y'", "overflows" }));
    row("unbound symbol", graphText({ kX, R"({"name": "y", "dtype": "float32", "shape": ["batch", 4]})" }, { kRelu }),
        int(ErrorCode::InvalidArgument), strings({ "bad.json:4:", "'y'", "'batch'", "--dim batch=" }));
    row("negative bytes", graphText({ kX, R"({"name": "y", "bytes": -8})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "\"bytes\" is -8" }));
    row("float bytes", graphText({ kX, R"({"name": "y", "bytes": 8.5})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "\"bytes\" must be an integer" }));
    row("bytes too large", graphText({ kX, R"({"name": "y", "bytes": 18446744073709551615})" }, { kRelu }), invalid,
        strings({ "bad.json:4:", "'y'", "too large" }));
    row("duplicate tensor", graphText({ kX, kY, R"({"name": "x", "bytes": 4})" }, { kRelu }), invalid,
        strings({ "bad.json:5:", "tensors[2] 'x'", "duplicate", "tensors[0]" }));

    // Ops: line 5 + tensors + index (two tensors: line 7 + index).
    row("no ops", graphText({ kX, kY }, {}), invalid, strings({ "bad.json:6:", "ops", "non-empty" }));
    row("ops missing", "{\n  \"tensors\": []\n}", invalid, strings({ "bad.json", "ops" }));
    row("op not an object", graphText({ kX, kY }, { kRelu, "3" }), invalid, strings({ "bad.json:8:", "ops[1]", "object" }));
    row("op without type", graphText({ kX, kY }, { R"({"name": "relu", "inputs": ["x"], "outputs": ["y"]})" }), invalid,
        strings({ "bad.json:7:", "ops[0] 'relu'", "\"type\"" }));
    row("op unknown field", graphText({ kX, kY }, { R"({"name": "relu", "type": "Relu", "input": ["x"], "outputs": ["y"]})" }), invalid,
        strings({ "bad.json:7:", "ops[0] 'relu'", "'input'" }));
    row("undeclared input", graphText({ kX, kY }, { kRelu, R"({"name": "relu2", "type": "Relu", "inputs": ["x9"], "outputs": []})" }),
        invalid, strings({ "bad.json:8:", "ops[1] 'relu2'", "input 'x9'", "not a declared tensor" }));
    row("undeclared output", graphText({ kX, kY }, { R"({"name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["z"]})" }),
        invalid, strings({ "bad.json:7:", "ops[0] 'relu'", "output 'z'", "not a declared tensor" }));
    row("inputs not a list", graphText({ kX, kY }, { R"({"name": "relu", "type": "Relu", "inputs": "x", "outputs": ["y"]})" }), invalid,
        strings({ "bad.json:7:", "'relu'", "\"inputs\" must be a list" }));
    row("no outputs", graphText({ kX, kY }, { kRelu, R"({"name": "sink", "type": "Softmax", "inputs": ["y"], "outputs": []})" }),
        invalid, strings({ "bad.json:8:", "ops[1] 'sink'", "at least one tensor" }));
    row("output listed twice", graphText({ kX, kY }, { R"({"name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["y", "y"]})" }),
        invalid, strings({ "bad.json:7:", "ops[0] 'relu'", "lists output 'y' twice" }));
    row("produced twice", graphText({ kX, kY }, { kRelu, R"({"name": "again", "type": "Neg", "inputs": ["x"], "outputs": ["y"]})" }),
        invalid, strings({ "bad.json:8:", "ops[1] 'again'", "'y'", "ops[0] 'relu'" }));
    row("attributes not an object", graphText({ kX, kY }, { R"({"name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["y"], "attributes": [1]})" }),
        invalid, strings({ "bad.json:7:", "'relu'", "\"attributes\"" }));
    row("bool attribute", graphText({ kX, kY }, { R"({"name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["y"], "attributes": {"fast": true}})" }),
        invalid, strings({ "bad.json:7:", "'relu'", "attribute 'fast'" }));
    row("mixed list attribute", graphText({ kX, kY }, { R"({"name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["y"], "attributes": {"names": ["a", 1]}})" }),
        invalid, strings({ "bad.json:7:", "'relu'", "attribute 'names'" }));
    row("float attribute out of range", graphText({ kX, kY }, { R"({"name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["y"], "attributes": {"alpha": 1e39}})" }),
        invalid, strings({ "bad.json:7:", "'relu'", "attribute 'alpha'" }));
    row("captured undeclared", graphText({ kX, kY }, { R"({"name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["y"], "captured": ["c"]})" }),
        invalid, strings({ "bad.json:7:", "'relu'", "captured tensor 'c'" }));
    row("object attribute", graphText({ kX, kY }, { R"({"name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["y"], "attributes": {"sub": {}}})" }),
        invalid, strings({ "bad.json:7:", "'relu'", "attribute 'sub'" }));

    // Graph inputs and outputs: the line of the list.
    row("unknown graph output", graphText({ kX, kY }, { kRelu }, R"("inputs": ["x"],
  "outputs": ["y", "zz"])"),
        invalid, strings({ "bad.json:10:", "outputs", "'zz'" }));
    row("input listed twice", graphText({ kX, kY }, { kRelu }, R"("inputs": ["x", "x"], "outputs": ["y"])"), invalid,
        strings({ "bad.json:9:", "inputs", "'x' is listed twice" }));
}

void TestIo::jsonErrors()
{
    QFETCH(QByteArray, text);
    QFETCH(int, code);
    QFETCH(QStringList, needles);
    const auto graph = parseJsonGraph(text.toStdString(), "bad.json");
    QVERIFY2(!graph, "the document was accepted");
    const auto message = QString::fromStdString(graph.error().message);
    QVERIFY2(message.startsWith(QLatin1String("bad.json")), qPrintable(message));
    QCOMPARE(int(graph.error().code), code);
    for (const auto& needle : needles)
        QVERIFY2(message.contains(needle), qPrintable(QStringLiteral("'%1' not in: %2").arg(needle, message)));
}

void TestIo::jsonFiles()
{
    const auto good = importJsonGraph(dataFile("tiny_graph.json"));
    QVERIFY2(good, good ? "" : good.error().message.c_str());
    QCOMPARE(good->ops.size(), std::size_t(2));

    const auto syntax = importJsonGraph(dataFile("bad_syntax.json"));
    QVERIFY(!syntax);
    QCOMPARE(syntax.error().code, ErrorCode::InvalidModel);
    const auto syntaxMessage = QString::fromStdString(syntax.error().message);
    // The missing comma after line 4's entry is noticed at the start of line 5.
    QVERIFY2(QRegularExpression(QStringLiteral("bad_syntax\\.json:5:\\d+: invalid JSON")).match(syntaxMessage).hasMatch(),
        qPrintable(syntaxMessage));

    const auto dtype = importJsonGraph(dataFile("bad_dtype.json"));
    QVERIFY(!dtype);
    const auto dtypeMessage = QString::fromStdString(dtype.error().message);
    QVERIFY2(dtypeMessage.contains(QLatin1String("bad_dtype.json:5: tensors[2] 'hidden'")), qPrintable(dtypeMessage));

    const auto missing = importJsonGraph(dataFile("no_such_file.json"));
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, ErrorCode::Io);
    QVERIFY(QString::fromStdString(missing.error().message).contains(QLatin1String("no_such_file.json")));
    const auto folder = importJsonGraph(kDataDir.toStdString());
    QVERIFY(!folder);
    QCOMPARE(folder.error().code, ErrorCode::Io);
}

void TestIo::csvBenchmarks_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<qint64>("lowerBound");
    const std::map<char, qint64> bounds { { 'A', 1048576 }, { 'B', 1048576 }, { 'C', 1039360 }, { 'D', 986112 }, { 'E', 1048576 },
        { 'F', 1048576 }, { 'G', 1048576 }, { 'H', 1048576 }, { 'I', 1048576 }, { 'J', 989184 }, { 'K', 1048576 } };
    for (const auto& [letter, bound] : bounds) {
        const auto file = QStringLiteral("%1.1048576.csv").arg(QLatin1Char(letter));
        QTest::newRow(qPrintable(file)) << kBenchmarkDir + file << bound;
    }
}

void TestIo::csvBenchmarks()
{
    QFETCH(QString, file);
    QFETCH(qint64, lowerBound);
    QFile raw(file);
    QVERIFY2(raw.open(QIODevice::ReadOnly), qPrintable(file));
    const auto rows = raw.readAll().count('\n') - 1; // header, one line per buffer, final newline

    const auto parsed = importProblemCsv(file.toStdString());
    QVERIFY2(parsed, parsed ? "" : parsed.error().message.c_str());
    const auto& problem = parsed->problem;
    QCOMPARE(qint64(problem.buffers.size()), qint64(rows));
    QVERIFY(!parsed->offsets);
    QCOMPARE(problem.alignment, Bytes(1));
    QCOMPARE(problem.capacity, Bytes(0));
    Step maxUpper = 0;
    for (const auto& b : problem.buffers) {
        maxUpper = std::max(maxUpper, b.lifetime.end);
        QCOMPARE(b.tensors, std::vector<std::string>({ b.name }));
        QCOMPARE(b.kind, TensorKind::Activation);
    }
    QCOMPARE(problem.steps, maxUpper);
    QCOMPARE(problem.buffers.front().name, std::string("0"));
    QCOMPARE(sweepLowerBound(problem), Bytes(lowerBound));
    QCOMPARE(core::lowerBound(problem), Bytes(lowerBound));
}

void TestIo::csvFormats()
{
    // Columns in any order, an extra column, CRLF, blank lines, spaces, a BOM, quoted ids, no final newline.
    const std::string text = "\xEF\xBB\xBFsize, note ,upper,ID,lower\r\n"
                             "\r\n"
                             "64, first,4, a ,0\r\n"
                             "   \r\n"
                             "128,,7,\"b,2\",3\r\n"
                             "+8,x,2,\"say \"\"hi\"\"\",1";
    const auto parsed = parseProblemCsv(text, "mixed.csv");
    QVERIFY2(parsed, parsed ? "" : parsed.error().message.c_str());
    const auto& buffers = parsed->problem.buffers;
    QCOMPARE(buffers.size(), std::size_t(3));
    QCOMPARE(buffers[0].name, std::string("a"));
    QCOMPARE(buffers[0].lifetime, (Lifetime { 0, 4 }));
    QCOMPARE(buffers[0].size, Bytes(64));
    QCOMPARE(buffers[1].name, std::string("b,2"));
    QCOMPARE(buffers[1].lifetime, (Lifetime { 3, 7 }));
    QCOMPARE(buffers[2].name, std::string("say \"hi\""));
    QCOMPARE(buffers[2].size, Bytes(8));
    QCOMPARE(parsed->problem.steps, Step(7));
    QVERIFY(!parsed->offsets);

    const auto withOffsets = parseProblemCsv("id,lower,upper,size,offset\n0,0,2,10,0\n1,1,3,10,10\n\n", "o.csv");
    QVERIFY2(withOffsets, withOffsets ? "" : withOffsets.error().message.c_str());
    QVERIFY(withOffsets->offsets);
    QCOMPARE(*withOffsets->offsets, std::vector<Bytes>({ 0, 10 }));

    const auto headerOnly = parseProblemCsv("id,lower,upper,size\n", "h.csv");
    QVERIFY(headerOnly);
    QVERIFY(headerOnly->problem.buffers.empty());
    QCOMPARE(headerOnly->problem.steps, Step(0));
}

void TestIo::csvErrors_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("needle"); // besides "p.csv:LINE:"
    QTest::addColumn<int>("line");
    auto row = [](const char* name, const char* text, int line, const char* needle) {
        QTest::newRow(name) << QByteArray(text) << QString::fromUtf8(needle) << line;
    };
    row("empty file", "", 0, "empty file");
    row("only blank lines", "\n \r\n\n", 0, "empty file");
    row("missing column", "id,lower,size\n0,1,2\n", 1, "lacks column 'upper'");
    row("missing column after blank", "\n\nid,upper,size\n", 3, "lacks column 'lower'");
    row("duplicate column", "id,lower,upper,size,Size\n", 1, "'size' appears twice");
    row("too few fields", "id,lower,upper,size\n0,0,1,4\n1,0,1\n", 3, "expected 4 fields");
    row("too many fields", "id,lower,upper,size\r\n0,0,1,4\r\n\r\n1,0,1,4,5\r\n", 4, "expected 4 fields");
    row("not an integer", "id,lower,upper,size\n0,0,1,4\n1,0,x1,4\n", 3, "upper 'x1' is not an integer");
    row("decimal", "id,lower,upper,size\n0,0,1,4.5\n", 2, "size '4.5' is not an integer");
    row("empty number", "id,lower,upper,size\n0,,1,4\n", 2, "lower '' is not an integer");
    row("overflow", "id,lower,upper,size\n0,0,1,99999999999999999999\n", 2, "size '99999999999999999999' is out of range");
    row("step overflow", "id,lower,upper,size\n0,0,3000000000,1\n", 2, "upper 3000000000 is out of range");
    row("negative size", "id,lower,upper,size\n0,0,1,4\n1,0,1,-4\n", 3, "size is -4");
    row("negative lower", "id,lower,upper,size\n0,-1,1,4\n", 2, "lower is -1");
    row("negative offset", "id,lower,upper,size,offset\n0,0,1,4,-2\n", 2, "offset is -2");
    row("upper equals lower", "id,lower,upper,size\n0,0,1,4\n1,5,5,4\n", 3, "upper (5) must be greater than lower (5)");
    row("upper below lower", "id,lower,upper,size\n0,6,5,4\n", 2, "upper (5) must be greater than lower (6)");
    row("duplicate id", "id,lower,upper,size\n7,0,1,4\n8,0,1,4\n\n7,1,2,4\n", 5, "duplicate id '7' (first on line 2)");
    row("empty id", "id,lower,upper,size\n,0,1,4\n", 2, "empty id");
    row("unclosed quote", "id,lower,upper,size\n0,0,1,4\n\"a\n,0,1,4\n1,0,1,4\n", 3, "quoted field opened on this line is not closed");
    row("unclosed quote in header", "\n\"id,lower,upper,size\n0,0,1,4\n", 2, "quoted field opened on this line is not closed");
    row("error after a two-line name", "id,lower,upper,size\n\"a\nb\",0,1,4\n\"c\",0,1,x\n", 4, "size 'x' is not an integer");
    // Two buffers of 2^62 bytes: offsets past 2^63 would overflow; planners produced invalid plans.
    row("sizes beyond 2^60 in all", "id,lower,upper,size\n0,0,1,4611686018427387904\nbig,0,1,4611686018427387905\n", 0,
        "more than 2^60 bytes (1 EiB) in all, beyond any memory; the largest, 'big', holds");
}

void TestIo::csvErrors()
{
    QFETCH(QByteArray, text);
    QFETCH(QString, needle);
    QFETCH(int, line);
    const auto parsed = parseProblemCsv(text.toStdString(), "p.csv");
    QVERIFY2(!parsed, "the file was accepted");
    QCOMPARE(parsed.error().code, ErrorCode::InvalidModel);
    const auto message = QString::fromStdString(parsed.error().message);
    const auto prefix = line > 0 ? QStringLiteral("p.csv:%1: ").arg(line) : QStringLiteral("p.csv: ");
    QVERIFY2(message.startsWith(prefix), qPrintable(message));
    QVERIFY2(message.contains(needle), qPrintable(message));
}

void TestIo::csvRoundTrip()
{
    PlanProblem problem;
    problem.alignment = 1;
    problem.steps = 9;
    problem.buffers = { Buffer { "first", { 0, 3 }, 100, TensorKind::Activation, { "first" } },
        Buffer { "with,comma", { 2, 9 }, 40, TensorKind::Activation, { "with,comma" } },
        Buffer { "q\"uote", { 5, 6 }, 0, TensorKind::Activation, { "q\"uote" } },
        Buffer { "two\r\nlines, \"quoted\"\n", { 1, 2 }, 8, TensorKind::Activation, { "two\r\nlines, \"quoted\"\n" } } };
    Plan plan;
    plan.offsets = { 0, 100, 7, 140 };
    plan.arenaSize = 148;

    const auto text = exportProblemCsv(problem, &plan);
    QVERIFY2(text.rfind("id,lower,upper,size,offset\n", 0) == 0, text.c_str());
    const auto back = parseProblemCsv(text, "rt.csv");
    QVERIFY2(back, back ? "" : back.error().message.c_str());
    QCOMPARE(back->problem.buffers.size(), problem.buffers.size());
    for (std::size_t i = 0; i < problem.buffers.size(); ++i) {
        QCOMPARE(back->problem.buffers[i].name, problem.buffers[i].name);
        QCOMPARE(back->problem.buffers[i].lifetime, problem.buffers[i].lifetime);
        QCOMPARE(back->problem.buffers[i].size, problem.buffers[i].size);
        QCOMPARE(back->problem.buffers[i].tensors, problem.buffers[i].tensors);
    }
    QCOMPARE(back->problem.steps, problem.steps);
    QVERIFY(back->offsets);
    QCOMPARE(*back->offsets, plan.offsets);
    QCOMPARE(exportProblemCsv(back->problem, &plan), text);

    const auto plain = exportProblemCsv(problem);
    QVERIFY2(plain.rfind("id,lower,upper,size\nfirst,0,3,100\n", 0) == 0, plain.c_str());
    QVERIFY(!parseProblemCsv(plain, "plain.csv")->offsets);
}

void TestIo::csvLarge()
{
    constexpr int kRows = 100000;
    std::string text = "id,lower,upper,size\n";
    text.reserve(std::size_t(kRows) * 32);
    for (int i = 0; i < kRows; ++i)
        text += std::to_string(i) + ',' + std::to_string(i) + ',' + std::to_string(i + 1 + i % 50) + ',' + std::to_string(64 + i % 4096)
            + '\n';
    QElapsedTimer timer;
    timer.start();
    const auto parsed = parseProblemCsv(text, "large.csv");
    const auto elapsed = timer.elapsed();
    QVERIFY(parsed);
    QCOMPARE(parsed->problem.buffers.size(), std::size_t(kRows));
    QCOMPARE(parsed->problem.buffers.back().lifetime, (Lifetime { kRows - 1, kRows + (kRows - 1) % 50 }));
    qInfo("parsed %d rows in %lld ms", kRows, static_cast<long long>(elapsed));
    QVERIFY2(elapsed < 1500, qPrintable(QStringLiteral("took %1 ms").arg(elapsed)));
}

void TestIo::csvFiles()
{
    const auto good = importProblemCsv(dataFile("small_problem.csv"));
    QVERIFY2(good, good ? "" : good.error().message.c_str());
    QCOMPARE(good->problem.buffers.size(), std::size_t(5));
    QVERIFY(good->offsets);
    QCOMPARE(sweepLowerBound(good->problem), Bytes(896));

    const auto duplicate = importProblemCsv(dataFile("bad_duplicate.csv"));
    QVERIFY(!duplicate);
    QVERIFY2(QString::fromStdString(duplicate.error().message).contains(QLatin1String("bad_duplicate.csv:5: duplicate id 'w2' (first on line 4)")),
        duplicate.error().message.c_str());
    const auto fields = importProblemCsv(dataFile("bad_fields.csv"));
    QVERIFY(!fields);
    QVERIFY2(QString::fromStdString(fields.error().message).contains(QLatin1String("bad_fields.csv:3: expected 4 fields")),
        fields.error().message.c_str());
    const auto missing = importProblemCsv(dataFile("no_such_file.csv"));
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, ErrorCode::Io);
    QVERIFY(QString::fromStdString(missing.error().message).contains(QLatin1String("no_such_file.csv")));
}

void TestIo::planJson()
{
    // The five-tensors seed with the first-fit placement of the examples (core/examples/examples.cpp), plus a weights region.
    Workload workload;
    workload.source = "example:five-tensors";
    workload.problem.alignment = 1;
    workload.problem.steps = 4;
    workload.problem.buffers = { Buffer { "w1", { 0, 3 }, 512, TensorKind::Activation, { "w1" } },
        Buffer { "a1", { 0, 1 }, 128, TensorKind::Input, { "a1" } }, Buffer { "w2", { 1, 4 }, 256, TensorKind::Activation, { "w2", "w2b" } },
        Buffer { "a2", { 2, 3 }, 128, TensorKind::Activation, { "a2" } }, Buffer { "out", { 3, 4 }, 64, TensorKind::Output, { "out" } } };
    Graph graph;
    graph.tensors = { Tensor { "x", DType::Float32, { 4 }, true, 16, TensorKind::Input, false },
        Tensor { "k1", DType::Float32, { 8 }, true, 32, TensorKind::Weight, false },
        Tensor { "unused", DType::Float32, { 8 }, true, 32, TensorKind::Weight, false },
        Tensor { "k2", DType::Float32, { 4 }, true, 16, TensorKind::Weight, false },
        Tensor { "y", DType::Float32, { 4 }, true, 16, TensorKind::Output, false } };
    graph.ops = { Op { "op", "Gemm", "", {}, { 0, 1, 3 }, { 4 } } };
    workload.graph = graph;
    workload.regions = { Region { "weights", 48, 2 } };
    Plan plan;
    plan.planner = "first-fit";
    plan.offsets = { 0, 512, 640, 512, 0 };
    plan.arenaSize = 896;
    plan.seconds = 0.25;

    const auto text = exportPlanJson(workload, plan);
    nlohmann::ordered_json json;
    try {
        json = nlohmann::ordered_json::parse(text);
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QString::fromUtf8(e.what()) + QLatin1Char('\n') + QString::fromStdString(text)));
    }
    std::vector<std::string> keys;
    for (const auto& [key, value] : json.items())
        keys.push_back(key);
    QCOMPARE(keys, std::vector<std::string>({ "model", "planner", "alignment", "steps", "arena_bytes", "lower_bound_bytes", "buffers",
                       "regions", "metrics" }));
    QCOMPARE(json["model"].get<std::string>(), std::string("example:five-tensors"));
    QCOMPARE(json["planner"].get<std::string>(), std::string("first-fit"));
    QCOMPARE(json["alignment"].get<Bytes>(), Bytes(1));
    QCOMPARE(json["steps"].get<int>(), 4);
    QCOMPARE(json["arena_bytes"].get<Bytes>(), Bytes(896));
    QCOMPARE(json["lower_bound_bytes"].get<Bytes>(), Bytes(896));

    const auto& buffers = json["buffers"];
    QCOMPARE(buffers.size(), std::size_t(5));
    for (std::size_t i = 0; i < buffers.size(); ++i) {
        const auto& b = buffers[i];
        const auto& expected = workload.problem.buffers[i];
        std::vector<std::string> fields;
        for (const auto& [key, value] : b.items())
            fields.push_back(key);
        QCOMPARE(fields, std::vector<std::string>({ "name", "kind", "start", "end", "size_bytes", "offset", "tensors" }));
        QCOMPARE(b["name"].get<std::string>(), expected.name);
        QCOMPARE(b["kind"].get<std::string>(), std::string(kindName(expected.kind)));
        QCOMPARE(b["start"].get<Step>(), expected.lifetime.start);
        QCOMPARE(b["end"].get<Step>(), expected.lifetime.end);
        QCOMPARE(b["size_bytes"].get<Bytes>(), expected.size);
        QCOMPARE(b["offset"].get<Bytes>(), plan.offsets[i]);
        QCOMPARE(b["tensors"].get<std::vector<std::string>>(), expected.tensors);
    }
    QCOMPARE(buffers[1]["kind"].get<std::string>(), std::string("input"));

    const auto& regions = json["regions"];
    QCOMPARE(regions.size(), std::size_t(1));
    QCOMPARE(regions[0]["name"].get<std::string>(), std::string("weights"));
    QCOMPARE(regions[0]["size_bytes"].get<Bytes>(), Bytes(48));
    QCOMPARE(regions[0]["tensors"].get<std::vector<std::string>>(), std::vector<std::string>({ "k1", "k2" }));

    const auto& metrics = json["metrics"];
    QCOMPARE(metrics["fragmentation"].get<double>(), 0.0);
    QCOMPARE(metrics["max_overlap_depth"].get<int>(), 3);
    QCOMPARE(metrics["planning_seconds"].get<double>(), 0.25);
    QVERIFY(!metrics.contains("colors"));
}

void TestIo::planJsonColorsAndEmpty()
{
    Workload workload;
    workload.source = "two.csv";
    workload.problem.alignment = 64;
    workload.problem.steps = 2;
    workload.problem.buffers = { Buffer { "a", { 0, 1 }, 64, TensorKind::Activation, { "a" } },
        Buffer { "b", { 1, 2 }, 128, TensorKind::Activation, { "b" } } };
    Plan plan;
    plan.planner = "coloring";
    plan.offsets = { 0, 0 };
    plan.arenaSize = 192; // a loose plan: fragmentation 0.5
    plan.colors = { 0, 1 };
    const auto json = nlohmann::json::parse(exportPlanJson(workload, plan));
    QCOMPARE(json["metrics"]["colors"].get<int>(), 2);
    QCOMPARE(json["lower_bound_bytes"].get<Bytes>(), Bytes(128));
    QCOMPARE(json["metrics"]["fragmentation"].get<double>(), 0.5);
    QCOMPARE(json["metrics"]["max_overlap_depth"].get<int>(), 1);
    QVERIFY(json["regions"].is_array() && json["regions"].empty());

    Workload empty;
    empty.source = "empty.csv";
    const auto none = nlohmann::json::parse(exportPlanJson(empty, Plan {}));
    QVERIFY(none["buffers"].is_array() && none["buffers"].empty());
    QCOMPARE(none["lower_bound_bytes"].get<Bytes>(), Bytes(0));
}

QTEST_GUILESS_MAIN(TestIo)
#include "tst_io.moc"
