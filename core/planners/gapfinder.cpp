// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/gapfinder.h"

#include <algorithm>
#include <limits>

namespace core {

namespace {
// Calls visit(node) for the canonical segment-tree nodes of leaves [lo, hi) (bottom-up, the order
// the tree has always stored them in).
template <typename Visit>
void canonicalNodes(int lo, int hi, int leaves, Visit visit)
{
    for (lo += leaves, hi += leaves; lo < hi; lo >>= 1, hi >>= 1) {
        if (lo & 1)
            visit(lo++);
        if (hi & 1)
            visit(--hi);
    }
}
} // namespace

GapIndex::GapIndex(const PlanProblem& problem)
    : m_problem(problem)
{
    const auto n = problem.buffers.size();
    m_start.resize(n);
    m_end.resize(n);
    m_need.resize(n);
    std::vector<Step> coords;
    coords.reserve(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto& b = problem.buffers[i];
        m_start[i] = b.lifetime.start;
        m_end[i] = b.lifetime.end;
        m_need[i] = placedSize(problem, static_cast<int>(i));
        coords.push_back(b.lifetime.start);
        coords.push_back(b.lifetime.end);
    }
    std::sort(coords.begin(), coords.end());
    coords.erase(std::unique(coords.begin(), coords.end()), coords.end());
    m_leaves = std::max<int>(1, static_cast<int>(coords.size()));
    const auto leaf = [&](Step s) { return static_cast<int>(std::lower_bound(coords.begin(), coords.end(), s) - coords.begin()); };
    m_leafLo.resize(n);
    m_leafHi.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        m_leafLo[i] = leaf(m_start[i]);
        m_leafHi[i] = leaf(m_end[i]);
    }

    m_byStart.resize(n);
    for (std::size_t i = 0; i < n; ++i)
        m_byStart[i] = { m_start[i], m_end[i], static_cast<int>(i) };
    std::stable_sort(m_byStart.begin(), m_byStart.end(), [](const Slot& a, const Slot& b) { return a.start < b.start; });
    m_position.resize(n);
    for (std::size_t pos = 0; pos < n; ++pos)
        m_position[m_byStart[pos].buffer] = static_cast<int>(pos);
    // A binary search per query over the slots cost a cache miss per level at a million buffers.
    m_startsAfter.resize(n);
    for (std::size_t run = 0, next = 0; run < n; run = next) {
        while (next < n && m_byStart[next].start == m_byStart[run].start)
            ++next;
        for (std::size_t pos = run; pos < next; ++pos)
            m_startsAfter[m_byStart[pos].buffer] = static_cast<int>(next);
    }

    // Conflicting pairs, counted twice: a buffer conflicts with all but those that ended by its
    // start and those that start at or after its end.
    std::vector<Step> starts, ends;
    for (std::size_t i = 0; i < n; ++i)
        if (m_end[i] > m_start[i]) {
            starts.push_back(m_start[i]);
            ends.push_back(m_end[i]);
        }
    std::sort(starts.begin(), starts.end());
    std::sort(ends.begin(), ends.end());
    double conflicts = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (m_end[i] > m_start[i])
            conflicts += double(starts.size()) - double(std::upper_bound(ends.begin(), ends.end(), m_start[i]) - ends.begin())
                - double(starts.end() - std::lower_bound(starts.begin(), starts.end(), m_end[i])) - 1;
    const double live = double(starts.size());
    m_walk = live > 0 && 8 * conflicts >= live * live;
    if (m_walk)
        return;

    // Room in each tree node for every buffer that may land there: one block, no regrowth.
    m_nodeBegin.assign(2 * static_cast<std::size_t>(m_leaves) + 1, 0);
    for (std::size_t i = 0; i < n; ++i)
        if (m_end[i] > m_start[i])
            canonicalNodes(m_leafLo[i], m_leafHi[i], m_leaves, [&](int node) { ++m_nodeBegin[node + 1]; });
    for (std::size_t node = 1; node < m_nodeBegin.size(); ++node)
        m_nodeBegin[node] += m_nodeBegin[node - 1];
}

GapFinder::GapFinder(const GapIndex& index)
    : m_index(index)
    , m_offsets(index.count(), -1)
{
    if (index.m_walk)
        return;
    m_nodeItems.resize(index.m_nodeBegin.back());
    m_nodeFill.assign(index.m_nodeBegin.size() - 1, 0);
    m_slotOffset.assign(index.count(), -1);
}

