// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Broken models never crash or hang MemPlan: each case mutates a real model (a dimension, an
// attribute, an op type, a read, an initializer, the node order, the bytes of the file) with a
// fixed seed, then loads, plans, validates and runs it as `memplan run` does. Every step either
// works or fails with a message naming the file; a crash ends the test process, a hang its timeout.
// The mutations found a crash in ONNX's shape inference (a Shape reading the output of a node
// whose inference failed) and Transpose perms taken as given.
#include "exec/executor.h"
#include "io/workload.h"
#include "planners/planner.h"
#include "planners/validate.h"

#include <onnx/onnx_pb.h>

#include <QtTest>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

using namespace core;
namespace fs = std::filesystem;
using onnx::TensorProto;

namespace {

const fs::path kModels = MEMPLAN_SOURCE_DIR "/tests/models";
const fs::path kTestData = "/usr/share/libonnx-testdata/data/node";

// Small models with control flow, data-dependent shapes and shape arithmetic: the tricky fixtures
// (scripts/make_tricky_models.py) and operator tests from Debian's libonnx-testdata.
std::vector<fs::path> seedModels()
{
    std::vector<fs::path> seeds;
    // Named, not listed from the folder: a case number stays the same model and mutations when a
    // fixture is added (loop_without_end, which runs for a second by design, is no seed).
    for (const char* name : { "attention_seq", "cnn_float16", "cnn_float32", "if_nms", "if_outer_scope", "list_loop", "log_mel_frontend",
             "loop_accumulate", "loop_concat_rows", "loop_nested_if", "nonzero_gather", "opset18_pad_axes", "opset18_reduce_split",
             "opset19_resize_shape", "opset20_gelu", "pool_unpool", "roi_pool_kept", "scan_axes" })
        if (fs::exists(kModels / "tricky" / (std::string(name) + ".onnx")))
            seeds.push_back(kModels / "tricky" / (std::string(name) + ".onnx"));
    for (const char* name : { "speech_rnn.onnx", "scripted_rows.onnx" })
        if (fs::exists(kModels / name))
            seeds.push_back(kModels / name);
    for (const char* test : { "test_reshape_reordered_all_dims", "test_transpose_all_permutations_3", "test_conv_with_strides_padding",
             "test_lstm_defaults", "test_if", "test_loop11", "test_nonmaxsuppression_two_batches", "test_resize_upsample_scales_linear",
             "test_gather_2d_indices", "test_slice_neg_steps", "test_concat_3d_axis_1", "test_einsum_batch_matmul", "test_top_k",
             "test_maxpool_2d_pads", "test_expand_dim_changed", "test_split_variable_parts_2d", "test_scatternd", "test_range_float_type_positive_delta_expanded" })
        if (fs::exists(kTestData / test / "model.onnx"))
            seeds.push_back(kTestData / test / "model.onnx");
    std::sort(seeds.begin(), seeds.end());
    return seeds;
}

void collectGraphs(onnx::GraphProto& g, std::vector<onnx::GraphProto*>& out)
{
    out.push_back(&g);
    for (auto& node : *g.mutable_node())
        for (auto& a : *node.mutable_attribute()) {
            if (a.has_g())
                collectGraphs(*a.mutable_g(), out);
            for (auto& sub : *a.mutable_graphs())
                collectGraphs(sub, out);
        }
}

class Mutator {
public:
    explicit Mutator(std::uint64_t seed)
        : m_random(seed)
    {
    }

    std::size_t below(std::size_t n) { return n == 0 ? 0 : std::size_t(m_random() % n); }
    template <typename T> T pick(const std::vector<T>& values) { return values[below(values.size())]; }

