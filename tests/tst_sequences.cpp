// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// ONNX sequences on the CPU executor: a sequence lives in its planned room as its elements packed in
// order, their shapes beside it. The sequence kernels against ONNX's rules, a list built in a Loop
// (tricky/list_loop) sized at import and run for real in every planner's arena, a swapped sequence,
// sequence inputs given as files (their length and element shapes sizing a loop over them), and the
// sequence models of Debian's libonnx-testdata.
#include "boundedgraphs.h"
#include "clirun.h"
#include "exec/runshape.h"
#include "exec/tolerance.h"
#include "graphbuilder.h"
#include "planners/validate.h"
#include "strategies/strategy.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <type_traits>

namespace fs = std::filesystem;
using core::exec::Shape;
using core::exec::TensorView;

namespace {

const fs::path kTestData = "/usr/share/libonnx-testdata/data";

// A view of `data` (float32 or int64) with `shape`.
template <typename T>
TensorView viewOf(std::vector<T>& data, Shape shape)
{
    TensorView v;
    v.dtype = std::is_same_v<T, float> ? core::DType::Float32 : core::DType::Int64;
    v.count = core::elementCount(shape);
    v.shape = std::move(shape);
    v.data = reinterpret_cast<std::byte*>(data.data());
    return v;
}

TensorView floatView(std::vector<float>& data, Shape shape) { return viewOf(data, std::move(shape)); }
TensorView int64View(std::vector<std::int64_t>& data, Shape shape) { return viewOf(data, std::move(shape)); }

TensorView sequenceView(std::vector<float>& data, std::vector<Shape> items)
{
    TensorView v = floatView(data, { std::int64_t(data.size()) });
    std::int64_t total = 0;
    for (const auto& s : items)
        total += core::elementCount(s);
    v.shape = { total };
    v.count = total;
    v.sequence = true;
    v.items = std::move(items);
    return v;
}

struct SequenceCall {
    core::Op op;
    core::exec::KernelCall call;
    std::vector<Shape> shapes;
    std::vector<std::vector<Shape>> items;
    bool run()
    {
        call.op = &op;
        const auto kernel = core::exec::findSequenceKernel(op.type, true);
        return kernel && kernel(call, shapes, items);
    }
};

} // namespace

class TestSequences : public QObject {
    Q_OBJECT

private slots:
    // Insert, erase and read at negative positions; split by a scalar (a shorter last piece) and
    // with keepdims 0; stack on a new axis; refusals leave the room untouched.
    void sequenceKernelsFollowOnnx()
    {
        std::vector<float> seqData { 1, 2, 3, 4, 5 }; // items [2] = {1,2}, [3] = {3,4,5}
        std::vector<float> t { 9 };
        std::vector<std::int64_t> minusOne { -1 };
        std::vector<float> room(16, -7.0f);
        {
            SequenceCall c;
            c.op.type = "SequenceInsert";
            c.call.in = { sequenceView(seqData, { { 2 }, { 3 } }), floatView(t, { 1 }), int64View(minusOne, {}) };
            c.call.out = { sequenceView(room, {}) };
            c.call.out[0].count = std::int64_t(room.size());
            QVERIFY(c.run());
            QCOMPARE(c.items[0], (std::vector<Shape> { { 2 }, { 1 }, { 3 } })); // -1: before the last element
            QCOMPARE(std::vector<float>(room.begin(), room.begin() + 6), (std::vector<float> { 1, 2, 9, 3, 4, 5 }));
            QCOMPARE(c.shapes[0], (Shape { 6 }));
        }
        {
            SequenceCall c;
            c.op.type = "SequenceErase";
            c.call.in = { sequenceView(seqData, { { 2 }, { 3 } }) };
            c.call.out = { sequenceView(room, {}) };
            c.call.out[0].count = std::int64_t(room.size());
            QVERIFY(c.run());
            QCOMPARE(c.items[0], (std::vector<Shape> { { 2 } })); // no position: the last
        }
        {
            SequenceCall c;
            c.op.type = "SequenceAt";
            c.call.in = { sequenceView(seqData, { { 2 }, { 3 } }), int64View(minusOne, {}) };
            c.call.out = { floatView(room, { std::int64_t(room.size()) }) };
            QVERIFY(c.run());
            QCOMPARE(c.shapes[0], (Shape { 3 }));
            QCOMPARE(std::vector<float>(room.begin(), room.begin() + 3), (std::vector<float> { 3, 4, 5 }));
            std::vector<std::int64_t> two { 2 };
            c.call.in[1] = int64View(two, {});
            std::fill(room.begin(), room.end(), -7.0f);
            QVERIFY(!c.run()); // past the end
            QCOMPARE(room, std::vector<float>(16, -7.0f));
        }
        std::vector<float> x(10);
        for (std::size_t i = 0; i < x.size(); ++i)
            x[i] = float(i); // [5, 2]
        {
            SequenceCall c;
            c.op.type = "SplitToSequence";
            std::vector<std::int64_t> two { 2 };
            c.call.in = { floatView(x, { 5, 2 }), int64View(two, {}) };
            c.call.out = { sequenceView(room, {}) };
            c.call.out[0].count = std::int64_t(room.size());
            QVERIFY(c.run());
            QCOMPARE(c.items[0], (std::vector<Shape> { { 2, 2 }, { 2, 2 }, { 1, 2 } }));
            QCOMPARE(std::vector<float>(room.begin(), room.begin() + 10), x);
        }
        {
            SequenceCall c;
            c.op.type = "SplitToSequence";
            c.op.attributes["axis"].ints = { 1 };
            c.op.attributes["keepdims"].ints = { 0 };
            c.call.in = { floatView(x, { 5, 2 }) };
            c.call.out = { sequenceView(room, {}) };
            c.call.out[0].count = std::int64_t(room.size());
            QVERIFY(c.run());
            QCOMPARE(c.items[0], (std::vector<Shape> { { 5 }, { 5 } }));
            QCOMPARE(std::vector<float>(room.begin(), room.begin() + 10), (std::vector<float> { 0, 2, 4, 6, 8, 1, 3, 5, 7, 9 }));
        }
        {
            // Two [2, 3] elements stacked on a new axis 1: [2, 2, 3], rows interleaved.
            std::vector<float> pair { 0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15 };
            SequenceCall c;
            c.op.type = "ConcatFromSequence";
            c.op.attributes["axis"].ints = { 1 };
            c.op.attributes["new_axis"].ints = { 1 };
            c.call.in = { sequenceView(pair, { { 2, 3 }, { 2, 3 } }) };
            c.call.out = { floatView(room, { std::int64_t(room.size()) }) };
            QVERIFY(c.run());
            QCOMPARE(c.shapes[0], (Shape { 2, 2, 3 }));
            QCOMPARE(std::vector<float>(room.begin(), room.begin() + 12),
                (std::vector<float> { 0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15 }));
        }
        {
            // More than the room holds: refused before anything is written.
            SequenceCall c;
            c.op.type = "SequenceConstruct";
            std::vector<float> small(4, -7.0f);
            c.call.in = { floatView(x, { 5, 2 }), floatView(t, { 1 }) };
            c.call.out = { sequenceView(small, {}) };
            c.call.out[0].count = 4;
            QVERIFY(!c.run());
            QCOMPARE(small, std::vector<float>(4, -7.0f));
        }
    }

