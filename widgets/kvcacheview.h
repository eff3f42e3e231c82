// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "latestjob.h"

#include "scenarios/llmscenario.h"

#include <QWidget>

#include <atomic>
#include <memory>

class KvBlockMapView;
class QCPAxisRect;
class QCPGraph;
class QCPItemStraightLine;
class QCPTextElement;
class QCustomPlot;
class QMouseEvent;

// The LLM decode scenario over its decode steps (QCustomPlot): on top, KV-cache bytes — tokens
// stored (in use; the same for every policy until one refuses), each policy's reserved bytes in its
// own colour, the capacity line and a mark where a policy refused; beneath it the per-step
// activation arena (a scoped arena, log scale: a prefill step is far larger than a decode step);
// at the bottom the paged pool's block map at the chosen step (a click on the plot picks the step).
// Scenario runs and block maps are computed on QThreadPool::globalInstance(), never on the UI
// thread; only the latest request's result is shown (LatestJob; a new scenario run also cancels the
// older one).
class KvCacheView : public QWidget {
    Q_OBJECT
public:
    explicit KvCacheView(QWidget* parent = nullptr);
    ~KvCacheView() override;

    // Runs core::runLlmScenario in the background; scenarioReady or scenarioFailed follows.
    void requestScenario(const core::LlmConfig& config, const QString& planner = QString::fromUtf8(core::kDefaultPlanner.data(), qsizetype(core::kDefaultPlanner.size())));
    // Shows a computed result and the block map to go with it.
    void setResult(std::shared_ptr<const core::LlmScenarioResult> result, const core::KvBlockMap& blockMap);
    // Recomputes the block map for `step` in the background (blockMapReady follows).
    void setBlockMapStep(core::Step step);
    // The step of the paged pool's peak reserved bytes: where the block map is most telling.
    static core::Step defaultBlockMapStep(const core::LlmScenarioResult& result);

    // Stops the running scenario: scenarioCancelled follows at once, and its result is never shown.
    void cancelScenario();
    // The chart no longer matches the settings on the form (they changed since its run): the title says so.
    void setStale(bool stale);
    bool isStale() const { return m_stale; }

    const core::LlmScenarioResult* result() const { return m_result.get(); }
    bool isBusy() const { return m_busy; }
    QCustomPlot* plot() const { return m_plot; }
    KvBlockMapView* blockMapView() const { return m_blockMap; }
    // The whole view as PNG (a widget grab).
    bool exportImage(const QString& path, QString* error = nullptr);

    QSize sizeHint() const override { return { 1100, 760 }; }

signals:
    void scenarioReady();
    void scenarioFailed(const QString& message);
    void scenarioCancelled();
    // Decode steps planned of all, at most ~10 times a second while a scenario runs.
    void scenarioProgress(int done, int total);
    void blockMapReady();

private:
    void rebuild();
    void placeCursor(core::Step step);
    void onPress(QMouseEvent* event);

    QCustomPlot* m_plot;
    KvBlockMapView* m_blockMap;
    QCPTextElement* m_title;
    QCPAxisRect* m_kvRect;
    QCPAxisRect* m_arenaRect;
    QCPItemStraightLine* m_cursor;
    std::shared_ptr<const core::LlmScenarioResult> m_result;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    LatestJob m_job;    // scenario runs: only the latest request's result is shown
    LatestJob m_mapJob; // block maps: likewise; a new result drops the pending one
    bool m_busy = false;
    bool m_stale = false;
};
