// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "trace/tracephases.h"

#include <algorithm>

namespace core {

TracePhases placeAnnotations(const std::vector<SnapshotAnnotation>& annotations, const std::vector<TraceEvent>& events, int device)
{
    TracePhases out;
    // Event times, made non-decreasing (an event without a time takes the one before it).
    std::vector<std::int64_t> times(events.size(), -1);
    std::int64_t last = -1;
    for (std::size_t e = 0; e < events.size(); ++e)
        times[e] = last = std::max(last, events[e].timeUs);
    const bool timed = last >= 0;
    const Step endStep = Step(events.size()); // the state after the last event
    const auto stepAt = [&](std::int64_t t) { return Step(std::upper_bound(times.begin(), times.end(), t) - times.begin()); };

    struct Open {
        std::size_t annotation;
        Step begin;
        int depth;
        bool cut; // started before the trace's first event
    };
    std::vector<Open> open;
    int untimed = 0, other = 0, dropped = 0;
    const auto keep = [&](TracePhase phase) {
        if (out.phases.size() < kMostTracePhases)
            out.phases.push_back(std::move(phase));
        else
            ++dropped;
    };
    // In time order (PyTorch records them so; a merged or edited list may not be).
    std::vector<std::size_t> order(annotations.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return annotations[x].timeUs < annotations[y].timeUs; });
    for (const std::size_t i : order) {
        const auto& a = annotations[i];
        if (a.device >= 0 && a.device != device) {
            ++other;
            continue;
        }
        if (a.timeUs < 0 || !timed) {
            ++untimed;
            continue;
        }
        const Step step = stepAt(a.timeUs);
        const bool beforeTrace = events.empty() || a.timeUs < times.front(); // before the trace's first event (its window)
        if (a.stage == "START") {
            open.push_back({ i, step, int(open.size()), beforeTrace });
        } else if (a.stage == "END") {
            const auto match = std::find_if(open.rbegin(), open.rend(), [&](const Open& o) { return annotations[o.annotation].name == a.name; });
            if (beforeTrace) {
                // Over before the trace began: nothing of it is on the axis.
            } else if (match != open.rend()) {
                keep({ a.name, match->begin, step, match->depth, match->cut, std::max(annotations[match->annotation].timeUs, times.front()), a.timeUs });
            } else {
                keep({ a.name, 0, step, int(open.size()), true, times.front(), a.timeUs });
            }
            if (match != open.rend())
                open.erase(std::next(match).base());
        } else if (!beforeTrace) {
            keep({ a.name, step, step, int(open.size()), false, a.timeUs, a.timeUs });
        }
    }
    for (const auto& o : open)
        keep({ annotations[o.annotation].name, o.begin, endStep, o.depth, true, std::max(annotations[o.annotation].timeUs, times.front()), times.back() });
    std::stable_sort(out.phases.begin(), out.phases.end(), [](const TracePhase& x, const TracePhase& y) {
        return x.begin != y.begin ? x.begin < y.begin : x.depth < y.depth;
    });
    if (untimed > 0)
        out.notes.push_back(std::to_string(untimed) + (timed ? " annotations have no time" : " annotations cannot be placed: the trace's events have no times")
            + " and are not shown");
    if (other > 0)
        out.notes.push_back(std::to_string(other) + " annotations of other devices are not shown");
    if (dropped > 0)
        out.notes.push_back(std::to_string(dropped) + " annotations beyond the first " + std::to_string(kMostTracePhases) + " phases are not shown");
    return out;
}

std::vector<float> stepSeconds(const std::vector<TraceEvent>& events)
{
    std::int64_t first = -1, last = -1;
    for (const auto& e : events)
        if (e.timeUs >= 0) {
            first = first < 0 ? e.timeUs : std::min(first, e.timeUs);
            last = std::max(last, e.timeUs);
        }
    if (first < 0)
        return {};
    std::vector<float> seconds(events.size() + 1, 0.0f);
    std::int64_t now = first;
    for (std::size_t e = 0; e < events.size(); ++e) {
        now = std::max(now, events[e].timeUs); // an event without a time keeps the one before
        seconds[e + 1] = float(double(now - first) * 1e-6);
    }
    return seconds;
}

std::int64_t phasePeak(const TracePhase& phase, const std::vector<std::int64_t>& curve)
{
    if (curve.empty())
        return 0;
    const auto last = curve.size() - 1;
    const auto begin = std::min<std::size_t>(std::size_t(std::max<Step>(phase.begin, 0)), last);
    const auto end = std::clamp<std::size_t>(std::size_t(std::max<Step>(phase.end, 0)), begin, last);
    return *std::max_element(curve.begin() + std::ptrdiff_t(begin), curve.begin() + std::ptrdiff_t(end) + 1);
}

} // namespace core
