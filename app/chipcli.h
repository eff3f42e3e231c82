// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "cliargs.h"

#include "planners/problem.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

// `memplan plan --chips auto|N` (multi-chip partition, core/scenarios/multichip.h) and the capacity
// check of `memplan plan --device` without --chips.
std::string chipHelp();

// --chips: nullopt when absent, 0 for "auto", N >= 1 otherwise. Error: not "auto" nor a positive integer.
core::Expected<std::optional<int>> chipsFrom(const CliArgs& args);

// After the single-arena plan of `workload`: with --chips, the stage table (returned) and its JSON
// fields in `multiChip`; without it but with --device, a warning line when the weights plus `plan`'s
// arena exceed the device's capacity (empty text when they fit). Errors: unknown device, an
// allocation problem (no graph), a partition that cannot fit.
core::Expected<std::string> chipReport(const CliArgs& args, const core::Workload& workload, const core::Plan& plan,
    const std::string& plannerName, nlohmann::ordered_json& multiChip);
