// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Running the plan from MemPlan Studio, offscreen, on example:cnn: the measured curves overlaid on
// the memory curve, one latency entry per op, the summary's predicted vs measured numbers, cancel,
// and stale measurements dropped when the plan or the model changes.
#include "qcp.h" // first: see qcp.h

#include "cpukernels.h"
#include "exec/executor.h"

#include "cudadevice.h"
#include "inputsizesdialog.h"
#include "latencylane.h"
#include "mainwindow.h"
#include "memorycurveview.h"
#include "messagebanner.h"
#include "plandocument.h"
#include "runcontroller.h"
#include "runmeasurement.h"
#include "strategypanel.h"
#include "summarypanel.h"
#include "tolerancespinbox.h"

#include "cost/opcost.h"
#include "exec/tensordata.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "util/format.h"

#include <QAction>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QLineEdit>
#include <QPushButton>
#include <QDir>
#include <QElapsedTimer>
#include <QImage>
#include <QSet>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

namespace {
constexpr int kTimeout = 120000; // generous: ctest may run under load

int distinctColors(const QImage& image)
{
    QSet<QRgb> colors;
    for (int y = 0; y < image.height(); y += 2)
        for (int x = 0; x < image.width(); x += 2)
            colors.insert(image.pixel(x, y));
    return colors.size();
}

// Pixels of `color` (exactly) in the image: does a series of that color show?
int pixelsOf(const QImage& image, QRgb color)
{
    int n = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            n += (image.pixel(x, y) & 0xFFFFFF) == (color & 0xFFFFFF);
    return n;
}
} // namespace

class TestRunStudio : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanupTestCase();
    void deviceChoice();
    void cudaRunWithoutDeviceFails();
    void runOverlaysMeasurement();
    void cudaMeasurementShown();
    void rooflineOnTheCostProfile();
    void poolRunOnCurveAndLane();
    void screenshotsAfterRun();
    void cancelStopsTheRun();
    void replanClearsMeasurement();
    void newModelClearsMeasurement();
    void dataDependentRunShowsBounds();
    void allocationProblemCannotRun();
    void inputFilesSizeAndFeedTheRun();

private:
    bool openAndWait(const QString& spec);
    bool runAndWait();
    std::unique_ptr<MainWindow> m_window;
};

void TestRunStudio::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("MemPlanTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_run_studio"));
    m_window = std::make_unique<MainWindow>();
    m_window->setPlannerName(QStringLiteral("greedy-by-size"));
    m_window->show();
    QVERIFY(openAndWait(QStringLiteral("example:cnn")));
}

void TestRunStudio::cleanupTestCase() { m_window.reset(); }

bool TestRunStudio::openAndWait(const QString& spec)
{
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFile(spec);
    QElapsedTimer clock;
    clock.start();
    while (!(planned.count() >= 1 && m_window->currentSpec() == spec) && clock.elapsed() < kTimeout)
        QTest::qWait(20);
    const auto* doc = m_window->document();
    return doc->plan() && core::validatePlan(doc->workload()->problem, *doc->plan()).ok();
}

bool TestRunStudio::runAndWait()
{
    QSignalSpy finished(m_window.get(), &MainWindow::runFinished);
    if (!m_window->runAction()->isEnabled())
        return false;
    m_window->runAction()->trigger();
    return finished.wait(kTimeout) || finished.count() > 0;
}

