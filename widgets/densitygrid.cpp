// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "densitygrid.h"

#include <algorithm>
#include <cmath>

void DensityGrid::build(const core::PlanProblem& problem, const std::vector<core::Bytes>& offsets, double topBytes)
{
    m_short.clear();
    m_cells.clear();
    m_any = false;
    const auto& buffers = problem.buffers;
    // Fewer than four steps a bin: the buffers are few enough per frame to draw one by one.
    if (problem.steps < 4 * kTimeBins || offsets.size() != buffers.size() || topBytes <= 0)
        return;
    m_binSteps = static_cast<double>(problem.steps) / kTimeBins;
    m_binBytes = topBytes / kOffsetBins;
    m_short.assign(buffers.size(), false);
    m_cells.assign(static_cast<std::size_t>(kTimeBins) * kWords, 0);
    for (std::size_t i = 0; i < buffers.size(); ++i) {
        const auto& b = buffers[i];
        if (b.size <= 0 || static_cast<double>(b.lifetime.end - b.lifetime.start) > kShortBins * m_binSteps)
            continue;
        m_short[i] = true;
        m_any = true;
        const int t0 = std::clamp(static_cast<int>(b.lifetime.start / m_binSteps), 0, kTimeBins - 1);
        const int t1 = std::clamp(static_cast<int>(std::ceil(b.lifetime.end / m_binSteps)), t0 + 1, kTimeBins);
        const int c0 = std::clamp(static_cast<int>(static_cast<double>(offsets[i]) / m_binBytes), 0, kOffsetBins - 1);
        const int c1 = std::clamp(static_cast<int>(std::ceil(static_cast<double>(offsets[i] + b.size) / m_binBytes)), c0 + 1, kOffsetBins);
        for (int t = t0; t < t1; ++t) {
            std::uint64_t* column = &m_cells[static_cast<std::size_t>(t) * kWords];
            for (int c = c0; c < c1; ++c)
                column[c / 64] |= std::uint64_t(1) << (c % 64);
        }
    }
}

bool DensityGrid::covers(const TimeAxis& time) const
{
    return m_any && time.pixelsPerStep() * kShortBins * m_binSteps <= 1.0;
}

void DensityGrid::paint(QImage& image, int left, int top, const TimeAxis& time, const OffsetAxis& offset, QRgb value) const
{
    if (!m_any)
        return;
    // Per pixel row, the offset bins it spans (rows run downwards, bytes upwards).
    std::vector<std::pair<int, int>> rows(static_cast<std::size_t>(image.height()));
    for (int y = 0; y < image.height(); ++y) {
        const double high = offset.yToValue(top + y), low = offset.yToValue(top + y + 1);
        const int c0 = std::clamp(static_cast<int>(std::floor(low / m_binBytes)), 0, kOffsetBins);
        const int c1 = std::clamp(static_cast<int>(std::ceil(high / m_binBytes)), c0, kOffsetBins);
        rows[static_cast<std::size_t>(y)] = { c0, c1 };
    }
    std::uint64_t merged[kWords];
    for (int x = 0; x < image.width(); ++x) {
        const double first = time.xToStep(left + x), last = time.xToStep(left + x + 1);
        const int t0 = std::clamp(static_cast<int>(std::floor(first / m_binSteps)), 0, kTimeBins);
        const int t1 = std::clamp(static_cast<int>(std::ceil(last / m_binSteps)), t0, kTimeBins);
        if (t0 == t1)
            continue;
        std::fill(std::begin(merged), std::end(merged), 0);
        for (int t = t0; t < t1; ++t) {
            const std::uint64_t* column = &m_cells[static_cast<std::size_t>(t) * kWords];
            for (int w = 0; w < kWords; ++w)
                merged[w] |= column[w];
        }
        for (int y = 0; y < image.height(); ++y) {
            const auto [c0, c1] = rows[static_cast<std::size_t>(y)];
            bool hit = false;
            for (int c = c0; c < c1 && !hit; ++c)
                hit = (merged[c / 64] >> (c % 64)) & 1;
            if (hit)
                reinterpret_cast<QRgb*>(image.scanLine(y))[x] = value;
        }
    }
}
