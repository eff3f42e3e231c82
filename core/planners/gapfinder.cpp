// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/gapfinder.h"

#include <algorithm>
#include <limits>

namespace core {

GapFinder::GapFinder(const PlanProblem& problem)
    : m_problem(problem)
    , m_offsets(problem.buffers.size(), -1)
{
    for (const auto& b : problem.buffers) {
        m_coords.push_back(b.lifetime.start);
        m_coords.push_back(b.lifetime.end);
    }
    std::sort(m_coords.begin(), m_coords.end());
    m_coords.erase(std::unique(m_coords.begin(), m_coords.end()), m_coords.end());
    m_leaves = std::max<int>(1, static_cast<int>(m_coords.size()));
    m_tree.resize(2 * static_cast<std::size_t>(m_leaves));
    m_byStart.resize(problem.buffers.size());
    for (std::size_t i = 0; i < m_byStart.size(); ++i)
        m_byStart[i] = static_cast<int>(i);
    std::stable_sort(m_byStart.begin(), m_byStart.end(),
        [&](int a, int b) { return problem.buffers[a].lifetime.start < problem.buffers[b].lifetime.start; });
    // Conflicting pairs, counted twice: a buffer conflicts with all but those that ended by its
    // start and those that start at or after its end.
    std::vector<Step> starts, ends;
    for (const auto& b : problem.buffers)
        if (b.lifetime.end > b.lifetime.start) {
            starts.push_back(b.lifetime.start);
            ends.push_back(b.lifetime.end);
        }
    std::sort(starts.begin(), starts.end());
    std::sort(ends.begin(), ends.end());
    double conflicts = 0;
    for (const auto& b : problem.buffers)
        if (b.lifetime.end > b.lifetime.start)
            conflicts += double(starts.size()) - double(std::upper_bound(ends.begin(), ends.end(), b.lifetime.start) - ends.begin())
                - double(starts.end() - std::lower_bound(starts.begin(), starts.end(), b.lifetime.end)) - 1;
    const double n = double(starts.size());
    m_walk = n > 0 && 8 * conflicts >= n * n;
}

void GapFinder::place(int buffer, Bytes offset)
{
    m_offsets[buffer] = offset;
    const auto& b = m_problem.buffers[buffer];
    m_arena = std::max(m_arena, offset + placedSize(m_problem, buffer));
    if (b.lifetime.end <= b.lifetime.start)
        return;
    if (m_walk) {
        const auto at = std::upper_bound(m_byOffset.begin(), m_byOffset.end(), offset, [&](Bytes o, int x) { return o < m_offsets[x]; });
        m_byOffset.insert(at, buffer);
        return;
    }
    // Leaf i stands for the steps [coords[i], coords[i+1]); the lifetime covers leaves [lo, hi).
    int lo = static_cast<int>(std::lower_bound(m_coords.begin(), m_coords.end(), b.lifetime.start) - m_coords.begin());
    int hi = static_cast<int>(std::lower_bound(m_coords.begin(), m_coords.end(), b.lifetime.end) - m_coords.begin());
    for (lo += m_leaves, hi += m_leaves; lo < hi; lo >>= 1, hi >>= 1) {
        if (lo & 1)
            m_tree[lo++].push_back(buffer);
        if (hi & 1)
            m_tree[--hi].push_back(buffer);
    }
}

void GapFinder::collectConflicts(int buffer, std::vector<int>& out) const
{
    out.clear();
    const auto& life = m_problem.buffers[buffer].lifetime;
    if (life.end <= life.start)
        return;
    // Placed buffers alive at `start`: every node on the leaf-to-root path of its leaf.
    const int leaf = static_cast<int>(std::lower_bound(m_coords.begin(), m_coords.end(), life.start) - m_coords.begin());
    for (int node = leaf + m_leaves; node >= 1; node >>= 1)
        out.insert(out.end(), m_tree[node].begin(), m_tree[node].end());
    // Placed buffers starting strictly inside (start, end).
    auto it = std::upper_bound(m_byStart.begin(), m_byStart.end(), life.start,
        [&](Step s, int b) { return s < m_problem.buffers[b].lifetime.start; });
    for (; it != m_byStart.end() && m_problem.buffers[*it].lifetime.start < life.end; ++it)
        if (m_offsets[*it] >= 0 && m_problem.buffers[*it].lifetime.end > m_problem.buffers[*it].lifetime.start)
            out.push_back(*it);
}

namespace {
// The smallest gap of at least `need` bytes below, between or above the buffers of `byOffset` that
// `conflicts` accepts (placed, in offset order): its offset, or the top of them when none fits.
template <typename Conflicts>
Bytes smallestGap(const PlanProblem& problem, const std::vector<Bytes>& offsets, const std::vector<int>& byOffset, Bytes need,
    Conflicts conflicts)
{
    Bytes best = -1, bestWaste = std::numeric_limits<Bytes>::max(), cursor = 0;
    for (const int other : byOffset) {
        if (!conflicts(other))
            continue;
        const Bytes gap = offsets[other] - cursor;
        if (gap >= need && gap - need < bestWaste) {
            best = cursor;
            bestWaste = gap - need;
        }
        cursor = std::max(cursor, offsets[other] + placedSize(problem, other));
    }
    return best >= 0 ? best : cursor;
}
} // namespace

Bytes GapFinder::bestOffset(int buffer) const
{
    const Bytes need = placedSize(m_problem, buffer);
    if (m_walk) {
        const auto& life = m_problem.buffers[buffer].lifetime;
        if (life.end <= life.start)
            return 0;
        return smallestGap(m_problem, m_offsets, m_byOffset, need, [&](int other) {
            const auto& o = m_problem.buffers[other].lifetime;
            return o.start < life.end && life.start < o.end;
        });
    }
    collectConflicts(buffer, m_scratch);
    std::sort(m_scratch.begin(), m_scratch.end(), [&](int a, int b) { return m_offsets[a] < m_offsets[b]; });
    return smallestGap(m_problem, m_offsets, m_scratch, need, [](int) { return true; });
}

Expected<Plan> placeInOrder(const PlanProblem& problem, const std::vector<int>& order, const CancelToken& cancel)
{
    GapFinder finder(problem);
    int counter = 0;
    for (const int i : order) {
        if ((++counter & 1023) == 0 && cancel.isCancelled())
            return makeError(ErrorCode::Cancelled, "planning cancelled");
        finder.place(i, finder.bestOffset(i));
    }
    Plan plan;
    plan.offsets = finder.offsets();
    plan.arenaSize = finder.arenaSize();
    return plan;
}

} // namespace core
