// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The Studio over control flow planned inside (core::NestedPlan): the arena view draws an op's
// "<op> body" block with its graph's buffers inside, the tensor table lists the graphs' buffers by
// Subgraph, the summary their steps and arenas, and a selection travels between table and view.
#include "qcp.h" // first: see qcp.h

#include "arenalayoutview.h"
#include "mainwindow.h"
#include "nestedgraphs.h"
#include "plandocument.h"
#include "summarypanel.h"
#include "tensortablemodel.h"

#include "io/workload.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "util/format.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <onnx/onnx_pb.h>

#include <fstream>
#include <memory>
#include <set>

namespace {

using onnx::TensorProto;

const QString kVadPath = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/models/tricky/vad_if.onnx");

// ---- a Loop whose body holds an If, built in memory (as tst_controlflow's loopModel)

void declare(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name, int elemType,
    const std::vector<std::int64_t>* dims)
{
    auto* vi = list->Add();
    vi->set_name(name);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elemType);
    if (dims)
        for (auto d : *dims)
            t->mutable_shape()->add_dim()->set_dim_value(d);
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

void constant(onnx::GraphProto* g, const std::string& name, int elemType, const std::vector<std::int64_t>& dims, double value)
{
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(elemType);
    std::int64_t n = 1;
    for (auto d : dims) {
        t->add_dims(d);
        n *= d;
    }
    for (std::int64_t i = 0; i < n; ++i) {
        if (elemType == TensorProto::FLOAT)
            t->add_float_data(float(value));
        else if (elemType == TensorProto::BOOL)
            t->add_int32_data(int(value));
        else
            t->add_int64_data(std::int64_t(value));
    }
}

onnx::GraphProto* graphAttribute(onnx::NodeProto* n, const char* name)
{
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name(name);
    return a->mutable_g();
}

// Loop "loop0" (4 trips) carrying acc [1, 256]; its body doubles acc, adds X, and on even iterations
// (a condition import cannot know) the If "if_inner" squashes it (then: Relu, Sigmoid), else negates it.
QString writeLoopIfModel(const QTemporaryDir& dir)
{
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto* g = m.mutable_graph();
    g->set_name("loop_if");
    const std::vector<std::int64_t> row { 1, 256 }, none;
    declare(g->mutable_input(), "X", TensorProto::FLOAT, &row);
    constant(g, "M", TensorProto::INT64, {}, 4);
    constant(g, "go", TensorProto::BOOL, {}, 1);
    constant(g, "acc0", TensorProto::FLOAT, row, 0);
    auto* loop = node(g, "Loop", { "M", "go", "acc0" }, { "acc", "trace" }, "loop0");
    auto* body = graphAttribute(loop, "body");
    declare(body->mutable_input(), "i", TensorProto::INT64, &none);
    declare(body->mutable_input(), "c_in", TensorProto::BOOL, &none);
    declare(body->mutable_input(), "acc_in", TensorProto::FLOAT, &row);
    constant(body, "two", TensorProto::FLOAT, {}, 2);
    node(body, "Mul", { "acc_in", "two" }, { "doubled" }, "double");
    node(body, "Add", { "doubled", "X" }, { "summed" }, "add_x");
    constant(body, "k2", TensorProto::INT64, {}, 2);
    constant(body, "k0", TensorProto::INT64, {}, 0);
    node(body, "Mod", { "i", "k2" }, { "parity" }, "parity");
    node(body, "Equal", { "parity", "k0" }, { "even" }, "even");
    auto* inner = node(body, "If", { "even" }, { "acc_out" }, "if_inner");
    auto* then = graphAttribute(inner, "then_branch");
    node(then, "Relu", { "summed" }, { "kept" });
    node(then, "Sigmoid", { "kept" }, { "squashed" });
    declare(then->mutable_output(), "squashed", TensorProto::FLOAT, nullptr);
    auto* otherwise = graphAttribute(inner, "else_branch");
    // Each branch holds a value of its own: its result is the If's output, planned around it.
    node(otherwise, "Neg", { "summed" }, { "negated" });
    node(otherwise, "Abs", { "negated" }, { "magnitude" });
    declare(otherwise->mutable_output(), "magnitude", TensorProto::FLOAT, nullptr);
    node(body, "Identity", { "c_in" }, { "c_out" }, "go_on");
    node(body, "Identity", { "acc_out" }, { "scan" }, "emit");
    declare(body->mutable_output(), "c_out", TensorProto::BOOL, nullptr);
    declare(body->mutable_output(), "acc_out", TensorProto::FLOAT, nullptr);
    declare(body->mutable_output(), "scan", TensorProto::FLOAT, nullptr);
    declare(g->mutable_output(), "acc", TensorProto::FLOAT, nullptr);
    declare(g->mutable_output(), "trace", TensorProto::FLOAT, nullptr);
    const QString path = dir.filePath(QStringLiteral("loop_if.onnx"));
    std::ofstream out(path.toStdString(), std::ios::binary);
    m.SerializeToOstream(&out);
    return path;
}

std::shared_ptr<const core::Workload> load(const QString& path)
{
    auto loaded = core::loadWorkload(path.toStdString(), {});
    if (!loaded)
        qFatal("%s: %s", qPrintable(path), loaded.error().message.c_str());
    return std::make_shared<const core::Workload>(std::move(*loaded));
}

// Every nested plan valid for its problem, at every level; false names the first that is not.
bool nestedPlansValid(const std::vector<core::NestedPlan>& plans, QString* failure)
{
    for (const auto& n : plans) {
        if (const auto check = core::validatePlan(n.built.problem, n.plan); !check.ok()) {
            *failure = QString::fromStdString(n.op + " " + n.body + ": " + check.message);
            return false;
        }
        if (!nestedPlansValid(n.built.nested, failure))
            return false;
    }
    return true;
}

// The workload planned with `planner`, the plan validated.
core::Plan planned(const core::Workload& workload, const char* planner)
{
    auto plan = core::runPlanner(*core::plannerByName(planner), workload.problem);
    if (!plan)
        qFatal("%s: %s", planner, plan.error().message.c_str());
    if (const auto check = core::validatePlan(workload.problem, *plan); !check.ok())
        qFatal("%s: invalid plan: %s", planner, check.message.c_str());
    return std::move(*plan);
}

// Plans the workload with `planner`, validates it and the nested plans, and puts both in `document`.
void open(PlanDocument& document, std::shared_ptr<const core::Workload> workload, const char* planner = "greedy-by-size")
{
    core::Plan plan = planned(*workload, planner);
    QString failure;
    if (!nestedPlansValid(workload->nested, &failure))
        qFatal("invalid nested plan: %s", qPrintable(failure));
    document.setWorkload(std::move(workload));
    document.setPlan(std::move(plan));
}

// Buffers of every nested problem, every level.
int nestedBufferCount(const std::vector<core::NestedPlan>& plans, bool withTensorOnly)
{
    int count = 0;
    for (const auto& n : plans) {
        for (core::TensorIndex t : n.built.bufferTensor)
            count += !withTensorOnly || t >= 0;
        count += nestedBufferCount(n.built.nested, withTensorOnly);
    }
    return count;
}

// `inner` lies inside `outer`, up to rounding.
bool inside(const QRectF& inner, const QRectF& outer)
{
    return inner.left() >= outer.left() - 0.01 && inner.right() <= outer.right() + 0.01 && inner.top() >= outer.top() - 0.01
        && inner.bottom() <= outer.bottom() + 0.01;
}

// QTest::mouseMove does not reach a widget's mouseMoveEvent on the offscreen platform: send it.
void sendMove(QWidget* widget, QPointF pos)
{
    QMouseEvent event(QEvent::MouseMove, pos, widget->mapToGlobal(pos), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(widget, &event);
}

// The largest inner buffer of graph `graph` that is drawn, not a block of its own, or an invalid one.
ArenaLayoutView::InnerBuffer largestInner(const ArenaLayoutView& view, int graph)
{
    const auto& buffers = view.nested()[static_cast<std::size_t>(graph)].plan->built.problem.buffers;
    ArenaLayoutView::InnerBuffer best;
    double area = 0;
    for (int b = 0; b < static_cast<int>(buffers.size()); ++b) {
        const QRectF r = view.innerRect(view.frame(), { graph, b });
        if (buffers[static_cast<std::size_t>(b)].kind != core::TensorKind::Workspace && r.width() * r.height() > area) {
            area = r.width() * r.height();
            best = { graph, b };
        }
    }
    return best;
}

} // namespace

class TestNestedViews : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void graphsAreListedDepthFirst();
    void arenaDrawsTheDecidingBranchInsideItsBlock();
    void arenaHoverClickAndZoom();
    void doubleClickZoomsToTheBlock();
    void nestedBlockInsideItsBody();
    void tableListsBodyBuffers();
    void tableWithoutControlFlowHasNoBodyRows();
    void summaryListsTheGraphs();
    void windowSyncsTableAndBlock();
    void screenshots();
};

