// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Built-in examples: the two seed problems exactly, and the graph examples checked op by op
// against the shape rules ONNX shape inference applies.
#include "examples/examples.h"
#include "liveness/lifetimes.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "schedule/schedule.h"

#include <QTest>

#include <algorithm>
#include <numeric>
#include <set>

using namespace core;

namespace {
using Shape = std::vector<std::int64_t>;

std::string show(const Shape& shape)
{
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        text += (i ? "," : "") + std::to_string(shape[i]);
    return text + "]";
}

std::int64_t elements(const Shape& shape)
{
    return std::accumulate(shape.begin(), shape.end(), std::int64_t(1), std::multiplies<>());
}

Shape ints(const Op& op, const char* name, Shape fallback = {})
{
    const auto it = op.attributes.find(name);
    return it == op.attributes.end() ? fallback : it->second.ints;
}

// numpy broadcasting of two shapes; empty optional when they do not broadcast.
std::optional<Shape> broadcast(Shape a, Shape b)
{
    if (a.size() < b.size())
        std::swap(a, b);
    b.insert(b.begin(), a.size() - b.size(), 1);
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] == b[i] || b[i] == 1)
            continue;
        if (a[i] == 1)
            a[i] = b[i];
        else
            return std::nullopt;
    }
    return a;
}

// The output shape ONNX (opset 17) infers for the op types the examples use; empty string when the
// graph's output shape matches, else what is wrong.
std::string checkOp(const Graph& graph, const Op& op)
{
    auto in = [&](std::size_t i) { return graph.tensors[op.inputs.at(i)].shape; };
    const Shape out = graph.tensors[op.outputs.at(0)].shape;
    Shape expected;
    const auto& t = op.type;
    if (t == "Relu" || t == "Softmax") {
        expected = in(0);
    } else if (t == "Add" || t == "Mul") {
        const auto b = broadcast(in(0), in(1));
        if (!b)
            return "inputs do not broadcast: " + show(in(0)) + " " + show(in(1));
        expected = *b;
    } else if (t == "Conv" || t == "MaxPool") {
        const auto x = in(0);
        const auto kernel = ints(op, "kernel_shape");
        const auto strides = ints(op, "strides", { 1, 1 });
        const auto pads = ints(op, "pads", { 0, 0, 0, 0 });
        if (kernel.size() != 2 || strides.size() != 2 || pads.size() != 4)
            return "kernel_shape/strides/pads must have 2/2/4 entries";
        std::int64_t channels = x[1];
        if (t == "Conv") {
            const auto w = in(1);
            if (w[1] * ints(op, "group", { 1 })[0] != x[1] || w[2] != kernel[0] || w[3] != kernel[1])
                return "weight " + show(w) + " does not fit input " + show(x) + " and kernel_shape";
            if (op.inputs.size() > 2 && in(2) != Shape { w[0] })
                return "bias shape " + show(in(2));
            channels = w[0];
        }
        expected = { x[0], channels, (x[2] + pads[0] + pads[2] - kernel[0]) / strides[0] + 1,
            (x[3] + pads[1] + pads[3] - kernel[1]) / strides[1] + 1 };
    } else if (t == "ConvTranspose") {
        const auto x = in(0), w = in(1);
        const auto kernel = ints(op, "kernel_shape"), strides = ints(op, "strides", { 1, 1 }), pads = ints(op, "pads", { 0, 0, 0, 0 });
        if (w[0] != x[1] || w[2] != kernel[0] || w[3] != kernel[1])
            return "weight " + show(w) + " does not fit input " + show(x);
        expected = { x[0], w[1], strides[0] * (x[2] - 1) + kernel[0] - pads[0] - pads[2],
            strides[1] * (x[3] - 1) + kernel[1] - pads[1] - pads[3] };
    } else if (t == "GlobalAveragePool") {
        expected = { in(0)[0], in(0)[1], 1, 1 };
    } else if (t == "Flatten") {
        const auto x = in(0);
        const auto axis = ints(op, "axis", { 1 })[0];
        expected = { elements(Shape(x.begin(), x.begin() + axis)), elements(Shape(x.begin() + axis, x.end())) };
    } else if (t == "Gemm") {
        const auto a = in(0), b = in(1);
        const bool transB = ints(op, "transB", { 0 })[0] == 1;
        const auto k = transB ? b[1] : b[0];
        if (a[1] != k)
            return "inner dimensions differ: " + show(a) + " " + show(b);
        expected = { a[0], transB ? b[0] : b[1] };
    } else if (t == "MatMul") {
        const auto a = in(0), b = in(1);
        if (a.back() != b[b.size() - 2])
            return "inner dimensions differ: " + show(a) + " " + show(b);
        const auto batch = broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
        if (!batch)
            return "batch dimensions do not broadcast";
        expected = *batch;
        expected.push_back(a[a.size() - 2]);
        expected.push_back(b.back());
    } else if (t == "Transpose") {
        const auto x = in(0);
        for (auto axis : ints(op, "perm"))
            expected.push_back(x.at(axis));
    } else if (t == "Reshape") {
        const auto& shapeTensor = graph.tensors[op.inputs.at(1)];
        if (shapeTensor.kind != TensorKind::Weight || shapeTensor.dtype != DType::Int64 || shapeTensor.shape != Shape { std::int64_t(out.size()) })
            return "the shape input must be an int64 weight of shape [" + std::to_string(out.size()) + "]";
        if (elements(in(0)) != elements(out))
            return "element counts differ: " + show(in(0)) + " -> " + show(out);
        expected = out;
    } else if (t == "LayerNormalization") {
        if (in(1) != Shape { in(0).back() } || in(2) != Shape { in(0).back() })
            return "scale/bias must match the last axis";
        expected = in(0);
    } else if (t == "Gather") {
        const auto data = in(0), indices = in(1);
        if (ints(op, "axis", { 0 })[0] != 0 || graph.tensors[op.inputs[1]].dtype != DType::Int64)
            return "expected axis 0 and int64 indices";
        expected = indices;
        expected.insert(expected.end(), data.begin() + 1, data.end());
    } else if (t == "Concat") {
        const auto axis = ints(op, "axis")[0];
        expected = in(0);
        for (std::size_t i = 1; i < op.inputs.size(); ++i) {
            auto s = in(i);
            for (std::size_t d = 0; d < s.size(); ++d)
                if (std::int64_t(d) != axis && s[d] != expected[d])
                    return "inputs differ outside the concat axis";
            expected[axis] += s[axis];
        }
    } else {
        return "no shape rule for " + t + " in this test";
    }
    if (expected != out)
        return "output " + show(out) + ", ONNX would infer " + show(expected);
    return {};
}

