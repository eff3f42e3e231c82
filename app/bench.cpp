// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "bench.h"

#include "io/problemcsv.h"
#include "io/workload.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/randomproblem.h"
#include "planners/validate.h"
#include "util/format.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>

namespace {

using core::Bytes;
using Clock = std::chrono::steady_clock;

struct Timed {
    core::Plan plan;
    double seconds = 0; // best of the runs
};

// Runs a planner up to three times (fewer when one run is slow) and keeps the fastest.
std::optional<Timed> timePlanner(const core::Planner& planner, const core::PlanProblem& problem, std::string& error,
    const core::PlanOptions& options = {})
{
    Timed best;
    best.seconds = 1e300;
    for (int run = 0; run < 3; ++run) {
        auto plan = core::runPlanner(planner, problem, {}, options);
        if (!plan) {
            error = plan.error().message;
            return std::nullopt;
        }
        if (plan->seconds < best.seconds) {
            best.seconds = plan->seconds;
            best.plan = std::move(*plan);
        }
        if (best.seconds > 0.5)
            break;
    }
    const auto check = core::validatePlan(problem, best.plan);
    if (!check.ok()) {
        error = std::string(planner.name()) + " produced an invalid plan: " + check.message;
        return std::nullopt;
    }
    return best;
}

std::vector<const core::Planner*> selectedPlanners(const CliArgs& args, std::string& error)
{
    std::vector<const core::Planner*> result;
    for (const auto& name : args.values("planner")) {
        const auto* planner = core::plannerByName(name);
        if (!planner) {
            error = "unknown planner '" + name + "'";
            return {};
        }
        result.push_back(planner);
    }
    if (result.empty())
        for (const auto& planner : core::planners())
            result.push_back(planner.get());
    return result;
}

void printRow(const std::string& what, const core::Planner& planner, const core::PlanProblem& problem, const Timed& timed)
{
    const Bytes bound = core::lowerBound(problem);
    std::printf("%-22s %8zu  %-18s %10s %12s %12s %8.3f\n", what.c_str(), problem.buffers.size(),
        std::string(planner.name()).c_str(), core::formatSeconds(timed.seconds).c_str(),
        core::formatBytes(bound).c_str(), core::formatBytes(timed.plan.arenaSize).c_str(),
        bound > 0 ? static_cast<double>(timed.plan.arenaSize) / static_cast<double>(bound) : 1.0);
}

// Runs a planner once with options (the search planners take seconds; repeats would not help).
std::optional<Timed> runOnce(const core::Planner& planner, const core::PlanProblem& problem, const core::PlanOptions& options,
    std::string& error)
{
    auto plan = core::runPlanner(planner, problem, {}, options);
    if (!plan) {
        error = plan.error().message;
        return std::nullopt;
    }
    const auto check = core::validatePlan(problem, *plan);
    if (!check.ok()) {
        error = std::string(planner.name()) + " produced an invalid plan: " + check.message;
        return std::nullopt;
    }
    return Timed { *plan, plan->seconds };
}

// `memplan bench allocation DIR`: one row per allocation-problem CSV: lower bound, then for each
// planner its arena, percent over the bound, time and (search planners) whether it is proven optimal.
// Reads --time-limit into `options`; prints the error and returns false when it is malformed.
bool readTimeLimit(const CliArgs& args, core::PlanOptions& options)
{
    if (const auto text = args.value("time-limit")) {
        const auto seconds = parseSeconds(*text);
        if (!seconds) {
            std::cerr << "memplan: bench: --time-limit '" << *text << "': expected a duration such as 10s, 500ms or 2.5\n";
            return false;
        }
        options.timeLimitSeconds = *seconds;
    }
    return true;
}

// The allocation-problem .csv files in `dir`, sorted; a folder that cannot be read or holds none
// has been reported (nullopt).
std::optional<std::vector<std::filesystem::path>> problemFiles(const std::string& dir)
{
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
        if (entry.path().extension() == ".csv")
            files.push_back(entry.path());
    if (ec) {
        std::cerr << "memplan: bench: " << dir << ": " << ec.message() << "\n";
        return std::nullopt;
    }
    if (files.empty()) {
        std::cerr << "memplan: bench: " << dir << ": no allocation-problem .csv files in this folder\n";
        return std::nullopt;
    }
    std::sort(files.begin(), files.end());
    return files;
}

int benchAllocation(const CliArgs& args)
{
    if (args.positional.size() != 2) {
        std::cerr << "memplan: bench: expected 'bench allocation DIR'\n";
        return 2;
    }
    core::PlanOptions options;
    if (!readTimeLimit(args, options))
        return 2;
    std::vector<const core::Planner*> planners;
    for (const auto& name : args.values("planner")) {
        const auto* planner = core::plannerByName(name);
        if (!planner) {
            std::cerr << "memplan: bench: unknown planner '" << name << "'\n";
            return 2;
        }
        planners.push_back(planner);
    }
    if (planners.empty())
        for (const char* name : { "greedy-by-size", "best-of-greedy", "exact" })
            if (const auto* planner = core::plannerByName(name))
                planners.push_back(planner);

    const auto files = problemFiles(args.positional[1]);
    if (!files)
        return 1;
    std::printf("%-14s %7s %12s", "problem", "buffers", "lower bound");
    for (const auto* planner : planners)
        std::printf(" | %-30s", std::string(planner->name()).c_str());
    std::printf("\n%-14s %7s %12s", "", "", "bytes");
    for (std::size_t i = 0; i < planners.size(); ++i)
        std::printf(" | %9s %7s %8s %3s", "arena", "over", "time", "opt");
    std::printf("\n");
    for (const auto& file : *files) {
        const auto csv = core::importProblemCsv(file);
        if (!csv) {
            std::cerr << "memplan: bench: " << csv.error().message << "\n";
            return 1;
        }
        const auto& problem = csv->problem;
        const Bytes bound = core::lowerBound(problem);
        std::printf("%-14s %7zu %12lld", file.stem().string().c_str(), problem.buffers.size(), static_cast<long long>(bound));
        std::fflush(stdout);
        std::string notes;
        for (const auto* planner : planners) {
            std::string error;
            const auto timed = runOnce(*planner, problem, options, error);
            if (!timed) {
                std::cerr << "\nmemplan: bench: " << file.string() << ": " << error << "\n";
                return 1;
            }
            const auto& plan = timed->plan;
            const char* optimal = plan.provenOptimal || plan.arenaSize == bound ? "yes" : plan.provenLowerBound > 0 ? "no" : "-";
            std::printf(" | %9lld %6.2f%% %8s %3s", static_cast<long long>(plan.arenaSize),
                100.0 * core::fragmentation(plan.arenaSize, bound), core::formatSeconds(timed->seconds).c_str(), optimal);
            std::fflush(stdout);
            if (!plan.provenOptimal && plan.provenLowerBound > bound)
                notes += " " + std::string(planner->name()) + ": proven lower bound " + std::to_string(plan.provenLowerBound) + ";";
        }
        std::printf("%s\n", notes.c_str());
    }
    return 0;
}

} // namespace

