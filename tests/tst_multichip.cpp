// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Multi-chip partition for fixed-memory accelerators: every stage fits its chip, every boundary
// tensor goes once to each chip that reads it before its first use there, `auto` is the fewest
// chips, the chip link fields of device profiles, the CLI, and the Studio's stages view.
#include "chipteachingview.h"
#include "cudadevice.h"
#include "stagesview.h"

#include "cost/device.h"
#include "scenarios/chipunits.h"
#include "io/jsongraph.h"
#include "io/workload.h"
#include "planners/metrics.h"
#include "planners/validate.h"
#include "scenarios/multichip.h"
#include "scenarios/multichipreport.h"
#include "util/format.h"

#include "clirun.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

using namespace core;

namespace {

struct Layer {
    Bytes weight = 0;     // bytes of the layer's weight (0: none)
    Bytes activation = 0; // bytes of its output
    std::vector<int> extraInputs; // outputs of earlier layers it also reads (skip connections); -1: the graph input
};

// A chain: layer i reads the output of layer i-1 (the graph input for layer 0), its weight and any
// extra inputs; the last layer's output is the graph output.
Graph makeChain(const std::vector<Layer>& layers, Bytes inputBytes)
{
    Graph graph;
    graph.name = "chain";
    auto add = [&](std::string name, Bytes size, TensorKind kind) {
        Tensor t;
        t.name = std::move(name);
        t.dtype = DType::Float32;
        t.size = size;
        t.kind = kind;
        graph.tensors.push_back(std::move(t));
        return static_cast<TensorIndex>(graph.tensors.size() - 1);
    };
    const auto input = add("x", inputBytes, TensorKind::Input);
    graph.inputs.push_back(input);
    std::vector<TensorIndex> outputs;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        Op op;
        op.name = "layer" + std::to_string(i);
        op.type = "MatMul";
        op.inputs.push_back(i == 0 ? input : outputs.back());
        if (layers[i].weight > 0)
            op.inputs.push_back(add("w" + std::to_string(i), layers[i].weight, TensorKind::Weight));
        for (int from : layers[i].extraInputs)
            op.inputs.push_back(from < 0 ? input : outputs[from]);
        const bool last = i + 1 == layers.size();
        outputs.push_back(add("a" + std::to_string(i), layers[i].activation, last ? TensorKind::Output : TensorKind::Activation));
        op.outputs.push_back(outputs.back());
        graph.ops.push_back(std::move(op));
    }
    graph.outputs.push_back(outputs.back());
    return graph;
}

Graph uniformChain(int count, Bytes weight, Bytes activation)
{
    return makeChain(std::vector<Layer>(count, Layer { weight, activation, {} }), activation);
}

// A 1 GiB-class model: `layers` 4096 x 4096 float32 matmuls (64 MiB of weights each), batch 1.
Graph largeModel(int layers)
{
    Graph graph;
    graph.name = "large";
    auto add = [&](std::string name, std::vector<std::int64_t> shape, TensorKind kind) {
        Tensor t;
        t.name = std::move(name);
        t.dtype = DType::Float32;
        t.shape = std::move(shape);
        t.rankKnown = true;
        t.kind = kind;
        t.size = tensorBytes(t.dtype, t.shape);
        graph.tensors.push_back(std::move(t));
        return static_cast<TensorIndex>(graph.tensors.size() - 1);
    };
    TensorIndex previous = add("x", { 1, 4096 }, TensorKind::Input);
    graph.inputs.push_back(previous);
    for (int i = 0; i < layers; ++i) {
        Op op;
        op.name = "fc" + std::to_string(i);
        op.type = "MatMul";
        op.inputs = { previous, add("fc" + std::to_string(i) + ".weight", { 4096, 4096 }, TensorKind::Weight) };
        previous = add("h" + std::to_string(i), { 1, 4096 }, i + 1 == layers ? TensorKind::Output : TensorKind::Activation);
        op.outputs = { previous };
        graph.ops.push_back(std::move(op));
    }
    graph.outputs.push_back(previous);
    return graph;
}

DeviceProfile testChip(Bytes capacity)
{
    DeviceProfile device;
    device.name = "test-chip";
    device.memoryCapacity = capacity;
    device.memoryBandwidth = 1e12;
    device.hostLinkBandwidth = 10e9;
    device.chipLinkBandwidth = 50e9;
    device.chipLinkLatency = 1e-6;
    device.flops["float32"] = 1e13;
    device.alignment = 1;
    return device;
}

Schedule scheduleOf(const Graph& graph)
{
    auto schedule = modelOrder(graph);
    if (!schedule)
        qFatal("%s", schedule.error().message.c_str());
    return *schedule;
}

