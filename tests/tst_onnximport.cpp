// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// importOnnx / exportOnnx on small models built here with the ONNX protobuf classes: exact sizes
// for plain chains, folded exporter shape arithmetic, opset-18+ rules, bindings, estimates,
// subgraphs, round trips, and clean errors for bad files.

// The test links onnx_proto itself (tests/CMakeLists.txt), which sets ONNX_ML and ONNX_NAMESPACE.
#include <onnx/onnx_pb.h>

#include "exec/executor.h"
#include "exec/tensordata.h"
#include "io/jsongraph.h"
#include "io/workload.h"
#include "onnx/onnxfold.h"
#include "onnx/onnximport.h"
#include "planners/validate.h"

#include <QElapsedTimer>
#include <QFile>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <variant>

using namespace core;
using onnx::TensorProto;

namespace {

// One dimension of a declared shape: a value or a symbolic name.
struct Dim {
    Dim(std::int64_t v) : value(v) { }
    Dim(const char* p) : param(p) { }
    std::int64_t value = -1;
    const char* param = nullptr;
};

class ModelBuilder {
public:
    explicit ModelBuilder(int opset = 17)
    {
        m_model.set_ir_version(8);
        m_model.set_producer_name("tst_onnximport");
        auto* o = m_model.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        m_graph = m_model.mutable_graph();
        m_graph->set_name("test");
    }

    onnx::ModelProto& model() { return m_model; }
    onnx::GraphProto* graph() { return m_graph; }

    static void setType(onnx::TypeProto* type, int elemType, const std::vector<Dim>* dims)
    {
        auto* t = type->mutable_tensor_type();
        t->set_elem_type(elemType);
        if (!dims)
            return;
        auto* shape = t->mutable_shape();
        for (const auto& d : *dims) {
            auto* dim = shape->add_dim();
            if (d.param)
                dim->set_dim_param(d.param);
            else if (d.value != -1)
                dim->set_dim_value(d.value);
        }
    }
    void input(const std::string& name, int elemType, const std::vector<Dim>& dims)
    {
        auto* vi = m_graph->add_input();
        vi->set_name(name);
        setType(vi->mutable_type(), elemType, &dims);
    }
    // Outputs are declared with their element type only, so sizes must come from inference.
    void output(const std::string& name, int elemType = TensorProto::FLOAT)
    {
        auto* vi = m_graph->add_output();
        vi->set_name(name);
        setType(vi->mutable_type(), elemType, nullptr);
    }
    void ints(const std::string& name, const std::vector<std::int64_t>& values, std::vector<std::int64_t> dims = { -2 })
    {
        auto* t = m_graph->add_initializer();
        t->set_name(name);
        t->set_data_type(TensorProto::INT64);
        if (dims == std::vector<std::int64_t> { -2 })
            dims = { std::int64_t(values.size()) };
        for (auto d : dims)
            t->add_dims(d);
        for (auto v : values)
            t->add_int64_data(v);
    }
    void floats(const std::string& name, const std::vector<std::int64_t>& dims, float fill = 0.5f)
    {
        auto* t = m_graph->add_initializer();
        t->set_name(name);
        t->set_data_type(TensorProto::FLOAT);
        std::int64_t n = 1;
        for (auto d : dims) {
            t->add_dims(d);
            n *= d;
        }
        for (std::int64_t i = 0; i < n; ++i)
            t->add_float_data(fill);
    }
    onnx::NodeProto& node(const std::string& type, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = {})
    {
        auto* n = m_graph->add_node();
        n->set_op_type(type);
        if (!name.empty())
            n->set_name(name);
        for (const auto& i : inputs)
            n->add_input(i);
        for (const auto& o : outputs)
            n->add_output(o);
        return *n;
    }

    QString save(const QTemporaryDir& dir, const QString& name) const
    {
        const QString path = dir.filePath(name);
        std::ofstream out(path.toStdString(), std::ios::binary);
        m_model.SerializeToOstream(&out);
        return path;
    }

private:
    onnx::ModelProto m_model;
    onnx::GraphProto* m_graph = nullptr;
};

void attr(onnx::NodeProto& n, const std::string& name, std::int64_t v)
{
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
}
void attr(onnx::NodeProto& n, const std::string& name, const std::vector<std::int64_t>& v)
{
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v)
        a->add_ints(x);
}
void attr(onnx::NodeProto& n, const std::string& name, float v)
{
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
}
void attr(onnx::NodeProto& n, const std::string& name, const std::string& v)
{
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
}
// Gives an If node its two branches, each one op (thenOp, elseOp) reading `inputs` (outer-scope
// names the branch captures) whose float output of `dims` is the branch's output.
void addIfBranches(onnx::NodeProto& node, const std::string& thenOp, const std::string& elseOp, const std::vector<std::string>& inputs,
    std::vector<Dim> dims)
{
    for (const char* branch : { "then_branch", "else_branch" }) {
        auto* a = node.add_attribute();
        a->set_name(branch);
        a->set_type(onnx::AttributeProto::GRAPH);
        auto* body = a->mutable_g();
        body->set_name(branch);
        auto* n = body->add_node();
        n->set_op_type(std::string(branch) == "then_branch" ? thenOp : elseOp);
        for (const auto& input : inputs)
            n->add_input(input);
        n->add_output(std::string(branch) + "_out");
        auto* o = body->add_output();
        o->set_name(std::string(branch) + "_out");
        ModelBuilder::setType(o->mutable_type(), TensorProto::FLOAT, &dims);
    }
}

// Declares a value (a subgraph's input or output) of `type` and `dims` in `list`.
void addValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const char* name, int type, std::vector<Dim> dims)
{
    auto* v = list->Add();
    v->set_name(name);
    ModelBuilder::setType(v->mutable_type(), type, &dims);
}

// Gives Loop node `loop` its body graph, with the iteration number "i" and the condition "cond_in"
// as its first two inputs; the caller adds the carried ones, the nodes and the outputs.
onnx::GraphProto* loopBody(onnx::NodeProto& loop)
{
    auto* a = loop.add_attribute();
    a->set_name("body");
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* body = a->mutable_g();
    body->set_name("body");
    addValue(body->mutable_input(), "i", TensorProto::INT64, {});
    addValue(body->mutable_input(), "cond_in", TensorProto::BOOL, {});
    return body;
}

// Appends a node of `type` reading `inputs` and writing `output` to `body`.
onnx::NodeProto* bodyNode(onnx::GraphProto* body, const char* type, const std::vector<std::string>& inputs, const char* output)
{
    auto* n = body->add_node();
    n->set_op_type(type);
    for (const auto& i : inputs)
        n->add_input(i);
    n->add_output(output);
    return n;
}

// An imported graph ready to run: its workload, its no-reuse plan and options holding the model's
// data; empty with `why` set when a step fails.
struct Runnable {
    Workload workload;
    Plan plan;
    RunOptions options;
};
std::optional<Runnable> runnable(const Graph& g, const QString& path, std::string& why)
{
    auto w = workloadFromGraph(g, path.toStdString(), {});
    auto data = loadTensorData(path.toStdString(), g);
    if (!w || !data) {
        why = !w ? w.error().message : data.error().message;
        return std::nullopt;
    }
    Runnable r { std::move(*w), {}, {} };
    r.plan = noReusePlan(r.workload.problem);
    r.options.modelData = std::make_shared<const ModelData>(std::move(*data));
    return r;
}

// Constant node holding an int64 vector.
void constInts(ModelBuilder& b, const std::string& out, const std::vector<std::int64_t>& values, bool scalar = false)
{
    auto& n = b.node("Constant", {}, { out });
    auto* a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(TensorProto::INT64);
    if (!scalar)
        t->add_dims(std::int64_t(values.size()));
    for (auto v : values)
        t->add_int64_data(v);
}

// ConstantOfShape's `value`: a one-element int64 tensor.
void fillWith(onnx::NodeProto& node, std::int64_t value)
{
    auto* a = node.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(TensorProto::INT64);
    a->mutable_t()->add_dims(1);
    a->mutable_t()->add_int64_data(value);
}

// Runs imported model `g` (from `path`) once on the CPU executor with the model's own weights and
// no reuse, float32 input "x" of `shape` holding `x`.
void runWithWeights(const QString& path, const Graph& g, const std::vector<std::int64_t>& shape, const std::vector<float>& x,
    Measurement& out)
{
    auto data = loadTensorData(path.toStdString(), g);
    QVERIFY2(data, data ? "" : data.error().message.c_str());
    auto w = workloadFromGraph(g, path.toStdString(), {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    RunOptions options;
    options.modelData = std::make_shared<const ModelData>(std::move(*data));
    HostTensor input;
    input.dtype = DType::Float32;
    input.shape = shape;
    input.data.resize(x.size() * sizeof(float));
    std::memcpy(input.data.data(), x.data(), input.data.size());
    options.inputs["x"] = std::move(input);
    const auto plan = noReusePlan(w->problem);
    QVERIFY(validatePlan(w->problem, plan).ok());
    auto run = runOnCpu(*w->graph, w->schedule, w->problem, plan, w->bufferTensor, options);
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    out = std::move(*run);
}

const Tensor& tensor(const Graph& g, const std::string& name)
{
    static const Tensor missing { "<missing>" };
    const auto i = g.findTensor(name);
    return i ? g.tensors[*i] : missing;
}

std::string notesOf(const Graph& g)
{
    std::string all;
    for (const auto& n : g.notes)
        all += n + "\n";
    return all;
}

// Imports and fails the test with the importer's message when that fails.
#define IMPORT(graph, path, ...)                                                                        \
    auto graph##Result = importOnnx((path).toStdString(), ##__VA_ARGS__);                              \
    QVERIFY2(graph##Result, graph##Result ? "" : graph##Result.error().message.c_str());               \
    const Graph& graph = *graph##Result

} // namespace

using ShapeModelBuild = std::function<void(ModelBuilder&, std::int64_t)>;
Q_DECLARE_METATYPE(ShapeModelBuild)

class TestOnnxImport : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }
    void convReluChain();
    void exporterReshapeChain();
    void roiAlignWithoutModeIsNoted();
    void loopOverASplitList_data();
    void loopOverASplitList();
    void givenValuesSizeWhatIsComputedFromThem();
    void givenValuesThatSizeNothingBindNothing();
    void givenValuesThatMakeNoShapeAreNamed();
    void resizeWithComputedSizes();
    void foldedShapesFeedLayoutOps();
    void opset18ReduceSplitPad();
    void opset20Gelu();
    void constantNodesAreWeights();
    void weightAliasesRemoved();
    void externalAndSparseWeights();
    void symbolicBatch();
    void inputShapes();
    void nonZeroIsEstimated();
    void ifCapturesOuterTensors();
    void loopScanOutput();
    void loopCarriedShapeTheBodyCannotTellIsAnEstimate();
    void loopGrowingByItsIterationNumberIsInferredPerIteration();
    void scan8RunsEachBatchEntry();
    void dataDependentOpsInsideSubgraphs();
    void sequencesAreEstimated();
    void exportRoundTrip();
    void exportHandMadeGraph();
    void exportKeepsOptionalSlots();
    void exportKeepsOpsetsAndFillValues();
    void badInput_data();
    void badInput();
    void bindingErrors();
    void constantSizeAgainstInputShape();
    void staleStatedShapesComputedAgain();
    void nodesOutOfOrderAreSorted();
    void nodeCycleIsRefused_data();
    void nodeCycleIsRefused();
    void inconsistentShapes_data();
    void inconsistentShapes();
    void fiveHundredOps();
    void foldedConstantsHoldTheirValues();
    void foldArithmetic();

private:
    QTemporaryDir m_dir;
    ModelBuilder convModel(const std::vector<Dim>& inputDims);
};

ModelBuilder TestOnnxImport::convModel(const std::vector<Dim>& inputDims)
{
    ModelBuilder b;
    b.input("x", TensorProto::FLOAT, inputDims);
    b.floats("w", { 8, 3, 3, 3 });
    b.floats("b", { 8 });
    auto& conv = b.node("Conv", { "x", "w", "b" }, { "y" });
    attr(conv, "kernel_shape", std::vector<std::int64_t> { 3, 3 });
    attr(conv, "pads", std::vector<std::int64_t> { 1, 1, 1, 1 });
    attr(conv, "auto_pad", std::string("NOTSET"));
    auto& relu = b.node("LeakyRelu", { "y" }, { "r" }, "act");
    attr(relu, "alpha", 0.125f);
    auto& pool = b.node("MaxPool", { "r" }, { "p" });
    attr(pool, "kernel_shape", std::vector<std::int64_t> { 2, 2 });
    attr(pool, "strides", std::vector<std::int64_t> { 2, 2 });
    b.output("p");
    return b;
}

void TestOnnxImport::convReluChain()
{
    const QString path = convModel({ 1, 3, 32, 32 }).save(m_dir, QStringLiteral("conv.onnx"));
    IMPORT(g, path);
    QCOMPARE(g.ops.size(), std::size_t(3));
    QCOMPARE(g.ops[0].name, std::string("Conv_0")); // default name: <type>_<index>
    QCOMPARE(g.ops[1].name, std::string("act"));
    QCOMPARE(g.ops[0].attributes.at("pads").ints, (std::vector<std::int64_t> { 1, 1, 1, 1 }));
    QCOMPARE(g.ops[0].attributes.at("auto_pad").text, std::string("NOTSET"));
    QCOMPARE(g.ops[1].attributes.at("alpha").floats, (std::vector<float> { 0.125f }));
    QCOMPARE(tensor(g, "x").size, Bytes(1 * 3 * 32 * 32 * 4));
    QCOMPARE(tensor(g, "x").kind, TensorKind::Input);
    QCOMPARE(tensor(g, "w").kind, TensorKind::Weight);
    QCOMPARE(tensor(g, "w").size, Bytes(8 * 3 * 3 * 3 * 4));
    QCOMPARE(tensor(g, "y").shape, (std::vector<std::int64_t> { 1, 8, 32, 32 }));
    QCOMPARE(tensor(g, "y").size, Bytes(8 * 32 * 32 * 4));
    QCOMPARE(tensor(g, "y").kind, TensorKind::Activation);
    QCOMPARE(tensor(g, "r").size, Bytes(8 * 32 * 32 * 4));
    QCOMPARE(tensor(g, "p").shape, (std::vector<std::int64_t> { 1, 8, 16, 16 }));
    QCOMPARE(tensor(g, "p").kind, TensorKind::Output);
    QCOMPARE(tensor(g, "p").dtype, DType::Float32);
    QVERIFY(!tensor(g, "p").estimated);
    QCOMPARE(g.inputs.size(), std::size_t(1)); // w and b are weights, not inputs
    QCOMPARE(g.ops[0].inputs.size(), std::size_t(3));
}

