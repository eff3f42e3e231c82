// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/gapfinder.h"

#include "planners/stepcounts.h"

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
    m_entries.resize(n);
    Step lo = std::numeric_limits<Step>::max(), hi = std::numeric_limits<Step>::min();
    for (std::size_t i = 0; i < n; ++i) {
        const auto& b = problem.buffers[i];
        auto& entry = m_entries[i];
        entry.start = b.lifetime.start;
        entry.end = b.lifetime.end;
        entry.need = placedSize(problem, static_cast<int>(i));
        lo = std::min({ lo, entry.start, entry.end });
        hi = std::max({ hi, entry.start, entry.end });
    }
    // Where the steps span a range not much larger than the buffer count (every schedule), tables
    // per step replace the sorts and binary searches (StepCounts); the results are the same.
    const bool dense = StepCounts::denseRange(lo, hi, n);
    const auto at = [&](Step s) { return static_cast<std::size_t>(std::int64_t(s) - lo); };

    // Leaf i stands for the i-th distinct step (start or end): a buffer's leaf is the number of
    // distinct steps below its own.
    if (dense) {
        std::vector<int> leafOf(at(hi) + 2, 0); // marks at step + 1, then how many distinct below
        for (const auto& entry : m_entries)
            leafOf[at(entry.start) + 1] = leafOf[at(entry.end) + 1] = 1;
        for (std::size_t i = 1; i < leafOf.size(); ++i)
            leafOf[i] += leafOf[i - 1];
        m_leaves = std::max(1, leafOf.back());
        for (auto& entry : m_entries) {
            entry.leafLo = leafOf[at(entry.start)];
            entry.leafHi = leafOf[at(entry.end)];
        }
    } else {
        std::vector<Step> coords;
        coords.reserve(2 * n);
        for (const auto& entry : m_entries) {
            coords.push_back(entry.start);
            coords.push_back(entry.end);
        }
        std::sort(coords.begin(), coords.end());
        coords.erase(std::unique(coords.begin(), coords.end()), coords.end());
        m_leaves = std::max<int>(1, static_cast<int>(coords.size()));
        const auto leaf = [&](Step s) { return static_cast<int>(std::lower_bound(coords.begin(), coords.end(), s) - coords.begin()); };
        for (auto& entry : m_entries) {
            entry.leafLo = leaf(entry.start);
            entry.leafHi = leaf(entry.end);
        }
    }

    // Slots: the buffers by start, ties by index (a stable sort by start). startsAfter: a binary
    // search per query over the slots cost a cache miss per level at a million buffers.
    m_slotStart.resize(n);
    if (dense) { // a counting sort
        std::vector<int> next(at(hi) + 2, 0); // counts at start + 1, then the first slot of each start
        for (const auto& entry : m_entries)
            ++next[at(entry.start) + 1];
        for (std::size_t i = 1; i < next.size(); ++i)
            next[i] += next[i - 1];
        for (auto& entry : m_entries) {
            entry.slot = next[at(entry.start)]++;
            m_slotStart[entry.slot] = entry.start;
        }
        for (auto& entry : m_entries) // each start's first slot has moved on to the next start's
            entry.startsAfter = next[at(entry.start)];
    } else {
        std::vector<std::pair<Step, int>> byStart(n);
        for (std::size_t i = 0; i < n; ++i)
            byStart[i] = { m_entries[i].start, static_cast<int>(i) };
        std::sort(byStart.begin(), byStart.end());
        for (std::size_t pos = 0; pos < n; ++pos) {
            m_slotStart[pos] = byStart[pos].first;
            m_entries[byStart[pos].second].slot = static_cast<int>(pos);
        }
        for (std::size_t run = 0, next = 0; run < n; run = next) {
            while (next < n && byStart[next].first == byStart[run].first)
                ++next;
            for (std::size_t pos = run; pos < next; ++pos)
                m_entries[byStart[pos].second].startsAfter = static_cast<int>(next);
        }
    }

    // Conflicting pairs, counted twice: a buffer conflicts with all but those that ended by its
    // start and those that start at or after its end.
    std::vector<Step> liveStarts, liveEnds;
    for (const auto& entry : m_entries)
        if (entry.end > entry.start) {
            liveStarts.push_back(entry.start);
            liveEnds.push_back(entry.end);
        }
    const StepCounts starts(liveStarts), ends(liveEnds);
    const double live = double(liveStarts.size());
    double conflicts = 0;
    for (const auto& entry : m_entries)
        if (entry.end > entry.start)
            conflicts += live - double(ends.atMost(entry.start)) - double(live - starts.below(entry.end)) - 1;
    m_walk = live > 0 && 8 * conflicts >= live * live;
    if (m_walk)
        return;

    // Room in each tree node for every buffer that may land there: one block, no regrowth.
    std::vector<std::uint64_t> begin(2 * static_cast<std::size_t>(m_leaves) + 1, 0);
    for (const auto& entry : m_entries)
        if (entry.end > entry.start)
            canonicalNodes(entry.leafLo, entry.leafHi, m_leaves, [&](int node) { ++begin[node + 1]; });
    for (std::size_t node = 1; node < begin.size(); ++node)
        begin[node] += begin[node - 1];
    // 32-bit positions keep a node to 8 bytes. Each buffer lands in at most 2 log2(leaves) nodes, so
    // only a problem of some 70 million buffers could need more; the walk (same offsets) takes it.
    if (begin.back() > std::numeric_limits<std::uint32_t>::max()) {
        m_walk = true;
        return;
    }
    m_nodeBegin.assign(begin.begin(), begin.end());
}

