// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// MemPlan Studio, offscreen: the window on the built-in example, planner switching, selection and
// cursor sync, exports, a corrupt file, stale background results, the tensor table model and the
// play-mode narration.
#include "qcp.h" // first: see qcp.h

#include "arenalayoutview.h"
#include "coloringview.h"
#include "comparedtrace.h"
#include "inputsizesdialog.h"
#include "lifetimebarsview.h"
#include "mainwindow.h"
#include "memorycurveview.h"
#include "peerprofile.h"
#include "messagebanner.h"
#include "plandocument.h"
#include "planningcontroller.h"
#include "playcontroller.h"
#include "strategypanel.h"
#include "summarypanel.h"
#include "tensortablemodel.h"

#include "io/workload.h"
#include "planners/metrics.h"
#include "planners/narration.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "strategies/training.h"
#include "util/format.h"
#include "helptexts.h"
#include "palette.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QMenuBar>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMimeData>
#include <QRandomGenerator>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QUrl>

#include <algorithm>
#include <memory>

#include <onnx/onnx_pb.h>

namespace {

constexpr int kTimeout = 60000; // generous: ctest may run under load

std::shared_ptr<const core::Workload> loadNow(const char* spec)
{
    auto workload = core::loadWorkload(spec, {});
    if (!workload)
        qFatal("cannot load %s: %s", spec, workload.error().message.c_str());
    return std::make_shared<const core::Workload>(std::move(*workload));
}

core::Plan planNow(const core::Workload& workload, const char* planner)
{
    auto plan = core::runPlanner(*core::plannerByName(planner), workload.problem);
    if (!plan)
        qFatal("cannot plan with %s: %s", planner, plan.error().message.c_str());
    return *plan;
}

// Number of distinct colors in an image: a blank or single-color view has 1-2.
int distinctColors(const QImage& image)
{
    QSet<QRgb> colors;
    for (int y = 0; y < image.height(); y += 2)
        for (int x = 0; x < image.width(); x += 2) {
            colors.insert(image.pixel(x, y));
            if (colors.size() > 50)
                return colors.size();
        }
    return colors.size();
}

QString liveAtText(const core::PlanProblem& problem, core::Step step)
{
    const auto live = core::liveAt(problem, step);
    core::Bytes total = 0;
    for (int b : live)
        total += problem.buffers[static_cast<std::size_t>(b)].size;
    return QStringLiteral("at step %1: %2 live, %3 %4")
        .arg(step)
        .arg(QString::fromStdString(core::formatBytes(total)))
        .arg(live.size())
        .arg(live.size() == 1 ? QStringLiteral("buffer") : QStringLiteral("buffers"));
}

} // namespace

class TestStudio : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanupTestCase();

    // core narration (pure)
    void narrationFiveTensors();
    void stepEventsReuse();
    void narrationLargeOffsets();

    // models and controllers without the window
    void tensorTableModel();
    void tensorTableGraphColumns();
    void staleLoadAndPlanDropped();
    void invalidPlannerFails();
    void playNarratesAndStops();

    // the window
    void defaultExampleHasContent();
    void switchingPlannerReplans();
    void tableSelectionSyncs();
    void cursorReportsLiveSet();
    void exportsImagesAndPlan();
    void corruptFileKeepsPreviousModel();
    void inputSizesOpenAModelWithOpenInputs();
    void summaryListsImportNotes();
    void renderScreenshots();
    void alignmentReloads();
    void workspacesReload();
    void dropOpensFileAndRemembersIt();
    void snapshotOpensAsRecordedAndReplans();
    void peerProfileLiesOverThePlan();
    void comparisonLiesOverTheDisplay();
    void trainingStepPlansForwardAndBackward();
    void trainingStepRefusedWhereItCannotApply();

    // the exact planner: progress, stop, proof
    void stopBeforeAnyPlanIsQuiet();
    void exactReportsProgressAndStopKeepsBest();
    void exactProvesHotelOptimal();

    // Help: shortcuts from the menus, the colours, versions
    void helpTexts();

    // what the Studio remembers between sessions
    void sessionSettingsRoundTrip();

private:
    bool waitForPlan(const QString& planner = {});
    std::unique_ptr<MainWindow> m_window;
};