void TestRunStudio::deviceChoice()
{
    QComboBox* combo = m_window->deviceCombo();
    QCOMPARE(combo->currentText(), QStringLiteral("cpu"));
    const int cuda = combo->findText(QStringLiteral("cuda"));
    QVERIFY(cuda >= 0);
    auto* model = qobject_cast<QStandardItemModel*>(combo->model());
    QVERIFY(model);
    const CudaDeviceStatus& status = cudaDeviceStatus();
    const QString tip = combo->itemData(cuda, Qt::ToolTipRole).toString();
    QCOMPARE(model->item(cuda)->isEnabled(), status.available);
    // The GPU vs CPU tolerance: the CLI's default, live only while cuda is the device.
    QCOMPARE(m_window->toleranceSpin()->value(), core::kDefaultGpuTolerance);
    QCOMPARE(m_window->toleranceSpin()->text(), QStringLiteral("1e-3"));
    QVERIFY(!m_window->toleranceSpin()->isEnabled());
    if (status.available) {
        combo->setCurrentIndex(cuda);
        QVERIFY(m_window->toleranceSpin()->isEnabled());
        combo->setCurrentIndex(combo->findText(QStringLiteral("cpu")));
    }
    if (status.available) {
        QVERIFY(!status.description.isEmpty());
        QVERIFY2(tip.contains(status.description), qPrintable(tip));
    } else {
        // Greyed, and the tooltip says why: no executor in this build, or the driver's reason.
        QVERIFY(!status.reason.isEmpty());
        QCOMPARE(tip, QStringLiteral("no CUDA device: ") + status.reason);
#ifndef MEMPLAN_HAVE_CUDA
        QCOMPARE(status.reason, QStringLiteral("this build has no CUDA executor"));
#endif
    }
}

void TestRunStudio::cudaRunWithoutDeviceFails()
{
    if (cudaDeviceStatus().available)
        QSKIP("a CUDA device is present: the failure path cannot be reached");
    auto loaded = core::loadWorkload("example:cnn", {});
    QVERIFY2(loaded, loaded ? "" : loaded.error().message.c_str());
    const auto workload = std::make_shared<const core::Workload>(std::move(*loaded));
    auto plan = core::runPlanner(*core::plannerByName("greedy-by-size"), workload->problem);
    QVERIFY(plan);
    QVERIFY(core::validatePlan(workload->problem, *plan).ok());
    RunController controller;
    QSignalSpy failed(&controller, &RunController::failed);
    QSignalSpy finished(&controller, &RunController::finished);
    controller.start(workload, *plan, 1, RunDevice::Cuda);
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kTimeout);
    QCOMPARE(finished.count(), 0);
    const QString message = failed.at(0).at(0).toString();
    QVERIFY2(message.contains(QStringLiteral("no CUDA")), qPrintable(message));
    QVERIFY2(message.contains(cudaDeviceStatus().reason), qPrintable(message));
    QVERIFY(!controller.isRunning());
}