std::set<std::string> opTypes(const Graph& graph)
{
    std::set<std::string> types;
    for (const auto& op : graph.ops)
        types.insert(op.type);
    return types;
}

const Tensor& tensor(const Graph& graph, const std::string& name)
{
    const auto t = graph.findTensor(name);
    if (!t)
        qFatal("no tensor %s", name.c_str());
    return graph.tensors[*t];
}
} // namespace

class TestExamples : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void list();
    void unknownName();
    void fiveTensors();
    void hotel();
    void seedsFirstFit();
    void graphs_data();
    void graphs();
    void cnn();
    void unet();
    void transformer();
};

void TestExamples::list()
{
    std::vector<std::string> names;
    for (const auto& info : exampleList()) {
        names.push_back(info.name);
        QVERIFY(!info.description.empty());
        const auto example = buildExample(info.name);
        QVERIFY2(example, example ? "" : example.error().message.c_str());
        QVERIFY2(example->graph.has_value() != example->problem.has_value(), info.name.c_str());
    }
    QCOMPARE(names, std::vector<std::string>({ "hotel", "five-tensors", "cnn", "unet", "transformer" }));
}

void TestExamples::unknownName()
{
    const auto example = buildExample("resnet-9000");
    QVERIFY(!example);
    QCOMPARE(example.error().code, ErrorCode::InvalidArgument);
    const auto message = QString::fromStdString(example.error().message);
    QVERIFY2(message.contains(QLatin1String("'resnet-9000'")), qPrintable(message));
    for (const auto& info : exampleList())
        QVERIFY2(message.contains(QString::fromStdString(info.name)), qPrintable(message));
}

