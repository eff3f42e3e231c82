// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The four Studio views (lifetime bars, arena layout, coloring, memory curve) over one PlanDocument:
// axis mappings, the display coloring, palette, rendering, export and the shared interactions.
#include "qcp.h" // first: see qcp.h

#include "arenalayoutview.h"
#include "coloringview.h"
#include "intervalindex.h"
#include "lifetimebarsview.h"
#include "memorycurveview.h"
#include "palette.h"
#include "plandocument.h"
#include "strategystyle.h"
#include "summarypanel.h"
#include "tensortablemodel.h"
#include "densitygrid.h"
#include "stepclock.h"
#include "stepenvelope.h"
#include "timeaxis.h"

#include "graph/capture.h"
#include "io/breakdown.h"
#include "io/workload.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QPainter>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

#include <memory>
#include <random>

namespace {

std::shared_ptr<const core::Workload> loadExample(const std::string& spec)
{
    auto loaded = core::loadWorkload(spec, {});
    if (!loaded)
        qFatal("%s: %s", spec.c_str(), loaded.error().message.c_str());
    return std::make_shared<const core::Workload>(std::move(*loaded));
}

// Loads `spec`, plans it with `planner`, checks the plan and puts both in `document`.
void open(PlanDocument& document, std::shared_ptr<const core::Workload> workload, const char* planner)
{
    auto plan = core::runPlanner(*core::plannerByName(planner), workload->problem);
    if (!plan)
        qFatal("%s: %s", planner, plan.error().message.c_str());
    const auto check = core::validatePlan(workload->problem, *plan);
    if (!check.ok())
        qFatal("%s: invalid plan: %s", planner, check.message.c_str());
    document.setWorkload(std::move(workload));
    document.setPlan(std::move(*plan));
}

// A random allocation problem: `count` buffers over `steps` steps, short lifetimes, mixed sizes.
std::shared_ptr<const core::Workload> syntheticWorkload(int count, core::Step steps)
{
    std::mt19937 random(42);
    std::uniform_int_distribution<core::Step> start(0, steps - 2);
    std::geometric_distribution<core::Step> length(0.05);
    std::uniform_int_distribution<int> sizeExp(6, 20);
    core::PlanProblem problem;
    problem.steps = steps;
    for (int i = 0; i < count; ++i) {
        const core::Step s = start(random);
        const core::Step e = std::min<core::Step>(steps, s + 1 + length(random));
        const core::Bytes size = core::Bytes(1) << sizeExp(random);
        const std::string name = "t" + std::to_string(i);
        problem.buffers.push_back({ name, { s, e }, size, core::TensorKind::Activation, { name } });
    }
    return std::make_shared<const core::Workload>(core::workloadFromProblem(std::move(problem), "synthetic", {}));
}

// "Ink": pixels that are neither the view's background nor the empty plot's background.
int contentPixels(const QImage& image)
{
    const QRgb background = ViewPalette::background().rgb() & 0xFFFFFF;
    const QRgb plot = ViewPalette::plotBackground().rgb() & 0xFFFFFF;
    int count = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) {
            const QRgb pixel = image.pixel(x, y) & 0xFFFFFF;
            if (pixel != background && pixel != plot)
                ++count;
        }
    return count;
}

// QTest::mouseMove does not reach a widget's mouseMoveEvent on the offscreen platform: send it.
void sendMove(QWidget* widget, QPointF pos, Qt::MouseButtons buttons = Qt::NoButton)
{
    QMouseEvent event(QEvent::MouseMove, pos, widget->mapToGlobal(pos), Qt::NoButton, buttons, Qt::NoModifier);
    QApplication::sendEvent(widget, &event);
}

void sendWheel(QWidget* widget, QPointF pos, int deltaY)
{
    QWheelEvent event(pos, widget->mapToGlobal(pos), QPoint(), QPoint(0, deltaY), Qt::NoButton, Qt::NoModifier,
        Qt::NoScrollPhase, false);
    QApplication::sendEvent(widget, &event);
}

// One document with every view, shown at a fixed size.
struct Studio {
    PlanDocument document;
    std::unique_ptr<LifetimeBarsView> bars;
    std::unique_ptr<ArenaLayoutView> arena;
    std::unique_ptr<ColoringView> coloring;
    std::unique_ptr<MemoryCurveView> curve;

    Studio()
        : bars(std::make_unique<LifetimeBarsView>(&document))
        , arena(std::make_unique<ArenaLayoutView>(&document))
        , coloring(std::make_unique<ColoringView>(&document))
        , curve(std::make_unique<MemoryCurveView>(&document))
    {
    }
    std::vector<QWidget*> views() const { return { bars.get(), arena.get(), coloring.get(), curve.get() }; }
    void show(QSize size)
    {
        for (QWidget* view : views()) {
            view->resize(size);
            view->show();
            if (!QTest::qWaitForWindowExposed(view))
                qWarning("view not exposed");
        }
    }
};

bool exportImage(QWidget* view, const QString& path, QString* error)
{
    if (auto* v = qobject_cast<TimelineView*>(view))
        return v->exportImage(path, error);
    return static_cast<MemoryCurveView*>(view)->exportImage(path, error);
}

// Index of the buffer named `name`, or -1.
int bufferNamed(const core::Workload& workload, const std::string& name)
{
    for (std::size_t i = 0; i < workload.problem.buffers.size(); ++i)
        if (workload.problem.buffers[i].name == name)
            return static_cast<int>(i);
    return -1;
}

// The largest buffer: its rectangle is big in every view.
int largestBuffer(const core::Workload& workload)
{
    int best = 0;
    for (std::size_t i = 0; i < workload.problem.buffers.size(); ++i)
        if (workload.problem.buffers[i].size > workload.problem.buffers[best].size)
            best = static_cast<int>(i);
    return best;
}

} // namespace

class TestViews : public QObject {
    Q_OBJECT
private slots:
    void timeAxisRoundTrip();
    void stepEnvelopeKeepsPeaks();
    void stepClockMapsTimes();
    void densityGridCoversShortBuffers();
    void offsetAxisRoundTrip();
    void ticks();
    void intervalIndexMatchesBruteForce();
    void leftEdgeColoring_data();
    void leftEdgeColoring();
    void palette();
    void namesThatDoNotFit();
    void rendersContent();
    void exportsPngAndSvg();
    void clickSelectsAndHoverHighlights();
    void clickOnEmptyClearsSelection();
    void wheelZooms();
    void dragPans();
    void keysMoveCursorAndFit();
    void axisStripSetsCursor();
    void sortAndColorModes();
    void capturedStep();
    void coloringViewUsesPlanSlots();
    void boundedBuffersAreStippled();
    void tooSmallBuffersInTheLegend();
    void curveOverlay();
    void curveArenaAtTheBound();
    void curveHeaderRows();
    void noPlanIsNotACrash();
    void largeWorkload();
    void screenshots();
};

void TestViews::timeAxisRoundTrip()
{
    const TimeAxis axis { 10, 50, 100, 900 };
    QCOMPARE(axis.stepToX(10), 100.0);
    QCOMPARE(axis.stepToX(50), 900.0);
    QCOMPARE(axis.stepToX(30), 500.0);
    QCOMPARE(axis.pixelsPerStep(), 20.0);
    for (double step : { 0.0, 10.0, 12.5, 33.25, 50.0, 70.0 })
        QVERIFY(qAbs(axis.xToStep(axis.stepToX(step)) - step) < 1e-9);
    for (double x : { 0.0, 100.0, 345.5, 900.0 })
        QVERIFY(qAbs(axis.stepToX(axis.xToStep(x)) - x) < 1e-9);
    const TimeAxis degenerate { 5, 5, 0, 100 }; // empty range must not divide by zero
    QVERIFY(std::isfinite(degenerate.xToStep(50)));
}

