// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/firstfit.h"

#include "planners/gapfinder.h"
#include "planners/replay.h"

namespace core {

namespace {
// The free list in append order. A max tree over list positions answers "first block with size >= n".
class FreeList {
public:
    explicit FreeList(std::size_t capacity)
    {
        while (m_leaves < capacity)
            m_leaves *= 2;
        m_max.assign(2 * m_leaves, -1);
        m_blocks.reserve(capacity);
    }
    void append(Bytes offset, Bytes size)
    {
        const auto pos = m_blocks.size();
        m_blocks.push_back({ offset, size });
        set(pos, size);
    }
    // Takes the first block of at least `size` bytes; returns its offset, or -1 when none fits.
    Bytes takeFirst(Bytes size)
    {
        if (m_max[1] < size)
            return -1;
        std::size_t node = 1;
        while (node < m_leaves)
            node = m_max[2 * node] >= size ? 2 * node : 2 * node + 1;
        const auto pos = node - m_leaves;
        const auto block = m_blocks[pos];
        set(pos, -1);
        if (block.size > size)
            append(block.offset + size, block.size - size);
        return block.offset;
    }

private:
    struct Block {
        Bytes offset, size;
    };
    void set(std::size_t pos, Bytes value)
    {
        std::size_t node = pos + m_leaves;
        m_max[node] = value;
        for (node >>= 1; node >= 1; node >>= 1)
            m_max[node] = std::max(m_max[2 * node], m_max[2 * node + 1]);
    }
    std::size_t m_leaves = 1;
    std::vector<Bytes> m_max;
    std::vector<Block> m_blocks;
};
} // namespace

std::string_view FirstFitPlanner::description() const
{
    return "the seed algorithm: by start, first block in the free list that fits, blocks split, no merging";
}

Expected<Plan> FirstFitPlanner::plan(const PlanProblem& problem, const CancelToken& cancel) const
{
    Plan plan;
    plan.offsets.assign(problem.buffers.size(), 0);
    // Each buffer appends at most one freed block and one remainder.
    FreeList freeList(2 * problem.buffers.size() + 1);
    const auto status = replayByStart(
        problem, cancel,
        [&](int j) { freeList.append(plan.offsets[j], placedSize(problem, j)); },
        [&](int i) {
            const Bytes size = placedSize(problem, i);
            Bytes offset = size > 0 ? freeList.takeFirst(size) : 0;
            if (offset < 0) {
                offset = plan.arenaSize;
                plan.arenaSize += size;
            }
            plan.offsets[i] = offset;
        });
    if (!status)
        return status.error();
    return plan;
}

} // namespace core