void TestExamples::fiveTensors()
{
    const auto example = buildExample("five-tensors");
    QVERIFY(example && example->problem);
    const auto& problem = *example->problem;
    QCOMPARE(problem.alignment, Bytes(1));
    QCOMPARE(problem.steps, Step(4));
    QCOMPARE(problem.capacity, Bytes(0));
    struct Expected {
        const char* name;
        Bytes size;
        Lifetime life;
    };
    const Expected expected[] = { { "w1", 512, { 0, 3 } }, { "a1", 128, { 0, 1 } }, { "w2", 256, { 1, 4 } }, { "a2", 128, { 2, 3 } },
        { "out", 64, { 3, 4 } } };
    QCOMPARE(problem.buffers.size(), std::size_t(5));
    for (std::size_t i = 0; i < 5; ++i) {
        const auto& b = problem.buffers[i];
        QCOMPARE(b.name, std::string(expected[i].name));
        QCOMPARE(b.size, expected[i].size);
        QCOMPARE(b.lifetime, expected[i].life);
        QCOMPARE(b.kind, TensorKind::Activation);
        QCOMPARE(b.tensors, std::vector<std::string>({ b.name }));
    }
    QCOMPARE(lowerBound(problem), Bytes(896));
}

void TestExamples::hotel()
{
    const auto example = buildExample("hotel");
    QVERIFY(example && example->problem);
    const auto& problem = *example->problem;
    QCOMPARE(problem.buffers.size(), std::size_t(6));
    QCOMPARE(problem.alignment, Bytes(1));
    const Bytes room = problem.buffers.front().size;
    QCOMPARE(room, Bytes(100));
    std::set<std::string> guests;
    Step lastStep = 0;
    for (const auto& b : problem.buffers) {
        QCOMPARE(b.size, room);
        QVERIFY(b.lifetime.start < b.lifetime.end);
        guests.insert(b.name);
        lastStep = std::max(lastStep, b.lifetime.end);
    }
    QCOMPARE(guests.size(), std::size_t(6));
    QCOMPARE(problem.steps, lastStep);

    // Count guests per night by hand: never more than three, three on at least one night, and
    // fewer than six rooms needed overall (rooms get reused).
    int maxGuests = 0, fullNights = 0;
    for (Step night = 0; night < problem.steps; ++night) {
        int staying = 0;
        for (const auto& b : problem.buffers)
            staying += b.lifetime.start <= night && night < b.lifetime.end;
        QVERIFY2(staying > 0, "a night without guests");
        maxGuests = std::max(maxGuests, staying);
        fullNights += staying == 3;
    }
    QCOMPARE(maxGuests, 3);
    QVERIFY(fullNights >= 1);
    QCOMPARE(maxOverlapDepth(problem), 3);
    QCOMPARE(lowerBound(problem), 3 * room);
}

void TestExamples::seedsFirstFit()
{
    // Cross-check with the seed's planner: the offsets of core/examples/examples.cpp for five-tensors, three rooms for the hotel.
    const auto* firstFit = plannerByName("first-fit");
    if (!firstFit)
        QSKIP("no first-fit planner registered");
    const auto five = buildExample("five-tensors");
    const auto plan = runPlanner(*firstFit, *five->problem);
    QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
    QCOMPARE(plan->offsets, std::vector<Bytes>({ 0, 512, 640, 512, 0 }));
    QCOMPARE(plan->arenaSize, Bytes(896));

    const auto hotel = buildExample("hotel");
    const auto rooms = runPlanner(*firstFit, *hotel->problem);
    QVERIFY2(rooms, rooms ? "" : rooms.error().message.c_str());
    QVERIFY2(validatePlan(*hotel->problem, *rooms).ok(), renderAsciiPlan(*hotel->problem, *rooms).c_str());
    QCOMPARE(rooms->arenaSize, Bytes(300));
}

void TestExamples::graphs_data()
{
    QTest::addColumn<QString>("name");
    for (const auto* name : { "cnn", "unet", "transformer" })
        QTest::newRow(name) << QString::fromLatin1(name);
}

