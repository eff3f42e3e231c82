// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"
#include "util/cancel.h"
#include "util/expected.h"

#include <vector>

namespace core {

// Shared placement step of the offset-calculation planners (greedy-by-size, greedy-by-breadth):
// given the buffers already placed, find for a new buffer the smallest gap between placed buffers
// whose lifetimes conflict with it that is large enough, or the top of those buffers.
//
// Time queries use a segment tree over compressed step coordinates (stabbing at the new buffer's
// start) plus a start-sorted array (buffers starting inside its lifetime): a query costs
// O(log n + k log k), k = buffers conflicting in time. Worst case O(n^2 log n) when all conflict.
// When buffers conflict with more than an eighth of the others on average (the public allocation
// problems: a third), one walk over all placed buffers in offset order, skipping those that do not
// conflict, is cheaper: O(n) per query with no sort. Both give the same offsets.
class GapFinder {
public:
    explicit GapFinder(const PlanProblem& problem);

    // Smallest adequate gap among placed conflicting buffers; sizes rounded up to the alignment.
    Bytes bestOffset(int buffer) const;
    void place(int buffer, Bytes offset);

    Bytes arenaSize() const { return m_arena; }
    const std::vector<Bytes>& offsets() const { return m_offsets; }
    bool isPlaced(int buffer) const { return m_offsets[buffer] >= 0; }

private:
    void collectConflicts(int buffer, std::vector<int>& out) const;

    const PlanProblem& m_problem;
    std::vector<Step> m_coords;           // sorted distinct lifetime starts and ends
    std::vector<std::vector<int>> m_tree; // placed buffers stored at their canonical nodes
    std::vector<int> m_byStart;           // all buffers sorted by start
    std::vector<Bytes> m_offsets;         // -1 while unplaced
    Bytes m_arena = 0;
    int m_leaves = 0;
    mutable std::vector<int> m_scratch;
    bool m_walk = false;           // dense conflicts: walk m_byOffset instead of the tree
    std::vector<int> m_byOffset;   // m_walk: placed buffers with a non-empty lifetime, by offset
};

// The offset-calculation pass of the greedy planners: the buffers placed in `order`, each at
// GapFinder::bestOffset. A Cancelled error when `cancel` fires (looked at every 1024 buffers).
Expected<Plan> placeInOrder(const PlanProblem& problem, const std::vector<int>& order, const CancelToken& cancel);

// Size a buffer takes in the arena: its size rounded up to the problem's alignment.
inline Bytes placedSize(const PlanProblem& problem, int buffer)
{
    return alignUp(problem.buffers[buffer].size, problem.alignment);
}

} // namespace core
