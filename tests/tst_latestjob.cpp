// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// LatestJob (widgets/latestjob.h), the Studio's one pattern for background work: only the latest
// job's result reaches its owner, on the GUI thread; a dropped job's or a deleted owner's never does.
#include "latestjob.h"

#include <QSemaphore>
#include <QTest>
#include <QThread>

#include <atomic>
#include <functional>
#include <memory>

class TestLatestJob : public QObject {
    Q_OBJECT
private slots:
    void onlyTheLatestResultArrives();
    void dropDiscardsTheRunningJob();
    void deletedOwnerGetsNothing();
    void workSeesItsGeneration();
    void progressThrottleThins();
};

// The first job is held until a second one has started: its result arrives after, and is dropped.
void TestLatestJob::onlyTheLatestResultArrives()
{
    LatestJob job;
    QObject owner;
    QSemaphore release;
    QList<int> delivered;
    QThread* doneThread = nullptr;
    const auto first = job.start(&owner, [&release] { release.acquire(); return 1; }, [&](int v) { delivered << v; });
    const auto second = job.start(&owner, [] { return 2; }, [&](int v) {
        delivered << v;
        doneThread = QThread::currentThread();
    });
    QVERIFY(second > first);
    QVERIFY(!job.isCurrent(first));
    QVERIFY(job.isCurrent(second));
    release.release();
    QTRY_COMPARE(delivered, QList<int> { 2 });
    QCOMPARE(doneThread, QThread::currentThread()); // done runs on the GUI thread
    QTest::qWait(50); // the first job's result, posted late, must not arrive either
    QCOMPARE(delivered, QList<int> { 2 });
}

// Starts a job held until `between` has run, lets it finish, and says whether its result arrived.
bool deliveredAfter(LatestJob& job, QObject* owner, const std::function<void()>& between)
{
    QSemaphore release;
    std::atomic<bool> ran = false;
    bool delivered = false;
    job.start(owner, [&] { release.acquire(); ran = true; return 0; }, [&](int) { delivered = true; });
    between();
    release.release();
    if (!QTest::qWaitFor([&] { return ran.load(); }, 5000))
        qFatal("the job did not finish");
    QTest::qWait(50); // a result posted late must not arrive either
    return delivered;
}

void TestLatestJob::dropDiscardsTheRunningJob()
{
    LatestJob job;
    QObject owner;
    QVERIFY(deliveredAfter(job, &owner, [] { }));
    QVERIFY(!deliveredAfter(job, &owner, [&] { job.drop(); }));
}

void TestLatestJob::deletedOwnerGetsNothing()
{
    LatestJob job;
    auto owner = std::make_unique<QObject>();
    QVERIFY(!deliveredAfter(job, owner.get(), [&] { owner.reset(); }));
}

// Work may take its generation, for progress reports it guards with isCurrent().
void TestLatestJob::workSeesItsGeneration()
{
    LatestJob job;
    QObject owner;
    quint64 seen = 0;
    const auto generation = job.start(&owner, [](quint64 g) { return g; }, [&](quint64 g) { seen = g; });
    QTRY_COMPARE(seen, generation);
    QCOMPARE(job.generation(), generation);
}

void TestLatestJob::progressThrottleThins()
{
    ProgressThrottle throttle(60'000);
    QVERIFY(throttle.pass());      // the first report
    QVERIFY(!throttle.pass());     // too soon
    QVERIFY(throttle.pass(true));  // the final one always
    QVERIFY(!throttle.pass());
    ProgressThrottle eager(0);
    QVERIFY(eager.pass());
    QVERIFY(eager.pass());
}

QTEST_GUILESS_MAIN(TestLatestJob)
#include "tst_latestjob.moc"
