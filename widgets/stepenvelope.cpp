// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "stepenvelope.h"

#include <algorithm>
#include <cmath>

namespace {
// The x positions of a curve's steps: step i at i, or at starts[i].
struct StepKeys {
    const std::vector<double>& starts;
    std::size_t n;

    double at(std::size_t i) const { return starts.empty() ? static_cast<double>(i) : starts[i]; }
    // The step x falls in (the last starting at or before it), clamped to [0, n].
    std::size_t stepAt(double x) const
    {
        if (starts.empty())
            return static_cast<std::size_t>(std::clamp(std::floor(x), 0.0, static_cast<double>(n)));
        const auto it = std::upper_bound(starts.begin(), starts.begin() + static_cast<std::ptrdiff_t>(n), x);
        return it == starts.begin() ? 0 : static_cast<std::size_t>(it - starts.begin()) - 1;
    }
    // The first step starting at or after x, clamped to [0, n].
    std::size_t stepFrom(double x) const
    {
        if (starts.empty())
            return static_cast<std::size_t>(std::clamp(std::ceil(x), 0.0, static_cast<double>(n)));
        return static_cast<std::size_t>(std::lower_bound(starts.begin(), starts.begin() + static_cast<std::ptrdiff_t>(n), x) - starts.begin());
    }
};

// Steps [from, to) as they are, closed at the curve's end when `to` is its last step.
StepPoints exactSteps(const std::vector<double>& values, const StepKeys& keys, std::size_t from, std::size_t to)
{
    StepPoints points;
    points.keys.reserve(static_cast<int>(to - from) + 1);
    points.values.reserve(static_cast<int>(to - from) + 1);
    for (std::size_t i = from; i < to; ++i) {
        points.keys.append(keys.at(i));
        points.values.append(values[i]);
    }
    if (to == values.size() && to > from) {
        points.keys.append(keys.at(to));
        points.values.append(values[to - 1]);
    }
    return points;
}
} // namespace

StepPoints stepEnvelope(const std::vector<double>& values, double first, double last, int pixels, const std::vector<double>& starts)
{
    const std::size_t n = values.size();
    if (!starts.empty() && starts.size() != n + 1)
        return {};
    const StepKeys keys { starts, n };
    pixels = std::max(pixels, 1);
    const std::size_t limit = 2 * static_cast<std::size_t>(pixels);
    if (n <= limit)
        return exactSteps(values, keys, 0, n);
    const std::size_t from = keys.stepAt(first), to = keys.stepFrom(last);
    if (to <= from + limit)
        return exactSteps(values, keys, from > 0 ? from - 1 : 0, std::min(to + 1, n));
    const double width = (last - first) / pixels; // more than two steps per column on average
    StepPoints points;
    points.keys.reserve(pixels + 1);
    points.values.reserve(pixels + 1);
    points.lows.reserve(pixels + 1);
    double lastKey = first;
    for (int c = 0; c < pixels; ++c) {
        const double start = first + c * width;
        const double end = start + width;
        const std::size_t a = keys.stepAt(start), b = std::min(keys.stepFrom(end), n);
        if (a >= b || keys.at(a + 1) <= start)
            continue; // no step reaches into this column (before the first or past the last)
        double most = values[a];
        double least = most;
        for (std::size_t i = a + 1; i < b; ++i) {
            most = std::max(most, values[i]);
            least = std::min(least, values[i]);
        }
        points.keys.append(std::max(start, keys.at(0)));
        points.values.append(most);
        points.lows.append(least);
        lastKey = std::min(end, keys.at(n));
    }
    if (!points.keys.isEmpty()) {
        points.keys.append(lastKey);
        points.values.append(points.values.back());
        points.lows.append(points.lows.back());
    }
    return points;
}
