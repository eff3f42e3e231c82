// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Strategies in the Studio, offscreen: the marks and the before curve computed from a transformed
// workload, the strategy controller's stale-result rule, and in the window: the strategy dock
// (recompute lowers the bound, unchecking restores the model, budget fits or says it cannot), the
// marks in the views and the A/B comparison.
// The window tests use tests/data/skip_unet.json, a two-level U-Net whose peak is in the bottleneck
// while both skips wait: recompute and swap lower it. On example:unet they cannot (its peak is the
// last concat, which reads the long skip itself; see tst_strategies unetStrategiesCosted).
#include "qcp.h" // first: see qcp.h

#include "comparisonview.h"
#include "lifetimebarsview.h"
#include "mainwindow.h"
#include "memorycurveview.h"
#include "plandocument.h"
#include "planningcontroller.h"
#include "strategycontroller.h"
#include "strategymarks.h"
#include "frontierview.h"
#include "strategypanel.h"
#include "strategystyle.h"
#include "summarypanel.h"

#include "io/workload.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "strategies/training.h"
#include "util/format.h"

#include "graphbuilder.h"

#include <QCheckBox>
#include <QComboBox>
#include <QPushButton>
#include <QFile>
#include <QImage>
#include <QSpinBox>
#include <QTabWidget>
#include <QSet>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <memory>

namespace {

const char* const kSkipUnet = MEMPLAN_SOURCE_DIR "/tests/data/skip_unet.json";
constexpr int kTimeout = 120000; // generous: ctest may run under load, the budget tries 64 combinations

std::shared_ptr<const core::Workload> loadNow(const char* spec)
{
    auto workload = core::loadWorkload(spec, {});
    if (!workload)
        qFatal("cannot load %s: %s", spec, workload.error().message.c_str());
    return std::make_shared<const core::Workload>(std::move(*workload));
}

// Strategies applied with the core directly, and the facts the Studio derives from them.
struct Applied {
    std::shared_ptr<const core::Workload> workload;
    StrategyFacts facts;
};

Applied applyNow(const std::shared_ptr<const core::Workload>& original, const std::vector<std::string>& names)
{
    core::StrategyOptions options;
    options.alignment = original->problem.alignment;
    auto run = core::applyStrategies(*original, names, options);
    if (!run)
        qFatal("cannot apply strategies: %s", run.error().message.c_str());
    Applied applied;
    applied.workload = std::make_shared<const core::Workload>(run->workload);
    applied.facts = computeStrategyFacts(*original, applied.workload, run->state);
    return applied;
}

bool containsColor(const QImage& image, const QColor& color)
{
    const QRgb wanted = color.rgb();
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            if ((image.pixel(x, y) & 0xFFFFFF) == (wanted & 0xFFFFFF))
                return true;
    return false;
}

QString bytesText(core::Bytes bytes) { return QString::fromStdString(core::formatBytes(bytes)); }

} // namespace

class TestStrategyPanel : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanupTestCase();

    // facts, without widgets
    void beforeCurveKeepsThePeak_data();
    void beforeCurveKeepsThePeak();
    void simplifiedStepsOnOriginalAxis();
    void marksPerStrategy();
    void controllerDropsStaleResults();
    void leftOutStrategiesNamed();
    void allocationProblemHasNoStrategies();

    // the window
    void recomputeLowersBoundAndMarks();
    void uncheckingRestoresOriginal();
    void budgetFitsOrSaysItCannot();
    void badDeviceFileIsReported();
    void loadingKeepsStrategiesOn();
    void anotherModelStartsWithoutStrategies();
    void checkpointPolicyOnTrainingStep();
    void comparisonShowsDifferentNumbers();
    void screenshotsIncludeStrategies();
    void frontierPointsApplyAndTheBudgetFollows();

private:
    // Waits until the window shows a plan for a workload with (or without) strategy facts.
    bool waitForStrategyPlan(bool withFacts);
    std::unique_ptr<MainWindow> m_window;
    std::shared_ptr<const core::Workload> m_unet; // example:unet, for the pure tests
    std::shared_ptr<const core::Workload> m_skip; // kSkipUnet, on display in the window
};

void TestStrategyPanel::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("MemPlanTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_strategypanel"));
    m_unet = loadNow("example:unet");
    m_skip = loadNow(kSkipUnet);
    m_window = std::make_unique<MainWindow>();
    m_window->setPlannerName(QStringLiteral("greedy-by-size"));
    m_window->show();
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFile(QString::fromUtf8(kSkipUnet));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
}

void TestStrategyPanel::cleanupTestCase() { m_window.reset(); }

bool TestStrategyPanel::waitForStrategyPlan(bool withFacts)
{
    auto ready = [&] {
        const PlanDocument* doc = m_window->document();
        return !m_window->strategyPanel()->controller()->isBusy() && !m_window->controller()->isBusy() && doc->hasPlan()
            && (doc->strategyFacts() != nullptr) == withFacts;
    };
    return QTest::qWaitFor(ready, kTimeout);
}

// ---------------------------------------------------------------- facts