void TestViews::offsetAxisRoundTrip()
{
    const OffsetAxis axis { 0, 4096, 20, 420 }; // 4 KiB over 400 px, upwards
    QCOMPARE(axis.valueToY(0), 420.0);
    QCOMPARE(axis.valueToY(4096), 20.0);
    QCOMPARE(axis.valueToY(1024), 320.0);
    for (double bytes : { 0.0, 1.0, 100.0, 2048.0, 4095.5 })
        QVERIFY(qAbs(axis.yToValue(axis.valueToY(bytes)) - bytes) < 1e-9);
    QVERIFY(axis.valueToY(3000) < axis.valueToY(1000)); // more bytes, higher up
}

void TestViews::stepEnvelopeKeepsPeaks()
{
    // Few steps: every one, closed at the end.
    const std::vector<double> small { 1, 5, 2 };
    auto points = stepEnvelope(small, 0, 3, 100);
    QCOMPARE(points.keys, (QVector<double> { 0, 1, 2, 3 }));
    QCOMPARE(points.values, (QVector<double> { 1, 5, 2, 2 }));
    QVERIFY(points.lows.isEmpty());

    // A million steps with one-step peaks: whole axis over 500 pixels gives one point per column
    // (and the closing one), and every peak is still there.
    std::vector<double> curve(1000000, 1.0);
    for (std::size_t i = 777; i < curve.size(); i += 99991)
        curve[i] = 10.0 + static_cast<double>(i % 7);
    points = stepEnvelope(curve, 0, 1e6, 500);
    QCOMPARE(points.keys.size(), 501);
    for (std::size_t i = 777; i < curve.size(); i += 99991) {
        const auto column = static_cast<int>(static_cast<double>(i) / 2000.0);
        QCOMPARE(points.keys[column], column * 2000.0);
        QCOMPARE(points.values[column], curve[i]);
    }
    QCOMPARE(*std::max_element(points.values.begin(), points.values.end()), 16.0);
    QCOMPARE(points.lows.size(), points.keys.size());
    QCOMPARE(*std::max_element(points.lows.begin(), points.lows.end()), 1.0); // the least of each column
    QCOMPARE(points.keys.back(), 1e6);
    QVERIFY(std::is_sorted(points.keys.begin(), points.keys.end()));

    // Zoomed in to 300 steps: those steps as they are, one more each side.
    points = stepEnvelope(curve, 1000, 1300, 500);
    QCOMPARE(points.keys.front(), 999.0);
    QCOMPARE(points.keys.back(), 1300.0);
    QCOMPARE(points.keys.size(), 302);
    // The last steps in view: closed at the end of the curve.
    points = stepEnvelope(curve, 1e6 - 100, 1e6 + 50, 500);
    QCOMPARE(points.keys.back(), 1e6);
    QCOMPARE(points.values.back(), curve.back());
}

void TestViews::stepClockMapsTimes()
{
    StepClock clock;
    clock.setEvents(4);
    QVERIFY(!clock.timed());
    QCOMPARE(clock.key(2.5), 2.5);
    // Four events at 0, 1, 1 and 3 s: step 1 lasts no time; the last closes one mean gap (0.75 s) on.
    QVERIFY(!clock.setSeconds(4, { 0.0f, 2.0f, 1.0f, 3.0f })); // falling: refused, the event axis kept
    QVERIFY(!clock.timed());
    QVERIFY(clock.setSeconds(4, { 0.0f, 1.0f, 1.0f, 3.0f }));
    QCOMPARE(clock.starts(), (std::vector<double> { 0, 1, 1, 3, 3.75 }));
    QCOMPARE(clock.key(0.5), 0.5);
    QCOMPARE(clock.key(2.5), 2.0);
    QCOMPARE(clock.key(4), 3.75);
    QCOMPARE(clock.step(2.0), 2.5);
    QCOMPARE(clock.step(1.0), 2.0); // the zero-length step 1 holds no time: the time 1 s is in step 2
    QCOMPARE(clock.step(-1), 0.0);
    QCOMPARE(clock.step(99), 4.0);
    for (double s : { 0.0, 0.25, 2.0, 2.9, 3.5 })
        QCOMPARE(clock.step(clock.key(s)), s);

    // The envelope on the time axis: columns even in time. A burst of 1000 steps in the first
    // millisecond and one long step after: the burst's peak stays, the long step is one column span.
    std::vector<double> values(1001, 1.0);
    values[500] = 9.0;
    std::vector<float> seconds(1001);
    for (std::size_t i = 0; i < 1000; ++i)
        seconds[i] = static_cast<float>(i) * 1e-6f;
    seconds[1000] = 1.0f;
    QVERIFY(clock.setSeconds(values.size(), seconds));
    const auto points = stepEnvelope(values, 0, clock.key(1001), 100, clock.starts());
    QVERIFY(!points.lows.isEmpty());
    QCOMPARE(points.values.front(), 9.0);
    QVERIFY(points.keys.size() <= 101);
    QVERIFY(std::is_sorted(points.keys.begin(), points.keys.end()));
    QCOMPARE(points.keys.back(), clock.key(1001));
}

