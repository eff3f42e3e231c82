// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Control flow planned inside (issue #49): an If whose condition import knows becomes its branch's
// ops; an If with an unknown condition, a Loop and a Scan keep one op that reserves the arena their
// graphs are planned in (NestedPlan), nested graphs nesting; a graph value without a size is named;
// the ONNX backend test cases of If, Loop, Scan and SequenceMap plan their graphs inside; and
// tricky/vad_if (Silero VAD's shape) plans its network once the sample rate is given.
// At run time the graphs' values live at their planned offsets in the op's region: the arena run
// computes the no-reuse reference's outputs (each value inside its own allocation) bit for bit,
// the values leave kernel scratch, a value larger than planned falls back with a note, and
// overlapping nested offsets make the plan check fail.

// The test links onnx_proto itself (tests/CMakeLists.txt), which sets ONNX_ML and ONNX_NAMESPACE.
#include <onnx/onnx_pb.h>

#include "exec/runsession.h"
#include "exec/tensordata.h"
#include "io/planjson.h"
#include "io/report.h"
#include "io/workload.h"
#include "onnx/onnximport.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

using namespace core;
using onnx::TensorProto;
namespace fs = std::filesystem;

namespace {

void setType(onnx::TypeProto* type, int elemType, const std::vector<std::int64_t>* dims)
{
    auto* t = type->mutable_tensor_type();
    t->set_elem_type(elemType);
    if (!dims)
        return;
    auto* shape = t->mutable_shape();
    for (auto d : *dims)
        shape->add_dim()->set_dim_value(d);
}

void declare(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name, int elemType,
    const std::vector<std::int64_t>* dims)
{
    auto* vi = list->Add();
    vi->set_name(name);
    setType(vi->mutable_type(), elemType, dims);
}

onnx::NodeProto* node(onnx::GraphProto* g, const std::string& type, const std::vector<std::string>& inputs,
    const std::vector<std::string>& outputs, const std::string& name = {})
{
    auto* n = g->add_node();
    n->set_op_type(type);
    n->set_name(name);
    for (const auto& i : inputs)
        n->add_input(i);
    for (const auto& o : outputs)
        n->add_output(o);
    return n;
}

void floats(onnx::GraphProto* g, const std::string& name, const std::vector<std::int64_t>& dims, float fill)
{
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::FLOAT);
    std::int64_t n = 1;
    for (auto d : dims) {
        t->add_dims(d);
        n *= d;
    }
    for (std::int64_t i = 0; i < n; ++i)
        t->add_float_data(fill + 0.01f * float(i % 7));
}

void scalar(onnx::GraphProto* g, const std::string& name, int elemType, std::int64_t value)
{
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(elemType);
    if (elemType == TensorProto::BOOL)
        t->add_int32_data(int(value));
    else
        t->add_int64_data(value);
}

onnx::GraphProto* graphAttribute(onnx::NodeProto* n, const char* name)
{
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name(name);
    return a->mutable_g();
}

void intAttribute(onnx::NodeProto* n, const char* name, std::int64_t v)
{
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
}

onnx::ModelProto newModel()
{
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.set_producer_name("tst_controlflow");
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(17);
    m.mutable_graph()->set_name("controlflow");
    return m;
}

QString save(const onnx::ModelProto& m, const QTemporaryDir& dir, const QString& name)
{
    const QString path = dir.filePath(name);
    std::ofstream out(path.toStdString(), std::ios::binary);
    m.SerializeToOstream(&out);
    return path;
}

const std::vector<std::int64_t> kX { 4, 64 };
const std::vector<std::int64_t> kW { 64, 64 };

// X [4, 64] float, scalar `condition` (a bool initializer when `constant`, else an int64 input
// "sr" compared with 16000); If "if0" whose then-branch is MatMul(X, W) -> Relu -> Mul with its own
// weight W [64, 64] (16 KiB), the else-branch Neg(X); out = Add(If, X).
onnx::ModelProto ifModel(bool constant, bool condition = true)
{
    auto m = newModel();
    auto* g = m.mutable_graph();
    declare(g->mutable_input(), "X", TensorProto::FLOAT, &kX);
    if (constant) {
        scalar(g, "cond", TensorProto::BOOL, condition ? 1 : 0);
    } else {
        const std::vector<std::int64_t> none;
        declare(g->mutable_input(), "sr", TensorProto::INT64, &none);
        scalar(g, "sr16k", TensorProto::INT64, 16000);
        node(g, "Equal", { "sr", "sr16k" }, { "cond" }, "is16k");
    }
    auto* n = node(g, "If", { "cond" }, { "branch" }, "if0");
    auto* then = graphAttribute(n, "then_branch");
    floats(then, "W", kW, 0.02f);
    node(then, "MatMul", { "X", "W" }, { "mm" });
    node(then, "Relu", { "mm" }, { "r" }, "relu");
    node(then, "Mul", { "r", "X" }, { "t_out" }, "scale");
    declare(then->mutable_output(), "t_out", TensorProto::FLOAT, nullptr);
    auto* otherwise = graphAttribute(n, "else_branch");
    node(otherwise, "Neg", { "X" }, { "e_out" });
    declare(otherwise->mutable_output(), "e_out", TensorProto::FLOAT, nullptr);
    node(g, "Add", { "branch", "X" }, { "out" }, "add");
    declare(g->mutable_output(), "out", TensorProto::FLOAT, nullptr);
    return m;
}