    // One mutation somewhere in `model`; returns what it did.
    std::string mutate(onnx::ModelProto& model)
    {
        std::vector<onnx::GraphProto*> graphs;
        collectGraphs(*model.mutable_graph(), graphs);
        auto& g = *graphs[below(graphs.size())];
        const int nodes = g.node_size();
        auto* node = nodes > 0 ? g.mutable_node(int(below(std::size_t(nodes)))) : nullptr;
        const std::vector<std::int64_t> ints { -7, -2, -1, 0, 1, 2, 3, 5, 100, std::int64_t(1) << 31, -(std::int64_t(1) << 40) };
        switch (below(12)) {
        case 0: {
            auto& inputs = *model.mutable_graph()->mutable_input();
            if (inputs.empty() || !inputs[0].type().has_tensor_type())
                return "none";
            auto* shape = inputs[0].mutable_type()->mutable_tensor_type()->mutable_shape();
            if (shape->dim_size() == 0)
                return "none";
            auto* dim = shape->mutable_dim(int(below(std::size_t(shape->dim_size()))));
            if (below(8) == 0)
                dim->set_dim_param("N");
            else
                dim->set_dim_value(pick<std::int64_t>({ 0, -1, 1, 2, 3, 7, std::int64_t(1) << 20, std::int64_t(1) << 40 }));
            return "input dim";
        }
        case 1:
            if (node && node->attribute_size() > 0) {
                auto* a = node->mutable_attribute(int(below(std::size_t(node->attribute_size()))));
                if (a->type() == onnx::AttributeProto::INT)
                    a->set_i(pick(ints));
                else if (a->type() == onnx::AttributeProto::INTS && a->ints_size() > 0)
                    a->set_ints(int(below(std::size_t(a->ints_size()))), pick(ints));
                else if (a->type() == onnx::AttributeProto::INTS)
                    a->add_ints(pick(ints));
                return "attribute " + node->op_type() + "." + a->name();
            }
            return "none";
        case 2:
            if (node && node->input_size() > 0) {
                node->set_input(int(below(std::size_t(node->input_size()))),
                    pick<std::string>({ "", "no_such_tensor", node->output_size() > 0 ? node->output(0) : "" }));
                return "input of " + node->op_type();
            }
            return "none";
        case 3:
            if (node) {
                node->set_op_type(pick<std::string>({ "Reshape", "Concat", "Conv", "MatMul", "Gather", "Slice", "Loop", "If", "Split",
                    "Transpose", "Expand", "Tile", "Resize", "Pad", "NonZero", "TopK", "Einsum", "Shape", "Relu", "Add" }));
                return "op type " + node->op_type();
            }
            return "none";
        case 4:
            if (g.initializer_size() > 0) {
                auto* t = g.mutable_initializer(int(below(std::size_t(g.initializer_size()))));
                if (t->dims_size() > 0 && below(5) < 3)
                    t->set_dims(int(below(std::size_t(t->dims_size()))), pick<std::int64_t>({ 0, 1, 2, 3, 1000, -1 }));
                else
                    t->set_data_type(pick<int>({ 1, 6, 7, 10, 16, 9, 8, 2, 11, 0, 99 }));
                return "initializer " + t->name();
            }
            return "none";
        case 5:
            if (nodes > 0) {
                g.mutable_node()->erase(g.mutable_node()->begin() + std::ptrdiff_t(below(std::size_t(nodes))));
                return "node removed";
            }
            return "none";
        case 6:
            if (nodes > 1 && node && node->output_size() > 0) {
                auto* other = g.mutable_node(int(below(std::size_t(nodes))));
                if (other != node && other->output_size() > 0)
                    other->set_output(0, node->output(0));
                return "output defined twice";
            }
            return "none";
        case 7:
            if (nodes > 2) {
                const int a = int(below(std::size_t(nodes - 1)));
                const int b = a + 1 + int(below(std::size_t(nodes - a - 1)));
                auto* reader = g.mutable_node(a);
                if (reader->input_size() > 0 && g.node(b).output_size() > 0)
                    reader->set_input(int(below(std::size_t(reader->input_size()))), g.node(b).output(0));
                return "reads a later output";
            }
            return "none";
        case 8:
            if (node && node->output_size() > 0) {
                node->add_output(node->output(0) + "_extra");
                return "extra output of " + node->op_type();
            }
            return "none";
        case 9:
            if (g.initializer_size() > 0) {
                auto* t = g.mutable_initializer(int(below(std::size_t(g.initializer_size()))));
                if (!t->raw_data().empty())
                    t->mutable_raw_data()->resize(below(t->raw_data().size() + 1));
                else if (t->int64_data_size() > 0)
                    t->set_int64_data(int(below(std::size_t(t->int64_data_size()))), pick(ints));
                else if (t->float_data_size() > 0)
                    t->mutable_float_data()->Truncate(int(below(std::size_t(t->float_data_size()))));
                return "initializer data " + t->name();
            }
            return "none";
        case 10:
            if (model.opset_import_size() > 0)
                model.mutable_opset_import(0)->set_version(pick<std::int64_t>({ 1, 6, 9, 11, 13, 17, 21, 30 }));
            return "opset";
        default:
            if (node && node->attribute_size() > 0) {
                node->mutable_attribute()->erase(node->mutable_attribute()->begin() + std::ptrdiff_t(below(std::size_t(node->attribute_size()))));
                return "attribute removed from " + node->op_type();
            }
            return "none";
        }
    }

