// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The KV-cache view: what it draws for a scenario, the block map, background runs (latest request
// wins, failures reported) and an offscreen render to PNG ($MEMPLAN_VIEWS_DIR, else a temporary folder).
#include "qcp.h" // first: see qcp.h

#include "kvblockmapview.h"
#include "kvcacheview.h"
#include "palette.h"

#include "scenarios/llmscenario.h"

#include <QDir>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

namespace {
using Bytes = core::Bytes;

std::shared_ptr<const core::LlmScenarioResult> run(const core::LlmConfig& config)
{
    auto result = core::runLlmScenario(config);
    if (!result)
        qFatal("%s", result.error().message.c_str());
    return std::make_shared<const core::LlmScenarioResult>(std::move(*result));
}

core::LlmConfig smallConfig()
{
    core::LlmConfig c;
    c.layers = 2;
    c.hidden = 128;
    c.heads = 4;
    c.batch = 6;
    c.promptRange = { 8, 64 };
    c.outputRange = { 8, 48 };
    c.maxLength = 128;
    c.blockTokens = 8;
    c.capacity = Bytes(1) << 20;
    return c;
}

int inkPixels(const QImage& image)
{
    const QRgb background = ViewPalette::background().rgb() & 0xFFFFFF;
    const QRgb plot = ViewPalette::plotBackground().rgb() & 0xFFFFFF;
    int count = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) {
            const QRgb pixel = image.pixel(x, y) & 0xFFFFFF;
            count += pixel != background && pixel != plot;
        }
    return count;
}

} // namespace

class TestKvCacheView : public QObject {
    Q_OBJECT
private slots:
    void drawsEveryPolicy();
    void blockMapCells();
    void backgroundRunsLatestWins();
    void failureIsReported();
    void clickPicksBlockMapStep();
    void rendersToPng();
};

void TestKvCacheView::drawsEveryPolicy()
{
    auto config = smallConfig();
    config.capacity = 700 * 1024; // five contiguous regions of 128 KiB for six sequences; paged fits
    const auto result = run(config);
    KvCacheView view;
    view.setResult(result, core::pagedBlockMap(config, KvCacheView::defaultBlockMapStep(*result)));
    QCustomPlot* plot = view.plot();
    QCOMPARE(plot->graphCount(), 6); // in use, 3 × reserved, capacity, activation arena
    QStringList names;
    for (int i = 0; i < plot->graphCount(); ++i) {
        QVERIFY(plot->legend->hasItemWithPlottable(plot->graph(i)));
        names << plot->graph(i)->name();
    }
    const auto all = names.join(QLatin1Char('|'));
    for (const char* text : { "in use", "contiguous reserved", "paged reserved", "two-level reserved", "capacity 700 KiB", "activation arena" })
        QVERIFY2(all.contains(QLatin1String(text)), qPrintable(all));
    // The refusal is marked with a label naming the step and sequence.
    bool refusalLabel = false;
    for (int i = 0; i < plot->itemCount(); ++i)
        if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)))
            refusalLabel |= text->text().contains(QStringLiteral("contiguous refused: step 0, sequence 5"));
    QVERIFY(refusalLabel);
    // The paged reserved curve is a step graph over every step plus its closing point.
    QVERIFY(!result->policies[1].run.refusal);
    QCOMPARE(plot->graph(2)->data()->size(), result->steps + 1);
    QVERIFY(plot->graph(1)->data()->isEmpty()); // contiguous refused at step 0: nothing to draw
}

void TestKvCacheView::blockMapCells()
{
    const auto config = smallConfig();
    KvBlockMapView map;
    map.resize(600, 200);
    const auto blocks = core::pagedBlockMap(config, 2);
    map.setBlockMap(blocks, config.batch);
    QVERIFY(!blocks.owners.empty());
    QCOMPARE(map.blockAt(QPoint(9, 8 + 20 + 1)), 0); // first cell, top left of the grid
    QCOMPARE(map.blockAt(QPoint(1, 1)), -1);
    const QImage image = map.grab().toImage();
    QVERIFY(inkPixels(image) > 2000);
}

void TestKvCacheView::backgroundRunsLatestWins()
{
    KvCacheView view;
    QSignalSpy ready(&view, &KvCacheView::scenarioReady);
    auto first = smallConfig();
    first.batch = 3;
    auto second = smallConfig();
    second.batch = 5;
    view.requestScenario(first);
    view.requestScenario(second);
    QVERIFY(view.isBusy());
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);
    QTest::qWait(200); // a stale first result must not arrive later
    QCOMPARE(ready.count(), 1);
    QVERIFY(!view.isBusy());
    QVERIFY(view.result());
    QCOMPARE(view.result()->config.batch, 5);
    QVERIFY(!view.blockMapView()->blockMap().owners.empty());
}

void TestKvCacheView::failureIsReported()
{
    KvCacheView view;
    QSignalSpy failed(&view, &KvCacheView::scenarioFailed);
    auto bad = smallConfig();
    bad.kvHeads = 3;
    view.requestScenario(bad);
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
    QVERIFY2(failed.first().first().toString().contains(QStringLiteral("kv heads (3)")), qPrintable(failed.first().first().toString()));
    QVERIFY(!view.result());
}

void TestKvCacheView::clickPicksBlockMapStep()
{
    const auto config = smallConfig();
    const auto result = run(config);
    KvCacheView view;
    view.resize(1000, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setResult(result, core::pagedBlockMap(config, 0));
    view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    QSignalSpy mapReady(&view, &KvCacheView::blockMapReady);
    QCPAxisRect* kvRect = view.plot()->axisRect(0);
    const core::Step target = result->steps / 2;
    const double x = kvRect->axis(QCPAxis::atBottom)->coordToPixel(target + 0.5);
    const double y = kvRect->center().y();
    QTest::mouseClick(view.plot(), Qt::LeftButton, {}, QPoint(static_cast<int>(x), static_cast<int>(y)));
    QTRY_COMPARE_WITH_TIMEOUT(mapReady.count(), 1, 30000);
    QCOMPARE(view.blockMapView()->blockMap().step, target);
}

void TestKvCacheView::rendersToPng()
{
    QString dir = qEnvironmentVariable("MEMPLAN_VIEWS_DIR");
    QTemporaryDir temporary;
    if (dir.isEmpty())
        dir = temporary.path();
    QDir().mkpath(dir);
    struct Case {
        const char* file;
        core::LlmConfig config;
    };
    core::LlmConfig staggered; // 32 layers, hidden 4096: a 7B-class model
    staggered.batch = 48;
    staggered.arrivalInterval = 6;
    staggered.capacity = Bytes(40) << 30;
    for (const auto& [file, config] : { Case { "kvcache.png", core::LlmConfig {} }, Case { "kvcache-staggered.png", staggered } }) {
        const auto result = run(config);
        KvCacheView view;
        view.resize(1200, 820);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setResult(result, core::pagedBlockMap(config, KvCacheView::defaultBlockMapStep(*result)));
        const QString path = dir + QLatin1Char('/') + QLatin1String(file);
        QString error;
        QVERIFY2(view.exportImage(path, &error), qPrintable(error));
        QImage image(path);
        QCOMPARE(image.size(), QSize(1200, 820));
        QVERIFY2(inkPixels(image) > 1200 * 820 / 20, file);
    }
}

QTEST_MAIN(TestKvCacheView)
#include "tst_kvcacheview.moc"
