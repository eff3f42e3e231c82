// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"
#include "util/cancel.h"
#include "util/expected.h"

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
// Everything a query reads lies in flat arrays (lifetimes, sizes, each tree node's placed buffers as
// (offset, top) pairs in one block): at a million buffers, reading PlanProblem::buffers and growing
// one vector per tree node made each pass memory-bound, ten times slower per buffer than at 100k.

// What does not change from one pass to the next: build once per problem, place in many orders.
class GapIndex {
public:
    explicit GapIndex(const PlanProblem& problem);
    const PlanProblem& problem() const { return m_problem; }
    int count() const { return static_cast<int>(m_need.size()); }

private:
    friend class GapFinder;
    struct Slot { // a buffer in start order
        Step start, end;
        int buffer;
    };
    const PlanProblem& m_problem;
    std::vector<Step> m_start, m_end;   // per buffer: its lifetime
    std::vector<Bytes> m_need;          // per buffer: placedSize
    std::vector<int> m_leafLo, m_leafHi; // per buffer: the tree leaves its lifetime covers, [lo, hi)
    std::vector<Slot> m_byStart;        // all buffers by start (stable)
    std::vector<int> m_position;        // per buffer: its index in m_byStart
    std::vector<int> m_startsAfter;     // per buffer: the first slot that starts after it
    std::vector<std::size_t> m_nodeBegin; // per tree node: its block in GapFinder::m_nodeItems
    int m_leaves = 0;
    bool m_walk = false; // dense conflicts: walk the placed buffers by offset instead of the tree
};

class GapFinder {
public:
    explicit GapFinder(const GapIndex& index);

    // Smallest adequate gap among placed conflicting buffers; sizes rounded up to the alignment.
    Bytes bestOffset(int buffer) const;
    void place(int buffer, Bytes offset);

    Bytes arenaSize() const { return m_arena; }
    const std::vector<Bytes>& offsets() const { return m_offsets; }
    bool isPlaced(int buffer) const { return m_offsets[buffer] >= 0; }

private:
    struct Span { // a placed buffer's bytes
        Bytes offset, top;
    };
    void collectConflicts(int buffer, std::vector<Span>& out) const;

    const GapIndex& m_index;
    std::vector<Bytes> m_offsets;        // -1 while unplaced
    std::vector<Span> m_nodeItems;       // per tree node, its placed buffers in placement order
    std::vector<std::size_t> m_nodeFill; // per tree node: how many of its block are used
    std::vector<Bytes> m_slotOffset;     // per m_byStart slot: the offset, -1 while unplaced
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