// A Loop "loop0" of trip count `trips` (an initializer; -1: the graph input "M", unknown at import)
// carrying acc [1, 256]: the body computes acc * 2 + X through two temporaries and emits acc.
onnx::ModelProto loopModel(std::int64_t trips, bool ifInside = false)
{
    auto m = newModel();
    auto* g = m.mutable_graph();
    const std::vector<std::int64_t> row { 1, 256 }, none;
    declare(g->mutable_input(), "X", TensorProto::FLOAT, &row);
    if (trips >= 0)
        scalar(g, "M", TensorProto::INT64, trips);
    else
        declare(g->mutable_input(), "M", TensorProto::INT64, &none);
    scalar(g, "go", TensorProto::BOOL, 1);
    floats(g, "acc0", row, 0.0f);
    auto* loop = node(g, "Loop", { "M", "go", "acc0" }, { "acc", "trace" }, "loop0");
    auto* body = graphAttribute(loop, "body");
    declare(body->mutable_input(), "i", TensorProto::INT64, &none);
    declare(body->mutable_input(), "c_in", TensorProto::BOOL, &none);
    declare(body->mutable_input(), "acc_in", TensorProto::FLOAT, &row);
    floats(body, "two", {}, 2.0f);
    node(body, "Mul", { "acc_in", "two" }, { "doubled" }, "double");
    node(body, "Add", { "doubled", "X" }, { "summed" }, "add_x");
    if (ifInside) { // on odd iterations negate: a condition import cannot know
        scalar(body, "k2", TensorProto::INT64, 2);
        scalar(body, "k0", TensorProto::INT64, 0);
        node(body, "Mod", { "i", "k2" }, { "parity" }, "parity");
        node(body, "Equal", { "parity", "k0" }, { "even" }, "even");
        auto* inner = node(body, "If", { "even" }, { "acc_out" }, "if_inner");
        auto* then = graphAttribute(inner, "then_branch");
        node(then, "Relu", { "summed" }, { "kept" });
        node(then, "Sigmoid", { "kept" }, { "squashed" });
        declare(then->mutable_output(), "squashed", TensorProto::FLOAT, nullptr);
        auto* otherwise = graphAttribute(inner, "else_branch");
        node(otherwise, "Neg", { "summed" }, { "negated" });
        declare(otherwise->mutable_output(), "negated", TensorProto::FLOAT, nullptr);
    } else {
        node(body, "Identity", { "summed" }, { "acc_out" }, "keep");
    }
    node(body, "Identity", { "c_in" }, { "c_out" }, "go_on");
    node(body, "Identity", { "acc_out" }, { "scan" }, "emit");
    declare(body->mutable_output(), "c_out", TensorProto::BOOL, nullptr);
    declare(body->mutable_output(), "acc_out", TensorProto::FLOAT, nullptr);
    declare(body->mutable_output(), "scan", TensorProto::FLOAT, nullptr);
    declare(g->mutable_output(), "acc", TensorProto::FLOAT, nullptr);
    declare(g->mutable_output(), "trace", TensorProto::FLOAT, nullptr);
    return m;
}

const Op* findOp(const Graph& g, const std::string& name)
{
    for (const auto& op : g.ops)
        if (op.name == name)
            return &op;
    return nullptr;
}

std::string notesOf(const Graph& g)
{
    std::string text;
    for (const auto& n : g.notes)
        text += n + "\n";
    return text;
}

// Plans the workload with the default planner; the plan and every nested plan validated.
Plan planChecked(const Workload& w)
{
    auto plan = runPlanner(*plannerByName(kDefaultPlanner), w.problem);
    if (!plan)
        qFatal("planning failed: %s", plan.error().message.c_str());
    const auto check = validatePlan(w.problem, *plan);
    if (!check.ok())
        qFatal("invalid plan: %s", check.message.c_str());
    return *plan;
}

void validateNested(const std::vector<NestedPlan>& plans)
{
    for (const auto& n : plans) {
        const auto check = validatePlan(n.built.problem, n.plan);
        QVERIFY2(check.ok(), (n.op + " " + n.body + ": " + check.message).c_str());
        validateNested(n.built.nested);
    }
}

// The buffer of the workload named `name`, or -1.
int bufferNamed(const Workload& w, const std::string& name)
{
    for (std::size_t b = 0; b < w.problem.buffers.size(); ++b)
        if (w.problem.buffers[b].name == name)
            return int(b);
    return -1;
}

// The checked runs of `w` (no-reuse reference, arena, per-tensor) with the model's weights and
// `inputs`: the arena and per-tensor runs place the values of control-flow ops' graphs as
// w.nested says, the reference gives each its own allocation.
Expected<RunSession> tryRunChecked(const Workload& w, const QString& path, const std::map<std::string, HostTensor>& inputs = {})
{
    auto data = loadTensorData(path.toStdString(), *w.graph);
    if (!data)
        return data.error();
    const Plan plan = planChecked(w);
    RunSessionRequest request;
    request.workload = &w;
    request.plan = &plan;
    request.options.modelData = std::make_shared<const ModelData>(std::move(*data));
    request.options.inputs = inputs;
    return runSession(request);
}

RunSession runChecked(const Workload& w, const QString& path, const std::map<std::string, HostTensor>& inputs = {})
{
    auto session = tryRunChecked(w, path, inputs);
    if (!session)
        qFatal("run failed: %s", session.error().message.c_str());
    return *session;
}

HostTensor int64Scalar(std::int64_t v)
{
    HostTensor t;
    t.dtype = DType::Int64;
    t.data.resize(sizeof v);
    std::memcpy(t.data.data(), &v, sizeof v);
    return t;
}

ShapeBindings srBinding(std::int64_t v)
{
    ShapeBindings b;
    const auto t = int64Scalar(v);
    b.inputValues["sr"] = InputValue { DType::Int64, {}, t.data };
    return b;
}

// Scan over A [8, 128] along axis 0 with state s [128]: per slice s + a, (s + a) * a.
onnx::ModelProto scanModel()
{
    auto m = newModel();
    auto* g = m.mutable_graph();
    const std::vector<std::int64_t> a { 8, 128 }, row { 128 };
    declare(g->mutable_input(), "A", TensorProto::FLOAT, &a);
    floats(g, "s0", row, 0.0f);
    auto* scan = node(g, "Scan", { "s0", "A" }, { "s", "ys" }, "scan0");
    intAttribute(scan, "num_scan_inputs", 1);
    auto* body = graphAttribute(scan, "body");
    declare(body->mutable_input(), "s_in", TensorProto::FLOAT, &row);
    declare(body->mutable_input(), "a_in", TensorProto::FLOAT, &row);
    node(body, "Add", { "s_in", "a_in" }, { "s_out" });
    node(body, "Mul", { "s_out", "a_in" }, { "y" });
    declare(body->mutable_output(), "s_out", TensorProto::FLOAT, nullptr);
    declare(body->mutable_output(), "y", TensorProto::FLOAT, nullptr);
    declare(g->mutable_output(), "s", TensorProto::FLOAT, nullptr);
    declare(g->mutable_output(), "ys", TensorProto::FLOAT, nullptr);
    return m;
}