std::set<std::string> benchValuedOptions() { return { "sizes", "planner", "seed", "problems", "model", "time-limit", "repeat", "threads", "layout" }; }

std::string benchHelp()
{
    return R"(usage: memplan bench [--sizes N,N,...] [--planner NAME]... [--seed S] [--problems DIR] [--model FILE]...

Times planners (best of up to three runs) and prints arena / lower bound, every plan validated.
  --sizes N,N,...   random problems of these buffer counts (default 1000,10000,100000)
  --planner NAME    only this planner, repeatable (default: all)
  --seed S          random seed (default 1)
  --problems DIR    also plan every allocation-problem .csv in DIR (e.g. the public benchmarks)
  --model FILE      also time loading, shape inference and planning of a model, repeatable
  --time-limit T    search time for the exact planner (e.g. 10s, 500ms; default its own)

usage: memplan bench allocation DIR [--planner NAME]... [--time-limit T]

One row per allocation-problem .csv in DIR (e.g. the public benchmarks): lower bound, then each
planner's arena, percent over the bound, time, and "opt" = yes when the arena is proven optimal
(exact) or equals the lower bound. Default planners: greedy-by-size, best-of-greedy, exact.

usage: memplan bench run MODEL.onnx... [--repeat N] [--threads N] [--layout nhwc|nchw]

The CPU executor's forward latency beside ONNX Runtime's: per model, MemPlan's arena run (planned
by best-of-greedy, one warm-up pass, then N timed passes, default 10) and ONNX Runtime with all
graph optimizations on the same threads (default: every core) and the same input sizes, through
scripts/ort_profile.js and onnxruntime-node (scripts/setup.sh installs both). Prints both p50s and
their ratio; without ONNX Runtime the row says why and shows MemPlan's alone. --layout nchw keeps
every activation N,C,H,W (the layout before channels-last; for comparison).
)";
}

