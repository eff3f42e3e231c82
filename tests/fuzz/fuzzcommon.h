// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Shared by the fuzz targets (fuzz_*.cpp). libFuzzer calls each target's LLVMFuzzerTestOneInput with
// one input; in the normal build replay.cpp calls it once per committed seed and regression file.
// A finding is a crash, a sanitizer report, or fail(): a broken contract that a user could hit.
#pragma once

#include "io/problemcsv.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "util/expected.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <unistd.h>

namespace fuzz {

// Problems above this many buffers are loaded but not planned, so one execution stays in
// milliseconds; small inputs reach every planner's corner cases just as well.
inline constexpr std::size_t kMostPlannedBuffers = 128;
// The exact search (a branch and bound) runs on problems up to this size, with this time limit.
inline constexpr std::size_t kMostExactBuffers = 8;
inline constexpr double kExactSeconds = 0.02;

[[noreturn]] inline void fail(const std::string& what)
{
    std::fprintf(stderr, "fuzz: %s\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}

inline std::string text(const std::uint8_t* data, std::size_t size)
{
    return size ? std::string(reinterpret_cast<const char*>(data), size) : std::string();
}

// For readers that only take a path: a file that only this process writes, in /dev/shm when it
// exists (memory, not disk: libFuzzer writes it thousands of times a second), else the temp folder.
// Its name keeps `extension`, since the loaders choose the format by it.
inline std::filesystem::path writeScratch(const std::string& extension, const std::uint8_t* data, std::size_t size)
{
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm")
                                                                              : std::filesystem::temp_directory_path();
    auto file = dir / ("memplan-fuzz-" + std::to_string(::getpid()) + extension);
    // Removed when the process exits normally (a crash leaves it: the finding is saved elsewhere).
    struct Remover {
        std::filesystem::path path;
        ~Remover() { std::error_code ignored; std::filesystem::remove(path, ignored); }
    };
    static Remover remover { file };
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    if (!out)
        fail("cannot write the scratch file " + file.string());
    return file;
}

// A refused input must say why.
inline void checkError(const core::Error& error, const std::string& what)
{
    if (error.message.empty())
        fail(what + " failed with an empty message");
}

// A problem that loaded must load again from its own CSV export, with as many buffers.
inline void checkCsvRoundTrip(const core::PlanProblem& problem)
{
    auto again = core::parseProblemCsv(core::exportProblemCsv(problem), "exported.csv");
    if (!again)
        fail("the exported CSV does not load again: " + again.error().message);
    if (again->problem.buffers.size() != problem.buffers.size())
        fail("the exported CSV loads with " + std::to_string(again->problem.buffers.size()) + " buffers instead of "
            + std::to_string(problem.buffers.size()));
}

// Every planner plans `problem` (the exact search only small ones, briefly); each plan a planner
// returns must pass the independent validator. A planner may refuse (a capacity, sizes out of
// range) but must say why. `what` names the input in the failure message.
inline void planAndValidate(const core::PlanProblem& problem, const std::string& what)
{
    if (problem.buffers.size() > kMostPlannedBuffers)
        return;
    for (const auto& planner : core::planners()) {
        const bool exact = planner->name() == "exact";
        if (exact && problem.buffers.size() > kMostExactBuffers)
            continue;
        core::PlanOptions options;
        if (exact)
            options.timeLimitSeconds = kExactSeconds;
        auto plan = core::runPlanner(*planner, problem, {}, options);
        if (!plan) {
            checkError(plan.error(), what + ": planner " + std::string(planner->name()));
            continue;
        }
        const auto validation = core::validatePlan(problem, *plan);
        if (!validation.ok())
            fail(what + ": the " + std::string(planner->name()) + " plan of " + std::to_string(problem.buffers.size())
                + " buffers fails validation: " + validation.message);
    }
}

} // namespace fuzz