    // tricky/list_loop: the carried list is sized as 4 iterations of one 32-byte row; every op runs
    // for real; the stacked rows are relu(X · W), the list holds them as four [8] elements, and every
    // planner's arena gives the same bits. The list survives a SequenceProto round trip.
    void listBuiltInALoopRunsForReal()
    {
        const auto file = boundedgraphs::fixture("list_loop");
        if (!fs::exists(file))
            QSKIP("tests/models/tricky/ fixtures are missing: run scripts/make_models.sh to make the test models");
        const auto w = core::loadWorkload(file, {});
        QVERIFY2(w, w ? "" : w.error().message.c_str());
        const auto& g = *w->graph;
        const auto list = g.findTensor("outputs");
        QVERIFY(list && g.tensors[std::size_t(*list)].sequence && g.tensors[std::size_t(*list)].estimated);
        QCOMPARE(g.tensors[std::size_t(*list)].size, core::Bytes(4 * 8 * 4));
        QVERIFY(g.tensors[std::size_t(*list)].listExact); // four rows of [8], each known: not a bound
        QVERIFY(!g.tensors[std::size_t(*g.findTensor("X"))].sequence);

        auto options = boundedgraphs::withModelData(file, g);
        QVERIFY(options.modelData);
        std::vector<float> x(32);
        for (std::size_t i = 0; i < x.size(); ++i)
            x[i] = float(int(i % 7) - 3) * 0.5f;
        options.inputs["X"] = boundedgraphs::floats({ 4, 8 }, x);
        const auto run = core::runOnCpu(g, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        QCOMPARE(run->opsSynthetic, 0);
        QCOMPARE(run->opsReal, 5);

        const auto& weight = options.modelData->weights.at(*g.findTensor("W"));
        std::vector<float> wv(64);
        std::memcpy(wv.data(), weight.data.data(), weight.data.size());
        std::vector<float> expected(32);
        for (int r = 0; r < 4; ++r)
            for (int j = 0; j < 8; ++j) {
                float s = 0;
                for (int k = 0; k < 8; ++k)
                    s += x[std::size_t(r * 8 + k)] * wv[std::size_t(k * 8 + j)];
                expected[std::size_t(r * 8 + j)] = std::max(s, 0.0f);
            }
        const auto stacked = boundedgraphs::valuesOf<float>(run->outputs[0]);
        QCOMPARE(run->outputs[0].shape, (std::vector<std::int64_t> { 4, 8 }));
        for (std::size_t i = 0; i < expected.size(); ++i)
            QVERIFY2(std::fabs(stacked[i] - expected[i]) <= 1e-6f, qPrintable(QString::number(i)));
        QVERIFY(run->outputs[1].sequence);
        QCOMPARE(run->outputs[1].items, (std::vector<std::vector<std::int64_t>>(4, { 8 })));
        QCOMPARE(boundedgraphs::valuesOf<float>(run->outputs[1]), stacked);
        QCOMPARE(boundedgraphs::valuesOf<std::int64_t>(run->outputs[2]), (std::vector<std::int64_t> { 4 }));

        boundedgraphs::checkEveryPlanner(*w, options, run->outputs);

        const auto saved = fs::path(QDir::tempPath().toStdString()) / "memplan_list_loop_outputs.pb";
        QVERIFY(core::writeTensorFile(saved, "outputs", run->outputs[1]));
        const auto back = core::readSequenceFile(saved);
        QVERIFY2(back, back ? "" : back.error().message.c_str());
        QCOMPARE(back->first, std::string("outputs"));
        QCOMPARE(back->second.items, run->outputs[1].items);
        QVERIFY(back->second.data == run->outputs[1].data);
        QVERIFY(!core::readTensorFile(saved) || core::readTensorFile(saved)->second.data != run->outputs[1].data);
        fs::remove(saved);
    }

    // tricky/list_loop_long: 4000 iterations each appending a 1 KiB row of value i to a list. The
    // append grows the list in place (written as a new list per append the loop copied O(n^2) bytes
    // and was refused after 4 GiB at iteration 2895): every op real, the rows in order, the same bits
    // in every planner's arena.
    void longListLoopAppendsInPlace()
    {
        const auto file = boundedgraphs::fixture("list_loop_long");
        if (!fs::exists(file))
            QSKIP("tests/models/tricky/ fixtures are missing: run scripts/make_models.sh to make the test models");
        const auto w = core::loadWorkload(file, {});
        QVERIFY2(w, w ? "" : w.error().message.c_str());
        const auto& g = *w->graph;
        QCOMPARE(g.tensors[std::size_t(*g.findTensor("rows"))].size, core::Bytes(4000 * 256 * 4));
        const auto options = boundedgraphs::withModelData(file, g);
        const auto run = core::runOnCpu(g, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        QVERIFY2(run->opsSynthetic == 0, run->ops[1].refusal.c_str());
        QCOMPARE(run->outputs[0].shape, (std::vector<std::int64_t> { 4000, 256 }));
        const auto stacked = boundedgraphs::valuesOf<float>(run->outputs[0]);
        for (std::size_t r = 0; r < 4000; r += 333)
            QCOMPARE(stacked[r * 256 + 255], float(r));
        QCOMPARE(boundedgraphs::valuesOf<std::int64_t>(run->outputs[1]), (std::vector<std::int64_t> { 4000 }));
        boundedgraphs::checkEveryPlanner(*w, options, run->outputs);
    }

    // tricky/tensor_split_list: torch's tensor_split as MViT exports it, a list of a class token
    // [1, 1, 8] and the patch tokens [1, 4, 8] built by a Loop and SequenceInsert, with an insert
    // at the front and its erase, read by SequenceAt 1 and -2, joined by ConcatFromSequence, and an
    // If whose condition import computes from the token's shape. The list keeps each element's
    // shape, so every tensor gets its exact size (before: no size for what SequenceAt read, and the
    // If sized as the larger of its branches); every op runs for real, in every planner's arena.
    void listOfUnequalPiecesIsSizedExactly()
    {
        const auto file = boundedgraphs::fixture("tensor_split_list");
        if (!fs::exists(file))
            QSKIP("tests/models/tricky/ fixtures are missing: run scripts/make_models.sh to make the test models");
        const auto w = core::loadWorkload(file, {});
        QVERIFY2(w, w ? "" : w.error().message.c_str());
        const auto& g = *w->graph;
        auto tensor = [&](const char* name) -> const core::Tensor& { return g.tensors[std::size_t(*g.findTensor(name))]; };
        for (const auto& [name, shape] : std::vector<std::pair<const char*, Shape>> {
                 { "patches", { 1, 4, 8 } }, { "cls", { 1, 1, 8 } }, { "joined", { 1, 5, 8 } }, { "token", { 1, 8 } } }) {
            QVERIFY2(g.findTensor(name), name);
            QCOMPARE(tensor(name).shape, shape);
            QVERIFY2(!tensor(name).estimated, name);
        }
        QCOMPARE(tensor("parts").size, core::Bytes(5 * 8 * 4)); // what is left after the erase, exactly
        for (const char* list : { "head", "pieces", "with_x", "parts" })
            QVERIFY2(tensor(list).sequence && !core::sizeIsBound(tensor(list)), list); // views and reports show no bound
        // The If's condition is known at import (folded from the class token's shape): the If is its
        // then-branch, and the condition, which nothing reads then, leaves the graph.
        QCOMPARE(g.inlinedIfs.size(), std::size_t(1));
        QVERIFY(g.inlinedIfs[0].thenBranch);
        QVERIFY(!g.findTensor("one_token"));
        QVERIFY(std::none_of(g.ops.begin(), g.ops.end(), [](const core::Op& op) { return op.type == "If"; }));

        std::vector<float> x(40);
        for (std::size_t i = 0; i < x.size(); ++i)
            x[i] = float(int(i % 9) - 4) * 0.25f;
        auto options = boundedgraphs::withModelData(file, g);
        options.inputs["X"] = boundedgraphs::floats({ 1, 5, 8 }, x);
        const auto run = core::runOnCpu(g, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        QCOMPARE(run->opsSynthetic, 0);
        QCOMPARE(run->boundedTensors, 0);
        QCOMPARE(run->outputs[0].shape, (Shape { 1, 4, 8 }));
        QCOMPARE(run->outputs[1].shape, (Shape { 1, 8 }));
        QCOMPARE(run->outputs[2].shape, (Shape { 1, 5, 8 }));
        const auto patches = boundedgraphs::valuesOf<float>(run->outputs[0]);
        const auto token = boundedgraphs::valuesOf<float>(run->outputs[1]);
        for (std::size_t i = 0; i < 32; ++i)
            QCOMPARE(patches[i], std::max(x[8 + i], 0.0f));
        QCOMPARE(token, std::vector<float>(x.begin(), x.begin() + 8));
        QCOMPARE(boundedgraphs::valuesOf<float>(run->outputs[2]), x);
        boundedgraphs::checkEveryPlanner(*w, options, run->outputs);
    }

    // tests/models/scripted_rows.onnx (scripts/make_models.py): torch.jit.script of a loop appending
    // each row's Linear + ReLU to a list and stacking it; torch exports SequenceEmpty, a Loop of
    // SequenceInsert (trip count x.size(0), folded at import) and ConcatFromSequence. The list is
    // planned at its exact 6 rows, every op runs for real, the output is torch's within 1e-5, and
    // every planner's arena gives the same bits.
    void scriptedListMatchesTorch()
    {
        const std::string models = MEMPLAN_SOURCE_DIR "/tests/models/";
        const auto file = models + "scripted_rows.onnx";
        if (!fs::exists(file) || !fs::exists(models + "scripted_rows.output_0.pb"))
            QSKIP("tests/models/scripted_rows.onnx is missing: run scripts/make_models.sh to export the test models");
        const auto w = core::loadWorkload(file, {});
        QVERIFY2(w, w ? "" : w.error().message.c_str());
        const auto list = std::find_if(w->graph->tensors.begin(), w->graph->tensors.end(), [](const core::Tensor& t) { return t.sequence && t.size > 0; });
        QVERIFY(list != w->graph->tensors.end());
        QCOMPARE(list->size, core::Bytes(6 * 16 * 4));
        auto options = boundedgraphs::withModelData(file, *w->graph);
        const auto input = core::readTensorFile(models + "scripted_rows.input_0.pb");
        const auto expected = core::readTensorFile(models + "scripted_rows.output_0.pb");
        QVERIFY(input && expected);
        options.inputs["input"] = input->second;
        const auto run = core::runOnCpu(*w->graph, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        QCOMPARE(run->opsSynthetic, 0);
        const auto off = core::compareWithin(*w->graph, { expected->second }, run->outputs, 1e-5);
        QVERIFY2(off.empty(), off.c_str());
        boundedgraphs::checkEveryPlanner(*w, options, run->outputs);
    }

    // A sequence held across a chain of ops is swapped to the host and back: the copies keep its
    // element shapes, so the model computes the same bits as without the swap.
    void swappedSequenceKeepsItsElements()
    {
        using core::TensorKind;
        GraphBuilder b;
        const auto x = b.tensor("x", { 64, 256 }, TensorKind::Input);
        const auto seq = b.tensor("rows", { 64, 256 });
        auto& s = b.g.tensors[std::size_t(seq)];
        s.sequence = s.estimated = true;
        s.rankKnown = false;
        s.shape.clear();
        b.op("split", "SplitToSequence", { x }, { seq })->attributes["keepdims"].ints = { 0 };
        // A chain on twice as large tensors peaks while the list waits for its reader.
        core::TensorIndex last = b.tensor("z", { 64, 512 }, TensorKind::Input);
        for (const char* type : { "Sigmoid", "Relu", "Tanh", "Relu", "Sigmoid", "Tanh" }) {
            const bool end = b.g.ops.size() == 6;
            const auto next = b.tensor(std::string(type) + std::to_string(b.g.ops.size()), { 64, 512 },
                end ? TensorKind::Output : TensorKind::Activation);
            b.op(std::string("f") + std::to_string(b.g.ops.size()), type, { last }, { next });
            last = next;
        }
        const auto stacked = b.tensor("stacked", { 64, 256 });
        b.op("stack", "ConcatFromSequence", { seq }, { stacked })->attributes["new_axis"].ints = { 1 };
        b.op("sum", "Add", { stacked, stacked }, { b.tensor("y", { 64, 256 }, TensorKind::Output) });
        const auto original = b.workload("swapped-sequence", 256);

        const auto plain = core::runOnCpu(*original.graph, original.schedule, original.problem, core::noReusePlan(original.problem),
            original.bufferTensor, {});
        QVERIFY2(plain, plain ? "" : plain.error().message.c_str());
        QCOMPARE(plain->opsSynthetic, 0);

        core::StrategyOptions options;
        options.alignment = original.problem.alignment;
        const auto applied = core::applyStrategies(original, { "swap" }, options);
        QVERIFY2(applied, applied ? "" : applied.error().message.c_str());
        const auto& w = applied->workload;
        const auto swapOut = std::find_if(w.graph->ops.begin(), w.graph->ops.end(),
            [&](const core::Op& op) { return op.type == "SwapOut" && w.graph->tensors[std::size_t(op.inputs[0])].name == "rows"; });
        QVERIFY2(swapOut != w.graph->ops.end(), "the sequence was not swapped");
        const auto plan = core::runPlanner(*core::plannerByName("greedy-by-size"), w.problem);
        QVERIFY(plan);
        QVERIFY(core::validatePlan(w.problem, *plan).ok());
        const auto check = core::checkPlanByRunning(*w.graph, w.schedule, w.problem, *plan, w.bufferTensor, {});
        QVERIFY2(check, check ? "" : check.error().message.c_str());
        QVERIFY2(check->outputsMatch, check->mismatch.c_str());
        QCOMPARE(check->planned.opsSynthetic, 0);
        const auto mismatch = core::compareOutputs(*w.graph, plain->outputs, check->planned.outputs);
        QVERIFY2(mismatch.empty(), mismatch.c_str());
    }

    // A sequence graph input given as elements: they flow into the run; more than the planned room
    // is refused with the input's name; a tensor given for a sequence input too.
    void sequenceInputs()
    {
        using core::TensorKind;
        GraphBuilder b;
        const auto seq = b.tensor("list", { 16 }, TensorKind::Input);
        auto& s = b.g.tensors[std::size_t(seq)];
        s.sequence = s.estimated = true;
        s.rankKnown = false;
        s.shape.clear();
        const auto joined = b.tensor("joined", { 16 }, TensorKind::Output);
        b.g.tensors[std::size_t(joined)].estimated = true;
        b.op("join", "ConcatFromSequence", { seq }, { joined });
        const auto w = b.workload("sequence-input", 64);

        core::HostTensor given = boundedgraphs::floats({ 5 }, { 1, 2, 3, 4, 5 });
        given.sequence = true;
        given.items = { { 2 }, { 3 } };
        core::RunOptions options;
        options.inputs["list"] = given;
        const auto run = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, options);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        QCOMPARE(run->opsSynthetic, 0);
        QCOMPARE(run->outputs[0].shape, (std::vector<std::int64_t> { 5 }));
        QCOMPARE(boundedgraphs::valuesOf<float>(run->outputs[0]), (std::vector<float> { 1, 2, 3, 4, 5 }));

        core::HostTensor tooMany = boundedgraphs::floats({ 20 }, std::vector<float>(20, 1.0f));
        tooMany.sequence = true;
        tooMany.items = { { 20 } };
        options.inputs["list"] = tooMany;
        const auto refused = core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, options);
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.find("input 'list'") != std::string::npos, refused.error().message.c_str());
        QVERIFY2(refused.error().message.find("at most a sequence") != std::string::npos, refused.error().message.c_str());
        options.inputs["list"] = boundedgraphs::floats({ 2 }, { 1, 2 });
        QVERIFY(!core::runOnCpu(*w.graph, w.schedule, w.problem, core::noReusePlan(w.problem), w.bufferTensor, options));
    }

    // `memplan run --input`: files given for an ONNX model's inputs fix what its declared shapes
    // leave open. A sequence input of unknown length (libonnx-testdata's SequenceInsert case) is
    // sized by its SequenceProto file and the run writes the stored output; a symbolic dimension
    // (tricky/attention_seq's `seq`) takes the file's size without --dim; an unknown input name is
    // one line naming it and the model's inputs.
    void runSizesInputsFromTheirFiles()
    {
        const auto node = kTestData / "node" / "test_sequence_insert_at_back";
        const auto attention = boundedgraphs::fixture("attention_seq");
        if (!fs::exists(node) || !fs::exists(attention))
            QSKIP("needs libonnx-testdata and tests/models/tricky (scripts/make_models.sh)");
        QTemporaryDir dir;
        const auto set = node / "test_data_set_0";
        const QString model = QString::fromStdString((node / "model.onnx").string());
        const auto unsized = memplan({ QStringLiteral("run"), model, QStringLiteral("--repeat"), QStringLiteral("1") });
        QVERIFY2(unsized.exitCode == 1 && unsized.err.contains(QStringLiteral("'sequence'")), qPrintable(unsized.err));
        const auto run = memplan({ QStringLiteral("run"), model, QStringLiteral("--repeat"), QStringLiteral("1"), QStringLiteral("--input"),
            QStringLiteral("sequence=%1").arg(QString::fromStdString((set / "input_0.pb").string())), QStringLiteral("--input"),
            QStringLiteral("tensor=%1").arg(QString::fromStdString((set / "input_1.pb").string())), QStringLiteral("--save-outputs"),
            dir.path() });
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.out.contains(QStringLiteral("1 real, 0 synthetic")), qPrintable(run.out));
        const auto saved = core::readSequenceFile(dir.filePath(QStringLiteral("output_0.pb")).toStdString());
        const auto stored = core::readSequenceFile(set / "output_0.pb");
        QVERIFY2(saved && stored, saved ? "" : saved.error().message.c_str());
        QCOMPARE(saved->second.items, stored->second.items);
        QVERIFY(saved->second.data == stored->second.data);

        const auto x = fs::path(dir.filePath(QStringLiteral("x.pb")).toStdString());
        QVERIFY(core::writeTensorFile(x, "x", boundedgraphs::floats({ 1, 16, 64 }, std::vector<float>(16 * 64, 0.25f))));
        const auto json = dir.filePath(QStringLiteral("run.json"));
        const auto sized = memplan({ QStringLiteral("run"), QString::fromStdString(attention), QStringLiteral("--repeat"),
            QStringLiteral("1"), QStringLiteral("--input"), QStringLiteral("x=%1").arg(QString::fromStdString(x.string())),
            QStringLiteral("--json"), json });
        QVERIFY2(sized.exitCode == 0, qPrintable(sized.err));
        QVERIFY2(sized.out.contains(QStringLiteral("outputs vs no-reuse run: arena bit-identical")), qPrintable(sized.out));
        const auto planJson = dir.filePath(QStringLiteral("plan.json"));
        const auto plan = memplan({ QStringLiteral("plan"), QString::fromStdString(attention), QStringLiteral("--dim"),
            QStringLiteral("seq=16"), QStringLiteral("--json"), planJson });
        QVERIFY2(plan.exitCode == 0, qPrintable(plan.err));
        const auto field = [](const QString& file, const char* name) {
            QFile f(file);
            return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object().value(QLatin1String(name)).toInteger() : -1;
        };
        QVERIFY(field(planJson, "arena_bytes") > 0);
        QCOMPARE(field(json, "arena_bytes"), field(planJson, "arena_bytes")); // the arena `--dim seq=16` plans

        const auto swapped = memplan({ QStringLiteral("run"), model, QStringLiteral("--input"),
            QStringLiteral("sequence=%1").arg(QString::fromStdString((set / "input_1.pb").string())) });
        QCOMPARE(swapped.exitCode, 1);
        QVERIFY2(swapped.err.contains(QStringLiteral("input 'sequence' is a sequence, but"))
                && swapped.err.contains(QStringLiteral("holds a tensor (TensorProto)")),
            qPrintable(swapped.err));

        const auto unknown = memplan({ QStringLiteral("run"), QString::fromStdString(attention), QStringLiteral("--input"),
            QStringLiteral("nosuch=%1").arg(QString::fromStdString(x.string())) });
        QCOMPARE(unknown.exitCode, 1);
        QVERIFY2(unknown.err.contains(QStringLiteral("input 'nosuch'")) && unknown.err.contains(QStringLiteral("'x'")),
            qPrintable(unknown.err));
    }