void TestStrategyPanel::beforeCurveKeepsThePeak_data()
{
    QTest::addColumn<QStringList>("names");
    QTest::newRow("recompute") << QStringList { QStringLiteral("recompute") };
    QTest::newRow("swap") << QStringList { QStringLiteral("swap") };
    QTest::newRow("fuse") << QStringList { QStringLiteral("fuse") };
    QTest::newRow("reorder") << QStringList { QStringLiteral("reorder") };
    QTest::newRow("all") << QStringList { QStringLiteral("fuse"), QStringLiteral("reorder"), QStringLiteral("recompute"),
        QStringLiteral("swap"), QStringLiteral("inplace") };
}

void TestStrategyPanel::beforeCurveKeepsThePeak()
{
    QFETCH(QStringList, names);
    std::vector<std::string> list;
    for (const QString& n : names)
        list.push_back(n.toStdString());
    for (const auto& model : { m_unet, m_skip }) {
        const Applied applied = applyNow(model, list);
        const auto& before = applied.facts.beforeCurve;
        QCOMPARE(static_cast<core::Step>(before.size()), applied.workload->problem.steps);
        // Every original op still runs (alone or in its fused group), so the original peak shows on the new axis.
        const core::Bytes originalPeak = core::lowerBound(model->problem);
        QCOMPARE(*std::max_element(before.begin(), before.end()), originalPeak);
        QCOMPARE(applied.facts.beforeLowerBound, originalPeak);
        // Never a value the original curve does not have.
        const auto original = core::liveBytesCurve(model->problem);
        for (core::Bytes v : before)
            QVERIFY(std::find(original.begin(), original.end(), v) != original.end());
    }
}

// Simplify removes ops and renumbers the tensors it keeps: each op left is drawn at its own step of
// the model as loaded (tensors matched by name), and the before curve holds that step's value.
void TestStrategyPanel::simplifiedStepsOnOriginalAxis()
{
    GraphBuilder b;
    const auto x = b.tensor("x", { 1, 64 }, core::TensorKind::Input);
    const auto a = b.tensor("a", { 1, 64 }), copyA = b.tensor("copy_a", { 1, 64 }), c = b.tensor("c", { 1, 64 });
    const auto copyC = b.tensor("copy_c", { 1, 64 }), out = b.tensor("out", { 1, 64 }, core::TensorKind::Output);
    b.op("relu", "Relu", { x }, { a });
    b.op("copy1", "Identity", { a }, { copyA });
    b.op("squash", "Sigmoid", { copyA }, { c });
    b.op("copy2", "Identity", { c }, { copyC });
    b.op("tanh", "Tanh", { copyC }, { out });
    const auto original = std::make_shared<const core::Workload>(b.workload("identities", 256));
    const Applied applied = applyNow(original, { "simplify" });
    QCOMPARE(applied.workload->schedule.steps(), 3);
    QCOMPARE(stepsOnOriginalAxis(*original, *applied.workload), (std::vector<double> { 0, 2, 4 }));
    const auto curve = core::liveBytesCurve(original->problem);
    QCOMPARE(applied.facts.beforeCurve, (std::vector<core::Bytes> { curve[0], curve[2], curve[4] }));
}

void TestStrategyPanel::marksPerStrategy()
{
    const Applied recompute = applyNow(m_skip, { "recompute" });
    QVERIFY(recompute.facts.countWith(MarkRecomputed) > 0);
    QCOMPARE(recompute.facts.countWith(MarkSwapOut), 0);
    QCOMPARE(static_cast<int>(recompute.facts.marks.size()), static_cast<int>(recompute.workload->problem.buffers.size()));
    for (std::size_t b = 0; b < recompute.facts.marks.size(); ++b)
        if (recompute.facts.marks[b] & MarkRecomputed) {
            QVERIFY(!recompute.facts.notes[b].empty());
            QVERIFY(QString::fromStdString(recompute.facts.notes[b].front()).startsWith(QLatin1String("recompute:")));
        }

    const Applied swap = applyNow(m_skip, { "swap" });
    QVERIFY(swap.facts.countWith(MarkSwapOut) > 0);
    QVERIFY(swap.facts.countWith(MarkSwapIn) > 0);
    QVERIFY(!swap.facts.trips.empty());
    for (const HostTrip& trip : swap.facts.trips) {
        const auto& out = swap.workload->problem.buffers[static_cast<std::size_t>(trip.outBuffer)];
        const auto& in = swap.workload->problem.buffers[static_cast<std::size_t>(trip.inBuffer)];
        // Away in between: the value holds no device memory from swap-out to swap-in.
        QVERIFY2(out.lifetime.end <= in.lifetime.start, trip.tensor.c_str());
        QVERIFY(trip.swapOutStep < trip.swapInStep);
        QVERIFY(swap.facts.marks[static_cast<std::size_t>(trip.outBuffer)] & MarkSwapOut);
        QVERIFY(swap.facts.marks[static_cast<std::size_t>(trip.inBuffer)] & MarkSwapIn);
    }

    const Applied fuse = applyNow(m_unet, { "fuse" }); // Conv+Relu groups
    QVERIFY(fuse.facts.countWith(MarkFused) > 0);
    QCOMPARE(fuse.facts.countWith(MarkRecomputed), 0);
    const Applied inplace = applyNow(m_skip, { "inplace" }); // dec2.relu writes into y2.pre
    QVERIFY(inplace.facts.countWith(MarkInPlace) > 0);
    // An in-place buffer holds more than one tensor.
    for (std::size_t b = 0; b < inplace.facts.marks.size(); ++b)
        if (inplace.facts.marks[b] & MarkInPlace)
            QVERIFY(inplace.workload->problem.buffers[b].tensors.size() >= 2);
    // U-Net's decoder Concats: each input's note names its slice of the Concat's output.
    const Applied concat = applyNow(m_unet, { "inplace" });
    int slices = 0;
    for (const auto& lines : concat.facts.notes)
        for (const auto& line : lines)
            slices += QString::fromStdString(line).contains(QLatin1String("is written into its slice of Concat output"));
    QCOMPARE(slices, 5); // every upsampled input, and the innermost skip
    // A dense block's Concats are views of the block's output; mid's run starts after f0 and f1.
    const Applied family = applyNow(std::make_shared<const core::Workload>(denseBlock(256)), { "inplace" });
    QStringList views;
    for (const auto& lines : family.facts.notes)
        for (const auto& line : lines)
            if (QString::fromStdString(line).contains(QLatin1String("is a view of its inputs' range of Concat output block.out")))
                views << QString::fromStdString(line);
    QCOMPARE(views.size(), 5);
    QVERIFY2(views.filter(QStringLiteral("mid.out is a view")).value(0).contains(QLatin1String("(at +4.00 KiB)")), qPrintable(views.join('\n')));
}