    // A few random bytes of the serialized model, sometimes.
    void flipBytes(std::string& bytes)
    {
        if (bytes.empty() || below(12) != 0)
            return;
        for (std::size_t k = 1 + below(5); k > 0; --k)
            bytes[below(bytes.size())] = char(below(256));
    }

private:
    std::mt19937_64 m_random;
};

// Load, plan, validate, run: each step works or fails with a message naming `path`. `loaded`
// says whether the model loaded.
void exercise(const std::string& path, const std::string& what, bool& loaded)
{
    auto named = [&](const Error& e) {
        QVERIFY2(e.message.find(path) != std::string::npos, (what + ": " + e.message).c_str());
    };
    const auto workload = loadWorkload(path, {});
    loaded = bool(workload);
    if (!workload)
        return named(workload.error());
    const auto plan = runPlanner(*plannerByName("best-of-greedy"), workload->problem);
    QVERIFY2(plan, what.c_str());
    const auto check = validatePlan(workload->problem, *plan);
    QVERIFY2(check.ok(), (what + ": " + check.message).c_str());
    // Runs are for the shapes a mutation leaves small; a long but working run proves nothing here.
    if (plan->arenaSize > (Bytes(64) << 20))
        return;
    auto data = loadTensorData(path, *workload->graph);
    if (!data)
        return named(data.error());
    RunOptions options;
    options.modelData = std::make_shared<const ModelData>(std::move(*data));
    const auto run = runOnCpu(*workload->graph, workload->schedule, workload->problem, *plan, workload->bufferTensor, options);
    if (!run)
        QVERIFY2(!run.error().message.empty(), what.c_str());
}

} // namespace

class TestMutations : public QObject {
    Q_OBJECT
private slots:
    void brokenModelsFailCleanly();
    void loopWithoutTripCountStops();
};