GapFinder::GapFinder(const GapIndex& index)
    : m_index(index)
    , m_offsets(index.count(), -1)
{
    if (index.m_walk)
        return;
    m_nodes.resize(index.m_nodeBegin.size() - 1);
    for (std::size_t node = 0; node < m_nodes.size(); ++node)
        m_nodes[node] = { index.m_nodeBegin[node], 0 };
    m_nodeItems = std::make_unique_for_overwrite<Span[]>(index.m_nodeBegin.back());
    m_slotSpans.assign(index.count(), Span { -1, -1 });
}

void GapFinder::place(int buffer, Bytes offset)
{
    const auto& entry = m_index.m_entries[buffer];
    m_offsets[buffer] = offset;
    const Bytes top = offset + entry.need;
    m_arena = std::max(m_arena, top);
    if (entry.end <= entry.start)
        return;
    if (m_index.m_walk) {
        const auto at = std::upper_bound(m_byOffset.begin(), m_byOffset.end(), offset, [&](Bytes o, int x) { return o < m_offsets[x]; });
        m_byOffset.insert(at, buffer);
        return;
    }
    // Leaf i stands for the steps [coords[i], coords[i+1]); the lifetime covers leaves [lo, hi).
    canonicalNodes(entry.leafLo, entry.leafHi, m_index.m_leaves, [&](int node) {
        auto& block = m_nodes[node];
        m_nodeItems[block.begin + block.fill++] = { offset, top };
    });
    m_slotSpans[entry.slot] = { offset, top };
}

void GapFinder::prefetch(int buffer, PrefetchStage stage) const
{
    const auto& entries = m_index.m_entries;
    if (stage == PrefetchStage::Entry) {
        __builtin_prefetch(entries.data() + buffer);
        return;
    }
    const auto& entry = entries[buffer];
    if (m_index.m_walk || entry.end <= entry.start)
        return;
    const int leaf = entry.leafLo + m_index.m_leaves;
    if (stage == PrefetchStage::Path) {
        // One past the last slot is a valid address to hint at; a prefetch never faults.
        __builtin_prefetch(m_index.m_slotStart.data() + entry.startsAfter);
        __builtin_prefetch(m_slotSpans.data() + entry.startsAfter);
        __builtin_prefetch(m_slotSpans.data() + entry.slot, 1);
        for (int node = leaf; node >= 1; node >>= 1)
            __builtin_prefetch(m_nodes.data() + node);
        return;
    }
    for (int node = leaf; node >= 1; node >>= 1)
        if (const Node block = m_nodes[node]; block.fill > 0)
            __builtin_prefetch(m_nodeItems.get() + block.begin);
}

// The spans in the order the query has always gathered them (tree path leaf to root, each node in
// placement order, then the slots in start order): bestOffset's sort sees the same sequence, so equal
// offsets end in the same order.
void GapFinder::collectConflicts(const GapIndex::Entry& entry, std::vector<Span>& out) const
{
    out.clear();
    if (entry.end <= entry.start)
        return;
    // Placed buffers alive at `start`: every node on the leaf-to-root path of its leaf.
    for (int node = entry.leafLo + m_index.m_leaves; node >= 1; node >>= 1) {
        const Node block = m_nodes[node];
        const Span* items = m_nodeItems.get() + block.begin;
        for (std::uint32_t k = 0; k < block.fill; ++k)
            out.push_back(items[k]);
    }
    // Placed buffers starting strictly inside (start, end). A buffer with an empty lifetime never
    // fills its slot.
    const auto& slotStart = m_index.m_slotStart;
    for (auto pos = static_cast<std::size_t>(entry.startsAfter); pos < slotStart.size() && slotStart[pos] < entry.end; ++pos)
        if (m_slotSpans[pos].offset >= 0)
            out.push_back(m_slotSpans[pos]);
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
    const auto& entry = m_index.m_entries[buffer];
    if (m_index.m_walk) {
        if (entry.end <= entry.start)
            return 0;
        // (-1, -1): no conflict, skipped.
        return smallestGap(m_byOffset, entry.need, [&](int other) {
            const auto& placed = m_index.m_entries[other];
            if (placed.start < entry.end && entry.start < placed.end)
                return std::pair<Bytes, Bytes>(m_offsets[other], m_offsets[other] + placed.need);
            return std::pair<Bytes, Bytes>(-1, -1);
        });
    }
    collectConflicts(entry, m_scratch);
    // std::sort permutes by comparison outcomes only: the same order of equal offsets (so the same
    // gaps for empty buffers) as sorting buffer indices by offset did.
    std::sort(m_scratch.begin(), m_scratch.end(), [](const Span& a, const Span& b) { return a.offset < b.offset; });
    return smallestGap(m_scratch, entry.need, [](const Span& span) { return std::pair<Bytes, Bytes>(span.offset, span.top); });
}

Expected<Plan> placeInOrder(const GapIndex& index, const std::vector<int>& order, const CancelToken& cancel)
{
    GapFinder finder(index);
    // Prefetch distance, in buffers: each buffer's record is asked for 3 x kAhead buffers ahead, its
    // tree path and slots 2 x kAhead ahead (the record has arrived by then), the blocks of its
    // non-empty tree nodes kAhead ahead.
    constexpr std::size_t kAhead = 3;
    const std::size_t count = order.size();
    for (std::size_t k = 0; k < count; ++k) {
        if (((k + 1) & 1023) == 0 && cancel.isCancelled())
            return makeError(ErrorCode::Cancelled, "planning cancelled");
        if (k + 3 * kAhead < count)
            finder.prefetch(order[k + 3 * kAhead], GapFinder::PrefetchStage::Entry);
        if (k + 2 * kAhead < count)
            finder.prefetch(order[k + 2 * kAhead], GapFinder::PrefetchStage::Path);
        if (k + kAhead < count)
            finder.prefetch(order[k + kAhead], GapFinder::PrefetchStage::Items);
        const int i = order[k];
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
