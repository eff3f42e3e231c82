// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"

#include <algorithm>
#include <vector>

// Buffers sorted by start, in blocks of 64 that remember their latest end, so a query for a step
// range visits O(n / 64 + hits) entries: blocks that end before the range are skipped whole, and a
// binary search stops at the first buffer that starts after it. Built once per workload.
class IntervalIndex {
public:
    void build(const core::PlanProblem& problem)
    {
        build(problem, [](int) { return true; });
    }
    // The buffers `keep(b)` holds to, alone.
    template <class Keep> void build(const core::PlanProblem& problem, Keep&& keep)
    {
        const auto& buffers = problem.buffers;
        m_order.clear();
        for (std::size_t i = 0; i < buffers.size(); ++i)
            if (keep(static_cast<int>(i)))
                m_order.push_back(static_cast<int>(i));
        std::stable_sort(m_order.begin(), m_order.end(),
            [&](int a, int b) { return buffers[a].lifetime.start < buffers[b].lifetime.start; });
        m_starts.resize(m_order.size());
        m_ends.resize(m_order.size());
        for (std::size_t i = 0; i < m_order.size(); ++i) {
            m_starts[i] = buffers[m_order[i]].lifetime.start;
            m_ends[i] = buffers[m_order[i]].lifetime.end;
        }
        m_blockMaxEnd.assign((m_order.size() + kBlock - 1) / kBlock, 0);
        for (std::size_t i = 0; i < m_order.size(); ++i)
            m_blockMaxEnd[i / kBlock] = std::max(m_blockMaxEnd[i / kBlock], m_ends[i]);
    }

    // Calls f(buffer) for every buffer with start <= last and end > first (steps, may be fractional).
    template <class F> void forEach(double first, double last, F&& f) const
    {
        any(first, last, [&](int buffer) {
            f(buffer);
            return false;
        });
    }

    // Whether pred(buffer) holds for any buffer forEach would visit; stops at the first.
    template <class P> bool any(double first, double last, P&& pred) const
    {
        const auto stop = static_cast<std::size_t>(
            std::upper_bound(m_starts.begin(), m_starts.end(), last, [](double v, core::Step s) { return v < s; })
            - m_starts.begin());
        for (std::size_t block = 0; block * kBlock < stop; ++block) {
            if (m_blockMaxEnd[block] <= first)
                continue;
            const std::size_t end = std::min(stop, (block + 1) * kBlock);
            for (std::size_t i = block * kBlock; i < end; ++i)
                if (m_ends[i] > first && pred(m_order[i]))
                    return true;
        }
        return false;
    }

    std::size_t size() const { return m_order.size(); }

private:
    static constexpr std::size_t kBlock = 64;
    std::vector<int> m_order;
    std::vector<core::Step> m_starts, m_ends;
    std::vector<core::Step> m_blockMaxEnd;
};
