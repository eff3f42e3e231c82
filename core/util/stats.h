// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Summary statistics of measured latencies, shared by the executors and the views.

#include <algorithm>
#include <cmath>
#include <vector>

namespace core {

// Nearest-rank percentile, q in [0, 1]: the smallest value with at least a fraction q of the values
// at or below it (q = 0: the minimum). 0 for no values.
inline double percentile(std::vector<double> values, double q)
{
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
    return values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// The middle value, or the mean of the two middle values; 0 for no values.
inline double median(std::vector<double> values)
{
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    const auto n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

} // namespace core
