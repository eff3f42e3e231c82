// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The Studio's Scenarios menu, offscreen: the LLM decode window runs its first preset, rejects a bad
// setting with one line and keeps the last result; the accelerator window follows the model on
// display, partitions it for the chosen device and explains an allocation problem.
// MEMPLAN_VIEWS_DIR=DIR also writes llm-scenario.png and accelerator.png there for a look.
#include "qcp.h" // first: see qcp.h

#include "chipteachingview.h"
#include "kvcacheview.h"
#include "mainwindow.h"
#include "plandocument.h"
#include "scenariowindows.h"
#include "stagesview.h"

#include "scenarios/multichip.h"

#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include <memory>

namespace {
constexpr int kTimeout = 60000; // generous: ctest may run under load

void maybeSave(QWidget* window, const QString& name)
{
    const QString dir = qEnvironmentVariable("MEMPLAN_VIEWS_DIR");
    if (dir.isEmpty())
        return;
    QDir().mkpath(dir);
    QTest::qWait(300); // queued replots and layouts land before the grab
    QVERIFY(window->grab().save(QDir(dir).filePath(name)));
}
} // namespace

class TestScenarioWindows : public QObject {
    Q_OBJECT
private slots:
    void llmWindowRunsAndRejectsBadSettings();
    void acceleratorFollowsTheModel();
};

void TestScenarioWindows::llmWindowRunsAndRejectsBadSettings()
{
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    QVERIFY(!window.llmScenarioWindow());
    window.showLlmScenario(); // runs the small first preset at once
    auto* llm = window.llmScenarioWindow();
    QVERIFY(llm);
    QSignalSpy ready(llm->view(), &KvCacheView::scenarioReady);
    QVERIFY(ready.wait(kTimeout));
    const auto* result = llm->view()->result();
    QVERIFY(result);
    auto config = llm->config();
    QCOMPARE(result->config.layers, 4);
    QCOMPARE(result->policies.size(), std::size_t(3));
    QVERIFY(result->steps > 0);
    // 4 layers x 8 heads x 64 dims x 2 (K and V) x 2 bytes.
    QCOMPARE(result->config.kvBytesPerToken(), core::Bytes(2 * 4 * 8 * 64 * 2));
    QVERIFY(llm->runButton()->isEnabled());
    QVERIFY(llm->statusLabel()->text().contains(QStringLiteral("decode steps")));
    maybeSave(llm, QStringLiteral("llm-scenario.png"));
    // One unit on the KV chart: the axis names it; a capacity far above every peak is named at the
    // top instead of flattening the curves (the classroom preset: 256 MiB against a few tens of MiB).
    QCPAxis* kvAxis = llm->view()->plot()->axisRect(0)->axis(QCPAxis::atLeft);
    QCOMPARE(kvAxis->label(), QStringLiteral("KV cache (MiB)"));
    QVERIFY(kvAxis->range().upper < double(result->config.capacity));
    QVERIFY(!llm->view()->isStale());

    // Editing a field marks the chart stale; Run makes it current again.
    config = llm->config();
    config.batch = 9;
    llm->setConfig(config);
    QVERIFY(llm->view()->isStale());
    ready.clear();
    llm->run();
    QCOMPARE(llm->runButton()->text(), QStringLiteral("Cancel"));
    QVERIFY(ready.wait(kTimeout));
    QVERIFY(!llm->view()->isStale());
    QCOMPARE(llm->runButton()->text(), QStringLiteral("Run scenario"));
    result = llm->view()->result();

    // KV heads that do not divide the heads: one red line naming the rule, no run, result kept.
    config = llm->config();
    config.kvHeads = 5;
    llm->setConfig(config);
    llm->run();
    QVERIFY2(llm->statusLabel()->text().contains(QStringLiteral("kv heads")), qPrintable(llm->statusLabel()->text()));
    QVERIFY(llm->runButton()->isEnabled());
    QCOMPARE(llm->view()->result(), result);

    // A bigger batch gives a new result with more KV memory in use (the old result is freed with it).
    const core::Bytes smallBatchPeak = result->policies[0].run.peakInUse;
    config.kvHeads = 0;
    config.batch = 16;
    llm->setConfig(config);
    ready.clear();
    llm->run();
    QCOMPARE(llm->runButton()->text(), QStringLiteral("Cancel"));
    QVERIFY(ready.wait(kTimeout));
    QCOMPARE(llm->view()->result()->config.batch, 16);
    QVERIFY(llm->view()->result()->policies[0].run.peakInUse > smallBatchPeak);

    // Choosing a preset runs it: back to the classroom one from the edited batch of 16.
    auto* preset = llm->findChild<QComboBox*>(QStringLiteral("llmPreset"));
    QVERIFY(preset);
    ready.clear();
    emit preset->activated(0);
    QVERIFY(ready.wait(kTimeout));
    QCOMPARE(llm->view()->result()->config.batch, 8);
    QVERIFY(!llm->view()->isStale());
    config = llm->config();

    // Cancel: the button says so, the chart keeps the last finished run and says it is out of date.
    const auto* finished = llm->view()->result();
    config.batch = 64;
    llm->setConfig(config);
    QSignalSpy cancelled(llm->view(), &KvCacheView::scenarioCancelled);
    llm->run();
    llm->runButton()->click(); // "Cancel"
    QCOMPARE(cancelled.count(), 1);
    QCOMPARE(llm->runButton()->text(), QStringLiteral("Run scenario"));
    QVERIFY2(llm->statusLabel()->text().startsWith(QStringLiteral("Cancelled")), qPrintable(llm->statusLabel()->text()));
    QCOMPARE(llm->view()->result(), finished);
    QVERIFY(llm->view()->isStale());
    QTest::qWait(200); // a cancelled run's result, should it arrive, is dropped
    QCOMPARE(llm->view()->result(), finished);
}