void TestStudio::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true); // recent files and planner choice go to a throwaway QSettings
    QCoreApplication::setOrganizationName(QStringLiteral("MemPlanTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_studio"));
    m_window = std::make_unique<MainWindow>();
    m_window->setPlannerName(QStringLiteral("greedy-by-size"));
    m_window->show();
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFile(QStringLiteral("example:unet"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
}

void TestStudio::cleanupTestCase() { m_window.reset(); }

bool TestStudio::waitForPlan(const QString& planner)
{
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    if (!planner.isEmpty())
        m_window->setPlannerName(planner);
    return planned.count() > 0 || planned.wait(kTimeout); // "as recorded" plans at once, inside setPlannerName
}

// A PyTorch memory snapshot opens with its own placement as the plan ("as recorded", the
// snapshot's addresses) and the reserved curve; another planner re-plans the same allocations into
// no more than that; a model opened next gets the saved planner back and no "as recorded" entry.
void TestStudio::snapshotOpensAsRecordedAndReplans()
{
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFile(QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/data/snapshots/generated.pickle"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    const core::Workload* workload = m_window->document()->workload();
    QVERIFY(workload && workload->recorded);
    QCOMPARE(m_window->plannerCombo()->currentText(), QStringLiteral("as recorded"));
    const core::Plan* plan = m_window->document()->plan();
    QVERIFY(plan);
    QVERIFY(core::validatePlan(workload->problem, *plan).ok());
    QCOMPARE(plan->offsets, workload->recorded->plan.offsets);
    QCOMPARE(plan->planner, std::string("as recorded")); // as the combo, the summary and the views name it
    QVERIFY(m_window->memoryCurveView()->showsReserved());
    // The snapshot's OOM (tests/data/snapshots/generated.pickle.expected.json: one) is marked.
    QCOMPARE(workload->recorded->marks.size(), std::size_t(1));
    const QStringList marks = m_window->memoryCurveView()->stepMarks();
    QCOMPARE(marks.size(), 1);
    QVERIFY2(marks.front().startsWith(QStringLiteral("OOM: ")), qPrintable(marks.front()));
    // Its annotations: forward and backward of each of the 3 iterations as bands (their train_step
    // holds them), named where there is room; the allocation site and stream in the table.
    QCOMPARE(m_window->memoryCurveView()->phaseBands(),
        (QStringList { "forward", "backward", "forward", "backward", "forward", "backward" }));
    QVERIFY(m_window->memoryCurveView()->phaseNamesShown() > 0);
    // The event times: one per step, from 0, never falling (the cursor's readout and the tooltips).
    const auto& seconds = workload->recorded->stepSeconds;
    QCOMPARE(seconds.size(), std::size_t(workload->problem.steps));
    QVERIFY(seconds.front() == 0.0f && std::is_sorted(seconds.begin(), seconds.end()) && seconds.back() > 0.0f);
    // Against time (View > Memory Curve Against Time): the x axis spans the event times, the bands
    // and the OOM mark move with them, a click finds the step at its time; then back to the steps.
    MemoryCurveView* curve = m_window->memoryCurveView();
    QVERIFY(curve->canShowTime() && !curve->showsTime());
    m_window->showTimeAxis(true);
    QVERIFY(curve->showsTime());
    QCOMPARE(curve->plot()->xAxis->label(), QStringLiteral("time since the first event"));
    const QCPRange range = curve->plot()->xAxis->range();
    QCOMPARE(range.lower, 0.0);
    QVERIFY2(range.upper > double(seconds.back()) && range.upper < double(seconds.back()) * 1.1, qPrintable(QString::number(range.upper)));
    QCOMPARE(curve->phaseBands().size(), 6);
    QCOMPARE(curve->stepMarks().size(), 1);
    const core::Step target = workload->problem.steps / 3;
    const int x = static_cast<int>(std::lround(curve->plot()->xAxis->coordToPixel(curve->clock().key(target + 0.5))));
    QTest::mouseClick(curve->plot(), Qt::LeftButton, {}, QPoint(x, curve->plot()->axisRect()->rect().center().y()));
    const core::Step clicked = m_window->document()->cursorStep();
    const double at = curve->plot()->xAxis->pixelToCoord(x);
    QVERIFY2(curve->clock().key(clicked) <= at && at <= curve->clock().key(clicked + 1), qPrintable(QString::number(clicked)));
    QVERIFY(std::abs(clicked - target) < 8);
    m_window->showTimeAxis(false);
    QVERIFY(!curve->showsTime());
    QCOMPARE(curve->plot()->xAxis->label(), QStringLiteral("step"));
    const TensorTableModel* table = m_window->tensorModel();
    QVERIFY(table->recorded());
    QCOMPARE(table->headerData(TensorTableModel::Module, Qt::Horizontal).toString(), QStringLiteral("Allocated at"));
    QCOMPARE(table->index(0, TensorTableModel::Module).data().toString(), QStringLiteral("linear.py:40 init"));
    QCOMPARE(table->index(0, TensorTableModel::Type).data().toString(), QStringLiteral("stream 7"));
    const QString text = m_window->summaryPanel()->summaryText();
    QVERIFY2(text.contains(QStringLiteral("Phases (annotated)")) && text.contains(QStringLiteral("by allocation site")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Streams: 2")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Reserved peak")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Allocated peak: ")
                 + QString::fromStdString(core::formatBytes(core::lowerBound(workload->problem)))), qPrintable(text));

    QVERIFY(waitForPlan(QStringLiteral("best-of-greedy")));
    const core::Plan* replanned = m_window->document()->plan();
    QVERIFY(core::validatePlan(workload->problem, *replanned).ok());
    QVERIFY(replanned->offsets != workload->recorded->plan.offsets);
    QVERIFY(replanned->arenaSize <= workload->recorded->plan.arenaSize);
    QVERIFY2(m_window->summaryPanel()->summaryText().contains(QStringLiteral("Re-planned")), qPrintable(m_window->summaryPanel()->summaryText()));

    QVERIFY(waitForPlan(QStringLiteral("as recorded")));
    QCOMPARE(m_window->document()->plan()->offsets, workload->recorded->plan.offsets);

    QVERIFY(waitForPlan(QStringLiteral("greedy-by-size"))); // saved as the planner to come back to
    planned.clear();
    m_window->openFile(QStringLiteral("example:unet"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QCOMPARE(m_window->plannerCombo()->findText(QStringLiteral("as recorded")), -1);
    QCOMPARE(m_window->plannerCombo()->currentText(), QStringLiteral("greedy-by-size"));
    QVERIFY(!m_window->memoryCurveView()->showsReserved());
    QVERIFY(!m_window->memoryCurveView()->canShowTime()); // a model has no event times
}

// File > Compare With: a snapshot compared with itself lies exactly on its own curve with no change;
// a file that cannot be read is named in the error; another model drops the comparison.
void TestStudio::comparisonLiesOverTheDisplay()
{
    const QString snapshot = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/data/snapshots/generated.pickle");
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFile(snapshot);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QSignalSpy shown(m_window.get(), &MainWindow::comparisonShown);
    m_window->compareWith(snapshot);
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() == 1, kTimeout);
    const ComparedTrace* compared = m_window->document()->comparison();
    QVERIFY(compared);
    QCOMPARE(compared->diff.peakChange(), core::Bytes(0));
    QVERIFY(compared->diff.explanation.empty());
    QCOMPARE(compared->diff.aLive, m_window->document()->liveCurve());
    QCPGraph* curve = m_window->memoryCurveView()->comparedGraph();
    QVERIFY(curve->visible());
    QVERIFY2(curve->name().contains(QStringLiteral("generated.pickle allocated (aligned)")), qPrintable(curve->name()));
    const QString text = m_window->summaryPanel()->summaryText();
    QVERIFY2(text.contains(QStringLiteral("Compared with generated.pickle")) && text.contains(QStringLiteral("same peak")), qPrintable(text));

    QSignalSpy failed(m_window.get(), &MainWindow::errorOccurred);
    m_window->compareWith(QStringLiteral("/nonexistent/other.pickle"));
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, kTimeout);
    QVERIFY2(failed.front().front().toString().contains(QStringLiteral("other.pickle")), qPrintable(failed.front().front().toString()));
    QVERIFY(m_window->document()->comparison()); // the one shown stays

    planned.clear();
    m_window->openFile(QStringLiteral("example:cnn"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QVERIFY(!m_window->document()->comparison());
    QVERIFY(!m_window->memoryCurveView()->comparedGraph()->visible());
}

// An ONNX Runtime profile of the model on display (a hand-written one of example:cnn's op names,
// tests/fuzz/seeds/ortprofile) lies over its plan: the memory curve gains ORT's in-use and
// arena-held curves (one value per step), the summary its section. A replan keeps it; another
// model drops it; without a model's graph it is refused with a message naming the file.
void TestStudio::peerProfileLiesOverThePlan()
{
    const QString profile = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/fuzz/seeds/ortprofile/cnn_names_two_runs.json");
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFile(QStringLiteral("example:cnn"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QSignalSpy shown(m_window.get(), &MainWindow::peerProfileShown);
    m_window->openFile(profile); // a JSON array: a profile, laid over the model on display
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 1, kTimeout);
    const PeerProfile* peer = m_window->document()->peerProfile();
    QVERIFY(peer);
    const auto steps = m_window->document()->steps();
    QCOMPARE(peer->overlay.steps.size(), std::size_t(steps));
    QCOMPARE(peer->overlay.mapped, 12); // memplan trace PROFILE --model example:cnn says the same
    QCOMPARE(peer->inUse.size(), std::size_t(steps));
    QCOMPARE(peer->peakInUse, *std::max_element(peer->inUse.begin(), peer->inUse.end()));
    QCOMPARE(m_window->memoryCurveView()->peerInUsePoints(), int(steps) + 1); // steps, then the closing point
    const QString text = m_window->summaryPanel()->summaryText();
    QVERIFY2(text.contains(QStringLiteral("ONNX Runtime (profile)")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Steps mapped: 12 of %1").arg(steps)), qPrintable(text));

    QVERIFY(waitForPlan(QStringLiteral("best-of-greedy")));
    QVERIFY(m_window->document()->peerProfile()); // the same workload, another plan

    planned.clear();
    m_window->openFile(QStringLiteral("example:unet"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QVERIFY(!m_window->document()->peerProfile());
    QCOMPARE(m_window->memoryCurveView()->peerInUsePoints(), 0);
    QVERIFY(waitForPlan(QStringLiteral("greedy-by-size")));

    // Bad input: not a profile, and a profile with no model graph to lie over.
    QSignalSpy failed(m_window.get(), &MainWindow::errorOccurred);
    QTemporaryDir dir;
    QFile bad(dir.filePath(QStringLiteral("bad.json")));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("[{\"cat\": \"Node\", \"name\": \"x_kernel_time\", \"args\": {\"op_name\": 7}}]");
    bad.close();
    m_window->openPeerProfile(bad.fileName());
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() >= 1, kTimeout);
    QVERIFY2(failed.back().front().toString().contains(QStringLiteral("bad.json")), qPrintable(failed.back().front().toString()));
    QVERIFY(!m_window->document()->peerProfile());
}

// ---------------------------------------------------------------- narration

void TestStudio::narrationFiveTensors()
{
    const auto workload = loadNow("example:five-tensors");
    const core::Plan plan = planNow(*workload, "first-fit");
    QCOMPARE(plan.offsets, (std::vector<core::Bytes> { 0, 512, 640, 512, 0 }));
    QCOMPARE(plan.arenaSize, core::Bytes(896));

    const auto& problem = workload->problem;
    QCOMPARE(QString::fromStdString(core::narrateStep(problem, plan, 0)),
        QStringLiteral("step 0: w1 (512 B) takes fresh memory at 0; a1 (128 B) takes fresh memory at 512; the arena "
                       "grows to 640 B"));
    QCOMPARE(QString::fromStdString(core::narrateStep(problem, plan, 1)),
        QStringLiteral(
            "step 1: a1 dies, its block at 512 returns to the free list; w2 (256 B) takes fresh memory at 640; "
            "the arena grows to 896 B"));
    QCOMPARE(QString::fromStdString(core::narrateStep(problem, plan, 2)),
        QStringLiteral("step 2: a2 (128 B) reuses a1's block at 512"));
    QCOMPARE(QString::fromStdString(core::narrateStep(problem, plan, 3)),
        QStringLiteral("step 3: w1 and a2 die, their blocks at 0 and 512 return to the free list; out (64 B) reuses "
                       "w1's block at 0"));
    QCOMPARE(QString::fromStdString(core::narrateStep(problem, plan, 3, "MatMul_3")),
        QStringLiteral("step 3 (MatMul_3): w1 and a2 die, their blocks at 0 and 512 return to the free list; "
                       "out (64 B) reuses w1's block at 0"));
    // Step 4 is one past the schedule: what lives to the end is released there.
    QCOMPARE(QString::fromStdString(core::narrateStep(problem, plan, 4)),
        QStringLiteral("step 4: w2 and out die, their blocks at 640 and 0 return to the free list"));
    core::PlanProblem idle = problem;
    idle.steps = 6;
    QCOMPARE(QString::fromStdString(core::narrateStep(idle, plan, 5)),
        QStringLiteral("step 5: nothing is allocated or freed"));
}

void TestStudio::stepEventsReuse()
{
    const auto workload = loadNow("example:five-tensors");
    const core::Plan plan = planNow(*workload, "first-fit");
    const auto events = core::stepEvents(workload->problem, plan, 3);
    QCOMPARE(events.size(), std::size_t(3));
    QCOMPARE(events[0].kind, core::StepEvent::Kind::Free);
    QCOMPARE(events[0].buffer, 0); // w1
    QCOMPARE(events[1].kind, core::StepEvent::Kind::Free);
    QCOMPARE(events[1].buffer, 3); // a2
    QCOMPARE(events[2].kind, core::StepEvent::Kind::Allocate);
    QCOMPARE(events[2].buffer, 4); // out
    QCOMPARE(events[2].reuses, std::vector<int> { 0 });
    QVERIFY(!events[2].grows);
    QCOMPARE(events[2].highWater, core::Bytes(896));

    // A block used twice: the newest occupant is named, the older one it shadows is not.
    core::PlanProblem problem;
    problem.steps = 6;
    problem.buffers = { { "a", { 0, 2 }, 100, core::TensorKind::Activation, { "a" } },
        { "b", { 2, 4 }, 100, core::TensorKind::Activation, { "b" } },
        { "c", { 4, 6 }, 150, core::TensorKind::Activation, { "c" } } };
    core::Plan twice;
    twice.offsets = { 0, 0, 0 };
    twice.arenaSize = 150;
    const auto reuse = core::stepEvents(problem, twice, 4);
    QCOMPARE(reuse.size(), std::size_t(2));
    QCOMPARE(reuse[1].reuses, std::vector<int> { 1 });
    QVERIFY(reuse[1].grows);
    QCOMPARE(QString::fromStdString(core::narrateStep(problem, twice, 4)),
        QStringLiteral("step 4: b dies, its block at 0 returns to the free list; c (150 B) reuses b's block at 0; "
                       "the arena grows to 150 B"));
}

void TestStudio::narrationLargeOffsets()
{
    // Offsets of 1 KiB and more get units and the word "offset", so they do not read as sizes.
    core::PlanProblem problem;
    problem.steps = 2;
    problem.buffers = { { "x", { 0, 1 }, 1 << 20, core::TensorKind::Activation, { "x" } },
        { "y", { 0, 2 }, 1 << 20, core::TensorKind::Activation, { "y" } },
        { "z", { 1, 2 }, 1 << 19, core::TensorKind::Activation, { "z" } } };
    core::Plan plan;
    plan.offsets = { 0, 1 << 20, 0 };
    plan.arenaSize = 2 << 20;
    QCOMPARE(QString::fromStdString(core::narrateStep(problem, plan, 0)),
        QStringLiteral(
            "step 0: x (1.00 MiB) takes fresh memory at 0; y (1.00 MiB) takes fresh memory at offset 1.00 MiB; "
            "the arena grows to 2.00 MiB"));
    QCOMPARE(QString::fromStdString(core::narrateStep(problem, plan, 2)),
        QStringLiteral("step 2: y and z die, their blocks at offsets 1.00 MiB and 0 return to the free list"));
}

// ---------------------------------------------------------------- models and controllers

void TestStudio::tensorTableModel()
{
    PlanDocument document;
    TensorTableModel model(&document);
    TensorFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    QAbstractItemModelTester sourceTester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);

    const auto workload = loadNow("example:five-tensors");
    document.setWorkload(workload);
    QCOMPARE(model.rowCount(), 5);
    QCOMPARE(model.columnCount(), int(TensorTableModel::ColumnCount));
    QCOMPARE(model.index(0, TensorTableModel::Name).data().toString(), QStringLiteral("w1"));
    QCOMPARE(model.index(0, TensorTableModel::Producer).data().toString(), QStringLiteral("—"));
    QCOMPARE(model.index(0, TensorTableModel::Offset).data().toString(), QStringLiteral("—"));
    QCOMPARE(model.index(2, TensorTableModel::Start).data().toInt(), 1);
    QCOMPARE(model.index(2, TensorTableModel::End).data().toInt(), 4);
    QCOMPARE(model.index(0, TensorTableModel::Size).data().toString(), QString::fromStdString(core::formatBytes(512)));
    QCOMPARE(model.index(0, TensorTableModel::Type).data().toString(), QStringLiteral("—")); // a bare problem

    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    document.setPlan(planNow(*workload, "first-fit"));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.index(2, TensorTableModel::Offset).data(TensorTableModel::SortRole).toLongLong(), 640);
    QCOMPARE(model.index(1, TensorTableModel::Offset).data().toString(), QStringLiteral("512 B"));
    QCOMPARE(model.index(1, TensorTableModel::Offset).data(Qt::ToolTipRole).toString(), QStringLiteral("at byte 512 of the arena"));

    // Sorting by size uses bytes, not the text ("64 B" < "128 B" < "256 B" < "512 B").
    proxy.sort(TensorTableModel::Size, Qt::AscendingOrder);
    QStringList order;
    for (int row = 0; row < proxy.rowCount(); ++row)
        order << proxy.index(row, TensorTableModel::Name).data().toString();
    QCOMPARE(order,
        (QStringList { QStringLiteral("out"), QStringLiteral("a1"), QStringLiteral("a2"), QStringLiteral("w2"),
            QStringLiteral("w1") }));

    proxy.setNameFilter(QStringLiteral("A"));
    QCOMPARE(proxy.rowCount(), 2); // a1, a2 (case-insensitive)
    proxy.setMinimumSize(200);
    QCOMPARE(proxy.rowCount(), 0);
    proxy.setNameFilter({});
    QCOMPARE(proxy.rowCount(), 2); // w1, w2
    proxy.setMinimumSize(0);
    proxy.setKindFilter(core::TensorKind::Weight);
    QCOMPARE(proxy.rowCount(), 0); // five-tensors buffers are all activations
    proxy.setKindFilter(std::nullopt);
    QCOMPARE(proxy.rowCount(), 5);

    document.setWorkload(loadNow("example:hotel"));
    QCOMPARE(model.rowCount(), int(document.workload()->problem.buffers.size()));

    // With a graph: each buffer's element type and shape.
    document.setWorkload(loadNow("example:cnn"));
    QStringList types;
    for (int row = 0; row < model.rowCount(); ++row)
        if (model.index(row, TensorTableModel::Name).data().toString() == QStringLiteral("input"))
            types << model.index(row, TensorTableModel::Type).data().toString();
    QCOMPARE(types, QStringList { QStringLiteral("float32 1\u00D73\u00D7224\u00D7224") });
}

void TestStudio::tensorTableGraphColumns()
{
    PlanDocument document;
    TensorTableModel model(&document);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const auto workload = loadNow("example:cnn");
    document.setWorkload(workload);
    QVERIFY(workload->graph);
    int withProducer = 0;
    int withConsumers = 0;
    for (int row = 0; row < model.rowCount(); ++row) {
        if (model.index(row, TensorTableModel::Producer).data().toString() != QStringLiteral("—"))
            ++withProducer;
        if (model.index(row, TensorTableModel::Consumers).data(TensorTableModel::SortRole).toInt() > 0)
            ++withConsumers;
    }
    QVERIFY(withProducer > model.rowCount() / 2);
    QVERIFY(withConsumers > model.rowCount() / 2);
    // A buffer's producer runs at the buffer's start step.
    const auto& graph = *workload->graph;
    for (int row = 0; row < model.rowCount(); ++row) {
        const auto& buffer = workload->problem.buffers[static_cast<std::size_t>(row)];
        if (buffer.kind != core::TensorKind::Activation)
            continue;
        const auto& op = graph.ops[static_cast<std::size_t>(workload->schedule.order[buffer.lifetime.start])];
        QCOMPARE(model.index(row, TensorTableModel::Producer).data().toString(), QString::fromStdString(op.name));
        break;
    }
}

void TestStudio::staleLoadAndPlanDropped()
{
    PlanningController controller;
    QSignalSpy loaded(&controller, &PlanningController::loadFinished);
    QSignalSpy loadFailed(&controller, &PlanningController::loadFailed);
    controller.requestLoad(QStringLiteral("example:unet"), {});
    controller.requestLoad(QStringLiteral("example:five-tensors"), {});
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kTimeout);
    QTest::qWait(300);
    QCOMPARE(loaded.count(), 1);
    QCOMPARE(loadFailed.count(), 0);
    const auto workload = loaded.at(0).at(0).value<std::shared_ptr<const core::Workload>>();
    QCOMPARE(QString::fromStdString(workload->source), QStringLiteral("example:five-tensors"));

    QSignalSpy ready(&controller, &PlanningController::planReady);
    QSignalSpy busy(&controller, &PlanningController::busyChanged);
    controller.requestPlan(workload, QStringLiteral("naive"));
    controller.requestPlan(workload, QStringLiteral("first-fit"));
    QVERIFY(controller.isBusy());
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, kTimeout);
    QTest::qWait(300);
    QCOMPARE(ready.count(), 1);
    const auto plan = ready.at(0).at(0).value<core::Plan>();
    QCOMPARE(QString::fromStdString(plan.planner), QStringLiteral("first-fit"));
    QCOMPARE(plan.arenaSize, core::Bytes(896));
    QVERIFY(!controller.isBusy());
    QCOMPARE(busy.count(), 2); // busy once, idle once

    // Cancel drops what is running: no result signal at all.
    controller.requestPlan(workload, QStringLiteral("naive"));
    controller.cancel();
    QTest::qWait(300);
    QCOMPARE(ready.count(), 1);
    QVERIFY(!controller.isBusy());

    // In the window: two quick planner changes, only the second plan reaches the document.
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->setPlannerName(QStringLiteral("naive"));
    m_window->setPlannerName(QStringLiteral("best-fit"));
    QTRY_COMPARE_WITH_TIMEOUT(planned.count(), 1, kTimeout);
    QTest::qWait(300);
    QCOMPARE(planned.count(), 1);
    QCOMPARE(QString::fromStdString(m_window->document()->plan()->planner), QStringLiteral("best-fit"));
}

void TestStudio::invalidPlannerFails()
{
    PlanningController controller;
    QSignalSpy failed(&controller, &PlanningController::planFailed);
    controller.requestPlan(loadNow("example:hotel"), QStringLiteral("no-such-planner"));
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kTimeout);
    QVERIFY(failed.at(0).at(0).toString().contains(QStringLiteral("no-such-planner")));

    QSignalSpy loadFailed(&controller, &PlanningController::loadFailed);
    controller.requestLoad(QStringLiteral("/nonexistent/model.onnx"), {});
    QTRY_COMPARE_WITH_TIMEOUT(loadFailed.count(), 1, kTimeout);
    QVERIFY2(loadFailed.at(0).at(0).toString().contains(QStringLiteral("model.onnx")),
        qPrintable(loadFailed.at(0).at(0).toString()));
}

void TestStudio::playNarratesAndStops()
{
    PlanDocument document;
    const auto workload = loadNow("example:five-tensors");
    document.setWorkload(workload);
    document.setPlan(planNow(*workload, "first-fit"));
    PlayController play(&document);
    QSignalSpy lines(&play, &PlayController::narrationChanged);
    QSignalSpy playing(&play, &PlayController::playingChanged);

    play.stepForward();
    QCOMPARE(document.cursorStep(), 0);
    QVERIFY(play.narration().startsWith(QStringLiteral("step 0: w1 (512 B)")));
    play.stepForward();
    play.stepForward();
    play.stepForward();
    QCOMPARE(document.cursorStep(), 3);
    QVERIFY(play.narration().contains(QStringLiteral("out (64 B) reuses w1's block at 0")));
    play.stepForward(); // stays on the last step
    QCOMPARE(document.cursorStep(), 3);
    play.stepBack();
    QCOMPARE(document.cursorStep(), 2);
    QCOMPARE(play.narration(), QStringLiteral("step 2: a2 (128 B) reuses a1's block at 512"));

    play.setStepsPerSecond(100);
    lines.clear();
    play.play(); // from step 2 on: 3, then stop at the end
    QVERIFY(play.isPlaying());
    QTRY_VERIFY_WITH_TIMEOUT(!play.isPlaying(), 5000);
    QCOMPARE(document.cursorStep(), 3);
    QCOMPARE(playing.count(), 2);
    QVERIFY(!lines.isEmpty());
    play.play(); // at the end: starts over from step 0
    QCOMPARE(document.cursorStep(), 0);
    play.pause();
    QVERIFY(!play.isPlaying());
}

// ---------------------------------------------------------------- the window

void TestStudio::defaultExampleHasContent()
{
    PlanDocument* document = m_window->document();
    QVERIFY(document->hasPlan());
    QCOMPARE(m_window->currentSpec(), QStringLiteral("example:unet"));
    QVERIFY(document->workload()->problem.buffers.size() > 10);
    QCOMPARE(m_window->tensorTable()->model()->rowCount(), int(document->workload()->problem.buffers.size()));
    QVERIFY(m_window->summaryPanel()->summaryText().contains(QStringLiteral("Arena: ")));
    QVERIFY(m_window->messageBanner()->isHidden());

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::pair<const char*, std::function<bool(const QString&, QString*)>> views[] = {
        { "curve", [&](const QString& p, QString* e) { return m_window->memoryCurveView()->exportImage(p, e); } },
        { "bars", [&](const QString& p, QString* e) { return m_window->lifetimeBarsView()->exportImage(p, e); } },
        { "arena", [&](const QString& p, QString* e) { return m_window->arenaLayoutView()->exportImage(p, e); } },
        { "coloring", [&](const QString& p, QString* e) { return m_window->coloringView()->exportImage(p, e); } },
    };
    for (const auto& [name, exportImage] : views) {
        const QString path = dir.filePath(QString::fromLatin1(name) + QStringLiteral(".png"));
        QString error;
        QVERIFY2(exportImage(path, &error), qPrintable(error));
        const QImage image(path);
        QVERIFY2(!image.isNull(), name);
        QVERIFY2(distinctColors(image) > 8, name); // drawn content, not a blank widget
    }
}

void TestStudio::switchingPlannerReplans()
{
    QVERIFY(waitForPlan(QStringLiteral("naive")));
    const auto naiveArena = m_window->document()->plan()->arenaSize;
    QCOMPARE(naiveArena, core::sumOfSizes(m_window->document()->workload()->problem));
    const QString naiveText = m_window->summaryPanel()->summaryText();
    QVERIFY2(naiveText.contains(QStringLiteral("Arena: ") + QString::fromStdString(core::formatBytes(naiveArena))),
        qPrintable(naiveText));
    // Naive's large fragmentation says what it measures.
    QVERIFY2(naiveText.contains(QStringLiteral("% arena beyond the lower bound")), qPrintable(naiveText));

    QVERIFY(waitForPlan(QStringLiteral("greedy-by-size")));
    const auto greedyArena = m_window->document()->plan()->arenaSize;
    QVERIFY(greedyArena < naiveArena);
    const QString greedyText = m_window->summaryPanel()->summaryText();
    QVERIFY(greedyText != naiveText);
    QVERIFY2(greedyText.contains(QStringLiteral("Arena: ") + QString::fromStdString(core::formatBytes(greedyArena))),
        qPrintable(greedyText));
    QVERIFY(greedyText.contains(QStringLiteral("greedy-by-size")));
    QVERIFY(m_window->windowTitle().contains(QStringLiteral("greedy-by-size")));
}

void TestStudio::tableSelectionSyncs()
{
    PlanDocument* document = m_window->document();
    QTableView* table = m_window->tensorTable();
    // Table -> document.
    const QModelIndex row = table->model()->index(3, 0);
    const int buffer = row.data(TensorTableModel::BufferRole).toInt();
    table->selectionModel()->setCurrentIndex(row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    QCOMPARE(document->selectedBuffer(), buffer);

    // Document (any view) -> table.
    const int other = int(document->workload()->problem.buffers.size()) - 1;
    document->selectBuffer(other);
    const QModelIndex current = table->selectionModel()->currentIndex();
    QVERIFY(current.isValid());
    QCOMPARE(current.data(TensorTableModel::BufferRole).toInt(), other);
    QVERIFY(table->selectionModel()->isRowSelected(current.row(), {}));

    // Filtering the table hides rows; it does not choose another tensor for every view.
    auto* filter = m_window->findChild<QLineEdit*>(QStringLiteral("tensorFilter"));
    QVERIFY(filter);
    filter->setText(QStringLiteral("no-such-tensor-name"));
    QCOMPARE(table->model()->rowCount(), 0);
    QCOMPARE(document->selectedBuffer(), other);
    filter->setText(QStringLiteral("e")); // narrows without emptying
    QCOMPARE(document->selectedBuffer(), other);
    filter->clear();
    QCOMPARE(document->selectedBuffer(), other);
    QCOMPARE(table->selectionModel()->currentIndex().data(TensorTableModel::BufferRole).toInt(), other);

    document->selectBuffer(-1);
    QVERIFY(!table->selectionModel()->hasSelection());
}

void TestStudio::cursorReportsLiveSet()
{
    PlanDocument* document = m_window->document();
    const auto& problem = document->workload()->problem;
    for (core::Step step :
        { core::Step(0), core::Step(problem.steps / 2), core::peakStep(problem), core::Step(problem.steps - 1) }) {
        document->setCursorStep(step);
        QCOMPARE(document->cursorStep(), step);
        const QString text = m_window->summaryPanel()->summaryText();
        QVERIFY2(text.contains(liveAtText(problem, step)),
            qPrintable(text + QStringLiteral("\nexpected: ") + liveAtText(problem, step)));
        QCOMPARE(m_window->playController()->narration().left(QStringLiteral("step %1").arg(step).size()),
            QStringLiteral("step %1").arg(step));
    }
    document->setCursorStep(-1);
    QVERIFY(!m_window->summaryPanel()->summaryText().contains(QStringLiteral("Cursor")));

    // The largest buffer live at the peak is a link in the summary; a click selects it everywhere.
    const auto peakLive = core::liveAt(problem, core::peakStep(problem));
    QVERIFY(!peakLive.empty());
    QLabel* summary = nullptr;
    for (QLabel* label : m_window->summaryPanel()->findChildren<QLabel*>())
        if (label->text().contains(QStringLiteral("href='buffer:%1'").arg(peakLive.front())))
            summary = label;
    QVERIFY(summary);
    emit summary->linkActivated(QStringLiteral("buffer:%1").arg(peakLive.front()));
    QCOMPARE(document->selectedBuffer(), peakLive.front());
    emit summary->linkActivated(QStringLiteral("buffer:999999")); // no such buffer: nothing changes
    QCOMPARE(document->selectedBuffer(), peakLive.front());
    document->selectBuffer(-1);
}

void TestStudio::exportsImagesAndPlan()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QString error;
    const QString png = dir.filePath(QStringLiteral("bars.png"));
    QVERIFY2(m_window->lifetimeBarsView()->exportImage(png, &error), qPrintable(error));
    QVERIFY(QFileInfo(png).size() > 1000);
    const QString svg = dir.filePath(QStringLiteral("arena.svg"));
    QVERIFY2(m_window->arenaLayoutView()->exportImage(svg, &error), qPrintable(error));
    QFile svgFile(svg);
    QVERIFY(svgFile.open(QIODevice::ReadOnly));
    QVERIFY(svgFile.readAll().contains("<svg"));

    const QString json = dir.filePath(QStringLiteral("plan.json"));
    QVERIFY2(m_window->exportPlanJson(json, &error), qPrintable(error));
    QFile jsonFile(json);
    QVERIFY(jsonFile.open(QIODevice::ReadOnly));
    QJsonParseError parseError;
    const QJsonDocument parsed = QJsonDocument::fromJson(jsonFile.readAll(), &parseError);
    QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(parseError.errorString()));
    const QJsonObject root = parsed.object();
    const core::Plan* plan = m_window->document()->plan();
    QCOMPARE(root.value(QStringLiteral("arena_bytes")).toInteger(), plan->arenaSize);
    QCOMPARE(root.value(QStringLiteral("planner")).toString(), QString::fromStdString(plan->planner));
    QCOMPARE(root.value(QStringLiteral("buffers")).toArray().size(), qsizetype(plan->offsets.size()));

    const QString csv = dir.filePath(QStringLiteral("plan.csv"));
    QVERIFY2(m_window->exportProblemCsv(csv, &error), qPrintable(error));
    QFile csvFile(csv);
    QVERIFY(csvFile.open(QIODevice::ReadOnly));
    const QByteArray header = csvFile.readLine();
    QVERIFY2(header.startsWith("id,lower,upper,size"), header.constData());
    QVERIFY(header.contains("offset"));

    QVERIFY(!m_window->exportPlanJson(QStringLiteral("/nonexistent-dir/plan.json"), &error));
    QVERIFY2(error.contains(QStringLiteral("plan.json")), qPrintable(error));
}

void TestStudio::summaryListsImportNotes()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("noted.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"name": "noted", "notes": ["folded 3 integer ops into constants", "1 tensor has data-dependent shapes"],
        "tensors": [{"name": "x", "dtype": "float32", "shape": [4], "kind": "input"},
                    {"name": "y", "dtype": "float32", "shape": [4], "kind": "output"}],
        "ops": [{"name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["y"]}],
        "inputs": ["x"], "outputs": ["y"]})");
    file.close();
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFile(path);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    const QString summary = m_window->summaryPanel()->summaryText();
    const auto notes = summary.indexOf(QStringLiteral("\nNotes\n"));
    QVERIFY2(notes >= 0, qPrintable(summary));
    QVERIFY2(summary.indexOf(QStringLiteral("folded 3 integer ops into constants\n"), notes) > notes, qPrintable(summary));
    QVERIFY2(summary.indexOf(QStringLiteral("1 tensor has data-dependent shapes\n"), notes) > notes, qPrintable(summary));

    // A model without notes has no such section.
    planned.clear();
    m_window->openFile(QStringLiteral("example:unet"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QVERIFY(!m_window->summaryPanel()->summaryText().contains(QStringLiteral("\nNotes\n")));
}

namespace {

// y = x + z, x [batch, 4] (a symbolic dimension), z [?, 4] (an unnamed one).
QString writeOpenInputsModel(const QTemporaryDir& dir)
{
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto* g = m.mutable_graph();
    g->set_name("open_inputs");
    const auto input = [&](const char* name, const char* param) {
        auto* t = g->add_input();
        t->set_name(name);
        auto* type = t->mutable_type()->mutable_tensor_type();
        type->set_elem_type(onnx::TensorProto::FLOAT);
        auto* first = type->mutable_shape()->add_dim();
        if (param)
            first->set_dim_param(param);
        type->mutable_shape()->add_dim()->set_dim_value(4);
    };
    input("x", "batch");
    input("z", nullptr);
    auto* add = g->add_node();
    add->set_op_type("Add");
    add->add_input("x");
    add->add_input("z");
    add->add_output("y");
    auto* y = g->add_output();
    y->set_name("y");
    y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    const QString path = dir.filePath(QStringLiteral("open_inputs.onnx"));
    QFile file(path);
    if (file.open(QIODevice::WriteOnly))
        file.write(QByteArray::fromStdString(m.SerializeAsString()));
    return path;
}

} // namespace

// A model whose inputs leave sizes open does not load as it is: the banner offers File > Input
// Sizes, whose dialog asks for the symbolic dimension and the open shape (refusing a shape of the
// wrong rank or one contradicting a declared dimension); with them the model loads, keeps them on
// a reload, and another model drops them.
void TestStudio::inputSizesOpenAModelWithOpenInputs()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = writeOpenInputsModel(dir);
    QVERIFY(!m_window->inputSizesAction()->isEnabled());
    QSignalSpy failed(m_window.get(), &MainWindow::errorOccurred);
    m_window->openFile(path);
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kTimeout);
    // It asks for the sizes in the window's words, not the command line's, and not as an error.
    QVERIFY2(m_window->messageBanner()->text().contains(
                 QStringLiteral("open_inputs.onnx leaves dimension batch and the shape of input z open: give them in Input Sizes")),
        qPrintable(m_window->messageBanner()->text()));
    QVERIFY(!m_window->messageBanner()->text().contains(QStringLiteral("--dim")));
    QCOMPARE(m_window->messageBanner()->type(), MessageBanner::Type::Information);
    QVERIFY(m_window->messageBanner()->toolTip().contains(QStringLiteral("symbolic dimension batch")));
    QCOMPARE(m_window->messageBanner()->remedy(), m_window->inputSizesAction());
    QVERIFY(m_window->inputSizesAction()->isEnabled());
    const auto& open = m_window->openInputs();
    QCOMPARE(open.symbols, (std::vector<std::string> { "batch" }));
    QCOMPARE(open.inputs.size(), std::size_t(1)); // x's dims are all named or numbers
    QCOMPARE(open.inputs[0].name, std::string("z"));
    QCOMPARE(open.inputs[0].dims, (std::vector<std::string> { "?", "4" }));

    InputSizesDialog dialog(open, m_window->shapeBindings());
    auto* ok = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    QVERIFY(dialog.dimBox(QStringLiteral("batch")) && dialog.shapeField(QStringLiteral("z")));
    QCOMPARE(dialog.dimBox(QStringLiteral("batch"))->value(), 1);
    auto* places = dialog.findChild<QLabel*>(QStringLiteral("places:batch"));
    QVERIFY(places);
    QCOMPARE(places->text(), QStringLiteral("axis 0 of x")); // where the symbol sits
    if (qEnvironmentVariableIsSet("MEMPLAN_VIEWS_DIR")) { // pictures to look at
        const QDir views(qEnvironmentVariable("MEMPLAN_VIEWS_DIR"));
        m_window->grab().save(views.filePath(QStringLiteral("open-inputs-window.png")));
        dialog.adjustSize();
        dialog.grab().save(views.filePath(QStringLiteral("input-sizes.png")));
    }
    QVERIFY(!ok->isEnabled()); // z has no shape yet
    QVERIFY2(dialog.problem().contains(QStringLiteral("(e.g. 1,4) or a file with its contents")), qPrintable(dialog.problem()));
    QVERIFY(dialog.fileField(QStringLiteral("x")) && dialog.fileField(QStringLiteral("z")));
    dialog.fileField(QStringLiteral("z"))->setText(path); // a file gives z's shape (read at the load)
    QVERIFY2(dialog.problem().isEmpty(), qPrintable(dialog.problem()));
    QCOMPARE(dialog.files().size(), std::size_t(1));
    QVERIFY(!dialog.bindings().inputShapes.count("z"));
    dialog.fileField(QStringLiteral("z"))->clear();
    QVERIFY(!ok->isEnabled());
    dialog.shapeField(QStringLiteral("z"))->setText(QStringLiteral("2"));
    QVERIFY2(dialog.problem().contains(QStringLiteral("declared with 2 dimensions")), qPrintable(dialog.problem()));
    dialog.shapeField(QStringLiteral("z"))->setText(QStringLiteral("2,5"));
    QVERIFY2(dialog.problem().contains(QStringLiteral("declares dimension 1 as 4")), qPrintable(dialog.problem()));
    QVERIFY(!ok->isEnabled());
    dialog.shapeField(QStringLiteral("z"))->setText(QStringLiteral("2 x 4"));
    QVERIFY2(dialog.problem().isEmpty(), qPrintable(dialog.problem()));
    QVERIFY(ok->isEnabled());
    dialog.dimBox(QStringLiteral("batch"))->setValue(2);
    const auto bindings = dialog.bindings();
    QCOMPARE(bindings.dims.at("batch"), std::int64_t(2));
    QCOMPARE(bindings.inputShapes.at("z"), (std::vector<std::int64_t> { 2, 4 }));

    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFileWithSizes(path, bindings);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QCOMPARE(m_window->currentSpec(), path);
    const auto& graph = *m_window->document()->workload()->graph;
    const auto x = std::find_if(graph.tensors.begin(), graph.tensors.end(), [](const core::Tensor& t) { return t.name == "x"; });
    QVERIFY(x != graph.tensors.end());
    QCOMPARE(x->shape, (std::vector<std::int64_t> { 2, 4 }));
    QVERIFY(!m_window->messageBanner()->isVisible());
    const QString summary = m_window->summaryPanel()->summaryText();
    QVERIFY2(summary.contains(QStringLiteral("planned for the sizes given: batch = 2, input 'z' [2,4]")), qPrintable(summary));
    QVERIFY(m_window->inputSizesAction()->isEnabled()); // the sizes can be changed again
    QCOMPARE(m_window->shapeBindings().dims.at("batch"), std::int64_t(2));

    // A reload (another alignment) keeps the sizes.
    planned.clear();
    m_window->setAlignment(64);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QCOMPARE(m_window->currentSpec(), path);
    planned.clear();
    m_window->setAlignment(0);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);

    // Another model: no sizes to set, none kept.
    planned.clear();
    m_window->openFile(QStringLiteral("example:unet"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QVERIFY(!m_window->inputSizesAction()->isEnabled());
    QVERIFY(m_window->shapeBindings().dims.empty());

    // Open Recent remembers the sizes it was opened with, says them, and opens with them.
    auto* recent = m_window->findChild<QMenu*>(QStringLiteral("recentMenu"));
    QVERIFY(recent);
    emit recent->aboutToShow();
    QAction* entry = nullptr;
    for (QAction* action : recent->actions())
        if (!entry && action->text().contains(QStringLiteral("open_inputs.onnx"))) // the newest is first
            entry = action;
    QVERIFY(entry);
    QVERIFY2(entry->text().endsWith(QStringLiteral(" (batch = 2, z 2×4)")), qPrintable(entry->text()));
    planned.clear();
    entry->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QCOMPARE(m_window->currentSpec(), path);
    QCOMPARE(m_window->shapeBindings().dims.at("batch"), std::int64_t(2));
    QCOMPARE(m_window->shapeBindings().inputShapes.at("z"), (std::vector<std::int64_t> { 2, 4 }));

    // Two entries of one file name say their folders.
    const QStringList before = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    QSettings().setValue(QStringLiteral("recentFiles"), QStringList { QStringLiteral("/data/a/model.onnx"), QStringLiteral("/data/b/model.onnx") });
    emit recent->aboutToShow();
    QStringList texts;
    for (QAction* action : recent->actions())
        texts << action->text();
    QVERIFY2(texts.contains(QStringLiteral("&1 model.onnx — /data/a")) && texts.contains(QStringLiteral("&2 model.onnx — /data/b")),
        qPrintable(texts.join(QLatin1Char('|'))));
    QSettings().setValue(QStringLiteral("recentFiles"), before);

    planned.clear();
    m_window->openFile(QStringLiteral("example:unet"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
}

void TestStudio::corruptFileKeepsPreviousModel()
{
    const auto previous = m_window->document()->sharedWorkload();
    const core::Bytes previousArena = m_window->document()->plan()->arenaSize;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("x.onnx"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    QByteArray noise(4096, Qt::Uninitialized);
    QRandomGenerator generator(42);
    for (auto& byte : noise)
        byte = static_cast<char>(generator.bounded(256));
    file.write(noise);
    file.close();

    QSignalSpy failed(m_window.get(), &MainWindow::errorOccurred);
    m_window->openFile(path);
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kTimeout);
    QVERIFY(m_window->messageBanner()->isVisible());
    QVERIFY2(m_window->messageBanner()->text().contains(QStringLiteral("x.onnx")),
        qPrintable(m_window->messageBanner()->text()));
    QCOMPARE(m_window->messageBanner()->type(), MessageBanner::Type::Error);
    // The previous model is still on display, plan and all.
    QCOMPARE(m_window->document()->sharedWorkload(), previous);
    QVERIFY(m_window->document()->hasPlan());
    QCOMPARE(m_window->document()->plan()->arenaSize, previousArena);
    QCOMPARE(m_window->currentSpec(), QStringLiteral("example:unet"));
    QVERIFY(!m_window->controller()->isBusy());

    // A good file afterwards clears the banner.
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFile(QStringLiteral("example:transformer"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QVERIFY(m_window->messageBanner()->isHidden());
    QCOMPARE(m_window->currentSpec(), QStringLiteral("example:transformer"));
}

void TestStudio::renderScreenshots()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QString error;
    QVERIFY2(m_window->renderScreenshots(dir.filePath(QStringLiteral("shots")), &error), qPrintable(error));
    for (const char* name :
        { "memory-curve.png", "lifetime-bars.png", "arena-layout.png", "coloring.png", "window.png" }) {
        const QImage image(dir.filePath(QStringLiteral("shots/") + QString::fromLatin1(name)));
        QVERIFY2(!image.isNull(), name);
        QVERIFY2(distinctColors(image) > 8, name);
    }
    const QImage window(dir.filePath(QStringLiteral("shots/window.png")));
    QVERIFY(window.width() >= 1000 && window.height() >= 700);
}

void TestStudio::alignmentReloads()
{
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->setAlignment(4096);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    const auto& problem = m_window->document()->workload()->problem;
    QCOMPARE(problem.alignment, core::Bytes(4096));
    for (core::Bytes offset : m_window->document()->plan()->offsets)
        QCOMPARE(offset % 4096, core::Bytes(0));
    QVERIFY(m_window->summaryPanel()->summaryText().contains(QStringLiteral("Alignment: 4096 B")));

    planned.clear();
    m_window->setAlignment(0); // back to the workload's default
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QCOMPARE(m_window->document()->workload()->problem.alignment, core::Bytes(256));

    // The box offers only what core accepts: the arrows double and halve, typed values round to a
    // power of two.
    auto* spin = m_window->findChild<QSpinBox*>(QStringLiteral("alignment"));
    QVERIFY(spin);
    QAbstractSpinBox* box = spin; // validate and fixup are public here
    QCOMPARE(spin->value(), 0);
    spin->stepBy(1);
    QCOMPARE(spin->value(), 1);
    spin->stepBy(9);
    QCOMPARE(spin->value(), 512);
    spin->stepBy(-1);
    QCOMPARE(spin->value(), 256);
    QString text = QStringLiteral("300 B");
    int pos = 0;
    QCOMPARE(box->validate(text, pos), QValidator::Intermediate);
    box->fixup(text);
    QCOMPARE(text, QStringLiteral("256 B"));
    text = QStringLiteral("1000 B");
    box->fixup(text);
    QCOMPARE(text, QStringLiteral("1024 B"));
    text = QStringLiteral("4096 B");
    QCOMPARE(box->validate(text, pos), QValidator::Acceptable);
    planned.clear();
    spin->setValue(0);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
}

// The Workspaces box re-loads with each Conv's workspace as a buffer; the table names it and its op.
void TestStudio::workspacesReload()
{
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFile(QStringLiteral("example:cnn"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    const auto before = m_window->document()->workload()->problem.buffers.size();
    planned.clear();
    m_window->setWorkspaces(true);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    const auto* workload = m_window->document()->workload();
    QVERIFY(workload->workspaces);
    QVERIFY(workload->problem.buffers.size() > before);
    QVERIFY(m_window->summaryPanel()->summaryText().contains(QStringLiteral("Workspaces: ")));
    TensorTableModel model(m_window->document());
    int rows = 0;
    for (int row = 0; row < model.rowCount(); ++row) {
        const auto& buffer = workload->problem.buffers[static_cast<std::size_t>(row)];
        if (buffer.kind != core::TensorKind::Workspace)
            continue;
        ++rows;
        const auto& op = workload->graph->ops[static_cast<std::size_t>(workload->bufferOp[static_cast<std::size_t>(row)])];
        QCOMPARE(model.index(row, TensorTableModel::Name).data().toString(), QString::fromStdString(op.name + " workspace"));
        QCOMPARE(model.index(row, TensorTableModel::Kind).data().toString(), QStringLiteral("workspace"));
        QCOMPARE(model.index(row, TensorTableModel::Producer).data().toString(), QString::fromStdString(op.name));
        QCOMPARE(buffer.lifetime.end - buffer.lifetime.start, 1);
    }
    QCOMPARE(rows, int(workload->problem.buffers.size() - before));
    QVERIFY(core::validatePlan(workload->problem, *m_window->document()->plan()).ok());

    planned.clear();
    m_window->setWorkspaces(false);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QVERIFY(!m_window->document()->workload()->workspaces);
    QCOMPARE(m_window->document()->workload()->problem.buffers.size(), before);

    // With the box on, an allocation problem (no ops) still loads, as it is.
    m_window->setWorkspaces(true);
    QTRY_VERIFY_WITH_TIMEOUT(m_window->document()->workload()->workspaces, kTimeout);
    planned.clear();
    m_window->openFile(QStringLiteral("example:hotel"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1 && m_window->document()->workload()->source == "example:hotel", kTimeout);
    QVERIFY(!m_window->document()->workload()->workspaces);
    m_window->setWorkspaces(false);
}

void TestStudio::dropOpensFileAndRemembersIt()
{
    const QString path = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/data/small_problem.csv");
    QVERIFY(QFileInfo::exists(path));
    QMimeData mime;
    mime.setUrls({ QUrl::fromLocalFile(path) });
    const QPoint center = m_window->rect().center();
    QDragEnterEvent enter(center, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(m_window.get(), &enter);
    QVERIFY(enter.isAccepted());
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    QDropEvent drop(center, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(m_window.get(), &drop);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QCOMPARE(m_window->currentSpec(), QFileInfo(path).absoluteFilePath());
    QVERIFY(!m_window->document()->workload()->graph); // an allocation problem: no producer/consumer columns
    QCOMPARE(m_window->tensorModel()->index(0, TensorTableModel::Producer).data().toString(), QStringLiteral("—"));
    QCOMPARE(QSettings().value(QStringLiteral("recentFiles")).toStringList().value(0), QFileInfo(path).absoluteFilePath());
}

// Model > Training Step: the backward pass appended in the background and planned (validated), the
// title and summary say so; weight gradients outside the arena change the arena; a reload of the
// same model keeps the training step, turning it off shows the model as loaded, another model
// starts without it.
void TestStudio::trainingStepPlansForwardAndBackward()
{
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFile(QStringLiteral("example:cnn"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1 && m_window->document()->workload()->source == "example:cnn", kTimeout);
    const auto forward = m_window->document()->sharedWorkload();
    QCOMPARE(m_window->forwardWorkload(), forward);
    const core::Step forwardSteps = forward->schedule.steps();
    QCOMPARE(core::backwardStart(*forward->graph, forward->schedule), forwardSteps); // no backward pass yet
    QVERIFY(m_window->trainingAction()->isEnabled());
    QVERIFY(!m_window->trainingAction()->isChecked());
    QVERIFY(!m_window->persistentGradientsAction()->isEnabled()); // only with the training step

    const auto isTraining = [this] {
        const core::Workload* w = m_window->document()->workload();
        return w && w->graph && core::backwardStart(*w->graph, w->schedule) < w->schedule.steps() && m_window->document()->hasPlan();
    };
    planned.clear();
    m_window->trainingAction()->trigger(); // as the Model menu does
    QVERIFY(m_window->isTrainingStep());
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1 && isTraining(), kTimeout);
    const auto training = m_window->document()->sharedWorkload();
    QCOMPARE(training->source, forward->source);
    QCOMPARE(m_window->forwardWorkload(), forward); // the model as loaded stays, to turn it off again
    QVERIFY(training->schedule.steps() > forwardSteps);
    QCOMPARE(core::backwardStart(*training->graph, training->schedule), forwardSteps); // forward ops first, then the seed
    int gradientOps = 0;
    for (const auto& op : training->graph->ops)
        gradientOps += op.domain == core::kTrainingDomain ? 1 : 0;
    QVERIFY(gradientOps > 20); // the loss seed and the gradients of the convolutions, at least
    QVERIFY(core::validatePlan(training->problem, *m_window->document()->plan()).ok());
    QVERIFY2(m_window->windowTitle().contains(QStringLiteral("training step")), qPrintable(m_window->windowTitle()));
    const QString summary = m_window->summaryPanel()->summaryText();
    QVERIFY2(summary.contains(QStringLiteral("Mode: training step forward + backward, backward from step %1").arg(forwardSteps)),
        qPrintable(summary));
    const core::Bytes trainingArena = m_window->document()->plan()->arenaSize;

    // Weight gradients outside the arena: same schedule, fewer arena buffers, a smaller arena.
    QVERIFY(m_window->persistentGradientsAction()->isEnabled());
    planned.clear();
    m_window->persistentGradientsAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1 && m_window->document()->workload() != training.get() && isTraining(), kTimeout);
    const auto persistent = m_window->document()->sharedWorkload();
    QCOMPARE(persistent->schedule.steps(), training->schedule.steps());
    QVERIFY(persistent->problem.buffers.size() < training->problem.buffers.size());
    QVERIFY(m_window->document()->plan()->arenaSize < trainingArena);
    QVERIFY(core::validatePlan(persistent->problem, *m_window->document()->plan()).ok());

    // A reload of the same model (alignment) keeps both settings and derives the step again.
    planned.clear();
    m_window->setAlignment(512);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1 && m_window->document()->workload()->problem.alignment == 512 && isTraining(), kTimeout);
    QVERIFY(m_window->isTrainingStep() && m_window->persistentGradientsAction()->isChecked());
    QCOMPARE(m_window->document()->workload()->problem.buffers.size(), persistent->problem.buffers.size());
    QVERIFY(core::validatePlan(m_window->document()->workload()->problem, *m_window->document()->plan()).ok());
    planned.clear();
    m_window->setAlignment(0);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1 && m_window->document()->workload()->problem.alignment == 256 && isTraining(), kTimeout);

    // Off: the model as loaded again, without a reload.
    planned.clear();
    m_window->trainingAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1 && !isTraining() && m_window->document()->hasPlan(), kTimeout);
    QCOMPARE(m_window->document()->workload()->schedule.steps(), forwardSteps);
    QVERIFY(core::validatePlan(m_window->document()->workload()->problem, *m_window->document()->plan()).ok());
    QVERIFY(!m_window->windowTitle().contains(QStringLiteral("training step")));
    QVERIFY(!m_window->persistentGradientsAction()->isEnabled());

    // Cancelled while it derives (the result is still on its way): off, the model as loaded stays.
    const auto buttons = m_window->findChildren<QToolButton*>();
    const auto cancel = std::find_if(buttons.begin(), buttons.end(), [](QToolButton* b) { return b->text() == QStringLiteral("Cancel"); });
    QVERIFY(cancel != buttons.end());
    m_window->setTrainingStep(true);
    QVERIFY(m_window->controller()->isLoading());
    (*cancel)->click();
    QVERIFY(!m_window->isTrainingStep() && !m_window->controller()->isBusy());
    QTest::qWait(300);
    QCOMPARE(m_window->document()->sharedWorkload(), m_window->forwardWorkload());
    QVERIFY(!isTraining() && m_window->document()->hasPlan());

    // Another model starts without it.
    planned.clear();
    m_window->setTrainingStep(true);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1 && isTraining(), kTimeout);
    planned.clear();
    m_window->openFile(QStringLiteral("example:unet"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1 && m_window->document()->workload()->source == "example:unet", kTimeout);
    QVERIFY(!m_window->isTrainingStep());
    QVERIFY(!m_window->persistentGradientsAction()->isChecked());
    QVERIFY(!isTraining());
    QVERIFY(core::validatePlan(m_window->document()->workload()->problem, *m_window->document()->plan()).ok());
}

// Where a training step cannot apply the action is disabled and says why; asked for anyway (or
// found out only by trying: nothing to differentiate) it is refused in the banner, the model shown
// as loaded, and the action left off.
void TestStudio::trainingStepRefusedWhereItCannotApply()
{
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    QSignalSpy errors(m_window.get(), &MainWindow::errorOccurred);
    m_window->openFile(QStringLiteral("example:hotel"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1 && m_window->document()->workload()->source == "example:hotel", kTimeout);
    QVERIFY(!m_window->trainingAction()->isEnabled());
    QVERIFY2(m_window->trainingAction()->toolTip().contains(QStringLiteral("allocation problem")),
        qPrintable(m_window->trainingAction()->toolTip()));
    m_window->setTrainingStep(true);
    QVERIFY(!m_window->isTrainingStep());
    QCOMPARE(errors.count(), 1);
    QVERIFY2(m_window->messageBanner()->isVisible()
            && m_window->messageBanner()->text().startsWith(QStringLiteral("No training step for example:hotel: an allocation problem")),
        qPrintable(m_window->messageBanner()->text()));
    QCOMPARE(m_window->document()->workload()->source, std::string("example:hotel"));
    QVERIFY(core::validatePlan(m_window->document()->workload()->problem, *m_window->document()->plan()).ok());

    // A graph without weights: nothing to differentiate, known only once the worker tried.
    const QString tiny = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/data/tiny_graph.json");
    planned.clear();
    m_window->openFile(tiny);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1 && m_window->currentSpec() == QFileInfo(tiny).absoluteFilePath(), kTimeout);
    QVERIFY(m_window->trainingAction()->isEnabled());
    errors.clear();
    m_window->trainingAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(errors.count() >= 1, kTimeout);
    QVERIFY(!m_window->isTrainingStep());
    QVERIFY2(m_window->messageBanner()->text()
                 == QStringLiteral("No training step for tiny_graph.json: no float graph output depends on a weight: there is "
                                   "nothing to differentiate. Showing the forward pass."),
        qPrintable(m_window->messageBanner()->text()));
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->controller()->isBusy(), kTimeout);
    QCOMPARE(m_window->document()->sharedWorkload(), m_window->forwardWorkload());
    QVERIFY(core::validatePlan(m_window->document()->workload()->problem, *m_window->document()->plan()).ok());

    // A captured training step already has its backward pass.
    const QString captured = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/data/captured_mlp.json");
    planned.clear();
    m_window->openFile(captured);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1 && m_window->currentSpec() == QFileInfo(captured).absoluteFilePath(), kTimeout);
    QVERIFY(!m_window->trainingAction()->isEnabled());
    QVERIFY2(m_window->trainingAction()->toolTip().contains(QStringLiteral("already is a training step")),
        qPrintable(m_window->trainingAction()->toolTip()));
    QVERIFY2(m_window->windowTitle().contains(QStringLiteral("training step")), qPrintable(m_window->windowTitle()));
    QVERIFY(m_window->summaryPanel()->summaryText().contains(QStringLiteral("Mode: captured training step")));
}

// ---------------------------------------------------------------- exact planner

void TestStudio::stopBeforeAnyPlanIsQuiet()
{
    // A planner that cannot keep a partial result ends quietly on stop: no planFailed, not busy.
    PlanningController controller;
    QSignalSpy ready(&controller, &PlanningController::planReady);
    QSignalSpy failed(&controller, &PlanningController::planFailed);
    controller.stop(); // nothing running: no effect
    controller.requestPlan(loadNow("example:unet"), QStringLiteral("naive"));
    controller.stop();
    QTRY_VERIFY_WITH_TIMEOUT(!controller.isBusy(), kTimeout);
    QTest::qWait(200);
    QCOMPARE(failed.count(), 0);
    QVERIFY(ready.count() <= 1); // naive may have finished before the stop was seen
    if (ready.count() == 1)
        QCOMPARE(QString::fromStdString(ready.at(0).at(0).value<core::Plan>().planner), QStringLiteral("naive"));
}

void TestStudio::exactReportsProgressAndStopKeepsBest()
{
    const QString path = QStringLiteral(MEMPLAN_BENCHMARK_DIR "/D.1048576.csv");
    QVERIFY(QFileInfo::exists(path));
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    QSignalSpy errors(m_window.get(), &MainWindow::errorOccurred);
    m_window->setPlannerName(QStringLiteral("greedy-by-size")); // fast while loading
    m_window->openFile(path);
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QCOMPARE(m_window->currentSpec(), QFileInfo(path).absoluteFilePath());
    QVERIFY(!m_window->timeLimitSpin()->isEnabled()); // greedy ignores the time limit
    QCOMPARE(m_window->timeLimitSpin()->value(), 5.0);

    QSignalSpy progress(m_window->controller(), &PlanningController::planProgress);
    planned.clear();
    m_window->setPlannerName(QStringLiteral("exact"));
    QVERIFY(m_window->timeLimitSpin()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(progress.count() >= 1 || planned.count() >= 1, kTimeout);
    if (planned.isEmpty()) {
        QVERIFY(m_window->stopButton()->isVisible());
        const auto first = progress.at(0);
        QVERIFY(first.at(0).toLongLong() > 0); // exact starts from a greedy plan
        QVERIFY(first.at(1).toLongLong() > 0); // and knows the lower bound
        QTRY_VERIFY_WITH_TIMEOUT(
            m_window->busyLabel()->text().startsWith(QStringLiteral("exact: best ")), kTimeout);
        const QString line = m_window->busyLabel()->text();
        QVERIFY2(line.contains(QStringLiteral("lower bound")) || line.contains(QStringLiteral("proven optimal")),
            qPrintable(line));
        QVERIFY2(line.endsWith(QStringLiteral(" s left (time limit)")), qPrintable(line)); // the search's estimate

        QElapsedTimer clock;
        clock.start();
        m_window->stopButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, 1000);
        QVERIFY2(clock.elapsed() < 1000, qPrintable(QString::number(clock.elapsed())));
    }
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->controller()->isBusy(), kTimeout);
    QVERIFY(!m_window->stopButton()->isVisible());
    QCOMPARE(errors.count(), 0);
    const core::Plan* plan = m_window->document()->plan();
    QVERIFY(plan);
    QCOMPARE(QString::fromStdString(plan->planner), QStringLiteral("exact"));
    const auto check = core::validatePlan(m_window->document()->workload()->problem, *plan);
    QVERIFY2(check.ok(), check.message.c_str());
    QVERIFY(plan->provenLowerBound > 0);
    const QString summary = m_window->summaryPanel()->summaryText();
    QVERIFY2(summary.contains(QStringLiteral("Search: proven optimal"))
            || summary.contains(QStringLiteral("Search: best found; proven lower bound ")
                + QString::fromStdString(core::formatBytes(plan->provenLowerBound))),
        qPrintable(summary));
}

void TestStudio::exactProvesHotelOptimal()
{
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->setPlannerName(QStringLiteral("exact"));
    m_window->openFile(QStringLiteral("example:hotel"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1
            && m_window->currentSpec() == QStringLiteral("example:hotel") && !m_window->controller()->isBusy(),
        kTimeout);
    const core::Plan* plan = m_window->document()->plan();
    QVERIFY(plan);
    QCOMPARE(QString::fromStdString(plan->planner), QStringLiteral("exact"));
    QVERIFY(plan->provenOptimal);
    QVERIFY(core::validatePlan(m_window->document()->workload()->problem, *plan).ok());
    const QString summary = m_window->summaryPanel()->summaryText();
    QVERIFY2(summary.contains(QStringLiteral("Search: proven optimal")), qPrintable(summary));

    m_window->setPlannerName(QStringLiteral("greedy-by-size"));
    QVERIFY(!m_window->timeLimitSpin()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->controller()->isBusy(), kTimeout);
    QVERIFY(!m_window->summaryPanel()->summaryText().contains(QStringLiteral("Search:")));
}

void TestStudio::helpTexts()
{
    const QString shortcuts = shortcutsHtml(m_window.get());
    QVERIFY2(shortcuts.contains(QStringLiteral("Ctrl+R")), qPrintable(shortcuts)); // Run
    QVERIFY2(shortcuts.contains(QStringLiteral("Alt+Right")), qPrintable(shortcuts)); // Step Forward
    QVERIFY2(!shortcuts.contains(QStringLiteral("&amp;")) && !shortcuts.contains(QStringLiteral(">&R")), qPrintable(shortcuts)); // mnemonics dropped
    const QString legend = legendHtml();
    for (int k = 0; k < core::kKindCount; ++k)
        QVERIFY2(legend.contains(QString::fromUtf8(core::kindName(core::TensorKind(k)).data())), qPrintable(legend));
    QVERIFY(legend.contains(ViewPalette::kindColor(core::TensorKind::Activation).name()));
    const QString about = aboutHtml();
    QVERIFY2(about.contains(QStringLiteral("MemPlan Studio 0.")) && about.contains(QStringLiteral("oneDNN 2.")), qPrintable(about));
    QCOMPARE(m_window->menuBar()->actions().last()->menu()->actions().size(), 3);
}

// The window's layout, the time limit and the play speed come back in the next session; a window
// that does not restore (tests, --screenshot) starts from the defaults; a model's strategies do not.
void TestStudio::sessionSettingsRoundTrip()
{
    MainWindow first;
    first.timeLimitSpin()->setValue(7.5);
    auto* speed = first.findChild<QComboBox*>(QStringLiteral("playSpeed"));
    QVERIFY(speed);
    speed->setCurrentIndex(4);
    first.strategyPanel()->setStrategyChecked(QStringLiteral("fuse"), true);
    first.saveSessionSettings();

    MainWindow fresh;
    QCOMPARE(fresh.timeLimitSpin()->value(), 5.0);
    MainWindow next;
    next.restoreSessionSettings();
    QCOMPARE(next.timeLimitSpin()->value(), 7.5);
    QCOMPARE(next.findChild<QComboBox*>(QStringLiteral("playSpeed"))->currentIndex(), 4);
    QVERIFY(next.strategyPanel()->checkedStrategies().isEmpty());
    QSettings().remove(QStringLiteral("timeLimit"));
    QSettings().remove(QStringLiteral("playSpeed"));
}

QTEST_MAIN(TestStudio)
#include "tst_studio.moc"
