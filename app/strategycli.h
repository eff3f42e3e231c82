// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "cliargs.h"

#include "cost/device.h"
#include "strategies/strategy.h"

#include <set>
#include <string>
#include <vector>

// The strategy options of `memplan plan` and `memplan compare`.
std::set<std::string> strategySwitches(); // fuse, inplace, reorder, recompute, swap, strategies, training, persistent-grads, grads-in-arena
std::set<std::string> strategyValuedOptions(); // device, budget, checkpoint
std::string strategyHelp();
std::string trainingHelp(); // --training, --checkpoint, --persistent-grads, --grads-in-arena

// The device profile for costs: the one `--OPTION NAME|FILE` names, else the default (h200).
core::Expected<core::DeviceProfile> deviceFrom(const CliArgs& args, const std::string& option = "device");

// Checks, before anything loads, what the strategy and training options say: --checkpoint (sqrt or a
// whole number >= 1), --budget (a size), the device profile `--OPTION` names, and that
// --persistent-grads comes with --training.
core::Status checkStrategyOptions(const CliArgs& args, const std::string& profileOption = "device");
// The exit code for checkStrategyOptions's error: 2 for a bad command line; 1 for a profile file
// that cannot be read or is not a profile (bad input, as a broken model file is).
int strategyOptionsExitCode(const core::Error& error);
// After loading (and --training): --checkpoint needs a graph with a backward pass, appended by
// --training or captured (core::backwardStart) (also exit 2).
core::Status checkCheckpointTarget(const CliArgs& args, const core::Workload& workload);

// --training: replaces `workload` with the one with the backward pass appended. No flag: leaves it alone.
core::Status applyTrainingFlag(const CliArgs& args, core::Workload& workload);
// --grads-in-arena (after --training): replaces `workload` with core::gradientsInArena's. Errors: a
// graph without persistent gradients (InvalidArgument: the flag does not apply, exit 2). No flag:
// leaves it alone.
core::Status applyGradsInArenaFlag(const CliArgs& args, core::Workload& workload);

// Applies the strategies the flags name to `workload` (replaced by the transformed one) and fills
// `reports`; --checkpoint turns recompute on with the checkpoint policy. No strategy flag: leaves both
// alone. Errors: unknown device, a workload without a graph.
// `profileOption` names the option that selects the device profile for costs: "device" for
// `memplan plan`/`compare`, "profile" for `memplan run` (where --device picks the executor).
// `state`, when given, receives what the strategies did (core::Transformed), for marking the views.
core::Status applyStrategyFlags(const CliArgs& args, core::Workload& workload, std::vector<core::StrategyReport>& reports,
    const std::string& profileOption = "device", core::Transformed* state = nullptr);

// The help lines of the strategy flags with the profile option spelled `--OPTION` (see strategyHelp()).
std::string strategyHelp(const std::string& profileOption);

// Report lines, one block per strategy: saved bytes, extra FLOPs, swapped bytes, extra time, and up to
// maxDetails details (0: none).
std::string formatStrategyReports(const std::vector<core::StrategyReport>& reports, int maxDetails = 8);

// The plan JSON with "strategies": [{name, saved_bytes, extra_flops, swapped_bytes, estimated_extra_ms, details}] added.
std::string addStrategiesToPlanJson(const std::string& planJson, const std::vector<core::StrategyReport>& reports);

// `memplan compare MODEL --strategies`: one row per strategy combination; returns the exit code.
int compareStrategies(const CliArgs& args, const core::Workload& workload);
