// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Strategy flags of the memplan CLI, kept apart from memplan.cpp.
#include "strategycli.h"

#include "cost/opcost.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "strategies/budget.h"
#include "strategies/training.h"
#include "util/format.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace {
const std::vector<std::string> kStrategyFlags { "simplify", "fuse", "reorder", "recompute", "swap", "inplace" };

std::string fixed(double value, const char* format)
{
    char text[64];
    std::snprintf(text, sizeof text, format, value);
    return text;
}

core::Error budgetError(const std::string& text)
{
    return core::makeError(core::ErrorCode::InvalidArgument, "--budget '" + text + "': expected a size such as 1048576, 512KiB, 24MiB or 2GiB");
}

std::string deviceNames()
{
    std::string names;
    for (const auto& d : core::builtinDevices())
        names += "      " + d.name + std::string(18 - std::min<std::size_t>(17, d.name.size()), ' ') + d.description + "\n";
    return names;
}
} // namespace

core::Expected<core::DeviceProfile> deviceFrom(const CliArgs& args, const std::string& option)
{
    if (const auto name = args.value(option))
        return core::findDevice(*name);
    return core::defaultDevice();
}

std::set<std::string> strategySwitches()
{
    return { "simplify", "fuse", "inplace", "reorder", "recompute", "swap", "strategies", "training", "persistent-grads", "grads-in-arena" };
}
std::set<std::string> strategyValuedOptions() { return { "device", "budget", "checkpoint" }; }

std::string trainingHelp()
{
    return R"(training:
  --training            append the backward pass (loss gradient, then each op's gradient op in reverse;
                        forward activations stay alive until the gradient that reads them; weight
                        gradients are outputs)
  --checkpoint sqrt|N   on a training graph (--training, or a captured one with a backward phase): recompute with the checkpoint policy: keep the outputs of every
                        N-th forward op (sqrt: N = round(sqrt(forward ops))) and recompute the segments
                        between them just before the backward pass needs them (implies --recompute)
  --persistent-grads    with --training: weight gradients are persistent buffers outside the arena (as a
                        framework's preallocated gradients) instead of arena outputs alive to the end
  --grads-in-arena      on a captured training step: its gradients (category gradient, persistent) are
                        arena buffers born at the op that computes them and alive to the end of the step
                        (as PyTorch keeps .grad) instead of the gradients region outside the arena
)";
}

core::Status checkStrategyOptions(const CliArgs& args, const std::string& profileOption)
{
    if (args.has("persistent-grads") && !args.has("training"))
        return core::makeError(core::ErrorCode::InvalidArgument, "--persistent-grads needs --training");
    if (const auto text = args.value("checkpoint"); text && !parseCheckpointEvery(*text))
        return core::makeError(core::ErrorCode::InvalidArgument, "--checkpoint '" + *text + "': " + kCheckpointExpected);
    if (const auto text = args.value("budget"); text && !parseByteSize(*text))
        return budgetError(*text);
    if (auto device = deviceFrom(args, profileOption); !device)
        return device.error();
    return {};
}

int strategyOptionsExitCode(const core::Error& error) { return error.code == core::ErrorCode::InvalidArgument ? 2 : 1; }

core::Status checkCheckpointTarget(const CliArgs& args, const core::Workload& workload)
{
    if (!args.has("checkpoint") || !workload.graph || core::backwardStart(*workload.graph, workload.schedule) < workload.schedule.steps())
        return {};
    return core::makeError(core::ErrorCode::InvalidArgument,
        "--checkpoint needs a training graph (add --training, or give a captured one with a backward phase): checkpoints "
        "trade recomputation for the activations the backward pass keeps");
}

core::Status applyTrainingFlag(const CliArgs& args, core::Workload& workload)
{
    if (!args.has("training"))
        return {};
    core::TrainingOptions options;
    options.weightGradientsInArena = !args.has("persistent-grads");
    auto training = core::appendBackwardPass(workload, options);
    if (!training)
        return training.error();
    workload = std::move(*training);
    return {};
}

core::Status applyGradsInArenaFlag(const CliArgs& args, core::Workload& workload)
{
    if (!args.has("grads-in-arena"))
        return {};
    auto moved = core::gradientsInArena(workload);
    if (!moved)
        return moved.error();
    workload = std::move(*moved);
    return {};
}

std::string strategyHelp() { return strategyHelp("device"); }