void TestViews::densityGridCoversShortBuffers()
{
    // 50 000 one-step buffers in the bottom third of a 30 000-byte arena, and one buffer living
    // throughout above them, over 100 000 steps.
    core::PlanProblem problem;
    problem.steps = 100000;
    std::vector<core::Bytes> offsets;
    for (int i = 0; i < 50000; ++i) {
        core::Buffer b;
        b.size = 1000;
        b.lifetime = { 2 * i, 2 * i + 1 };
        problem.buffers.push_back(b);
        offsets.push_back((i % 10) * 1000);
    }
    core::Buffer whole;
    whole.size = 5000;
    whole.lifetime = { 0, 100000 };
    problem.buffers.push_back(whole);
    offsets.push_back(20000);
    DensityGrid grid;
    grid.build(problem, offsets, 30000);
    QVERIFY(!grid.empty());
    QVERIFY(grid.isShort(0) && grid.isShort(49999));
    QVERIFY(!grid.isShort(50000)); // lives throughout: drawn on its own
    QVERIFY(grid.covers(TimeAxis { 0, 100000, 0, 1000 }));  // 100 steps a pixel
    QVERIFY(!grid.covers(TimeAxis { 0, 1000, 0, 1000 }));   // a step a pixel: drawn one by one

    QImage image(1000, 300, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    const QRgb value = qRgba(10, 20, 30, 255);
    grid.paint(image, 0, 0, TimeAxis { 0, 100000, 0, 1000 }, OffsetAxis { 0, 30000, 0, 300 }, value);
    for (int x : { 0, 250, 500, 999 }) {
        QCOMPARE(image.pixel(x, 250), value); // offsets 0..10 000: the short buffers, in every column
        QCOMPARE(qAlpha(image.pixel(x, 150)), 0); // 15 000: nothing there
        QCOMPARE(qAlpha(image.pixel(x, 100)), 0); // 20 000: the long buffer, not the grid's
    }
    // Too few steps for bins to hold several: nothing binned.
    problem.steps = 1000;
    grid.build(problem, offsets, 30000);
    QVERIFY(grid.empty() && !grid.covers(TimeAxis { 0, 1000, 0, 10 }));
}

void TestViews::ticks()
{
    const auto steps = niceTicks(0, 97, 10, 1);
    QVERIFY(!steps.empty());
    QVERIFY(steps.size() <= 11);
    for (double t : steps) {
        QCOMPARE(t, std::round(t)); // no tick between two steps
        QVERIFY(t >= 0 && t <= 97);
    }
    QCOMPARE(niceTicks(0, 3, 20, 1), (std::vector<double> { 0, 1, 2, 3 }));
    // The memory and comparison charts' step axis: whole steps on the 1-2-5 grid at every range
    // (QCustomPlot alone picks 2.5 at some, and labels 3, 5, 8 ...).
    struct Probe : StepTicker {
        using StepTicker::getTickStep;
    } probe;
    for (double steps = 1; steps <= 5000; steps += 1) {
        const double step = probe.getTickStep(QCPRange(0, steps));
        const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
        QVERIFY2(step >= 1 && step == std::round(step) && (mantissa == 1 || mantissa == 2 || mantissa == 5),
            qPrintable(QStringLiteral("%1 steps: a tick every %2").arg(steps).arg(step)));
    }
    // Wide steps: the ticks sit at step centres and say the step they are in, as the timeline views'
    // labels do; narrow ones stay on the step boundaries.
    {
        QCustomPlot plot;
        QSharedPointer<StepTicker> ticker(new StepTicker);
        plot.xAxis->setTicker(ticker);
        plot.xAxis->setRange(0, 49);
        fitStepTicks(plot.xAxis, 1200); // 24.5 px a step
        QVERIFY(ticker->centred());
        QVector<double> ticks, subTicks;
        QVector<QString> labels;
        ticker->generate(plot.xAxis->range(), QLocale::c(), QLatin1Char('f'), 0, ticks, &subTicks, &labels);
        QVERIFY(!ticks.isEmpty());
        for (qsizetype i = 0; i < ticks.size(); ++i) {
            QCOMPARE(ticks[i] - std::floor(ticks[i]), 0.5);
            QCOMPARE(labels[i], QString::number(std::floor(ticks[i])));
        }
        fitStepTicks(plot.xAxis, 1100); // 22.4 px a step
        QVERIFY(!ticker->centred());
        ticker->generate(plot.xAxis->range(), QLocale::c(), QLatin1Char('f'), 0, ticks, &subTicks, &labels);
        for (qsizetype i = 0; i < ticks.size(); ++i) {
            QCOMPARE(ticks[i], std::round(ticks[i]));
            QCOMPARE(labels[i], QString::number(ticks[i]));
        }
    }
    const auto bytes = byteTicks(0, 3.0 * 1024 * 1024, 6);
    QVERIFY(bytes.size() >= 3 && bytes.size() <= 7);
    for (double t : bytes) // multiples of 512 KiB at this range
        QCOMPARE(std::fmod(t, 512.0 * 1024), 0.0);
    QCOMPARE(shortBytes(2.0 * 1024 * 1024), QStringLiteral("2 MiB"));
    QCOMPARE(shortBytes(1536), QStringLiteral("1.5 KiB"));
    QCOMPARE(shortBytes(812), QStringLiteral("812 B"));
    QCOMPARE(byteUnitFor(3.0 * 1024 * 1024).name, QStringLiteral("MiB"));
    QCOMPARE(byteUnitFor(900).name, QStringLiteral("B"));
}

void TestViews::intervalIndexMatchesBruteForce()
{
    const auto workload = syntheticWorkload(3000, 500);
    IntervalIndex index;
    index.build(workload->problem);
    QCOMPARE(index.size(), std::size_t(3000));
    std::mt19937 random(7);
    std::uniform_real_distribution<double> step(-5, 505);
    for (int query = 0; query < 200; ++query) {
        double first = step(random), last = step(random);
        if (query % 4 == 0)
            last = first; // a point query, as hit-testing uses
        if (last < first)
            std::swap(first, last);
        std::vector<int> found;
        index.forEach(first, last, [&](int i) { found.push_back(i); });
        std::sort(found.begin(), found.end());
        std::vector<int> expected;
        for (std::size_t i = 0; i < workload->problem.buffers.size(); ++i) {
            const auto& life = workload->problem.buffers[i].lifetime;
            if (life.start <= last && life.end > first)
                expected.push_back(static_cast<int>(i));
        }
        QCOMPARE(found, expected);
    }
}

void TestViews::leftEdgeColoring_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<int>("expectedColors");
    QTest::newRow("hotel") << QStringLiteral("example:hotel") << 3;
    QTest::newRow("five-tensors") << QStringLiteral("example:five-tensors") << 3;
    QTest::newRow("unet") << QStringLiteral("example:unet") << -1;
}

void TestViews::leftEdgeColoring()
{
    QFETCH(QString, spec);
    QFETCH(int, expectedColors);
    const auto workload = loadExample(spec.toStdString());
    const auto& problem = workload->problem;
    const auto colors = ::leftEdgeColoring(problem);
    QCOMPARE(colors.size(), problem.buffers.size());
    const int depth = core::maxOverlapDepth(problem);
    if (expectedColors >= 0)
        QCOMPARE(depth, expectedColors);
    QCOMPARE(*std::max_element(colors.begin(), colors.end()) + 1, depth);
    for (std::size_t a = 0; a < colors.size(); ++a) {
        QCOMPARE(colors[a] < 0, problem.buffers[a].size == 0);
        for (std::size_t b = a + 1; b < colors.size(); ++b)
            if (colors[a] >= 0 && colors[a] == colors[b])
                QVERIFY2(!problem.buffers[a].lifetime.overlaps(problem.buffers[b].lifetime),
                    qPrintable(QStringLiteral("%1 and %2 share color %3 but overlap")
                                   .arg(QString::fromStdString(problem.buffers[a].name),
                                       QString::fromStdString(problem.buffers[b].name))
                                   .arg(colors[a])));
    }
}

void TestViews::palette()
{
    for (int a = 0; a < 12; ++a)
        for (int b = a + 1; b < 12; ++b)
            QVERIFY2(ViewPalette::colorDistance(ViewPalette::indexColor(a), ViewPalette::indexColor(b)) > 12,
                qPrintable(QStringLiteral("colors %1 and %2 are too similar").arg(a).arg(b)));
    const core::TensorKind kinds[] = { core::TensorKind::Input, core::TensorKind::Output, core::TensorKind::Weight,
        core::TensorKind::Activation, core::TensorKind::Persistent, core::TensorKind::Workspace };
    for (auto a : kinds)
        for (auto b : kinds)
            if (a != b)
                QVERIFY(ViewPalette::colorDistance(ViewPalette::kindColor(a), ViewPalette::kindColor(b)) > 20);
    // A strategy mark's colour is no kind's: an input must not read as an in-place buffer.
    for (int bit = 0; bit < kStrategyMarkCount; ++bit)
        for (auto kind : kinds)
            QVERIFY2(ViewPalette::colorDistance(StrategyStyle::markColor(StrategyMark(1u << bit)), ViewPalette::kindColor(kind)) > 20,
                qPrintable(QStringLiteral("mark %1 and kind %2").arg(bit).arg(int(kind))));
    QCOMPARE(ViewPalette::textColorOn(Qt::white), QColor(0x1E1E1E));
    QCOMPARE(ViewPalette::textColorOn(QColor(0x1F3A60)), QColor(Qt::white));
    QVERIFY(ViewPalette::colorDistance(ViewPalette::indexColor(3), ViewPalette::indexColor(3)) < 1e-9);
}

