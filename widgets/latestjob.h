// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QThreadPool>

#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

// One kind of background job of which only the latest request counts (a load, a plan, a partition,
// a run): the Studio's one place for the generation-counter pattern (docs/ARCHITECTURE.md,
// background work). The contract:
// - start() bumps the generation and runs `work` on a thread pool (QThreadPool::globalInstance()
//   unless another is given). `work` may take the job's generation (quint64) as its argument, for
//   progress reports that it posts itself (guard them with isCurrent()).
// - Its result is posted to the GUI thread (queued to QCoreApplication::instance()), and `done(result)`
//   runs there only when `owner` still exists and no newer start() or drop() happened: a stale result
//   is dropped, never delivered. Extra staleness conditions belong inside `done`.
// - Work is never interrupted by the helper: it runs to its end, unless it carries a core::CancelToken
//   that the caller cancels (then it ends early and its result is normally stale anyway).
// - The counter is only read and written on the GUI thread; it lives in a shared_ptr so the posted
//   result can check it. `work` and `done` must be copyable (QThreadPool takes a std::function).
class LatestJob {
public:
    LatestJob() = default;
    Q_DISABLE_COPY_MOVE(LatestJob)

    // Runs `work()` (or `work(generation)`) on `pool`, then `done(result)` on the GUI thread if the
    // job is still current and `owner` still exists. Returns the job's generation.
    template <class Work, class Done>
    quint64 start(QObject* owner, Work work, Done done, QThreadPool* pool = QThreadPool::globalInstance())
    {
        static_assert(!std::is_void_v<Result<Work>>, "work must return its result");
        const quint64 generation = ++*m_generation;
        pool->start([owner = QPointer<QObject>(owner), counter = m_generation, generation, work = std::move(work),
                        done = std::move(done)]() mutable {
            auto result = std::make_shared<Result<Work>>(run(work, generation)); // worker thread
            QMetaObject::invokeMethod(
                QCoreApplication::instance(),
                [owner, counter, generation, result, done = std::move(done)]() mutable {
                    if (!owner || generation != *counter)
                        return; // stale, or the owner is gone
                    done(std::move(*result));
                },
                Qt::QueuedConnection);
        });
        return generation;
    }

    // A newer generation without a job: whatever is running will be dropped on arrival.
    void drop() { ++*m_generation; }
    bool isCurrent(quint64 generation) const { return generation == *m_generation; }
    quint64 generation() const { return *m_generation; }

private:
    template <class Work>
    static decltype(auto) run(Work& work, quint64 generation)
    {
        if constexpr (std::is_invocable_v<Work&, quint64>)
            return work(generation);
        else
            return work();
    }
    template <class Work>
    using Result = std::decay_t<decltype(run(std::declval<Work&>(), quint64()))>;

    std::shared_ptr<quint64> m_generation = std::make_shared<quint64>(0);
};

// A job's progress reports, thinned so a fast job cannot flood the GUI thread's queue: pass() lets
// the first call through, then one per `intervalMs`, and always a forced one (the final report).
// Lives on the worker thread with the job.
class ProgressThrottle {
public:
    explicit ProgressThrottle(qint64 intervalMs) : m_intervalMs(intervalMs) { }
    bool pass(bool force = false)
    {
        if (m_clock && m_clock->elapsed() < m_intervalMs && !force)
            return false;
        if (!m_clock)
            m_clock.emplace();
        m_clock->start();
        return true;
    }

private:
    qint64 m_intervalMs;
    std::optional<QElapsedTimer> m_clock;
};
