// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <QVector>

#include <vector>

// What the memory curve hands QCustomPlot for a step curve at the current zoom: plain values, tested
// on their own.
struct StepPoints {
    QVector<double> keys;
    QVector<double> values;
    QVector<double> lows; // one point per column: the least of its steps; empty when every step is drawn
};

// The step curve `values` (step i holds values[i] over [i, i+1)) as step-left points for the visible
// steps [first, last] drawn `pixels` wide:
// - every step, plus the point closing the last one, when the curve has at most two steps per pixel;
// - else, when the visible steps are at most two per pixel, those steps (one more each side, and the
//   closing point when the last step is visible);
// - else one point per pixel column holding the most any of its steps holds (so a peak is never lost
//   to sampling), then a closing point at the end of the visible data; `lows` holds the least of each
//   column's steps at the same keys, so a view can show the range each column spans.
// Why: a million-step snapshot's curve handed to QCustomPlot whole is sampled to a min and a max per
// column, a zigzag the antialiased rasterizer fills in time quadratic in its crossings per row
// (seconds per frame); at most two points per column draw in milliseconds.
// `first` and `last` are x positions: steps, or with `starts` (values.size() + 1 ascending positions, the
// last closing the last step: StepClock::starts) wherever those put the steps; columns are even in x.
StepPoints stepEnvelope(const std::vector<double>& values, double first, double last, int pixels,
    const std::vector<double>& starts = {});