std::string strategyHelp(const std::string& profileOption)
{
    std::string option = "--" + profileOption + " NAME|FILE";
    option.resize(std::max<std::size_t>(option.size() + 1, 22), ' ');
    return R"(strategies (applied in this order; see docs/STRATEGIES.md):
  --simplify            a runtime's graph rewrites: remove Identity, Dropout, no-op Cast and view chains,
                        cancel Transpose pairs (pushed through elementwise ops), fold ops that read only
                        weights into constants (its own flag: --fuse does not imply it)
  --fuse                fuse Conv/Gemm/MatMul with BatchNorm, bias and activation, elementwise chains, and
                        quantized groups (DequantizeLinear -> op -> QuantizeLinear: the float tensors go)
  --reorder             memory-aware topological order (kept only when it lowers the peak)
  --recompute           drop long-lived tensors and recompute them before a later read (greedy; see
                        --checkpoint for the checkpoint policy on training graphs)
  --swap                move long-idle tensors to host memory and back (timed on the device profile)
  --inplace             elementwise and view ops write into an input that dies there
  (with several named, a strategy the others do better without is left out, and its report says so)
  --budget SIZE         choose the strategies that fit SIZE (bytes, or KiB/MiB/GiB) with the least estimated
                        time (tries every combination; the strategy flags are then ignored)
  )" + option + R"(device profile for costs (default h200), a JSON file or one of:
)" + deviceNames();
}

core::Status applyStrategyFlags(const CliArgs& args, core::Workload& workload, std::vector<core::StrategyReport>& reports,
    const std::string& profileOption, core::Transformed* state)
{
    std::vector<std::string> names;
    for (const auto& flag : kStrategyFlags)
        if (args.has(flag) || (flag == "recompute" && args.has("checkpoint")))
            names.push_back(flag);
    if (names.empty() && !args.has("budget"))
        return {};
    auto device = deviceFrom(args, profileOption);
    if (!device)
        return device.error();
    core::StrategyOptions options;
    options.device = *device;
    options.alignment = workload.problem.alignment;
    if (const auto text = args.value("checkpoint")) {
        options.recomputePolicy = core::RecomputePolicy::Checkpoint;
        options.checkpointEvery = parseCheckpointEvery(*text).value_or(0);
    }
    if (const auto text = args.value("budget")) {
        const auto budget = parseByteSize(*text);
        if (!budget)
            return budgetError(*text);
        const auto plannerName = args.value("planner").value_or(std::string(core::kDefaultPlanner));
        const auto* planner = core::plannerByName(plannerName);
        if (!planner)
            return core::makeError(core::ErrorCode::InvalidArgument, "unknown planner '" + plannerName + "'");
        auto choice = core::chooseForBudget(workload, *budget, *planner, options);
        if (!choice)
            return choice.error();
        std::string label;
        for (const auto& n : choice->names)
            label += (label.empty() ? "" : "+") + n;
        if (label.empty())
            label = "no strategy";
        workload = std::move(choice->run.workload);
        reports = std::move(choice->run.reports);
        if (state)
            *state = std::move(choice->run.state);
        workload.notes.push_back(choice->fits
                ? "budget " + core::formatBytes(*budget) + " met with " + label + " (least estimated time of "
                    + std::to_string(choice->combinationsTried) + " combinations)"
                : "budget " + core::formatBytes(*budget) + " NOT met: the smallest arena reached is "
                    + core::formatBytes(choice->plan.arenaSize) + ", with " + label);
        workload.notes.push_back("strategies costed on device '" + options.device.name + "'");
        return {};
    }
    auto run = core::applyStrategies(workload, names, options);
    if (!run)
        return run.error();
    workload = std::move(run->workload);
    reports = std::move(run->reports);
    if (state)
        *state = std::move(run->state);
    workload.notes.push_back("strategies costed on device '" + options.device.name + "'");
    return {};
}

std::string formatStrategyReports(const std::vector<core::StrategyReport>& reports, int maxDetails)
{
    std::string out;
    for (const auto& r : reports) {
        out += "strategy " + r.name + ": lower bound " + core::formatBytes(r.lowerBoundBefore) + " -> "
            + core::formatBytes(r.lowerBoundAfter) + ", saved " + core::formatBytes(r.savedBytes()) + ", extra FLOPs "
            + fixed(r.extraFlops, "%.3g") + ", swapped " + core::formatBytes(r.swappedBytes)
            + (r.swappedBytes > 0 ? " (copies " + fixed(r.transferSeconds * 1e3, "%.3f") + " ms)" : std::string()) + ", extra time "
            + fixed(r.extraSeconds * 1e3, "%.3f") + " ms\n";
        for (std::size_t i = 0; i < r.details.size() && i < static_cast<std::size_t>(maxDetails); ++i)
            out += "  " + r.details[i] + "\n";
        if (maxDetails > 0 && r.details.size() > static_cast<std::size_t>(maxDetails))
            out += "  ... and " + std::to_string(r.details.size() - maxDetails) + " more\n";
    }
    return out;
}