int runBench(const CliArgs& args)
{
    if (!args.positional.empty() && args.positional[0] == "allocation")
        return benchAllocation(args);
    if (!args.positional.empty() && args.positional[0] == "run")
        return benchRun(args);
    if (!args.positional.empty()) {
        std::cerr << "memplan: bench: unknown mode '" << args.positional[0] << "' (see memplan bench --help)\n";
        return 2;
    }
    std::string error;
    const auto planners = selectedPlanners(args, error);
    if (planners.empty()) {
        std::cerr << "memplan: bench: " << error << "\n";
        return 2;
    }
    std::vector<int> sizes { 1000, 10000, 100000 };
    if (const auto text = args.value("sizes")) {
        sizes.clear();
        for (std::size_t start = 0; start <= text->size();) {
            const auto comma = std::min(text->find(',', start), text->size());
            const auto n = parseInteger(text->substr(start, comma - start));
            if (!n || *n < 1 || *n > 10'000'000) {
                std::cerr << "memplan: bench: --sizes '" << *text << "': expected counts from 1 to 10000000\n";
                return 2;
            }
            sizes.push_back(static_cast<int>(*n));
            start = comma + 1;
        }
    }
    core::PlanOptions options;
    if (!readTimeLimit(args, options))
        return 2;
    const auto seed = parseInteger(args.value("seed").value_or("1"));
    if (!seed || *seed < 0) {
        std::cerr << "memplan: bench: --seed expects a whole number\n";
        return 2;
    }
    // The folder is read before anything runs: a wrong one fails fast, not after the random rows.
    std::optional<std::vector<std::filesystem::path>> problems;
    if (const auto dir = args.value("problems"))
        if (problems = problemFiles(*dir); !problems)
            return 1;

    std::printf("%-22s %8s  %-18s %10s %12s %12s %8s\n", "problem", "buffers", "planner", "time", "lower bound", "arena", "ratio");
    for (const int n : sizes) {
        const auto problem = core::networkShapedProblem(n, static_cast<unsigned>(*seed));
        for (const auto* planner : planners) {
            const auto timed = timePlanner(*planner, problem, error, options);
            if (!timed) {
                std::cerr << "memplan: bench: " << error << "\n";
                return 1;
            }
            printRow("random-" + std::to_string(n), *planner, problem, *timed);
        }
    }

    if (problems) {
        for (const auto& file : *problems) {
            const auto csv = core::importProblemCsv(file);
            if (!csv) {
                std::cerr << "memplan: bench: " << csv.error().message << "\n";
                return 1;
            }
            for (const auto* planner : planners) {
                const auto timed = timePlanner(*planner, csv->problem, error, options);
                if (!timed) {
                    std::cerr << "memplan: bench: " << file.string() << ": " << error << "\n";
                    return 1;
                }
                printRow(file.stem().string(), *planner, csv->problem, *timed);
            }
        }
    }

    for (const auto& model : args.values("model")) {
        const auto begin = Clock::now();
        const auto workload = core::loadWorkload(model, {});
        const double loadSeconds = std::chrono::duration<double>(Clock::now() - begin).count();
        if (!workload) {
            std::cerr << "memplan: bench: " << workload.error().message << "\n";
            return 1;
        }
        std::printf("%-22s load + shape inference + lifetimes: %s (%zu ops)\n",
            std::filesystem::path(model).filename().string().c_str(), core::formatSeconds(loadSeconds).c_str(),
            workload->graph ? workload->graph->ops.size() : 0);
        for (const auto* planner : planners) {
            const auto timed = timePlanner(*planner, workload->problem, error, options);
            if (!timed) {
                std::cerr << "memplan: bench: " << model << ": " << error << "\n";
                return 1;
            }
            printRow(std::filesystem::path(model).stem().string(), *planner, workload->problem, *timed);
        }
    }
    return 0;
}