void TestOnnxImport::exporterReshapeChain()
{
    // What torch.onnx writes for x.view(x.size(0), x.size(1), -1) / 2-style arithmetic: the
    // target shape is computed from Shape(x) through float math that ONNX's data propagation
    // does not follow (Cast, Div), so only folding gives the Reshape a size.
    ModelBuilder b(13);
    b.input("x", TensorProto::FLOAT, { 2, 3, 4, 5 });
    b.node("Shape", { "x" }, { "s" });
    constInts(b, "i0", { 0 }, true);
    constInts(b, "i2", { 2 }, true);
    constInts(b, "axes0", { 0 });
    b.node("Gather", { "s", "i0" }, { "batch" });
    b.node("Gather", { "s", "i2" }, { "h" });
    auto& cast = b.node("Cast", { "h" }, { "hf" });
    attr(cast, "to", std::int64_t(TensorProto::FLOAT));
    b.floats("two", {}, 2.0f);
    b.node("Div", { "hf", "two" }, { "half" });
    auto& back = b.node("Cast", { "half" }, { "hi" });
    attr(back, "to", std::int64_t(TensorProto::INT64));
    b.node("Unsqueeze", { "batch", "axes0" }, { "b1" });
    b.node("Unsqueeze", { "hi", "axes0" }, { "h1" });
    constInts(b, "minus1", { -1 });
    auto& concat = b.node("Concat", { "b1", "h1", "minus1" }, { "target" });
    attr(concat, "axis", std::int64_t(0));
    b.node("Reshape", { "x", "target" }, { "y" });
    b.node("Relu", { "y" }, { "z" });
    b.output("z");
    IMPORT(g, b.save(m_dir, QStringLiteral("reshape.onnx")));
    QCOMPARE(tensor(g, "y").shape, (std::vector<std::int64_t> { 2, 2, 30 }));
    QCOMPARE(tensor(g, "z").size, Bytes(2 * 3 * 4 * 5 * 4));
    // As a runtime loads it: the shape arithmetic is folded into one constant the Reshape reads, the
    // float steps on the way and the constants only they read go with it.
    QCOMPARE(tensor(g, "target").size, Bytes(3 * 8));
    QCOMPARE(tensor(g, "target").kind, TensorKind::Weight);
    QCOMPARE(tensor(g, "target").values, (std::vector<std::int64_t> { 2, 2, -1 }));
    QCOMPARE(g.ops.size(), std::size_t(2));
    QCOMPARE(g.ops[0].type, std::string("Reshape"));
    QCOMPARE(g.ops[0].inputs[1], *g.findTensor("target"));
    for (const char* gone : { "s", "batch", "hf", "half", "hi", "two", "i0", "minus1" })
        QVERIFY2(!g.findTensor(gone), gone);
    QCOMPARE(g.inputs.size(), std::size_t(1));
    QVERIFY2(notesOf(g).find("folded 7 integer ops into constants") != std::string::npos, notesOf(g).c_str());
    QVERIFY2(notesOf(g).find("they and 2 ops only they read leave the schedule") != std::string::npos, notesOf(g).c_str());
    QVERIFY2(notesOf(g).find("4 Constant ops are weights") != std::string::npos, notesOf(g).c_str());
}

void TestOnnxImport::resizeWithComputedSizes()
{
    ModelBuilder b(13);
    b.input("x", TensorProto::FLOAT, { 1, 3, 10, 20 });
    b.node("Shape", { "x" }, { "s" });
    b.ints("start0", { 0 });
    b.ints("start2", { 2 });
    b.ints("end2", { 2 });
    b.ints("end4", { 4 });
    b.node("Slice", { "s", "start0", "end2" }, { "nc" });
    b.node("Slice", { "s", "start2", "end4" }, { "hw" });
    auto& cast = b.node("Cast", { "hw" }, { "hwf" });
    attr(cast, "to", std::int64_t(TensorProto::FLOAT));
    b.floats("scale", { 2 }, 1.5f);
    b.node("Mul", { "hwf", "scale" }, { "scaled" });
    b.node("Floor", { "scaled" }, { "floored" });
    auto& back = b.node("Cast", { "floored" }, { "hwi" });
    attr(back, "to", std::int64_t(TensorProto::INT64));
    auto& concat = b.node("Concat", { "nc", "hwi" }, { "sizes" });
    attr(concat, "axis", std::int64_t(0));
    auto& resize = b.node("Resize", { "x", "", "", "sizes" }, { "y" });
    attr(resize, "mode", std::string("nearest"));
    b.output("y");
    IMPORT(g, b.save(m_dir, QStringLiteral("resize.onnx")));
    QCOMPARE(tensor(g, "y").shape, (std::vector<std::int64_t> { 1, 3, 15, 30 }));
    QCOMPARE(tensor(g, "y").size, Bytes(3 * 15 * 30 * 4));
    const auto& resizeOp = g.ops.back();
    QCOMPARE(resizeOp.type, std::string("Resize"));
    QCOMPARE(resizeOp.inputs.size(), std::size_t(2)); // empty optional inputs are left out
    QCOMPARE(resizeOp.attributes.at("mode").text, std::string("nearest"));
}

void TestOnnxImport::foldedShapesFeedLayoutOps()
{
    ModelBuilder b(13);
    b.input("x", TensorProto::FLOAT, { 2, 3 });
    b.floats("row", { 3 }, 1.0f);
    b.node("Shape", { "x" }, { "s" });                      // [2, 3]
    b.node("Expand", { "row", "s" }, { "expanded" });       // [2, 3]
    b.node("Tile", { "x", "s" }, { "tiled" });              // [4, 9]
    auto& cat = b.node("Concat", { "s", "s" }, { "pads" }); // [2, 3, 2, 3]
    attr(cat, "axis", std::int64_t(0));
    b.node("Pad", { "x", "pads" }, { "padded" }); // [6, 9]
    fillWith(b.node("ConstantOfShape", { "s" }, { "filled" }), 7);
    auto& prod = b.node("ReduceProd", { "s" }, { "count" }); // 6
    attr(prod, "keepdims", std::int64_t(0));
    constInts(b, "zero", { 0 }, true);
    constInts(b, "one", { 1 }, true);
    b.node("Range", { "zero", "count", "one" }, { "range" }); // [6]
    attr(b.node("Cast", { "range" }, { "rangef" }), "to", std::int64_t(TensorProto::FLOAT));
    b.node("Sum", { "expanded", "x" }, { "sum" });
    for (const char* out : { "sum", "tiled", "padded" })
        b.output(out);
    b.output("filled", TensorProto::INT64);
    b.output("rangef");
    IMPORT(g, b.save(m_dir, QStringLiteral("layout.onnx")));
    QCOMPARE(tensor(g, "expanded").shape, (std::vector<std::int64_t> { 2, 3 }));
    QCOMPARE(tensor(g, "tiled").shape, (std::vector<std::int64_t> { 4, 9 }));
    QCOMPARE(tensor(g, "padded").shape, (std::vector<std::int64_t> { 6, 9 }));
    QCOMPARE(tensor(g, "filled").dtype, DType::Int64);
    QCOMPARE(tensor(g, "filled").size, Bytes(6 * 8));
    QCOMPARE(tensor(g, "range").shape, (std::vector<std::int64_t> { 6 }));
    QCOMPARE(tensor(g, "rangef").size, Bytes(6 * 4));
    QCOMPARE(tensor(g, "sum").size, Bytes(6 * 4));
}

void TestOnnxImport::opset18ReduceSplitPad()
{
    // At opset 18 Reduce*/Split/Pad take axes and sizes as inputs. ONNX 1.12 only has the older
    // schemas (it infers nothing for Pad with an axes input); MemPlan's rules size these ops.
    ModelBuilder b(18);
    b.input("x", TensorProto::FLOAT, { 2, 6, 4 });
    b.ints("axis1", { 1 });
    b.ints("axisLast", { -1 });
    b.node("ReduceMean", { "x", "axis1" }, { "mean" });                              // [2,1,4]
    attr(b.node("ReduceMax", { "x", "axisLast" }, { "max" }), "keepdims", std::int64_t(0)); // [2,6]
    b.node("ReduceL2", { "x" }, { "l2" });                                          // [1,1,1]
    auto& split = b.node("Split", { "x" }, { "s0", "s1", "s2" });
    attr(split, "axis", std::int64_t(1));
    attr(split, "num_outputs", std::int64_t(3)); // [2,2,4] each
    b.ints("pads", { 1, 2 });
    b.ints("padAxes", { 2 });
    b.node("Pad", { "x", "pads", "", "padAxes" }, { "padded" }); // [2,6,7]
    for (const char* out : { "mean", "max", "l2", "s0", "s1", "s2", "padded" })
        b.output(out);
    IMPORT(g, b.save(m_dir, QStringLiteral("opset18.onnx")));
    QCOMPARE(tensor(g, "mean").shape, (std::vector<std::int64_t> { 2, 1, 4 }));
    QCOMPARE(tensor(g, "max").shape, (std::vector<std::int64_t> { 2, 6 }));
    QCOMPARE(tensor(g, "l2").shape, (std::vector<std::int64_t> { 1, 1, 1 }));
    for (const char* s : { "s0", "s1", "s2" })
        QCOMPARE(tensor(g, s).shape, (std::vector<std::int64_t> { 2, 2, 4 }));
    QCOMPARE(tensor(g, "padded").shape, (std::vector<std::int64_t> { 2, 6, 7 }));
    QVERIFY2(notesOf(g).find("ReduceMean") != std::string::npos, notesOf(g).c_str());
}

void TestOnnxImport::opset20Gelu()
{
    // Gelu (opset 20) and GroupNormalization (18) have no schema in ONNX 1.12, and it infers
    // nothing for Split with an uneven num_outputs (18) or Resize-18 with axes.
    ModelBuilder b(20);
    b.input("x", TensorProto::FLOAT, { 1, 4, 7, 6 });
    b.floats("scale", { 4 });
    b.floats("bias", { 4 });
    b.node("Gelu", { "x" }, { "g" });
    attr(b.node("GroupNormalization", { "g", "scale", "bias" }, { "n" }), "num_groups", std::int64_t(2));
    auto& split = b.node("Split", { "n" }, { "a", "b2", "c" });
    attr(split, "axis", std::int64_t(2));
    attr(split, "num_outputs", std::int64_t(3)); // 7 -> 3, 3, 1
    b.floats("scales", { 2 }, 2.0f);
    auto& resize = b.node("Resize", { "a", "", "scales" }, { "up" });
    attr(resize, "axes", std::vector<std::int64_t> { 2, 3 });
    // AveragePool-19 added dilations; ONNX 1.12's schema ignores them and would say [1,4,5,4].
    // It reads the graph input so that ONNX inference sees it in the first round.
    auto& pool = b.node("AveragePool", { "x" }, { "pooled" });
    attr(pool, "kernel_shape", std::vector<std::int64_t> { 3, 3 });
    attr(pool, "dilations", std::vector<std::int64_t> { 2, 2 });
    for (const char* out : { "b2", "c", "up", "pooled" })
        b.output(out);
    IMPORT(g, b.save(m_dir, QStringLiteral("opset20.onnx")));
    QCOMPARE(tensor(g, "pooled").shape, (std::vector<std::int64_t> { 1, 4, 3, 2 }));
    QCOMPARE(tensor(g, "g").shape, (std::vector<std::int64_t> { 1, 4, 7, 6 }));
    QCOMPARE(tensor(g, "n").size, Bytes(4 * 7 * 6 * 4));
    QCOMPARE(tensor(g, "a").shape, (std::vector<std::int64_t> { 1, 4, 3, 6 }));
    QCOMPARE(tensor(g, "c").shape, (std::vector<std::int64_t> { 1, 4, 1, 6 }));
    QCOMPARE(tensor(g, "up").shape, (std::vector<std::int64_t> { 1, 4, 6, 12 }));
}

void TestOnnxImport::constantNodesAreWeights()
{
    ModelBuilder b;
    b.input("x", TensorProto::FLOAT, { 2, 4 });
    auto& c = b.node("Constant", {}, { "c" });
    auto* a = c.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(TensorProto::FLOAT);
    a->mutable_t()->add_dims(4);
    a->mutable_t()->add_dims(300);
    a->mutable_t()->mutable_raw_data()->assign(4 * 300 * 4, '\0');
    auto& ci = b.node("Constant", {}, { "k" });
    attr(ci, "value_ints", std::vector<std::int64_t> { 1, 2, 3 });
    b.node("MatMul", { "x", "c" }, { "y" });
    b.output("y");
    IMPORT(g, b.save(m_dir, QStringLiteral("constant.onnx")));
    QCOMPARE(tensor(g, "c").kind, TensorKind::Weight);
    QCOMPARE(tensor(g, "c").size, Bytes(4 * 300 * 4));
    QCOMPARE(tensor(g, "k").kind, TensorKind::Weight);
    QCOMPARE(tensor(g, "k").size, Bytes(3 * 8));
    QCOMPARE(tensor(g, "y").shape, (std::vector<std::int64_t> { 2, 300 }));
    QCOMPARE(tensor(g, "y").kind, TensorKind::Output);
}

// Exporters alias shared weights through Identity ops. Import removes them: readers read the weight
// (an alias of an alias too), an Identity of an activation stays, and the executor still finds each
// op's ONNX facts (here Clip's missing min input) although op and node numbers now differ.
void TestOnnxImport::weightAliasesRemoved()
{
    ModelBuilder b;
    b.input("x", TensorProto::FLOAT, { 2, 4 });
    b.floats("w", { 4, 3 }, 0.5f);
    b.floats("hi", {}, 0.7f);
    b.node("Identity", { "w" }, { "w_alias" });
    b.node("Identity", { "w_alias" }, { "w_alias2" });
    b.node("Identity", { "hi" }, { "hi_alias" });
    b.node("MatMul", { "x", "w_alias2" }, { "y" }, "matmul");
    b.node("Identity", { "y" }, { "y_copy" }, "copy");
    b.node("Clip", { "y_copy", "", "hi_alias" }, { "z" }, "clip");
    b.output("z");
    const QString path = b.save(m_dir, QStringLiteral("alias.onnx"));
    IMPORT(g, path);
    QCOMPARE(g.ops.size(), std::size_t(3));
    QCOMPARE(g.ops[0].name, std::string("matmul"));
    QCOMPARE(g.ops[1].name, std::string("copy"));
    QVERIFY(!g.findTensor("w_alias") && !g.findTensor("w_alias2") && !g.findTensor("hi_alias"));
    QCOMPARE(g.tensors[g.ops[0].inputs[1]].name, std::string("w"));
    QCOMPARE(g.tensors[g.ops[2].inputs[1]].name, std::string("hi"));
    QCOMPARE(tensor(g, "y_copy").kind, TensorKind::Activation);
    QCOMPARE(g.tensors[g.outputs[0]].name, std::string("z"));
    QVERIFY2(notesOf(g).find("removed 3 Identity ops that only alias weights") != std::string::npos, notesOf(g).c_str());

    Measurement run;
    runWithWeights(path, g, { 2, 4 }, std::vector<float>(8, 1.0f), run);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(run.opsSynthetic, 0);
    QCOMPARE(run.outputs.size(), std::size_t(1));
    const auto* z = reinterpret_cast<const float*>(run.outputs[0].data.data());
    for (int i = 0; i < 6; ++i) // x·w = 2 everywhere, clipped from above at 0.7 (no lower bound)
        QCOMPARE(z[i], 0.7f);

    // An alias a subgraph reads by name stays, with its Identity op: the subgraph names it.
    ModelBuilder c;
    c.input("cond", TensorProto::BOOL, {});
    c.floats("b", { 3 }, 1.0f);
    c.node("Identity", { "b" }, { "b_alias" });
    addIfBranches(c.node("If", { "cond" }, { "out" }), "Neg", "Neg", { "b_alias" }, { 3 });
    c.output("out");
    IMPORT(captured, c.save(m_dir, QStringLiteral("alias_captured.onnx")));
    QCOMPARE(captured.ops.size(), std::size_t(2));
    QCOMPARE(captured.ops[0].type, std::string("Identity"));
    QCOMPARE(captured.tensors[captured.ops[1].captured.at(0)].name, std::string("b_alias"));
    QVERIFY(notesOf(captured).find("removed") == std::string::npos);
}

