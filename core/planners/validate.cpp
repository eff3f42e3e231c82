// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/validate.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>

namespace core {

namespace {
std::string label(const PlanProblem& problem, std::size_t i)
{
    const auto& b = problem.buffers[i];
    return "'" + b.name + "' [" + std::to_string(b.lifetime.start) + "," + std::to_string(b.lifetime.end) + ")";
}

PlanValidation fail(PlanCheck check, std::string message) { return { check, std::move(message) }; }
} // namespace

PlanValidation validatePlan(const PlanProblem& problem, const Plan& plan)
{
    const auto n = problem.buffers.size();
    if (plan.offsets.size() != n)
        return fail(PlanCheck::WrongCount,
            "plan has " + std::to_string(plan.offsets.size()) + " offsets for " + std::to_string(n) + " buffers");
    const Bytes alignment = std::max<Bytes>(problem.alignment, 1);
    for (std::size_t i = 0; i < n; ++i) {
        const auto offset = plan.offsets[i];
        const auto size = problem.buffers[i].size;
        if (offset < 0 || size < 0)
            return fail(PlanCheck::Negative, "buffer " + label(problem, i) + " has a negative offset or size");
        if (offset % alignment != 0)
            return fail(PlanCheck::Misaligned,
                "buffer " + label(problem, i) + " at offset " + std::to_string(offset) + " is not a multiple of "
                    + std::to_string(alignment));
        if (size > 0 && (offset > std::numeric_limits<Bytes>::max() - size || offset + size > plan.arenaSize))
            return fail(PlanCheck::OutsideArena,
                "buffer " + label(problem, i) + " at [" + std::to_string(offset) + ", +" + std::to_string(size)
                    + ") ends past the arena of " + std::to_string(plan.arenaSize) + " bytes");
    }

    // Sweep over time. `active` holds the buffers live at the current step keyed by offset; it is
    // kept free of overlaps, so a new buffer can only collide with its neighbours in offset order.
    // (start, buffer) pairs sorted once: reading the ~100-byte Buffer records inside the comparison
    // made the sort miss the cache at a million buffers.
    std::vector<std::pair<Step, std::size_t>> byStart;
    for (std::size_t i = 0; i < n; ++i)
        if (problem.buffers[i].size > 0 && problem.buffers[i].lifetime.start < problem.buffers[i].lifetime.end)
            byStart.emplace_back(problem.buffers[i].lifetime.start, i);
    std::sort(byStart.begin(), byStart.end());
    std::vector<std::size_t> order;
    order.reserve(byStart.size());
    for (const auto& [start, i] : byStart)
        order.push_back(i);
    byStart = {};
    // Live buffers by end step, soonest first: a heap, not a multimap (one allocation per buffer
    // made the multimap half of validating a million buffers).
    std::vector<std::pair<Step, Bytes>> endings; // (end step, offset), a min-heap
    const auto later = [](const std::pair<Step, Bytes>& a, const std::pair<Step, Bytes>& b) { return a.first > b.first; };
    std::map<Bytes, std::size_t> active; // offset -> buffer
    for (const auto i : order) {
        const auto& b = problem.buffers[i];
        while (!endings.empty() && endings.front().first <= b.lifetime.start) {
            active.erase(endings.front().second);
            std::pop_heap(endings.begin(), endings.end(), later);
            endings.pop_back();
        }
        const Bytes lo = plan.offsets[i], hi = lo + b.size;
        auto above = active.lower_bound(lo);
        if (above != active.end() && above->first < hi)
            return fail(PlanCheck::Overlap,
                "buffers " + label(problem, i) + " and " + label(problem, above->second) + " overlap in memory at offset "
                    + std::to_string(above->first));
        if (above != active.begin()) {
            const auto below = std::prev(above);
            if (below->first + problem.buffers[below->second].size > lo)
                return fail(PlanCheck::Overlap,
                    "buffers " + label(problem, i) + " and " + label(problem, below->second)
                        + " overlap in memory at offset " + std::to_string(lo));
        }
        active.emplace(lo, i);
        endings.emplace_back(b.lifetime.end, lo);
        std::push_heap(endings.begin(), endings.end(), later);
    }

    // Lower bound recomputed here, not taken from metrics, to stay independent of the code under test.
    // Births and deaths as (step, change) events, sorted: at one step every change is applied before
    // the level is read, as a map keyed by step would (one allocation per step made that map slow).
    std::vector<std::pair<Step, Bytes>> events;
    events.reserve(2 * n);
    for (const auto& b : problem.buffers)
        if (b.lifetime.start < b.lifetime.end) {
            events.emplace_back(b.lifetime.start, b.size);
            events.emplace_back(b.lifetime.end, -b.size);
        }
    std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    Bytes live = 0, bound = 0;
    for (std::size_t k = 0; k < events.size();) {
        const Step step = events[k].first;
        for (; k < events.size() && events[k].first == step; ++k)
            live += events[k].second;
        bound = std::max(bound, live);
    }
    if (plan.arenaSize < bound)
        return fail(PlanCheck::BelowLowerBound,
            "arena of " + std::to_string(plan.arenaSize) + " bytes is below the lower bound " + std::to_string(bound));
    if (problem.capacity > 0 && plan.arenaSize > problem.capacity)
        return fail(PlanCheck::OverCapacity,
            "arena of " + std::to_string(plan.arenaSize) + " bytes exceeds the capacity "
                + std::to_string(problem.capacity));
    return {};
}

std::string renderAsciiPlan(const PlanProblem& problem, const Plan& plan, int rows)
{
    if (problem.buffers.empty() || plan.arenaSize <= 0 || plan.offsets.size() != problem.buffers.size())
        return "(empty plan)\n";
    const Step steps = std::min<Step>(problem.steps, 120);
    std::vector<std::string> grid(rows, std::string(steps, '.'));
    for (std::size_t i = 0; i < problem.buffers.size(); ++i) {
        const auto& b = problem.buffers[i];
        const char mark = static_cast<char>(i < 26 ? 'a' + i : i < 52 ? 'A' + (i - 26) : '#');
        const auto r0 = static_cast<int>(plan.offsets[i] * rows / plan.arenaSize);
        const auto r1 = static_cast<int>(std::max<Bytes>(plan.offsets[i] + b.size - 1, plan.offsets[i]) * rows / plan.arenaSize);
        for (int r = std::max(r0, 0); r <= std::min(r1, rows - 1); ++r)
            for (Step s = std::max<Step>(b.lifetime.start, 0); s < std::min(b.lifetime.end, steps); ++s)
                grid[r][s] = grid[r][s] == '.' ? mark : '!';
    }
    std::string text = "offset (top = 0) x step; '!' = two buffers on one cell\n";
    for (const auto& row : grid)
        text += row + "\n";
    return text;
}

} // namespace core