    // A Loop over an outer list (SequenceMap's expansion: SequenceAt(x, i) appended to a list for i
    // < SequenceLength(x)): the body sees the bytes the list holds outside, so the list it builds is
    // sized from them and runs for real, giving the stored output. Without a size for x's elements the
    // built list has no known size (it was planned as the 0 bytes it entered with).
    void loopOverAnOuterList()
    {
        const auto node = kTestData / "node";
        if (!fs::exists(node / "test_sequence_map_identity_2_sequences_expanded"))
            QSKIP("libonnx-testdata is not installed");
        QTemporaryDir dir;
        for (const char* name : { "test_sequence_map_identity_1_sequence_expanded", "test_sequence_map_identity_2_sequences_expanded",
                 "test_sequence_map_add_2_sequences_expanded" }) {
            const auto model = node / name / "model.onnx";
            const auto set = node / name / "test_data_set_0";
            const auto w = core::loadWorkload(model.string(), {});
            QVERIFY(!w);
            QVERIFY2(w.error().message.find("symbolic dimension") != std::string::npos, w.error().message.c_str());
            QStringList args { QStringLiteral("run"), QString::fromStdString(model.string()), QStringLiteral("--repeat"), QStringLiteral("1"),
                QStringLiteral("--save-outputs"), dir.path() };
            core::LoadOptions options;
            options.bindings.dims["N"] = 10;
            if (std::string(name).find("identity_2") != std::string::npos)
                options.bindings.dims["M"] = 10;
            const auto wl = core::loadWorkload(model.string(), options);
            QVERIFY2(wl, wl ? "" : wl.error().message.c_str());
            for (std::size_t k = 0; k < wl->graph->inputs.size(); ++k)
                args << QStringLiteral("--input")
                     << QStringLiteral("%1=%2").arg(QString::fromStdString(wl->graph->tensors[wl->graph->inputs[k]].name),
                            QString::fromStdString((set / ("input_" + std::to_string(k) + ".pb")).string()));
            for (auto t : wl->graph->outputs) // planned with a room, not as the empty list the Loop starts from
                QVERIFY2(wl->graph->tensors[t].size > 0, wl->graph->tensors[t].name.c_str());
            const auto run = memplan(args);
            QVERIFY2(run.exitCode == 0, qPrintable(run.err));
            QVERIFY2(run.out.contains(QStringLiteral("0 synthetic")), qPrintable(QString::fromLatin1(name) + run.out));
            for (std::size_t k = 0; k < wl->graph->outputs.size(); ++k) {
                const auto file = "output_" + std::to_string(k) + ".pb";
                const auto saved = core::readSequenceFile(dir.filePath(QString::fromStdString(file)).toStdString());
                const auto stored = core::readSequenceFile(set / file);
                QVERIFY2(saved && stored, saved ? "" : saved.error().message.c_str());
                QCOMPARE(saved->second.items, stored->second.items);
                QVERIFY(saved->second.data == stored->second.data);
            }
        }
    }