// A name that does not fit loses what tells buffers apart last: the exporter's "_output_0" and a
// path component the next one repeats go first, then the name is cut in its middle.
void TestViews::namesThatDoNotFit()
{
    const QFontMetrics fm(QApplication::font());
    const QString exported = QStringLiteral("/layer1/layer1.0/conv1/Conv_output_0");
    QCOMPARE(TimelineView::elideName(fm, exported, fm.horizontalAdvance(exported)), exported); // fits: whole
    const QString shortened = QStringLiteral("layer1.0/conv1/Conv");
    QCOMPARE(TimelineView::elideName(fm, exported, fm.horizontalAdvance(shortened)), shortened);
    const QString cut = TimelineView::elideName(fm, exported, fm.horizontalAdvance(QStringLiteral("layer1.0/Conv")) + fm.horizontalAdvance(QStringLiteral("…")));
    QVERIFY2(cut.startsWith(QStringLiteral("lay")) && cut.contains(QStringLiteral("…")) && cut.endsWith(QStringLiteral("Conv")), qPrintable(cut));
    // Names that are not exported paths are only cut, in the middle: both ends stay, so two names
    // that differ at the start and share their end still read differently.
    const QString plain = QStringLiteral("layers.0.attn.q_transpose.out");
    const QString plainCut = TimelineView::elideName(fm, plain, 120);
    QVERIFY2(plainCut.startsWith(QStringLiteral("lay")) && plainCut.endsWith(QStringLiteral(".out")), qPrintable(plainCut));
    const int narrow = fm.horizontalAdvance(QStringLiteral("enc1…u1.out"));
    const QString enc = TimelineView::elideName(fm, QStringLiteral("enc1.block.relu1.out"), narrow);
    const QString dec = TimelineView::elideName(fm, QStringLiteral("dec1.block.relu1.out"), narrow);
    QVERIFY2(enc != dec, qPrintable(enc + QStringLiteral(" / ") + dec));
}

void TestViews::rendersContent()
{
    Studio studio;
    open(studio.document, loadExample("example:unet"), "greedy-by-size");
    studio.show(QSize(1200, 700));
    studio.curve->plot()->replot();
    for (QWidget* view : studio.views()) {
        const QImage image = view->grab().toImage();
        QCOMPARE(image.size(), QSize(1200, 700) * view->devicePixelRatioF());
        const int pixels = contentPixels(image);
        qDebug("%s: %d ink pixels", view->metaObject()->className(), pixels);
        QVERIFY2(pixels > 1200 * 700 / 10,
            qPrintable(QStringLiteral("%1 has only %2 content pixels")
                           .arg(QLatin1String(view->metaObject()->className()))
                           .arg(pixels)));
    }
}

void TestViews::exportsPngAndSvg()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    Studio studio;
    open(studio.document, loadExample("example:unet"), "greedy-by-size");
    studio.show(QSize(1000, 500));
    for (QWidget* view : studio.views()) {
        const QString name = QLatin1String(view->metaObject()->className());
        QString error;
        const QString png = dir.filePath(name + QStringLiteral(".png"));
        QVERIFY2(exportImage(view, png, &error), qPrintable(error));
        QImage image(png);
        QVERIFY2(!image.isNull(), qPrintable(png));
        QVERIFY(image.width() >= 1000 && image.height() >= 500);
        QVERIFY(contentPixels(image) > 1000);
        const QString svg = dir.filePath(name + QStringLiteral(".svg"));
        QVERIFY2(exportImage(view, svg, &error), qPrintable(error));
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        QVERIFY2(text.startsWith("<?xml") || text.contains("<svg"), qPrintable(svg));
        QVERIFY(text.contains("</svg>"));
        QVERIFY(text.size() > 2000);
        // Text names a family a browser can find: the one it was drawn with, then the CSS generic.
        const QStringList families = [&] {
            QStringList found;
            static const QRegularExpression family(QStringLiteral("font-family=\"([^\"]*)\""));
            for (auto it = family.globalMatch(QString::fromUtf8(text)); it.hasNext();)
                found << it.next().captured(1);
            found.removeDuplicates();
            return found;
        }();
        QVERIFY2(!families.isEmpty(), qPrintable(svg));
        for (const QString& f : families)
            QVERIFY2(f.endsWith(QLatin1String(", sans-serif")) && !f.startsWith(QLatin1String("Sans Serif")), qPrintable(f));
        QVERIFY(!exportImage(view, dir.filePath(name + QStringLiteral(".xyz")), &error));
        QVERIFY(error.contains(QStringLiteral("xyz")));
    }
    // A view never shown exports at its size hint.
    PlanDocument document;
    open(document, loadExample("example:hotel"), "first-fit");
    ArenaLayoutView hidden(&document);
    QString error;
    QVERIFY2(hidden.exportImage(dir.filePath(QStringLiteral("hidden.png")), &error), qPrintable(error));
    QCOMPARE(QImage(dir.filePath(QStringLiteral("hidden.png"))).size(), hidden.sizeHint());
}

void TestViews::clickSelectsAndHoverHighlights()
{
    Studio studio;
    const auto workload = loadExample("example:unet");
    open(studio.document, workload, "coloring");
    studio.show(QSize(1200, 700));
    const int target = largestBuffer(*workload);
    studio.document.selectBuffer(target); // scrolls the row-based views to it
    studio.document.selectBuffer(-1);
    QSignalSpy selection(&studio.document, &PlanDocument::selectionChanged);

    struct Case {
        TimelineView* view;
        QRectF rect;
    };
    const Case cases[] = {
        { studio.bars.get(), studio.bars->barRect(studio.bars->frame(), target) },
        { studio.arena.get(), studio.arena->bufferRect(studio.arena->frame(), target) },
        { studio.coloring.get(), studio.coloring->bufferRect(studio.coloring->frame(), target) },
    };
    for (const Case& c : cases) {
        const char* name = c.view->metaObject()->className();
        QVERIFY2(c.rect.isValid() && c.rect.width() >= 2, name);
        const QPoint centre = c.rect.center().toPoint();
        QVERIFY2(c.view->frame().plot.contains(centre), name);
        QCOMPARE(c.view->bufferUnder(centre), target);
        studio.document.selectBuffer(-1);
        studio.document.hoverBuffer(-1);
        sendMove(c.view, centre);
        QCOMPARE(studio.document.hoveredBuffer(), target);
        QTest::mouseClick(c.view, Qt::LeftButton, {}, centre);
        QCOMPARE(studio.document.selectedBuffer(), target);
    }
    QVERIFY(selection.count() >= 3);
    // The tooltip text names the buffer and its numbers.
    const QString tip = TimelineView::bufferToolTip(&studio.document, target);
    QVERIFY(tip.contains(QString::fromStdString(workload->problem.buffers[target].name).toHtmlEscaped()));
    QVERIFY(tip.contains(QStringLiteral("offset")));
    QVERIFY(tip.contains(QStringLiteral("[%1, %2)")
                             .arg(workload->problem.buffers[target].lifetime.start)
                             .arg(workload->problem.buffers[target].lifetime.end)));
    // Selection shows in the other views: the arena repaints the selected rectangle with an outline.
    const QImage before = studio.arena->grab().toImage();
    studio.document.selectBuffer(-1);
    const QImage after = studio.arena->grab().toImage();
    QVERIFY(before != after);
}

void TestViews::clickOnEmptyClearsSelection()
{
    Studio studio;
    const auto workload = loadExample("example:five-tensors");
    open(studio.document, workload, "first-fit");
    studio.show(QSize(900, 500));
    studio.document.selectBuffer(0);
    // Above the arena line there is no buffer.
    const auto frame = studio.arena->frame();
    const QPoint empty(frame.plot.center().x(), frame.plot.top() + 3);
    QCOMPARE(studio.arena->bufferUnder(empty), -1);
    QTest::mouseClick(studio.arena.get(), Qt::LeftButton, {}, empty);
    QCOMPARE(studio.document.selectedBuffer(), -1);
}