void TestExamples::graphs()
{
    QFETCH(QString, name);
    const auto example = buildExample(name.toStdString());
    QVERIFY2(example, example ? "" : example.error().message.c_str());
    QVERIFY(example->graph && !example->problem);
    const auto& graph = *example->graph;
    QCOMPARE(graph.name, name.toStdString());
    QVERIFY(!graph.inputs.empty());
    QVERIFY(!graph.outputs.empty());
    for (auto t : graph.inputs)
        QCOMPARE(graph.tensors[t].kind, TensorKind::Input);
    for (auto t : graph.outputs)
        QCOMPARE(graph.tensors[t].kind, TensorKind::Output);

    std::set<std::string> tensorNames, opNames;
    for (const auto& tensor : graph.tensors) {
        QVERIFY2(tensorNames.insert(tensor.name).second, tensor.name.c_str());
        QVERIFY2(tensor.dtype != DType::Undefined && tensor.rankKnown, tensor.name.c_str());
        QVERIFY2(tensor.size > 0 && tensor.size == tensorBytes(tensor.dtype, tensor.shape), tensor.name.c_str());
        QVERIFY(!tensor.estimated);
    }
    std::vector<int> producedBy(graph.tensors.size(), 0), readBy(graph.tensors.size(), 0);
    for (const auto& op : graph.ops) {
        QVERIFY(!op.name.empty());
        QVERIFY2(opNames.insert(op.name).second, op.name.c_str());
        QCOMPARE(op.outputs.size(), std::size_t(1));
        const auto problem = checkOp(graph, op);
        QVERIFY2(problem.empty(), (op.name + " (" + op.type + "): " + problem).c_str());
        for (auto t : op.outputs)
            ++producedBy[t];
        for (auto t : op.inputs)
            ++readBy[t];
    }
    // Weights and inputs come from outside, everything else from exactly one op; only outputs go unread.
    for (std::size_t t = 0; t < graph.tensors.size(); ++t) {
        const auto& tensor = graph.tensors[t];
        const bool external = tensor.kind == TensorKind::Weight || tensor.kind == TensorKind::Input;
        QVERIFY2(producedBy[t] == (external ? 0 : 1), tensor.name.c_str());
        QVERIFY2(readBy[t] > 0 || tensor.kind == TensorKind::Output, tensor.name.c_str());
    }

    const auto schedule = modelOrder(graph);
    QVERIFY2(schedule, schedule ? "" : schedule.error().message.c_str());
    QVERIFY(isTopological(graph, *schedule));
    for (std::size_t i = 0; i < schedule->order.size(); ++i)
        QCOMPARE(schedule->order[i], OpIndex(i)); // built in execution order
    const auto problem = makeProblem(graph, *schedule, ProblemOptions { 256 });
    QVERIFY2(problem, problem ? "" : problem.error().message.c_str());
    QCOMPARE(problem->problem.steps, Step(graph.ops.size()));
    QVERIFY(!problem->problem.buffers.empty());
    QVERIFY(!problem->regions.empty());
    QCOMPARE(problem->regions.front().name, std::string("weights"));
    for (const auto& b : problem->problem.buffers)
        QVERIFY(b.size % 256 == 0 && b.lifetime.start < b.lifetime.end);
    qInfo("%s: %zu ops, %zu tensors, %zu buffers, lower bound %lld bytes, weights %lld bytes", qPrintable(name), graph.ops.size(),
        graph.tensors.size(), problem->problem.buffers.size(), static_cast<long long>(lowerBound(problem->problem)),
        static_cast<long long>(problem->regions.front().size));
}

void TestExamples::cnn()
{
    const auto graph = *buildExample("cnn")->graph;
    QCOMPARE(tensor(graph, "input").shape, Shape({ 1, 3, 224, 224 }));
    QCOMPARE(tensor(graph, "conv1.out").shape, Shape({ 1, 64, 112, 112 }));
    QCOMPARE(tensor(graph, "conv1.out").size, Bytes(1 * 64 * 112 * 112 * 4));
    QCOMPARE(tensor(graph, "maxpool.out").shape, Shape({ 1, 64, 56, 56 }));
    QCOMPARE(tensor(graph, "layer4.1.relu2.out").shape, Shape({ 1, 512, 7, 7 }));
    QCOMPARE(tensor(graph, "logits").shape, Shape({ 1, 1000 }));
    QCOMPARE(tensor(graph, "conv1.weight").shape, Shape({ 64, 3, 7, 7 }));
    QCOMPARE(tensor(graph, "conv1.weight").kind, TensorKind::Weight);
    QCOMPARE(tensor(graph, "fc.weight").shape, Shape({ 1000, 512 }));
    for (const auto* type : { "Conv", "Relu", "MaxPool", "Add", "GlobalAveragePool", "Flatten", "Gemm" })
        QVERIFY2(opTypes(graph).count(type), type);
    const auto& conv1 = graph.ops.front();
    QCOMPARE(conv1.type, std::string("Conv"));
    QCOMPARE(conv1.attributes.at("kernel_shape").ints, Shape({ 7, 7 }));
    QCOMPARE(conv1.attributes.at("strides").ints, Shape({ 2, 2 }));
    QCOMPARE(conv1.attributes.at("pads").ints, Shape({ 3, 3, 3, 3 }));
    // ResNet-18: 20 convolutions (17 + 3 shortcut projections) and about 11.7 M parameters.
    QCOMPARE(std::count_if(graph.ops.begin(), graph.ops.end(), [](const Op& op) { return op.type == "Conv"; }), 20);
    Bytes weights = 0;
    for (const auto& t : graph.tensors)
        if (t.kind == TensorKind::Weight)
            weights += t.size;
    QVERIFY2(weights > 11'000'000 * 4 && weights < 12'000'000 * 4, qPrintable(QString::number(weights)));
}