std::string addStrategiesToPlanJson(const std::string& planJson, const std::vector<core::StrategyReport>& reports)
{
    // exportPlanJson ends with "\n}\n"; the field goes in before the closing brace.
    const auto close = planJson.rfind('}');
    if (reports.empty() || close == std::string::npos)
        return planJson;
    auto list = nlohmann::ordered_json::array();
    for (const auto& r : reports) {
        nlohmann::ordered_json entry;
        entry["name"] = r.name;
        entry["saved_bytes"] = r.savedBytes();
        entry["extra_flops"] = r.extraFlops;
        entry["swapped_bytes"] = r.swappedBytes;
        entry["estimated_transfer_ms"] = r.transferSeconds * 1e3;
        entry["estimated_extra_ms"] = r.extraSeconds * 1e3;
        entry["lower_bound_before_bytes"] = r.lowerBoundBefore;
        entry["lower_bound_after_bytes"] = r.lowerBoundAfter;
        entry["details"] = r.details;
        list.push_back(std::move(entry));
    }
    auto head = planJson.substr(0, close);
    while (!head.empty() && (head.back() == '\n' || head.back() == ' '))
        head.pop_back();
    return head + ",\n  \"strategies\": " + list.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n}\n";
}

int compareStrategies(const CliArgs& args, const core::Workload& workload)
{
    auto device = deviceFrom(args);
    if (!device) {
        std::cerr << "memplan: compare: " << device.error().message << "\n";
        return 2;
    }
    if (!workload.graph) {
        std::cerr << "memplan: compare: " << workload.source << " is an allocation problem; strategies need a graph\n";
        return 1;
    }
    const auto plannerName = args.value("planner").value_or(std::string(core::kDefaultPlanner));
    const auto* planner = core::plannerByName(plannerName);
    if (!planner) {
        std::cerr << "memplan: compare: unknown planner '" << plannerName << "'\n";
        return 2;
    }
    core::StrategyOptions options;
    options.device = *device;
    options.alignment = workload.problem.alignment;
    const double baseSeconds = core::scheduleCost(*workload.graph, workload.schedule, options.device).seconds;
    struct Combination {
        std::vector<std::string> names;
        bool checkpoint = false; // recompute with the checkpoint policy
    };
    std::vector<Combination> combinations { { {} }, { { "fuse" } }, { { "inplace" } }, { { "reorder" } }, { { "recompute" } },
        { { "swap" } }, { { "simplify" } }, { { "fuse", "inplace" } }, { { "simplify", "fuse", "inplace" } }, { { "fuse", "reorder", "inplace" } }, { { "fuse", "reorder", "recompute", "inplace" } },
        { { "fuse", "reorder", "swap", "inplace" } }, { { "fuse", "reorder", "recompute", "swap", "inplace" } } };
    // A training graph also gets the checkpoint policy (every --checkpoint N, default sqrt).
    const int every = parseCheckpointEvery(args.value("checkpoint").value_or("sqrt")).value_or(0);
    if (core::backwardStart(*workload.graph, workload.schedule) < workload.schedule.steps()) {
        combinations.push_back({ { "recompute" }, true });
        combinations.push_back({ { "fuse", "recompute", "inplace" }, true });
    }
    const core::Bytes baseBound = core::lowerBound(workload.problem);
    std::printf("%s on %s, planner %s\n", workload.source.c_str(), options.device.name.c_str(), plannerName.c_str());
    std::printf("%-38s %12s %12s %12s %11s %12s %11s\n", "strategies", "lower bound", "arena", "saved", "extra FLOPs", "swapped",
        "est. time");
    for (const auto& [names, checkpoint] : combinations) {
        options.recomputePolicy = checkpoint ? core::RecomputePolicy::Checkpoint : core::RecomputePolicy::Greedy;
        options.checkpointEvery = every;
        auto run = core::applyStrategies(workload, names, options);
        if (!run) {
            std::cerr << "memplan: compare: " << run.error().message << "\n";
            return 1;
        }
        const auto plan = core::runPlanner(*planner, run->workload.problem);
        if (!plan) {
            std::cerr << "memplan: compare: " << plan.error().message << "\n";
            return 1;
        }
        const auto check = core::validatePlan(run->workload.problem, *plan);
        if (!check.ok()) {
            std::cerr << "memplan: compare: invalid plan after strategies: " << check.message << "\n";
            return 1;
        }
        double flops = 0;
        const double seconds = baseSeconds + core::extraSeconds(run->reports);
        core::Bytes swapped = 0;
        for (const auto& r : run->reports) {
            flops += r.extraFlops;
            swapped += r.swappedBytes;
        }
        std::string label;
        for (const auto& n : names)
            label += (label.empty() ? "" : "+") + (checkpoint && n == "recompute" ? std::string("checkpoint") : n);
        const auto bound = core::lowerBound(run->workload.problem);
        std::printf("%-38s %12s %12s %12s %11s %12s %8.3f ms\n", label.empty() ? "(none)" : label.c_str(),
            core::formatBytes(bound).c_str(), core::formatBytes(plan->arenaSize).c_str(),
            core::formatBytes(baseBound - bound).c_str(), fixed(flops, "%.3g").c_str(), core::formatBytes(swapped).c_str(),
            seconds * 1e3);
    }
    return 0;
}
