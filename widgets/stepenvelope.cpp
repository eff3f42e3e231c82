// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "stepenvelope.h"

#include <algorithm>
#include <cmath>

namespace {
// Steps [from, to) as they are, closed at `to` when it is the end of the curve.
StepPoints exactSteps(const std::vector<double>& values, std::size_t from, std::size_t to)
{
    StepPoints points;
    points.keys.reserve(static_cast<int>(to - from) + 1);
    points.values.reserve(static_cast<int>(to - from) + 1);
    for (std::size_t i = from; i < to; ++i) {
        points.keys.append(static_cast<double>(i));
        points.values.append(values[i]);
    }
    if (to == values.size() && to > from) {
        points.keys.append(static_cast<double>(to));
        points.values.append(values[to - 1]);
    }
    return points;
}
} // namespace

StepPoints stepEnvelope(const std::vector<double>& values, double first, double last, int pixels)
{
    const std::size_t n = values.size();
    pixels = std::max(pixels, 1);
    const double limit = 2.0 * pixels;
    if (static_cast<double>(n) <= limit)
        return exactSteps(values, 0, n);
    const double span = last - first;
    if (span <= limit) {
        const auto clamp = [n](double step) { return static_cast<std::size_t>(std::clamp(step, 0.0, static_cast<double>(n))); };
        return exactSteps(values, clamp(std::floor(first) - 1), clamp(std::ceil(last) + 1));
    }
    const double width = span / pixels; // steps per column, more than two
    StepPoints points;
    points.keys.reserve(pixels + 1);
    points.values.reserve(pixels + 1);
    points.lows.reserve(pixels + 1);
    double lastKey = first;
    for (int c = 0; c < pixels; ++c) {
        const double start = first + c * width;
        const double end = start + width;
        const double from = std::max(std::floor(start), 0.0);
        const double to = std::min(std::ceil(end), static_cast<double>(n));
        if (from >= to)
            continue;
        double most = values[static_cast<std::size_t>(from)];
        double least = most;
        for (auto i = static_cast<std::size_t>(from) + 1; i < static_cast<std::size_t>(to); ++i) {
            most = std::max(most, values[i]);
            least = std::min(least, values[i]);
        }
        points.keys.append(std::max(start, 0.0));
        points.values.append(most);
        points.lows.append(least);
        lastKey = std::min(end, static_cast<double>(n));
    }
    if (!points.keys.isEmpty()) {
        points.keys.append(lastKey);
        points.values.append(points.values.back());
        points.lows.append(points.lows.back());
    }
    return points;
}