void TestMutations::brokenModelsFailCleanly()
{
    const auto seeds = seedModels();
    if (seeds.size() < 5)
        QSKIP("the tricky fixtures (scripts/make_tricky_models.py) and libonnx-testdata are not there");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // MEMPLAN_MUTATION_CASES and MEMPLAN_MUTATION_FIRST explore further (e.g. 100000 cases from 5000).
    const int cases = qEnvironmentVariableIsSet("MEMPLAN_MUTATION_CASES") ? qEnvironmentVariableIntValue("MEMPLAN_MUTATION_CASES") : 3000;
    const int first = qEnvironmentVariableIntValue("MEMPLAN_MUTATION_FIRST");
    int loaded = 0;
    const bool trace = qEnvironmentVariableIsSet("MEMPLAN_MUTATION_TRACE");
    // Cases past the default range that once crashed, run every time.
    std::vector<int> numbers {
        171574, // a Conv MemPlan and ONNX read at different ranks
        220026, // SplitToSequence into 2^40 empty slices
        459179, // an Expand to 2^40 elements folded at import (24 GB)
        1104895, // a Loop appending 27 654 rows to a list, each append copying the list (minutes)
        1422270, // a Loop that never ends growing a result planned empty (quadratic: hours)
    };
    for (int k = first; k < first + cases; ++k)
        numbers.push_back(k);
    for (int k : numbers) {
        Mutator m { std::uint64_t(k) };
        const auto& seed = seeds[m.below(seeds.size())];
        onnx::ModelProto model;
        {
            std::ifstream in(seed, std::ios::binary);
            QVERIFY(model.ParseFromIstream(&in));
        }
        std::string what = "case " + std::to_string(k) + " (" + seed.filename().string() + " in " + seed.parent_path().filename().string() + "):";
        for (std::size_t count = 1 + m.below(3); count > 0; --count)
            what += " " + m.mutate(model);
        std::string bytes = model.SerializeAsString();
        m.flipBytes(bytes);
        const std::string path = dir.filePath(QStringLiteral("case%1.onnx").arg(k)).toStdString();
        std::ofstream(path, std::ios::binary) << bytes;
        if (trace) // a crash leaves no report: MEMPLAN_MUTATION_TRACE=1 names each case before it runs
            std::fprintf(stderr, "%s\n", what.c_str());
        bool ok = false;
        exercise(path, what, ok);
        if (QTest::currentTestFailed())
            return;
        loaded += ok ? 1 : 0;
    }
    qInfo("%zu mutated models, %d of them still load", numbers.size(), loaded);
    // The mutations must leave many models loadable, or the later steps go untested.
    if (cases >= 100)
        QVERIFY(loaded > cases / 5);
}

void TestMutations::loopWithoutTripCountStops()
{
    // tricky/loop_concat_rows with its trip count left out: the body's condition stays true, so only
    // the iteration limit would end it, after a quadratic amount of copying (a hang, in effect).
    // The carried tensor outgrows the room planned for the Loop's output at once; the run says so.
    const fs::path fixture = kModels / "tricky" / "loop_concat_rows.onnx";
    if (!fs::exists(fixture))
        QSKIP("tests/models/tricky is missing: run scripts/make_tricky_models.py");
    onnx::ModelProto model;
    {
        std::ifstream in(fixture, std::ios::binary);
        QVERIFY(model.ParseFromIstream(&in));
    }
    auto loop = std::find_if(model.mutable_graph()->mutable_node()->begin(), model.mutable_graph()->mutable_node()->end(),
        [](const onnx::NodeProto& n) { return n.op_type() == "Loop"; });
    QVERIFY(loop != model.mutable_graph()->mutable_node()->end());
    loop->set_input(0, "");
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("endless.onnx")).toStdString();
    std::ofstream(path, std::ios::binary) << model.SerializeAsString();
    const auto workload = loadWorkload(path, {});
    QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
    const auto plan = runPlanner(*plannerByName("best-of-greedy"), workload->problem);
    QVERIFY(plan && validatePlan(workload->problem, *plan).ok());
    auto data = loadTensorData(path, *workload->graph);
    QVERIFY(data);
    RunOptions options;
    options.modelData = std::make_shared<const ModelData>(std::move(*data));
    const auto run = runOnCpu(*workload->graph, workload->schedule, workload->problem, *plan, workload->bufferTensor, options);
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    const auto op = std::find_if(run->ops.begin(), run->ops.end(), [](const OpMeasurement& o) { return o.type == "Loop"; });
    QVERIFY(op != run->ops.end());
    QVERIFY(!op->real);
    QVERIFY2(op->refusal.find("outgrew the room the plan gives it") != std::string::npos, op->refusal.c_str());
}

QTEST_GUILESS_MAIN(TestMutations)
#include "tst_mutations.moc"