void TestViews::wheelZooms()
{
    Studio studio;
    open(studio.document, loadExample("example:unet"), "greedy-by-size");
    studio.show(QSize(1200, 600));
    const double steps = studio.document.steps();
    for (QWidget* view : studio.views()) {
        studio.document.fitVisibleSteps();
        QCOMPARE(studio.document.lastVisibleStep() - studio.document.firstVisibleStep(), steps);
        QWidget* target = view == studio.curve.get() ? static_cast<QWidget*>(studio.curve->plot()) : view;
        // Zoom in at 3/4 of the width: the step under the mouse stays put.
        TimeAxis axis = view == studio.curve.get() ? studio.curve->timeAxis() : studio.bars->frame().time;
        const double x = axis.left + 0.75 * (axis.right - axis.left);
        const double anchor = axis.xToStep(x);
        const QPointF pos(x - (view == studio.curve.get() ? studio.curve->plot()->x() : 0), target->height() / 2.0);
        sendWheel(target, pos, 240);
        const double span = studio.document.lastVisibleStep() - studio.document.firstVisibleStep();
        QVERIFY2(span < steps * 0.8, view->metaObject()->className());
        axis.first = studio.document.firstVisibleStep();
        axis.last = studio.document.lastVisibleStep();
        QVERIFY2(qAbs(axis.xToStep(x) - anchor) < 0.01, view->metaObject()->className());
        sendWheel(target, pos, -480);
        QVERIFY(studio.document.lastVisibleStep() - studio.document.firstVisibleStep() > span);
    }
}

void TestViews::dragPans()
{
    Studio studio;
    open(studio.document, loadExample("example:unet"), "greedy-by-size");
    studio.show(QSize(1200, 600));
    studio.document.setVisibleSteps(10, 30);
    const auto frame = studio.arena->frame();
    // Start the drag above the arena line (empty space), move left by 100 px: later steps come in.
    const QPoint from(frame.plot.center().x(), frame.plot.top() + 3);
    QCOMPARE(studio.arena->bufferUnder(from), -1);
    QTest::mousePress(studio.arena.get(), Qt::LeftButton, {}, from);
    sendMove(studio.arena.get(), from - QPoint(100, 0), Qt::LeftButton);
    QTest::mouseRelease(studio.arena.get(), Qt::LeftButton, {}, from - QPoint(100, 0));
    const double shift = 100 / frame.time.pixelsPerStep();
    QVERIFY(qAbs(studio.document.firstVisibleStep() - (10 + shift)) < 1e-6);
    QVERIFY(qAbs(studio.document.lastVisibleStep() - (30 + shift)) < 1e-6);
}

void TestViews::keysMoveCursorAndFit()
{
    Studio studio;
    open(studio.document, loadExample("example:unet"), "greedy-by-size");
    studio.show(QSize(1000, 500));
    for (QWidget* view : studio.views()) {
        studio.document.setCursorStep(-1);
        studio.document.fitVisibleSteps();
        view->setFocus();
        QTest::keyClick(view, Qt::Key_Right); // no cursor yet: starts at the first visible step
        QCOMPARE(studio.document.cursorStep(), 0);
        QTest::keyClick(view, Qt::Key_Right);
        QTest::keyClick(view, Qt::Key_Right);
        QCOMPARE(studio.document.cursorStep(), 2);
        QTest::keyClick(view, Qt::Key_Left);
        QCOMPARE(studio.document.cursorStep(), 1);
        studio.document.setVisibleSteps(5, 9);
        QTest::keyClick(view, Qt::Key_F);
        QCOMPARE(studio.document.firstVisibleStep(), 0.0);
        QCOMPARE(studio.document.lastVisibleStep(), double(studio.document.steps()));
    }
    // Moving the cursor past the visible range scrolls it into view.
    studio.document.setVisibleSteps(0, 10);
    studio.document.setCursorStep(9);
    QTest::keyClick(studio.bars.get(), Qt::Key_Right);
    QCOMPARE(studio.document.cursorStep(), 10);
    QVERIFY(studio.document.lastVisibleStep() >= 11);
}

void TestViews::axisStripSetsCursor()
{
    Studio studio;
    open(studio.document, loadExample("example:unet"), "greedy-by-size");
    studio.show(QSize(1200, 600));
    for (TimelineView* view : { static_cast<TimelineView*>(studio.bars.get()),
             static_cast<TimelineView*>(studio.arena.get()), static_cast<TimelineView*>(studio.coloring.get()) }) {
        studio.document.setCursorStep(-1);
        const auto frame = view->frame();
        const int x = static_cast<int>(frame.time.stepToX(7.5));
        QTest::mouseClick(view, Qt::LeftButton, {}, QPoint(x, frame.axis.top() + 5));
        QCOMPARE(studio.document.cursorStep(), 7);
    }
    // In the memory curve, a click without drag sets the cursor.
    studio.document.setCursorStep(-1);
    const TimeAxis axis = studio.curve->timeAxis();
    const QPoint inPlot(
        static_cast<int>(axis.stepToX(12.5)) - studio.curve->plot()->x(), studio.curve->plot()->height() / 2);
    QTest::mouseClick(studio.curve->plot(), Qt::LeftButton, {}, inPlot);
    QCOMPARE(studio.document.cursorStep(), 12);
}

void TestViews::sortAndColorModes()
{
    PlanDocument document;
    const auto workload = loadExample("example:five-tensors");
    open(document, workload, "first-fit");
    LifetimeBarsView view(&document);
    view.resize(900, 400);
    // five-tensors: w1 512 [0,3), a1 128 [0,1), w2 256 [1,4), a2 128 [2,3), out 64 [3,4).
    const int w1 = bufferNamed(*workload, "w1"), a1 = bufferNamed(*workload, "a1"), w2 = bufferNamed(*workload, "w2"),
              out = bufferNamed(*workload, "out");
    QCOMPARE(view.rowOf(a1), 0); // by start, then end: a1 [0,1) before w1 [0,3)
    QCOMPARE(view.rowOf(w1), 1);
    view.setSortOrder(LifetimeBarsView::SortOrder::Size);
    QCOMPARE(view.rowOf(w1), 0);
    QCOMPARE(view.rowOf(w2), 1);
    QCOMPARE(view.rowOf(out), 4);
    view.setSortOrder(LifetimeBarsView::SortOrder::Offset); // w1 0, out 0, a1 512, a2 512, w2 640
    QCOMPARE(view.rowOf(w1), 0);
    QCOMPARE(view.rowOf(out), 1);
    QCOMPARE(view.rowOf(w2), 4);
    const QImage byKind = view.grab().toImage();
    view.setColorMode(LifetimeBarsView::ColorMode::Color);
    const QImage byColor = view.grab().toImage();
    QVERIFY(byKind != byColor); // offset bands: not all the same color as by kind
}