// The U-Net training step with recompute, swap and inplace: recompute is left out (swap and inplace
// reach a lower peak without it); the job names it apart from what it applied.
void TestStrategyPanel::leftOutStrategiesNamed()
{
    core::TrainingOptions training;
    training.weightGradientsInArena = false;
    auto step = core::appendBackwardPass(*m_unet, training);
    QVERIFY2(step, step ? "" : step.error().message.c_str());
    StrategyRequest request;
    request.names = { "inplace", "swap", "recompute" };
    const auto outcome = runStrategyJob(std::make_shared<const core::Workload>(std::move(*step)), request);
    QVERIFY2(outcome, outcome ? "" : outcome.error().message.c_str());
    QCOMPARE(outcome->applied, (std::vector<std::string> { "swap", "inplace" }));
    QCOMPARE(outcome->leftOut, std::vector<std::string> { "recompute" });
    QCOMPARE(outcome->reports.size(), std::size_t(3));
    QCOMPARE(outcome->reports[0].name, std::string("recompute"));
    QVERIFY(outcome->reports[0].details.at(0).starts_with("left out: without recompute"));
    QCOMPARE(core::lowerBound(outcome->workload->problem), core::Bytes(97255424)); // 92.8 MiB; 97.2 with recompute
}

void TestStrategyPanel::controllerDropsStaleResults()
{
    StrategyController controller;
    QSignalSpy finished(&controller, &StrategyController::finished);
    StrategyRequest first;
    first.names = { "swap" };
    StrategyRequest second;
    second.names = { "recompute" };
    second.plan = true;
    controller.request(m_skip, first);
    controller.request(m_skip, second); // replaces the first before it can be shown
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() >= 1, kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(!controller.isBusy(), kTimeout);
    QCOMPARE(finished.count(), 1);
    const auto outcome = finished.at(0).at(0).value<std::shared_ptr<const StrategyOutcome>>();
    QVERIFY(outcome);
    QCOMPARE(outcome->applied, std::vector<std::string> { "recompute" });
    QVERIFY(outcome->plan);
    QVERIFY(core::validatePlan(outcome->workload->problem, *outcome->plan).ok());
}

void TestStrategyPanel::allocationProblemHasNoStrategies()
{
    StrategyPanel panel;
    panel.setStrategyChecked(QStringLiteral("recompute"), true);
    QVERIFY(!panel.setOriginal(loadNow("example:hotel")));
    QVERIFY(!panel.isActive());
    QVERIFY2(panel.statusText().contains(QLatin1String("allocation problem")), qPrintable(panel.statusText()));
    QVERIFY(!panel.strategyCheckBox(QStringLiteral("recompute"))->isEnabled());
}

// ---------------------------------------------------------------- the window