void TestScenarioWindows::acceleratorFollowsTheModel()
{
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    QSignalSpy planned(&window, &MainWindow::planDisplayed);
    window.openFile(QStringLiteral("example:cnn"));
    QVERIFY(planned.wait(kTimeout));

    window.showAccelerator();
    auto* chips = window.acceleratorWindow();
    QVERIFY(chips);
    QVERIFY(chips->deviceCombo()->currentText().startsWith(QStringLiteral("groq-lpu")));
    // Sizes in the main window's units: a 230 MB chip reads 219 MiB (the vendor's figure in the tooltip).
    QVERIFY2(chips->deviceCombo()->currentText().endsWith(QStringLiteral("MiB)")), qPrintable(chips->deviceCombo()->currentText()));
    QVERIFY(chips->deviceCombo()->itemData(chips->deviceCombo()->currentIndex(), Qt::ToolTipRole).toString().contains(QStringLiteral("230 MB as quoted")));
    auto* stages = chips->view()->stagesView();
    QSignalSpy partitioned(stages, &StagesView::partitionReady);
    if (!stages->partition())
        QVERIFY(partitioned.wait(kTimeout));
    QVERIFY(stages->partition());
    QCOMPARE(stages->partition()->device.name, std::string("groq-lpu"));
    QCOMPARE(stages->partition()->steps, window.document()->steps());
    for (const auto& stage : stages->partition()->stages)
        QVERIFY(stage.usedBytes() <= stages->partition()->device.memoryCapacity);
    chips->view()->setMode(ChipTeachingView::Mode::MultiChip);
    maybeSave(chips, QStringLiteral("accelerator.png"));

    // A new model re-partitions; an allocation problem is explained rather than partitioned.
    partitioned.clear();
    window.openFile(QStringLiteral("example:transformer"));
    QVERIFY(planned.wait(kTimeout));
    if (stages->partition()->steps != window.document()->steps())
        QVERIFY(partitioned.wait(kTimeout));
    QCOMPARE(stages->partition()->steps, window.document()->steps());

    window.openFile(QStringLiteral("example:five-tensors"));
    QVERIFY(planned.wait(kTimeout));
    QVERIFY(window.document()->workload() && !window.document()->workload()->graph);
    const auto captions = chips->findChildren<QLabel*>();
    const bool explained = std::any_of(captions.begin(), captions.end(),
        [](const QLabel* label) { return label->text().contains(QStringLiteral("need a model graph")); });
    QVERIFY(explained);
}

QTEST_MAIN(TestScenarioWindows)
#include "tst_scenariowindows.moc"