// A captured training step (tests/data/captured_mlp.json): the curve stacks what the step holds by
// category with the regions at the bottom and marks its phases; the bars and the arena color by
// category and module; the table has the category and module of each buffer and filters by them;
// the summary says what holds the memory at the peak.
void TestViews::capturedStep()
{
    PlanDocument document;
    const auto workload = loadExample(MEMPLAN_SOURCE_DIR "/tests/data/captured_mlp.json");
    open(document, workload, "best-of-greedy");

    MemoryCurveView curve(&document);
    curve.resize(1000, 320);
    const QStringList layers = curve.stackedLayers();
    QCOMPARE(layers.mid(0, 3), (QStringList { "parameter", "optimizer state", "gradient" })); // the regions first
    for (const char* name : { "input", "saved", "temporary", "output" })
        QVERIFY2(layers.contains(QString::fromLatin1(name)), name);
    QCOMPARE(curve.stepMarks(), (QStringList { "forward", "backward", "optimizer" }));
    // The top of the stack is everything held: the arena's live bytes plus the regions, at every step.
    core::Bytes regions = 0;
    for (const auto& r : workload->regions)
        regions += r.size;
    QCOMPARE(regions, core::Bytes(3 * 848));
    const auto* top = curve.plot()->graph(curve.plot()->graphCount() - 1);
    QCOMPARE(top->name(), layers.back());
    const auto& live = document.liveCurve();
    const double divisor = curve.unit().divisor;
    for (std::size_t step = 0; step < live.size(); ++step)
        QCOMPARE(top->data()->at(static_cast<int>(step))->value, static_cast<double>(live[step] + regions) / divisor);

    LifetimeBarsView bars(&document);
    bars.resize(900, 400);
    const QImage byKind = bars.grab().toImage();
    bars.setColorMode(LifetimeBarsView::ColorMode::Category);
    const QImage byCategory = bars.grab().toImage();
    QVERIFY(byKind != byCategory);
    bars.setColorMode(LifetimeBarsView::ColorMode::Module);
    QVERIFY(bars.grab().toImage() != byCategory);
    // Grouped rows: by category, each category's buffers in one run, in slot order; by module, too.
    const int count = static_cast<int>(workload->problem.buffers.size());
    std::vector<int> byRow(static_cast<std::size_t>(count));
    bars.setSortOrder(LifetimeBarsView::SortOrder::Category);
    for (int b = 0; b < count; ++b)
        byRow[static_cast<std::size_t>(bars.rowOf(b))] = b;
    for (int r = 1; r < count; ++r)
        QVERIFY(bufferCategorySlot(*workload, byRow[std::size_t(r - 1)]) <= bufferCategorySlot(*workload, byRow[std::size_t(r)]));
    QVERIFY(bufferCategorySlot(*workload, byRow.front()) < bufferCategorySlot(*workload, byRow.back()));
    bars.setSortOrder(LifetimeBarsView::SortOrder::Module);
    for (int b = 0; b < count; ++b)
        byRow[static_cast<std::size_t>(bars.rowOf(b))] = b;
    for (int r = 1; r < count; ++r)
        QVERIFY(bufferModule(*workload, byRow[std::size_t(r - 1)]) <= bufferModule(*workload, byRow[std::size_t(r)]));
    QVERIFY(bufferModule(*workload, byRow.front()) != bufferModule(*workload, byRow.back()));
    ArenaLayoutView arena(&document);
    arena.resize(900, 400);
    const QImage arenaByKind = arena.grab().toImage();
    arena.setColoring(BufferColoring::Category);
    QVERIFY(arena.grab().toImage() != arenaByKind);
    const int a1 = bufferNamed(*workload, "a1");
    QCOMPARE(bufferColor(*workload, a1, BufferColoring::Category),
        ViewPalette::categoryColor(static_cast<int>(core::TensorCategory::Saved)));
    QCOMPARE(bufferModule(*workload, a1), QStringLiteral("act"));

    TensorTableModel model(&document);
    QVERIFY(model.captured());
    QCOMPARE(model.index(a1, TensorTableModel::Category).data().toString(), QStringLiteral("saved"));
    QCOMPARE(model.index(a1, TensorTableModel::Module).data().toString(), QStringLiteral("act"));
    TensorFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setCategoryFilter(static_cast<int>(core::TensorCategory::Saved));
    int saved = 0;
    for (std::size_t b = 0; b < workload->problem.buffers.size(); ++b)
        saved += bufferCategorySlot(*workload, static_cast<int>(b)) == static_cast<int>(core::TensorCategory::Saved);
    QVERIFY(saved > 0);
    QCOMPARE(proxy.rowCount(), saved);
    proxy.setCategoryFilter(std::nullopt);
    proxy.setNameFilter(QStringLiteral("fc2")); // matches the module, not only the name
    QVERIFY(proxy.rowCount() > 0);
    for (int r = 0; r < proxy.rowCount(); ++r)
        QVERIFY(proxy.index(r, TensorTableModel::Name).data().toString().contains(QStringLiteral("fc2"))
            || proxy.index(r, TensorTableModel::Module).data().toString().contains(QStringLiteral("fc2")));

    SummaryPanel summary(&document);
    const QString text = summary.summaryText();
    const auto held = core::peakBreakdown(*workload, core::peakStep(workload->problem));
    QVERIFY2(text.contains(QStringLiteral("held at step %1").arg(held.step)), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("optimizer_state")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("fc1")), qPrintable(text));

    // An ONNX-style graph without categories: one live curve, no layers, no phase marks.
    PlanDocument plain;
    open(plain, loadExample("example:unet"), "best-of-greedy");
    MemoryCurveView plainCurve(&plain);
    QVERIFY(plainCurve.stackedLayers().isEmpty());
    QVERIFY(plainCurve.stepMarks().isEmpty());
}

// A buffer whose size is an upper bound (a data-dependent shape) is stippled in the lifetime bars
// and the arena layout, listed in their legends and said in its tooltip; the others are not.
void TestViews::boundedBuffersAreStippled()
{
    const auto exact = loadExample("example:unet");
    int largest = 0; // the largest area of step x bytes: a long bar and a big rectangle
    const auto area = [&](const core::Buffer& b) { return double(b.size) * double(b.lifetime.end - b.lifetime.start); };
    for (std::size_t i = 0; i < exact->problem.buffers.size(); ++i)
        if (area(exact->problem.buffers[i]) > area(exact->problem.buffers[std::size_t(largest)]))
            largest = int(i);
    auto bounded = std::make_shared<core::Workload>(*exact);
    bounded->graph->tensors[std::size_t(bounded->bufferTensor[std::size_t(largest)])].estimated = true;
    QImage images[2][2];
    for (int pass = 0; pass < 2; ++pass) {
        Studio studio;
        open(studio.document, pass == 0 ? exact : std::shared_ptr<const core::Workload>(bounded), "greedy-by-size");
        QCOMPARE(studio.document.anyBounded(), pass == 1);
        QCOMPARE(int(std::count(studio.document.boundedBuffers().begin(), studio.document.boundedBuffers().end(), true)), pass);
        QCOMPARE(TimelineView::bufferToolTip(&studio.document, largest).contains(QStringLiteral("upper bound")), pass == 1);
        studio.show(QSize(900, 400));
        studio.bars->setSortOrder(LifetimeBarsView::SortOrder::Size); // a large buffer on one of the first rows
        images[pass][0] = studio.bars->grab().toImage();
        images[pass][1] = studio.arena->grab().toImage();
    }
    for (int view = 0; view < 2; ++view) {
        // Stipple: white dots inside the buffer's fill, below the caption line (whose legend gains an entry).
        const QImage &a = images[0][view], &b = images[1][view];
        QCOMPARE(a.size(), b.size());
        int changed = 0;
        for (int y = 2 * QFontMetrics(QApplication::font()).height(); y < a.height(); ++y)
            for (int x = 0; x < a.width(); ++x)
                changed += a.pixel(x, y) != b.pixel(x, y);
        QVERIFY2(changed > 200, std::to_string(changed).c_str());
    }
}