// The contract of a partition, checked from the graph, not from the partition's own bookkeeping:
// stages cover the schedule in order; each fits its capacity with a valid plan; each chip receives
// exactly the non-weight tensors its ops read that come from outside its stage, once each, from the
// chip that produced them (or the host), before the stage starts, and holds them until their last use there.
void checkPartition(const Graph& graph, const Schedule& schedule, const MultiChipPlan& plan)
{
    QVERIFY(plan.chips() >= 1);
    QCOMPARE(plan.stages.front().stage.begin, 0);
    QCOMPARE(plan.stages.back().stage.end, schedule.steps());
    std::vector<int> chipOf(schedule.order.size(), -1);
    std::vector<Step> producer(graph.tensors.size(), -1);
    for (int i = 0; i < plan.chips(); ++i) {
        const auto& s = plan.stages[i];
        if (i > 0)
            QCOMPARE(s.stage.begin, plan.stages[i - 1].stage.end);
        QVERIFY(s.stage.end > s.stage.begin);
        const auto check = validatePlan(s.stage.problem, s.plan);
        QVERIFY2(check.ok(), check.message.c_str());
        QVERIFY2(s.stage.weightBytes + s.plan.arenaSize <= plan.device.memoryCapacity,
            qPrintable(QStringLiteral("chip %1: %2 > %3").arg(i).arg(s.stage.weightBytes + s.plan.arenaSize).arg(plan.device.memoryCapacity)));
        QCOMPARE(s.capacity, plan.device.memoryCapacity);
        for (Step step = s.stage.begin; step < s.stage.end; ++step) {
            chipOf[step] = i;
            for (auto t : graph.ops[schedule.order[step]].outputs)
                producer[t] = step;
        }
    }
    std::map<std::pair<TensorIndex, int>, int> received; // (tensor, chip) -> transfers
    for (const auto& t : plan.transfers)
        if (t.toChip >= 0)
            ++received[{ t.tensor, t.toChip }];
    for (int i = 0; i < plan.chips(); ++i) {
        const auto& s = plan.stages[i];
        std::map<TensorIndex, Step> firstUse, lastUse;
        for (Step step = s.stage.begin; step < s.stage.end; ++step)
            for (auto t : graph.ops[schedule.order[step]].inputs) {
                const auto& tensor = graph.tensors[t];
                if (tensor.kind == TensorKind::Weight || tensor.size <= 0 || (producer[t] >= s.stage.begin && producer[t] < s.stage.end))
                    continue;
                firstUse.emplace(t, step);
                lastUse[t] = step;
            }
        int incoming = 0;
        for (const auto& t : plan.transfers)
            incoming += t.toChip == i;
        QCOMPARE(incoming, static_cast<int>(firstUse.size())); // nothing extra arrives
        for (const auto& [tensor, use] : firstUse) {
            const auto name = graph.tensors[tensor].name;
            const int times = received[std::make_pair(tensor, i)];
            QVERIFY2(times == 1, qPrintable(QStringLiteral("chip %1 receives '%2' %3 times").arg(i).arg(QString::fromStdString(name)).arg(times)));
            const auto it = std::find_if(plan.transfers.begin(), plan.transfers.end(),
                [&](const ChipTransfer& t) { return t.tensor == tensor && t.toChip == i; });
            QCOMPARE(it->fromChip, producer[tensor] < 0 ? -1 : chipOf[producer[tensor]]);
            QVERIFY(it->fromChip < i);                   // sent forward, from a stage that has finished
            QVERIFY(it->producedAt < s.stage.begin);     // produced before the receiving stage starts
            QCOMPARE(it->firstUse, use);                 // arrives before its first use there
            QCOMPARE(it->bytes, graph.tensors[tensor].size);
            QVERIFY(it->seconds > 0);
            // A buffer on the receiving side from the stage's start to its last use there ...
            const auto& problem = s.stage.problem;
            const auto b = std::find(s.stage.bufferTensor.begin(), s.stage.bufferTensor.end(), tensor) - s.stage.bufferTensor.begin();
            QVERIFY(b < static_cast<long>(problem.buffers.size()));
            QVERIFY(s.stage.roles[b] == StageBufferRole::Received);
            QCOMPARE(problem.buffers[b].lifetime.start, 0);
            QCOMPARE(problem.buffers[b].lifetime.end, lastUse[tensor] - s.stage.begin + 1);
            // ... and one on the sending side, held until that stage ends.
            if (it->fromChip >= 0) {
                const auto& from = plan.stages[it->fromChip].stage;
                const auto fb = std::find(from.bufferTensor.begin(), from.bufferTensor.end(), tensor) - from.bufferTensor.begin();
                QVERIFY(fb < static_cast<long>(from.bufferTensor.size()));
                QVERIFY(from.roles[fb] == StageBufferRole::Sent);
                QCOMPARE(from.problem.buffers[fb].lifetime.end, from.end - from.begin);
            }
        }
    }
}

