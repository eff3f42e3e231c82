// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/coloring.h"

#include "planners/gapfinder.h"
#include "planners/replay.h"

#include <set>

namespace core {

std::string_view ColoringPlanner::description() const
{
    return "interval-graph coloring: fewest slots (max overlap depth), each sized by its largest buffer";
}

Expected<Plan> ColoringPlanner::plan(const PlanProblem& problem, const CancelToken& cancel) const
{
    Plan plan;
    plan.colors.assign(problem.buffers.size(), 0);
    std::vector<Bytes> slotSize;              // per color
    std::set<std::pair<Bytes, int>> freeSlots; // (slot size, color) of colors whose buffer has ended
    const auto status = replayByStart(
        problem, cancel,
        [&](int j) {
            if (plan.colors[j] >= 0)
                freeSlots.emplace(slotSize[plan.colors[j]], plan.colors[j]);
        },
        [&](int i) {
            const Bytes size = placedSize(problem, i);
            if (size == 0) {
                plan.colors[i] = -1; // takes no room
                return;
            }
            int color;
            auto fit = freeSlots.lower_bound({ size, -1 });
            if (fit == freeSlots.end() && !freeSlots.empty())
                fit = std::prev(freeSlots.end()); // largest free slot; it grows to fit
            if (fit != freeSlots.end()) {
                color = fit->second;
                freeSlots.erase(fit);
                slotSize[color] = std::max(slotSize[color], size);
            } else {
                color = static_cast<int>(slotSize.size());
                slotSize.push_back(size);
            }
            plan.colors[i] = color;
        });
    if (!status)
        return status.error();
    std::vector<Bytes> slotOffset(slotSize.size(), 0);
    for (std::size_t c = 0; c < slotSize.size(); ++c) {
        slotOffset[c] = plan.arenaSize;
        plan.arenaSize += slotSize[c];
    }
    plan.offsets.resize(problem.buffers.size());
    for (std::size_t i = 0; i < problem.buffers.size(); ++i)
        plan.offsets[i] = plan.colors[i] >= 0 ? slotOffset[plan.colors[i]] : 0;
    return plan;
}

} // namespace core
