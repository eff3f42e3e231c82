// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <QObject>
#include <QString>

class PlanDocument;
class QTimer;

// Play mode for teaching: a timer moves the document's step cursor through the schedule and, for
// every step the cursor lands on (by playing, stepping or any view), emits one narration line
// (core::narrateStep: allocations, frees and reuse). Stops by itself at the last step.
class PlayController : public QObject {
    Q_OBJECT
public:
    explicit PlayController(PlanDocument* document, QObject* parent = nullptr);

    bool isPlaying() const;
    double stepsPerSecond() const { return m_stepsPerSecond; }
    QString narration() const { return m_narration; }

public slots:
    void play(); // from the cursor, or from step 0 when there is none or it is at the end
    void pause();
    void togglePlay();
    void stepForward();
    void stepBack();
    void setStepsPerSecond(double stepsPerSecond); // clamped to [0.25, 100]

signals:
    void playingChanged(bool playing);
    void narrationChanged(const QString& line);

private:
    void advance();
    void narrate();

    PlanDocument* m_document;
    QTimer* m_timer;
    double m_stepsPerSecond = 2.0;
    QString m_narration;
};