void TestRunStudio::runOverlaysMeasurement()
{
    // The own kernels' im2col columns: kernel scratch larger than the arena (oneDNN's is smaller).
    const CpuKernelsInScope ownKernels(core::CpuKernels::Own);
    QVERIFY(!m_window->memoryCurveView()->showsMeasured());
    QCOMPARE(m_window->latencyLane()->entryCount(), 0);
    QVERIFY(!m_window->latencyLane()->isVisible()); // no room taken before a run
    QVERIFY(!m_window->exportLatencyAction()->isEnabled());
    m_window->repeatSpin()->setValue(2);
    QVERIFY(runAndWait());
    QVERIFY(m_window->latencyLane()->isVisible());
    QVERIFY(m_window->exportLatencyAction()->isEnabled());
    const PlanDocument* doc = m_window->document();
    const RunMeasurement* run = doc->measurement();
    QVERIFY(run);
    QCOMPARE(run->device, std::string("cpu"));
    QVERIFY2(run->arenaMatches && run->perTensorMatches, run->mismatch.c_str());
    QCOMPARE(run->repeat, 2);

    // The overlay: the arena run's measured live bytes are the predicted curve; the allocator curve is its own series.
    QVERIFY(m_window->memoryCurveView()->showsMeasured());
    QVERIFY(m_window->memoryCurveView()->showsMeasuredAllocator());
    const auto& measured = doc->measuredCurve();
    QCOMPARE(measured.size(), std::size_t(doc->steps()));
    QCOMPARE(*std::max_element(measured.begin(), measured.end()), core::lowerBound(doc->workload()->problem));
    QVERIFY(measured == doc->liveCurve());
    QCOMPARE(doc->measuredAllocatorCurve().size(), std::size_t(doc->steps()));
    QCustomPlot* plot = m_window->memoryCurveView()->plot();
    QStringList legend;
    for (int i = 0; i < plot->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i)))
            legend << item->plottable()->name();
    QVERIFY2(legend.filter(QStringLiteral("measured (cpu, arena)")).size() == 1, qPrintable(legend.join(QStringLiteral(" | "))));
    QVERIFY2(legend.filter(QStringLiteral("malloc (cpu, per tensor)")).size() == 1, qPrintable(legend.join(QStringLiteral(" | "))));

    // One latency entry per op, on the shared time axis.
    QCOMPARE(m_window->latencyLane()->entryCount(), doc->steps());
    QCOMPARE(static_cast<int>(run->arena.ops.size()), doc->steps());
    QVERIFY(m_window->latencyLane()->maxMs() > 0);
    QVERIFY(m_window->latencyLane()->stepToolTip(0).contains(QString::fromStdString(run->arena.ops[0].name)));
    QVERIFY(m_window->latencyLane()->stepToolTip(doc->steps()).isEmpty());

    const QString summary = m_window->summaryPanel()->summaryText();
    QVERIFY2(summary.contains(QStringLiteral("Measured on cpu")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("Latency p50 / p99")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("Outputs vs no-reuse run: bit-identical")), qPrintable(summary));
    const QString peak = QString::fromStdString(core::formatBytes(core::lowerBound(doc->workload()->problem)));
    QVERIFY2(summary.contains(QStringLiteral("Predicted peak: ") + peak), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("Measured peak: ") + peak), qPrintable(summary));
    // The Convs' im2col columns: kernel scratch larger than the arena, which the plan does not hold.
    QVERIFY2(summary.contains(QStringLiteral("Kernel scratch: ") + QString::fromStdString(core::formatBytes(run->arena.scratchBytes))
                 + QStringLiteral(" outside the plan; Workspaces plans it")),
        qPrintable(summary));
    // ... and on the memory curve, as a line at arena + scratch: in the y range, or named as above it
    // when it would squash the curves.
    MemoryCurveView* curveView = m_window->memoryCurveView();
    QVERIFY(curveView->showsKernelScratch());
    const bool inRange = curveView->yMax() * curveView->unit().divisor >= double(doc->plan()->arenaSize + run->arena.scratchBytes);
    QVERIFY2(inRange != curveView->legendNames().join(QLatin1Char('|')).contains(QStringLiteral("above this range")),
        qPrintable(curveView->legendNames().join(QLatin1Char('|'))));
    // The run's entries make the legend longer; at a narrow width it wraps, and the view asks for the
    // room to keep a readable curve under it rather than squeezing the plot to a strip.
    const QSize before = curveView->size();
    curveView->resize(500, 100);
    QCoreApplication::processEvents();
    const int minimum = curveView->minimumSizeHint().height();
    QVERIFY2(minimum > 160, qPrintable(QString::number(minimum))); // a wrapped legend: more than the one-row minimum
    curveView->resize(500, minimum);
    curveView->plot()->replot(QCustomPlot::rpImmediateRefresh);
    QVERIFY2(curveView->plot()->axisRect()->height() >= 70, qPrintable(QString::number(curveView->plot()->axisRect()->height())));
    curveView->resize(before);

    // A CPU run is not compared with the GPU cost profile's roofline.
    QVERIFY(run->rooflineStepMs.empty());
    QCOMPARE(m_window->latencyLane()->rooflineMs(0), 0.0);
    QVERIFY2(!summary.contains(QStringLiteral("Roofline")), qPrintable(summary));
    QVERIFY2(!summary.contains(QStringLiteral("Upper bounds")), qPrintable(summary)); // example:cnn has none
}

