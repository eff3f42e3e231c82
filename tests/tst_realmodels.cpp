// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Real architectures exported from torchvision and a GPT-style decoder (scripts/make_models.sh):
// every activation sized, every planner's plan valid; the decoder also runs on real kernels. Skips, saying how to make the models, when they are missing.
#include "exec/executor.h"
#include "exec/tensordata.h"
#include "io/workload.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "strategies/strategy.h"
#include "util/halffloat.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

using namespace core;

namespace {
const std::string kModels = MEMPLAN_SOURCE_DIR "/tests/models/";

bool present(const std::string& file) { return std::filesystem::exists(kModels + file); }

void planWithEveryPlanner(const Workload& workload)
{
    const Bytes bound = lowerBound(workload.problem);
    for (const auto& planner : planners()) {
        const auto plan = runPlanner(*planner, workload.problem);
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        const auto check = validatePlan(workload.problem, *plan);
        QVERIFY2(check.ok(), (std::string(planner->name()) + ": " + check.message).c_str());
        QVERIFY(plan->arenaSize >= bound);
    }
}

// Plans `workload` (greedy-by-size) and runs it with the model's own weights, planned and without
// reuse (checkPlanByRunning). Fails the calling test when a step does not work.
void runWithWeights(const std::string& file, const Workload& workload, std::optional<PlanRunCheck>& result,
    std::map<std::string, HostTensor> inputs = {})
{
    auto data = loadTensorData(kModels + file, *workload.graph);
    QVERIFY2(data, data ? "" : data.error().message.c_str());
    const auto plan = runPlanner(*plannerByName("greedy-by-size"), workload.problem);
    QVERIFY(plan && validatePlan(workload.problem, *plan).ok());
    RunOptions options;
    options.modelData = std::make_shared<const ModelData>(std::move(*data));
    options.inputs = std::move(inputs);
    auto check = checkPlanByRunning(*workload.graph, workload.schedule, workload.problem, *plan, workload.bufferTensor, options);
    QVERIFY2(check, check ? "" : check.error().message.c_str());
    QVERIFY2(check->outputsMatch, check->mismatch.c_str());
    QCOMPARE(check->planned.opsSynthetic, 0);
    result = std::move(*check);
}
} // namespace