using Cli = CliRun;

QString writeGraph(const QTemporaryDir& dir, const Graph& graph, const QString& name)
{
    const auto path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        qFatal("cannot write %s", qPrintable(path));
    file.write(QByteArray::fromStdString(exportJsonGraph(graph)));
    return path;
}

DeviceProfile groq()
{
    auto device = findDevice("groq-lpu");
    if (!device)
        qFatal("%s", device.error().message.c_str());
    return *device;
}

} // namespace

class TestMultiChip : public QObject {
    Q_OBJECT
private slots:
    void profileChipLink()
    {
        const std::string base = R"({"name": "c", "memory_capacity_bytes": 1000, "memory_bandwidth_gb_s": 1,
            "host_link_gb_s": 8, "flops": {"float32": 1e9})";
        auto without = parseDeviceProfile(base + "}", "c.json");
        QVERIFY2(without, without ? "" : without.error().message.c_str());
        QCOMPARE(without->chipLinkBandwidth, 0.0);
        QCOMPARE(without->chipLinkLatency, 0.0);
        QCOMPARE(without->chipLinkBandwidthOrHost(), 8e9); // multi-chip falls back to the host link

        auto with = parseDeviceProfile(base + R"(, "chip_link_gb_s": 60, "chip_link_latency_us": 1.5, "notes": "estimate"})", "c.json");
        QVERIFY2(with, with ? "" : with.error().message.c_str());
        QCOMPARE(with->chipLinkBandwidth, 60e9);
        QCOMPARE(with->chipLinkLatency, 1.5e-6);
        QCOMPARE(with->chipLinkBandwidthOrHost(), 60e9);

        for (const char* bad : { R"(, "chip_link_gb_s": 0})", R"(, "chip_link_gb_s": "fast"})", R"(, "chip_link_latency_us": -1})" }) {
            auto parsed = parseDeviceProfile(base + bad, "c.json");
            QVERIFY2(!parsed, bad);
            QVERIFY2(parsed.error().message.find("c.json") != std::string::npos, parsed.error().message.c_str());
            QVERIFY2(parsed.error().message.find("chip_link") != std::string::npos, parsed.error().message.c_str());
        }

