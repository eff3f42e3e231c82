// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "stepclock.h"

#include <algorithm>
#include <cmath>

void StepClock::setEvents(std::size_t steps)
{
    m_steps = steps;
    m_starts.clear();
}

bool StepClock::setSeconds(std::size_t steps, const std::vector<float>& seconds)
{
    setEvents(steps);
    if (steps == 0 || seconds.size() != steps || !std::is_sorted(seconds.begin(), seconds.end()))
        return false;
    m_starts.assign(seconds.begin(), seconds.end());
    const double span = m_starts.back() - m_starts.front();
    const double gap = span > 0 ? span / static_cast<double>(steps) : 1e-6;
    m_starts.push_back(m_starts.back() + gap);
    return true;
}

double StepClock::key(double step) const
{
    if (m_starts.empty())
        return step;
    const double clamped = std::clamp(step, 0.0, static_cast<double>(m_steps));
    const auto i = std::min(static_cast<std::size_t>(clamped), m_steps - 1);
    const double frac = clamped - static_cast<double>(i);
    return m_starts[i] + frac * (m_starts[i + 1] - m_starts[i]);
}

double StepClock::step(double key) const
{
    if (m_starts.empty())
        return key;
    if (key <= m_starts.front())
        return 0;
    if (key >= m_starts.back())
        return static_cast<double>(m_steps);
    // The step whose span [t(i), t(i+1)) holds key: the last start at or before it.
    const auto it = std::upper_bound(m_starts.begin(), m_starts.end(), key) - 1;
    const auto i = static_cast<std::size_t>(it - m_starts.begin());
    const double width = m_starts[i + 1] - m_starts[i];
    return static_cast<double>(i) + (width > 0 ? (key - m_starts[i]) / width : 0.0);
}