void TestExamples::unet()
{
    const auto graph = *buildExample("unet")->graph;
    const auto& first = graph.tensors[graph.ops.front().outputs.front()];
    QCOMPARE(first.shape, Shape({ 1, 64, 256, 256 }));
    QCOMPARE(first.size, Bytes(1) * 64 * 256 * 256 * 4);
    QCOMPARE(tensor(graph, "mask").shape, Shape({ 1, 2, 256, 256 }));
    QCOMPARE(tensor(graph, "bottleneck.relu2.out").shape, Shape({ 1, 1024, 16, 16 }));
    QCOMPARE(tensor(graph, "cat1.out").shape, Shape({ 1, 128, 256, 256 }));
    for (const auto* type : { "Conv", "Relu", "MaxPool", "ConvTranspose", "Concat" })
        QVERIFY2(opTypes(graph).count(type), type);

    // The long skips: encoder outputs live until the decoder concatenates them.
    const auto schedule = modelOrder(graph);
    QVERIFY(schedule);
    const auto problem = makeProblem(graph, *schedule, ProblemOptions { 1 });
    QVERIFY(problem);
    const Step steps = problem->problem.steps;
    std::vector<std::string> longLived;
    for (const auto& b : problem->problem.buffers)
        if (2 * (b.lifetime.end - b.lifetime.start) > steps && b.kind == TensorKind::Activation)
            longLived.push_back(b.name);
    QVERIFY2(std::count(longLived.begin(), longLived.end(), "enc1.relu2.out") == 1, "enc1's output spans more than half the steps");
    QVERIFY(longLived.size() >= 2);
    // At the peak, more than the working set of one convolution is live: the skips add to it.
    const auto peak = peakStep(problem->problem);
    QVERIFY(liveAt(problem->problem, peak).size() >= 3);
}

void TestExamples::transformer()
{
    const auto graph = *buildExample("transformer")->graph;
    QCOMPARE(tensor(graph, "input_ids").dtype, DType::Int64);
    QCOMPARE(tensor(graph, "hidden_states").shape, Shape({ 1, 128, 512 }));
    QCOMPARE(tensor(graph, "layers.0.attn.scores.out").shape, Shape({ 1, 8, 128, 128 }));
    QCOMPARE(tensor(graph, "layers.0.attn.scores.out").size, Bytes(8 * 128 * 128 * 4));
    QCOMPARE(tensor(graph, "layers.0.ffn.up.out").shape, Shape({ 1, 128, 2048 }));
    QCOMPARE(tensor(graph, "layers.0.attn.q_transpose.out").shape, Shape({ 1, 8, 128, 64 }));
    QCOMPARE(tensor(graph, "layers.0.attn.k_transpose.out").shape, Shape({ 1, 8, 64, 128 }));
    for (const auto* type : { "MatMul", "Reshape", "Transpose", "Softmax", "Add", "LayerNormalization", "Relu", "Gather" })
        QVERIFY2(opTypes(graph).count(type), type);
    int layerNorms = 0;
    for (const auto& op : graph.ops) {
        if (op.type == "LayerNormalization") {
            ++layerNorms;
            QCOMPARE(op.attributes.at("axis").ints, Shape({ -1 }));
            QCOMPARE(op.attributes.at("epsilon").floats, std::vector<float>({ 1e-5f }));
        }
        if (op.type == "Reshape") {
            const auto& shapeInput = graph.tensors[op.inputs[1]];
            QCOMPARE(shapeInput.kind, TensorKind::Weight);
            QCOMPARE(shapeInput.dtype, DType::Int64);
        }
    }
    QCOMPARE(layerNorms, 8); // two per layer, four layers
}

QTEST_GUILESS_MAIN(TestExamples)
#include "tst_examples.moc"