    // SequenceMap itself: its body runs once per element of the first list (element i of each
    // list, a tensor input whole) and each output lists one body result per element, of the body's
    // element type (extract_shapes: int64 shapes of float tensors). Every case of libonnx-testdata,
    // its lists given by file, gives the stored outputs on real kernels; a second list of another
    // length is refused (the SequenceMap runs synthetic, saying why).
    void sequenceMapRunsItsBodyPerElement()
    {
        const auto node = kTestData / "node";
        if (!fs::exists(node / "test_sequence_map_add_2_sequences"))
            QSKIP("libonnx-testdata is not installed");
        QTemporaryDir dir;
        for (const char* name : { "test_sequence_map_add_1_sequence_1_tensor", "test_sequence_map_add_2_sequences",
                 "test_sequence_map_extract_shapes", "test_sequence_map_identity_1_sequence",
                 "test_sequence_map_identity_1_sequence_1_tensor", "test_sequence_map_identity_2_sequences" }) {
            const auto model = node / name / "model.onnx";
            const auto set = node / name / "test_data_set_0";
            const auto inputs = core::declaredInputs(model);
            QVERIFY2(inputs, inputs ? "" : inputs.error().message.c_str());
            QStringList args { QStringLiteral("run"), QString::fromStdString(model.string()), QStringLiteral("--repeat"), QStringLiteral("1"),
                QStringLiteral("--save-outputs"), dir.path() };
            for (std::size_t k = 0; k < inputs->size(); ++k)
                args << QStringLiteral("--input")
                     << QStringLiteral("%1=%2").arg(QString::fromStdString((*inputs)[k].name),
                            QString::fromStdString((set / ("input_" + std::to_string(k) + ".pb")).string()));
            const auto run = memplan(args);
            QVERIFY2(run.exitCode == 0, qPrintable(run.err));
            QVERIFY2(run.out.contains(QStringLiteral("1 real, 0 synthetic")), qPrintable(QString::fromLatin1(name) + run.out));
            for (int k = 0; fs::exists(set / ("output_" + std::to_string(k) + ".pb")); ++k) {
                const auto file = "output_" + std::to_string(k) + ".pb";
                const auto saved = core::readSequenceFile(dir.filePath(QString::fromStdString(file)).toStdString());
                const auto stored = core::readSequenceFile(set / file);
                QVERIFY2(saved && stored, saved ? "" : saved.error().message.c_str());
                QCOMPARE(saved->second.dtype, stored->second.dtype);
                QCOMPARE(saved->second.items, stored->second.items);
                QVERIFY(saved->second.data == stored->second.data);
            }
        }

        // add_2_sequences with a second list one element short, given at import too.
        const auto model = node / "test_sequence_map_add_2_sequences" / "model.onnx";
        const auto set = node / "test_sequence_map_add_2_sequences" / "test_data_set_0";
        auto shorter = core::readSequenceFile(set / "input_1.pb");
        QVERIFY2(shorter, shorter ? "" : shorter.error().message.c_str());
        auto& list = shorter->second;
        const auto last = core::elementCount(list.items.back());
        list.items.pop_back();
        list.data.resize(list.data.size() - std::size_t(last) * sizeof(float));
        const auto file = dir.filePath(QStringLiteral("short.pb")).toStdString();
        QVERIFY(core::writeTensorFile(file, shorter->first, list));
        core::LoadOptions load;
        auto given = core::readGivenInputs(model, { { "x0", set / "input_0.pb" }, { "x1", file } }, load.bindings);
        QVERIFY2(given, given ? "" : given.error().message.c_str());
        const auto w = core::loadWorkload(model.string(), load);
        QVERIFY2(w, w ? "" : w.error().message.c_str());
        const auto plan = core::noReusePlan(w->problem);
        QVERIFY(core::validatePlan(w->problem, plan).ok());
        core::RunOptions options;
        options.inputs = *given;
        auto data = core::loadTensorData(model, *w->graph);
        QVERIFY2(data, data ? "" : data.error().message.c_str());
        options.modelData = std::make_shared<const core::ModelData>(std::move(*data));
        const auto refused = core::runOnCpu(*w->graph, w->schedule, w->problem, plan, w->bufferTensor, options);
        QVERIFY2(refused, refused ? "" : refused.error().message.c_str());
        QCOMPARE(refused->opsSynthetic, 1);
        QVERIFY2(refused->ops.front().refusal == "input 1 holds 2 elements, input 0 3", refused->ops.front().refusal.c_str());
    }