// What torch's QDQ export writes for a zero point: ConstantOfShape -> Cast. Import folds both into
// one uint8 weight; the executor loads the folded values in the weight's own type, so the run sees
// zero point 5 (random weight contents would be 0), and the export writes the values back.
void TestOnnxImport::foldedConstantsHoldTheirValues()
{
    ModelBuilder b(13);
    b.input("x", TensorProto::FLOAT, { 1, 3, 2 });
    b.floats("scale", { 3 }, 0.5f);
    constInts(b, "channels", { 3 });
    fillWith(b.node("ConstantOfShape", { "channels" }, { "zp64" }), 5);
    attr(b.node("Cast", { "zp64" }, { "zp" }), "to", std::int64_t(TensorProto::UINT8));
    attr(b.node("QuantizeLinear", { "x", "scale", "zp" }, { "q" }, "quantize"), "axis", std::int64_t(1));
    b.output("q", TensorProto::UINT8);
    const QString path = b.save(m_dir, QStringLiteral("zeropoint.onnx"));
    IMPORT(g, path);
    QCOMPARE(g.ops.size(), std::size_t(1));
    QCOMPARE(g.ops[0].name, std::string("quantize"));
    QCOMPARE(tensor(g, "zp").kind, TensorKind::Weight);
    QCOMPARE(tensor(g, "zp").dtype, DType::UInt8);
    QCOMPARE(tensor(g, "zp").values, (std::vector<std::int64_t> { 5, 5, 5 }));
    QVERIFY(!g.findTensor("zp64") && !g.findTensor("channels"));

    Measurement run;
    runWithWeights(path, g, { 1, 3, 2 }, { 0.0f, 1.0f, -1.0f, 2.0f, 0.25f, 10.0f }, run);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(run.opsReal, 1);
    const auto& q = run.outputs.at(0).data;
    const std::vector<int> expected { 5, 7, 3, 9, 5, 25 }; // x / 0.5 + 5, ties to even (0.5 -> 0)
    QCOMPARE(q.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i)
        QCOMPARE(int(q[i]), expected[i]);

    // Exported, the folded weight keeps its values: the re-import reads 5 again, not zeros.
    const auto exported = m_dir.filePath(QStringLiteral("zeropoint_export.onnx")).toStdString();
    QVERIFY(exportOnnx(g, exported));
    IMPORT(again, QString::fromStdString(exported));
    QCOMPARE(tensor(again, "zp").kind, TensorKind::Weight);
    auto againData = loadTensorData(exported, again);
    QVERIFY2(againData, againData ? "" : againData.error().message.c_str());
    const auto zp = againData->weights.at(*again.findTensor("zp"));
    QCOMPARE(zp.data.size(), std::size_t(3));
    QCOMPARE(int(zp.data[2]), 5);
}

void TestOnnxImport::externalAndSparseWeights()
{
    // Weight sizes come from dims and data type; external data files are never opened.
    ModelBuilder b;
    b.input("x", TensorProto::FLOAT, { 10, 10 });
    auto* w = b.graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(TensorProto::FLOAT16);
    w->add_dims(10);
    w->add_dims(300);
    w->set_data_location(TensorProto::EXTERNAL);
    auto* location = w->add_external_data();
    location->set_key("location");
    location->set_value("does_not_exist.bin");
    auto* sparse = b.graph()->add_sparse_initializer();
    sparse->add_dims(10);
    sparse->add_dims(10);
    sparse->mutable_values()->set_name("s");
    sparse->mutable_values()->set_data_type(TensorProto::FLOAT);
    sparse->mutable_values()->add_dims(2);
    sparse->mutable_values()->add_float_data(1.0f);
    sparse->mutable_values()->add_float_data(2.0f);
    sparse->mutable_indices()->set_data_type(TensorProto::INT64);
    sparse->mutable_indices()->add_dims(2);
    sparse->mutable_indices()->add_int64_data(3);
    sparse->mutable_indices()->add_int64_data(42);
    b.node("Add", { "x", "s" }, { "sum" });
    auto& cast = b.node("Cast", { "sum" }, { "half" });
    attr(cast, "to", std::int64_t(TensorProto::FLOAT16));
    b.node("MatMul", { "half", "w" }, { "y" });
    b.output("y", TensorProto::FLOAT16);
    IMPORT(g, b.save(m_dir, QStringLiteral("external.onnx")));
    QCOMPARE(tensor(g, "w").kind, TensorKind::Weight);
    QCOMPARE(tensor(g, "w").size, Bytes(10 * 300 * 2));
    QCOMPARE(tensor(g, "s").kind, TensorKind::Weight);
    QCOMPARE(tensor(g, "s").size, Bytes(10 * 10 * 4)); // dense size
    QCOMPARE(tensor(g, "y").shape, (std::vector<std::int64_t> { 10, 300 }));
    QCOMPARE(tensor(g, "y").dtype, DType::Float16);
}

void TestOnnxImport::symbolicBatch()
{
    const QString path = convModel({ "batch", 3, 16, 16 }).save(m_dir, QStringLiteral("batch.onnx"));
    const auto unbound = importOnnx(path.toStdString());
    QVERIFY(!unbound);
    QCOMPARE(unbound.error().code, ErrorCode::InvalidModel);
    const std::string& message = unbound.error().message;
    QVERIFY2(message.find(path.toStdString()) != std::string::npos, message.c_str());
    QVERIFY2(message.find("'y' (from Conv_0)") != std::string::npos, message.c_str());
    QVERIFY2(message.find("batch") != std::string::npos, message.c_str());
    QVERIFY2(message.find("--dim batch=") != std::string::npos, message.c_str());

    ShapeBindings bindings;
    bindings.dims["batch"] = 4;
    IMPORT(g, path, bindings);
    QCOMPARE(tensor(g, "x").shape, (std::vector<std::int64_t> { 4, 3, 16, 16 }));
    QCOMPARE(tensor(g, "p").size, Bytes(4 * 8 * 8 * 8 * 4));
}

void TestOnnxImport::inputShapes()
{
    const QString path = convModel({ -1, 3, -1, -1 }).save(m_dir, QStringLiteral("open.onnx"));
    const auto unbound = importOnnx(path.toStdString());
    QVERIFY(!unbound);
    QVERIFY2(unbound.error().message.find("--input-shape x=") != std::string::npos, unbound.error().message.c_str());

    ShapeBindings bindings;
    bindings.inputShapes["x"] = { 2, 3, 8, 8 };
    IMPORT(g, path, bindings);
    QCOMPARE(tensor(g, "y").shape, (std::vector<std::int64_t> { 2, 8, 8, 8 }));
    QCOMPARE(tensor(g, "p").size, Bytes(2 * 8 * 4 * 4 * 4));

    // Overriding a fixed dimension replans the whole model.
    const QString fixed = convModel({ 1, 3, 32, 32 }).save(m_dir, QStringLiteral("fixed.onnx"));
    ShapeBindings bigger;
    bigger.inputShapes["x"] = { 8, 3, 32, 32 };
    IMPORT(h, fixed, bigger);
    QCOMPARE(tensor(h, "p").shape, (std::vector<std::int64_t> { 8, 8, 16, 16 }));
}

void TestOnnxImport::nonZeroIsEstimated()
{
    ModelBuilder b;
    b.input("x", TensorProto::FLOAT, { 3, 4 });
    b.node("NonZero", { "x" }, { "nz" });
    b.node("Transpose", { "nz" }, { "idx" });
    b.node("GatherND", { "x", "idx" }, { "vals" });
    b.output("vals");
    IMPORT(g, b.save(m_dir, QStringLiteral("nonzero.onnx")));
    QCOMPARE(tensor(g, "nz").shape, (std::vector<std::int64_t> { 2, 12 })); // [rank, numel] upper bound
    QVERIFY(tensor(g, "nz").estimated);
    QVERIFY(tensor(g, "idx").estimated); // derived from an estimate
    QVERIFY(tensor(g, "vals").estimated);
    QCOMPARE(tensor(g, "vals").size, Bytes(12 * 4));
    QVERIFY(!tensor(g, "x").estimated);
    QVERIFY2(notesOf(g).find("data-dependent shapes, sized by an estimate (an upper bound where one exists): 'nz' (NonZero_0); 2 tensors computed from it are bounded too (240 B in all)")
            != std::string::npos,
        notesOf(g).c_str());
}

void TestOnnxImport::ifCapturesOuterTensors()
{
    ModelBuilder b;
    b.input("cond", TensorProto::BOOL, {});
    b.input("x", TensorProto::FLOAT, { 2, 3 });
    b.input("y", TensorProto::FLOAT, { 2, 3 });
    b.node("Relu", { "x" }, { "rx" });
    addIfBranches(b.node("If", { "cond" }, { "out" }), "Add", "Sub", { "rx", "y" }, { 2, 3 });
    b.output("out");
    IMPORT(g, b.save(m_dir, QStringLiteral("if.onnx")));
    const auto& op = g.ops[1];
    QCOMPARE(op.type, std::string("If"));
    QCOMPARE(op.inputs.size(), std::size_t(1));
    QCOMPARE(op.captured.size(), std::size_t(2));
    QCOMPARE(g.tensors[op.captured[0]].name, std::string("rx"));
    QCOMPARE(g.tensors[op.captured[1]].name, std::string("y"));
    QCOMPARE(tensor(g, "out").size, Bytes(2 * 3 * 4));
    QVERIFY2(notesOf(g).find("1 control-flow op with subgraphs") != std::string::npos, notesOf(g).c_str());

    // The graph keeps what the branches read, not the branches: ONNX export refuses rather than
    // writing another model.
    const QString copy = m_dir.filePath(QStringLiteral("if_copy.onnx"));
    const auto exported = exportOnnx(g, copy.toStdString());
    QVERIFY(!exported);
    QVERIFY2(exported.error().message.find("op 'If_1' (If) runs subgraphs") != std::string::npos, exported.error().message.c_str());
    QVERIFY(!QFile::exists(copy));
}

void TestOnnxImport::loopScanOutput()
{
    // for i in range(5): scan.append(x + i); 5 comes from a folded ReduceSum.
    ModelBuilder b(13);
    b.input("x", TensorProto::FLOAT, { 3 });
    b.ints("parts", { 2, 3 });
    attr(b.node("ReduceSum", { "parts" }, { "trips" }), "keepdims", std::int64_t(0));
    auto* body = loopBody(b.node("Loop", { "trips", "", "x" }, { "final", "stacked" }));
    addValue(body->mutable_input(), "x_in", TensorProto::FLOAT, { 3 });
    auto node = [&](const char* type, std::vector<std::string> in, const char* out) { return bodyNode(body, type, std::move(in), out); };
    node("Identity", { "cond_in" }, "cond_out");
    attr(*node("Cast", { "i" }, "fi"), "to", std::int64_t(TensorProto::FLOAT));
    node("Add", { "x_in", "fi" }, "x_out");
    node("Identity", { "x_out" }, "scan_out");
    addValue(body->mutable_output(), "cond_out", TensorProto::BOOL, {});
    addValue(body->mutable_output(), "x_out", TensorProto::FLOAT, { 3 });
    addValue(body->mutable_output(), "scan_out", TensorProto::FLOAT, { 3 });
    b.output("final");
    b.output("stacked");
    IMPORT(g, b.save(m_dir, QStringLiteral("loop.onnx")));
    QCOMPARE(tensor(g, "final").shape, (std::vector<std::int64_t> { 3 }));
    QCOMPARE(tensor(g, "stacked").shape, (std::vector<std::int64_t> { 5, 3 }));
    QVERIFY(!tensor(g, "stacked").estimated); // no condition input: exactly M iterations
}

// acc = concat(acc, x[0 : i + 1]) for i in range(4): one body inference, with i unknown, cannot
// size the slice; inferring the body once per iteration (its number known) gives 1 + 2 + 3 + 4
// elements exactly. Its condition, cond_in passed on, is known true in every iteration.
void TestOnnxImport::loopGrowingByItsIterationNumberIsInferredPerIteration()
{
    ModelBuilder b(17);
    b.input("x", TensorProto::FLOAT, { 8 });
    b.ints("trips", { 4 }, {});
    b.floats("empty", { 0 }, 0.0f);
    b.ints("keep", { 1 }, {});
    attr(b.node("Cast", { "keep" }, { "keep_going" }), "to", std::int64_t(TensorProto::BOOL));
    auto* body = loopBody(b.node("Loop", { "trips", "keep_going", "empty" }, { "acc" }));
    addValue(body->mutable_input(), "acc_in", TensorProto::FLOAT, { Dim { -1 } });
    auto node = [&](const char* type, std::vector<std::string> in, const char* out) { return bodyNode(body, type, std::move(in), out); };
    node("Identity", { "cond_in" }, "cond_out");
    auto* one = node("Constant", {}, "one");
    auto* value = one->add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    value->mutable_t()->set_data_type(TensorProto::INT64);
    value->mutable_t()->add_dims(1);
    value->mutable_t()->add_int64_data(1);
    auto* zero = node("Constant", {}, "zero");
    *zero->mutable_attribute() = one->attribute();
    zero->mutable_attribute(0)->mutable_t()->set_int64_data(0, 0);
    node("Add", { "i", "one" }, "end");
    node("Slice", { "x", "zero", "end" }, "part");
    attr(*node("Concat", { "acc_in", "part" }, "acc_out"), "axis", std::int64_t(0));
    addValue(body->mutable_output(), "cond_out", TensorProto::BOOL, {});
    auto* acc = body->add_output();
    acc->set_name("acc_out");
    ModelBuilder::setType(acc->mutable_type(), TensorProto::FLOAT, nullptr);
    b.output("acc");
    IMPORT(g, b.save(m_dir, QStringLiteral("loop_by_iteration.onnx")));
    QCOMPARE(tensor(g, "acc").shape, (std::vector<std::int64_t> { 10 }));
    QVERIFY(!tensor(g, "acc").estimated);
}