void GapFinder::place(int buffer, Bytes offset)
{
    m_offsets[buffer] = offset;
    const Bytes top = offset + m_index.m_need[buffer];
    m_arena = std::max(m_arena, top);
    if (m_index.m_end[buffer] <= m_index.m_start[buffer])
        return;
    if (m_index.m_walk) {
        const auto at = std::upper_bound(m_byOffset.begin(), m_byOffset.end(), offset, [&](Bytes o, int x) { return o < m_offsets[x]; });
        m_byOffset.insert(at, buffer);
        return;
    }
    // Leaf i stands for the steps [coords[i], coords[i+1]); the lifetime covers leaves [lo, hi).
    canonicalNodes(m_index.m_leafLo[buffer], m_index.m_leafHi[buffer], m_index.m_leaves,
        [&](int node) { m_nodeItems[m_index.m_nodeBegin[node] + m_nodeFill[node]++] = { offset, top }; });
    m_slotOffset[m_index.m_position[buffer]] = offset;
}

void GapFinder::collectConflicts(int buffer, std::vector<Span>& out) const
{
    out.clear();
    const Step start = m_index.m_start[buffer], end = m_index.m_end[buffer];
    if (end <= start)
        return;
    // Placed buffers alive at `start`: every node on the leaf-to-root path of its leaf.
    for (int node = m_index.m_leafLo[buffer] + m_index.m_leaves; node >= 1; node >>= 1) {
        const auto* items = m_nodeItems.data() + m_index.m_nodeBegin[node];
        out.insert(out.end(), items, items + m_nodeFill[node]);
    }
    // Placed buffers starting strictly inside (start, end).
    const auto& byStart = m_index.m_byStart;
    auto pos = static_cast<std::size_t>(m_index.m_startsAfter[buffer]);
    for (; pos < byStart.size() && byStart[pos].start < end; ++pos)
        if (m_slotOffset[pos] >= 0 && byStart[pos].end > byStart[pos].start)
            out.push_back({ m_slotOffset[pos], m_slotOffset[pos] + m_index.m_need[byStart[pos].buffer] });
}

namespace {
// The smallest gap of at least `need` bytes below, between or above `spans` (placed buffers in
// offset order) that `conflicts` accepts: its offset, or the top of them when none fits.
template <typename Spans, typename Conflicts>
Bytes smallestGap(const Spans& spans, Bytes need, Conflicts conflicts)
{
    Bytes best = -1, bestWaste = std::numeric_limits<Bytes>::max(), cursor = 0;
    for (const auto& span : spans) {
        const auto [offset, top] = conflicts(span);
        if (offset < 0)
            continue;
        const Bytes gap = offset - cursor;
        if (gap >= need && gap - need < bestWaste) {
            best = cursor;
            bestWaste = gap - need;
        }
        cursor = std::max(cursor, top);
    }
    return best >= 0 ? best : cursor;
}
} // namespace

Bytes GapFinder::bestOffset(int buffer) const
{
    const Bytes need = m_index.m_need[buffer];
    if (m_index.m_walk) {
        const Step start = m_index.m_start[buffer], end = m_index.m_end[buffer];
        if (end <= start)
            return 0;
        // (-1, -1): no conflict, skipped.
        return smallestGap(m_byOffset, need, [&](int other) {
            if (m_index.m_start[other] < end && start < m_index.m_end[other])
                return std::pair<Bytes, Bytes>(m_offsets[other], m_offsets[other] + m_index.m_need[other]);
            return std::pair<Bytes, Bytes>(-1, -1);
        });
    }
    collectConflicts(buffer, m_scratch);
    // std::sort permutes by comparison outcomes only: the same order of equal offsets (so the same
    // gaps for empty buffers) as sorting buffer indices by offset did.
    std::sort(m_scratch.begin(), m_scratch.end(), [](const Span& a, const Span& b) { return a.offset < b.offset; });
    return smallestGap(m_scratch, need, [](const Span& span) { return std::pair<Bytes, Bytes>(span.offset, span.top); });
}

Expected<Plan> placeInOrder(const GapIndex& index, const std::vector<int>& order, const CancelToken& cancel)
{
    GapFinder finder(index);
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

Expected<Plan> placeInOrder(const PlanProblem& problem, const std::vector<int>& order, const CancelToken& cancel)
{
    return placeInOrder(GapIndex(problem), order, cancel);
}

} // namespace core