    // A Loop over a list input (SequenceMap's expansion, its trip count SequenceLength(x)): the
    // file sizes the list's count and element shapes, so the loop and the list it builds are sized
    // and run for real, giving the stored output (`memplan plan` takes the file too). A run of that
    // plan with another list is refused.
    void listInputFromItsFileSizesItsLoop()
    {
        const auto dir = kTestData / "node" / "test_sequence_map_extract_shapes_expanded";
        if (!fs::exists(dir))
            QSKIP("libonnx-testdata is not installed");
        const auto model = dir / "model.onnx";
        const auto set = dir / "test_data_set_0";
        QTemporaryDir out;
        const auto run = memplan({ QStringLiteral("run"), QString::fromStdString(model.string()), QStringLiteral("--repeat"),
            QStringLiteral("1"), QStringLiteral("--input"), QStringLiteral("in_seq=%1").arg(QString::fromStdString((set / "input_0.pb").string())),
            QStringLiteral("--save-outputs"), out.path() });
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.out.contains(QStringLiteral(" real, 0 synthetic")), qPrintable(run.out));
        QVERIFY2(run.out.contains(QStringLiteral("given       the plan is sized for the contents given for 'in_seq'")), qPrintable(run.out));
        const auto saved = core::readSequenceFile(out.filePath(QStringLiteral("output_0.pb")).toStdString());
        const auto stored = core::readSequenceFile(set / "output_0.pb");
        QVERIFY2(saved && stored, saved ? "" : saved.error().message.c_str());
        QCOMPARE(saved->second.items, stored->second.items);
        QVERIFY(saved->second.data == stored->second.data);

