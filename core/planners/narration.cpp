// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/narration.h"

#include "util/format.h"

#include <algorithm>
#include <utility>

namespace core {
namespace {

bool occupies(const Buffer& buffer) { return buffer.lifetime.start < buffer.lifetime.end && buffer.size > 0; }

// "a", "a and b", "a, b and c", "a, b, c and 4 more".
std::string joinList(const std::vector<std::string>& items, std::size_t shown = 3)
{
    std::string text;
    const std::size_t count = items.size();
    const std::size_t listed = count > shown + 1 ? shown : count;
    for (std::size_t i = 0; i < listed; ++i) {
        if (i > 0)
            text += (i + 1 == listed && listed == count) ? " and " : ", ";
        text += items[i];
    }
    if (listed < count)
        text += " and " + std::to_string(count - listed) + " more";
    return text;
}

// Small offsets read better as plain numbers in a classroom ("at 512"); large ones get units and the word
// "offset" so they are not mistaken for sizes ("at offsets 12.8 MiB and 140 MiB").
std::string atOffsets(const std::vector<Bytes>& offsets)
{
    const bool small = std::all_of(offsets.begin(), offsets.end(), [](Bytes offset) { return offset < 1024; });
    std::vector<std::string> texts;
    for (Bytes offset : offsets)
        texts.push_back(offset < 1024 ? std::to_string(offset) : formatBytes(offset));
    if (small)
        return "at " + joinList(texts);
    return (offsets.size() == 1 ? "at offset " : "at offsets ") + joinList(texts);
}

} // namespace

std::vector<StepEvent> stepEvents(const PlanProblem& problem, const Plan& plan, Step step)
{
    std::vector<StepEvent> events;
    const auto& buffers = problem.buffers;
    if (plan.offsets.size() != buffers.size())
        return events;

    Bytes highWater = 0; // top of every block allocated before this step
    std::vector<int> dead; // buffers whose block is free at this step
    for (std::size_t i = 0; i < buffers.size(); ++i) {
        const Buffer& buffer = buffers[i];
        if (!occupies(buffer))
            continue;
        if (buffer.lifetime.start < step)
            highWater = std::max(highWater, plan.offsets[i] + buffer.size);
        if (buffer.lifetime.end <= step)
            dead.push_back(static_cast<int>(i));
        if (buffer.lifetime.end == step)
            events.push_back(
                { StepEvent::Kind::Free, static_cast<int>(i), plan.offsets[i], buffer.size, {}, false, 0 });
    }
    // Most recent occupant first: the block a new buffer takes was last held by whoever died latest.
    std::stable_sort(
        dead.begin(), dead.end(), [&](int a, int b) { return buffers[a].lifetime.end > buffers[b].lifetime.end; });

    for (std::size_t i = 0; i < buffers.size(); ++i) {
        const Buffer& buffer = buffers[i];
        if (!occupies(buffer) || buffer.lifetime.start != step)
            continue;
        StepEvent event { StepEvent::Kind::Allocate, static_cast<int>(i), plan.offsets[i], buffer.size, {}, false, 0 };
        const Bytes low = event.offset;
        const Bytes high = event.offset + event.size;
        // Parts of [low, high) already attributed to a more recent occupant.
        std::vector<std::pair<Bytes, Bytes>> covered;
        for (int d : dead) {
            const Bytes dLow = std::max(low, plan.offsets[d]);
            const Bytes dHigh = std::min(high, plan.offsets[d] + buffers[d].size);
            if (dLow >= dHigh)
                continue;
            // Does [dLow, dHigh) have a point no earlier candidate covers? Sweep the sorted covered list.
            std::sort(covered.begin(), covered.end());
            Bytes cursor = dLow;
            for (const auto& [cLow, cHigh] : covered) {
                if (cLow > cursor)
                    break;
                cursor = std::max(cursor, cHigh);
            }
            if (cursor < dHigh) {
                event.reuses.push_back(d);
                covered.emplace_back(dLow, dHigh);
            }
        }
        if (high > highWater) {
            highWater = high;
            event.grows = true;
        }
        event.highWater = highWater;
        events.push_back(std::move(event));
    }
    return events;
}

std::string narrateStep(const PlanProblem& problem, const Plan& plan, Step step, std::string_view opName)
{
    const auto events = stepEvents(problem, plan, step);
    const auto& buffers = problem.buffers;
    std::string text = "step " + std::to_string(step);
    if (!opName.empty())
        text += " (" + std::string(opName) + ")";
    text += ": ";

    std::vector<std::string> freedNames;
    std::vector<Bytes> freedOffsets;
    std::vector<std::string> clauses;
    Bytes grewTo = -1;
    for (const StepEvent& event : events) {
        const std::string& name = buffers[event.buffer].name;
        if (event.kind == StepEvent::Kind::Free) {
            freedNames.push_back(name);
            freedOffsets.push_back(event.offset);
            continue;
        }
        std::string clause = name + " (" + formatBytes(event.size) + ") ";
        if (event.reuses.empty()) {
            clause += "takes fresh memory " + atOffsets({ event.offset });
        } else if (event.reuses.size() == 1) {
            clause += "reuses " + buffers[event.reuses.front()].name + "'s block " + atOffsets({ event.offset });
        } else {
            std::vector<std::string> owners;
            for (int r : event.reuses)
                owners.push_back(buffers[r].name);
            clause += "reuses the blocks of " + joinList(owners, 2) + " " + atOffsets({ event.offset });
        }
        clauses.push_back(std::move(clause));
        if (event.grows)
            grewTo = event.highWater;
    }

    std::vector<std::string> parts;
    if (!freedNames.empty()) {
        const bool one = freedNames.size() == 1;
        std::string part = joinList(freedNames) + (one ? " dies, its block" : " die, their blocks");
        if (freedNames.size() <= 3)
            part += " " + atOffsets(freedOffsets);
        part += " return" + std::string(one ? "s" : "") + " to the free list";
        parts.push_back(std::move(part));
    }
    constexpr std::size_t kShownAllocations = 4;
    for (std::size_t i = 0; i < clauses.size() && i < kShownAllocations; ++i)
        parts.push_back(clauses[i]);
    if (clauses.size() > kShownAllocations)
        parts.push_back(std::to_string(clauses.size() - kShownAllocations) + " more allocated");
    if (grewTo >= 0)
        parts.push_back("the arena grows to " + formatBytes(grewTo));
    if (parts.empty())
        parts.push_back("nothing is allocated or freed");

    for (std::size_t i = 0; i < parts.size(); ++i)
        text += (i ? "; " : "") + parts[i];
    return text;
}

} // namespace core
