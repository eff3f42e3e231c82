// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "trace/tracebreakdown.h"

#include <QWidget>

#include <map>
#include <memory>
#include <vector>

class PlanDocument;
class QLabel;
struct RunMeasurement;

// A cuda run's GPU vs CPU check in words: "max relative error 3.1e-6 within 1e-4", "OFF by more than
// 1e-4 (max relative error 2e-2): output 'y' element 7: …", or why it was not compared.
QString gpuVsCpuText(const RunMeasurement& run);

// Key numbers of the current plan (tensors, steps, lower bound, arena, fragmentation, colors,
// planning time), the peak step with the five largest buffers alive there, and, while the step
// cursor is set, what is live at the cursor. Reads the PlanDocument; a buffer's name is a link
// ("buffer:N") that shows the whole name on hover and selects the buffer when clicked.
class SummaryPanel : public QWidget {
    Q_OBJECT
public:
    explicit SummaryPanel(PlanDocument* document, QWidget* parent = nullptr);

    // Everything the panel shows, as plain text (one "label: value" per line); for tests and copy.
    QString summaryText() const;

private:
    void refresh();
    int bufferOfLink(const QString& link) const; // -1 unless "buffer:N" names a buffer of the workload

    PlanDocument* m_document;
    QLabel* m_label;
    QString m_plain;
    // A memory snapshot's totals that do not change with the cursor or the plan, made once per
    // workload: refresh runs on every cursor move, and a large snapshot has millions of allocations.
    struct RecordedTotals {
        std::weak_ptr<const void> of; // the workload they were made for
        std::map<std::int64_t, int> streams; // stream -> allocations
        std::vector<core::PhaseName> phases;  // core::phaseNames over the live curve
    };
    RecordedTotals m_recordedTotals;
};