// A Loop "grow" of 40 iterations carrying acc, which enters as acc0 [1, 256] and gains the row X
// [1, 256] every iteration (Concat), as torch exports `acc = torch.cat([acc, x])`; then Relu.
// Import sizes the Loop's result from the trip count ([41, 256]) but its body for the first
// iteration (more than 32 iterations are not inferred one by one): acc_in [1, 256], acc_out [2, 256].
onnx::ModelProto growingLoopModel()
{
    auto m = newModel();
    auto* g = m.mutable_graph();
    const std::vector<std::int64_t> row { 1, 256 }, none;
    declare(g->mutable_input(), "X", TensorProto::FLOAT, &row);
    scalar(g, "M", TensorProto::INT64, 40);
    scalar(g, "go", TensorProto::BOOL, 1);
    floats(g, "acc0", row, 0.5f);
    auto* loop = node(g, "Loop", { "M", "go", "acc0" }, { "acc" }, "grow");
    auto* body = graphAttribute(loop, "body");
    declare(body->mutable_input(), "i", TensorProto::INT64, &none);
    declare(body->mutable_input(), "c_in", TensorProto::BOOL, &none);
    auto* accIn = body->add_input();
    accIn->set_name("acc_in");
    setType(accIn->mutable_type(), TensorProto::FLOAT, nullptr);
    auto* accShape = accIn->mutable_type()->mutable_tensor_type()->mutable_shape();
    accShape->add_dim()->set_dim_param("rows");
    accShape->add_dim()->set_dim_value(256);
    intAttribute(node(body, "Concat", { "acc_in", "X" }, { "acc_out" }, "append"), "axis", 0);
    node(body, "Identity", { "c_in" }, { "c_out" }, "go_on");
    declare(body->mutable_output(), "c_out", TensorProto::BOOL, nullptr);
    declare(body->mutable_output(), "acc_out", TensorProto::FLOAT, nullptr);
    node(g, "Relu", { "acc" }, { "out" }, "relu");
    declare(g->mutable_output(), "out", TensorProto::FLOAT, nullptr);
    return m;
}

// The bytes of the values graph `n` computes (its ops' outputs), as its tensors give them.
Bytes computedBytes(const NestedPlan& n)
{
    Bytes total = 0;
    for (const auto& t : n.graph->tensors)
        if (t.kind == TensorKind::Activation || t.kind == TensorKind::Output)
            total += std::max<Bytes>(t.size, 0);
    return total;
}

// The run's notes on values of control-flow ops' graphs outside their planned places.
std::string bodyNotes(const Measurement& m)
{
    std::string text;
    for (const auto& note : m.kernelNotes)
        if (note.find(": value '") != std::string::npos || note.find("allocations of their own") != std::string::npos)
            text += note + "\n";
    return text;
}

// A run whose control-flow graphs ran at their planned offsets: the arena and per-tensor runs
// computed the no-reuse reference's outputs (every value inside its own allocation, as before) bit
// for bit with real kernels, and no value fell back. The reference's kernel scratch holds the
// `inside` bytes the graphs computed; the planned runs' holds no longer any of them, only
// `scratch`: what the kernels use and the copies the op makes (carried values, scan slices).
// (Scratch is a high-water mark: the largest of the kernels' scratch and what the graphs held.)
void checkPlaced(const RunSession& s, Bytes inside, Bytes scratch)
{
    QVERIFY2(s.allMatch(), s.firstMismatch().c_str());
    QCOMPARE(s.syntheticOps, 0);
    QCOMPARE(s.arena.opsSynthetic, 0);
    QVERIFY2(bodyNotes(s.arena).empty(), bodyNotes(s.arena).c_str());
    QVERIFY2(bodyNotes(s.perTensor).empty(), bodyNotes(s.perTensor).c_str());
    QVERIFY(bodyNotes(s.reference).empty()); // nothing planned inside: nothing to fall back from
    const auto text = QStringLiteral("scratch: reference %1 B, arena %2 B, per-tensor %3 B; values inside %4 B, expected scratch %5 B")
                          .arg(s.reference.scratchBytes)
                          .arg(s.arena.scratchBytes)
                          .arg(s.perTensor.scratchBytes)
                          .arg(inside)
                          .arg(scratch);
    qInfo("%s", qPrintable(text));
    QVERIFY2(inside > 0 && s.reference.scratchBytes >= inside, qPrintable(text));
    QVERIFY2(s.arena.scratchBytes == scratch, qPrintable(text));
    QVERIFY2(s.perTensor.scratchBytes == scratch, qPrintable(text));
}

Bytes regionBytes(const Workload& w, const std::string& name)
{
    for (const auto& r : w.regions)
        if (r.name == name)
            return r.size;
    return 0;
}

} // namespace

class TestControlFlow : public QObject {
    Q_OBJECT

private slots:
    void constantConditionInlinesTheBranch();
    void givenInputChoosesTheBranch();
    void unknownConditionReservesTheLargerBranch();
    void loopBodyPlannedPerIteration();
    void scanBodyPlannedInside();
    void ifInsideLoopNests();
    void unsizedBodyValueIsNamed();
    void reportAndJsonListNestedArenas();
    void onnxBackendControlFlowCases();
    void vadModel();
    // At run time (issue #49): values at their planned offsets in the op's region.
    void ifBranchRunsAtItsOffsets();
    void loopBodyRunsAtItsOffsets();
    void scanBodyRunsAtItsOffsets();
    void ifInsideLoopRunsAtItsOffsets();
    void vadIfRunsAtItsOffsets();
    void backendCasesRunAtTheirOffsets();
    void grownBodyValueFallsBack();
    void overlappingBodyOffsetsFailTheCheck();
    void bodyPlanOfAnotherGraphIsNotUsed();
};

void TestControlFlow::constantConditionInlinesTheBranch()
{
    QTemporaryDir dir;
    for (const bool taken : { true, false }) {
        const auto path = save(ifModel(true, taken), dir, taken ? "then.onnx" : "else.onnx");
        auto g = importOnnx(path.toStdString());
        QVERIFY2(g, g ? "" : g.error().message.c_str());
        for (const auto& op : g->ops)
            QVERIFY2(op.type != "If", op.name.c_str());
        QCOMPARE(g->inlinedIfs.size(), std::size_t(1));
        QCOMPARE(g->inlinedIfs[0].op, std::string("if0"));
        QCOMPARE(g->inlinedIfs[0].thenBranch, taken);
        const auto notes = notesOf(*g);
        QVERIFY2(notes.find(std::string("If 'if0': ") + (taken ? "then" : "else") + "-branch inlined (condition known: a constant)")
                != std::string::npos, notes.c_str());
        // The branch's ops are steps named under the If, its output the If's, its weight a weight.
        if (taken) {
            QVERIFY(findOp(*g, "if0/relu") && findOp(*g, "if0/scale") && findOp(*g, "if0/MatMul_0"));
            QVERIFY(findOp(*g, "if0/scale")->outputs.size() == 1);
            QCOMPARE(g->tensors[std::size_t(findOp(*g, "if0/scale")->outputs[0])].name, std::string("branch"));
            const auto w = g->findTensor("if0/W");
            QVERIFY(w);
            QCOMPARE(g->tensors[std::size_t(*w)].kind, TensorKind::Weight);
            QCOMPARE(g->tensors[std::size_t(*w)].size, Bytes(64 * 64 * 4));
        } else {
            QVERIFY(findOp(*g, "if0/Neg_0"));
            QVERIFY(!g->findTensor("if0/W"));
        }
        auto w = workloadFromGraph(*g, path.toStdString(), {});
        QVERIFY(w);
        QVERIFY(w->nested.empty());
        QCOMPARE(regionBytes(*w, "weights") >= Bytes(64 * 64 * 4), taken);
        // The executor reads the inlined weight and runs the branch's ops at their planned offsets.
        const auto session = runChecked(*w, path);
        QVERIFY2(session.allMatch(), session.firstMismatch().c_str());
        QCOMPARE(session.syntheticOps, 0);
        QCOMPARE(session.arena.stepPeakBytes, lowerBound(w->problem));
    }
}