void TestStrategyPanel::recomputeLowersBoundAndMarks()
{
    PlanDocument* doc = m_window->document();
    QVERIFY(!doc->strategyFacts());
    const core::Bytes originalBound = doc->metrics().lowerBound;
    QCOMPARE(originalBound, core::lowerBound(m_skip->problem));

    m_window->strategyPanel()->setStrategyChecked(QStringLiteral("recompute"), true);
    QVERIFY(waitForStrategyPlan(true));
    const core::Bytes bound = doc->metrics().lowerBound;
    QVERIFY2(bound < originalBound, qPrintable(bytesText(bound) + QStringLiteral(" vs ") + bytesText(originalBound)));
    const auto check = core::validatePlan(doc->workload()->problem, *doc->plan());
    QVERIFY2(check.ok(), check.message.c_str());
    // Displayed: the summary's lower bound, the report, the before curve.
    const QString summary = m_window->summaryPanel()->summaryText();
    QVERIFY(summary.contains(QStringLiteral("Lower bound: ") + bytesText(bound)));
    QVERIFY2(summary.contains(QStringLiteral("Lower bound before: ") + bytesText(originalBound)), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("recomputed: ")), qPrintable(summary));
    QVERIFY2(m_window->strategyPanel()->reportText().startsWith(QLatin1String("recompute: saved ")),
        qPrintable(m_window->strategyPanel()->reportText()));
    QVERIFY(m_window->memoryCurveView()->showsBefore());

    // Marks: facts of the displayed workload, the strategy color in the bars, the tooltip naming the strategy.
    const StrategyFacts* facts = doc->strategyFacts();
    QVERIFY(facts->countWith(MarkRecomputed) > 0);
    int marked = -1;
    for (std::size_t b = 0; b < facts->marks.size() && marked < 0; ++b)
        if (facts->marks[b] & MarkRecomputed)
            marked = static_cast<int>(b);
    QVERIFY(TimelineView::bufferToolTip(doc, marked).contains(QLatin1String("recompute: copy of")));
    LifetimeBarsView bars(doc);
    bars.resize(1000, 2400); // every row on screen
    bars.setSortOrder(LifetimeBarsView::SortOrder::Start);
    bars.setColorMode(LifetimeBarsView::ColorMode::Strategy);
    const QRect plot = bars.frame().plot; // the caption's legend has every color too
    QVERIFY(containsColor(bars.grab().toImage().copy(plot), StrategyStyle::markColor(MarkRecomputed)));
    bars.setColorMode(LifetimeBarsView::ColorMode::Kind); // marks stay as hatch and outline, not as the fill
    QVERIFY(!containsColor(bars.grab().toImage().copy(plot), StrategyStyle::markColor(MarkRecomputed)));

    // Swap too: both device buffers of a swapped value are marked, and the trip is recorded.
    m_window->strategyPanel()->setStrategyChecked(QStringLiteral("recompute"), false);
    m_window->strategyPanel()->setStrategyChecked(QStringLiteral("swap"), true);
    QTRY_VERIFY_WITH_TIMEOUT(m_window->strategyPanel()->checkedStrategies() == QStringList { QStringLiteral("swap") }
            && doc->strategyFacts() && doc->strategyFacts()->countWith(MarkSwapIn) > 0 && doc->hasPlan()
            && !m_window->controller()->isBusy(),
        kTimeout);
    QVERIFY(!doc->strategyFacts()->trips.empty());
    QVERIFY(core::validatePlan(doc->workload()->problem, *doc->plan()).ok());
    m_window->strategyPanel()->setStrategyChecked(QStringLiteral("swap"), false);
    QVERIFY(waitForStrategyPlan(false));
}

void TestStrategyPanel::uncheckingRestoresOriginal()
{
    PlanDocument* doc = m_window->document();
    const auto originalBuffers = m_skip->problem.buffers.size();
    m_window->strategyPanel()->setStrategyChecked(QStringLiteral("fuse"), true);
    m_window->strategyPanel()->setStrategyChecked(QStringLiteral("recompute"), true);
    QVERIFY(waitForStrategyPlan(true));
    QVERIFY(doc->metrics().lowerBound < core::lowerBound(m_skip->problem));
    QVERIFY(doc->strategyFacts()->countWith(MarkFused) > 0);

    m_window->strategyPanel()->setStrategyChecked(QStringLiteral("fuse"), false);
    m_window->strategyPanel()->setStrategyChecked(QStringLiteral("recompute"), false);
    QVERIFY(waitForStrategyPlan(false));
    QCOMPARE(doc->workload()->problem.buffers.size(), originalBuffers);
    QCOMPARE(doc->metrics().lowerBound, core::lowerBound(m_skip->problem));
    QVERIFY(!m_window->memoryCurveView()->showsBefore());
    QVERIFY(m_window->strategyPanel()->reportText().isEmpty() || !m_window->strategyPanel()->outcome());
}

