// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// ONNX optionals on the CPU executor: an optional lives in its element's planned room, and whether it
// holds anything travels beside it. The optional kernels against ONNX's rules, optionals holding
// nothing given as files, returned by an If, carried by a Loop, refused by OptionalGetElement and
// written back as OptionalProto files, on the optional models of Debian's libonnx-testdata.
#include "clirun.h"
#include "exec/executor.h"
#include "exec/opcall.h"
#include "exec/runshape.h"
#include "exec/tensordata.h"
#include "io/workload.h"
#include "onnx/onnximport.h"
#include "planners/planner.h"
#include "planners/validate.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

namespace fs = std::filesystem;
using core::exec::Shape;
using core::exec::TensorView;

namespace {

const fs::path kNode = "/usr/share/libonnx-testdata/data/node";

TensorView floatView(std::vector<float>& data, Shape shape)
{
    TensorView v;
    v.dtype = core::DType::Float32;
    v.count = core::elementCount(shape);
    v.shape = std::move(shape);
    v.data = reinterpret_cast<std::byte*>(data.data());
    return v;
}

struct OptionalCall {
    core::Op op;
    core::exec::KernelCall call;
    Shape shape;
    std::vector<Shape> items;
    bool none = false;
    std::string why;
    bool run()
    {
        call.op = &op;
        return core::exec::runOptionalOp(call, shape, items, none, why);
    }
};

// A model of libonnx-testdata run with `files` (input name -> file) on a no-reuse plan and on each
// planner's plan (validated), which must give the same outputs; returns the no-reuse run.
core::Expected<core::Measurement> runEveryPlan(const fs::path& model, const std::vector<std::pair<std::string, fs::path>>& files)
{
    core::LoadOptions load;
    auto given = core::readGivenInputs(model, files, load.bindings);
    if (!given)
        return given.error();
    auto w = core::loadWorkload(model.string(), load);
    if (!w)
        return w.error();
    auto data = core::loadTensorData(model, *w->graph);
    if (!data)
        return data.error();
    core::RunOptions options;
    options.inputs = std::move(*given);
    options.modelData = std::make_shared<const core::ModelData>(std::move(*data));
    std::optional<core::Measurement> reference;
    for (const auto& name : core::plannerNames()) {
        auto plan = core::runPlanner(*core::plannerByName(name), w->problem);
        if (!plan)
            return plan.error();
        if (const auto valid = core::validatePlan(w->problem, *plan); !valid.ok())
            return core::makeError(core::ErrorCode::InvalidArgument, name + ": invalid plan");
        auto check = core::checkPlanByRunning(*w->graph, w->schedule, w->problem, *plan, w->bufferTensor, options);
        if (!check)
            return check.error();
        if (!check->outputsMatch)
            return core::makeError(core::ErrorCode::InvalidArgument, name + ": " + check->mismatch);
        if (!reference)
            reference = std::move(check->reference);
    }
    return std::move(*reference);
}

// An OptionalProto file holding nothing, named `name`.
fs::path writeNone(const QTemporaryDir& dir, const std::string& name, core::DType dtype, bool sequence)
{
    core::HostTensor none;
    none.optional = none.none = true;
    none.dtype = dtype;
    none.sequence = sequence;
    const fs::path file = dir.filePath(QString::fromStdString(name + ".pb")).toStdString();
    if (!core::writeTensorFile(file, name, none))
        return {};
    return file;
}

} // namespace

