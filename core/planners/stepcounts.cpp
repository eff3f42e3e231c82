// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/stepcounts.h"

#include <algorithm>

namespace core {

bool StepCounts::denseRange(Step lo, Step hi, std::size_t count)
{
    return lo <= hi && double(hi) - double(lo) <= 4.0 * double(count) + 1024;
}

StepCounts::StepCounts(const std::vector<Step>& steps)
    : m_count(static_cast<int>(steps.size()))
{
    if (steps.empty())
        return;
    const auto [lo, hi] = std::minmax_element(steps.begin(), steps.end());
    m_lo = *lo;
    m_hi = *hi;
    m_dense = denseRange(m_lo, m_hi, steps.size());
    if (!m_dense) {
        m_sorted = steps;
        std::sort(m_sorted.begin(), m_sorted.end());
        return;
    }
    m_below.assign(static_cast<std::size_t>(std::int64_t(m_hi) - m_lo) + 2, 0);
    for (const Step step : steps)
        ++m_below[static_cast<std::size_t>(std::int64_t(step) - m_lo) + 1];
    for (std::size_t i = 1; i < m_below.size(); ++i)
        m_below[i] += m_below[i - 1];
}

int StepCounts::below(Step step) const
{
    if (!m_dense)
        return static_cast<int>(std::lower_bound(m_sorted.begin(), m_sorted.end(), step) - m_sorted.begin());
    if (m_count == 0 || step <= m_lo)
        return 0;
    if (step > m_hi)
        return m_count;
    return m_below[static_cast<std::size_t>(std::int64_t(step) - m_lo)];
}

int StepCounts::atMost(Step step) const
{
    if (!m_dense)
        return static_cast<int>(std::upper_bound(m_sorted.begin(), m_sorted.end(), step) - m_sorted.begin());
    if (m_count == 0 || step < m_lo)
        return 0;
    if (step >= m_hi)
        return m_count;
    return m_below[static_cast<std::size_t>(std::int64_t(step) - m_lo) + 1];
}

} // namespace core