class TestRealModels : public QObject {
    Q_OBJECT
private slots:
    void architectures_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<qint64>("minimumPeak"); // a lower bound on the lower bound: the largest activation pair
        // resnet50: 1x64x112x112 float32 conv1 output (3.06 MiB) and more live beside it.
        QTest::newRow("resnet50") << QStringLiteral("resnet50.onnx") << qint64(1 * 64 * 112 * 112 * 4);
        QTest::newRow("mobilenet_v2") << QStringLiteral("mobilenet_v2.onnx") << qint64(1 * 32 * 112 * 112 * 4);
        QTest::newRow("efficientnet_b0") << QStringLiteral("efficientnet_b0.onnx") << qint64(1 * 32 * 112 * 112 * 4);
        QTest::newRow("densenet121") << QStringLiteral("densenet121.onnx") << qint64(1 * 64 * 112 * 112 * 4);
        QTest::newRow("deeplabv3_resnet50") << QStringLiteral("deeplabv3_resnet50.onnx") << qint64(1 * 21 * 520 * 520 * 4);
        QTest::newRow("vit_b_16") << QStringLiteral("vit_b_16.onnx") << qint64(1 * 197 * 3072 * 4);
        QTest::newRow("swin_t") << QStringLiteral("swin_t.onnx") << qint64(1 * 56 * 56 * 96 * 4);
        QTest::newRow("mobilenet_v2_external") << QStringLiteral("mobilenet_v2_external.onnx") << qint64(1 * 32 * 112 * 112 * 4);
        QTest::newRow("gpt_decoder") << QStringLiteral("gpt_decoder.onnx") << qint64(1 * 64 * 1000 * 4); // the logits
        QTest::newRow("maxvit_small") << QStringLiteral("maxvit_small.onnx") << qint64(1 * 16 * 32 * 32 * 4); // the stem's output
        QTest::newRow("r3d_18") << QStringLiteral("r3d_18.onnx") << qint64(1 * 64 * 8 * 28 * 28 * 4); // the stem's output
        QTest::newRow("mvit_small") << QStringLiteral("mvit_small.onnx") << qint64(1 * 48 * 2 * 16 * 16 * 4); // the patch tokens
        // Unfused, the first convolution's float output (DequantizeLinear -> Conv) is in the arena.
        QTest::newRow("qmobilenet_v2") << QStringLiteral("qmobilenet_v2.onnx") << qint64(1 * 32 * 112 * 112 * 4);
    }
    void architectures()
    {
        QFETCH(QString, file);
        QFETCH(qint64, minimumPeak);
        if (!present(file.toStdString()))
            QSKIP(qPrintable(file + QStringLiteral(" is missing: run scripts/make_models.sh to export the test models")));
        const auto workload = loadWorkload(kModels + file.toStdString(), {});
        QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
        QVERIFY(workload->graph);
        QVERIFY(unsizedTensors(*workload->graph).empty());
        // Static shapes: nothing is a guess. A list (MViT's) has run-time shapes as every list has, so
        // it is marked estimated, but its size is exact: no size is a bound.
        for (const auto& tensor : workload->graph->tensors)
            QVERIFY2(!sizeIsBound(tensor) && (!tensor.estimated || tensor.sequence), tensor.name.c_str());
        QVERIFY(workload->problem.buffers.size() > 30);
        QVERIFY2(lowerBound(workload->problem) >= minimumPeak, std::to_string(lowerBound(workload->problem)).c_str());
        QVERIFY(!workload->regions.empty() && workload->regions[0].name == "weights" && workload->regions[0].size > 500'000);
        planWithEveryPlanner(*workload);
    }

    // The decoder's position ids (CumSum), causal mask (Trilu) and greedy next token (ArgMax) run on
    // real kernels with its exported weights; the planned arena run equals the no-reuse run, and the
    // next token is the argmax of the last position's logits.
    void decoderRunsOnRealKernels()
    {
        const std::string file = "gpt_decoder.onnx";
        if (!present(file))
            QSKIP("gpt_decoder.onnx is missing: run scripts/make_models.sh to export the test models");
        const auto workload = loadWorkload(kModels + file, {});
        QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
        const auto& graph = *workload->graph;
        for (const char* type : { "CumSum", "Trilu", "ArgMax" })
            QVERIFY2(std::any_of(graph.ops.begin(), graph.ops.end(), [&](const Op& op) { return op.type == type; }), type);
        std::optional<PlanRunCheck> check;
        runWithWeights(file, *workload, check);
        if (!check)
            return;
        const auto& outputs = check->planned.outputs;
        QCOMPARE(outputs.size(), std::size_t(2));
        QCOMPARE(outputs[0].elementCount(), std::int64_t(64 * 1000));
        const float* last = reinterpret_cast<const float*>(outputs[0].data.data()) + 63 * 1000;
        const auto expected = std::max_element(last, last + 1000) - last;
        QCOMPARE(outputs[1].dtype, DType::Int64);
        std::int64_t token = -1;
        std::memcpy(&token, outputs[1].data.data(), sizeof token);
        QCOMPARE(token, std::int64_t(expected));
    }

    // MaxViT's relative attention exports as Einsum, R3D-18's and MViT's convolutions are 3-D; with the exported
    // weights every op runs on a real kernel, and the planned arena run equals the no-reuse run.
    void exportedWeightsOnRealKernels_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("opType"); // an op the model must have, with a kernel of its own
        QTest::addColumn<int>("rank");       // of that op's first input
        QTest::addColumn<int>("classes");
        QTest::newRow("maxvit_small") << QStringLiteral("maxvit_small.onnx") << QStringLiteral("Einsum") << 5 << 100;
        QTest::newRow("r3d_18") << QStringLiteral("r3d_18.onnx") << QStringLiteral("Conv") << 5 << 400;
        // MViT's attention pooling: 3-D convolutions over tokens cut from lists of unequal pieces.
        QTest::newRow("mvit_small") << QStringLiteral("mvit_small.onnx") << QStringLiteral("Conv") << 5 << 10;
    }
    void exportedWeightsOnRealKernels()
    {
        QFETCH(QString, file);
        QFETCH(QString, opType);
        QFETCH(int, rank);
        QFETCH(int, classes);
        if (!present(file.toStdString()))
            QSKIP(qPrintable(file + QStringLiteral(" is missing: run scripts/make_models.sh to export the test models")));
        const auto workload = loadWorkload(kModels + file.toStdString(), {});
        QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
        const auto& graph = *workload->graph;
        QVERIFY(std::count_if(graph.ops.begin(), graph.ops.end(), [&](const Op& op) {
            return op.type == opType.toStdString() && int(graph.tensors[op.inputs[0]].shape.size()) == rank;
        }) >= 4);
        std::optional<PlanRunCheck> check;
        runWithWeights(file.toStdString(), *workload, check);
        if (!check)
            return;
        const auto& logits = check->planned.outputs.at(0);
        QCOMPARE(logits.elementCount(), std::int64_t(classes));
        const float* v = reinterpret_cast<const float*>(logits.data.data());
        QVERIFY(std::all_of(v, v + classes, [](float x) { return std::isfinite(x); }));
        QVERIFY(std::any_of(v, v + classes, [&](float x) { return x != v[0]; }));
    }

    // MobileNetV2 converted to float16 (scripts/make_models.py, FLOAT16): every op runs on a real
    // kernel, the plan check holds bit for bit, its activations take half the float32 model's bytes,
    // and its logits follow torch's float32 ones for the same input (weights rounded to float16 in
    // both) within float16 rounding: the export folds batch norms into the convolutions, and
    // rounding those folded weights alone moves the logits by 1.1 % of the largest (measured with
    // the same model widened to float32); computing in float16 adds under 1 %.
    void halfPrecisionMobileNet()
    {
        const std::string file = "mobilenet_v2_fp16.onnx";
        if (!present(file) || !present("mobilenet_v2_fp16.input_0.pb") || !present("mobilenet_v2_fp16.output_0.pb"))
            QSKIP("mobilenet_v2_fp16.onnx or its reference is missing: run scripts/make_models.sh to export the test models");
        const auto workload = loadWorkload(kModels + file, {});
        QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
        if (present("mobilenet_v2.onnx")) {
            const auto single = loadWorkload(kModels + "mobilenet_v2.onnx", {});
            QVERIFY2(single, single ? "" : single.error().message.c_str());
            QCOMPARE(lowerBound(workload->problem) * 2, lowerBound(single->problem));
        }
        auto input = readTensorFile(kModels + "mobilenet_v2_fp16.input_0.pb");
        auto expected = readTensorFile(kModels + "mobilenet_v2_fp16.output_0.pb");
        QVERIFY(input && expected);
        QCOMPARE(input->second.dtype, DType::Float16);
        std::optional<PlanRunCheck> check;
        runWithWeights(file, *workload, check, { { "input", input->second } });
        if (!check)
            return;
        const auto& logits = check->planned.outputs.at(0);
        QCOMPARE(logits.dtype, DType::Float16);
        QCOMPARE(logits.elementCount(), expected->second.elementCount());
        const auto* bits = reinterpret_cast<const std::uint16_t*>(logits.data.data());
        const auto* torch = reinterpret_cast<const float*>(expected->second.data.data());
        double scale = 0, worst = 0;
        for (std::int64_t i = 0; i < logits.elementCount(); ++i)
            scale = std::max(scale, double(std::fabs(torch[i])));
        for (std::int64_t i = 0; i < logits.elementCount(); ++i)
            worst = std::max(worst, std::fabs(double(halfToFloat(bits[i])) - double(torch[i])) / scale);
        qInfo("mobilenet_v2 in float16 vs torch in float32: largest logit difference %.2e of the largest logit", worst);
        QVERIFY2(scale > 0.01 && worst < 3e-2, qPrintable(QString::number(worst)));
    }

    // An int8 MobileNetV2 in QDQ form runs on real kernels (QuantizeLinear, DequantizeLinear). Fused,
    // each DequantizeLinear -> Conv -> QuantizeLinear group is one op: the float tensors leave the
    // arena, the largest buffer left holds 8-bit values, and the fused model computes the same bits.
    void quantizedNetFusesToEightBits()
    {
        const std::string file = "qmobilenet_v2.onnx";
        if (!present(file))
            QSKIP("qmobilenet_v2.onnx is missing: run scripts/make_models.sh to export the test models");
        const auto workload = loadWorkload(kModels + file, {});
        QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
        const auto& graph = *workload->graph;
        const auto count = [&](const Graph& g, const char* type) {
            return std::count_if(g.ops.begin(), g.ops.end(), [&](const Op& op) { return op.type == type; });
        };
        QVERIFY(count(graph, "DequantizeLinear") >= 100 && count(graph, "QuantizeLinear") >= 50);
        std::optional<PlanRunCheck> plain;
        runWithWeights(file, *workload, plain);
        if (!plain)
            return;

        StrategyOptions strategyOptions;
        strategyOptions.alignment = workload->problem.alignment;
        const auto fused = applyStrategies(*workload, { "fuse", "inplace" }, strategyOptions);
        QVERIFY2(fused, fused ? "" : fused.error().message.c_str());
        const auto& after = fused->workload;
        // The DequantizeLinear ops left feed what no chain takes: the Flatten view and the graph output.
        for (const auto& op : after.graph->ops) {
            if (op.type != "DequantizeLinear")
                continue;
            const auto t = op.outputs[0];
            const bool isOutput = std::find(after.graph->outputs.begin(), after.graph->outputs.end(), t) != after.graph->outputs.end();
            for (const auto& reader : after.graph->ops)
                if (std::find(reader.inputs.begin(), reader.inputs.end(), t) != reader.inputs.end())
                    QVERIFY2(reader.type == "Flatten", reader.name.c_str());
            QVERIFY2(isOutput || after.graph->tensors[std::size_t(t)].size < 300'000, op.name.c_str());
        }
        QCOMPARE(count(*after.graph, "DequantizeLinear"), 2);
        const Bytes boundBefore = lowerBound(workload->problem), boundAfter = lowerBound(after.problem);
        QVERIFY2(boundAfter * 4 < boundBefore, (std::to_string(boundBefore) + " -> " + std::to_string(boundAfter)).c_str());
        std::size_t largest = 0;
        for (std::size_t b = 0; b < after.problem.buffers.size(); ++b)
            if (after.problem.buffers[b].size > after.problem.buffers[largest].size)
                largest = b;
        QCOMPARE(after.graph->tensors[std::size_t(after.bufferTensor[largest])].dtype, DType::UInt8);

        auto data = loadTensorData(kModels + file, graph);
        QVERIFY2(data, data ? "" : data.error().message.c_str());
        RunOptions options;
        options.modelData = std::make_shared<const ModelData>(remapModelData(*data, graph, *after.graph));
        const auto plan = runPlanner(*plannerByName(kDefaultPlanner), after.problem);
        QVERIFY(plan && validatePlan(after.problem, *plan).ok());
        QCOMPARE(plan->arenaSize, boundAfter);
        const auto check = checkPlanByRunning(*after.graph, after.schedule, after.problem, *plan, after.bufferTensor, options);
        QVERIFY2(check, check ? "" : check.error().message.c_str());
        QVERIFY2(check->outputsMatch, check->mismatch.c_str());
        QCOMPARE(check->planned.opsSynthetic, 0);
        const auto differs = compareOutputs(*after.graph, plain->planned.outputs, check->planned.outputs);
        QVERIFY2(differs.empty(), differs.c_str());
    }

    // LSTM (two bidirectional layers), GRU (linear_before_reset, as torch exports it) and a ReLU RNN
    // on their real kernels give torch's own output for the export input (written beside the model).
    void recurrentNetMatchesTorch()
    {
        const std::string file = "speech_rnn.onnx";
        if (!present(file) || !present("speech_rnn.input_0.pb") || !present("speech_rnn.output_0.pb"))
            QSKIP("speech_rnn.onnx or its reference is missing: run scripts/make_models.sh to export the test models");
        const auto workload = loadWorkload(kModels + file, {});
        QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
        for (const char* type : { "LSTM", "GRU", "RNN" })
            QVERIFY2(std::any_of(workload->graph->ops.begin(), workload->graph->ops.end(), [&](const Op& op) { return op.type == type; }), type);
        auto input = readTensorFile(kModels + "speech_rnn.input_0.pb");
        auto expected = readTensorFile(kModels + "speech_rnn.output_0.pb");
        QVERIFY(input && expected);
        std::map<std::string, HostTensor> inputs;
        inputs[workload->graph->tensors[workload->graph->inputs.at(0)].name] = input->second;
        std::optional<PlanRunCheck> check;
        runWithWeights(file, *workload, check, std::move(inputs));
        if (!check)
            return;
        const auto& got = check->planned.outputs.at(0);
        QCOMPARE(got.elementCount(), expected->second.elementCount());
        const float* a = reinterpret_cast<const float*>(got.data.data());
        const float* e = reinterpret_cast<const float*>(expected->second.data.data());
        for (std::int64_t i = 0; i < got.elementCount(); ++i)
            QVERIFY2(std::fabs(a[i] - e[i]) <= 1e-5f + 1e-4f * std::fabs(e[i]),
                qPrintable(QStringLiteral("logit %1: %2, torch %3").arg(i).arg(a[i]).arg(e[i])));
    }

    // A detector: per-level score thresholds (NonZero), TopK and batched NMS inside an If whose
    // shapes depend on the data. Every tensor gets a size (upper bounds where the data decides),
    // every planner's plan is valid, and the plan runs with the same outputs as the no-reuse run.
    void detectorPlansWithUpperBounds()
    {
        const std::string file = "ssdlite320.onnx";
        if (!present(file))
            QSKIP("ssdlite320.onnx is missing: run scripts/make_models.sh to export the test models");
        const auto workload = loadWorkload(kModels + file, {});
        QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
        const auto& graph = *workload->graph;
        QVERIFY(unsizedTensors(graph).empty());
        const auto named = [&](const std::string& name) {
            auto it = std::find_if(graph.tensors.begin(), graph.tensors.end(), [&](const Tensor& t) { return t.name == name; });
            return it == graph.tensors.end() ? nullptr : &*it;
        };
        // The If holding NonMaxSuppression: its result (kept box indices) is bounded, not known.
        auto iff = std::find_if(graph.ops.begin(), graph.ops.end(), [](const Op& op) { return op.type == "If"; });
        QVERIFY(iff != graph.ops.end());
        const Tensor& kept = graph.tensors[std::size_t(iff->outputs.at(0))];
        QVERIFY(kept.estimated);
        QVERIFY2(kept.rankKnown && kept.shape.size() == 1 && kept.shape[0] > 0, kept.name.c_str());
        for (const char* output : { "boxes", "scores", "labels" }) {
            const Tensor* t = named(output);
            QVERIFY2(t && t->estimated && t->size > 0, output);
            QVERIFY2(t->shape[0] <= 300, std::to_string(t->shape[0]).c_str()); // detections_per_img
        }
        QVERIFY(!named("input")->estimated);
        planWithEveryPlanner(*workload);

        auto data = loadTensorData(kModels + file, graph);
        QVERIFY2(data, data ? "" : data.error().message.c_str());
        const auto plan = runPlanner(*plannerByName("greedy-by-size"), workload->problem);
        QVERIFY(plan && validatePlan(workload->problem, *plan).ok());
        RunOptions options;
        options.modelData = std::make_shared<const ModelData>(std::move(*data));
        auto check = checkPlanByRunning(graph, workload->schedule, workload->problem, *plan, workload->bufferTensor, options);
        QVERIFY2(check, check ? "" : check.error().message.c_str());
        QVERIFY2(check->outputsMatch, check->mismatch.c_str());
        // Every op runs a real kernel: the backbone, the heads, the per-class score filtering
        // (NonZero, GatherND, TopK on run-time shapes) and the If holding batched NMS (its branch
        // runs op by op) with the ops after it.
        int filtering = 0;
        for (const auto& op : check->planned.ops)
            if (op.type == "NonZero" || op.type == "TopK" || op.type == "GatherND") {
                QVERIFY2(op.real, op.name.c_str());
                ++filtering;
            }
        QCOMPARE(filtering, 450); // 90 classes: 2 NonZero, 2 GatherND, 1 TopK each
        QCOMPARE(check->planned.opsSynthetic, 0);
        QVERIFY(check->planned.opsReal > 2000);
    }

    // A two-stage detector: the RPN's proposals (TopK, NMS in an If) are a bounded count, and the
    // RoI pooling per FPN level (NonZero, RoiAlign on indices an If of unknown rank gives, Gemm,
    // ScatterElements) and the box head run on it. Every op runs for real in the planned arena and
    // gives torch's detections for the export input, in torch's order.
    void twoStageDetectorMatchesTorch()
    {
        const std::string file = "fasterrcnn_320.onnx";
        if (!present(file) || !present("fasterrcnn_320.input_0.pb") || !present("fasterrcnn_320.output_2.pb"))
            QSKIP("fasterrcnn_320.onnx or its reference is missing: run scripts/make_models.sh to export the test models");
        const auto workload = loadWorkload(kModels + file, {});
        QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
        QVERIFY(unsizedTensors(*workload->graph).empty());
        QCOMPARE(std::count_if(workload->graph->ops.begin(), workload->graph->ops.end(), [](const Op& op) { return op.type == "RoiAlign"; }), 2L);
        planWithEveryPlanner(*workload);
        auto input = readTensorFile(kModels + "fasterrcnn_320.input_0.pb");
        QVERIFY(input);
        std::map<std::string, HostTensor> inputs;
        inputs[workload->graph->tensors[workload->graph->inputs.at(0)].name] = input->second;
        std::optional<PlanRunCheck> check;
        runWithWeights(file, *workload, check, std::move(inputs));
        if (!check)
            return;
        const auto& got = check->planned.outputs;
        QCOMPARE(got.size(), std::size_t(3));
        // Boxes within 0.02 px of torch's (on a 320-pixel image), scores within 1e-4, labels equal.
        const float tolerance[] = { 0.02f, 1e-4f };
        for (int k = 0; k < 3; ++k) {
            const auto expected = readTensorFile(kModels + "fasterrcnn_320.output_" + std::to_string(k) + ".pb");
            QVERIFY(expected);
            QCOMPARE(got[std::size_t(k)].shape, expected->second.shape);
            QCOMPARE(got[std::size_t(k)].dtype, expected->second.dtype);
            if (k == 2) {
                QVERIFY(got[2].data == expected->second.data);
                continue;
            }
            const float* a = reinterpret_cast<const float*>(got[std::size_t(k)].data.data());
            const float* e = reinterpret_cast<const float*>(expected->second.data.data());
            for (std::int64_t i = 0; i < got[std::size_t(k)].elementCount(); ++i)
                QVERIFY2(std::fabs(a[i] - e[i]) <= tolerance[k],
                    qPrintable(QStringLiteral("output %1 element %2: %3, torch %4").arg(k).arg(i).arg(a[i]).arg(e[i])));
        }
        QCOMPARE(got[1].elementCount(), std::int64_t(100)); // detections_per_img: every detection kept
    }

    void symbolicBatchNeedsADim()
    {
        if (!present("resnet50_dynbatch.onnx") || !present("resnet50.onnx"))
            QSKIP("resnet50_dynbatch.onnx is missing: run scripts/make_models.sh to export the test models");
        const auto unbound = loadWorkload(kModels + "resnet50_dynbatch.onnx", {});
        QVERIFY(!unbound);
        QVERIFY2(unbound.error().message.find("batch") != std::string::npos, unbound.error().message.c_str());
        QVERIFY2(unbound.error().message.find("resnet50_dynbatch.onnx") != std::string::npos, unbound.error().message.c_str());

        LoadOptions options;
        options.bindings.dims["batch"] = 4;
        const auto batch4 = loadWorkload(kModels + "resnet50_dynbatch.onnx", options);
        QVERIFY2(batch4, batch4 ? "" : batch4.error().message.c_str());
        const auto batch1 = loadWorkload(kModels + "resnet50.onnx", {});
        QVERIFY(batch1);
        // Activations scale with the batch; alignment padding keeps it from being exactly 4x.
        const double ratio = double(lowerBound(batch4->problem)) / double(lowerBound(batch1->problem));
        QVERIFY2(ratio > 3.9 && ratio < 4.1, std::to_string(ratio).c_str());
        planWithEveryPlanner(*batch4);
    }

    // At another input size the convolutional nets follow (their shapes are computed in the graph);
    // the ones with sizes traced as constants are refused, naming the op that cannot run.
    void otherInputSize_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("refusedAt"); // empty: imports and plans
        QTest::newRow("resnet50") << QStringLiteral("resnet50.onnx") << QString();
        QTest::newRow("mobilenet_v2") << QStringLiteral("mobilenet_v2.onnx") << QString();
        QTest::newRow("densenet121") << QStringLiteral("densenet121.onnx") << QString();
        // The ASPP pooling branch is resized to the constant 65x65 traced at 520x520.
        QTest::newRow("deeplabv3_resnet50") << QStringLiteral("deeplabv3_resnet50.onnx")
                                            << QStringLiteral("op '/inner/classifier/classifier.0/Concat' (Concat)");
        // The patch grid is flattened to the constant 196 (14x14) patches.
        QTest::newRow("vit_b_16") << QStringLiteral("vit_b_16.onnx") << QStringLiteral("op '/Reshape' (Reshape)");
    }
    void otherInputSize()
    {
        QFETCH(QString, file);
        QFETCH(QString, refusedAt);
        if (!present(file.toStdString()))
            QSKIP(qPrintable(file + QStringLiteral(" is missing: run scripts/make_models.sh to export the test models")));
        LoadOptions options;
        options.bindings.inputShapes["input"] = { 1, 3, 96, 96 };
        const auto workload = loadWorkload(kModels + file.toStdString(), options);
        if (refusedAt.isEmpty()) {
            QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
            QCOMPARE(workload->graph->tensors[workload->graph->inputs[0]].shape, (std::vector<std::int64_t> { 1, 3, 96, 96 }));
            planWithEveryPlanner(*workload);
            return;
        }
        QVERIFY(!workload);
        const std::string& message = workload.error().message;
        QVERIFY2(message.find(refusedAt.toStdString()) != std::string::npos, message.c_str());
        QVERIFY2(message.find("--input-shape") != std::string::npos, message.c_str());
    }

    void newerOpsetsAndControlFlow_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("estimated"); // some tensor is an upper bound
        for (const char* name : { "opset18_reduce_split", "opset18_pad_axes", "opset19_resize_shape", "opset20_gelu", "attention_seq" })
            QTest::newRow(name) << QStringLiteral("tricky/%1.onnx").arg(QLatin1String(name)) << false;
        // The If's branches produce different widths: its output is sized by the larger one.
        QTest::newRow("if_outer_scope") << QStringLiteral("tricky/if_outer_scope.onnx") << true;
        QTest::newRow("nonzero_gather") << QStringLiteral("tricky/nonzero_gather.onnx") << true;
        // Their bodies pass the condition on unchanged (true): inferred per iteration, exactly M of them.
        QTest::newRow("loop_accumulate") << QStringLiteral("tricky/loop_accumulate.onnx") << false;
        QTest::newRow("loop_nested_if") << QStringLiteral("tricky/loop_nested_if.onnx") << false;
        QTest::newRow("if_nms") << QStringLiteral("tricky/if_nms.onnx") << true;
    }
    void newerOpsetsAndControlFlow()
    {
        QFETCH(QString, file);
        QFETCH(bool, estimated);
        if (!present(file.toStdString()))
            QSKIP(qPrintable(file + QStringLiteral(" is missing: run scripts/make_models.sh to export the test models")));
        LoadOptions options;
        if (file.contains(QStringLiteral("attention")))
            options.bindings.dims["seq"] = 128;
        const auto workload = loadWorkload(kModels + file.toStdString(), options);
        QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
        QVERIFY(unsizedTensors(*workload->graph).empty());
        bool anyEstimated = false;
        for (const auto& tensor : workload->graph->tensors)
            anyEstimated = anyEstimated || tensor.estimated;
        QCOMPARE(anyEstimated, estimated);
        planWithEveryPlanner(*workload);
    }
};

QTEST_GUILESS_MAIN(TestRealModels)
#include "tst_realmodels.moc"
