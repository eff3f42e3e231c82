// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// An ONNX Runtime profile (Chrome-trace JSON): read it, lay it over a fixed model's schedule
// (example:cnn) and write both reports. A profile that reads must hold a pass with nodes whose
// numbers are in range; every node maps to at most one step and every step to at most one node
// (mapped + unmapped = nodes, mapped + unrun = steps); the reports must not fail.
#include "fuzzcommon.h"

#include "trace/ortreport.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace {
const core::Workload& model()
{
    static const core::Workload workload = [] {
        auto w = core::loadWorkload("example:cnn", {});
        if (!w)
            fuzz::fail("example:cnn does not load: " + w.error().message);
        return std::move(*w);
    }();
    return workload;
}

const core::TraceReplan& plan()
{
    static const core::TraceReplan result = [] {
        auto p = core::planForProfile(model(), *core::plannerByName(core::kDefaultPlanner));
        if (!p)
            fuzz::fail("example:cnn does not plan: " + p.error().message);
        return std::move(*p);
    }();
    return result;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto profile = core::parseOrtProfile(fuzz::text(data, size), "fuzz.json");
    if (!profile) {
        fuzz::checkError(profile.error(), "parseOrtProfile");
        return 0;
    }
    if (profile->nodes.empty() || profile->pass < 0 || profile->pass >= profile->runs)
        fuzz::fail("a profile read with " + std::to_string(profile->nodes.size()) + " nodes, pass " + std::to_string(profile->pass) + " of "
            + std::to_string(profile->runs));
    for (const auto& node : profile->nodes)
        for (const auto value : { node.tsUs, node.durUs, node.nodeIndex, node.outputBytes, node.inUse, node.requestedInUse, node.arenaHeld })
            if (value < -1 || value > core::kMostProblemBytes)
                fuzz::fail("node '" + node.name + "' holds " + std::to_string(value));
    const auto overlay = core::overlayOrtProfile(*profile, model());
    if (!overlay)
        fuzz::fail("the overlay on example:cnn failed: " + overlay.error().message);
    const auto steps = int(overlay->steps.size());
    if (overlay->mapped + int(overlay->unmappedNodes.size()) != int(profile->nodes.size()) || overlay->mapped + int(overlay->unrunSteps.size()) != steps)
        fuzz::fail("mapped " + std::to_string(overlay->mapped) + ", unmapped " + std::to_string(overlay->unmappedNodes.size()) + ", unrun "
            + std::to_string(overlay->unrunSteps.size()) + " for " + std::to_string(profile->nodes.size()) + " nodes and " + std::to_string(steps) + " steps");
    std::vector<bool> seen(profile->nodes.size());
    for (const auto& step : overlay->steps)
        if (step.node >= 0) {
            if (std::size_t(step.node) >= seen.size() || seen[std::size_t(step.node)])
                fuzz::fail("node " + std::to_string(step.node) + " maps to two steps, or is out of range");
            seen[std::size_t(step.node)] = true;
        }
    const core::OrtComparison with { &model(), &*overlay, &plan() };
    if (core::formatOrtReport(*profile).empty() || core::formatOrtReport(*profile, with).empty())
        fuzz::fail("an empty report");
    for (const auto& text : { core::ortReportJson(*profile), core::ortReportJson(*profile, with) })
        if (!nlohmann::json::accept(text))
            fuzz::fail("the JSON report does not parse");
    return 0;
}
