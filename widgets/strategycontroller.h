// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "strategyjob.h"

#include <QObject>
#include <QString>

#include <memory>
#include <optional>

// Runs StrategyRequests on QThreadPool::globalInstance(), never on the UI thread. The strategies
// cannot be interrupted, so requests are coalesced instead of cancelled: at most one job runs; a
// request made meanwhile waits as the single pending one (a newer request replaces it), and the
// running job's result is dropped on arrival when anything newer was requested (generation counter).
// Only the latest request's signal is ever emitted. Lives on the UI thread. Not a LatestJob
// (widgets/latestjob.h): every arrival, stale or not, must be seen, to start the pending request or
// clear the busy flag, where a LatestJob drops stale results unseen.
class StrategyController : public QObject {
    Q_OBJECT
public:
    explicit StrategyController(QObject* parent = nullptr);

    bool isBusy() const { return m_running; }

public slots:
    void request(std::shared_ptr<const core::Workload> original, const StrategyRequest& request);
    // Forgets the running and pending requests; no signal follows for them.
    void cancel();

signals:
    void busyChanged(bool busy);
    void finished(std::shared_ptr<const StrategyOutcome> outcome);
    void failed(const QString& message);

private:
    struct Job {
        std::shared_ptr<const core::Workload> original;
        StrategyRequest request;
    };
    void start(Job job);
    void setRunning(bool running);

    std::optional<Job> m_pending;
    quint64 m_generation = 0;
    bool m_running = false;
};