// Scan-8 (opset 8): states and scan inputs carry a batch axis first. Each batch entry scans its own
// rows: y[b] sums x[b, t, :] over t, z[b, t] is the running sum. A sequence_lens shorter than
// the scan axis is refused (the Scan runs synthetic, saying so).
void TestOnnxImport::scan8RunsEachBatchEntry()
{
    for (const bool shortLens : { false, true }) {
        ModelBuilder b(8);
        b.input("initial", TensorProto::FLOAT, { 2, 2 });
        b.input("x", TensorProto::FLOAT, { 2, 3, 2 });
        if (shortLens)
            b.ints("lens", { 3, 2 });
        auto& scan = b.node("Scan", { shortLens ? "lens" : "", "initial", "x" }, { "y", "z" });
        attr(scan, "num_scan_inputs", std::int64_t(1));
        auto* a = scan.add_attribute();
        a->set_name("body");
        a->set_type(onnx::AttributeProto::GRAPH);
        auto* body = a->mutable_g();
        body->set_name("body");
        addValue(body->mutable_input(), "sum_in", TensorProto::FLOAT, { 2 });
        addValue(body->mutable_input(), "next", TensorProto::FLOAT, { 2 });
        bodyNode(body, "Add", { "sum_in", "next" }, "sum_out");
        bodyNode(body, "Identity", { "sum_out" }, "scan_out");
        addValue(body->mutable_output(), "sum_out", TensorProto::FLOAT, { 2 });
        addValue(body->mutable_output(), "scan_out", TensorProto::FLOAT, { 2 });
        b.output("y");
        b.output("z");
        const QString path = b.save(m_dir, QStringLiteral("scan8.onnx"));
        IMPORT(g, path);
        QCOMPARE(tensor(g, "z").shape, (std::vector<std::int64_t> { 2, 3, 2 }));
        std::string why;
        auto w = runnable(g, path, why);
        QVERIFY2(w, why.c_str());
        const auto& plan = w->plan;
        QVERIFY(validatePlan(w->workload.problem, plan).ok());
        auto& options = w->options;
        const auto floats = [](std::vector<std::int64_t> shape, std::vector<float> v) {
            HostTensor h { DType::Float32, std::move(shape), std::vector<std::byte>(v.size() * sizeof(float)) };
            std::memcpy(h.data.data(), v.data(), h.data.size());
            return h;
        };
        options.inputs["initial"] = floats({ 2, 2 }, { 0, 0, 100, 100 });
        options.inputs["x"] = floats({ 2, 3, 2 }, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 });
        const auto& wl = w->workload;
        const auto run = runOnCpu(*wl.graph, wl.schedule, wl.problem, plan, wl.bufferTensor, options);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        if (shortLens) {
            QCOMPARE(run->opsSynthetic, 1);
            QVERIFY2(run->ops.front().refusal == "a Scan-8 with sequence_lens shorter than its scan axis is not run",
                run->ops.front().refusal.c_str());
            continue;
        }
        QCOMPARE(run->opsSynthetic, 0);
        const auto values = [](const HostTensor& h) {
            std::vector<float> v(h.data.size() / sizeof(float));
            std::memcpy(v.data(), h.data.data(), h.data.size());
            return v;
        };
        QCOMPARE(values(run->outputs[0]), (std::vector<float> { 9, 12, 127, 130 }));
        QCOMPARE(values(run->outputs[1]), (std::vector<float> { 1, 2, 4, 6, 9, 12, 107, 108, 116, 118, 127, 130 }));
    }
}

// A carried value whose body result comes from an op no rule sizes (a custom-domain op): its
// entry shape is only a guess that it keeps its shape, so the Loop's output is an estimate (the
// run checks it), not the entry's exact size.
void TestOnnxImport::loopCarriedShapeTheBodyCannotTellIsAnEstimate()
{
    ModelBuilder b(17);
    b.input("x", TensorProto::FLOAT, { 3 });
    b.ints("trips", { 4 }, {});
    auto* body = loopBody(b.node("Loop", { "trips", "", "x" }, { "final" }));
    addValue(body->mutable_input(), "x_in", TensorProto::FLOAT, { 3 });
    bodyNode(body, "Identity", { "cond_in" }, "cond_out");
    bodyNode(body, "Mystery", { "x_in" }, "x_out")->set_domain("com.example");
    addValue(body->mutable_output(), "cond_out", TensorProto::BOOL, {});
    auto* carried = body->add_output();
    carried->set_name("x_out");
    ModelBuilder::setType(carried->mutable_type(), TensorProto::FLOAT, nullptr); // no shape stated
    b.output("final");
    auto* opset = b.model().add_opset_import();
    opset->set_domain("com.example");
    opset->set_version(1);
    IMPORT(g, b.save(m_dir, QStringLiteral("loop_mystery.onnx")));
    QCOMPARE(tensor(g, "final").shape, (std::vector<std::int64_t> { 3 }));
    QVERIFY(tensor(g, "final").estimated);
    QVERIFY2(notesOf(g).find("sized by an estimate") != std::string::npos, notesOf(g).c_str());
}

// Detection exporters wrap batched NMS in an If (empty result when there are no boxes): the
// else branch's NonMaxSuppression is data-dependent, so ONNX inference leaves the If's output
// unknown; MemPlan infers the branch itself with the outer facts and bounds it.
void TestOnnxImport::dataDependentOpsInsideSubgraphs()
{
    ModelBuilder b(17);
    b.input("boxes", TensorProto::FLOAT, { 1, 100, 4 });
    b.input("scores", TensorProto::FLOAT, { 1, 1, 100 });
    b.input("x", TensorProto::FLOAT, { 3 });
    b.ints("per_class", { 10 }); // an outer constant the branch reads: the bound is 10 boxes, not 100
    b.ints("trips", { 5 }, {});
    b.node("ReduceMax", { "scores" }, { "best" });
    b.floats("zero", {}, 0.0f);
    b.node("Less", { "best", "zero" }, { "none" });
    auto& iff = b.node("If", { "none" }, { "keep" });
    auto graphAttr = [](onnx::NodeProto& node, const char* name) {
        auto* a = node.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::GRAPH);
        a->mutable_g()->set_name(name);
        return a->mutable_g();
    };
    auto add = [](onnx::GraphProto* g, const char* type, std::vector<std::string> in, const char* out) {
        auto* n = g->add_node();
        n->set_op_type(type);
        for (auto& i : in)
            n->add_input(i);
        n->add_output(out);
        return n;
    };
    const auto value = addValue;
    auto* thenG = graphAttr(iff, "then_branch");
    auto* empty = add(thenG, "Constant", {}, "nothing");
    auto* t = empty->add_attribute();
    t->set_name("value");
    t->set_type(onnx::AttributeProto::TENSOR);
    t->mutable_t()->set_data_type(TensorProto::INT64);
    t->mutable_t()->add_dims(0);
    value(thenG->mutable_output(), "nothing", TensorProto::INT64, { "then_dim" });
    auto* elseG = graphAttr(iff, "else_branch");
    add(elseG, "NonMaxSuppression", { "boxes", "scores", "per_class" }, "selected");
    auto* column = add(elseG, "Constant", {}, "column");
    auto* c = column->add_attribute();
    c->set_name("value");
    c->set_type(onnx::AttributeProto::TENSOR);
    c->mutable_t()->set_data_type(TensorProto::INT64);
    c->mutable_t()->add_int64_data(2);
    attr(*add(elseG, "Gather", { "selected", "column" }, "picked"), "axis", std::int64_t(1));
    value(elseG->mutable_output(), "picked", TensorProto::INT64, { "else_dim" });
    b.node("Cast", { "keep" }, { "kept" });
    attr(*std::prev(b.graph()->mutable_node()->end()), "to", std::int64_t(TensorProto::FLOAT));

    // A Loop whose body runs NonZero: its scan output is [trips, 1, <=3].
    auto& loop = b.node("Loop", { "trips", "", "x" }, { "final", "stacked" });
    auto* body = graphAttr(loop, "body");
    value(body->mutable_input(), "i", TensorProto::INT64, {});
    value(body->mutable_input(), "cond_in", TensorProto::BOOL, {});
    value(body->mutable_input(), "x_in", TensorProto::FLOAT, { 3 });
    add(body, "Identity", { "cond_in" }, "cond_out");
    add(body, "Relu", { "x_in" }, "x_out");
    add(body, "NonZero", { "x_out" }, "nz");
    value(body->mutable_output(), "cond_out", TensorProto::BOOL, {});
    value(body->mutable_output(), "x_out", TensorProto::FLOAT, { 3 });
    value(body->mutable_output(), "nz", TensorProto::INT64, { 1, "nz_dim" });
    // Branches that only pass on an outer upper bound: their result is an upper bound too.
    b.node("NonZero", { "x" }, { "outer_nz" });
    auto& pass = b.node("If", { "none" }, { "passed" });
    add(graphAttr(pass, "then_branch"), "Identity", { "outer_nz" }, "same");
    value(pass.mutable_attribute(0)->mutable_g()->mutable_output(), "same", TensorProto::INT64, { 1, "a" });
    add(graphAttr(pass, "else_branch"), "Neg", { "outer_nz" }, "negated");
    value(pass.mutable_attribute(1)->mutable_g()->mutable_output(), "negated", TensorProto::INT64, { 1, "b" });
    b.output("kept");
    b.output("final");
    b.output("stacked");
    b.output("passed", TensorProto::INT64);
    IMPORT(g, b.save(m_dir, QStringLiteral("nested.onnx")));
    QCOMPARE(tensor(g, "keep").shape, (std::vector<std::int64_t> { 10 })); // max(0, 10 boxes of 1 class)
    QVERIFY(tensor(g, "keep").estimated);
    QCOMPARE(tensor(g, "kept").size, Bytes(10 * 4));
    QVERIFY(tensor(g, "kept").estimated);
    QCOMPARE(tensor(g, "final").shape, (std::vector<std::int64_t> { 3 }));
    QVERIFY(!tensor(g, "final").estimated);
    QCOMPARE(tensor(g, "stacked").shape, (std::vector<std::int64_t> { 5, 1, 3 }));
    QVERIFY(tensor(g, "stacked").estimated);
    QCOMPARE(tensor(g, "passed").shape, (std::vector<std::int64_t> { 1, 3 }));
    QVERIFY(tensor(g, "passed").estimated);
    QVERIFY(unsizedTensors(g).empty());
}

void TestOnnxImport::sequencesAreEstimated()
{
    ModelBuilder b(13);
    b.input("a", TensorProto::FLOAT, { 2, 3 });
    b.input("b", TensorProto::FLOAT, { 4, 3 });
    b.node("SequenceConstruct", { "a", "b" }, { "seq" });
    b.ints("pos", { 1 }, {});
    b.node("SequenceAt", { "seq", "pos" }, { "item" });
    auto& cat = b.node("ConcatFromSequence", { "seq" }, { "all" });
    attr(cat, "axis", std::int64_t(0));
    b.node("Relu", { "item" }, { "r" });
    b.output("r");
    b.output("all");
    IMPORT(g, b.save(m_dir, QStringLiteral("sequence.onnx")));
    QCOMPARE(tensor(g, "seq").size, Bytes((6 + 12) * 4)); // sum of its tensors
    QVERIFY(!tensor(g, "seq").rankKnown);
    QCOMPARE(tensor(g, "all").size, Bytes((6 + 12) * 4));
    // The list keeps each element's shape: element 1 and the concatenation are exact.
    QCOMPARE(tensor(g, "item").shape, (std::vector<std::int64_t> { 4, 3 }));
    QVERIFY(!tensor(g, "item").estimated);
    QCOMPARE(tensor(g, "all").shape, (std::vector<std::int64_t> { 6, 3 }));
    QVERIFY2(notesOf(g).find("sequence") != std::string::npos, notesOf(g).c_str());
}

void TestOnnxImport::exportRoundTrip()
{
    // A Reshape's target shape from an initializer and from a Constant node: the exported file
    // holds their values (not zeros), so it plans again.
    {
        ModelBuilder b;
        b.input("x", TensorProto::FLOAT, { 3, 4 });
        b.ints("shape", { 2, 6 });
        b.node("Reshape", { "x", "shape" }, { "y" });
        auto& constant = b.node("Constant", {}, { "flat" });
        auto* value = constant.add_attribute();
        value->set_name("value");
        value->set_type(onnx::AttributeProto::TENSOR);
        value->mutable_t()->set_data_type(TensorProto::INT64);
        value->mutable_t()->add_dims(1);
        value->mutable_t()->add_int64_data(12);
        b.node("Reshape", { "y", "flat" }, { "z" });
        b.output("z");
        IMPORT(first, b.save(m_dir, QStringLiteral("shape_weights.onnx")));
        QCOMPARE(tensor(first, "shape").values, (std::vector<std::int64_t> { 2, 6 }));
        QCOMPARE(tensor(first, "flat").values, (std::vector<std::int64_t> { 12 }));
        const QString copy = m_dir.filePath(QStringLiteral("copy_shape_weights.onnx"));
        const auto exported = exportOnnx(first, copy.toStdString());
        QVERIFY2(exported, exported ? "" : exported.error().message.c_str());
        IMPORT(second, copy);
        QCOMPARE(tensor(second, "shape").values, (std::vector<std::int64_t> { 2, 6 }));
        QCOMPARE(tensor(second, "y").shape, (std::vector<std::int64_t> { 2, 6 }));
        QCOMPARE(tensor(second, "z").size, Bytes(12 * 4));
    }
    for (const char* name : { "conv.onnx", "reshape.onnx", "opset18.onnx", "sequence.onnx" }) { // if.onnx: refused (ifCapturesOuterTensors)
        const QString path = m_dir.filePath(QLatin1String(name));
        if (!QFile::exists(path))
            QSKIP("runs after the tests that write its models");
        IMPORT(first, path);
        const QString copy = m_dir.filePath(QStringLiteral("copy_") + QLatin1String(name));
        const auto exported = exportOnnx(first, copy.toStdString());
        QVERIFY2(exported, exported ? "" : exported.error().message.c_str());
        IMPORT(second, copy);
        QCOMPARE(second.tensors.size(), first.tensors.size());
        QCOMPARE(second.ops.size(), first.ops.size());
        for (const auto& t : first.tensors) {
            const auto& u = tensor(second, t.name);
            QVERIFY2(u.size == t.size, (std::string(name) + ": " + t.name).c_str());
            QCOMPARE(u.kind, t.kind);
        }
        for (std::size_t i = 0; i < first.ops.size(); ++i) {
            QCOMPARE(second.ops[i].name, first.ops[i].name);
            QCOMPARE(second.ops[i].type, first.ops[i].type);
            QCOMPARE(second.ops[i].attributes, first.ops[i].attributes);
        }
    }
}

