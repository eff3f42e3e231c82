// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"
#include "timeaxis.h"

#include <QImage>

#include <cstdint>
#include <vector>

// The short-lived buffers of a plan binned once into a fixed grid of time × offset cells, so a
// zoomed-out arena layout covers millions of them in time proportional to its pixels, not to the
// buffers (a 7-million-allocation snapshot: one whole-axis frame walked every buffer, about 0.9 s).
// A buffer is short when it lives at most kShortBins time bins; zoomed out far enough (covers())
// each of them is under a pixel wide, so the arena layout merges it into its coverage image anyway,
// and painting the grid's cells instead draws the same pixels, rounded out to whole cells.
class DensityGrid {
public:
    static constexpr int kTimeBins = 8192;
    static constexpr int kOffsetBins = 2048;
    static constexpr int kShortBins = 2;

    // Bins every short buffer with a size, placed at `offsets`, on [0, steps) × [0, topBytes).
    // Without enough steps for a bin to hold several, nothing is binned (empty()).
    void build(const core::PlanProblem& problem, const std::vector<core::Bytes>& offsets, double topBytes);
    bool empty() const { return m_short.empty(); }
    // Whether buffer b is in the grid (and must not be drawn one by one when covers()).
    bool isShort(int buffer) const { return !m_short.empty() && m_short[static_cast<std::size_t>(buffer)]; }
    // Whether the grid may stand for its buffers at this zoom: each is then under a pixel wide.
    bool covers(const TimeAxis& time) const;
    // Sets `value` on every pixel of `image` (the plot's rectangle, its top-left at (left, top) in
    // the axes' pixels) that a cell of a short buffer reaches.
    void paint(QImage& image, int left, int top, const TimeAxis& time, const OffsetAxis& offset, QRgb value) const;

private:
    static constexpr int kWords = kOffsetBins / 64;
    double m_binSteps = 1;  // steps per time bin
    double m_binBytes = 1;  // bytes per offset bin
    std::vector<bool> m_short; // per buffer
    std::vector<std::uint64_t> m_cells; // kTimeBins columns of kOffsetBins bits
    bool m_any = false;
};