// A GPU run's measurement (its fields as runCudaJob fills them; built here from the CPU run, since a
// device cannot be assumed): the same views show it, labelled with cuda, and the summary adds the pool.
void TestRunStudio::cudaMeasurementShown()
{
    PlanDocument* doc = m_window->document();
    if (!doc->measurement())
        QVERIFY(runAndWait());
    const auto cpu = doc->sharedMeasurement();
    auto gpuRun = std::make_shared<RunMeasurement>(*cpu);
    gpuRun->device = "cuda";
    gpuRun->deviceName = "Test GPU, 1 GiB";
    gpuRun->pool = gpuRun->perTensor;
    gpuRun->poolMatches = false;
    gpuRun->mismatch = "pool run: output y differs";
    gpuRun->tolerance = 1e-4;
    gpuRun->cpuCheck = core::ToleranceCheck { 3.1e-6, {} };
    gpuRun->arena.opsHost = 1;
    gpuRun->arena.opsHostWaited = 1;
    gpuRun->arena.ops.at(0).host = true;
    gpuRun->arena.ops.at(0).hostWaited = true;
    gpuRun->arena.opsPrecomputed = 1;
    gpuRun->arena.ops.at(1).precomputed = true;
    doc->setMeasurement(gpuRun);
    QCOMPARE(doc->measurement(), gpuRun.get());
    const QString summary = m_window->summaryPanel()->summaryText();
    QVERIFY2(summary.contains(QStringLiteral("Measured on cuda")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("Per-tensor cudaMalloc")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("Pool in use")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("Pool p50 / p99")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("DIFFER: pool run")), qPrintable(summary)); // a pool mismatch is not hidden
    QVERIFY2(summary.contains(QStringLiteral("cuda (Test GPU, 1 GiB)")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("GPU vs CPU: max relative error 3.1e-6 within 1e-4")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("; 1 on the host (1 waited for the device), 1 precomputed")), qPrintable(summary));
    QVERIFY(m_window->latencyLane()->stepToolTip(0).contains(QStringLiteral("ran on the host")));
    QVERIFY(m_window->latencyLane()->stepToolTip(0).contains(QStringLiteral("both streams synchronised")));
    QVERIFY(m_window->latencyLane()->stepToolTip(1).contains(QStringLiteral("precomputed")));
    QVERIFY(!m_window->latencyLane()->stepToolTip(2).contains(QStringLiteral("host")));
    QCOMPARE(m_window->latencyLane()->entryCount(), doc->steps());
    QStringList legend;
    auto* plot = m_window->memoryCurveView()->plot();
    for (int i = 0; i < plot->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i)))
            legend << item->plottable()->name();
    QVERIFY2(legend.filter(QStringLiteral("measured (cuda, arena)")).size() == 1, qPrintable(legend.join(QStringLiteral(" | "))));
    QVERIFY2(legend.filter(QStringLiteral("cudaMalloc (cuda, per tensor)")).size() == 1, qPrintable(legend.join(QStringLiteral(" | "))));
    // Off by more than the tolerance: the summary names the first output that is.
    gpuRun = std::make_shared<RunMeasurement>(*gpuRun);
    gpuRun->cpuCheck = core::ToleranceCheck { 0.02, "output 'y' element 7: expected 1.000000, got 1.040000" };
    doc->setMeasurement(gpuRun);
    const QString off = m_window->summaryPanel()->summaryText();
    QVERIFY2(off.contains(QStringLiteral("GPU vs CPU: OFF by more than 1e-4 (max relative error 0.02): output 'y' element 7")),
        qPrintable(off));
    doc->setMeasurement(cpu);
    QVERIFY(!m_window->summaryPanel()->summaryText().contains(QStringLiteral("Pool in use")));
    QVERIFY(!m_window->summaryPanel()->summaryText().contains(QStringLiteral("GPU vs CPU"))); // a cpu run is not compared
}