void TestNestedViews::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("MemPlanTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_nestedviews"));
}

void TestNestedViews::graphsAreListedDepthFirst()
{
    QTemporaryDir dir;
    const auto workload = load(writeLoopIfModel(dir));
    const auto graphs = nestedGraphs(*workload);
    QStringList paths;
    for (const auto& g : graphs)
        paths << g.path;
    QCOMPARE(paths,
        (QStringList { QStringLiteral("loop0 / body"), QStringLiteral("loop0 / body / if_inner / then_branch"),
            QStringLiteral("loop0 / body / if_inner / else_branch") }));
    QCOMPARE(graphs[0].parent, -1);
    QCOMPARE(graphs[1].parent, 0);
    QCOMPARE(graphs[2].depth, 1);
    // Each is planned into its op's reservation; the If's graphs are held, through the Loop's, by "loop0 body".
    const int loopBody = graphs[0].reservation;
    QVERIFY(loopBody >= 0);
    QCOMPARE(workload->problem.buffers[static_cast<std::size_t>(loopBody)].name, std::string("loop0 body"));
    const auto& body = graphs[0].plan->built.problem;
    QCOMPARE(body.buffers[static_cast<std::size_t>(graphs[1].reservation)].name, std::string("if_inner body"));
    QCOMPARE(graphs[2].reservation, graphs[1].reservation);
    QCOMPARE(graphs[1].outerBuffer, loopBody);
    QCOMPARE(graphs[1].baseInOuter, graphs[0].plan->plan.offsets[static_cast<std::size_t>(graphs[1].reservation)]);
}

