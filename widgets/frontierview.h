// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "strategies/frontier.h"

#include <QWidget>

#include <atomic>
#include <memory>

class QCustomPlot;
class QCPGraph;
class QLabel;
class QProgressBar;
class QPushButton;
class QMouseEvent;

// The strategy frontier of the model on display (core::computeFrontier): peak memory against the
// estimated extra time of a step, one blue point per frontier plan joined in order, the budget
// search's 64 on/off combinations and the √n checkpoint policy as grey points for contrast, the
// model with no strategy as a black diamond, and the plan on display ringed in amber. "Compute"
// runs it in the background with progress and Cancel; clicking a frontier point emits pointChosen
// (the window applies it through the strategy panel). Extra time reads as a share of the step's
// estimated time (ms when the step has no estimate); the tooltip gives both and what each point does.
class FrontierView : public QWidget {
    Q_OBJECT
public:
    explicit FrontierView(QWidget* parent = nullptr);
    ~FrontierView() override;

    // The untransformed workload; another one drops the frontier (and stops a computation).
    void setOriginal(std::shared_ptr<const core::Workload> original);
    void setPlannerName(const QString& name); // the frontier plans each point with it
    void setDevice(const core::DeviceProfile& device);
    void compute();
    void cancel();
    bool isBusy() const { return m_busy; }
    std::shared_ptr<const core::Frontier> frontier() const { return m_frontier; }
    // Rings the plan on display: its arena and the extra seconds of the strategies behind it.
    void setCurrent(core::Bytes peak, double extraSeconds);
    void clearCurrent();
    // The pixel of frontier point i (for tests); chooses it as a click there would.
    QPointF pointPosition(int index) const;
    void choosePoint(int index);
    QCustomPlot* plot() const { return m_plot; }
    QString statusText() const;
    QSize sizeHint() const override { return { 900, 420 }; }

signals:
    void frontierReady(std::shared_ptr<const core::Frontier> frontier); // null: dropped
    void pointChosen(std::shared_ptr<const core::FrontierPoint> point);
    void busyChanged(bool busy);

private:
    void onFinished(quint64 generation, std::shared_ptr<const core::Frontier> frontier, const QString& error);
    void onProgress(quint64 generation, double fraction, const QString& what);
    void redraw();
    double xOf(double extraSeconds) const; // the x axis value of an extra time
    int pointAt(const QPointF& pos) const; // frontier point under the mouse, -1 when none
    void onPlotClick(QMouseEvent* event);
    void onPlotMove(QMouseEvent* event);
    void setBusy(bool busy);

    QPushButton* m_compute;
    QPushButton* m_cancel;
    QProgressBar* m_progress;
    QLabel* m_status;
    QCustomPlot* m_plot;
    QCPGraph* m_line;       // frontier points, joined
    QCPGraph* m_heuristics; // grey
    QCPGraph* m_base;       // no strategy
    QCPGraph* m_current;    // the plan on display
    std::shared_ptr<const core::Workload> m_original;
    std::shared_ptr<const core::Frontier> m_frontier;
    std::string m_planner { core::kDefaultPlanner };
    core::DeviceProfile m_device = core::defaultDevice();
    std::shared_ptr<std::atomic<bool>> m_cancelFlag;
    quint64 m_generation = 0;
    bool m_busy = false;
    bool m_hasCurrent = false;
    core::Bytes m_currentPeak = 0;
    double m_currentExtra = 0;
    double m_divisor = 1; // bytes per unit of the y axis
};