// Buffers too small to draw one by one merge into grey; the legend names that grey exactly when
// some are in view.
void TestViews::tooSmallBuffersInTheLegend()
{
    const auto greyInCaption = [](TimelineView& view) {
        view.resize(1000, 400);
        const QImage image = view.grab().toImage();
        const QRect caption = view.frame().caption;
        int grey = 0;
        for (int y = caption.top(); y <= caption.bottom(); ++y)
            for (int x = caption.left(); x <= caption.right(); ++x)
                grey += (image.pixel(x, y) & 0xFFFFFF) == (ViewPalette::denseFill().rgb() & 0xFFFFFF);
        return grey > 0;
    };
    PlanDocument document;
    ArenaLayoutView arena(&document);
    ColoringView coloring(&document);
    open(document, syntheticWorkload(3000, 500), "greedy-by-size"); // 64 B to 1 MiB: many under a pixel high
    QVERIFY(greyInCaption(arena));
    QVERIFY(!greyInCaption(coloring)); // about 1.6 px a step: every buffer at least a pixel wide
    open(document, syntheticWorkload(3000, 5000), "greedy-by-size"); // 0.16 px a step: one-step buffers are not
    QVERIFY(greyInCaption(coloring));
    document.setVisibleSteps(1000, 1100);
    QVERIFY(!greyInCaption(coloring));

    core::PlanProblem problem; // ten buffers of 1 MiB: none under a pixel
    problem.steps = 10;
    for (int i = 0; i < 10; ++i)
        problem.buffers.push_back({ "b" + std::to_string(i), { i, i + 1 }, 1 << 20, core::TensorKind::Activation, { "b" } });
    open(document, std::make_shared<const core::Workload>(core::workloadFromProblem(std::move(problem), "even", {})),
        "greedy-by-size");
    QVERIFY(!greyInCaption(arena));
    QVERIFY(!greyInCaption(coloring));
}

void TestViews::coloringViewUsesPlanSlots()
{
    PlanDocument document;
    const auto workload = loadExample("example:hotel");
    open(document, workload, "coloring");
    ColoringView view(&document);
    QVERIFY(view.usesPlanColors());
    QCOMPARE(view.slotCount(), 3);
    for (int i = 0; i < 6; ++i)
        QCOMPARE(view.colorOf(i), document.plan()->colors[i]);
    open(document, workload, "first-fit"); // no slots: computed for display
    QVERIFY(!view.usesPlanColors());
    QCOMPARE(view.slotCount(), 3);
    view.resize(900, 300);
    const QImage image = view.grab().toImage();
    QVERIFY(contentPixels(image) > 900 * 300 / 4);
}

// An arena at the lower bound is drawn and named as one line; above it, both lines show.
void TestViews::curveArenaAtTheBound()
{
    const auto names = [](const MemoryCurveView& view) {
        QStringList legend;
        for (int i = 0; i < view.plot()->legend->itemCount(); ++i)
            if (auto* item = qobject_cast<QCPPlottableLegendItem*>(view.plot()->legend->item(i)))
                legend << item->plottable()->name();
        return legend.join(QStringLiteral(" | "));
    };
    PlanDocument document;
    open(document, loadExample("example:unet"), "best-of-greedy");
    MemoryCurveView view(&document);
    QCOMPARE(document.metrics().arena, document.metrics().lowerBound);
    QCOMPARE(names(view), QStringLiteral("live bytes | arena = lower bound 64 MiB"));
    open(document, loadExample("example:unet"), "first-fit");
    QVERIFY(document.metrics().arena > document.metrics().lowerBound);
    QCOMPARE(names(view), QStringLiteral("live bytes | lower bound 64 MiB | arena 129 MiB"));
}

// The memory curve's header takes as few rows as its width allows, and its legend never runs past
// the view or over the title.
void TestViews::curveHeaderRows()
{
    PlanDocument document;
    open(document, loadExample("example:unet"), "first-fit"); // arena above the bound: both lines
    MemoryCurveView view(&document);
    document.setMeasuredCurve(document.liveCurve());
    document.setBudget(document.metrics().arena * 3 / 2);
    QCPLegend* legend = view.plot()->legend;
    QStringList names;
    for (int i = 0; i < legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i)))
            names << item->plottable()->name();
    QCOMPARE(names.join(QStringLiteral(" | ")), QStringLiteral("live bytes | lower bound 64 MiB | arena 129 MiB | measured | budget 193 MiB"));
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    auto* header = qobject_cast<QCPLayoutGrid*>(view.plot()->plotLayout()->element(0, 0));
    QVERIFY(header);
    auto* title = qobject_cast<QCPTextElement*>(header->element(0, 0));
    QVERIFY(title);
    struct Layout {
        bool beside;
        int rows;
    };
    const auto layoutAt = [&](int width) {
        view.resize(width, 300);
        view.plot()->replot();
        const QRect box = legend->outerRect();
        const QRect text(title->outerRect().topLeft(), static_cast<const QCPLayoutElement*>(title)->minimumOuterSizeHint()); // public in the base
        [&] {
            QVERIFY2(box.right() < view.width(), qPrintable(QStringLiteral("legend to x=%1 in %2 px").arg(box.right()).arg(view.width())));
            QVERIFY2(!box.intersects(text), qPrintable(QStringLiteral("legend over the title at %1 px").arg(width)));
        }();
        return Layout { box.top() < text.bottom(), legend->rowCount() };
    };
    const Layout wide = layoutAt(1800);
    QVERIFY(wide.beside);
    QCOMPARE(wide.rows, 1);
    const Layout middle = layoutAt(900); // too narrow beside the title, wide enough for one row of its own
    QVERIFY(!middle.beside);
    QCOMPARE(middle.rows, 1);
    const Layout narrow = layoutAt(420); // the view's narrowest
    QVERIFY(!narrow.beside);
    QVERIFY2(narrow.rows >= 2, qPrintable(QStringLiteral("rows %1, width %2").arg(narrow.rows).arg(view.width())));
    QVERIFY(!QTest::currentTestFailed());
}

void TestViews::curveOverlay()
{
    PlanDocument document;
    open(document, loadExample("example:unet"), "greedy-by-size");
    MemoryCurveView view(&document);
    view.resize(900, 400);
    QVERIFY(!view.showsMeasured());
    QVERIFY(!view.showsBudget());
    QCOMPARE(view.unit().name, QStringLiteral("MiB")); // unet peaks at tens of MiB
    QCOMPARE(view.plot()->yAxis->label(), QStringLiteral("memory (MiB)"));
    QCOMPARE(view.plot()->xAxis->label(), QStringLiteral("step"));
    view.plot()->replot();
    const QImage plain = view.grab().toImage();
    std::vector<core::Bytes> measured = document.liveCurve();
    for (auto& v : measured)
        v = v * 11 / 10;
    document.setMeasuredCurve(measured);
    document.setBudget(document.metrics().arena * 3 / 2);
    QVERIFY(view.showsMeasured());
    QVERIFY(view.showsBudget());
    QVERIFY(view.plot()->yAxis->range().upper >= 1.5 * double(document.metrics().arena) / view.unit().divisor);
    view.plot()->replot(); // the view queues its replots
    QVERIFY(view.grab().toImage() != plain);
    document.setBudget(0);
    QVERIFY(!view.showsBudget());

    // A short curve gets fewer memory ticks, so their labels keep apart (about 30 px each); an
    // exported image gets the ticks of its own height.
    view.show(); // a hidden widget gets its resize events only when shown
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const auto ticksAt = [&](int height) {
        view.resize(900, height);
        view.plot()->replot();
        return view.plot()->yAxis->tickVector().size();
    };
    const auto tall = ticksAt(400), shortCurve = ticksAt(150);
    QVERIFY2(shortCurve >= 2 && shortCurve < tall, qPrintable(QStringLiteral("%1 ticks at 150 px, %2 at 400 px").arg(shortCurve).arg(tall)));
    MemoryCurveView hidden(&document); // never shown: no resize events
    hidden.resize(900, 150);
    QTemporaryDir dir;
    QVERIFY(hidden.exportImage(dir.filePath(QStringLiteral("short.png"))));
    QCOMPARE(hidden.plot()->yAxis->tickVector().size(), shortCurve);
}