void TestNestedViews::arenaDrawsTheDecidingBranchInsideItsBlock()
{
    if (!QFile::exists(kVadPath))
        QSKIP("tests/models/tricky/vad_if.onnx is missing: run scripts/make_tricky_models.py");
    PlanDocument document;
    ArenaLayoutView view(&document);
    const auto workload = load(kVadPath); // without sr: the If stays control flow
    QCOMPARE(workload->nested.size(), std::size_t(2));
    open(document, workload);
    view.resize(1200, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));

    QCOMPARE(view.bodyBlocks().size(), std::size_t(1));
    const ArenaLayoutView::BodyBlock block = view.bodyBlocks()[0];
    QCOMPARE(block.parent, -1);
    QCOMPARE(block.graphs.size(), std::size_t(2));
    const int deciding = workload->nested[0].decides ? 0 : 1;
    QCOMPARE(block.shown, deciding);
    const auto frame = view.frame();
    const QRectF box = view.blockRect(frame, 0);
    QCOMPARE(box, view.bufferRect(frame, block.reservation));
    QVERIFY2(box.width() > 100 && box.height() > 100, qPrintable(QStringLiteral("block %1x%2").arg(box.width()).arg(box.height())));
    QCOMPARE(view.blockLabel(0), QString::fromStdString(workload->nested[std::size_t(deciding)].op) + QStringLiteral(" · ")
            + QString::fromStdString(workload->nested[std::size_t(deciding)].body) + QStringLiteral(" · decides"));

    // One rectangle per buffer of the deciding graph, each inside the block, in the block's bytes.
    const auto countInside = [&](int graph) {
        const auto& nested = *view.nested()[static_cast<std::size_t>(graph)].plan;
        int drawn = 0;
        for (int b = 0; b < static_cast<int>(nested.built.problem.buffers.size()); ++b) {
            const QRectF r = view.innerRect(frame, { graph, b });
            if (r.isNull())
                continue;
            ++drawn;
            if (!inside(r, box))
                qWarning("%s lies outside its block", nested.built.problem.buffers[static_cast<std::size_t>(b)].name.c_str());
            else if (r.height() <= 0 || r.width() <= 0)
                qWarning("%s has no area", nested.built.problem.buffers[static_cast<std::size_t>(b)].name.c_str());
            else
                continue;
            return -1;
        }
        return drawn;
    };
    const auto& decidingPlan = workload->nested[std::size_t(deciding)];
    QVERIFY(decidingPlan.built.problem.buffers.size() >= 10); // a conv front end, convs, an LSTM, a head
    QCOMPARE(countInside(deciding), int(decidingPlan.built.problem.buffers.size()));
    const int other = 1 - deciding;
    QVERIFY(view.innerRect(frame, { other, 0 }).isNull()); // not drawn
    // The deciding graph's arena fills the reservation: its top buffer reaches the block's top.
    double top = box.bottom();
    for (int b = 0; b < static_cast<int>(decidingPlan.built.problem.buffers.size()); ++b)
        top = std::min(top, view.innerRect(frame, { deciding, b }).top());
    QVERIFY2(std::abs(top - box.top()) < 1.5, qPrintable(QStringLiteral("top %1, block top %2").arg(top).arg(box.top())));

    // The other branch: its own buffers, fewer bytes, still inside the block.
    const QImage before = view.grab().toImage();
    view.showGraph(other);
    QCOMPARE(view.bodyBlocks()[0].shown, other);
    QVERIFY(view.innerRect(frame, { deciding, 0 }).isNull());
    QCOMPARE(countInside(other), int(workload->nested[std::size_t(other)].built.problem.buffers.size()));
    QVERIFY(view.blockLabel(0).endsWith(QStringLiteral("does not decide")));
    QVERIFY(view.grab().toImage() != before);
    // A new plan keeps the branch chosen; a new workload goes back to the deciding one.
    document.setPlan(planned(*workload, "first-fit"));
    QCOMPARE(view.bodyBlocks()[0].shown, other);
    document.setWorkload(load(kVadPath));
    QCOMPARE(view.bodyBlocks()[0].shown, deciding);
}

