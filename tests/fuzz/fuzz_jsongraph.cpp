// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// A JSON graph (docs/FILE_FORMATS.md): parse, schedule, lifetimes, every planner. A graph that
// loads must also survive its own export: exportJsonGraph's text loads again, with as many tensors and ops.
#include "fuzzcommon.h"

#include "io/jsongraph.h"
#include "io/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    auto graph = core::parseJsonGraph(fuzz::text(data, size), "fuzz.json");
    if (!graph) {
        fuzz::checkError(graph.error(), "parseJsonGraph");
        return 0;
    }
    auto again = core::parseJsonGraph(core::exportJsonGraph(*graph), "exported.json");
    if (!again)
        fuzz::fail("the exported JSON graph does not load again: " + again.error().message);
    if (again->tensors.size() != graph->tensors.size() || again->ops.size() != graph->ops.size())
        fuzz::fail("the exported JSON graph loads with " + std::to_string(again->tensors.size()) + " tensors and "
            + std::to_string(again->ops.size()) + " ops instead of " + std::to_string(graph->tensors.size()) + " and "
            + std::to_string(graph->ops.size()));
    auto workload = core::workloadFromGraph(std::move(*graph), "fuzz.json", core::LoadOptions {});
    if (!workload) {
        fuzz::checkError(workload.error(), "workloadFromGraph");
        return 0;
    }
    fuzz::planAndValidate(workload->problem, "JSON graph");
    return 0;
}
