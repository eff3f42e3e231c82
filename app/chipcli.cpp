// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "chipcli.h"

#include "cost/device.h"
#include "scenarios/multichip.h"
#include "scenarios/multichipreport.h"
#include "util/format.h"

std::string chipHelp()
{
    return R"(multi-chip (fixed-memory accelerators such as groq-lpu; weights and activations share each chip's memory):
  --chips auto|N        cut the schedule into stages, one per chip of --device, each fitting the chip's
                        capacity: auto takes the fewest chips, N spreads the load over exactly N chips.
                        Prints the stage table; --json adds "stages", "chips", "pooled_capacity_bytes",
                        "transfers". Stage arenas use --planner. Without --chips, --device warns when the
                        model does not fit one chip.
)";
}

core::Expected<std::optional<int>> chipsFrom(const CliArgs& args)
{
    const auto text = args.value("chips");
    if (!text)
        return std::optional<int> {};
    if (*text == "auto")
        return std::optional<int> { 0 };
    const auto n = parseInteger(*text);
    if (!n || *n < 1 || *n > 1'000'000)
        return core::makeError(core::ErrorCode::InvalidArgument, "--chips '" + *text + "': expected auto or a chip count such as 4");
    return std::optional<int> { static_cast<int>(*n) };
}

core::Expected<std::string> chipReport(const CliArgs& args, const core::Workload& workload, const core::Plan& plan,
    const std::string& plannerName, nlohmann::ordered_json& multiChip)
{
    auto chips = chipsFrom(args);
    if (!chips)
        return chips.error();
    const auto deviceName = args.value("device");
    if (!*chips && !deviceName)
        return std::string();
    auto device = deviceName ? core::findDevice(*deviceName) : core::defaultDevice();
    if (!device)
        return device.error();
    if (!*chips) {
        core::Bytes weights = 0;
        for (const auto& region : workload.regions)
            weights += region.size;
        const core::Bytes need = weights + plan.arenaSize;
        if (need <= device->memoryCapacity)
            return std::string();
        return "warning: " + workload.source + " needs " + core::formatDecimalBytes(need) + " (weights and state "
            + core::formatDecimalBytes(weights) + " + arena " + core::formatDecimalBytes(plan.arenaSize) + ") but one "
            + device->name + " holds " + core::formatDecimalBytes(device->memoryCapacity) + ": over by "
            + core::formatDecimalBytes(need - device->memoryCapacity) + " (" + std::to_string(need - device->memoryCapacity)
            + " B); split it over chips with --chips auto\n";
    }
    if (!workload.graph)
        return core::makeError(core::ErrorCode::InvalidArgument,
            workload.source + " is an allocation problem; --chips needs a model graph");
    core::MultiChipOptions options;
    options.chips = **chips;
    options.planner = plannerName;
    if (const auto alignment = args.value("alignment"))
        options.alignment = workload.problem.alignment;
    auto partition = core::planMultiChip(*workload.graph, workload.schedule, *device, options);
    if (!partition)
        return core::makeError(partition.error().code, workload.source + ": " + partition.error().message);
    multiChip = core::multiChipJson(*workload.graph, workload.schedule, *partition);
    return core::formatMultiChipReport(*workload.graph, workload.schedule, *partition);
}