void TestNestedViews::arenaHoverClickAndZoom()
{
    if (!QFile::exists(kVadPath))
        QSKIP("tests/models/tricky/vad_if.onnx is missing: run scripts/make_tricky_models.py");
    PlanDocument document;
    ArenaLayoutView view(&document);
    const auto workload = load(kVadPath);
    open(document, workload);
    view.resize(1200, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const int graph = view.bodyBlocks()[0].shown;
    const int reservation = view.bodyBlocks()[0].reservation;
    const ArenaLayoutView::InnerBuffer target = largestInner(view, graph);
    QVERIFY(target.valid());
    const QPointF centre = view.innerRect(view.frame(), target).center();
    QCOMPARE(view.innerBufferAt(view.frame(), centre), target);
    QCOMPARE(view.bufferUnder(centre), reservation); // the block is the workload's buffer there

    const auto& nested = *view.nested()[static_cast<std::size_t>(graph)].plan;
    const auto& buffer = nested.built.problem.buffers[static_cast<std::size_t>(target.buffer)];
    const QString tip = view.innerToolTip(target);
    QVERIFY2(tip.contains(QString::fromStdString(buffer.name).toHtmlEscaped()), qPrintable(tip));
    QVERIFY(tip.contains(view.nested()[static_cast<std::size_t>(graph)].path));
    QVERIFY(tip.contains(QStringLiteral("body steps [%1, %2)").arg(buffer.lifetime.start).arg(buffer.lifetime.end)));
    const core::Bytes inArena = document.plan()->offsets[static_cast<std::size_t>(reservation)]
        + nested.plan.offsets[static_cast<std::size_t>(target.buffer)];
    QVERIFY2(tip.contains(QString::fromStdString(core::formatBytes(inArena)) + QStringLiteral(" in the arena")), qPrintable(tip));

    // Hover outlines it; a click selects the block and the buffer inside it.
    sendMove(&view, centre);
    QCOMPARE(document.hoveredBuffer(), reservation);
    QCOMPARE(view.hoveredInner(), target);
    sendMove(&view, QPointF(view.frame().plot.left() + 2, view.frame().plot.top() + 2)); // step 0, above every buffer
    QVERIFY(!view.hoveredInner().valid());
    QSignalSpy chosen(&view, &ArenaLayoutView::innerBufferSelected);
    QTest::mouseClick(&view, Qt::LeftButton, {}, centre.toPoint());
    QCOMPARE(document.selectedBuffer(), reservation);
    QCOMPARE(view.selectedInner(), target);
    QCOMPARE(chosen.count(), 1);
    QCOMPARE(chosen.at(0).at(1).toInt(), target.buffer);
    // Selecting another buffer of the workload drops the inner one.
    document.selectBuffer(reservation == 0 ? 1 : 0);
    QVERIFY(!view.selectedInner().valid());

    // Zoomed to the block, it is in view and as wide as the axis allows (two steps at the least).
    view.zoomToBlock(0);
    const QRectF plot(view.frame().plot);
    const QRectF zoomed = view.blockRect(view.frame(), 0);
    QVERIFY2(zoomed.width() > 0.45 * plot.width(), qPrintable(QString::number(zoomed.width())));
    QVERIFY(zoomed.left() >= plot.left() - 1 && zoomed.right() <= plot.right() + 2);
}

// On a model of several steps a block is a sliver: a double-click on it zooms the step axis to it,
// another (it is as wide as zooming makes it) fits the whole schedule again.
void TestNestedViews::doubleClickZoomsToTheBlock()
{
    const QString path = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/models/tricky/if_nms.onnx");
    if (!QFile::exists(path))
        QSKIP("tests/models/tricky/if_nms.onnx is missing: run scripts/make_tricky_models.py");
    PlanDocument document;
    ArenaLayoutView view(&document);
    const auto workload = load(path);
    open(document, workload);
    view.resize(1200, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QCOMPARE(view.bodyBlocks().size(), std::size_t(1));
    QVERIFY(workload->problem.steps >= 4);
    const QRectF before = view.blockRect(view.frame(), 0);
    QVERIFY2(before.width() < 0.3 * view.frame().plot.width(), qPrintable(QString::number(before.width())));
    QTest::mouseDClick(&view, Qt::LeftButton, {}, before.center().toPoint());
    const QRectF zoomed = view.blockRect(view.frame(), 0);
    QVERIFY2(zoomed.width() > 0.45 * view.frame().plot.width(), qPrintable(QString::number(zoomed.width())));
    QVERIFY(zoomed.left() >= view.frame().plot.left() - 1 && zoomed.right() <= view.frame().plot.right() + 2);
    QTest::mouseDClick(&view, Qt::LeftButton, {}, zoomed.center().toPoint());
    QCOMPARE(document.firstVisibleStep(), 0.0);
    QCOMPARE(document.lastVisibleStep(), double(workload->problem.steps));
}

void TestNestedViews::nestedBlockInsideItsBody()
{
    QTemporaryDir dir;
    PlanDocument document;
    ArenaLayoutView view(&document);
    const auto workload = load(writeLoopIfModel(dir));
    open(document, workload);
    view.resize(1200, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    // The Loop's block, and inside it the If's.
    QCOMPARE(view.bodyBlocks().size(), std::size_t(2));
    const auto& ifBlock = view.bodyBlocks()[1];
    QCOMPARE(ifBlock.parent, 0);
    QCOMPARE(ifBlock.graphs, (std::vector<int> { 1, 2 }));
    const auto frame = view.frame();
    const QRectF loopBox = view.blockRect(frame, 0), ifBox = view.blockRect(frame, 1);
    QVERIFY(!loopBox.isEmpty() && !ifBox.isEmpty());
    QVERIFY(inside(ifBox, loopBox));
    QVERIFY(ifBox.width() < loopBox.width()); // one step of the body's
    QCOMPARE(ifBox, view.innerRect(frame, { 0, ifBlock.reservation }));
    for (int graph : ifBlock.graphs) {
        view.showGraph(graph);
        const auto& problem = view.nested()[static_cast<std::size_t>(graph)].plan->built.problem;
        QVERIFY(!problem.buffers.empty());
        for (int b = 0; b < static_cast<int>(problem.buffers.size()); ++b) {
            const QRectF r = view.innerRect(frame, { graph, b });
            QVERIFY2(!r.isNull() && inside(r, ifBox), problem.buffers[static_cast<std::size_t>(b)].name.c_str());
        }
        QCOMPARE(view.blockAt(frame, view.innerRect(frame, { graph, 0 }).center()), 1);
        QCOMPARE(view.innerBufferAt(frame, view.innerRect(frame, { graph, 0 }).center()).graph, graph);
    }
    // Selecting a buffer of the If's branch that is not drawn draws it.
    view.showGraph(1);
    view.selectInner({ 2, 0 });
    QCOMPARE(view.bodyBlocks()[1].shown, 2);
    QCOMPARE(view.selectedInner(), (ArenaLayoutView::InnerBuffer { 2, 0 }));
}

void TestNestedViews::tableListsBodyBuffers()
{
    if (!QFile::exists(kVadPath))
        QSKIP("tests/models/tricky/vad_if.onnx is missing: run scripts/make_tricky_models.py");
    PlanDocument document;
    TensorTableModel model(&document);
    TensorFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const auto workload = load(kVadPath);
    open(document, workload);
    const int outer = int(workload->problem.buffers.size());
    const int bodies = nestedBufferCount(workload->nested, false);
    QVERIFY(bodies > 20);
    QCOMPARE(nestedBufferCount(workload->nested, true), bodies); // every body buffer holds a tensor here
    QCOMPARE(model.rowCount(), outer + bodies);
    QVERIFY(model.hasBodies());
    QCOMPARE(model.headerData(TensorTableModel::Subgraph, Qt::Horizontal).toString(), QStringLiteral("Subgraph"));
    QVERIFY(model.headerData(TensorTableModel::Offset, Qt::Horizontal, Qt::ToolTipRole).toString().contains(QStringLiteral("that graph's arena")));

    // The workload's rows first, row == buffer, no subgraph; then each graph's buffers with their own numbers.
    for (int row = 0; row < outer; ++row) {
        QCOMPARE(model.index(row, TensorTableModel::Subgraph).data().toString(), QString());
        QCOMPARE(model.index(row, 0).data(TensorTableModel::BufferRole).toInt(), row);
    }
    int row = outer;
    for (std::size_t g = 0; g < workload->nested.size(); ++g) {
        const auto& n = workload->nested[g];
        const QString path = QString::fromStdString(n.op + " / " + n.body);
        const int reservation = reservationOf(workload->problem, n);
        QVERIFY(reservation >= 0);
        for (std::size_t b = 0; b < n.built.problem.buffers.size(); ++b, ++row) {
            const auto& buffer = n.built.problem.buffers[b];
            QCOMPARE(model.index(row, TensorTableModel::Name).data().toString(), QString::fromStdString(buffer.name));
            QCOMPARE(model.index(row, TensorTableModel::Subgraph).data().toString(), path);
            QCOMPARE(model.index(row, TensorTableModel::Start).data().toInt(), buffer.lifetime.start);
            QCOMPARE(model.index(row, TensorTableModel::End).data().toInt(), buffer.lifetime.end);
            QCOMPARE(model.index(row, TensorTableModel::Size).data(TensorTableModel::SortRole).toLongLong(), buffer.size);
            QCOMPARE(model.index(row, TensorTableModel::Offset).data(TensorTableModel::SortRole).toLongLong(), n.plan.offsets[b]);
            QCOMPARE(model.index(row, 0).data(TensorTableModel::BufferRole).toInt(), reservation);
            QCOMPARE(model.index(row, 0).data(TensorTableModel::NestedGraphRole).toInt(), int(g));
            QCOMPARE(model.index(row, 0).data(TensorTableModel::NestedBufferRole).toInt(), int(b));
            QCOMPARE(model.rowOf(int(g), int(b)), row);
        }
    }
    // Producers and types come from the graph the buffer is in.
    int produced = 0;
    for (int r = outer; r < model.rowCount(); ++r)
        produced += model.index(r, TensorTableModel::Producer).data().toString() != QStringLiteral("—")
            && model.index(r, TensorTableModel::Type).data().toString().startsWith(QStringLiteral("float32"));
    QVERIFY2(produced > bodies / 2, qPrintable(QString::number(produced)));

    // Filtering by the subgraph keeps that graph's rows; sorting by it groups them.
    const auto& then = workload->nested[0];
    proxy.setNameFilter(QString::fromStdString(then.body));
    QCOMPARE(proxy.rowCount(), int(then.built.problem.buffers.size()));
    proxy.setNameFilter({});
    proxy.sort(TensorTableModel::Subgraph, Qt::AscendingOrder);
    QStringList seen;
    for (int r = 0; r < proxy.rowCount(); ++r) {
        const QString path = proxy.index(r, TensorTableModel::Subgraph).data().toString();
        if (seen.isEmpty() || seen.back() != path) {
            QVERIFY2(!seen.contains(path), qPrintable(path + QStringLiteral(" comes in two runs")));
            seen << path;
        }
    }
    QCOMPARE(seen.size(), 3);
    QCOMPARE(seen.front(), QString());
}

void TestNestedViews::tableWithoutControlFlowHasNoBodyRows()
{
    PlanDocument document;
    TensorTableModel model(&document);
    QTemporaryDir dir;
    open(document, load(writeLoopIfModel(dir)));
    QVERIFY(model.hasBodies());
    QVERIFY(model.index(model.rowCount() - 1, TensorTableModel::Subgraph)
                .data()
                .toString()
                .startsWith(QStringLiteral("loop0 / body / if_inner / ")));
    QCOMPARE(model.rowCount(), int(document.workload()->problem.buffers.size()) + nestedBufferCount(document.workload()->nested, false));
    const auto cnn = load(QStringLiteral("example:cnn"));
    open(document, cnn);
    QVERIFY(!model.hasBodies());
    QCOMPARE(model.rowCount(), int(cnn->problem.buffers.size()));
    for (int row = 0; row < model.rowCount(); ++row)
        QCOMPARE(model.index(row, TensorTableModel::Subgraph).data().toString(), QString());
}

void TestNestedViews::summaryListsTheGraphs()
{
    QTemporaryDir dir;
    PlanDocument document;
    SummaryPanel panel(&document);
    const auto workload = load(writeLoopIfModel(dir));
    open(document, workload);
    const QString text = panel.summaryText();
    QVERIFY2(text.contains(QStringLiteral("\nControl flow\n")), qPrintable(text));
    const auto& then = workload->nested[0].built.nested[0];
    QVERIFY2(text.contains(QStringLiteral("then_branch: %1 steps · %2 decides\n")
                               .arg(then.built.problem.steps)
                               .arg(QString::fromStdString(core::formatBytes(then.plan.arenaSize)))),
        qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("else_branch")));
    open(document, load(QStringLiteral("example:cnn")));
    QVERIFY(!panel.summaryText().contains(QStringLiteral("Control flow")));
}

// In the window: choosing a body buffer's row selects its block in every view and outlines the
// buffer in the arena; clicking a buffer inside the block chooses its row.
void TestNestedViews::windowSyncsTableAndBlock()
{
    QTemporaryDir dir;
    MainWindow window;
    window.setPlannerName(QStringLiteral("greedy-by-size"));
    window.resize(1400, 900);
    window.show();
    QSignalSpy planned(&window, &MainWindow::planDisplayed);
    window.openFile(writeLoopIfModel(dir));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, 60000);
    QTableView* table = window.tensorTable();
    QVERIFY(!table->isColumnHidden(TensorTableModel::Subgraph));
    TensorTableModel* model = window.tensorModel();
    ArenaLayoutView* arena = window.arenaLayoutView();
    const int row = model->rowOf(2, 0); // a buffer of the If's else_branch, not drawn at first
    QVERIFY(row >= 0);
    const QModelIndex index = window.tensorProxy()->mapFromSource(model->index(row, 0));
    table->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    QCOMPARE(window.document()->selectedBuffer(), model->nested()[2].outerBuffer);
    QCOMPARE(arena->selectedInner(), (ArenaLayoutView::InnerBuffer { 2, 0 }));
    QCOMPARE(arena->bodyBlocks()[1].shown, 2);
    // A workload row drops it.
    table->selectionModel()->setCurrentIndex(
        window.tensorProxy()->mapFromSource(model->index(0, 0)), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    QVERIFY(!arena->selectedInner().valid());

    // A click inside the block chooses the buffer's row.
    arena->resize(1200, 600);
    const ArenaLayoutView::InnerBuffer target = largestInner(*arena, 0);
    QVERIFY(target.valid());
    QTest::mouseClick(arena, Qt::LeftButton, {}, arena->innerRect(arena->frame(), target).center().toPoint());
    QCOMPARE(table->selectionModel()->currentIndex().data(TensorTableModel::NestedGraphRole).toInt(), target.graph);
    QCOMPARE(table->selectionModel()->currentIndex().data(TensorTableModel::NestedBufferRole).toInt(), target.buffer);
    QCOMPARE(window.document()->selectedBuffer(), model->nested()[0].outerBuffer);
}

void TestNestedViews::screenshots()
{
    const QString dir = qEnvironmentVariable("MEMPLAN_VIEWS_DIR");
    if (dir.isEmpty())
        QSKIP("set MEMPLAN_VIEWS_DIR to write screenshots");
    QVERIFY(QDir().mkpath(dir));
    QTemporaryDir models;
    std::vector<std::pair<QString, QString>> cases { { QStringLiteral("loop_if"), writeLoopIfModel(models) } };
    for (const char* tricky : { "vad_if", "if_nms", "loop_nested_if" })
        if (const QString path = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/models/tricky/%1.onnx").arg(QLatin1String(tricky)); QFile::exists(path))
            cases.emplace_back(QLatin1String(tricky), path);
    for (const auto& [name, path] : cases) {
        PlanDocument document;
        ArenaLayoutView view(&document);
        open(document, load(path));
        view.resize(1200, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(view.exportImage(QStringLiteral("%1/%2-arena.png").arg(dir, name)));
        const auto& block = view.bodyBlocks().back();
        view.showGraph(block.graphs.back());
        const ArenaLayoutView::InnerBuffer target = largestInner(view, block.graphs.back());
        document.selectBuffer(view.nested()[static_cast<std::size_t>(block.graphs.back())].outerBuffer);
        view.selectInner(target);
        QVERIFY(view.exportImage(QStringLiteral("%1/%2-arena-other.png").arg(dir, name)));
        view.zoomToBlock(static_cast<int>(view.bodyBlocks().size()) - 1);
        QVERIFY(view.exportImage(QStringLiteral("%1/%2-arena-zoomed.png").arg(dir, name)));
    }
}

QTEST_MAIN(TestNestedViews)
#include "tst_nestedviews.moc"
