// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "trace/tracebreakdown.h"

#include "planners/metrics.h"

#include <algorithm>
#include <map>

namespace core {

std::vector<SiteShare> liveBySite(const MeasuredTrace& trace, Step step)
{
    std::map<std::string, SiteShare> named;
    std::map<int, std::string> labels; // frame -> label, made once per frame
    for (const int i : liveAt(trace.problem, step)) {
        const auto& a = trace.allocations[std::size_t(i)];
        auto label = labels.find(a.frame);
        if (label == labels.end())
            label = labels.emplace(a.frame, trace.frameName(a.frame)).first;
        auto& share = named[label->second];
        share.site = label->second;
        share.bytes += a.size;
        ++share.allocations;
    }
    std::vector<SiteShare> out;
    out.reserve(named.size());
    for (auto& [site, share] : named)
        out.push_back(std::move(share));
    std::stable_sort(out.begin(), out.end(), [](const SiteShare& a, const SiteShare& b) { return a.bytes > b.bytes; });
    return out;
}

std::vector<StreamShare> streamShares(const MeasuredTrace& trace)
{
    std::map<std::int64_t, StreamShare> streams;
    for (const auto& a : trace.allocations) {
        auto& s = streams[a.stream];
        s.stream = a.stream;
        ++s.allocations;
    }
    for (const int i : liveAt(trace.problem, trace.peakAllocatedStep)) {
        const auto& a = trace.allocations[std::size_t(i)];
        streams[a.stream].bytesAtPeak += a.size;
    }
    std::vector<StreamShare> out;
    for (const auto& [stream, share] : streams)
        out.push_back(share);
    std::stable_sort(out.begin(), out.end(), [](const StreamShare& a, const StreamShare& b) { return a.allocations > b.allocations; });
    return out;
}

std::vector<PhasePeak> phasePeaks(const MeasuredTrace& trace, int maxDepth, std::size_t top)
{
    std::vector<PhasePeak> out;
    for (const auto& phase : trace.phases) {
        if (phase.depth > maxDepth)
            continue;
        if (top > 0 && out.size() >= top)
            break;
        out.push_back({ &phase, phasePeak(phase, trace.allocated) });
    }
    return out;
}

std::vector<PhaseName> phaseNames(const std::vector<TracePhase>& phases, const std::vector<std::int64_t>& allocated)
{
    std::map<std::string, PhaseName> names;
    for (const auto& phase : phases) {
        auto& n = names[phase.name];
        n.name = phase.name;
        ++n.times;
        n.peakAllocated = std::max(n.peakAllocated, phasePeak(phase, allocated));
        n.totalUs += std::max<std::int64_t>(phase.endUs - phase.startUs, 0);
    }
    std::vector<PhaseName> out;
    for (auto& [name, n] : names)
        out.push_back(std::move(n));
    std::stable_sort(out.begin(), out.end(), [](const PhaseName& a, const PhaseName& b) { return a.peakAllocated > b.peakAllocated; });
    return out;
}

} // namespace core