void TestOnnxImport::exportHandMadeGraph()
{
    // Ops ONNX does not know and a tensor with only a byte size: the declared types carry sizes.
    Graph g;
    g.name = "hand";
    g.tensors = { Tensor { "in", DType::Float16, { 1, 64 }, true, 128, TensorKind::Input },
                  Tensor { "w", DType::Float32, { 64, 64 }, true, 64 * 64 * 4, TensorKind::Weight },
                  Tensor { "blob", DType::Undefined, {}, false, 1000, TensorKind::Activation },
                  Tensor { "out", DType::Float32, { 1, 64 }, true, 256, TensorKind::Output } };
    Op a { "mix", "MyMixer", "", {}, { 0, 1 }, { 2 }, {} };
    a.attributes["kernel_shape"].ints = { 3 };
    a.attributes["gain"].floats = { 0.5f };
    Op c { "finish", "MyFinish", "com.example", {}, { 2 }, { 3 }, {} };
    g.ops = { a, c };
    g.inputs = { 0 };
    g.outputs = { 3 };
    const QString path = m_dir.filePath(QStringLiteral("hand.onnx"));
    const auto exported = exportOnnx(g, path.toStdString());
    QVERIFY2(exported, exported ? "" : exported.error().message.c_str());
    IMPORT(back, path);
    for (const auto& t : g.tensors) {
        QCOMPARE(tensor(back, t.name).size, t.size);
        QCOMPARE(tensor(back, t.name).kind, t.kind);
    }
    QCOMPARE(back.ops[1].domain, std::string("com.example"));
    QCOMPARE(back.ops[0].attributes.at("kernel_shape").ints, (std::vector<std::int64_t> { 3 }));
    QCOMPARE(back.ops[0].attributes.at("gain").floats, (std::vector<float> { 0.5f }));

    const QString nowhere = m_dir.filePath(QStringLiteral("no/such/folder/x.onnx"));
    const auto failed = exportOnnx(g, nowhere.toStdString());
    QVERIFY(!failed);
    QCOMPARE(failed.error().code, ErrorCode::Io);
    QVERIFY(failed.error().message.find(nowhere.toStdString()) != std::string::npos);
}

void TestOnnxImport::exportKeepsOptionalSlots()
{
    // An optional input or output left out before a given one keeps the given one in its ONNX slot
    // through an ONNX and a JSON round trip, and list attributes stay lists (one element, strings):
    // Clip(x, "", max) must not read max as min, an LSTM writing only Y_h must not call it Y.
    ModelBuilder b;
    auto* example = b.model().add_opset_import();
    example->set_domain("com.example");
    example->set_version(1);
    b.input("x", TensorProto::FLOAT, { 2, 3, 4 }); // sequence 2, batch 3, 4 features
    b.floats("max", {}, 1.0f);
    b.node("Clip", { "x", "", "max" }, { "c" }, "clip");
    b.floats("W", { 1, 20, 4 });
    b.floats("R", { 1, 20, 5 });
    auto& lstm = b.node("LSTM", { "c", "W", "R" }, { "", "h" }, "lstm");
    attr(lstm, "hidden_size", std::int64_t(5));
    auto* activations = lstm.add_attribute();
    activations->set_name("activations");
    activations->set_type(onnx::AttributeProto::STRINGS);
    for (const char* f : { "Sigmoid", "Tanh", "Tanh" })
        activations->add_strings(f);
    b.input("img", TensorProto::FLOAT, { 1, 1, 2, 2 });
    b.floats("scales", { 4 }, 2.0f);
    b.node("Resize", { "img", "", "scales" }, { "up" }, "resize");
    auto& mix = b.node("Mix", { "up" }, { "m" }, "mix");
    mix.set_domain("com.example");
    attr(mix, "widths", std::vector<std::int64_t> { 4 });
    auto* labels = mix.add_attribute(); // elements holding ',' or nothing stay as they are
    labels->set_name("labels");
    labels->set_type(onnx::AttributeProto::STRINGS);
    for (const char* label : { "a,b", "", "c" })
        labels->add_strings(label);
    const std::vector<Dim> mixed { 1, 1, 4, 4 }; // ONNX knows nothing of Mix: the file states its output
    auto* stated = b.graph()->add_value_info();
    stated->set_name("m");
    ModelBuilder::setType(stated->mutable_type(), TensorProto::FLOAT, &mixed);
    b.output("h");
    b.output("m");
    IMPORT(first, b.save(m_dir, QStringLiteral("slots.onnx")));
    QCOMPARE(first.ops[0].inputSlots, (std::vector<int> { 0, 2 }));
    QCOMPARE(first.ops[1].inputSlots, std::vector<int>());
    QCOMPARE(first.ops[1].outputSlots, (std::vector<int> { 1 }));
    QCOMPARE(first.ops[2].inputSlots, (std::vector<int> { 0, 2 }));
    QCOMPARE(tensor(first, "h").size, Bytes(1 * 3 * 5 * 4));
    QCOMPARE(first.ops[1].attributes.at("activations").strings, (std::vector<std::string> { "Sigmoid", "Tanh", "Tanh" }));
    QCOMPARE(first.ops[3].attributes.at("labels").strings, (std::vector<std::string> { "a,b", "", "c" }));
    QVERIFY(first.ops[1].attributes.at("activations").list);
    QVERIFY(first.ops[3].attributes.at("widths").list);
    QVERIFY(!first.ops[1].attributes.at("hidden_size").list);

    const QString copy = m_dir.filePath(QStringLiteral("copy_slots.onnx"));
    const auto exported = exportOnnx(first, copy.toStdString());
    QVERIFY2(exported, exported ? "" : exported.error().message.c_str());
    onnx::ModelProto written;
    std::ifstream in(copy.toStdString(), std::ios::binary);
    QVERIFY(written.ParseFromIstream(&in));
    const auto& nodes = written.graph().node();
    QCOMPARE(nodes[0].input_size(), 3);
    QCOMPARE(nodes[0].input(1), std::string());
    QCOMPARE(nodes[0].input(2), std::string("max"));
    QCOMPARE(nodes[1].output_size(), 2);
    QCOMPARE(nodes[1].output(0), std::string());
    QCOMPARE(nodes[2].input(1), std::string());
    auto attribute = [](const onnx::NodeProto& node, const std::string& name) {
        const auto& all = node.attribute();
        const auto it = std::find_if(all.begin(), all.end(), [&](const auto& a) { return a.name() == name; });
        return it != all.end() ? *it : onnx::AttributeProto();
    };
    QCOMPARE(attribute(nodes[1], "activations").type(), onnx::AttributeProto::STRINGS);
    QCOMPARE(attribute(nodes[1], "activations").strings_size(), 3);
    QCOMPARE(attribute(nodes[1], "activations").strings(2), std::string("Tanh"));
    QCOMPARE(attribute(nodes[3], "widths").type(), onnx::AttributeProto::INTS);
    QCOMPARE(attribute(nodes[3], "labels").strings_size(), 3);
    QCOMPARE(attribute(nodes[3], "labels").strings(0), std::string("a,b"));

    IMPORT(second, copy);
    const auto json = parseJsonGraph(exportJsonGraph(first), "slots.json");
    QVERIFY2(json, json ? "" : json.error().message.c_str());
    for (const Graph* back : { &second, &*json }) {
        QCOMPARE(back->ops.size(), first.ops.size());
        for (std::size_t i = 0; i < first.ops.size(); ++i) {
            const auto& a = first.ops[i];
            const auto& z = back->ops[i];
            QCOMPARE(slotNames(*back, z.inputs, z.inputSlots), slotNames(first, a.inputs, a.inputSlots));
            QCOMPARE(slotNames(*back, z.outputs, z.outputSlots), slotNames(first, a.outputs, a.outputSlots));
            QCOMPARE(z.inputSlots, a.inputSlots);
            QCOMPARE(z.outputSlots, a.outputSlots);
            QVERIFY2(z.attributes == a.attributes, a.name.c_str());
        }
        QCOMPARE(tensor(*back, "h").size, tensor(first, "h").size);
        QCOMPARE(back->opsets, first.opsets);
    }
}

void TestOnnxImport::exportKeepsOpsetsAndFillValues()
{
    // An opset-11 model: its Unsqueeze takes axes as an attribute, which opset 13 made an input, so
    // the export must say opset 11. ConstantOfShape's int64 fill (too large to fold) sets its
    // output's element type: written as ONNX's default float zero it would come back half the size.
    ModelBuilder b(11);
    b.input("x", TensorProto::FLOAT, { 3, 3 });
    b.ints("dims", { 300, 300 });
    auto& fill = b.node("ConstantOfShape", { "dims" }, { "big" }, "fill");
    auto* value = fill.add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    value->mutable_t()->set_data_type(TensorProto::INT64);
    value->mutable_t()->add_dims(1);
    value->mutable_t()->add_int64_data(3);
    attr(b.node("Unsqueeze", { "x" }, { "y" }, "unsqueeze"), "axes", std::vector<std::int64_t> { 0 });
    b.node("Optional", { "y" }, { "maybe" }, "wrap");
    b.node("OptionalGetElement", { "maybe" }, { "z" }, "unwrap");
    b.output("z");
    b.output("big", TensorProto::INT64);
    IMPORT(first, b.save(m_dir, QStringLiteral("opset11.onnx")));
    QCOMPARE(first.opsets.at(""), std::int64_t(11));
    QCOMPARE(first.ops.size(), std::size_t(4));
    QCOMPARE(first.ops[0].attributes.at("value").ints, (std::vector<std::int64_t> { 3 }));
    QCOMPARE(tensor(first, "big").size, Bytes(300 * 300 * 8));
    QCOMPARE(tensor(first, "y").shape, (std::vector<std::int64_t> { 1, 3, 3 }));
    QVERIFY(tensor(first, "maybe").optional);

    const QString copy = m_dir.filePath(QStringLiteral("copy_opset11.onnx"));
    const auto exported = exportOnnx(first, copy.toStdString());
    QVERIFY2(exported, exported ? "" : exported.error().message.c_str());
    onnx::ModelProto written;
    std::ifstream in(copy.toStdString(), std::ios::binary);
    QVERIFY(written.ParseFromIstream(&in));
    QCOMPARE(written.opset_import_size(), 1);
    QCOMPARE(written.opset_import(0).version(), std::int64_t(11));
    QCOMPARE(written.graph().node(0).attribute_size(), 1);
    const auto& filled = written.graph().node(0).attribute(0);
    QCOMPARE(filled.name(), std::string("value"));
    QCOMPARE(filled.t().data_type(), int(TensorProto::INT64));
    for (const auto& vi : written.graph().value_info())
        if (vi.name() == "maybe")
            QVERIFY(vi.type().has_optional_type());

    IMPORT(second, copy);
    QCOMPARE(second.opsets, first.opsets);
    QCOMPARE(tensor(second, "big").dtype, DType::Int64);
    QCOMPARE(tensor(second, "y").shape, (std::vector<std::int64_t> { 1, 3, 3 }));
    QVERIFY(tensor(second, "maybe").optional);
    for (const auto& t : first.tensors)
        QVERIFY2(tensor(second, t.name).size == t.size, t.name.c_str());
}

void TestOnnxImport::badInput_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("code");

    QTest::newRow("missing file") << m_dir.filePath(QStringLiteral("missing.onnx")) << int(ErrorCode::Io);
    QTest::newRow("directory") << m_dir.path() << int(ErrorCode::Io);
    auto write = [&](const QString& name, const QByteArray& bytes) {
        QFile f(m_dir.filePath(name));
        if (!f.open(QIODevice::WriteOnly))
            qFatal("cannot write test file");
        f.write(bytes);
        return f.fileName();
    };
    QTest::newRow("empty file") << write(QStringLiteral("empty.onnx"), {}) << int(ErrorCode::InvalidModel);
    QTest::newRow("text file") << write(QStringLiteral("notes.onnx"), "This is not a model.\nJust some text.\n")
                               << int(ErrorCode::InvalidModel);
    std::string whole;
    convModel({ 1, 3, 32, 32 }).model().SerializeToString(&whole);
    QTest::newRow("truncated") << write(QStringLiteral("truncated.onnx"), QByteArray::fromStdString(whole.substr(0, whole.size() / 2)))
                               << int(ErrorCode::InvalidModel);
    // A model with its first byte changed is corrupt protobuf, not text, though its strings are printable.
    QTest::newRow("first byte changed") << write(QStringLiteral("firstbyte.onnx"), QByteArray::fromStdString("\x7a" + whole.substr(1)))
                                        << int(ErrorCode::InvalidModel);
    QByteArray noise(4096, '\0');
    QRandomGenerator rng(42);
    for (auto& c : noise)
        c = char(rng.bounded(256));
    QTest::newRow("random bytes") << write(QStringLiteral("noise.onnx"), noise) << int(ErrorCode::InvalidModel);

    auto model = [&](const QString& name, auto edit) {
        ModelBuilder b = convModel({ 1, 3, 32, 32 });
        edit(b);
        return b.save(m_dir, name);
    };
    QTest::newRow("unknown dtype") << model(QStringLiteral("dtype.onnx"), [](ModelBuilder& b) {
        b.graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(99);
    }) << int(ErrorCode::InvalidModel);
    QTest::newRow("negative dim") << model(QStringLiteral("negative.onnx"), [](ModelBuilder& b) {
        b.graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(2)->set_dim_value(-5);
    }) << int(ErrorCode::InvalidModel);
    QTest::newRow("overflowing dims") << model(QStringLiteral("overflow.onnx"), [](ModelBuilder& b) {
        auto* shape = b.graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
        shape->mutable_dim(2)->set_dim_value(std::int64_t(1) << 40);
        shape->mutable_dim(3)->set_dim_value(std::int64_t(1) << 40);
    }) << int(ErrorCode::InvalidModel);
    QTest::newRow("negative initializer dim") << model(QStringLiteral("negw.onnx"), [](ModelBuilder& b) {
        b.graph()->mutable_initializer(0)->set_dims(0, -8);
    }) << int(ErrorCode::InvalidModel);
    QTest::newRow("empty graph") << model(QStringLiteral("nodes.onnx"), [](ModelBuilder& b) {
        b.graph()->clear_node();
    }) << int(ErrorCode::InvalidModel);
    QTest::newRow("undefined input") << model(QStringLiteral("undefined.onnx"), [](ModelBuilder& b) {
        b.graph()->mutable_node(1)->set_input(0, "nowhere");
    }) << int(ErrorCode::InvalidModel);
    QTest::newRow("produced twice") << model(QStringLiteral("twice.onnx"), [](ModelBuilder& b) {
        b.graph()->mutable_node(2)->set_output(0, "y");
    }) << int(ErrorCode::InvalidModel);
    QTest::newRow("unknown op, unsized") << model(QStringLiteral("unknownop.onnx"), [](ModelBuilder& b) {
        b.graph()->mutable_node(1)->set_op_type("NoSuchOp");
    }) << int(ErrorCode::InvalidModel);
}

