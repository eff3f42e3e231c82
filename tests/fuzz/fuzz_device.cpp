// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// A device profile (resources/devices/*.json, `--device FILE`): parse, then use it as the CLI does:
// its alignment for a plan of a small graph, its rates for the roofline cost of the schedule.
#include "fuzzcommon.h"

#include "cost/device.h"
#include "cost/opcost.h"
#include "io/jsongraph.h"
#include "io/workload.h"

#include <cmath>

namespace {
// A three-tensor graph (tests/data/tiny_graph.json), so planning with each fuzzed alignment stays fast.
const core::Graph& tinyGraph()
{
    static const core::Graph graph = [] {
        auto parsed = core::parseJsonGraph(R"({"name": "tiny",
            "tensors": [{"name": "x", "dtype": "float32", "shape": [1, 3], "kind": "input"}, {"name": "h", "bytes": 512},
                        {"name": "y", "dtype": "float32", "shape": [1, 3]}],
            "ops": [{"name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["h"]},
                    {"name": "sig", "type": "Sigmoid", "inputs": ["h"], "outputs": ["y"]}],
            "outputs": ["y"]})", "tiny.json");
        if (!parsed)
            fuzz::fail("the tiny graph does not load: " + parsed.error().message);
        return *parsed;
    }();
    return graph;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    auto device = core::parseDeviceProfile(fuzz::text(data, size), "fuzz-device.json");
    if (!device) {
        fuzz::checkError(device.error(), "parseDeviceProfile");
        return 0;
    }
    core::LoadOptions options;
    options.alignment = device->alignment;
    auto workload = core::workloadFromGraph(tinyGraph(), "tiny.json", options);
    if (!workload) {
        fuzz::checkError(workload.error(), "workloadFromGraph with the profile's alignment");
        return 0;
    }
    fuzz::planAndValidate(workload->problem, "device profile alignment " + std::to_string(device->alignment));
    const auto cost = core::scheduleCost(*workload->graph, workload->schedule, *device);
    if (std::isnan(cost.seconds) || cost.seconds < 0)
        fuzz::fail("the schedule cost on an accepted profile is " + std::to_string(cost.seconds) + " s");
    return 0;
}