// A cuda measurement with a pool run (synthetic: the CPU run's numbers, the pool's made different so
// the series cannot be mistaken for another): a third measured series on the memory curve, and the
// latency lane switches between the arena, per-tensor and pool runs.
// The latency prediction a GPU run carries (the window passes the Strategies dock's profile on
// cuda): each op's roofline bound, summed, drawn as orange ticks in the latency lane, in its tooltip
// and in the summary.
void TestRunStudio::rooflineOnTheCostProfile()
{
    PlanDocument* doc = m_window->document();
    if (!doc->measurement())
        QVERIFY(runAndWait());
    const auto previous = doc->sharedMeasurement();
    const auto profile = *core::findDevice("rtx4090");
    RunController controller;
    QSignalSpy finished(&controller, &RunController::finished);
    controller.start(doc->sharedWorkload(), *doc->plan(), 1, RunDevice::Cpu, core::kDefaultGpuTolerance, profile);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeout);
    auto run = std::make_shared<RunMeasurement>(*finished.at(0).at(0).value<std::shared_ptr<const RunMeasurement>>());
    QCOMPARE(run->costProfile, std::string("rtx4090"));
    QCOMPARE(run->rooflineStepMs.size(), std::size_t(doc->steps()));
    const auto& w = *doc->workload();
    const double expected = core::scheduleCost(*w.graph, w.schedule, profile).seconds * 1e3;
    QVERIFY(expected > 0);
    QVERIFY(std::abs(run->rooflineMs - expected) <= 1e-9 * expected);
    const auto first = std::size_t(w.schedule.order.at(0));
    QCOMPARE(run->rooflineStepMs[0], core::opSeconds(*w.graph, w.graph->ops[first], profile) * 1e3);

    run->device = "cuda";
    run->pool = run->perTensor;
    doc->setMeasurement(run);
    auto* lane = m_window->latencyLane();
    QCOMPARE(lane->rooflineMs(0), run->rooflineStepMs[0]);
    QVERIFY2(lane->stepToolTip(0).contains(QStringLiteral("roofline bound on rtx4090")), qPrintable(lane->stepToolTip(0)));
    const QString summary = m_window->summaryPanel()->summaryText();
    QVERIFY2(summary.contains(QStringLiteral("Roofline (rtx4090): ")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral(" p50 at ")), qPrintable(summary));
    const QImage image = lane->grab().toImage();
    QVERIFY2(pixelsOf(image, 0xF28E2B) > 0, "the roofline ticks are drawn");
    doc->setMeasurement(previous); // the later tests expect the window's own CPU run
}

void TestRunStudio::poolRunOnCurveAndLane()
{
    PlanDocument* doc = m_window->document();
    if (!doc->measurement())
        QVERIFY(runAndWait());
    const auto cpu = doc->sharedMeasurement();
    MemoryCurveView* curve = m_window->memoryCurveView();
    LatencyLane* lane = m_window->latencyLane();
    QVERIFY(!curve->showsMeasuredPool());
    QCOMPARE(lane->shownRun(), LatencyLane::Run::Arena);

    auto gpuRun = std::make_shared<RunMeasurement>(*cpu);
    gpuRun->device = "cuda";
    gpuRun->deviceName = "Test GPU, 1 GiB";
    core::Measurement pool = cpu->perTensor;
    // The pool rounds every block up to 2 MiB: a peak above the arena's, as on a real device.
    for (auto& bytes : pool.stepBytes)
        bytes = bytes + (core::Bytes(2) << 20);
    pool.stepPeakBytes = *std::max_element(pool.stepBytes.begin(), pool.stepBytes.end());
    for (std::size_t i = 0; i < pool.ops.size(); ++i)
        pool.ops[i].medianMs = 5.0 + static_cast<double>(i);
    gpuRun->pool = pool;
    gpuRun->poolMatches = true;
    doc->setMeasurement(gpuRun);

    QVERIFY(curve->showsMeasuredPool());
    QCPGraph* graph = curve->measuredPoolGraph();
    QCOMPARE(graph->dataCount(), static_cast<int>(pool.stepBytes.size()) + 1); // one per step, one closing the last
    double top = 0;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
        top = std::max(top, it->value);
    QCOMPARE(qRound64(top * curve->unit().divisor), static_cast<qint64>(pool.stepPeakBytes));
    QVERIFY(curve->plot()->yAxis->range().upper * curve->unit().divisor > static_cast<double>(pool.stepPeakBytes));
    QStringList legend;
    for (int i = 0; i < curve->plot()->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(curve->plot()->legend->item(i)))
            legend << item->plottable()->name();
    QVERIFY2(legend.filter(QStringLiteral("measured: stream-ordered pool")).size() == 1, qPrintable(legend.join(QStringLiteral(" | "))));
    // Its own colour: none of the other series share the pool's pen.
    for (int i = 0; i < curve->plot()->graphCount(); ++i)
        if (curve->plot()->graph(i) != graph)
            QVERIFY(curve->plot()->graph(i)->pen().color() != graph->pen().color());

    // The lane: arena by default, then the per-tensor and the pool run's medians as the bars.
    QCOMPARE(lane->shownRun(), LatencyLane::Run::Arena);
    QCOMPARE(lane->barMs(0), cpu->arena.ops[0].medianMs);
    lane->setRun(LatencyLane::Run::PerTensor);
    QCOMPARE(lane->shownRun(), LatencyLane::Run::PerTensor);
    QCOMPARE(lane->barMs(0), cpu->perTensor.ops[0].medianMs);
    lane->setRun(LatencyLane::Run::Pool);
    QCOMPARE(lane->shownRun(), LatencyLane::Run::Pool);
    QCOMPARE(lane->entryCount(), static_cast<int>(pool.ops.size()));
    QCOMPARE(lane->barMs(1), 6.0);
    QVERIFY(lane->maxMs() >= 5.0 + static_cast<double>(pool.ops.size() - 1));
    QVERIFY2(lane->stepToolTip(1).contains(QStringLiteral("pool run: median 6.00 ms")), qPrintable(lane->stepToolTip(1)));

    // Screenshots of both views with the pool series, where MEMPLAN_RUN_SCREENSHOTS points.
    if (qEnvironmentVariableIsSet("MEMPLAN_RUN_SCREENSHOTS")) {
        const QDir dir(qEnvironmentVariable("MEMPLAN_RUN_SCREENSHOTS"));
        QString error;
        QVERIFY2(curve->exportImage(dir.filePath(QStringLiteral("memory-curve-pool.png")), &error), qPrintable(error));
        QVERIFY2(lane->exportImage(dir.filePath(QStringLiteral("latency-lane-pool.png")), &error), qPrintable(error));
    }

    // A CPU measurement has no pool: the series goes, and the lane draws the arena while pool stays chosen.
    doc->setMeasurement(cpu);
    QVERIFY(!curve->showsMeasuredPool());
    QCOMPARE(lane->chosenRun(), LatencyLane::Run::Pool);
    QCOMPARE(lane->shownRun(), LatencyLane::Run::Arena);
    QCOMPARE(lane->barMs(0), cpu->arena.ops[0].medianMs);
    lane->setRun(LatencyLane::Run::Arena);
}