void TestViews::noPlanIsNotACrash()
{
    Studio studio;
    studio.show(QSize(600, 300));
    for (QWidget* view : studio.views()) {
        const QImage empty = view->grab().toImage();
        QVERIFY(!empty.isNull());
        // Nothing loaded: little beyond the frame and a line of text (what rendersContent must exceed).
        QVERIFY2(contentPixels(empty) < 600 * 300 / 10, view->metaObject()->className());
    }
    studio.document.setWorkload(loadExample("example:hotel")); // workload, no plan yet
    for (QWidget* view : studio.views()) {
        QVERIFY(!view->grab().isNull());
        QTest::mouseClick(view, Qt::LeftButton, {}, QPoint(300, 150));
        QTest::keyClick(view, Qt::Key_Right);
    }
}

void TestViews::largeWorkload()
{
    QElapsedTimer timer;
    timer.start();
    // MEMPLAN_VIEWS_WORKLOAD=FILE measures the same on a file instead (a large memory snapshot, shown
    // with its recorded placement, as the Studio shows it): docs/BENCHMARKS.md.
    const QByteArray file = qgetenv("MEMPLAN_VIEWS_WORKLOAD");
    Studio studio;
    if (file.isEmpty()) {
        open(studio.document, syntheticWorkload(20000, 4000), "greedy-by-size");
    } else {
        auto loaded = core::loadWorkload(file.toStdString(), {});
        QVERIFY2(loaded, loaded ? "" : loaded.error().message.c_str());
        auto workload = std::make_shared<const core::Workload>(std::move(*loaded));
        if (workload->recorded) {
            QVERIFY(core::validatePlan(workload->problem, workload->recorded->plan).ok());
            auto plan = workload->recorded->plan;
            studio.document.setWorkload(workload);
            studio.document.setPlan(std::move(plan));
        } else {
            open(studio.document, workload, "greedy-by-size");
        }
    }
    const auto buffers = static_cast<long long>(studio.document.workload()->problem.buffers.size());
    const core::Step steps = studio.document.steps();
    qDebug("%lld buffers: loaded and planned in %lld ms", buffers, static_cast<long long>(timer.restart()));
    studio.show(QSize(1400, 800));
    studio.curve->plot()->replot();
    qDebug("%lld buffers: views built and shown in %lld ms", buffers, static_cast<long long>(timer.restart()));
    for (QWidget* view : studio.views()) {
        // The memory curve replots on a queued event: replot it here, so its frames are counted too.
        const auto draw = [&] {
            if (view == studio.curve.get())
                studio.curve->plot()->replot();
            return view->grab().toImage();
        };
        timer.restart();
        QImage image = draw(); // fitted: everything visible
        const qint64 full = timer.restart();
        const double from = 0.25 * double(steps);
        studio.document.setVisibleSteps(from, from + 200);
        image = draw();
        const qint64 zoomed = timer.restart();
        for (int i = 0; i < 10; ++i) // pan
            studio.document.setVisibleSteps(from + 20 * i, from + 200 + 20 * i);
        image = draw();
        const qint64 panned = timer.restart();
        int hits = 0;
        if (auto* v = qobject_cast<TimelineView*>(view)) {
            const auto frame = v->frame();
            for (int x = frame.plot.left(); x < frame.plot.right(); x += 7)
                for (int y = frame.plot.top(); y < frame.plot.bottom(); y += 7)
                    hits += v->bufferUnder(QPointF(x, y)) >= 0;
        }
        const qint64 hitTest = timer.restart();
        qDebug("%s: full %lld ms, zoomed %lld ms, panned %lld ms, hit-test grid %lld ms (%d hits)",
            view->metaObject()->className(), static_cast<long long>(full), static_cast<long long>(zoomed),
            static_cast<long long>(panned), static_cast<long long>(hitTest), hits);
        QVERIFY(contentPixels(image) > 1000);
        studio.document.fitVisibleSteps();
    }
}

// Renders every view of the built-in examples to $MEMPLAN_VIEWS_DIR (for looking at them).
void TestViews::screenshots()
{
    const QString dir = qEnvironmentVariable("MEMPLAN_VIEWS_DIR");
    if (dir.isEmpty())
        QSKIP("set MEMPLAN_VIEWS_DIR to write screenshots");
    QDir().mkpath(dir);
    const std::pair<const char*, const char*> cases[] = { { "unet", "greedy-by-size" }, { "transformer", "coloring" },
        { "hotel", "first-fit" }, { "cnn", "greedy-by-size" } };
    for (const auto& [example, planner] : cases) {
        Studio studio;
        const auto workload = loadExample(std::string("example:") + example);
        open(studio.document, workload, planner);
        studio.show(QSize(1200, 700));
        const int target = largestBuffer(*workload);
        studio.document.selectBuffer(target);
        studio.document.setCursorStep(workload->problem.buffers[target].lifetime.start);
        for (QWidget* view : studio.views()) {
            const QString name
                = QStringLiteral("%1/%2-%3.png")
                      .arg(dir, QLatin1String(example), QString::fromLatin1(view->metaObject()->className()).toLower());
            QString error;
            QVERIFY2(exportImage(view, name, &error), qPrintable(error));
        }
        if (std::string(example) == "unet") {
            std::vector<core::Bytes> measured = studio.document.liveCurve();
            for (std::size_t i = 0; i < measured.size(); ++i)
                measured[i] = measured[i] * (105 + static_cast<core::Bytes>(i % 7)) / 100;
            studio.document.setMeasuredCurve(measured);
            studio.document.setBudget(studio.document.metrics().arena * 5 / 4);
            QVERIFY(studio.curve->exportImage(QStringLiteral("%1/unet-curve-overlay.png").arg(dir)));
            QVERIFY(studio.curve->exportImage(QStringLiteral("%1/unet-curve-overlay.svg").arg(dir)));
            QVERIFY(studio.arena->exportImage(QStringLiteral("%1/unet-arena.svg").arg(dir)));
            for (const char* svg : { "unet-arena", "unet-curve-overlay" }) { // read back, to look at
                QSvgRenderer renderer(QStringLiteral("%1/%2.svg").arg(dir, QLatin1String(svg)));
                QVERIFY(renderer.isValid());
                QImage back(QSize(1200, 700), QImage::Format_ARGB32);
                back.fill(Qt::white);
                QPainter painter(&back);
                renderer.render(&painter);
                painter.end();
                back.save(QStringLiteral("%1/%2-svg.png").arg(dir, QLatin1String(svg)));
            }
        }
        studio.bars->setColorMode(LifetimeBarsView::ColorMode::Color);
        QVERIFY(studio.bars->exportImage(QStringLiteral("%1/%2-bars-color.png").arg(dir, QLatin1String(example))));
    }
    {
        Studio studio;
        open(studio.document, syntheticWorkload(20000, 4000), "greedy-by-size");
        studio.show(QSize(1200, 700));
        for (QWidget* view : studio.views())
            QVERIFY(exportImage(view,
                QStringLiteral("%1/synthetic-%2.png")
                    .arg(dir, QString::fromLatin1(view->metaObject()->className()).toLower()),
                nullptr));
        studio.document.setVisibleSteps(1000, 1100);
        QVERIFY(studio.arena->exportImage(QStringLiteral("%1/synthetic-zoomed-arena.png").arg(dir)));
    }
}

QTEST_MAIN(TestViews)
#include "tst_views.moc"