void TestOnnxImport::badInput()
{
    QFETCH(QString, path);
    QFETCH(int, code);
    const auto result = importOnnx(path.toStdString());
    QVERIFY(!result);
    QCOMPARE(int(result.error().code), code);
    const std::string& message = result.error().message;
    QVERIFY2(message.find(path.toStdString()) != std::string::npos, message.c_str());
    QVERIFY2(message.size() > std::size_t(path.size()) + 10, message.c_str()); // says what is wrong
    const bool text = QByteArray(QTest::currentDataTag()) == "text file";
    QVERIFY2((message.find("looks like a text file") != std::string::npos) == text, message.c_str());
}

void TestOnnxImport::bindingErrors()
{
    const QString path = convModel({ "batch", 3, 16, 16 }).save(m_dir, QStringLiteral("bind.onnx"));
    auto check = [&](const ShapeBindings& bindings, const char* expected) {
        const auto result = importOnnx(path.toStdString(), bindings);
        QVERIFY(!result);
        QCOMPARE(result.error().code, ErrorCode::InvalidArgument);
        QVERIFY2(result.error().message.find(expected) != std::string::npos, result.error().message.c_str());
        QVERIFY2(result.error().message.find(path.toStdString()) != std::string::npos, result.error().message.c_str());
    };
    ShapeBindings unknownDim;
    unknownDim.dims["bach"] = 1;
    check(unknownDim, "symbolic dimensions are: batch");
    ShapeBindings negative;
    negative.dims["batch"] = -1;
    check(negative, "'batch' must not be negative");
    ShapeBindings unknownInput;
    unknownInput.inputShapes["z"] = { 1 };
    check(unknownInput, "inputs are: x");
    ShapeBindings wrongRank;
    wrongRank.inputShapes["x"] = { 1, 3 };
    check(wrongRank, "input 'x' has rank 4");
    // A symbolic dimension has one size: a given shape may not contradict the size given for it.
    ShapeBindings contradicting;
    contradicting.dims["batch"] = 2;
    contradicting.inputShapes["x"] = { 3, 3, 16, 16 };
    check(contradicting, "input 'x': its dimension 0 is 'batch', which is given as 2, but the shape given for it, [3,3,16,16], makes it 3");
    ShapeBindings agreeing = contradicting;
    agreeing.dims["batch"] = 3;
    QVERIFY(importOnnx(path.toStdString(), agreeing));

    // A given shape past a dimension the model declares as a number, where a constant was made for
    // the declared size: the message names both shapes.
    ModelBuilder fixed;
    fixed.input("x", TensorProto::FLOAT, { 1, "seq", 4 });
    fixed.floats("w", { 4, 4 });
    fixed.node("MatMul", { "x", "w" }, { "y" }, "project");
    fixed.output("y");
    const QString fixedPath = fixed.save(m_dir, QStringLiteral("bind_fixed.onnx"));
    ShapeBindings narrower;
    narrower.inputShapes["x"] = { 1, 3, 2 };
    const auto contradicted = importOnnx(fixedPath.toStdString(), narrower);
    QVERIFY(!contradicted);
    QVERIFY2(contradicted.error().message.find("'project'") != std::string::npos
            && contradicted.error().message.find("'x' [1,3,2] where the model declares 1xseqx4") != std::string::npos,
        contradicted.error().message.c_str());
    narrower.inputShapes["x"] = { 1, 3, 4 }; // the symbolic dimension alone: fine
    QVERIFY(importOnnx(fixedPath.toStdString(), narrower));

    // ... nor another given shape that names it.
    ModelBuilder two;
    two.input("a", TensorProto::FLOAT, { "n", 4 });
    two.input("b", TensorProto::FLOAT, { "n", 4 });
    two.node("Add", { "a", "b" }, { "y" });
    two.output("y");
    const QString twoPath = two.save(m_dir, QStringLiteral("bind_shared.onnx"));
    ShapeBindings twoSizes;
    twoSizes.inputShapes["a"] = { 2, 4 };
    twoSizes.inputShapes["b"] = { 5, 4 };
    const auto shared = importOnnx(twoPath.toStdString(), twoSizes);
    QVERIFY(!shared);
    QVERIFY2(shared.error().message.find("input 'b': its dimension 0 is 'n', which the shape given for input 'a' makes 2, but the shape given "
                                         "for it, [5,4], makes it 5")
            != std::string::npos,
        shared.error().message.c_str());
}

// A segmentation head traced at 8x8: the pooled branch is resized back to the constant size
// [1,3,8,8] and joined with the feature map. At another --input-shape the Concat cannot run.
void TestOnnxImport::staleStatedShapesComputedAgain()
{
    // A batch edited in the input's declared shape alone: the stored output and intermediate
    // shapes still say batch 1. The ops decide, as in a runtime, and import says so.
    auto build = [&](const QString& name, const std::string& producer) {
        ModelBuilder b;
        b.model().set_producer_name(producer);
        b.input("x", TensorProto::FLOAT, { 3, 4 });
        b.floats("w", { 4, 5 });
        b.node("MatMul", { "x", "w" }, { "h" }, "proj");
        b.node("Relu", { "h" }, { "y" }, "act");
        auto* hidden = b.graph()->add_value_info();
        hidden->set_name("h");
        const std::vector<Dim> batchOne { 1, 5 };
        ModelBuilder::setType(hidden->mutable_type(), TensorProto::FLOAT, &batchOne);
        auto* out = b.graph()->add_output();
        out->set_name("y");
        ModelBuilder::setType(out->mutable_type(), TensorProto::FLOAT, &batchOne);
        return b.save(m_dir, name);
    };
    IMPORT(g, build(QStringLiteral("stale_batch.onnx"), "pytorch"));
    QCOMPARE(tensor(g, "h").shape, (std::vector<std::int64_t> { 3, 5 }));
    QCOMPARE(tensor(g, "y").shape, (std::vector<std::int64_t> { 3, 5 }));
    const auto notes = notesOf(g);
    QVERIFY2(notes.find("states shape [1,5] for 'h'") != std::string::npos, notes.c_str());
    QVERIFY2(notes.find("computes [3,5]") != std::string::npos, notes.c_str());
    // MemPlan's exports state every size on purpose: their stated shapes stand.
    IMPORT(exported, build(QStringLiteral("stated_by_memplan.onnx"), "memplan"));
    QCOMPARE(tensor(exported, "y").shape, (std::vector<std::int64_t> { 1, 5 }));
}

void TestOnnxImport::nodesOutOfOrderAreSorted()
{
    // Written consumers first, as graph-editing tools sometimes leave a file: an If whose branch
    // reads 'h' from the outer graph, a Relu reading it, then the MatMul making it, and a Reshape
    // whose target shape comes from a Constant written after it.
    ModelBuilder b;
    b.input("x", TensorProto::FLOAT, { 2, 8 });
    b.input("cond", TensorProto::BOOL, {});
    b.floats("w", { 8, 6 });
    addIfBranches(b.node("If", { "cond" }, { "picked" }, "choose"), "Neg", "Relu", { "h" }, { 2, 6 });
    b.node("Relu", { "h" }, { "r" }, "act");
    b.node("Reshape", { "r", "target" }, { "y" }, "flat");
    b.node("MatMul", { "x", "w" }, { "h" }, "proj");
    auto& target = b.node("Constant", {}, { "target" }, "target_shape");
    auto* value = target.add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    value->mutable_t()->set_data_type(TensorProto::INT64);
    value->mutable_t()->add_dims(1);
    value->mutable_t()->add_int64_data(-1);
    b.output("y");
    b.output("picked");
    IMPORT(g, b.save(m_dir, QStringLiteral("out_of_order.onnx")));
    QCOMPARE(tensor(g, "y").shape, (std::vector<std::int64_t> { 12 }));
    QCOMPARE(tensor(g, "picked").shape, (std::vector<std::int64_t> { 2, 6 }));
    std::vector<std::string> order;
    for (const auto& op : g.ops)
        order.push_back(op.name);
    QCOMPARE(order, (std::vector<std::string> { "proj", "choose", "act", "flat" }));
    const auto notes = notesOf(g);
    QVERIFY2(notes.find("not in dependency order") != std::string::npos, notes.c_str());
    QVERIFY2(notes.find("node 0 'choose' (If) reads 'h', which node 3 'proj' (MatMul) makes") != std::string::npos, notes.c_str());
}

void TestOnnxImport::nodeCycleIsRefused_data()
{
    QTest::addColumn<bool>("selfRead");
    QTest::addColumn<QString>("expected");
    QTest::newRow("two nodes") << false << QStringLiteral("form a cycle, so no order runs them: 'scale' (Mul) -> 'mix' (Add) -> 'scale' (Mul)");
    QTest::newRow("own output") << true << QStringLiteral("node 0 'mix' (Add) reads 'm', its own output");
}

void TestOnnxImport::nodeCycleIsRefused()
{
    QFETCH(bool, selfRead);
    QFETCH(QString, expected);
    ModelBuilder b;
    b.input("x", TensorProto::FLOAT, { 4 });
    b.node("Add", { "x", selfRead ? "m" : "s" }, { "m" }, "mix");
    b.node("Mul", { "m", "m" }, { "s" }, "scale");
    b.output("s");
    const QString path = b.save(m_dir, QStringLiteral("cycle_%1.onnx").arg(int(selfRead)));
    const auto result = importOnnx(path.toStdString());
    QVERIFY(!result);
    QCOMPARE(result.error().code, ErrorCode::InvalidModel);
    QVERIFY2(result.error().message.find(expected.toStdString()) != std::string::npos, result.error().message.c_str());
    QVERIFY2(result.error().message.find(path.toStdString()) != std::string::npos, result.error().message.c_str());
}

void TestOnnxImport::constantSizeAgainstInputShape()
{
    ModelBuilder b(13);
    b.input("x", TensorProto::FLOAT, { 1, 3, 8, 8 });
    b.node("GlobalAveragePool", { "x" }, { "pooled" });
    b.ints("sizes", { 1, 3, 8, 8 });
    auto& resize = b.node("Resize", { "pooled", "", "", "sizes" }, { "up" });
    attr(resize, "mode", std::string("nearest"));
    b.node("Relu", { "x" }, { "features" });
    auto& concat = b.node("Concat", { "features", "up" }, { "joined" }, "head_concat");
    attr(concat, "axis", std::int64_t(1));
    b.output("joined");
    const QString path = b.save(m_dir, QStringLiteral("traced.onnx"));

    IMPORT(native, path);
    QCOMPARE(tensor(native, "joined").shape, (std::vector<std::int64_t> { 1, 6, 8, 8 }));
    ShapeBindings sameSize;
    sameSize.inputShapes["x"] = { 2, 3, 8, 8 }; // the batch does not meet the constant: still wrong
    ShapeBindings larger;
    larger.inputShapes["x"] = { 1, 3, 12, 12 };
    for (const auto& bindings : { sameSize, larger }) {
        const auto result = importOnnx(path.toStdString(), bindings);
        QVERIFY(!result);
        QCOMPARE(result.error().code, ErrorCode::InvalidModel);
        const std::string& message = result.error().message;
        for (const char* part : { "op 'head_concat' (Concat)", "'features'", "'up' [1,3,8,8]", "--input-shape",
                                  "exported with" })
            QVERIFY2(message.find(part) != std::string::npos, message.c_str());
        QVERIFY2(message.find(path.toStdString()) != std::string::npos, message.c_str());
    }
}

