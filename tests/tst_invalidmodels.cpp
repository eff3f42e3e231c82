// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Hostile model files (tests/data/hostile, made by make_hostile.py there): each once crashed
// memplan, read outside the model's folder, leaked a library message or planned an op the ONNX spec
// forbids. Each must now give one clear error naming the file and the input, tensor or op, through
// the core API and through `memplan plan` (and `run`) with a non-zero exit.

#include "clirun.h"

#include "exec/executor.h"
#include "exec/kernels.h"
#include "exec/tensordata.h"
#include "io/jsongraph.h"
#include "io/workload.h"
#include "onnx/onnximport.h"
#include "planners/validate.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cstring>
#include <filesystem>

using namespace core;

namespace {

QString hostile(const char* name) { return QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/data/hostile/") + QString::fromUtf8(name); }

// The error import gives `file`, or a failure when it imports.
QString importError(const QString& file)
{
    const auto g = importOnnx(file.toStdString());
    return g ? QString() : QString::fromStdString(g.error().message);
}

// `memplan ARGS` must fail with exit code 1 and one line on stderr holding every one of `parts`.
void expectCliRefusal(const QStringList& arguments, const QStringList& parts)
{
    const auto r = memplan(arguments);
    QVERIFY2(r.exitCode == 1, qPrintable(arguments.join(' ') + " exited " + QString::number(r.exitCode) + ": " + r.err));
    const auto lines = r.err.trimmed().split('\n');
    QVERIFY2(lines.size() == 1, qPrintable("more than one line: " + r.err));
    for (const auto& part : parts)
        QVERIFY2(r.err.contains(part), qPrintable("'" + part + "' missing from: " + r.err));
    for (const char* library : { "stoll", "vector::", "basic_string", "std::" })
        QVERIFY2(!r.err.contains(QLatin1String(library)), qPrintable("a library message: " + r.err));
}

// A 1-D int64 tensor.
HostTensor int64s(std::vector<std::int64_t> values)
{
    HostTensor h;
    h.dtype = DType::Int64;
    h.shape = { std::int64_t(values.size()) };
    h.data.resize(values.size() * sizeof(std::int64_t));
    std::memcpy(h.data.data(), values.data(), h.data.size());
    return h;
}

// Runs model_gather_runtime_index (Gather axis 0 of X [3,2] by I [2]) with X = 0..5 and I = `indices`;
// `real` says whether the Gather kernel ran, `y` its output; `error` the run's error, empty when it ran.
void runGather(std::vector<std::int64_t> indices, bool& real, std::vector<float>& y, std::string& error)
{
    error.clear();
    const auto path = hostile("model_gather_runtime_index.onnx").toStdString();
    auto g = importOnnx(path);
    QVERIFY2(g, g ? "" : g.error().message.c_str());
    auto data = loadTensorData(path, *g);
    QVERIFY2(data, data ? "" : data.error().message.c_str());
    auto w = workloadFromGraph(*g, path, {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    RunOptions options;
    options.modelData = std::make_shared<const ModelData>(std::move(*data));
    HostTensor x;
    x.dtype = DType::Float32;
    x.shape = { 3, 2 };
    const float values[] = { 0, 1, 2, 3, 4, 5 };
    x.data.resize(sizeof values);
    std::memcpy(x.data.data(), values, sizeof values);
    options.inputs["X"] = std::move(x);
    options.inputs["I"] = int64s(std::move(indices));
    const auto plan = noReusePlan(w->problem);
    QVERIFY(validatePlan(w->problem, plan).ok());
    auto run = runOnCpu(*w->graph, w->schedule, w->problem, plan, w->bufferTensor, options);
    if (!run) {
        error = run.error().message;
        return;
    }
    QCOMPARE(run->ops.size(), std::size_t(1));
    real = run->ops[0].real;
    QCOMPARE(run->outputs.size(), std::size_t(1));
    y.resize(run->outputs[0].data.size() / sizeof(float));
    std::memcpy(y.data(), run->outputs[0].data.data(), y.size() * sizeof(float));
}

// A view of `values` (int64 or float32 by T) with `shape`.
template <class T>
exec::TensorView view(std::vector<T>& values, exec::Shape shape)
{
    return { std::is_same_v<T, float> ? DType::Float32 : DType::Int64, std::move(shape), reinterpret_cast<std::byte*>(values.data()),
        std::int64_t(values.size()) };
}

} // namespace

class TestInvalidModels : public QObject {
    Q_OBJECT

private slots:
    // A graph input without a type crashed ONNX's data propagation for Shape (SIGSEGV).
    void untypedInput_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("Shape->Slice->Resize") << hostile("model_untyped_input_resize.onnx");
        QTest::newRow("Shape->Gather->ConstantOfShape") << hostile("model_untyped_input_gather.onnx");
    }
    void untypedInput()
    {
        QFETCH(QString, file);
        const auto error = importError(file);
        QVERIFY2(error.contains(file) && error.contains("input 'X' has no type"), qPrintable(error));
        for (const char* command : { "plan", "compare", "run" })
            expectCliRefusal({ command, file }, { file, "input 'X' has no type" });
    }

    // External data: confined to the model's folder, its keys parsed by MemPlan, its range checked.
    void externalDataRefused_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("why");
        QTest::newRow("traversal") << hostile("model_extdata_traversal.onnx") << "outside the model's folder";
        QTest::newRow("absolute") << hostile("model_extdata_absolute.onnx") << "an absolute path";
        QTest::newRow("past end") << hostile("model_extdata_past_end.onnx") << "reach past the end of the file (16 bytes)";
        QTest::newRow("short") << hostile("model_extdata_short.onnx") << "length 8 is not the 16 bytes the tensor's dims and element type need";
        QTest::newRow("offset not a number") << hostile("model_extdata_bad_offset.onnx") << "offset '12abc' is not a byte count";
        QTest::newRow("length overflows") << hostile("model_extdata_bad_length.onnx") << "length '99999999999999999999' is not a byte count";
        QTest::newRow("negative length") << hostile("model_extdata_negative_length.onnx") << "length '-7' is not a byte count";
    }
    void externalDataRefused()
    {
        QFETCH(QString, file);
        QFETCH(QString, why);
        const auto error = importError(file);
        QVERIFY2(error.contains(file) && error.contains("tensor 'bias'") && error.contains(why), qPrintable(error));
        // The weight loader reads through the same check, with the graph of a valid model.
        const auto g = importOnnx(hostile("model_extdata_ok.onnx").toStdString());
        QVERIFY(g);
        const auto data = loadTensorData(file.toStdString(), *g);
        QVERIFY(!data);
        QVERIFY2(QString::fromStdString(data.error().message).contains(why), data.error().message.c_str());
        for (const char* command : { "plan", "run" })
            expectCliRefusal({ command, file }, { "tensor 'bias'", why });
    }

    void externalDataInsideFolderLoads()
    {
        const auto file = hostile("model_extdata_ok.onnx");
        const auto g = importOnnx(file.toStdString());
        QVERIFY2(g, g ? "" : g.error().message.c_str());
        const auto data = loadTensorData(file.toStdString(), *g);
        QVERIFY2(data, data ? "" : data.error().message.c_str());
        const auto bias = g->findTensor("bias");
        QVERIFY(bias && data->weights.count(*bias));
        const auto& h = data->weights.at(*bias);
        QCOMPARE(h.data.size(), std::size_t(16));
        float values[4];
        std::memcpy(values, h.data.data(), sizeof values);
        QCOMPARE(values[3], 4.0f);
        const auto r = memplan({ "run", file });
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    }

    // A model that travels without its external data plans from the dims, and says the file is
    // missing; a run refuses it, naming the tensor and the file.
    void externalDataMissingPlansWithNote()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const auto model = dir.filePath("model.onnx");
        QVERIFY(QFile::copy(hostile("model_extdata_ok.onnx"), model));
        const auto plan = memplan({ "plan", model });
        QVERIFY2(plan.exitCode == 0, qPrintable(plan.err));
        QVERIFY2(plan.out.contains("1 initializer keeps 16 B of data in 'model_extdata_ok.bin', which is not in the model's folder"),
                 qPrintable(plan.out));
        expectCliRefusal({ "run", model }, { "tensor 'bias'", "model_extdata_ok.bin" });
    }