        // `memplan plan` takes the same files: without one the list has no known size.
        const auto planned = memplan({ QStringLiteral("plan"), QString::fromStdString(model.string()), QStringLiteral("--input"),
            QStringLiteral("in_seq=%1").arg(QString::fromStdString((set / "input_0.pb").string())) });
        QVERIFY2(planned.exitCode == 0 && planned.out.contains(QStringLiteral("arena")), qPrintable(planned.err));
        const auto unplanned = memplan({ QStringLiteral("plan"), QString::fromStdString(model.string()) });
        QVERIFY2(unplanned.exitCode == 1 && unplanned.err.contains(QStringLiteral("'in_seq'")), qPrintable(unplanned.err));

        core::LoadOptions load;
        auto given = core::readGivenInputs(model, { { "in_seq", set / "input_0.pb" } }, load.bindings);
        QVERIFY2(given, given ? "" : given.error().message.c_str());
        QVERIFY(load.bindings.sequenceElements.at("in_seq").size() >= 2);
        const auto w = core::loadWorkload(model.string(), load);
        QVERIFY2(w, w ? "" : w.error().message.c_str());
        const auto plan = core::noReusePlan(w->problem);
        QVERIFY(core::validatePlan(w->problem, plan).ok());
        core::RunOptions options;
        auto shorter = given->at("in_seq");
        const auto last = core::elementCount(shorter.items.back());
        shorter.items.pop_back();
        shorter.data.resize(shorter.data.size() - std::size_t(last) * sizeof(float));
        options.inputs["in_seq"] = shorter;
        const auto refused = core::runOnCpu(*w->graph, w->schedule, w->problem, plan, w->bufferTensor, options);
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.find("input 'in_seq': the plan was made for the element shapes") != std::string::npos,
            refused.error().message.c_str());
    }

    // A list a sequence op writes holds at most 4096 items (each op writes a new list, so a loop
    // appending n items costs O(n^2)): appending the 4096th is done, the 4097th refused, the room
    // untouched. Items of no elements count too.
    void listsHoldAtMost4096Items()
    {
        std::vector<float> one { 5 };
        std::vector<float> t { 9 };
        std::vector<float> room(4, -7.0f);
        for (const std::size_t held : { std::size_t(4095), std::size_t(4096) }) {
            std::fill(room.begin(), room.end(), -7.0f);
            std::vector<Shape> items(held, Shape { 0 });
            items[0] = { 1 };
            SequenceCall c;
            c.op.type = "SequenceInsert";
            c.call.in = { sequenceView(one, items), floatView(t, { 1 }) };
            c.call.out = { sequenceView(room, {}) };
            c.call.out[0].count = std::int64_t(room.size());
            const bool done = c.run();
            QCOMPARE(done, held < 4096);
            QCOMPARE(room[1], done ? 9.0f : -7.0f);
            if (done)
                QCOMPARE(c.items[0].size(), std::size_t(4096));
        }
    }

    // libonnx-testdata's sequence models (SequenceEmpty/Construct/Insert/Erase/At/Length,
    // SplitToSequence, ConcatFromSequence, Identity of a sequence) against their stored outputs, on
    // real kernels only; model 8 has a symbolic dimension, bound from its test data.
    void libonnxSequenceModels()
    {
        if (!fs::exists(kTestData / "simple"))
            QSKIP("libonnx-testdata is not installed");
        int passed = 0;
        for (int m = 1; m <= 8; ++m) {
            const auto dir = kTestData / "simple" / ("test_sequence_model" + std::to_string(m));
            const auto set = dir / "test_data_set_0";
            core::LoadOptions load;
            if (m == 8) {
                const auto x = core::readTensorFile(set / "input_0.pb");
                QVERIFY(x);
                load.bindings.inputShapes["X"] = x->second.shape;
            }
            const auto w = core::loadWorkload((dir / "model.onnx").string(), load);
            QVERIFY2(w, w ? "" : w.error().message.c_str());
            auto options = boundedgraphs::withModelData((dir / "model.onnx").string(), *w->graph);
            for (std::size_t k = 0; k < w->graph->inputs.size(); ++k) {
                const auto& tensor = w->graph->tensors[w->graph->inputs[k]];
                const auto file = set / ("input_" + std::to_string(k) + ".pb");
                auto in = tensor.sequence ? core::readSequenceFile(file) : core::readTensorFile(file);
                QVERIFY2(in, in ? "" : in.error().message.c_str());
                options.inputs[tensor.name] = std::move(in->second);
            }
            const auto run = core::runOnCpu(*w->graph, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
            QVERIFY2(run, run ? "" : run.error().message.c_str());
            QVERIFY2(run->opsSynthetic == 0, qPrintable(QStringLiteral("model %1 ran synthetic ops").arg(m)));
            std::vector<core::HostTensor> expected;
            for (std::size_t k = 0; k < run->outputs.size(); ++k) {
                const auto file = set / ("output_" + std::to_string(k) + ".pb");
                auto out = run->outputs[k].sequence ? core::readSequenceFile(file) : core::readTensorFile(file);
                QVERIFY2(out, out ? "" : out.error().message.c_str());
                expected.push_back(std::move(out->second));
            }
            const auto off = core::compareWithin(*w->graph, expected, run->outputs, 1e-5);
            QVERIFY2(off.empty(), qPrintable(QStringLiteral("model %1: %2").arg(m).arg(QString::fromStdString(off))));
            boundedgraphs::checkEveryPlanner(*w, options, run->outputs);
            ++passed;
        }
        QCOMPARE(passed, 8);
    }
};

QTEST_GUILESS_MAIN(TestSequences)
#include "tst_sequences.moc"
