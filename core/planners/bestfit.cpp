// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/bestfit.h"

#include "planners/gapfinder.h"
#include "planners/replay.h"

#include <iterator>
#include <map>
#include <set>

namespace core {

namespace {
// Free blocks below the arena top, coalesced; indexed by offset (for merging) and by (size, offset).
class CoalescingFreeList {
public:
    void release(Bytes offset, Bytes size)
    {
        if (size <= 0)
            return;
        auto next = m_byOffset.lower_bound(offset);
        if (next != m_byOffset.end() && next->first == offset + size) { // merge with the block above
            size += next->second;
            erase(next++);
        }
        if (next != m_byOffset.begin()) {
            auto prev = std::prev(next);
            if (prev->first + prev->second == offset) { // merge with the block below
                offset = prev->first;
                size += prev->second;
                erase(prev);
            }
        }
        m_byOffset.emplace(offset, size);
        m_bySize.emplace(size, offset);
    }

    // Smallest block >= size (lowest offset among equals); -1 when none.
    Bytes takeBest(Bytes size)
    {
        const auto it = m_bySize.lower_bound({ size, 0 });
        if (it == m_bySize.end())
            return -1;
        const auto [blockSize, offset] = *it;
        m_bySize.erase(it);
        m_byOffset.erase(offset);
        if (blockSize > size) {
            m_byOffset.emplace(offset + size, blockSize - size);
            m_bySize.emplace(blockSize - size, offset + size);
        }
        return offset;
    }

    // When the block ending exactly at `top` is free, removes it and returns its offset; else -1.
    Bytes takeTopBlock(Bytes top)
    {
        if (m_byOffset.empty())
            return -1;
        const auto last = std::prev(m_byOffset.end());
        if (last->first + last->second != top)
            return -1;
        const Bytes offset = last->first;
        erase(last);
        return offset;
    }

private:
    void erase(std::map<Bytes, Bytes>::iterator it)
    {
        m_bySize.erase({ it->second, it->first });
        m_byOffset.erase(it);
    }
    std::map<Bytes, Bytes> m_byOffset;          // offset -> size
    std::set<std::pair<Bytes, Bytes>> m_bySize; // (size, offset)
};
} // namespace

std::string_view BestFitPlanner::description() const
{
    return "an allocator replayed by start: smallest free block that fits, free neighbours merged";
}

Expected<Plan> BestFitPlanner::plan(const PlanProblem& problem, const CancelToken& cancel) const
{
    Plan plan;
    plan.offsets.assign(problem.buffers.size(), 0);
    CoalescingFreeList freeList;
    const auto status = replayByStart(
        problem, cancel,
        [&](int j) { freeList.release(plan.offsets[j], placedSize(problem, j)); },
        [&](int i) {
            const Bytes size = placedSize(problem, i);
            if (size <= 0)
                return;
            Bytes offset = freeList.takeBest(size);
            if (offset < 0) {
                offset = freeList.takeTopBlock(plan.arenaSize);
                if (offset < 0)
                    offset = plan.arenaSize;
                plan.arenaSize = offset + size;
            }
            plan.offsets[i] = offset;
        });
    if (!status)
        return status.error();
    return plan;
}

} // namespace core