class TestOptionals : public QObject {
    Q_OBJECT

private slots:
    // Optional wraps its input or nothing; OptionalHasElement tells which; OptionalGetElement
    // unwraps, refusing nothing; an Identity passes nothing on; a value larger than the room is refused.
    void optionalKernelsFollowOnnx()
    {
        std::vector<float> x { 1, 2, 3 };
        std::vector<float> room(4, -7.0f);
        {
            OptionalCall c;
            c.op.type = "Optional";
            c.call.in = { floatView(x, { 3 }) };
            c.call.out = { floatView(room, { 4 }) };
            QVERIFY(c.run());
            QVERIFY(!c.none);
            QCOMPARE(c.shape, (Shape { 3 }));
            QCOMPARE(room, (std::vector<float> { 1, 2, 3, -7 }));
        }
        {
            OptionalCall c;
            c.op.type = "Optional"; // no input: holds nothing
            c.call.out = { floatView(room, { 4 }) };
            std::fill(room.begin(), room.end(), -7.0f);
            QVERIFY(c.run());
            QVERIFY(c.none);
            QCOMPARE(c.shape, (Shape { 0 }));
            QCOMPARE(room, std::vector<float>(4, -7.0f));
        }
        std::vector<std::uint8_t> flag { 7 };
        TensorView b;
        b.dtype = core::DType::Bool;
        b.count = 1;
        b.data = reinterpret_cast<std::byte*>(flag.data());
        for (const bool holds : { true, false }) {
            OptionalCall c;
            c.op.type = "OptionalHasElement";
            c.call.in = { holds ? floatView(x, { 3 }) : TensorView {} };
            c.call.out = { b };
            QVERIFY(c.run());
            QCOMPARE(flag[0], std::uint8_t(holds ? 1 : 0));
            QCOMPARE(c.shape, Shape {});
        }
        {
            OptionalCall c;
            c.op.type = "OptionalGetElement";
            c.call.in = { TensorView {} };
            c.call.out = { floatView(room, { 4 }) };
            QVERIFY(!c.run());
            QCOMPARE(c.why, std::string("its input holds nothing to get"));
            c.call.in = { floatView(x, { 3 }) };
            c.why.clear();
            QVERIFY(c.run());
            QCOMPARE(c.shape, (Shape { 3 }));
            c.call.out = { floatView(room, { 2 }) }; // too small a room
            QVERIFY(!c.run());
            QVERIFY(c.why.empty());
        }
        {
            OptionalCall c;
            c.op.type = "Identity";
            c.call.in = { TensorView {} };
            c.call.out = { floatView(room, { 4 }) };
            QVERIFY(c.run());
            QVERIFY(c.none);
        }
        QVERIFY(core::exec::isOptionalOp("Identity", true));
        QVERIFY(!core::exec::isOptionalOp("Identity", false));
    }

    // test_if_opt with its condition true: the then-branch's Optional() holds nothing, so the
    // graph's output does, in every planner's arena; it is saved as an OptionalProto without a
    // value, which reads back as holding nothing. With the stored condition (false) it holds the list.
    void ifReturnsAnOptionalHoldingNothing()
    {
        const auto dir = kNode / "test_if_opt";
        if (!fs::exists(dir))
            QSKIP("libonnx-testdata is not installed");
        QTemporaryDir tmp;
        core::HostTensor yes;
        yes.dtype = core::DType::Bool;
        yes.data = { std::byte { 1 } };
        const fs::path condFile = tmp.filePath(QStringLiteral("cond.pb")).toStdString();
        QVERIFY(core::writeTensorFile(condFile, "cond", yes));
        const auto run = runEveryPlan(dir / "model.onnx", { { "cond", condFile } });
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        QCOMPARE(run->opsSynthetic, 0);
        QCOMPARE(run->outputs.size(), std::size_t(1));
        QVERIFY(run->outputs[0].optional);
        QVERIFY(run->outputs[0].none);
        QVERIFY(run->outputs[0].data.empty());

        const fs::path saved = tmp.filePath(QStringLiteral("out.pb")).toStdString();
        QVERIFY(core::writeTensorFile(saved, "sequence", run->outputs[0]));
        const auto back = core::readOptionalFile(saved);
        QVERIFY2(back, back ? "" : back.error().message.c_str());
        QVERIFY(back->second.optional && back->second.none);

        const auto stored = runEveryPlan(dir / "model.onnx", { { "cond", dir / "test_data_set_0" / "input_0.pb" } });
        QVERIFY2(stored, stored ? "" : stored.error().message.c_str());
        QVERIFY(!stored->outputs[0].none);
        const auto expected = core::readOptionalFile(dir / "test_data_set_0" / "output_0.pb");
        QVERIFY(expected);
        QCOMPARE(stored->outputs[0].items, expected->second.items);
        QVERIFY(stored->outputs[0].data == expected->second.data);

        // A run holding nothing and one holding a value differ, and the comparison says where.
        const auto graph = core::importOnnx(dir / "model.onnx", {});
        QVERIFY(graph);
        const auto why = core::compareOutputs(*graph, stored->outputs, run->outputs);
        QVERIFY2(why == "output 'sequence': this run's holds nothing, the other's a value", why.c_str());
    }

