// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"

#include <vector>

namespace core {

// How many of a multiset of steps (lifetime starts or ends) lie below, or at most at, a given step.
// Where the steps span a range at most a few times their count (every schedule: steps are op
// positions), a table with one entry per step answers in one lookup and builds in O(n + range);
// otherwise binary searches in a sorted copy, O(log n) each after an O(n log n) sort. Same answers
// either way. At millions of buffers the binary searches cost a cache miss per level, the sort more.
class StepCounts {
public:
    explicit StepCounts(const std::vector<Step>& steps);
    int below(Step step) const;  // how many are < step
    int atMost(Step step) const; // how many are <= step
    int count() const { return m_count; }

    // True when steps in [lo, hi] are few enough, for `count` values, to keep a table per step.
    static bool denseRange(Step lo, Step hi, std::size_t count);

private:
    int m_count = 0;
    bool m_dense = false;
    Step m_lo = 0, m_hi = 0;
    std::vector<int> m_below;   // dense: m_below[i] = how many are < m_lo + i, i in [0, hi - lo + 1]
    std::vector<Step> m_sorted; // otherwise
};

} // namespace core