void TestStrategyPanel::budgetFitsOrSaysItCannot()
{
    PlanDocument* doc = m_window->document();
    StrategyPanel* panel = m_window->strategyPanel();
    // A budget some combination is known to meet: the arena of fuse+recompute+inplace.
    const Applied known = applyNow(m_skip, { "fuse", "recompute", "inplace" });
    const auto knownPlan = core::runPlanner(*core::plannerByName("greedy-by-size"), known.workload->problem);
    QVERIFY(knownPlan);
    const core::Bytes originalArena = doc->plan()->arenaSize;
    QVERIFY(knownPlan->arenaSize < originalArena);
    const core::Bytes feasible = knownPlan->arenaSize;

    panel->setBudget(feasible);
    panel->setBudgetEnabled(true);
    QTRY_VERIFY_WITH_TIMEOUT(panel->outcome() && panel->outcome()->budgetMode && panel->outcome()->budget == feasible, kTimeout);
    QVERIFY(waitForStrategyPlan(true));
    QVERIFY2(panel->statusText().contains(QLatin1String("met with")), qPrintable(panel->statusText()));
    QVERIFY(panel->outcome()->fits);
    QVERIFY(panel->outcome()->budgetArena <= feasible);
    QVERIFY(doc->plan()->arenaSize <= feasible); // the window plans with the same planner
    QVERIFY(core::validatePlan(doc->workload()->problem, *doc->plan()).ok());
    QCOMPARE(doc->budget(), feasible);
    QVERIFY(m_window->memoryCurveView()->showsBudget());
    // The greyed boxes show the search's choice, not a stale one of the user's.
    QStringList chosen;
    for (const auto& name : panel->outcome()->applied)
        chosen << QString::fromStdString(name);
    QVERIFY(!chosen.isEmpty());
    QCOMPARE(panel->checkedStrategies(), chosen);
    QVERIFY(!panel->strategyCheckBox(chosen.front())->isEnabled());

    panel->setBudget(1024); // 1 KiB: nothing fits
    QTRY_VERIFY_WITH_TIMEOUT(panel->outcome() && panel->outcome()->budget == 1024, kTimeout);
    QVERIFY(!panel->outcome()->fits);
    QVERIFY2(panel->statusText().contains(QStringLiteral("cannot fit: smallest peak ") + bytesText(panel->outcome()->budgetArena)),
        qPrintable(panel->statusText()));
    QVERIFY(panel->outcome()->budgetArena <= feasible); // the smallest arena reached, at least as good as the known one

    panel->setBudgetEnabled(false);
    QVERIFY(panel->checkedStrategies().isEmpty()); // the user's own choice again: none
    QVERIFY(panel->strategyCheckBox(chosen.front())->isEnabled());
    QVERIFY(waitForStrategyPlan(false));
    QCOMPARE(doc->budget(), core::Bytes(0));
    QCOMPARE(doc->workload()->problem.buffers.size(), m_skip->problem.buffers.size());
}

void TestStrategyPanel::badDeviceFileIsReported()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("broken-device.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("{ \"name\": \"broken\" ");
    file.close();
    StrategyPanel* panel = m_window->strategyPanel();
    const int before = panel->deviceCombo()->currentIndex();
    QString error;
    QVERIFY(!panel->setDeviceFile(path, &error));
    QVERIFY2(error.contains(QLatin1String("broken-device.json")), qPrintable(error));
    QCOMPARE(panel->deviceCombo()->currentIndex(), before);
}

void TestStrategyPanel::loadingKeepsStrategiesOn()
{
    PlanDocument* doc = m_window->document();
    m_window->strategyPanel()->setStrategyChecked(QStringLiteral("recompute"), true);
    QVERIFY(waitForStrategyPlan(true));
    // Opening a model (here the same file again) applies the checked strategies to it before planning.
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFile(QString::fromUtf8(kSkipUnet));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QVERIFY(waitForStrategyPlan(true));
    QVERIFY(doc->strategyFacts()->countWith(MarkRecomputed) > 0);
    QVERIFY(doc->metrics().lowerBound < core::lowerBound(m_skip->problem));
    QVERIFY(core::validatePlan(doc->workload()->problem, *doc->plan()).ok());
    m_window->strategyPanel()->setStrategyChecked(QStringLiteral("recompute"), false);
    QVERIFY(waitForStrategyPlan(false));
    QCOMPARE(doc->workload()->problem.buffers.size(), m_skip->problem.buffers.size());
}

