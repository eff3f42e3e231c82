// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "playcontroller.h"

#include "plandocument.h"
#include "planners/narration.h"

#include <QTimer>

#include <algorithm>
#include <cmath>

PlayController::PlayController(PlanDocument* document, QObject* parent)
    : QObject(parent)
    , m_document(document)
    , m_timer(new QTimer(this))
{
    m_timer->setInterval(static_cast<int>(std::lround(1000.0 / m_stepsPerSecond)));
    connect(m_timer, &QTimer::timeout, this, &PlayController::advance);
    connect(document, &PlanDocument::cursorChanged, this, &PlayController::narrate);
    connect(document, &PlanDocument::planChanged, this, &PlayController::narrate);
    connect(document, &PlanDocument::workloadChanged, this, &PlayController::pause);
}

bool PlayController::isPlaying() const { return m_timer->isActive(); }

void PlayController::play()
{
    if (!m_document->hasPlan() || m_document->steps() == 0 || isPlaying())
        return;
    const core::Step cursor = m_document->cursorStep();
    if (cursor < 0 || cursor >= m_document->steps() - 1)
        m_document->setCursorStep(0);
    m_timer->start();
    emit playingChanged(true);
}

void PlayController::pause()
{
    if (!isPlaying())
        return;
    m_timer->stop();
    emit playingChanged(false);
}

void PlayController::togglePlay() { isPlaying() ? pause() : play(); }

void PlayController::stepForward()
{
    if (m_document->steps() == 0)
        return;
    m_document->setCursorStep(std::min(m_document->cursorStep() + 1, m_document->steps() - 1));
}

void PlayController::stepBack()
{
    if (m_document->steps() == 0)
        return;
    const core::Step cursor = m_document->cursorStep();
    m_document->setCursorStep(cursor <= 0 ? 0 : cursor - 1);
}

void PlayController::setStepsPerSecond(double stepsPerSecond)
{
    m_stepsPerSecond = std::clamp(stepsPerSecond, 0.25, 100.0);
    m_timer->setInterval(static_cast<int>(std::lround(1000.0 / m_stepsPerSecond)));
}

void PlayController::advance()
{
    const core::Step cursor = m_document->cursorStep();
    if (cursor + 1 >= m_document->steps()) {
        pause();
        return;
    }
    m_document->setCursorStep(cursor + 1);
    if (m_document->cursorStep() + 1 >= m_document->steps())
        pause(); // reached the last step: nothing more to show
}

void PlayController::narrate()
{
    const core::Step step = m_document->cursorStep();
    QString line;
    if (m_document->hasPlan() && step >= 0) {
        const core::Workload& workload = *m_document->workload();
        std::string opName;
        if (workload.graph && step < workload.schedule.steps()) {
            const auto& op = workload.graph->ops[static_cast<std::size_t>(workload.schedule.order[step])];
            opName = op.name.empty() ? op.type : op.name;
        }
        line = QString::fromStdString(core::narrateStep(workload.problem, *m_document->plan(), step, opName));
    }
    if (line == m_narration)
        return;
    m_narration = line;
    emit narrationChanged(line);
}