// Each model is built twice: with `good` the shapes agree and import succeeds (no false alarm),
// with `bad` the op's definition is contradicted and import names the op and the inputs.
void TestOnnxImport::inconsistentShapes_data()
{
    using Build = ShapeModelBuild;
    QTest::addColumn<Build>("build");
    QTest::addColumn<qint64>("good");
    QTest::addColumn<qint64>("bad");
    QTest::addColumn<QString>("expected");

    QTest::newRow("Add") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("x", TensorProto::FLOAT, { 2, 4, 6 });
        b.floats("bias", { n });
        b.node("Add", { "x", "bias" }, { "y" }, "add");
    }) << qint64(6) << qint64(5) << QStringLiteral("op 'add' (Add): inputs 'x' [2,4,6] and 'bias' [5] do not broadcast (dimension 2");
    QTest::newRow("Where") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("c", TensorProto::BOOL, { 3, 1 });
        b.input("x", TensorProto::FLOAT, { 1, 4 });
        b.input("z", TensorProto::FLOAT, { n, 4 });
        b.node("Where", { "c", "x", "z" }, { "y" }, "select");
    }) << qint64(3) << qint64(2) << QStringLiteral("inputs 'c' [3,1] and 'z' [2,4] do not broadcast");
    QTest::newRow("Concat") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("x", TensorProto::FLOAT, { 1, 2, 5 });
        b.input("z", TensorProto::FLOAT, { 1, 7, n });
        attr(b.node("Concat", { "x", "z" }, { "y" }, "join"), "axis", std::int64_t(-2));
    }) << qint64(5) << qint64(4) << QStringLiteral("differ in dimension 2 (Concat joins along axis 1 only)");
    QTest::newRow("Concat rank") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("x", TensorProto::FLOAT, { 1, 2, 5 });
        b.input("z", TensorProto::FLOAT, n == 3 ? std::vector<Dim> { 1, 2, 5 } : std::vector<Dim> { 2, 5 });
        attr(b.node("Concat", { "x", "z" }, { "y" }, "join"), "axis", std::int64_t(0));
    }) << qint64(3) << qint64(2) << QStringLiteral("differ in rank");
    QTest::newRow("MatMul") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("x", TensorProto::FLOAT, { 8, 2, 3 });
        b.floats("w", { n, 5 });
        b.node("MatMul", { "x", "w" }, { "y" }, "proj");
    }) << qint64(3) << qint64(4) << QStringLiteral("differ in the inner dimension (3 vs 4)");
    QTest::newRow("MatMul batch") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("x", TensorProto::FLOAT, { 8, 2, 3 });
        b.input("w", TensorProto::FLOAT, { n, 3, 5 });
        b.node("MatMul", { "x", "w" }, { "y" }, "bmm");
    }) << qint64(1) << qint64(4) << QStringLiteral("batch dimensions that do not broadcast");
    QTest::newRow("Gemm") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("x", TensorProto::FLOAT, { 2, 16 });
        b.floats("w", { 10, n });
        attr(b.node("Gemm", { "x", "w" }, { "y" }, "fc"), "transB", std::int64_t(1));
    }) << qint64(16) << qint64(12) << QStringLiteral("differ in the inner dimension (16 vs 12, after transA/transB)");
    QTest::newRow("Conv") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("x", TensorProto::FLOAT, { 1, 6, 8, 8 });
        b.floats("w", { 6, n, 3, 3 });
        auto& conv = b.node("Conv", { "x", "w" }, { "y" }, "grouped");
        attr(conv, "group", std::int64_t(3));
        attr(conv, "kernel_shape", std::vector<std::int64_t> { 3, 3 });
    }) << qint64(2) << qint64(3) << QStringLiteral("input 'x' [1,6,8,8] has 6 channels but weight 'w' [6,3,3,3] with group 3 expects 9");
    QTest::newRow("ConvTranspose") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("x", TensorProto::FLOAT, { 1, 4, 5, 5 });
        b.floats("w", { n, 2, 3, 3 });
        attr(b.node("ConvTranspose", { "x", "w" }, { "y" }, "up"), "kernel_shape", std::vector<std::int64_t> { 3, 3 });
    }) << qint64(4) << qint64(2) << QStringLiteral("has 4 channels but weight 'w' [2,2,3,3] expects 2");
    QTest::newRow("Reshape") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("x", TensorProto::FLOAT, { 1, 8, 4, 4 });
        b.ints("shape", { 1, 8, n });
        b.node("Reshape", { "x", "shape" }, { "y" }, "flatten");
    }) << qint64(16) << qint64(49) << QStringLiteral("input 'x' [1,8,4,4] holds 128 elements but its output 'y' [1,8,49] holds 392");
    // A Shape reads each result: ONNX 1.12's data propagation for Shape crashed on the missing
    // type that a failed ONNX inference leaves.
    QTest::newRow("Reshape target") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("x", TensorProto::FLOAT, { 2, 3, 4 });
        b.ints("target", { n, -1 });
        b.node("Reshape", { "x", "target" }, { "r" }, "fold");
        b.node("Shape", { "r" }, { "s" });
        b.node("ConstantOfShape", { "s" }, { "y" });
    }) << qint64(2) << qint64(-1) << QStringLiteral("op 'fold' (Reshape): input 'x' [2,3,4] cannot take the target shape [-1,-1]: more than one -1");
    QTest::newRow("Reshape copy") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("x", TensorProto::FLOAT, { 2, 12 });
        b.ints("target", { 0, 0, n });
        b.node("Reshape", { "x", "target" }, { "r" }, "split");
        b.node("Shape", { "r" }, { "s" });
        b.node("ConstantOfShape", { "s" }, { "y" });
    }) << qint64(1) << qint64(0) << QStringLiteral("0 at position 2 would copy dimension 2 of the input, which has rank 2");
    QTest::newRow("Transpose perm") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("x", TensorProto::FLOAT, { 2, 3, 4 });
        attr(b.node("Transpose", { "x" }, { "t" }, "swap"), "perm", std::vector<std::int64_t> { 0, n, 1 });
        b.node("Shape", { "t" }, { "s" });
        b.node("ConstantOfShape", { "s" }, { "y" });
    }) << qint64(2) << qint64(0) << QStringLiteral("op 'swap' (Transpose): perm [0,0,1] is not an order of the 3 axes of input 'x' [2,3,4]");
    QTest::newRow("Expand") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("x", TensorProto::FLOAT, { 2, 1, 64 });
        b.ints("target", { n });
        b.node("Expand", { "x", "target" }, { "y" }, "widen");
    }) << qint64(64) << qint64(2) << QStringLiteral("op 'widen' (Expand): input 'x' [2,1,64] does not broadcast to the target shape [2] (dimension 2 of the broadcast shape: 64 vs 2)");
    QTest::newRow("Split parts") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("x", TensorProto::FLOAT, { 2, 6 });
        auto& split = b.node("Split", { "x" }, { "y", "rest" }, "halves");
        attr(split, "axis", std::int64_t(1));
        attr(split, "num_outputs", n);
    }) << qint64(2) << (qint64(1) << 31) << QStringLiteral("op 'halves' (Split): num_outputs is 2147483648 but the op has 2 outputs (one per part)");
    QTest::newRow("STFT") << Build([](ModelBuilder& b, std::int64_t n) {
        b.input("signal", TensorProto::FLOAT, { 1, 40, 1 });
        b.ints("step", { 8 });
        b.floats("window", { n });
        b.node("STFT", { "signal", "step", "window" }, { "y" }, "spectrogram");
    }) << qint64(16) << qint64(48) << QStringLiteral("op 'spectrogram' (STFT): window 'window' [48] is longer than the signal 'signal' [1,40,1]");
}

void TestOnnxImport::inconsistentShapes()
{
    using Build = ShapeModelBuild;
    QFETCH(Build, build);
    QFETCH(qint64, good);
    QFETCH(qint64, bad);
    QFETCH(QString, expected);
    auto save = [&](std::int64_t n, const QString& name) {
        ModelBuilder b;
        build(b, n);
        b.output("y");
        return b.save(m_dir, name + QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('_')) + ".onnx");
    };
    IMPORT(g, save(good, QStringLiteral("good_")));
    QVERIFY(tensor(g, "y").size > 0);
    const QString path = save(bad, QStringLiteral("bad_"));
    const auto result = importOnnx(path.toStdString());
    QVERIFY(!result);
    QCOMPARE(result.error().code, ErrorCode::InvalidModel);
    const std::string& message = result.error().message;
    QVERIFY2(message.find(expected.toStdString()) != std::string::npos, message.c_str());
    QVERIFY2(message.find(path.toStdString()) != std::string::npos, message.c_str());
    QVERIFY2(message.find("cannot run at these shapes") != std::string::npos, message.c_str());
}

void TestOnnxImport::fiveHundredOps()
{
    // 50 transformer-ish blocks of 10 ops, each with exporter shape arithmetic feeding a Reshape.
    ModelBuilder b(17);
    b.input("x", TensorProto::FLOAT, { 4, 128, 64 });
    b.floats("w", { 64, 64 }, 0.01f);
    b.ints("zero", { 0 }, {});
    b.ints("one", { 1 }, {});
    b.ints("axes0", { 0 });
    b.ints("heads", { 8, 8 });
    std::string cur = "x";
    for (int i = 0; i < 50; ++i) {
        const std::string p = "b" + std::to_string(i) + "_";
        b.node("MatMul", { cur, "w" }, { p + "mm" });
        b.node("Shape", { p + "mm" }, { p + "shape" });
        b.node("Gather", { p + "shape", "zero" }, { p + "n" });
        b.node("Gather", { p + "shape", "one" }, { p + "t" });
        b.node("Unsqueeze", { p + "n", "axes0" }, { p + "n1" });
        b.node("Unsqueeze", { p + "t", "axes0" }, { p + "t1" });
        attr(b.node("Concat", { p + "n1", p + "t1", "heads" }, { p + "target" }), "axis", std::int64_t(0));
        b.node("Reshape", { p + "mm", p + "target" }, { p + "split" });
        attr(b.node("Softmax", { p + "split" }, { p + "soft" }), "axis", std::int64_t(-1));
        b.node("Reshape", { p + "soft", p + "shape" }, { p + "out" });
        cur = p + "out";
    }
    b.output(cur);
    const QString path = b.save(m_dir, QStringLiteral("big.onnx"));
    QElapsedTimer timer;
    timer.start();
    IMPORT(g, path);
    const auto ms = timer.elapsed();
    qInfo("500-op model imported in %lld ms", qint64(ms));
    // Per block the Shape, two Gathers, two Unsqueezes and the Concat fold into constants.
    QCOMPARE(g.ops.size(), std::size_t(200));
    QCOMPARE(tensor(g, "b49_split").shape, (std::vector<std::int64_t> { 4, 128, 8, 8 }));
    QCOMPARE(tensor(g, "b49_shape").kind, TensorKind::Weight); // the second Reshape still reads it
    QCOMPARE(tensor(g, "b49_shape").values, (std::vector<std::int64_t> { 4, 128, 64 }));
    QCOMPARE(tensor(g, cur).size, Bytes(4 * 128 * 64 * 4));
}

namespace {
using core::onnxdetail::ConstValue;
using core::onnxdetail::ValueFacts;

ValueFacts constant(int type, std::vector<std::int64_t> dims, std::vector<double> values)
{
    ConstValue v;
    v.elemType = type;
    v.dims = std::move(dims);
    for (auto x : values) {
        if (v.isReal())
            v.reals.push_back(x);
        else
            v.ints.push_back(std::int64_t(x));
    }
    ValueFacts f;
    f.kind = core::onnxdetail::ValueKind::Tensor;
    f.elemType = type;
    f.rankKnown = true;
    f.dims = v.dims;
    f.value = std::make_shared<const ConstValue>(std::move(v));
    return f;
}
// int64 values kept exact (INT64_MAX does not survive a round trip through double).
ValueFacts ints(std::vector<std::int64_t> values, std::vector<std::int64_t> dims = { -2 })
{
    if (dims == std::vector<std::int64_t> { -2 })
        dims = { std::int64_t(values.size()) };
    ValueFacts f = constant(TensorProto::INT64, dims, {});
    auto v = *f.value;
    v.ints = std::move(values);
    f.value = std::make_shared<const ConstValue>(std::move(v));
    return f;
}
} // namespace

void TestOnnxImport::foldArithmetic()
{
    struct Case {
        const char* what;
        const char* op;
        std::vector<ValueFacts> inputs;
        std::function<void(onnx::NodeProto&)> attributes;
        std::vector<std::int64_t> dims;   // expected output dims
        std::vector<double> values;       // expected output values
    };
    const std::int64_t big = std::numeric_limits<std::int64_t>::max();
    const std::vector<Case> cases {
        { "integer Div truncates", "Div", { ints({ 7, -7 }), ints({ -2 }) }, {}, { 2 }, { -3, 3 } },
        { "integer Mod takes the divisor's sign", "Mod", { ints({ -7, 7 }), ints({ 3, -3 }) }, {}, { 2 }, { 2, -2 } },
        { "fmod takes the dividend's sign", "Mod", { ints({ -7 }), ints({ 3 }) },
          [](onnx::NodeProto& n) { attr(n, "fmod", std::int64_t(1)); }, { 1 }, { -1 } },
        { "Pow by squaring", "Pow", { ints({ 3, 1 }), ints({ 4, big }) }, {}, { 2 }, { 81, 1 } },
        { "Slice with negative steps", "Slice", { ints({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }), ints({ -1 }), ints({ -100 }), ints({ 0 }), ints({ -3 }) },
          {}, { 4 }, { 9, 6, 3, 0 } },
        { "Slice to INT64_MAX", "Slice", { ints({ 5, 6, 7 }), ints({ 1 }), ints({ big }) }, {}, { 2 }, { 6, 7 } },
        { "Gather with a negative index", "Gather", { ints({ 10, 20, 30 }), ints({ -1 }, {}) }, {}, {}, { 30 } },
        { "Gather rows", "Gather", { ints({ 1, 2, 3, 4, 5, 6 }, { 3, 2 }), ints({ 2, 0 }) }, {}, { 2, 2 }, { 5, 6, 1, 2 } },
        { "Where broadcasts", "Where", { constant(TensorProto::BOOL, { 2, 1 }, { 1, 0 }), ints({ 1, 2 }), ints({ 9 }) }, {},
          { 2, 2 }, { 1, 2, 9, 9 } },
        { "Cast truncates toward zero", "Cast", { constant(TensorProto::FLOAT, { 2 }, { 2.7, -2.7 }) },
          [](onnx::NodeProto& n) { attr(n, "to", std::int64_t(TensorProto::INT64)); }, { 2 }, { 2, -2 } },
        { "Range of floats", "Range", { constant(TensorProto::FLOAT, {}, { 0 }), constant(TensorProto::FLOAT, {}, { 1 }),
                                        constant(TensorProto::FLOAT, {}, { 0.3 }) }, {}, { 4 }, { 0, 0.3, 0.6, 0.9 } },
        { "ReduceProd of all", "ReduceProd", { ints({ 2, 3, 4 }) },
          [](onnx::NodeProto& n) { attr(n, "keepdims", std::int64_t(0)); }, {}, { 24 } },
        { "ReduceSum over axis 1", "ReduceSum", { ints({ 1, 2, 3, 4, 5, 6 }, { 2, 3 }), ints({ 1 }) }, {}, { 2, 1 }, { 6, 15 } },
        { "Transpose", "Transpose", { ints({ 1, 2, 3, 4, 5, 6 }, { 2, 3 }) }, {}, { 3, 2 }, { 1, 4, 2, 5, 3, 6 } },
        { "Squeeze all ones", "Squeeze", { ints({ 7, 8 }, { 1, 2, 1 }) }, {}, { 2 }, { 7, 8 } },
        { "Unsqueeze negative axis", "Unsqueeze", { ints({ 7, 8 }), ints({ -1 }) }, {}, { 2, 1 }, { 7, 8 } },
        { "Concat", "Concat", { ints({ 1 }), ints({ 2, 3 }) },
          [](onnx::NodeProto& n) { attr(n, "axis", std::int64_t(0)); }, { 3 }, { 1, 2, 3 } },
        { "Expand", "Expand", { ints({ 1, 2 }, { 2, 1 }), ints({ 2, 3 }) }, {}, { 2, 3 }, { 1, 1, 1, 2, 2, 2 } },
        { "Tile", "Tile", { ints({ 1, 2 }), ints({ 2 }) }, {}, { 4 }, { 1, 2, 1, 2 } },
        { "Reshape with 0 and -1", "Reshape", { ints({ 1, 2, 3, 4, 5, 6 }, { 2, 3 }), ints({ 0, -1, 1 }) }, {}, { 2, 3, 1 },
          { 1, 2, 3, 4, 5, 6 } },
        { "Equal then Not", "Not", { constant(TensorProto::BOOL, { 2 }, { 1, 0 }) }, {}, { 2 }, { 0, 1 } },
        { "Shape with start/end", "Shape", { constant(TensorProto::FLOAT, { 2, 3, 4 }, std::vector<double>(24, 0)) },
          [](onnx::NodeProto& n) { attr(n, "start", std::int64_t(-2)); }, { 2 }, { 3, 4 } },
        { "ConstantOfShape", "ConstantOfShape", { ints({ 2, 2 }) }, {}, { 2, 2 }, { 0, 0, 0, 0 } },
    };
    for (const auto& c : cases) {
        onnx::NodeProto node;
        node.set_op_type(c.op);
        std::vector<const ValueFacts*> inputs;
        for (const auto& f : c.inputs) {
            node.add_input("in");
            inputs.push_back(&f);
        }
        node.add_output("out");
        if (c.attributes)
            c.attributes(node);
        const auto result = core::onnxdetail::foldNode(node, inputs);
        QVERIFY2(result && result->size() == 1, c.what);
        const auto& v = result->front();
        QVERIFY2(v.dims == c.dims, c.what);
        QVERIFY2(v.count() == std::int64_t(c.values.size()), c.what);
        for (std::size_t i = 0; i < c.values.size(); ++i)
            QVERIFY2(std::abs(v.real(std::int64_t(i)) - c.values[i]) < 1e-6, c.what);
    }
    // Not foldable: a Range of 10^9 elements, and an unknown input.
    onnx::NodeProto range;
    range.set_op_type("Range");
    const auto zero = ints({ 0 }, {}), huge = ints({ 1000000000 }, {}), one = ints({ 1 }, {});
    QVERIFY(!core::onnxdetail::foldNode(range, { &zero, &huge, &one }));
    onnx::NodeProto add;
    add.set_op_type("Add");
    add.add_output("out");
    ValueFacts unknown;
    QVERIFY(!core::onnxdetail::foldNode(add, { &zero, &unknown }));
}

