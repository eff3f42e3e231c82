// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "cost/device.h"
#include "scenarios/llmscenario.h"

#include <QString>
#include <QElapsedTimer>
#include <QWidget>

#include <vector>

class ChipTeachingView;
class KvCacheView;
class PlanDocument;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

// The Studio's two scenario windows (Scenarios menu). Each is a top-level window over one view that
// already does its work off the UI thread; these windows only collect settings and pass them on.

// LLM decode with a paged KV cache: the model and batch settings (with presets of well-known model
// shapes) on the left, KvCacheView on the right. Settings are checked with validateLlmConfig before
// a run; a bad value or a failed run shows one red line and keeps the last result on screen.
class LlmScenarioWindow : public QWidget {
    Q_OBJECT
public:
    explicit LlmScenarioWindow(QWidget* parent = nullptr);

    core::LlmConfig config() const; // from the form
    void setConfig(const core::LlmConfig& config);
    KvCacheView* view() const { return m_view; }
    QLabel* statusLabel() const { return m_status; }
    QPushButton* runButton() const { return m_run; }

public slots:
    void run(); // validates the form and starts the scenario in the background

private:
    void applyPreset(int index);
    void markStale();               // a field changed after a run: the chart says it is out of date
    void setRunning(bool running);  // the Run button becomes Cancel while a scenario runs

    QComboBox* m_preset = nullptr;
    QSpinBox* m_layers = nullptr;
    QSpinBox* m_hidden = nullptr;
    QSpinBox* m_heads = nullptr;
    QSpinBox* m_kvHeads = nullptr;
    QSpinBox* m_batch = nullptr;
    QSpinBox* m_promptMin = nullptr;
    QSpinBox* m_promptMax = nullptr;
    QSpinBox* m_outputMin = nullptr;
    QSpinBox* m_outputMax = nullptr;
    QSpinBox* m_maxLength = nullptr;
    QSpinBox* m_blockTokens = nullptr;
    QSpinBox* m_arrival = nullptr;
    QDoubleSpinBox* m_capacityGiB = nullptr;
    QComboBox* m_planner = nullptr;
    QPushButton* m_run = nullptr;
    QLabel* m_status = nullptr;
    KvCacheView* m_view = nullptr;
    QElapsedTimer m_clock;          // since the running scenario started: the progress estimate
    bool m_applyingPreset = false;  // fields set by a preset do not mark the chart stale
};

// A fixed-memory accelerator (or any device profile) for the model on display: a device choice
// and ChipTeachingView (architecture, performance, multi-chip). Follows the document: a new model
// (or a strategy rewrite of it) re-partitions. Allocation problems without a graph show why not.
class AcceleratorWindow : public QWidget {
    Q_OBJECT
public:
    explicit AcceleratorWindow(PlanDocument* document, QWidget* parent = nullptr);

    ChipTeachingView* view() const { return m_view; }
    QComboBox* deviceCombo() const { return m_device; }

private:
    void refresh();

    PlanDocument* m_document;
    std::vector<core::DeviceProfile> m_devices;
    QComboBox* m_device = nullptr;
    QLabel* m_caption = nullptr;
    ChipTeachingView* m_view = nullptr;
};