// The views with a measurement, written where MEMPLAN_RUN_SCREENSHOTS points (a temporary folder otherwise).
void TestRunStudio::screenshotsAfterRun()
{
    if (!m_window->document()->measurement())
        QVERIFY(runAndWait());
    QTemporaryDir temp;
    const QString dir = qEnvironmentVariableIsSet("MEMPLAN_RUN_SCREENSHOTS") ? qEnvironmentVariable("MEMPLAN_RUN_SCREENSHOTS")
                                                                            : temp.path();
    QString error;
    QVERIFY2(m_window->renderScreenshots(dir, &error), qPrintable(error));
    const QImage curve(QDir(dir).filePath(QStringLiteral("memory-curve.png")));
    const QImage lane(QDir(dir).filePath(QStringLiteral("latency-lane.png")));
    QVERIFY(!curve.isNull() && !lane.isNull());
    QVERIFY(pixelsOf(curve, 0x7B1FA2) > 50); // the per-tensor allocator series
    QVERIFY(pixelsOf(lane, 0x4E79A7) > 50);  // latency bars of real kernels
    QVERIFY(distinctColors(lane) > 5);
}

void TestRunStudio::cancelStopsTheRun()
{
    if (!m_window->document()->measurement()) // the strategy screenshots re-plan, which drops it
        QVERIFY(runAndWait());
    const auto before = m_window->document()->sharedMeasurement();
    RunController* controller = m_window->runController();
    QSignalSpy progress(controller, &RunController::progress);
    QSignalSpy cancelled(controller, &RunController::cancelled);
    QSignalSpy finished(m_window.get(), &MainWindow::runFinished);
    m_window->repeatSpin()->setValue(1000); // long enough to be cancelled midway
    m_window->runAction()->trigger();
    QVERIFY(controller->isRunning());
    QVERIFY(!m_window->runAction()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(progress.count() > 0, kTimeout);
    const int total = progress.last().at(1).toInt();
    QCOMPARE(total, m_window->document()->steps() * (1 + 2 * 1000));
    m_window->cancelRun();
    QCOMPARE(cancelled.count(), 1);
    QVERIFY(!controller->isRunning());
    QVERIFY(m_window->runAction()->isEnabled());
    controller->waitForIdle(); // the worker stops at its next op
    QCoreApplication::processEvents();
    QTest::qWait(50);
    QCOMPARE(finished.count(), 0);
    QCOMPARE(m_window->document()->sharedMeasurement(), before); // the earlier measurement stays
    m_window->repeatSpin()->setValue(2);
}

void TestRunStudio::replanClearsMeasurement()
{
    if (!m_window->document()->measurement())
        QVERIFY(runAndWait());
    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->setPlannerName(QStringLiteral("first-fit"));
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    const PlanDocument* doc = m_window->document();
    QVERIFY(!doc->measurement());
    QVERIFY(doc->measuredCurve().empty() && doc->measuredAllocatorCurve().empty());
    QVERIFY(!m_window->memoryCurveView()->showsMeasured());
    QVERIFY(!m_window->memoryCurveView()->showsMeasuredAllocator());
    QCOMPARE(m_window->latencyLane()->entryCount(), 0);
    QVERIFY(!m_window->latencyLane()->isVisible());
    QVERIFY(!m_window->exportLatencyAction()->isEnabled());
    QVERIFY(!m_window->summaryPanel()->summaryText().contains(QStringLiteral("Measured on")));

    // A run started for the old plan and overtaken by a new plan never reaches the document.
    m_window->repeatSpin()->setValue(1000);
    m_window->runAction()->trigger();
    QVERIFY(m_window->runController()->isRunning());
    QSignalSpy replanned(m_window.get(), &MainWindow::planDisplayed);
    m_window->setPlannerName(QStringLiteral("greedy-by-size"));
    QTRY_VERIFY_WITH_TIMEOUT(replanned.count() >= 1, kTimeout);
    QVERIFY(!m_window->runController()->isRunning()); // the new plan cancelled it
    m_window->runController()->waitForIdle();
    QCoreApplication::processEvents();
    QTest::qWait(50);
    QVERIFY(!doc->measurement());
    m_window->repeatSpin()->setValue(2);
}

void TestRunStudio::newModelClearsMeasurement()
{
    QVERIFY(runAndWait());
    QVERIFY(m_window->document()->measurement());
    QVERIFY(openAndWait(QStringLiteral("example:transformer")));
    QVERIFY(!m_window->document()->measurement());
    QVERIFY(!m_window->memoryCurveView()->showsMeasured());
    QCOMPARE(m_window->latencyLane()->entryCount(), 0);
    QVERIFY(runAndWait());
    QCOMPARE(m_window->latencyLane()->entryCount(), m_window->document()->steps());
}

// A model whose sizes depend on its data: the run fills part of the bounds, and the summary says how much.
void TestRunStudio::dataDependentRunShowsBounds()
{
    const QString model = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/models/tricky/nonzero_gather.onnx");
    if (!QFile::exists(model))
        QSKIP("tests/models/tricky/nonzero_gather.onnx is missing: run scripts/make_models.sh to make the test models");
    QVERIFY(openAndWait(model));
    QVERIFY(runAndWait());
    const RunMeasurement* run = m_window->document()->measurement();
    QVERIFY(run);
    QCOMPARE(run->arena.opsSynthetic, 0);
    QCOMPARE(run->arena.boundedTensors, 4);
    const QString summary = m_window->summaryPanel()->summaryText();
    const QString filled = QStringLiteral("Upper bounds filled: %1 of 480 B")
                               .arg(QString::fromStdString(core::formatBytes(run->arena.boundedUsedBytes)));
    QVERIFY2(summary.contains(filled), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("Run-time shapes: 4 ops")), qPrintable(summary));
}

