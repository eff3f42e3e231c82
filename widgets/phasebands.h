// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "stepclock.h"
#include "trace/tracephases.h"

#include <QStringList>

#include <vector>

class QCustomPlot;
class QCPItemRect;
class QCPItemText;

// A memory snapshot's annotated phases (record_function regions: "forward", "backward", ...) drawn
// behind a plot's curves as light bands over their steps, one tint per name, each named inside it
// where the band is wide enough for its name (fit() after every zoom or resize).
// Drawn: the phases one level in (those inside an outermost phase), and outermost phases with
// nothing inside; at most kMostBands of them (else the outermost alone, else none).
class PhaseBands {
public:
    explicit PhaseBands(QCustomPlot* plot);
    static constexpr std::size_t kMostBands = 600;

    // Replaces the bands, placed on the x axis by `clock`; {} removes them.
    void set(const std::vector<core::TracePhase>& phases, const StepClock& clock);
    // Shows each name where its band has room on the plot's current x range drawn `plotPixels` wide.
    void fit(int plotPixels);
    QStringList names() const; // the bands drawn, in step order (for tests)
    int labelsShown() const;   // names visible after the last fit() (for tests)

private:
    QCustomPlot* m_plot;
    struct Band {
        QCPItemRect* rect;
        QCPItemText* label;
        double begin, end;
    };
    std::vector<Band> m_bands;
};
