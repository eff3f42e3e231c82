// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "trace/tracereport.h"

#include "trace/tracebreakdown.h"

#include "planners/metrics.h"
#include "planners/validate.h"
#include "util/format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace core {

namespace {
// Step s is the state after event s - 1.
std::string atStep(const MeasuredTrace& trace, Step step)
{
    if (!trace.hasTrace)
        return "when the snapshot was taken";
    return step == 0 ? "before the first event" : "after event " + std::to_string(step - 1);
}

std::string pad(std::string text, std::size_t width, bool right = true)
{
    if (text.size() < width)
        text = right ? std::string(width - text.size(), ' ') + text : text + std::string(width - text.size(), ' ');
    return text;
}

std::string percent(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f %%", value * 100.0);
    return text;
}

// Indices of the allocations live at `step`, largest first (ties: the earlier one).
std::vector<int> largestAt(const MeasuredTrace& trace, Step step, int top)
{
    auto live = liveAt(trace.problem, step);
    if (top > 0 && live.size() > std::size_t(top))
        live.resize(std::size_t(top));
    return live;
}

std::int64_t event(Step step) { return std::int64_t(step) - 1; }

// Frame names come from the snapshot as bytes: invalid UTF-8 in them is written as U+FFFD rather
// than ending the report on nlohmann's exception.
std::string dumpJson(const nlohmann::ordered_json& j) { return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n"; }
} // namespace

Expected<TraceReplan> planValidated(const PlanProblem& problem, const std::string& source, const Planner& planner)
{
    TraceReplan replan;
    replan.planner = std::string(planner.name());
    replan.lowerBound = lowerBound(problem);
    auto plan = runPlanner(planner, problem);
    if (!plan)
        return makeError(plan.error().code, source + ": " + replan.planner + ": " + plan.error().message);
    if (const auto check = validatePlan(problem, *plan); !check.ok())
        return makeError(ErrorCode::InvalidModel, source + ": planner '" + replan.planner + "' produced an invalid plan: " + check.message);
    replan.plan = std::move(*plan);
    return replan;
}

Expected<TraceReplan> replanTrace(const MeasuredTrace& trace, const Planner& planner)
{
    return planValidated(trace.problem, trace.source, planner);
}

std::string formatTraceReport(const MeasuredTrace& trace, const TraceReplan& replan, int top)
{
    std::string out = trace.source + ": PyTorch memory snapshot, device " + std::to_string(trace.device) + "\n";
    const auto line = [&](const std::string& label, const std::string& value) { out += "  " + pad(label, 20, false) + value + "\n"; };
    line("events", std::to_string(trace.eventCount) + (trace.hasTrace ? "" : " (no trace: the segments alone)"));
    line("allocations", std::to_string(trace.allocations.size()));
    line("OOM events", std::to_string(trace.ooms.size()));
    line("peak allocated", formatBytes(trace.peakAllocated()) + " " + atStep(trace, trace.peakAllocatedStep));
    line("peak reserved", formatBytes(trace.peakReserved()) + " " + atStep(trace, trace.peakReservedStep));
    const auto frag = trace.fragmentationAtPeak();
    line("fragmentation", formatBytes(frag) + " of the reserved peak held no allocation"
            + (trace.peakReserved() > 0 ? " (" + percent(double(frag) / double(trace.peakReserved())) + ")" : ""));
    line("lower bound", formatBytes(replan.lowerBound) + " (the most bytes live at once)");
    line("replanned arena", formatBytes(replan.plan.arenaSize) + " (" + replan.planner + ", "
            + percent(fragmentation(replan.plan.arenaSize, replan.lowerBound)) + " over the lower bound, " + formatSeconds(replan.plan.seconds)
            + ", validated)");
    out += "\nPyTorch reserved " + formatBytes(trace.peakReserved()) + "; allocations live at once never exceeded "
        + formatBytes(replan.lowerBound) + "; an offline plan packs them in " + formatBytes(replan.plan.arenaSize) + ".\n";
    if (!trace.ooms.empty()) {
        out += "\nOOM events:\n";
        for (const auto& oom : trace.ooms)
            out += "  event " + std::to_string(oom.event) + ": a request of " + formatBytes(oom.size) + " failed"
                + (oom.deviceFree >= 0 ? " (CUDA reported " + formatBytes(oom.deviceFree) + " free)" : "") + "\n";
    }
    const auto live = largestAt(trace, trace.peakAllocatedStep, top);
    if (!live.empty()) {
        out += "\nlargest allocations live at the allocated peak (" + atStep(trace, trace.peakAllocatedStep) + "):\n";
        for (const int i : live) {
            const auto& a = trace.allocations[std::size_t(i)];
            out += "  " + pad(formatBytes(a.size), 10) + "  " + pad(trace.frameName(a.frame), 40, false) + "  "
                + (a.allocEvent >= 0 ? "allocated at event " + std::to_string(a.allocEvent)
                        : trace.hasTrace ? std::string("allocated before the trace")
                                         : std::string("")) + "\n";
        }
    }
    const auto sites = liveBySite(trace, trace.peakAllocatedStep);
    if (sites.size() > 1) {
        out += "\nat the allocated peak, by allocation site:\n";
        for (std::size_t i = 0; i < sites.size() && (top <= 0 || i < std::size_t(top)); ++i)
            out += "  " + pad(formatBytes(sites[i].bytes), 10) + "  " + pad(std::to_string(sites[i].allocations), 5) + " live  " + sites[i].site + "\n";
        if (top > 0 && sites.size() > std::size_t(top))
            out += "  ... " + std::to_string(sites.size() - std::size_t(top)) + " more sites\n";
    }
    if (const auto streams = streamShares(trace); streams.size() > 1) {
        out += "\nstreams:\n";
        for (const auto& s : streams)
            out += "  stream " + pad(std::to_string(s.stream), 6, false) + pad(std::to_string(s.allocations), 8) + " allocations, "
                + formatBytes(s.bytesAtPeak) + " live at the allocated peak\n";
    }
    if (!trace.phases.empty()) {
        const std::size_t shown = top > 0 ? std::size_t(top) * 2 : 0;
        const auto phases = phasePeaks(trace, 0, shown);
        out += "\nphases (annotations) by name, the highest peak first:\n";
        const auto names = phaseNames(trace.phases, trace.allocated);
        for (std::size_t i = 0; i < names.size() && (top <= 0 || i < std::size_t(top)); ++i)
            out += "  " + pad(names[i].name, 24, false) + "  " + pad(std::to_string(names[i].times), 6) + " times, peak allocated "
                + formatBytes(names[i].peakAllocated) + ", " + formatSeconds(double(names[i].totalUs) * 1e-6 / names[i].times) + " each on average\n";
        out += "outermost phases (" + std::to_string(trace.phases.size()) + " phases in all):\n";
        for (const auto& p : phases)
            out += "  " + pad(p.phase->name, 24, false) + "  "
                + (p.phase->end > p.phase->begin ? "events " + std::to_string(p.phase->begin) + " to " + std::to_string(p.phase->end - 1)
                                                 : "after event " + std::to_string(event(p.phase->begin)))
                + (p.phase->cut ? " (cut by the trace)" : "") + ", peak allocated " + formatBytes(p.peakAllocated) + "\n";
    }
    if (!trace.notes.empty()) {
        out += "\nnotes:\n";
        for (const auto& note : trace.notes)
            out += "  " + note + "\n";
    }
    return out;
}

std::string traceReportJson(const MeasuredTrace& trace, const TraceReplan& replan, int top)
{
    nlohmann::ordered_json j;
    j["source"] = trace.source;
    j["device"] = trace.device;
    j["events"] = trace.eventCount;
    j["allocations"] = trace.allocations.size();
    j["oom_events"] = trace.ooms.size();
    j["peak_allocated_bytes"] = trace.peakAllocated();
    j["peak_allocated_event"] = event(trace.peakAllocatedStep);
    j["peak_reserved_bytes"] = trace.peakReserved();
    j["peak_reserved_event"] = event(trace.peakReservedStep);
    j["fragmentation_at_peak_bytes"] = trace.fragmentationAtPeak();
    j["lower_bound_bytes"] = replan.lowerBound;
    j["replanned_arena_bytes"] = replan.plan.arenaSize;
    j["planner"] = replan.planner;
    j["planning_seconds"] = replan.plan.seconds;
    auto& ooms = j["ooms"] = nlohmann::ordered_json::array();
    for (const auto& oom : trace.ooms)
        ooms.push_back({ { "event", oom.event }, { "size_bytes", oom.size }, { "device_free_bytes", oom.deviceFree } });
    auto& sites = j["sites_at_peak"] = nlohmann::ordered_json::array();
    for (const auto& site : liveBySite(trace, trace.peakAllocatedStep))
        sites.push_back({ { "site", site.site }, { "bytes", site.bytes }, { "allocations", site.allocations } });
    auto& streams = j["streams"] = nlohmann::ordered_json::array();
    for (const auto& s : streamShares(trace))
        streams.push_back({ { "stream", s.stream }, { "allocations", s.allocations }, { "bytes_at_peak", s.bytesAtPeak } });
    auto& phases = j["phases"] = nlohmann::ordered_json::array();
    for (const auto& p : phasePeaks(trace, INT32_MAX, 0))
        phases.push_back({ { "name", p.phase->name }, { "first_event", p.phase->begin }, { "last_event", p.phase->end - 1 },
            { "depth", p.phase->depth }, { "cut", p.phase->cut }, { "duration_us", p.phase->endUs - p.phase->startUs }, { "peak_allocated_bytes", p.peakAllocated } });
    auto& largest = j["largest_at_peak"] = nlohmann::ordered_json::array();
    for (const int i : largestAt(trace, trace.peakAllocatedStep, top)) {
        const auto& a = trace.allocations[std::size_t(i)];
        largest.push_back({ { "site", trace.frameName(a.frame) }, { "size_bytes", a.size }, { "address", a.address },
            { "alloc_event", a.allocEvent }, { "free_event", a.freeEvent } });
    }
    j["notes"] = trace.notes;
    return dumpJson(j);
}

} // namespace core