    // A symbolic link in the model's folder that leads out of it is followed, and refused.
    void externalDataSymlinkOutRefused()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const auto model = dir.filePath("model.onnx");
        QVERIFY(QFile::copy(hostile("model_extdata_ok.onnx"), model));
        std::filesystem::create_symlink(hostile("model_extdata_ok.bin").toStdString(), dir.filePath("model_extdata_ok.bin").toStdString());
        const auto error = importError(model);
        QVERIFY2(error.contains("tensor 'bias'") && error.contains("'model_extdata_ok.bin'") && error.contains("outside the model's folder"),
                 qPrintable(error));
        // The same data as a copy inside the folder is fine.
        QVERIFY(QFile::remove(dir.filePath("model_extdata_ok.bin")));
        QVERIFY(QFile::copy(hostile("model_extdata_ok.bin"), dir.filePath("model_extdata_ok.bin")));
        QVERIFY2(importError(model).isEmpty(), qPrintable(importError(model)));
    }

    // Attributes and constant inputs the ONNX spec forbids: refused, naming the op and what is wrong.
    void invalidOps_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("parts");
        const auto row = [](const char* name, QStringList parts) { QTest::newRow(name) << hostile(name) << parts; };
        row("model_conv_group0.onnx", { "op 'conv1' (Conv)", "attribute group is 0" });
        row("model_conv_kernel0.onnx", { "op 'conv1' (Conv)", "attribute kernel_shape [0,0]" });
        row("model_conv_group3.onnx", { "op 'conv1' (Conv)", "attribute group 3 does not divide the 4 channels of input 'X'" });
        row("model_convtranspose_negstride.onnx", { "op 'up1' (ConvTranspose)", "attribute strides [-2,-2]" });
        row("model_maxpool_stride0.onnx", { "op 'maxpool_stride0' (MaxPool)", "attribute strides [0,0]" });
        row("model_averagepool_kernel0.onnx", { "op 'averagepool_kernel0' (AveragePool)", "attribute kernel_shape [0,2]" });
        row("model_softmax_axis99.onnx", { "op 'softmax_axis99' (Softmax)", "attribute axis 99 is outside [-2, 1]" });
        row("model_logsoftmax_axis99.onnx", { "op 'logsoftmax_axis99' (LogSoftmax)", "attribute axis 99 is outside [-2, 1]" });
        row("model_hardmax_axis99.onnx", { "op 'hardmax_axis99' (Hardmax)", "attribute axis -3 is outside [-2, 1]" });
        row("model_concat_axis5.onnx", { "op 'cat' (Concat)", "attribute axis 5 is outside [-2, 1]" });
        row("model_flatten_axis9.onnx", { "op 'flatten_axis9' (Flatten)", "attribute axis 9 is outside [-3, 2]" });
        row("model_argmax_axis4.onnx", { "op 'argmax_axis4' (ArgMax)", "attribute axis 4 is outside [-2, 1]" });
        row("model_reducesum_axis7.onnx", { "op 'reducesum_axis7' (ReduceSum)", "axes [7] name axis 7" });
        row("model_transpose_perm.onnx", { "op 'transpose_perm' (Transpose)", "perm [0,2] is not an order" });
        row("model_gather_axis3.onnx", { "op 'gather_axis3' (Gather)", "attribute axis 3 is outside [-2, 1]" });
        row("model_gather_index_oob.onnx", { "op 'gather_index_oob' (Gather)", "index 7 of indices 'idx' [2] is outside [-5, 4]" });
        row("model_pad_negative.onnx", { "op 'pad_negative' (Pad)", "pads [0,-3,0,-3] make dimension 1 of input 'X' [2,5] -1" });
        row("model_range_delta0.onnx", { "op 'range' (Range)", "delta 'delta' [] is 0" });
        row("model_range_delta0_float.onnx", { "op 'range' (Range)", "delta 'delta' [] is 0" });
        row("model_split_sizes.onnx", { "op 'split_sizes' (Split)", "split [2,2] sums to 4, but dimension 1 of input 'X' [2,5] is 5" });
        row("model_topk_k_large.onnx", { "op 'topk' (TopK)", "k 1099511627776 is outside [0, 5]" });
    }
    void invalidOps()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, parts);
        const auto error = importError(file);
        QVERIFY2(error.startsWith(file + ": "), qPrintable(error));
        for (const auto& part : parts)
            QVERIFY2(error.contains(part), qPrintable("'" + part + "' missing from: " + error));
        for (const char* command : { "plan", "run" })
            expectCliRefusal({ command, file }, parts);
    }

    // Run-time indices out of range, computed from the given inputs: the run fails naming the op,
    // the index, the indices and the axis, rather than read outside X, wrap into a wrong answer or
    // run synthetic and exit 0; in range, negative ones included, it is exact.
    void gatherRuntimeIndices()
    {
        bool real = false;
        std::vector<float> y;
        std::string error;
        runGather({ 2, -3 }, real, y, error);
        QVERIFY2(error.empty(), error.c_str());
        QVERIFY(real);
        QCOMPARE(y, (std::vector<float> { 4, 5, 0, 1 }));
        runGather({ 0, 3 }, real, y, error);
        QCOMPARE(QString::fromStdString(error),
                 QString("op 'gather' (Gather): index 3 at element 1 of 'I' is outside [-3, 2], the size of axis 0 of 'X' "
                         "(computed from the given inputs; ONNX makes such an index an error)"));
        runGather({ -4, 1 }, real, y, error);
        QVERIFY2(QString::fromStdString(error).contains("index -4 at element 0 of 'I' is outside [-3, 2]"), error.c_str());
        // The same indices given by file fail `memplan run` (import already knows them: a small integer
        // input's values are folded); made up (random), they only run synthetic, and the report says why.
        const auto model = hostile("model_gather_runtime_index.onnx");
        expectCliRefusal({ "run", model, "--input", "I=" + hostile("model_gather_runtime_index_I_oob.pb") },
                         { "op 'gather' (Gather): index 3 of indices 'I'", "is outside [-3, 2]" });
        const auto made = memplan({ "run", model, "--repeat", "1" });
        QVERIFY2(made.exitCode == 0, qPrintable(made.err));
        QVERIFY2(made.out.contains("(from values the run made up"), qPrintable(made.out));
    }

    // The other index kernels refuse out-of-range indices the same way (false, nothing written, a fault that says why).
    void indexKernelsRefuseOutOfRange_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<std::int64_t>("index");
        QTest::addColumn<bool>("accepted");
        for (const char* op : { "GatherElements", "GatherND", "ScatterElements", "ScatterND" }) {
            QTest::addRow("%s in range", op) << QString(op) << std::int64_t(-3) << true;
            QTest::addRow("%s past the end", op) << QString(op) << std::int64_t(3) << false;
            QTest::addRow("%s before the start", op) << QString(op) << std::int64_t(-4) << false;
        }
    }
    void indexKernelsRefuseOutOfRange()
    {
        QFETCH(QString, op);
        QFETCH(std::int64_t, index);
        QFETCH(bool, accepted);
        const bool scatter = op.startsWith("Scatter");
        std::vector<float> x { 10, 20, 30 }, updates { 7 }, y(scatter ? 3 : 1, -1.0f);
        std::vector<std::int64_t> indices { index };
        Op node;
        node.type = op.toStdString();
        exec::KernelCall call;
        call.op = &node;
        call.in = { view(x, { 3 }), view(indices, { 1 }) };
        if (op == "GatherND" || op == "ScatterND")
            call.in[1].shape = { 1, 1 };
        if (scatter)
            call.in.push_back(view(updates, { 1 }));
        call.out = { view(y, { std::int64_t(y.size()) }) };
        const auto kernel = exec::findKernel(node.type);
        QVERIFY(kernel);
        exec::takeDataFault();
        QCOMPARE(kernel(call), accepted);
        const auto fault = exec::takeDataFault(); // what the executor turns into the run's error
        QCOMPARE(QString::fromStdString(fault.why),
                 accepted ? QString() : QString("index %1 at element 0 is outside [-3, 2]").arg(index));
        QCOMPARE(fault.indicesSlot, accepted ? -1 : 1);
        QCOMPARE(fault.axis, accepted ? -1 : 0);
        if (!accepted)
            QVERIFY(std::all_of(y.begin(), y.end(), [](float v) { return v == -1.0f; })); // nothing written
        else if (scatter)
            QCOMPARE(y, (std::vector<float> { 7, 20, 30 }));
        else
            QCOMPARE(y[0], 10.0f);
    }

    // JSON graphs: declared shapes are checked against the ops (they used to run on the synthetic kernel).
    void jsonGraphShapes_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("parts");
        const auto row = [](const char* name, QStringList parts) { QTest::newRow(name) << hostile(name) << parts; };
        row("graph_matmul_bad_weight.json", { ":10: ops[0]: op 'mm' (MatMul)", "'x' [2,3] and 'w' [1] differ in the inner dimension" });
        row("graph_conv_declared_output.json",
            { ":10: ops[0]: op 'conv' (Conv)", "output 'y' is declared [1,4,8,8], but the op computes [1,4,6,6]" });
        row("graph_add_no_broadcast.json", { "op 'add' (Add)", "'a' [2,3] and 'b' [4] do not broadcast" });
        row("graph_softmax_axis.json", { "op 'sm' (Softmax)", "attribute axis 99 is outside [-2, 1]" });
    }
    void jsonGraphShapes()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, parts);
        const auto g = importJsonGraph(file.toStdString());
        QVERIFY(!g);
        const auto error = QString::fromStdString(g.error().message);
        QVERIFY2(error.startsWith(file + ":"), qPrintable(error));
        for (const auto& part : parts)
            QVERIFY2(error.contains(part), qPrintable("'" + part + "' missing from: " + error));
        for (const char* command : { "plan", "run" })
            expectCliRefusal({ command, file }, parts);
    }

    // The same kind of graph with consistent shapes still loads, plans and runs its kernels for real.
    void jsonGraphConsistentRuns()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QFile f(hostile("graph_conv_declared_output.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        auto text = QString::fromUtf8(f.readAll());
        text.replace("\"shape\": [1, 4, 8, 8]", "\"shape\": [1, 4, 6, 6]");
        const auto fixed = dir.filePath("conv.json");
        QFile out(fixed);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(text.toUtf8());
        out.close();
        const auto g = importJsonGraph(fixed.toStdString());
        QVERIFY2(g, g ? "" : g.error().message.c_str());
        const auto r = memplan({ "run", fixed });
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(", 0 synthetic"), qPrintable(r.out));
    }
};

QTEST_GUILESS_MAIN(TestInvalidModels)
#include "tst_invalidmodels.moc"