void TestRunStudio::allocationProblemCannotRun()
{
    QVERIFY(openAndWait(QStringLiteral("example:hotel")));
    QVERIFY(!m_window->runAction()->isEnabled());
    QVERIFY(!m_window->document()->measurement());
}


// A window function whose length is an input's value (test_hannwindow_expanded) does not load
// without it: the banner offers File > Input Sizes, whose dialog takes a file for the input (a
// missing file keeps OK off); with it the model loads, its window sized by the file's value, and
// the run is real and gives the stored output. The files' contents feed the run: an optional
// float input (test_optional_get_element, given as --input gives it) comes back out unchanged.
void TestRunStudio::inputFilesSizeAndFeedTheRun()
{
    const QString node = QStringLiteral("/usr/share/libonnx-testdata/data/node/");
    if (!QDir(node).exists())
        QSKIP("libonnx-testdata is not installed");
    const QString window = node + QStringLiteral("test_hannwindow_expanded/");
    QSignalSpy failed(m_window.get(), &MainWindow::errorOccurred);
    m_window->openFile(window + QStringLiteral("model.onnx"));
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kTimeout);
    QCOMPARE(m_window->messageBanner()->remedy(), m_window->inputSizesAction());
    QCOMPARE(m_window->openInputs().names, (std::vector<std::string> { "x" }));

    InputSizesDialog dialog(m_window->openInputs(), m_window->shapeBindings(), m_window->inputFiles());
    auto* ok = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    QVERIFY(dialog.fileField(QStringLiteral("x")));
    QVERIFY(ok->isEnabled()); // no file: random contents
    dialog.fileField(QStringLiteral("x"))->setText(window + QStringLiteral("no_such_file.pb"));
    QVERIFY2(dialog.problem().contains(QStringLiteral("The file for input x does not exist")), qPrintable(dialog.problem()));
    QVERIFY(!ok->isEnabled());
    const QString input = window + QStringLiteral("test_data_set_0/input_0.pb");
    dialog.fileField(QStringLiteral("x"))->setText(input);
    QVERIFY(ok->isEnabled());
    QCOMPARE(dialog.files().size(), std::size_t(1));

    QSignalSpy planned(m_window.get(), &MainWindow::planDisplayed);
    m_window->openFileWithSizes(window + QStringLiteral("model.onnx"), dialog.bindings(), dialog.files());
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QCOMPARE(m_window->inputFiles().size(), std::size_t(1));
    QVERIFY(m_window->document()->workload()->givenInputs.count("x"));
    QVERIFY(runAndWait());
    const auto* run = m_window->document()->measurement();
    QVERIFY(run);
    QCOMPARE(run->arena.opsSynthetic, 0);
    QVERIFY(run->arenaMatches);
    const auto stored = core::readTensorFile((window + QStringLiteral("test_data_set_0/output_0.pb")).toStdString());
    QVERIFY(stored);
    QCOMPARE(run->arena.outputs.size(), std::size_t(1));
    QCOMPARE(run->arena.outputs[0].shape, stored->second.shape);
    QCOMPARE(run->arena.outputs[0].data.size(), stored->second.data.size());
    for (std::size_t i = 0; i < stored->second.data.size() / sizeof(float); ++i) {
        float expected = 0, got = 0;
        std::memcpy(&expected, stored->second.data.data() + i * sizeof(float), sizeof(float));
        std::memcpy(&got, run->arena.outputs[0].data.data() + i * sizeof(float), sizeof(float));
        QVERIFY2(std::fabs(expected - got) <= 1e-4f, qPrintable(QStringLiteral("element %1").arg(i)));
    }

    const QString unwrap = node + QStringLiteral("test_optional_get_element/");
    // A model that loads as it is: its inputs may still be given files.
    QVERIFY(openAndWait(unwrap + QStringLiteral("model.onnx")));
    QVERIFY(m_window->inputSizesAction()->isEnabled());
    QCOMPARE(m_window->openInputs().names, (std::vector<std::string> { "optional_input" }));
    QVERIFY(m_window->openInputs().symbols.empty() && m_window->openInputs().inputs.empty());
    planned.clear();
    m_window->openFileWithSizes(unwrap + QStringLiteral("model.onnx"), {},
        { { "optional_input", (unwrap + QStringLiteral("test_data_set_0/input_0.pb")).toStdString() } });
    QTRY_VERIFY_WITH_TIMEOUT(planned.count() >= 1, kTimeout);
    QVERIFY(runAndWait());
    run = m_window->document()->measurement();
    QVERIFY(run);
    QCOMPARE(run->arena.opsSynthetic, 0);
    const auto given = core::readOptionalFile((unwrap + QStringLiteral("test_data_set_0/input_0.pb")).toStdString());
    QVERIFY(given);
    QVERIFY(run->arena.outputs[0].data == given->second.data);

    QVERIFY(openAndWait(QStringLiteral("example:cnn"))); // as the other tests expect
}

QTEST_MAIN(TestRunStudio)
#include "tst_run_studio.moc"