        const auto lpu = groq();
        QCOMPARE(lpu.memoryCapacity, Bytes(230000000));
        QVERIFY(lpu.chipLinkBandwidth > 0 && lpu.chipLinkLatency > 0);
        for (const auto& name : { "h200", "rtx4090" }) { // profiles without the fields still load
            auto device = findDevice(name);
            QVERIFY2(device, name);
            QCOMPARE(device->chipLinkBandwidth, 0.0);
        }
    }

    // Six layers of 30 B of weights on a 100 B chip: three layers need 90 B of weights plus at least
    // 16 B of activations (input and output of the running layer), so two layers per chip, three chips.
    void handCountedChain()
    {
        const auto graph = uniformChain(6, 30, 8);
        const auto schedule = scheduleOf(graph);
        auto plan = planMultiChip(graph, schedule, testChip(100), {});
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        checkPartition(graph, schedule, *plan);
        QCOMPARE(plan->chips(), 3);
        QCOMPARE(plan->provenMinChips, 3);
        QVERIFY(plan->optimal);
        QCOMPARE(plan->pooledCapacity(), Bytes(300));
        for (const auto& s : plan->stages) {
            QCOMPARE(s.stage.end - s.stage.begin, 2);
            QCOMPARE(s.stage.weightBytes, Bytes(60));
        }
        // Chip 1 receives a1 from chip 0; chip 2 a3 from chip 1; a5 goes to the host; x comes from it.
        QCOMPARE(plan->transfers.size(), std::size_t(4));
        QCOMPARE(plan->transferBytes(), Bytes(16));
        const auto& hop = plan->transfers[1];
        QCOMPARE(hop.name, std::string("a1"));
        QCOMPARE(hop.fromChip, 0);
        QCOMPARE(hop.toChip, 1);
        QCOMPARE(hop.seconds, 8 / 50e9 + 1e-6);
        QVERIFY(plan->latencySeconds() > plan->bottleneckSeconds());
        QVERIFY(plan->throughputPerSecond() > 0);

        // Fewest: two chips cannot hold it, and say why.
        MultiChipOptions two;
        two.chips = 2;
        auto fewer = planMultiChip(graph, schedule, testChip(100), two);
        QVERIFY(!fewer);
        QCOMPARE(fewer.error().code, ErrorCode::Infeasible);
        QVERIFY2(fewer.error().message.find("at least 3 chips") != std::string::npos, fewer.error().message.c_str());
    }

    // Skip connections: a tensor read by several later chips goes to each of them once, from its producer.
    void skipConnectionsOncePerChip()
    {
        std::vector<Layer> layers(12, Layer { 40, 16, {} });
        layers[5].extraInputs = { 0 };
        layers[9].extraInputs = { 0, 4 };
        layers[11].extraInputs = { -1, 0 }; // the graph input again, at the end
        const auto graph = makeChain(layers, 16);
        const auto schedule = scheduleOf(graph);
        auto plan = planMultiChip(graph, schedule, testChip(150), {});
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        checkPartition(graph, schedule, *plan);
        QVERIFY(plan->chips() >= 4);
        // a0 is made at step 0 and read at steps 1, 5, 9 and 11 (layer 11 reads it as an extra input).
        std::vector<int> chipOf(schedule.order.size());
        for (int i = 0; i < plan->chips(); ++i)
            for (Step s = plan->stages[i].stage.begin; s < plan->stages[i].stage.end; ++s)
                chipOf[s] = i;
        std::set<int> readers;
        for (Step s : { 1, 5, 9, 11 })
            if (chipOf[s] != chipOf[0])
                readers.insert(chipOf[s]);
        QVERIFY(readers.size() >= 2);
        std::set<int> receivers;
        int a0Transfers = 0;
        for (const auto& t : plan->transfers)
            if (t.name == "a0" && t.toChip >= 0) {
                receivers.insert(t.toChip);
                ++a0Transfers;
                QCOMPARE(t.fromChip, chipOf[0]);
            }
        QCOMPARE(receivers, readers);
        QCOMPARE(a0Transfers, static_cast<int>(readers.size()));
    }

    // `auto` is the fewest: brute force over every cut of a small irregular model into one chip fewer.
    void autoIsFewest_data()
    {
        QTest::addColumn<int>("seed");
        for (int seed = 1; seed <= 6; ++seed)
            QTest::addRow("seed %d", seed) << seed;
    }
    void autoIsFewest()
    {
        QFETCH(int, seed);
        std::vector<Layer> layers;
        unsigned state = static_cast<unsigned>(seed) * 2654435761u;
        auto next = [&](int n) { state = state * 1103515245u + 12345u; return static_cast<int>((state >> 16) % n); };
        for (int i = 0; i < 11; ++i) {
            Layer layer { 10 + next(40), 4 + next(20), {} };
            if (i > 2 && next(3) == 0)
                layer.extraInputs.push_back(next(i - 1));
            layers.push_back(layer);
        }
        const auto graph = makeChain(layers, 8);
        const auto schedule = scheduleOf(graph);
        const auto device = testChip(130);
        auto plan = planMultiChip(graph, schedule, device, {});
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        checkPartition(graph, schedule, *plan);
        const int chips = plan->chips();
        QVERIFY(chips >= 2);
        // Every way to cut 11 steps into chips - 1 stages has a stage whose weights + lower bound exceed the chip.
        const auto index = indexStages(graph, schedule, 1);
        const int steps = schedule.steps();
        std::vector<int> cuts;
        std::function<bool(int, int)> anyFits = [&](int begin, int stagesLeft) -> bool {
            if (stagesLeft == 1) {
                const auto stage = buildStageProblem(index, begin, steps);
                return stage.weightBytes + lowerBound(stage.problem) <= device.memoryCapacity;
            }
            for (int end = begin + 1; end <= steps - stagesLeft + 1; ++end) {
                const auto stage = buildStageProblem(index, begin, end);
                if (stage.weightBytes + lowerBound(stage.problem) <= device.memoryCapacity && anyFits(end, stagesLeft - 1))
                    return true;
            }
            return false;
        };
        QVERIFY2(!anyFits(0, chips - 1), qPrintable(QStringLiteral("%1 chips would do").arg(chips - 1)));
        MultiChipOptions fewer;
        fewer.chips = chips - 1;
        QVERIFY(!planMultiChip(graph, schedule, device, fewer));
    }

    // A given count spreads the load: exactly N stages, all fitting, the fullest no fuller than with `auto`.
    void givenCountSpreadsLoad()
    {
        const auto graph = uniformChain(12, 30, 8);
        const auto schedule = scheduleOf(graph);
        auto fewest = planMultiChip(graph, schedule, testChip(100), {});
        QVERIFY(fewest);
        QCOMPARE(fewest->chips(), 6);
        for (int n : { 6, 7, 9, 12 }) {
            MultiChipOptions options;
            options.chips = n;
            auto spread = planMultiChip(graph, schedule, testChip(100), options);
            QVERIFY2(spread, spread ? "" : spread.error().message.c_str());
            checkPartition(graph, schedule, *spread);
            QCOMPARE(spread->chips(), n);
            QVERIFY(spread->requestedChips);
            QCOMPARE(spread->pooledCapacity(), Bytes(100) * n);
            double fullest = 0, fullestAuto = 0;
            for (const auto& s : spread->stages)
                fullest = std::max(fullest, s.fill());
            for (const auto& s : fewest->stages)
                fullestAuto = std::max(fullestAuto, s.fill());
            QVERIFY(fullest <= fullestAuto);
        }
        MultiChipOptions tooMany;
        tooMany.chips = 13;
        auto error = planMultiChip(graph, schedule, testChip(100), tooMany);
        QVERIFY(!error);
        QVERIFY2(error.error().message.find("13 chips for 12 ops") != std::string::npos, error.error().message.c_str());
    }

    void opTooBigForOneChip()
    {
        std::vector<Layer> layers(4, Layer { 20, 8, {} });
        layers[2].weight = 500;
        const auto graph = makeChain(layers, 8);
        auto plan = planMultiChip(graph, scheduleOf(graph), testChip(100), {});
        QVERIFY(!plan);
        QCOMPARE(plan.error().code, ErrorCode::Infeasible);
        const auto& message = plan.error().message;
        QVERIFY2(message.find("'layer2'") != std::string::npos, message.c_str());
        QVERIFY2(message.find("516 B") != std::string::npos, message.c_str()); // 500 weights + 8 in + 8 out
        QVERIFY2(message.find("test-chip") != std::string::npos, message.c_str());
    }

    // A synthetic 1 GiB model on groq-lpu: 16 layers of 64 MiB; three fit a 230 MB chip, so six chips.
    void largeModelOnGroq()
    {
        const auto graph = largeModel(16);
        const auto schedule = scheduleOf(graph);
        auto plan = planMultiChip(graph, schedule, groq(), {});
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        checkPartition(graph, schedule, *plan);
        QCOMPARE(plan->chips(), 6);
        QVERIFY(plan->optimal);
        QCOMPARE(plan->pooledCapacity(), Bytes(6) * 230000000);
        QCOMPARE(plan->alignment, Bytes(64));
        const auto text = formatMultiChipReport(graph, schedule, *plan);
        QVERIFY2(text.find("6 x groq-lpu (230 MB each) = 1.38 GB pooled") != std::string::npos, text.c_str());
        QVERIFY2(text.find("fewest that fit") != std::string::npos, text.c_str());
        const auto json = multiChipJson(graph, schedule, *plan);
        QCOMPARE(json["chips"].get<int>(), 6);
        QCOMPARE(json["stages"].size(), std::size_t(6));
        QCOMPARE(json["stages"][0]["weights_bytes"].get<Bytes>(), Bytes(3) * 4096 * 4096 * 4);
        qInfo("synthetic 16 x 64 MiB model on groq-lpu: %d chips, pooled %s, latency %s",
            plan->chips(), formatDecimalBytes(plan->pooledCapacity()).c_str(), formatSeconds(plan->latencySeconds()).c_str());
        // 4 chips = 920 MB pooled, as the vendor counts it; not enough here.
        MultiChipOptions four;
        four.chips = 4;
        auto fewer = planMultiChip(graph, schedule, groq(), four);
        QVERIFY(!fewer);
        QVERIFY2(fewer.error().message.find("920 MB") != std::string::npos, fewer.error().message.c_str());
    }

    void realModels_data()
    {
        QTest::addColumn<QString>("model");
        for (const char* m : { "resnet50.onnx", "densenet121.onnx", "vit_b_16.onnx", "swin_t.onnx" })
            QTest::addRow("%s", m) << QString::fromLatin1(m);
    }
    void realModels()
    {
        QFETCH(QString, model);
        const auto path = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/models/") + model;
        if (!QFile::exists(path))
            QSKIP(qPrintable(path + QStringLiteral(" is absent")));
        auto workload = loadWorkload(path.toStdString(), {});
        QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
        const auto& graph = *workload->graph;
        auto plan = planMultiChip(graph, workload->schedule, groq(), {});
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        checkPartition(graph, workload->schedule, *plan);
        Bytes weights = 0;
        for (const auto& r : workload->regions)
            weights += r.size;
        QVERIFY(plan->pooledCapacity() >= weights);
        QVERIFY(plan->chips() >= plan->provenMinChips);
        if (plan->chips() > 1) {
            MultiChipOptions fewer;
            fewer.chips = plan->chips() - 1;
            QVERIFY(!planMultiChip(graph, workload->schedule, groq(), fewer));
        }
        qInfo("%s on groq-lpu: %d chip(s) (proven minimum %d), pooled %s, weights %s (held %s), latency %s, %.0f inputs/s",
            qPrintable(model), plan->chips(), plan->provenMinChips, formatDecimalBytes(plan->pooledCapacity()).c_str(),
            formatDecimalBytes(weights).c_str(), formatDecimalBytes(plan->weightBytes()).c_str(),
            formatSeconds(plan->latencySeconds()).c_str(), plan->throughputPerSecond());
    }

    void cli()
    {
        QTemporaryDir dir;
        const auto model = writeGraph(dir, largeModel(16), QStringLiteral("large.json"));
        const auto json = dir.filePath(QStringLiteral("plan.json"));
        auto run = memplan({ QStringLiteral("plan"), model, QStringLiteral("--device"), QStringLiteral("groq-lpu"),
            QStringLiteral("--chips"), QStringLiteral("auto"), QStringLiteral("--json"), json });
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.out.contains(QStringLiteral("6 x groq-lpu")), qPrintable(run.out));
        QVERIFY2(run.out.contains(QStringLiteral("first op .. last op")), qPrintable(run.out));
        QFile file(json);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const auto doc = QJsonDocument::fromJson(file.readAll()).object();
        QCOMPARE(doc.value(QStringLiteral("chips")).toInt(), 6);
        QCOMPARE(doc.value(QStringLiteral("pooled_capacity_bytes")).toInteger(), 6LL * 230000000);
        QVERIFY(doc.contains(QStringLiteral("arena_bytes"))); // still the plan JSON
        const auto stages = doc.value(QStringLiteral("stages")).toArray();
        QCOMPARE(stages.size(), 6);
        qint64 covered = 0;
        for (const auto& s : stages) {
            const auto stage = s.toObject();
            QVERIFY(stage.value(QStringLiteral("used_bytes")).toInteger() <= 230000000);
            QCOMPARE(stage.value(QStringLiteral("first_step")).toInteger(), covered);
            covered = stage.value(QStringLiteral("end_step")).toInteger();
            QVERIFY(!stage.value(QStringLiteral("buffers")).toArray().isEmpty());
        }
        QCOMPARE(covered, 16);
        QCOMPARE(doc.value(QStringLiteral("transfers")).toArray().size(), 5 + 2); // 5 hops, input, output

        // Given a count: spread, or a clear error when it cannot hold the model.
        run = memplan({ QStringLiteral("plan"), model, QStringLiteral("--device"), QStringLiteral("groq-lpu"), QStringLiteral("--chips"),
            QStringLiteral("8") });
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.out.contains(QStringLiteral("8 x groq-lpu")), qPrintable(run.out));
        run = memplan({ QStringLiteral("plan"), model, QStringLiteral("--device"), QStringLiteral("groq-lpu"), QStringLiteral("--chips"),
            QStringLiteral("2") });
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.startsWith(QStringLiteral("memplan: ")) && run.err.contains(QStringLiteral("cannot hold")), qPrintable(run.err));

        // Without --chips: the plan as before, plus a warning with the overflow.
        run = memplan({ QStringLiteral("plan"), model, QStringLiteral("--device"), QStringLiteral("groq-lpu") });
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.out.contains(QStringLiteral("warning: ")) && run.out.contains(QStringLiteral("over by")), qPrintable(run.out));
        run = memplan({ QStringLiteral("plan"), QStringLiteral("example:cnn"), QStringLiteral("--device"), QStringLiteral("h200") });
        QVERIFY2(run.exitCode == 0 && !run.out.contains(QStringLiteral("warning")), qPrintable(run.out));

        // Bad command lines.
        for (const auto& bad : { QStringLiteral("0"), QStringLiteral("many"), QStringLiteral("-3") }) {
            run = memplan({ QStringLiteral("plan"), model, QStringLiteral("--chips"), bad });
            QCOMPARE(run.exitCode, 2);
            QVERIFY2(run.err.contains(QStringLiteral("--chips")), qPrintable(run.err));
        }
        run = memplan({ QStringLiteral("plan"), model, QStringLiteral("--chips"), QStringLiteral("auto"), QStringLiteral("--fuse") });
        QCOMPARE(run.exitCode, 2);
        run = memplan({ QStringLiteral("plan"), QStringLiteral("example:hotel"), QStringLiteral("--chips"), QStringLiteral("auto") });
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains(QStringLiteral("allocation problem")), qPrintable(run.err));
        // One op too big for a chip: named, with its bytes.
        std::vector<Layer> layers(3, Layer { 1000, 64, {} });
        layers[1].weight = 300000000;
        run = memplan({ QStringLiteral("plan"), writeGraph(dir, makeChain(layers, 64), QStringLiteral("huge.json")), QStringLiteral("--device"),
            QStringLiteral("groq-lpu"), QStringLiteral("--chips"), QStringLiteral("auto") });
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains(QStringLiteral("'layer1'")) && run.err.contains(QStringLiteral("alone needs")), qPrintable(run.err));
    }

    // The Studio view: renders the stages, re-partitions off the UI thread when the count changes,
    // keeps only the latest request's result.
    void stagesView()
    {
        std::shared_ptr<const Workload> workload;
        const auto resnet = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/models/resnet50.onnx");
        {
            auto loaded = QFile::exists(resnet) ? loadWorkload(resnet.toStdString(), {})
                                                : workloadFromGraph(largeModel(16), "synthetic", {});
            QVERIFY2(loaded, loaded ? "" : loaded.error().message.c_str());
            workload = std::make_shared<const Workload>(std::move(*loaded));
        }
        StagesView view;
        view.resize(1400, 900);
        QSignalSpy ready(&view, &StagesView::partitionReady);
        view.setWorkload(workload, groq());
        QVERIFY(view.isBusy());
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 120000);
        QVERIFY(view.partition());
        const int fewest = view.partition()->chips();
        checkPartition(*workload->graph, workload->schedule, *view.partition());
        QDir().mkpath(QStringLiteral("/tmp/h4shots"));
        QVERIFY(view.grab().save(QStringLiteral("/tmp/h4shots/stages.png")));

        // Two quick changes: only the second lands.
        view.setChipCount(fewest + 3);
        view.setChipCount(fewest + 1);
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, 120000);
        QTest::qWait(200);
        QCOMPARE(ready.count(), 2);
        QCOMPARE(view.partition()->chips(), fewest + 1);
        checkPartition(*workload->graph, workload->schedule, *view.partition());
        const auto change = view.changeText();
        QVERIFY2(change.startsWith(QStringLiteral("From %1 to %2 chips").arg(fewest).arg(fewest + 1)), qPrintable(change));
        QVERIFY(view.grab().save(QStringLiteral("/tmp/h4shots/stages-more.png")));

        // Many chips side by side: the synthetic 16-layer model over its six.
        auto large = workloadFromGraph(largeModel(16), "synthetic", {});
        QVERIFY(large);
        view.setChipCount(0);
        view.setWorkload(std::make_shared<const Workload>(std::move(*large)), groq());
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 3, 120000);
        QCOMPARE(view.partition()->chips(), 6);
        QVERIFY(view.changeText().isEmpty()); // another model: nothing to compare with
        QVERIFY(view.grab().save(QStringLiteral("/tmp/h4shots/stages-synthetic.png")));

        // An impossible count: an error, the last good partition stays.
        QSignalSpy failed(&view, &StagesView::partitionFailed);
        view.setChipCount(17);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 120000);
        QVERIFY(!view.errorText().isEmpty());
        QCOMPARE(view.partition()->chips(), 6);
    }

    void chipUnits()
    {
        QCOMPARE(chipUnitFor("Conv"), ChipUnit::Matrix);
        QCOMPARE(chipUnitFor("MatMul"), ChipUnit::Matrix);
        QCOMPARE(chipUnitFor("Relu"), ChipUnit::Vector);
        QCOMPARE(chipUnitFor("Softmax"), ChipUnit::Vector);
        QCOMPARE(chipUnitFor("Transpose"), ChipUnit::Switch);
        QCOMPARE(chipUnitFor("Concat"), ChipUnit::Switch);
        QCOMPARE(chipUnitFor("Identity"), ChipUnit::Memory);
        QCOMPARE(chipUnitName(ChipUnit::Switch), std::string_view("switch"));
        // A fused Conv+Relu runs on the matrix unit, a fused Add+Relu on the vector unit.
        core::Op fused;
        fused.type = "Fused";
        fused.body.resize(2);
        fused.body[0].type = "Conv";
        fused.body[1].type = "Relu";
        QCOMPARE(chipUnitFor(fused), ChipUnit::Matrix);
        fused.body[0].type = "Add";
        QCOMPARE(chipUnitFor(fused), ChipUnit::Vector);
        fused.body.clear();
        fused.type = "Conv";
        QCOMPARE(chipUnitFor(fused), ChipUnit::Matrix);
    }

    // The three teaching modes, one click apart; the performance mode plots runs measured by the CPU executor.
    void teachingView()
    {
        auto loaded = loadWorkload("example:cnn", {});
        QVERIFY2(loaded, loaded ? "" : loaded.error().message.c_str());
        const auto workload = std::make_shared<const Workload>(std::move(*loaded));
        ChipTeachingView view;
        view.resize(1300, 760);
        QSignalSpy ready(view.stagesView(), &StagesView::partitionReady);
        view.setWorkload(workload, groq());
        view.stagesView()->setChipCount(2);
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() >= 1 && !view.stagesView()->isBusy(), 120000);
        QCOMPARE(view.stagesView()->partition()->chips(), 2);
        QDir().mkpath(QStringLiteral("/tmp/h4shots"));

        // Architecture: a convolution at its step on the matrix unit, and an elementwise op on the vector unit.
        int conv = -1, add = -1;
        for (Step s = 0; s < workload->schedule.steps(); ++s) {
            const auto& type = workload->graph->ops[workload->schedule.order[s]].type;
            if (type == "Conv" && conv < 0 && s > 5)
                conv = s;
            if (type == "Add" && add < 0 && s > workload->schedule.steps() / 2)
                add = s;
        }
        QVERIFY(conv >= 0 && add >= 0);
        view.setStep(conv);
        QCOMPARE(view.mode(), ChipTeachingView::Mode::Architecture);
        QVERIFY(view.grab().save(QStringLiteral("/tmp/h4shots/teach-architecture.png")));
        view.setStep(add);
        QVERIFY(view.grab().save(QStringLiteral("/tmp/h4shots/teach-architecture-add.png")));

        QPushButton* performance = nullptr;
        QPushButton* multiChip = nullptr;
        for (auto* button : view.findChildren<QPushButton*>()) {
            if (button->text() == QStringLiteral("Performance"))
                performance = button;
            if (button->text() == QStringLiteral("Multi-chip"))
                multiChip = button;
        }
        QVERIFY(performance && multiChip);
        QTest::mouseClick(performance, Qt::LeftButton);
        QCOMPARE(view.mode(), ChipTeachingView::Mode::Performance);
        QSignalSpy measured(&view, &ChipTeachingView::measuredRunsReady);
        view.measure(RunDevice::Cpu, 3);
        QTRY_COMPARE_WITH_TIMEOUT(measured.count(), 1, 300000);
        QCOMPARE(view.measuredRuns().size(), std::size_t(3));
        for (double ms : view.measuredRuns())
            QVERIFY(ms > 0);
        QVERIFY(view.grab().save(QStringLiteral("/tmp/h4shots/teach-performance.png")));

        // The GPU button: enabled only with a usable device, otherwise greyed with the reason.
        auto* gpuButton = view.findChild<QPushButton*>(QStringLiteral("measureGpuButton"));
        QVERIFY(gpuButton);
        const CudaDeviceStatus& cuda = cudaDeviceStatus();
        QCOMPARE(gpuButton->isEnabled(), cuda.available);
        if (!cuda.available) {
            QVERIFY(!cuda.reason.isEmpty());
            QVERIFY2(gpuButton->toolTip().contains(cuda.reason), qPrintable(gpuButton->toolTip()));
            view.measure(RunDevice::Cuda, 3); // nothing to run on: no job, no series
            QVERIFY(view.gpuMeasuredRuns().empty());
            QVERIFY(view.findChild<QPushButton*>(QStringLiteral("measureCpuButton"))->isEnabled());
        }
        // A second measured series drawn beside the CPU one (runs as a GPU would give them).
        view.setGpuMeasuredRuns(QStringLiteral("cuda: test device"), { 0.21, 0.2, 0.22, 0.35, 0.2 });
        QCOMPARE(view.gpuMeasuredRuns().size(), std::size_t(5));
        QCOMPARE(view.measuredRuns().size(), std::size_t(3)); // the CPU series is kept
        QDir().mkpath(QStringLiteral("/tmp/h9shots"));
        QVERIFY(view.grab().save(QStringLiteral("/tmp/h9shots/teach-performance-gpu.png")));

        // While it measures, runs arrive one by one and the button cancels, saying which run it is on;
        // after Cancel the runs done stay, and the button measures again.
        auto* cpuButton = view.findChild<QPushButton*>(QStringLiteral("measureCpuButton"));
        measured.clear();
        view.measure(RunDevice::Cpu, 400);
        QVERIFY(view.measuredRuns().empty()); // the old series goes at the start
        QVERIFY2(cpuButton->text().startsWith(QStringLiteral("Cancel (run 1 of 400)")), qPrintable(cpuButton->text()));
        QTRY_VERIFY_WITH_TIMEOUT(view.measuredRuns().size() >= 2, 300000);
        QVERIFY2(cpuButton->text().startsWith(QStringLiteral("Cancel (run ")), qPrintable(cpuButton->text()));
        QTest::mouseClick(cpuButton, Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(cpuButton->text(), QStringLiteral("Measure on CPU"), 300000);
        QTRY_COMPARE_WITH_TIMEOUT(measured.count(), 1, 300000);
        QVERIFY(view.measuredRuns().size() >= 2 && view.measuredRuns().size() < 400);
        QVERIFY(cpuButton->isEnabled());

        QTest::mouseClick(multiChip, Qt::LeftButton);
        QCOMPARE(view.mode(), ChipTeachingView::Mode::MultiChip);
        QVERIFY(view.grab().save(QStringLiteral("/tmp/h4shots/teach-multichip.png")));
    }
};

QTEST_MAIN(TestMultiChip)
#include "tst_multichip.moc"