void TestControlFlow::givenInputChoosesTheBranch()
{
    QTemporaryDir dir;
    const auto path = save(ifModel(false), dir, "sr.onnx");
    for (const std::int64_t sr : { 16000, 8000 }) {
        auto g = importOnnx(path.toStdString(), srBinding(sr));
        QVERIFY2(g, g ? "" : g.error().message.c_str());
        QVERIFY(!findOp(*g, "if0"));
        QCOMPARE(bool(findOp(*g, "if0/relu")), sr == 16000);
        const auto notes = notesOf(*g);
        QVERIFY2(notes.find("condition known: computed from the value given for 'sr'") != std::string::npos, notes.c_str());
        // The plan holds for this value only: a run must be given it again.
        QCOMPARE(g->tensors[std::size_t(*g->findTensor("sr"))].values, std::vector<std::int64_t> { sr });
        auto w = workloadFromGraph(*g, path.toStdString(), {});
        QVERIFY(w);
        const auto session = runChecked(*w, path, { { "sr", int64Scalar(sr) } });
        QVERIFY2(session.allMatch(), session.firstMismatch().c_str());
        QCOMPARE(session.syntheticOps, 0);
    }
}

void TestControlFlow::unknownConditionReservesTheLargerBranch()
{
    QTemporaryDir dir;
    const auto path = save(ifModel(false), dir, "sr.onnx");
    auto w = loadWorkload(path.toStdString(), {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    const Op* op = findOp(*w->graph, "if0");
    QVERIFY(op);
    QCOMPARE(op->bodies.size(), std::size_t(2));
    QVERIFY(w->graph->inlinedIfs.empty());
    QCOMPARE(w->nested.size(), std::size_t(2));
    validateNested(w->nested);
    const auto& then = w->nested[0];
    const auto& otherwise = w->nested[1];
    QCOMPARE(then.body, std::string("then_branch"));
    QCOMPARE(otherwise.body, std::string("else_branch"));
    // then: mm and r (1 KiB each) live together: 2 KiB; else: only its result e_out, which is the
    // If's output (planned around it), so nothing inside. A result is never held twice.
    QCOMPARE(then.built.problem.steps, 3);
    QCOMPARE(then.plan.arenaSize, Bytes(2048));
    QCOMPARE(otherwise.plan.arenaSize, Bytes(0));
    for (const auto* n : { &then, &otherwise })
        for (const auto& buffer : n->built.problem.buffers)
            QVERIFY2(buffer.kind != TensorKind::Output, buffer.name.c_str());
    QVERIFY(then.decides && !otherwise.decides);
    // The branch's weight is its own region, not the graph's.
    QCOMPARE(then.built.regions.size(), std::size_t(1));
    QCOMPARE(then.built.regions[0].size, Bytes(64 * 64 * 4));
    const int b = bufferNamed(*w, "if0 body");
    QVERIFY(b >= 0);
    const auto& reserved = w->problem.buffers[std::size_t(b)];
    QCOMPARE(reserved.kind, TensorKind::Workspace);
    QCOMPARE(reserved.size, Bytes(2048));
    QCOMPARE(reserved.lifetime.start, then.step);
    QCOMPARE(reserved.lifetime.end, then.step + 1);
    QCOMPARE(w->graph->ops[std::size_t(w->bufferOp[std::size_t(b)])].name, std::string("if0"));
    // The If's step holds its input, output and reservation: X and branch (1 KiB each) + 2 KiB.
    QVERIFY(lowerBound(w->problem) >= Bytes(4096));
    planChecked(*w);
    // Without nested planning the If holds nothing inside, as before.
    auto g = importOnnx(path.toStdString());
    QVERIFY(g);
    auto built = makeProblem(*g, w->schedule, ProblemOptions { 256, false, false });
    QVERIFY(built);
    QCOMPARE(built->problem.buffers.size() + 1, w->problem.buffers.size());
    QVERIFY(built->nested.empty());
    // The executor runs with the reservation in the arena: outputs match, the reservation is counted.
    const auto session = runChecked(*w, path, { { "sr", int64Scalar(16000) } });
    QVERIFY2(session.allMatch(), session.firstMismatch().c_str());
    QCOMPARE(session.arena.stepPeakBytes, lowerBound(w->problem));
}

void TestControlFlow::loopBodyPlannedPerIteration()
{
    QTemporaryDir dir;
    for (const std::int64_t trips : { std::int64_t(5), std::int64_t(-1) }) {
        const auto path = save(loopModel(trips), dir, trips > 0 ? "loop5.onnx" : "loopM.onnx");
        auto w = loadWorkload(path.toStdString(), {});
        QVERIFY2(w, w ? "" : w.error().message.c_str());
        QCOMPARE(w->nested.size(), std::size_t(1));
        const auto& body = w->nested[0];
        QCOMPARE(body.body, std::string("body"));
        QCOMPARE(body.type, std::string("Loop"));
        validateNested(w->nested);
        // One iteration: acc_in, doubled, summed, acc_out and scan (1 KiB each), the iteration number
        // and the conditions (256 B each after alignment); the results live to the end.
        QVERIFY(body.plan.arenaSize >= Bytes(2 * 1024 + 256));
        QVERIFY(body.plan.arenaSize <= Bytes(6 * 1024));
        QCOMPARE(body.built.regions.size(), std::size_t(1)); // the constant 2
        const int b = bufferNamed(*w, "loop0 body");
        QVERIFY(b >= 0);
        QCOMPARE(w->problem.buffers[std::size_t(b)].size, body.plan.arenaSize);
        // The scan output stays an outer tensor sized by the trip count, an estimate when unknown.
        const auto& trace = w->graph->tensors[std::size_t(*w->graph->findTensor("trace"))];
        if (trips > 0) {
            QCOMPARE(trace.shape, (std::vector<std::int64_t> { 5, 1, 256 }));
            QVERIFY(!trace.estimated);
        } else {
            QVERIFY(trace.estimated);
        }
        planChecked(*w);
        if (trips > 0) {
            const auto session = runChecked(*w, path);
            QVERIFY2(session.allMatch(), session.firstMismatch().c_str());
            QCOMPARE(session.syntheticOps, 0);
            QCOMPARE(session.arena.stepPeakBytes, lowerBound(w->problem));
        }
    }
}

void TestControlFlow::scanBodyPlannedInside()
{
    const auto m = scanModel();
    QTemporaryDir dir;
    const auto path = save(m, dir, "scan.onnx");
    auto w = loadWorkload(path.toStdString(), {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    QCOMPARE(w->nested.size(), std::size_t(1));
    const auto& n = w->nested[0];
    QCOMPARE(n.type, std::string("Scan"));
    // Four values of 512 B: s_in dies after the Add, so three are live at once (s_in or y, a_in, s_out).
    QCOMPARE(n.graph->tensors.size(), std::size_t(4));
    QCOMPARE(n.plan.arenaSize, Bytes(3 * 512));
    validateNested(w->nested);
    QCOMPARE(w->problem.buffers[std::size_t(bufferNamed(*w, "scan0 body"))].size, Bytes(3 * 512));
    const auto session = runChecked(*w, path);
    QVERIFY2(session.allMatch(), session.firstMismatch().c_str());
    QCOMPARE(session.arena.stepPeakBytes, lowerBound(w->problem));
}

void TestControlFlow::ifInsideLoopNests()
{
    QTemporaryDir dir;
    const auto path = save(loopModel(4, true), dir, "loopif.onnx");
    auto w = loadWorkload(path.toStdString(), {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    QCOMPARE(w->nested.size(), std::size_t(1));
    const auto& body = w->nested[0];
    // The If inside the body depends on the iteration number: it stays, planned inside the body.
    QCOMPARE(body.built.nested.size(), std::size_t(2));
    const auto& then = body.built.nested[0];
    QCOMPARE(then.op, std::string("if_inner"));
    QCOMPARE(then.plan.arenaSize, Bytes(1024)); // kept and squashed; its result is the If's output, in the body's arena
    QVERIFY(then.decides);
    int reserved = -1;
    for (std::size_t b = 0; b < body.built.problem.buffers.size(); ++b)
        if (body.built.problem.buffers[b].name == "if_inner body")
            reserved = int(b);
    QVERIFY(reserved >= 0);
    QCOMPARE(body.built.problem.buffers[std::size_t(reserved)].size, Bytes(1024));
    validateNested(w->nested);
    QCOMPARE(w->problem.buffers[std::size_t(bufferNamed(*w, "loop0 body"))].size, body.plan.arenaSize);
    planChecked(*w);
    const auto session = runChecked(*w, path);
    QVERIFY2(session.allMatch(), session.firstMismatch().c_str());
    QCOMPARE(session.syntheticOps, 0);
}

void TestControlFlow::unsizedBodyValueIsNamed()
{
    // The then-branch computes a value by an op of an unknown domain, which nothing sizes.
    auto m = ifModel(false);
    auto* o = m.add_opset_import();
    o->set_domain("com.example");
    o->set_version(1);
    auto* g = m.mutable_graph();
    for (auto& n : *g->mutable_node())
        if (n.op_type() == "If")
            for (auto& a : *n.mutable_attribute())
                if (a.name() == "then_branch") {
                    auto* mystery = node(a.mutable_g(), "Mystery", { "X" }, { "unknowable" }, "mystery");
                    mystery->set_domain("com.example");
                }
    // The If's own output is declared, so the top level is sized.
    declare(g->mutable_value_info(), "branch", TensorProto::FLOAT, &kX);
    QTemporaryDir dir;
    const auto path = save(m, dir, "mystery.onnx");
    auto w = loadWorkload(path.toStdString(), {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    const Op* op = findOp(*w->graph, "if0");
    QVERIFY(op);
    QVERIFY(op->bodies.empty());
    QVERIFY(w->nested.empty());
    QCOMPARE(bufferNamed(*w, "if0 body"), -1);
    const auto notes = notesOf(*w->graph);
    QVERIFY2(notes.find("If 'if0': its graphs are not planned inside it (then_branch: value 'unknowable' (from mystery) has no known size)")
            != std::string::npos, notes.c_str());
    planChecked(*w);
}

void TestControlFlow::reportAndJsonListNestedArenas()
{
    QTemporaryDir dir;
    const auto path = save(loopModel(4, true), dir, "loopif.onnx");
    auto w = loadWorkload(path.toStdString(), {});
    QVERIFY(w);
    const Plan plan = planChecked(*w);
    const auto report = formatReport(*w, plan);
    QVERIFY2(report.find("subgraphs        3 graphs of 1 control-flow ops planned inside them") != std::string::npos, report.c_str());
    QVERIFY2(report.find("  Loop 'loop0' body (step 0): ") != std::string::npos, report.c_str());
    QVERIFY2(report.find("    If 'if_inner' then_branch (step ") != std::string::npos, report.c_str());
    QVERIFY2(report.find("the larger branch: decides the If's reservation") != std::string::npos, report.c_str());
    const auto json = nlohmann::json::parse(exportPlanJson(*w, plan));
    QVERIFY(json.contains("subgraphs"));
    const auto& loop = json["subgraphs"][0];
    QCOMPARE(loop["op"].get<std::string>(), std::string("loop0"));
    QCOMPARE(loop["reserved"].get<bool>(), true);
    QCOMPARE(loop["arena_bytes"].get<Bytes>(), w->nested[0].plan.arenaSize);
    QCOMPARE(loop["subgraphs"].size(), std::size_t(2));
    // Every nested buffer has an offset inside its graph's arena.
    for (const auto& b : loop["buffers"])
        QVERIFY(b["offset"].get<Bytes>() + b["size_bytes"].get<Bytes>() <= loop["arena_bytes"].get<Bytes>());
    bool reservedInside = false;
    for (const auto& b : loop["buffers"])
        reservedInside = reservedInside || (b["kind"] == "workspace" && b.value("op", std::string()) == "if_inner");
    QVERIFY(reservedInside);
}

void TestControlFlow::onnxBackendControlFlowCases()
{
    const fs::path root = "/usr/share/libonnx-testdata/data/node";
    if (!fs::is_directory(root))
        QSKIP("libonnx-testdata is not installed");
    int cases = 0, inside = 0, inlined = 0;
    QStringList summary;
    for (const auto& entry : fs::directory_iterator(root)) {
        const auto name = entry.path().filename().string();
        if (name.rfind("test_if", 0) != 0 && name.rfind("test_loop", 0) != 0 && name.rfind("test_scan", 0) != 0
            && name.rfind("test_sequence_map", 0) != 0)
            continue;
        ++cases;
        const auto model = (entry.path() / "model.onnx").string();
        // With the test's input files (an If's condition among them), and without them where the
        // model plans without (the If then stays, its branches planned inside).
        for (const bool given : { true, false }) {
            LoadOptions options;
            const auto declared = declaredInputs(model);
            QVERIFY(declared);
            for (std::size_t k = 0; given && k < declared->size(); ++k) {
                const auto file = entry.path() / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb");
                if (fs::exists(file))
                    options.inputFiles.emplace_back((*declared)[k].name, file);
            }
            auto w = loadWorkload(model, options);
            if (!given && !w)
                continue;
            QVERIFY2(w, (name + ": " + (w ? std::string() : w.error().message)).c_str());
            validateNested(w->nested);
            planChecked(*w);
            Bytes arenas = 0;
            for (const auto& n : w->nested)
                arenas += n.plan.arenaSize;
            std::string notes;
            for (const auto& note : w->graph->notes)
                if (note.find("not planned inside") != std::string::npos || note.find("inlined") != std::string::npos)
                    notes += " [" + note + "]";
            // Every control-flow op left is planned inside, or a note says why not.
            for (const auto& op : w->graph->ops)
                if (op.type == "If" || op.type == "Loop" || op.type == "Scan" || op.type == "SequenceMap")
                    QVERIFY2(!op.bodies.empty() || notes.find(op.type + " '" + op.name + "': its graphs are not planned inside") != std::string::npos,
                        (name + " " + op.name).c_str());
            // Every graph that holds a value of its own has an arena (an If branch's results are
            // the If's outputs, not its own).
            for (const auto& n : w->nested) {
                bool holds = false;
                for (const auto& t : n.graph->tensors)
                    holds = holds || (t.kind != TensorKind::Weight && t.size > 0 && !(n.type == "If" && t.kind == TensorKind::Output));
                QVERIFY2(!holds || n.plan.arenaSize > 0, (name + " " + n.op + " " + n.body).c_str());
            }
            if (given) {
                inside += arenas > 0;
                inlined += !w->graph->inlinedIfs.empty();
            }
            summary << QString::fromStdString(name + (given ? "" : " (no input files)"))
                    + QStringLiteral(": %1 graphs, %2 B inside").arg(w->nested.size()).arg(arenas) + QString::fromStdString(notes);
        }
    }
    qInfo("%s", qPrintable(summary.join(QLatin1Char('\n'))));
    QVERIFY(cases >= 20);
    // Planned inside, or an If inlined (test_if, test_if_seq, test_if_opt: their condition is an input file).
    QVERIFY2(inside + inlined >= cases - 2, qPrintable(QStringLiteral("%1 of %2 cases plan values inside, %3 inline an If").arg(inside).arg(cases).arg(inlined)));
}

void TestControlFlow::vadModel()
{
    const QString path = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/models/tricky/vad_if.onnx");
    if (!QFile::exists(path))
        QSKIP("tests/models/tricky/vad_if.onnx is missing: run scripts/make_tricky_models.py");
    // Without the sample rate: one If that reserves its larger network's arena; its weights stay inside.
    auto unknown = loadWorkload(path.toStdString(), {});
    QVERIFY2(unknown, unknown ? "" : unknown.error().message.c_str());
    QCOMPARE(unknown->graph->ops.size(), std::size_t(2)); // Equal, If
    QCOMPARE(unknown->nested.size(), std::size_t(2));
    validateNested(unknown->nested);
    const auto& then = unknown->nested[0];
    Bytes thenWeights = 0;
    for (const auto& r : then.built.regions)
        thenWeights += r.size;
    QVERIFY(thenWeights > Bytes(600) * 1024);
    QVERIFY(regionBytes(*unknown, "weights") < 1024);
    const Plan unknownPlan = planChecked(*unknown);

    // With sr = 16000: every op of the 16 kHz network is a step, its weights the model's.
    LoadOptions options;
    options.bindings = srBinding(16000);
    auto known = loadWorkload(path.toStdString(), options);
    QVERIFY2(known, known ? "" : known.error().message.c_str());
    QVERIFY(known->nested.empty());
    QCOMPARE(known->graph->ops.size(), std::size_t(then.graph->ops.size() + 1)); // the branch's ops and Equal
    for (const auto& op : then.graph->ops)
        QVERIFY2(findOp(*known->graph, then.op + "/" + op.name), op.name.c_str());
    QCOMPARE(regionBytes(*known, "weights") - regionBytes(*unknown, "weights"), thenWeights);
    const Plan knownPlan = planChecked(*known);
    QVERIFY(knownPlan.arenaSize >= then.plan.arenaSize / 2);
    qInfo("vad_if: unknown sr: %zu ops, weights %lld B, arena %lld B; sr=16000: %zu ops, weights %lld B, arena %lld B",
        unknown->graph->ops.size(), static_cast<long long>(regionBytes(*unknown, "weights")), static_cast<long long>(unknownPlan.arenaSize),
        known->graph->ops.size(), static_cast<long long>(regionBytes(*known, "weights")), static_cast<long long>(knownPlan.arenaSize));

    // The runs memplan run makes, with the sample rate given: every op real, the arena and
    // per-tensor runs' outputs those of the no-reuse run, the measured peak the planned one.
    const auto session = runChecked(*known, path, { { "sr", int64Scalar(16000) } });
    QVERIFY2(session.allMatch(), session.firstMismatch().c_str());
    QCOMPARE(session.syntheticOps, 0);
    QCOMPARE(session.arena.stepPeakBytes, lowerBound(known->problem));
}

void TestControlFlow::ifBranchRunsAtItsOffsets()
{
    QTemporaryDir dir;
    const auto path = save(ifModel(false), dir, "sr.onnx");
    auto w = loadWorkload(path.toStdString(), {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    QCOMPARE(w->nested.size(), std::size_t(2));
    // The condition is known only at run time: each value decides the branch that runs in the region.
    for (const std::int64_t sr : { 16000, 8000 }) {
        const auto session = runChecked(*w, path, { { "sr", int64Scalar(sr) } });
        // The scratch of the same branch inlined (sr given at import): its ops as steps of the
        // model's graph, their values in its arena. The MatMul's scratchpad, or nothing (Neg): the
        // branch's result is written in the If's output, never an allocation of its own.
        auto g = importOnnx(path.toStdString(), srBinding(sr));
        QVERIFY(g);
        auto inlined = workloadFromGraph(*g, path.toStdString(), {});
        QVERIFY(inlined);
        const auto steps = runChecked(*inlined, path, { { "sr", int64Scalar(sr) } });
        checkPlaced(session, computedBytes(w->nested[sr == 16000 ? 0 : 1]), steps.arena.scratchBytes);
        QCOMPARE(compareOutputs(*w->graph, steps.arena.outputs, session.arena.outputs), std::string());
        QCOMPARE(session.arena.stepPeakBytes, lowerBound(w->problem));
    }
}

void TestControlFlow::loopBodyRunsAtItsOffsets()
{
    QTemporaryDir dir;
    const auto path = save(loopModel(5), dir, "loop5.onnx");
    auto w = loadWorkload(path.toStdString(), {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    QCOMPARE(w->nested.size(), std::size_t(1));
    // Every iteration reuses the body's region: acc is copied out and in again between them (the
    // scratch: 1 KiB), each slice of trace straight into the Loop's output.
    const auto session = runChecked(*w, path);
    checkPlaced(session, computedBytes(w->nested[0]), Bytes(256 * 4));
    QCOMPARE(session.arena.outputs.size(), std::size_t(2));
    QCOMPARE(session.arena.outputs[1].shape, (std::vector<std::int64_t> { 5, 1, 256 }));
}

void TestControlFlow::scanBodyRunsAtItsOffsets()
{
    QTemporaryDir dir;
    const auto path = save(scanModel(), dir, "scan.onnx");
    auto w = loadWorkload(path.toStdString(), {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    // The scratch: the state copied between iterations; each slice of ys goes straight into the output.
    const auto session = runChecked(*w, path);
    checkPlaced(session, computedBytes(w->nested[0]), Bytes(512));
}

void TestControlFlow::ifInsideLoopRunsAtItsOffsets()
{
    QTemporaryDir dir;
    const auto path = save(loopModel(4, true), dir, "loopif.onnx");
    auto w = loadWorkload(path.toStdString(), {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    QCOMPARE(w->nested[0].built.nested.size(), std::size_t(2));
    // The If's branches run in its region inside the body's region: every value of both levels
    // placed. The scratch: acc copied between iterations, and the If's result on its way from the
    // branch's region to its place in the body's (1 KiB each).
    const auto session = runChecked(*w, path);
    checkPlaced(session, computedBytes(w->nested[0]), Bytes(2 * 256 * 4));
}

void TestControlFlow::vadIfRunsAtItsOffsets()
{
    const QString path = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/models/tricky/vad_if.onnx");
    if (!QFile::exists(path))
        QSKIP("tests/models/tricky/vad_if.onnx is missing: run scripts/make_tricky_models.py");
    // Without the sample rate at import: the If stays, each network planned inside it.
    auto w = loadWorkload(path.toStdString(), {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    QCOMPARE(w->nested.size(), std::size_t(2));
    for (const std::int64_t sr : { 16000, 8000 }) {
        const auto session = runChecked(*w, path, { { "sr", int64Scalar(sr) } });
        // The same outputs and scratch as the model imported for that sample rate, whose network is its steps.
        LoadOptions options;
        options.bindings = srBinding(sr);
        auto known = loadWorkload(path.toStdString(), options);
        QVERIFY2(known, known ? "" : known.error().message.c_str());
        QVERIFY(known->nested.empty());
        const auto inlined = runChecked(*known, path, { { "sr", int64Scalar(sr) } });
        QVERIFY2(inlined.allMatch(), inlined.firstMismatch().c_str());
        checkPlaced(session, computedBytes(w->nested[sr == 16000 ? 0 : 1]), inlined.arena.scratchBytes);
        const auto mismatch = compareOutputs(*w->graph, inlined.arena.outputs, session.arena.outputs);
        QVERIFY2(mismatch.empty(), mismatch.c_str());
    }
}

void TestControlFlow::backendCasesRunAtTheirOffsets()
{
    const fs::path root = "/usr/share/libonnx-testdata/data/node";
    if (!fs::is_directory(root))
        QSKIP("libonnx-testdata is not installed");
    int placed = 0, cases = 0;
    QStringList summary;
    for (const auto& entry : fs::directory_iterator(root)) {
        const auto name = entry.path().filename().string();
        if (name.rfind("test_if", 0) != 0 && name.rfind("test_loop", 0) != 0 && name.rfind("test_scan", 0) != 0
            && name.rfind("test_sequence_map", 0) != 0)
            continue;
        const auto model = (entry.path() / "model.onnx").string();
        const auto set = entry.path() / "test_data_set_0";
        const auto declared = declaredInputs(model);
        QVERIFY(declared);
        std::vector<std::pair<std::string, fs::path>> files;
        for (std::size_t k = 0; k < declared->size(); ++k)
            if (const auto file = set / ("input_" + std::to_string(k) + ".pb"); fs::exists(file))
                files.emplace_back((*declared)[k].name, file);
        // Imported without the input files where it plans so (an If's condition then stays
        // unknown, its branches planned inside), else with them; run with them.
        ShapeBindings bindings;
        auto inputs = readGivenInputs(model, files, bindings);
        QVERIFY2(inputs, (name + ": " + (inputs ? std::string() : inputs.error().message)).c_str());
        std::optional<RunSession> session;
        std::string failures;
        for (const bool withFiles : { false, true }) {
            LoadOptions options;
            if (withFiles)
                options.inputFiles = files;
            auto loaded = loadWorkload(model, options);
            if (!loaded || loaded->nested.empty())
                continue;
            auto run = tryRunChecked(*loaded, QString::fromStdString(model), *inputs);
            if (!run) {
                failures += " [" + std::string(withFiles ? "with" : "without") + " input files at import: " + run.error().message + "]";
                continue;
            }
            session = std::move(*run);
            break;
        }
        if (!session) {
            QVERIFY2(failures.empty(), (name + ":" + failures).c_str());
            continue; // nothing planned inside
        }
        ++cases;
        QVERIFY2(session->allMatch(), (name + ": " + session->firstMismatch()).c_str());
        QCOMPARE(session->syntheticOps, 0);
        // The expected outputs of the test case (ONNX's reference implementation).
        for (std::size_t k = 0; k < session->arena.outputs.size(); ++k) {
            const auto expected = readValueFile(set / ("output_" + std::to_string(k) + ".pb"), session->arena.outputs[k]);
            QVERIFY2(expected, (name + ": output " + std::to_string(k)).c_str());
            const auto& e = expected->second;
            const auto& a = session->arena.outputs[k];
            QVERIFY2(e.none == a.none && e.items == a.items && e.data.size() == a.data.size(), (name + ": output " + std::to_string(k)).c_str());
            for (std::size_t i = 0; e.dtype == DType::Float32 && i < e.data.size() / 4; ++i) {
                float x = 0, y = 0;
                std::memcpy(&x, e.data.data() + 4 * i, 4);
                std::memcpy(&y, a.data.data() + 4 * i, 4);
                QVERIFY2(std::fabs(x - y) <= 1e-5f + 1e-5f * std::fabs(x), (name + ": output " + std::to_string(k) + " element " + std::to_string(i)).c_str());
            }
            if (e.dtype != DType::Float32)
                QVERIFY2(e.data == a.data, (name + ": output " + std::to_string(k)).c_str());
        }
        const auto notes = bodyNotes(session->arena);
        placed += notes.empty();
        summary << QString::fromStdString(name + ": " + (notes.empty() ? std::string("every value placed") : "\n" + notes));
    }
    qInfo("%s", qPrintable(summary.join(QLatin1Char('\n'))));
    QVERIFY(cases >= 10);
    QVERIFY2(placed >= 3, qPrintable(QStringLiteral("%1 of %2 cases ran with every value placed").arg(placed).arg(cases)));
}

void TestControlFlow::grownBodyValueFallsBack()
{
    QTemporaryDir dir;
    const auto path = save(growingLoopModel(), dir, "grow.onnx");
    auto w = loadWorkload(path.toStdString(), {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    QCOMPARE(w->nested.size(), std::size_t(1));
    const auto& body = w->nested[0];
    Bytes plannedAcc = -1;
    for (std::size_t b = 0; b < body.built.problem.buffers.size(); ++b)
        if (body.built.problem.buffers[b].name == "acc_out")
            plannedAcc = body.built.problem.buffers[b].size;
    qInfo("acc_out planned: %lld B", static_cast<long long>(plannedAcc));
    // The body is planned for the first iteration: acc grows past its buffer in the later ones.
    QVERIFY(plannedAcc > 0 && plannedAcc < Bytes(41 * 256 * 4));
    const auto session = runChecked(*w, path);
    QVERIFY2(session.allMatch(), session.firstMismatch().c_str());
    QCOMPARE(session.syntheticOps, 0);
    QCOMPARE(session.arena.outputs[0].shape, (std::vector<std::int64_t> { 41, 256 }));
    const auto notes = bodyNotes(session.arena);
    qInfo("%s", notes.c_str());
    QVERIFY2(notes.find("Loop 'grow' body: value 'acc_out' needs ") != std::string::npos, notes.c_str());
    QVERIFY2(notes.find("its planned buffer holds " + std::to_string(plannedAcc) + ": an allocation of its own") != std::string::npos, notes.c_str());
    // One note per value, however many iterations fell back.
    std::size_t mentions = 0;
    for (auto at = notes.find("value 'acc_out'"); at != std::string::npos; at = notes.find("value 'acc_out'", at + 1))
        ++mentions;
    QCOMPARE(mentions, std::size_t(1));
    // The fallback is scratch: at least the last iteration's acc_out (41 rows).
    QVERIFY(session.arena.scratchBytes >= Bytes(41 * 256 * 4));
}

void TestControlFlow::overlappingBodyOffsetsFailTheCheck()
{
    QTemporaryDir dir;
    const auto path = save(scanModel(), dir, "scan.onnx");
    auto w = loadWorkload(path.toStdString(), {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    // s_out = s_in + a_in and y = s_out * a_in: a_in is read after s_out is written. Put s_out
    // where a_in is: the nested plan no longer validates, and the run shows it.
    Workload bad = *w;
    auto& n = bad.nested[0];
    int sOut = -1, aIn = -1;
    for (std::size_t b = 0; b < n.built.problem.buffers.size(); ++b) {
        if (n.built.problem.buffers[b].name == "s_out")
            sOut = int(b);
        if (n.built.problem.buffers[b].name == "a_in")
            aIn = int(b);
    }
    QVERIFY(sOut >= 0 && aIn >= 0);
    QVERIFY(n.plan.offsets[std::size_t(sOut)] != n.plan.offsets[std::size_t(aIn)]);
    n.plan.offsets[std::size_t(sOut)] = n.plan.offsets[std::size_t(aIn)];
    const auto check = validatePlan(n.built.problem, n.plan);
    QVERIFY(!check.ok());
    QVERIFY2(check.message.find("s_out") != std::string::npos || check.message.find("a_in") != std::string::npos, check.message.c_str());
    const auto session = runChecked(bad, path);
    QVERIFY2(!session.arenaMismatch.empty(), "the arena run with overlapping body values matched the reference");
    QVERIFY2(session.arenaMismatch.find("output 'ys'") != std::string::npos, session.arenaMismatch.c_str());
    QVERIFY(!session.perTensorMismatch.empty());
    // The same workload with its own nested plan passes.
    const auto good = runChecked(*w, path);
    QVERIFY2(good.allMatch(), good.firstMismatch().c_str());
}

void TestControlFlow::bodyPlanOfAnotherGraphIsNotUsed()
{
    QTemporaryDir dir;
    const auto path = save(scanModel(), dir, "scan.onnx");
    auto w = loadWorkload(path.toStdString(), {});
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    // A plan whose graph names its ops otherwise than the graph the run runs: every value of the
    // body its own allocation, with one note saying why, and the outputs still the reference's.
    Workload renamed = *w;
    auto graph = std::make_shared<Graph>(*renamed.nested[0].graph);
    graph->ops[0].name = "elsewhere";
    renamed.nested[0].graph = graph;
    auto session = runChecked(renamed, path);
    QVERIFY2(session.allMatch(), session.firstMismatch().c_str());
    const auto notes = bodyNotes(session.arena);
    QVERIFY2(notes.find("Scan 'scan0' body: its values run in allocations of their own: op 0 is 'elsewhere' in its plan, '")
            != std::string::npos, notes.c_str());
    QCOMPARE(session.arena.scratchBytes, session.reference.scratchBytes);
    // A plan larger than the op's region (a plan for another problem): the same.
    Workload larger = *w;
    larger.nested[0].plan.arenaSize = larger.problem.buffers[std::size_t(bufferNamed(larger, "scan0 body"))].size + 256;
    session = runChecked(larger, path);
    QVERIFY2(session.allMatch(), session.firstMismatch().c_str());
    QVERIFY2(bodyNotes(session.arena).find("is larger than the op's region") != std::string::npos, bodyNotes(session.arena).c_str());
}

QTEST_GUILESS_MAIN(TestControlFlow)
#include "tst_controlflow.moc"