    // test_loop16_seq_none given an optional holding nothing: the body's If starts the list itself
    // (the stored run passes a list holding [0], which gives the same), so the Loop carries an
    // optional into a list and its output equals the stored one.
    void loopCarriesAnOptionalHoldingNothing()
    {
        const auto dir = kNode / "test_loop16_seq_none";
        if (!fs::exists(dir))
            QSKIP("libonnx-testdata is not installed");
        QTemporaryDir tmp;
        const auto set = dir / "test_data_set_0";
        const auto none = writeNone(tmp, "opt_seq", core::DType::Float32, true);
        QVERIFY(!none.empty());
        const auto run = runEveryPlan(dir / "model.onnx", { { "trip_count", set / "input_0.pb" }, { "cond", set / "input_1.pb" }, { "opt_seq", none } });
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        QCOMPARE(run->opsSynthetic, 0);
        const auto expected = core::readValueFile(set / "output_0.pb", run->outputs[0]);
        QVERIFY2(expected, expected ? "" : expected.error().message.c_str());
        QCOMPARE(run->outputs[0].items, expected->second.items);
        QVERIFY(run->outputs[0].data == expected->second.data);
    }

    // OptionalGetElement of an optional holding nothing is an error by ONNX's rules: the op runs
    // synthetic and its refusal says why. A file of the other kind of element is refused by name.
    void nothingToGetIsRefused()
    {
        const auto dir = kNode / "test_optional_get_element";
        if (!fs::exists(dir))
            QSKIP("libonnx-testdata is not installed");
        QTemporaryDir tmp;
        const auto none = writeNone(tmp, "optional_input", core::DType::Float32, false);
        const auto run = runEveryPlan(dir / "model.onnx", { { "optional_input", none } });
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        QCOMPARE(run->opsSynthetic, 1);
        QCOMPARE(run->ops.front().refusal, std::string("its input holds nothing to get"));

        // An optional tensor given for an optional list.
        const auto listModel = kNode / "test_optional_get_element_sequence" / "model.onnx";
        core::ShapeBindings bindings;
        const auto wrong = core::readGivenInputs(listModel, { { "optional_input", dir / "test_data_set_0" / "input_0.pb" } }, bindings);
        QVERIFY(!wrong);
        QVERIFY2(wrong.error().message.find("input 'optional_input' is an optional sequence, but ") == 0
                && wrong.error().message.find("holds an optional tensor") != std::string::npos,
            wrong.error().message.c_str());

        // The CLI names the optional in its tensor types and saves what it computed as OptionalProto.
        const auto cli = memplan({ QStringLiteral("run"), QString::fromStdString((dir / "model.onnx").string()), QStringLiteral("--repeat"),
            QStringLiteral("1"), QStringLiteral("--input"),
            QStringLiteral("optional_input=%1").arg(QString::fromStdString((dir / "test_data_set_0" / "input_0.pb").string())),
            QStringLiteral("--save-outputs"), tmp.path() });
        QVERIFY2(cli.exitCode == 0, qPrintable(cli.err));
        QVERIFY2(cli.out.contains(QStringLiteral("1 real, 0 synthetic")), qPrintable(cli.out));
        const auto saved = core::readTensorFile(tmp.filePath(QStringLiteral("output_0.pb")).toStdString());
        const auto stored = core::readTensorFile(dir / "test_data_set_0" / "output_0.pb");
        QVERIFY(saved && stored);
        QVERIFY(saved->second.data == stored->second.data);
        const auto graph = core::importOnnx(dir / "model.onnx", {});
        QVERIFY(graph);
        QCOMPARE(core::tensorTypeText(graph->tensors[std::size_t(graph->inputs[0])]), std::string("optional float32 4"));
        QVERIFY(graph->tensors[std::size_t(graph->inputs[0])].estimated);
    }
};

QTEST_GUILESS_MAIN(TestOptionals)
#include "tst_optionals.moc"
