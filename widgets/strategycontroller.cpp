// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategycontroller.h"

#include <QCoreApplication>
#include <QPointer>
#include <QThreadPool>

StrategyController::StrategyController(QObject* parent)
    : QObject(parent)
{
    qRegisterMetaType<std::shared_ptr<const StrategyOutcome>>();
}

void StrategyController::setRunning(bool running)
{
    if (running == m_running)
        return;
    m_running = running;
    emit busyChanged(running);
}

void StrategyController::request(std::shared_ptr<const core::Workload> original, const StrategyRequest& request)
{
    ++m_generation; // whatever runs now is stale
    Job job { std::move(original), request };
    if (m_running)
        m_pending = std::move(job);
    else
        start(std::move(job));
}

void StrategyController::cancel()
{
    ++m_generation;
    m_pending.reset();
}

void StrategyController::start(Job job)
{
    setRunning(true);
    const quint64 generation = m_generation;
    QThreadPool::globalInstance()->start([self = QPointer(this), generation, job = std::move(job)] {
        auto result = runStrategyJob(job.original, job.request); // worker thread: pure core code
        std::shared_ptr<const StrategyOutcome> outcome;
        QString error;
        if (result)
            outcome = std::make_shared<const StrategyOutcome>(std::move(*result));
        else
            error = QString::fromStdString(result.error().message);
        // Posted to the application object so a controller deleted meanwhile is noticed on the UI thread.
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, generation, outcome = std::move(outcome), error] {
                if (!self)
                    return;
                if (self->m_pending) {
                    Job next = std::move(*self->m_pending);
                    self->m_pending.reset();
                    self->start(std::move(next)); // still running: busy stays on
                    return;
                }
                self->setRunning(false);
                if (generation != self->m_generation)
                    return; // cancelled
                if (outcome)
                    emit self->finished(outcome);
                else
                    emit self->failed(error);
            },
            Qt::QueuedConnection);
    });
}