// Strategies and the budget fitted to one model do not leak into the next: it opens untransformed,
// with the budget off and its value the slider's share of its own lower bound.
void TestStrategyPanel::anotherModelStartsWithoutStrategies()
{
    PlanDocument* doc = m_window->document();
    StrategyPanel* panel = m_window->strategyPanel();
    panel->setStrategyChecked(QStringLiteral("recompute"), true);
    QVERIFY(waitForStrategyPlan(true));
    panel->setBudget(core::lowerBound(m_skip->problem) / 2);
    panel->setBudgetEnabled(true);
    QTRY_VERIFY_WITH_TIMEOUT(panel->outcome() && panel->outcome()->budgetMode, kTimeout);

    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFile(QStringLiteral("example:unet"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QVERIFY(waitForStrategyPlan(false));
    QCOMPARE(doc->workload()->source, std::string("example:unet"));
    QCOMPARE(doc->workload()->problem.buffers.size(), m_unet->problem.buffers.size());
    QVERIFY(panel->checkedStrategies().isEmpty());
    QVERIFY(!panel->budgetEnabled());
    QCOMPARE(doc->budget(), core::Bytes(0));
    // The slider's share, 50 % since the budget above was half of that model's bound.
    QCOMPARE(panel->budget(), std::max<core::Bytes>(1, core::lowerBound(m_unet->problem) * 50 / 100));
    QVERIFY(core::validatePlan(doc->workload()->problem, *doc->plan()).ok());

    // Back to the model the later tests expect.
    planned.clear();
    m_window->openFile(QString::fromUtf8(kSkipUnet));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QVERIFY(waitForStrategyPlan(false));
}

// Recompute's checkpoint policy (--checkpoint sqrt|N) applies to a graph with a backward pass: with
// Model > Training Step on, the panel offers it, choosing it turns recompute on, and the result is the
// core's own; with the training step off the policy is disabled and recompute greedy again. On
// example:unet (kSkipUnet has no weights: nothing to differentiate).
void TestStrategyPanel::checkpointPolicyOnTrainingStep()
{
    PlanDocument* doc = m_window->document();
    StrategyPanel* panel = m_window->strategyPanel();
    QVERIFY(!panel->checkpointApplies());
    QVERIFY(!panel->recomputePolicyCombo()->isEnabled());
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFile(QStringLiteral("example:unet"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1 && doc->workload()->source == "example:unet", kTimeout);

    auto forwardTraining = core::appendBackwardPass(*m_unet, {});
    QVERIFY(forwardTraining);
    const auto training = std::make_shared<const core::Workload>(std::move(*forwardTraining));
    const auto checkpointed = [&training](int every) {
        core::StrategyOptions options;
        options.alignment = training->problem.alignment;
        options.recomputePolicy = core::RecomputePolicy::Checkpoint;
        options.checkpointEvery = every;
        auto run = core::applyStrategies(*training, { "recompute" }, options);
        if (!run)
            qFatal("cannot checkpoint: %s", run.error().message.c_str());
        return core::lowerBound(run->workload.problem);
    };

    m_window->setTrainingStep(true);
    QVERIFY(QTest::qWaitFor([&] { return panel->checkpointApplies() && !m_window->controller()->isBusy() && doc->hasPlan(); }, kTimeout));
    QCOMPARE(doc->workload()->schedule.steps(), training->schedule.steps());
    QVERIFY(panel->recomputePolicyCombo()->isEnabled());
    QVERIFY(!panel->checkpointEverySpin()->isEnabled()); // only for "every N"

    panel->setCheckpointEvery(0); // every √n forward ops
    QVERIFY(panel->strategyCheckBox(QStringLiteral("recompute"))->isChecked());
    QVERIFY(waitForStrategyPlan(true));
    QCOMPARE(panel->outcome()->checkpointEvery, std::optional<int>(0));
    QVERIFY2(panel->statusText().contains(QStringLiteral("recompute (checkpoints every √n ops)")), qPrintable(panel->statusText()));
    QCOMPARE(doc->metrics().lowerBound, checkpointed(0));
    QVERIFY2(doc->metrics().lowerBound < core::lowerBound(training->problem),
        qPrintable(bytesText(doc->metrics().lowerBound) + QStringLiteral(" vs ") + bytesText(core::lowerBound(training->problem))));
    QVERIFY(core::validatePlan(doc->workload()->problem, *doc->plan()).ok());

    panel->setCheckpointEvery(2);
    QVERIFY(panel->checkpointEverySpin()->isEnabled());
    QVERIFY(QTest::qWaitFor([&] { return panel->outcome() && panel->outcome()->checkpointEvery == 2; }, kTimeout));
    QVERIFY(waitForStrategyPlan(true));
    QCOMPARE(doc->metrics().lowerBound, checkpointed(2));
    QVERIFY(core::validatePlan(doc->workload()->problem, *doc->plan()).ok());

    // The training step off: the model as loaded, recompute greedy on it.
    m_window->setTrainingStep(false);
    QVERIFY(QTest::qWaitFor([&] { return !panel->checkpointApplies() && panel->outcome() && !panel->outcome()->checkpointEvery; }, kTimeout));
    QVERIFY(waitForStrategyPlan(true));
    QVERIFY(!panel->recomputePolicyCombo()->isEnabled());
    QVERIFY(core::backwardStart(*doc->workload()->graph, doc->workload()->schedule) == doc->workload()->schedule.steps());
    QVERIFY(core::validatePlan(doc->workload()->problem, *doc->plan()).ok());

    panel->setCheckpointEvery(std::nullopt);
    panel->setStrategyChecked(QStringLiteral("recompute"), false);
    QVERIFY(waitForStrategyPlan(false));

    // Back to the model the later tests expect.
    planned.clear();
    m_window->openFile(QString::fromUtf8(kSkipUnet));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QVERIFY(waitForStrategyPlan(false));
}

void TestStrategyPanel::comparisonShowsDifferentNumbers()
{
    m_window->strategyPanel()->setStrategyChecked(QStringLiteral("swap"), true);
    QVERIFY(waitForStrategyPlan(true));
    m_window->showComparison();
    ComparisonView* compare = m_window->comparisonView();
    QVERIFY(compare);
    // It opens on the main window's configuration (A) and that plus every strategy that lowers the
    // bound without host traffic (B), with the main window's planner.
    QCOMPARE(compare->strategies(ComparisonView::A), QStringList { QStringLiteral("swap") });
    const QStringList b = compare->strategies(ComparisonView::B);
    QCOMPARE(QSet<QString>(b.begin(), b.end()),
        (QSet<QString> { QStringLiteral("swap"), QStringLiteral("fuse"), QStringLiteral("recompute"), QStringLiteral("inplace") }));
    QCOMPARE(compare->plannerName(ComparisonView::A), QStringLiteral("greedy-by-size"));
    QCOMPARE(compare->plannerName(ComparisonView::B), QStringLiteral("greedy-by-size"));
    m_window->strategyPanel()->setStrategyChecked(QStringLiteral("swap"), false);
    QVERIFY(waitForStrategyPlan(false));
    compare->setConfiguration(ComparisonView::A, {}, QStringLiteral("greedy-by-size"), QStringLiteral("h200"));
    compare->setConfiguration(ComparisonView::B, { QStringLiteral("swap") }, QStringLiteral("best-fit"),
        QStringLiteral("h200"));
    QTRY_VERIFY_WITH_TIMEOUT(!compare->isBusy() && compare->outcome(ComparisonView::A) && compare->outcome(ComparisonView::B)
            && compare->outcome(ComparisonView::B)->applied == std::vector<std::string> { "swap" },
        kTimeout);
    for (auto side : { ComparisonView::A, ComparisonView::B }) {
        const auto outcome = compare->outcome(side);
        QVERIFY(outcome->plan);
        const auto check = core::validatePlan(outcome->workload->problem, *outcome->plan);
        QVERIFY2(check.ok(), check.message.c_str());
    }
    QCOMPARE(compare->outcome(ComparisonView::A)->workload->problem.buffers.size(), m_skip->problem.buffers.size());
    QCOMPARE(compare->cellText(ComparisonView::LowerBound, 0), bytesText(core::lowerBound(m_skip->problem)));
    QVERIFY(compare->cellText(ComparisonView::LowerBound, 0) != compare->cellText(ComparisonView::LowerBound, 1));
    QVERIFY(compare->cellText(ComparisonView::Steps, 0) != compare->cellText(ComparisonView::Steps, 1));
    QCOMPARE(compare->cellText(ComparisonView::Saved, 0), QStringLiteral("0 B"));
    QVERIFY(compare->cellText(ComparisonView::LowerBound, 2).startsWith(QStringLiteral("−"))); // B is lower
    QVERIFY(compare->cellText(ComparisonView::Swapped, 2).startsWith(QLatin1Char('+')));
    QVERIFY(compare->cellText(ComparisonView::Steps, 2).startsWith(QLatin1Char('+'))); // swap adds its copies
    // The curves line up by op: every op of the model sits at its own step on B's axis too (swap
    // only inserts copies, which share the unit after the op before them), and both end together.
    const auto axisB = stepsOnOriginalAxis(*m_skip, *compare->outcome(ComparisonView::B)->workload);
    QCOMPARE(axisB.size(), std::size_t(compare->outcome(ComparisonView::B)->workload->problem.steps));
    std::vector<int> opsAt(static_cast<std::size_t>(m_skip->problem.steps), 0);
    for (double x : axisB) {
        QVERIFY(x >= 0 && x < m_skip->problem.steps);
        if (x == std::floor(x))
            ++opsAt[static_cast<std::size_t>(x)];
    }
    QVERIFY(std::all_of(opsAt.begin(), opsAt.end(), [](int n) { return n == 1; }));
    QVERIFY(axisB.size() > opsAt.size());
    QVERIFY(compare->plot()->xAxis->label().startsWith(QStringLiteral("step of the model as loaded")));
    for (int graph : { 0, 2 }) // A's and B's live curves
        QCOMPARE((compare->plot()->graph(graph)->data()->constEnd() - 1)->key, double(m_skip->problem.steps));
    // The sides exchanged: every decrease carries the same minus sign, steps and time included.
    compare->setConfiguration(ComparisonView::A, { QStringLiteral("swap") }, QStringLiteral("best-fit"), QStringLiteral("h200"));
    compare->setConfiguration(ComparisonView::B, {}, QStringLiteral("greedy-by-size"), QStringLiteral("h200"));
    QTRY_VERIFY_WITH_TIMEOUT(!compare->isBusy() && compare->outcome(ComparisonView::A)
            && compare->outcome(ComparisonView::A)->applied == std::vector<std::string> { "swap" }
            && compare->outcome(ComparisonView::B) && compare->outcome(ComparisonView::B)->applied.empty(),
        kTimeout);
    for (auto row : { ComparisonView::Swapped, ComparisonView::Steps })
        QVERIFY2(compare->cellText(row, 2).startsWith(QStringLiteral("−")), qPrintable(compare->cellText(row, 2)));
    // Its own Close button closes it, with or without a window manager.
    auto* close = compare->findChild<QPushButton*>(QStringLiteral("closeComparison"));
    QVERIFY(close);
    QVERIFY(compare->isVisible());
    close->click();
    QVERIFY(!compare->isVisible());
}

void TestStrategyPanel::screenshotsIncludeStrategies()
{
    QTemporaryDir dir;
    QString error;
    QVERIFY2(m_window->renderScreenshots(dir.filePath(QStringLiteral("shots")), &error), qPrintable(error));
    for (const char* name : { "strategies.png", "compare.png", "lifetime-bars-strategies.png", "arena-layout-strategies.png",
             "memory-curve-strategies.png" }) {
        const QImage image(dir.filePath(QStringLiteral("shots/") + QString::fromLatin1(name)));
        QVERIFY2(!image.isNull() && image.width() > 300, name);
    }
    // The strategies were switched back off: the window shows the model as loaded again.
    QVERIFY(!m_window->document()->strategyFacts());
    QVERIFY(m_window->strategyPanel()->checkedStrategies().isEmpty());
    QCOMPARE(m_window->document()->workload()->problem.buffers.size(), m_skip->problem.buffers.size());
}

// The Frontier tab on a captured training step: computed in the background, one blue point per
// frontier plan and grey heuristics; a click on a point applies it through the strategy panel (the
// plan on display is the point's, ringed); the budget then moves along the frontier.
void TestStrategyPanel::frontierPointsApplyAndTheBudgetFollows()
{
    PlanDocument* doc = m_window->document();
    StrategyPanel* panel = m_window->strategyPanel();
    FrontierView* view = m_window->frontierView();
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFile(QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/data/captured_mlp.json"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1 && doc->workload()->source.find("captured_mlp") != std::string::npos, kTimeout);
    QVERIFY(!view->frontier());
    auto* tabs = qobject_cast<QTabWidget*>(view->parentWidget()->parentWidget());
    QVERIFY(tabs);
    tabs->setCurrentWidget(view);
    QSignalSpy ready(view, &FrontierView::frontierReady);
    view->compute(); // cancelled at once: no longer busy, and its result is dropped when it comes
    view->cancel();
    QVERIFY(!view->isBusy());
    QCOMPARE(view->statusText(), QStringLiteral("Cancelled."));
    QTest::qWait(500);
    QVERIFY(!view->frontier());
    QCOMPARE(ready.count(), 0);
    view->compute();
    QVERIFY(view->isBusy());
    QTRY_VERIFY_WITH_TIMEOUT(!view->isBusy() && ready.count() == 1, kTimeout);
    const auto frontier = view->frontier();
    QVERIFY2(frontier && frontier->points.size() >= 2, qPrintable(view->statusText()));
    QVERIFY(!frontier->heuristics.empty());
    QCOMPARE(panel->frontier(), frontier);
    QCOMPARE(view->plot()->graph(1)->dataCount(), static_cast<int>(frontier->points.size()));
    QCOMPARE(view->plot()->graph(0)->dataCount(), static_cast<int>(frontier->heuristics.size()));
    for (std::size_t i = 1; i < frontier->points.size(); ++i) // peak ascending, extra time descending
        QVERIFY(frontier->points[i - 1].peakBytes < frontier->points[i].peakBytes
            && frontier->points[i - 1].extraSeconds >= frontier->points[i].extraSeconds);

    // A click on the smallest point applies it: the window plans the point's graph to its arena.
    view->plot()->replot();
    QTest::mouseClick(view->plot(), Qt::LeftButton, {}, view->pointPosition(0).toPoint());
    QVERIFY(panel->frontierPoint());
    QCOMPARE(panel->frontierPoint()->label, frontier->points[0].label);
    QVERIFY(QTest::qWaitFor([&] {
        return !panel->controller()->isBusy() && !m_window->controller()->isBusy() && panel->outcome() && panel->outcome()->point
            && doc->hasPlan() && doc->plan()->arenaSize == frontier->points[0].peakBytes;
    }, kTimeout));
    QVERIFY(core::validatePlan(doc->workload()->problem, *doc->plan()).ok());
    QVERIFY2(panel->statusText().contains(QStringLiteral("frontier point")), qPrintable(panel->statusText()));
    if (const QString dir = qEnvironmentVariable("MEMPLAN_VIEWS_DIR"); !dir.isEmpty()) { // for looking at it
        view->plot()->replot();
        QVERIFY(view->grab().save(dir + QStringLiteral("/frontier.png")));
    }

    // The budget picks along the frontier: at the smallest peak that point; under it none fits.
    panel->setBudget(frontier->points[0].peakBytes);
    panel->setBudgetEnabled(true);
    QVERIFY(QTest::qWaitFor([&] {
        return !panel->controller()->isBusy() && panel->outcome() && panel->outcome()->budgetMode && panel->outcome()->point;
    }, kTimeout));
    QVERIFY2(panel->statusText().contains(QStringLiteral("met on the frontier")), qPrintable(panel->statusText()));
    QCOMPARE(panel->outcome()->point->label, core::pickForBudget(*frontier, frontier->points[0].peakBytes)->label);
    panel->setBudget(frontier->points[0].peakBytes - 1);
    QVERIFY(QTest::qWaitFor([&] {
        return !panel->controller()->isBusy() && panel->statusText().contains(QStringLiteral("no frontier point fits"));
    }, kTimeout));
    panel->setBudgetEnabled(false);

    // Another model drops the frontier.
    planned.clear();
    m_window->openFile(QStringLiteral("example:unet"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1 && doc->workload()->source == "example:unet", kTimeout);
    QVERIFY(!view->frontier());
    QVERIFY(!panel->frontier());
    QVERIFY(!panel->frontierPoint());
}

QTEST_MAIN(TestStrategyPanel)
#include "tst_strategypanel.moc"
