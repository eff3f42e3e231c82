// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The plan JSON (docs/FILE_FORMATS.md) of a fuzzed JSON graph (input starting with '{') or allocation
// CSV (anything else): MemPlan writes it (`memplan plan --json`, the Studio's export) and other tools
// read it, so it must parse as JSON and state the plan that was made: names from the input file,
// whatever their bytes, may not break the document. (MemPlan has no plan JSON reader of its own.)
#include "fuzzcommon.h"

#include "io/jsongraph.h"
#include "io/planjson.h"
#include "io/problemcsv.h"
#include "io/workload.h"

#include <nlohmann/json.hpp>

#include <optional>

namespace {
std::optional<core::Workload> load(const std::string& input)
{
    const auto first = input.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && input[first] == '{') {
        auto graph = core::parseJsonGraph(input, "fuzz.json");
        if (!graph)
            return std::nullopt;
        auto workload = core::workloadFromGraph(std::move(*graph), "fuzz.json", core::LoadOptions {});
        return workload ? std::optional<core::Workload>(std::move(*workload)) : std::nullopt;
    }
    auto csv = core::parseProblemCsv(input, "fuzz.csv");
    if (!csv)
        return std::nullopt;
    return core::workloadFromProblem(std::move(csv->problem), "fuzz.csv", core::LoadOptions {});
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto workload = load(fuzz::text(data, size));
    if (!workload || workload->problem.buffers.size() > fuzz::kMostPlannedBuffers)
        return 0;
    const auto* planner = core::plannerByName(core::kDefaultPlanner);
    auto plan = core::runPlanner(*planner, workload->problem);
    if (!plan)
        return 0;
    const auto text = core::exportPlanJson(*workload, *plan);
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        fuzz::fail(std::string("the plan JSON does not parse: ") + e.what());
    }
    try {
        const auto& buffers = doc.at("buffers");
        if (doc.at("arena_bytes").get<core::Bytes>() != plan->arenaSize)
            fuzz::fail("the plan JSON states another arena size than the plan's");
        if (buffers.size() != workload->problem.buffers.size())
            fuzz::fail("the plan JSON lists " + std::to_string(buffers.size()) + " buffers for "
                + std::to_string(workload->problem.buffers.size()));
        for (std::size_t i = 0; i < buffers.size(); ++i)
            if (buffers[i].at("offset").get<core::Bytes>() != plan->offsets[i]
                || buffers[i].at("size_bytes").get<core::Bytes>() != workload->problem.buffers[i].size)
                fuzz::fail("the plan JSON states another offset or size for buffer " + std::to_string(i));
    } catch (const nlohmann::json::exception& e) {
        fuzz::fail(std::string("the plan JSON lacks a field of docs/FILE_FORMATS.md: ") + e.what());
    }
    return 0;
}