// A PyTorch file at opset 16+ with RoiAlign lacking coordinate_transformation_mode gets a note
// (torchvision's exporter wrote aligned=False so; the file reads half_pixel); one stating it does not.
void TestOnnxImport::roiAlignWithoutModeIsNoted()
{
    for (const bool stated : { false, true }) {
        ModelBuilder b(17);
        b.model().set_producer_name("pytorch");
        b.input("feats", TensorProto::FLOAT, { 1, 4, 8, 8 });
        b.input("rois", TensorProto::FLOAT, { 3, 4 });
        b.input("batch", TensorProto::INT64, { 3 });
        auto& roi = b.node("RoiAlign", { "feats", "rois", "batch" }, { "pooled" }, "box_roi_pool/RoiAlign");
        attr(roi, "output_height", std::int64_t(2));
        attr(roi, "output_width", std::int64_t(2));
        if (stated) {
            auto* a = roi.add_attribute();
            a->set_name("coordinate_transformation_mode");
            a->set_type(onnx::AttributeProto::STRING);
            a->set_s("output_half_pixel");
        }
        b.output("pooled");
        IMPORT(g, b.save(m_dir, QStringLiteral("roialign.onnx")));
        QCOMPARE(tensor(g, "pooled").shape, (std::vector<std::int64_t> { 3, 4, 2, 2 }));
        const bool noted = notesOf(g).find("RoiAlign 'box_roi_pool/RoiAlign' states no coordinate_transformation_mode") != std::string::npos;
        QVERIFY2(noted != stated, notesOf(g).c_str());
    }
}

// torch.jit.script's `for p in torch.split(x, 2): outs.append(relu(p))` then `torch.cat(outs)`:
// SplitToSequence, a Loop over SequenceLength of the list, SequenceAt/SequenceInsert in the body,
// ConcatFromSequence. The list's length and element shape are known, so SequenceLength folds like
// Shape, the Loop's trip count is 3 and the list it builds is planned at exactly 3 x [2, 8]; every
// op runs for real (before: one iteration's guess, and a synthetic Loop). A chunk that does not
// divide the axis (4 of 6: pieces [4, 8] and [2, 8]) and unequal split lengths give pieces of
// different shapes: the list keeps each piece's shape, the unrolled Loop reads piece i in
// iteration i, and the list it builds is exact too (before: sized by the bytes SequenceAt may read).
void TestOnnxImport::loopOverASplitList_data()
{
    QTest::addColumn<std::vector<std::int64_t>>("split");
    QTest::addColumn<bool>("scalar");
    QTest::addColumn<std::int64_t>("listBytes");
    QTest::newRow("chunks of 2") << std::vector<std::int64_t> { 2 } << true << std::int64_t(3 * 2 * 8 * 4);
    QTest::newRow("chunks of 4") << std::vector<std::int64_t> { 4 } << true << std::int64_t(6 * 8 * 4);
    QTest::newRow("split 2, 2, 2") << std::vector<std::int64_t> { 2, 2, 2 } << false << std::int64_t(3 * 2 * 8 * 4);
    QTest::newRow("split 4, 2") << std::vector<std::int64_t> { 4, 2 } << false << std::int64_t(6 * 8 * 4);
}

void TestOnnxImport::loopOverASplitList()
{
    QFETCH(std::vector<std::int64_t>, split);
    QFETCH(bool, scalar);
    QFETCH(std::int64_t, listBytes);
    ModelBuilder b(17);
    b.input("x", TensorProto::FLOAT, { 6, 8 });
    if (scalar)
        b.ints("chunk", split, {});
    else
        b.ints("chunk", split);
    b.node("SplitToSequence", { "x", "chunk" }, { "parts" });
    b.node("SequenceLength", { "parts" }, { "n" });
    attr(b.node("SequenceEmpty", {}, { "empty" }), "dtype", std::int64_t(TensorProto::FLOAT));
    auto* body = loopBody(b.node("Loop", { "n", "", "empty" }, { "outs" }, "loop"));
    auto* list = body->add_input();
    list->set_name("acc_in");
    list->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
    bodyNode(body, "SequenceAt", { "parts", "i" }, "part");
    bodyNode(body, "Relu", { "part" }, "relu");
    bodyNode(body, "SequenceInsert", { "acc_in", "relu" }, "acc_out");
    bodyNode(body, "Identity", { "cond_in" }, "cond_out");
    body->add_output()->set_name("cond_out");
    *body->add_output() = *list;
    body->mutable_output(1)->set_name("acc_out");
    attr(b.node("ConcatFromSequence", { "outs" }, { "y" }), "axis", std::int64_t(0));
    b.output("y");
    const QString path = b.save(m_dir, QStringLiteral("split_list_loop.onnx"));
    IMPORT(g, path);
    if (listBytes >= 0) {
        QCOMPARE(tensor(g, "outs").size, listBytes);
        QVERIFY2(notesOf(g).find("folded 1 integer op") != std::string::npos, notesOf(g).c_str());
    }
    std::vector<float> x(48);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = float(i % 7) - 3.0f;
    Measurement run;
    runWithWeights(path, g, { 6, 8 }, x, run);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(run.opsSynthetic, 0);
    QCOMPARE(run.outputs.size(), std::size_t(1));
    QCOMPARE(run.outputs[0].data.size(), x.size() * sizeof(float));
    const auto* y = reinterpret_cast<const float*>(run.outputs[0].data.data());
    for (std::size_t i = 0; i < x.size(); ++i)
        QCOMPARE(y[i], std::max(x[i], 0.0f));
}

// A Range whose limit is computed from an input's value (a window's length, a loop's count): with
// no value import cannot size it; given by file (ShapeBindings::inputValues, as `memplan run --input`
// gives them) it sizes the Range, and the integer op computing the limit stays a step of the
// schedule, since the model must still compute it from its input. A run with another value than
// the plan's is refused where its result outgrows the planned room.
void TestOnnxImport::givenValuesSizeWhatIsComputedFromThem()
{
    ModelBuilder b;
    b.input("n", TensorProto::INT64, {});
    b.ints("zero", { 0 }, {});
    b.ints("one", { 1 }, {});
    b.node("Add", { "n", "one" }, { "m" });
    b.node("Range", { "zero", "m", "one" }, { "r" });
    attr(b.node("Cast", { "r" }, { "y" }), "to", std::int64_t(TensorProto::FLOAT));
    b.output("y");
    const QString path = b.save(m_dir, QStringLiteral("given_value_range.onnx"));
    const auto unsized = importOnnx(path.toStdString());
    QVERIFY(!unsized);
    QVERIFY2(unsized.error().message.find("'r' (from Range_1)") != std::string::npos, unsized.error().message.c_str());

    auto given = [](std::int64_t v) {
        InputValue value { DType::Int64, {}, std::vector<std::byte>(sizeof v) };
        std::memcpy(value.data.data(), &v, sizeof v);
        return value;
    };
    ShapeBindings bindings;
    bindings.inputValues["n"] = given(5);
    IMPORT(g, path, bindings);
    QCOMPARE(tensor(g, "r").shape, (std::vector<std::int64_t> { 6 }));
    QCOMPARE(tensor(g, "y").size, Bytes(6 * 4));
    QCOMPARE(g.ops.size(), std::size_t(3)); // Add still runs
    QCOMPARE(tensor(g, "m").kind, TensorKind::Activation);
    QVERIFY2(notesOf(g).find("the values given for 'n' size 2 values ('r', 'y'): the plan holds") != std::string::npos, notesOf(g).c_str());

    std::string why;
    auto r = runnable(g, path, why);
    QVERIFY2(r, why.c_str());
    const auto* w = &r->workload;
    const auto& plan = r->plan;
    QVERIFY(validatePlan(w->problem, plan).ok());
    auto& options = r->options;
    auto runWith = [&](std::int64_t n) {
        const auto v = given(n);
        options.inputs["n"] = HostTensor { v.dtype, v.shape, v.data };
        return runOnCpu(*w->graph, w->schedule, w->problem, plan, w->bufferTensor, options);
    };
    const auto run = runWith(5);
    QVERIFY2(run, run ? "" : run.error().message.c_str());
    QCOMPARE(run->opsSynthetic, 0);
    QCOMPARE(run->opsReal, 3);
    QCOMPARE(run->outputs[0].data.size(), std::size_t(6 * 4));
    const auto* y = reinterpret_cast<const float*>(run->outputs[0].data.data());
    for (int i = 0; i < 6; ++i)
        QCOMPARE(y[i], float(i));
    // With no file for n the run gives it the value the plan was made for; another value is refused
    // (Range would write 8 values in the room of 6).
    options.inputs.clear();
    const auto planned = runOnCpu(*w->graph, w->schedule, w->problem, plan, w->bufferTensor, options);
    QVERIFY2(planned, planned ? "" : planned.error().message.c_str());
    QVERIFY(planned->outputs[0].data == run->outputs[0].data);
    const auto other = runWith(7);
    QVERIFY(!other);
    QVERIFY2(other.error().message.find("input 'n': the plan was made for the values a file gave it") != std::string::npos,
        other.error().message.c_str());
}

// Given values bind the plan only where they size something: token ids the model only computes
// with are not kept (a run may take other ids, and no note claims they sized the plan), while a
// shape read straight from an input, with no op computing from it, is.
void TestOnnxImport::givenValuesThatSizeNothingBindNothing()
{
    ModelBuilder b;
    b.input("ids", TensorProto::INT64, { 1, 4 });
    b.input("shape", TensorProto::INT64, { 2 });
    b.input("x", TensorProto::FLOAT, { 8 });
    b.ints("one", { 1 }, {});
    b.node("Add", { "ids", "one" }, { "ids1" });
    attr(b.node("Cast", { "ids1" }, { "f" }), "to", std::int64_t(TensorProto::FLOAT));
    b.node("Reshape", { "x", "shape" }, { "y" });
    b.output("f");
    b.output("y");
    const QString path = b.save(m_dir, QStringLiteral("given_ids_and_shape.onnx"));
    auto given = [](std::vector<std::int64_t> values, std::vector<std::int64_t> shape) {
        InputValue value { DType::Int64, std::move(shape), std::vector<std::byte>(values.size() * sizeof(std::int64_t)) };
        std::memcpy(value.data.data(), values.data(), value.data.size());
        return value;
    };
    ShapeBindings bindings;
    bindings.inputValues["ids"] = given({ 7, 8, 9, 10 }, { 1, 4 });
    bindings.inputValues["shape"] = given({ 2, 4 }, { 2 });
    IMPORT(g, path, bindings);
    QCOMPARE(tensor(g, "y").shape, (std::vector<std::int64_t> { 2, 4 }));
    QVERIFY(tensor(g, "ids").values.empty()); // sizes nothing
    QCOMPARE(tensor(g, "shape").values, (std::vector<std::int64_t> { 2, 4 }));
    QCOMPARE(tensor(g, "ids1").kind, TensorKind::Activation); // computed from a given input: still an op
    QVERIFY2(notesOf(g).find("the values given for 'shape' size 1 value ('y'): the plan holds for these input values")
            != std::string::npos,
        notesOf(g).c_str());
    QVERIFY2(notesOf(g).find("'ids'") == std::string::npos, notesOf(g).c_str());

    // Ids alone: no note, nothing kept.
    ShapeBindings idsOnly;
    idsOnly.inputValues["ids"] = bindings.inputValues["ids"];
    ModelBuilder fixed;
    fixed.input("ids", TensorProto::INT64, { 1, 4 });
    fixed.ints("one", { 1 }, {});
    fixed.node("Add", { "ids", "one" }, { "ids1" });
    fixed.output("ids1", TensorProto::INT64);
    IMPORT(h, fixed.save(m_dir, QStringLiteral("given_ids.onnx")), idsOnly);
    QVERIFY(tensor(h, "ids").values.empty());
    QVERIFY2(notesOf(h).find("the values given") == std::string::npos, notesOf(h).c_str());
}

// A given shape with a negative dimension leaves ConstantOfShape unsized: the message names the
// op as reading given values, not as depending on values known only at run time.
void TestOnnxImport::givenValuesThatMakeNoShapeAreNamed()
{
    ModelBuilder b;
    b.input("n", TensorProto::INT64, { 2 });
    b.node("ConstantOfShape", { "n" }, { "y" });
    b.node("Relu", { "y" }, { "z" });
    b.output("z");
    const QString path = b.save(m_dir, QStringLiteral("given_negative_shape.onnx"));
    const auto open = importOnnx(path.toStdString());
    QVERIFY(!open);
    QVERIFY2(open.error().message.find("values known only at run time") != std::string::npos, open.error().message.c_str());
    ShapeBindings bindings;
    const std::int64_t dims[] = { 3, -4 };
    bindings.inputValues["n"] = InputValue { DType::Int64, { 2 }, std::vector<std::byte>(sizeof dims) };
    std::memcpy(bindings.inputValues["n"].data.data(), dims, sizeof dims);
    const auto invalid = importOnnx(path.toStdString(), bindings);
    QVERIFY(!invalid);
    QVERIFY2(invalid.error().message.find("sizes first become unknown at ConstantOfShape_0 (ConstantOfShape): ConstantOfShape_0 reads values "
                                         "given by file (--input) that make no valid output shape")
            != std::string::npos,
        invalid.error().message.c_str());
}

QTEST_GUILESS_MAIN(TestOnnxImport)
#include "tst_onnximport.moc"
