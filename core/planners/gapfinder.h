// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"
#include "util/cancel.h"
#include "util/expected.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace core {

// Shared placement step of the offset-calculation planners (greedy-by-size, greedy-by-breadth,
// best-of-greedy): given the buffers already placed, find for a new buffer the smallest gap between
// placed buffers whose lifetimes conflict with it that is large enough, or the top of those buffers.
//
// Time queries use a segment tree over compressed step coordinates (stabbing at the new buffer's
// start) plus a start-sorted array (buffers starting inside its lifetime): a query costs
// O(log n + k log k), k = buffers conflicting in time. Worst case O(n^2 log n) when all conflict.
// When buffers conflict with more than an eighth of the others on average (the public allocation
// problems: a third), one walk over all placed buffers in offset order, skipping those that do not
// conflict, is cheaper: O(n) per query with no sort. Both give the same offsets.
//
// Everything a query reads lies in flat arrays (each buffer's lifetime, size, leaves and slots in one
// record; each tree node's placed buffers as (offset, top) pairs in one block; each slot's placed
// bytes in start order): at a million buffers, reading PlanProblem::buffers and growing one vector
// per tree node made each pass memory-bound, ten times slower per buffer than at 100k, and then one
// array per field still cost a cache miss per field per query.

// What does not change from one pass to the next: build once per problem, place in many orders.
class GapIndex {
public:
    explicit GapIndex(const PlanProblem& problem);
    const PlanProblem& problem() const { return m_problem; }
    int count() const { return static_cast<int>(m_entries.size()); }

private:
    friend class GapFinder;
    struct Entry { // per buffer: all that a query and a placement read of it, one 32-byte record
        Step start, end;    // its lifetime
        Bytes need;         // placedSize
        int leafLo, leafHi; // the tree leaves its lifetime covers, [lo, hi)
        int slot;           // its index in start order (stable)
        int startsAfter;    // the first slot that starts after it
    };
    const PlanProblem& m_problem;
    std::vector<Entry> m_entries;           // per buffer
    std::vector<Step> m_slotStart;          // per slot (all buffers by start, stable): its start
    std::vector<std::uint32_t> m_nodeBegin; // per tree node: its block in GapFinder::m_nodeItems
    int m_leaves = 0;
    bool m_walk = false; // dense conflicts: walk the placed buffers by offset instead of the tree
};

class GapFinder {
public:
    explicit GapFinder(const GapIndex& index);

    // Smallest adequate gap among placed conflicting buffers; sizes rounded up to the alignment.
    Bytes bestOffset(int buffer) const;
    void place(int buffer, Bytes offset);
    // A hint, no effect on any result: start loading what bestOffset and place will read for
    // `buffer`, one stage at a time (each needs what the one before loaded: its record, then its
    // tree path and slots, then its tree nodes' blocks). placeInOrder asks a few buffers ahead, so
    // the cache misses of later queries overlap the work of this one.
    enum class PrefetchStage { Entry, Path, Items };
    void prefetch(int buffer, PrefetchStage stage) const;

    Bytes arenaSize() const { return m_arena; }
    const std::vector<Bytes>& offsets() const { return m_offsets; }
    bool isPlaced(int buffer) const { return m_offsets[buffer] >= 0; }

private:
    struct Span { // a placed buffer's bytes
        Bytes offset, top;
    };
    struct Node { // a tree node's block in m_nodeItems: where it begins, how much is used
        std::uint32_t begin, fill;
    };
    void collectConflicts(const GapIndex::Entry& entry, std::vector<Span>& out) const;

    const GapIndex& m_index;
    std::vector<Bytes> m_offsets;  // -1 while unplaced
    std::vector<Node> m_nodes;     // per tree node
    std::unique_ptr<Span[]> m_nodeItems; // per tree node, its placed buffers in placement order (not
                                         // zeroed: only the filled part of a block is read)
    std::vector<Span> m_slotSpans; // per slot: the placed buffer's bytes; offset -1 while unplaced
    Bytes m_arena = 0;
    mutable std::vector<Span> m_scratch;
    std::vector<int> m_byOffset; // walk mode: placed buffers with a non-empty lifetime, by offset
};

// The offset-calculation pass of the greedy planners: the buffers placed in `order`, each at
// GapFinder::bestOffset. A Cancelled error when `cancel` fires (looked at every 1024 buffers).
Expected<Plan> placeInOrder(const PlanProblem& problem, const std::vector<int>& order, const CancelToken& cancel);
Expected<Plan> placeInOrder(const GapIndex& index, const std::vector<int>& order, const CancelToken& cancel);

// Size a buffer takes in the arena: its size rounded up to the problem's alignment.
inline Bytes placedSize(const PlanProblem& problem, int buffer)
{
    return alignUp(problem.buffers[buffer].size, problem.alignment);
}

} // namespace core
