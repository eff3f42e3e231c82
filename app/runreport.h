// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// What `memplan run` reports: the table on stdout and the --json document, from one run session's
// results (core/exec/runsession.h) and the prediction they are compared with.

#include "exec/executor.h"
#include "io/workload.h"
#include "strategies/strategy.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

struct RunResults {
    const core::Workload* workload = nullptr;
    const core::Plan* plan = nullptr;
    const core::Measurement* arena = nullptr;
    const core::Measurement* perTensor = nullptr;
    const core::Measurement* pool = nullptr; // GPU runs only: the stream-ordered pool
    bool arenaMatch = false, perTensorMatch = false, poolMatch = false;
    std::string deviceName;
    std::optional<bool> cpuMatch; // GPU runs: outputs within tolerance of the CPU executor's (unset: not comparable)
    std::string cpuComparison;    // what that comparison found
    std::optional<double> cpuMaxRelativeError; // its largest relative error (checkTolerance)
    std::optional<bool> originalMatch; // set when strategies ran: outputs equal the untransformed model's
    const std::vector<core::StrategyReport>* reports = nullptr;
    int repeat = 1;
    std::string costProfile;  // the --profile the roofline and the strategies' costs use
    double rooflineMs = 0;    // the schedule's roofline time on costProfile (scheduleCost)
    bool showRoofline = false; // in the table: on the GPU, or when --profile was given
};

nlohmann::ordered_json toJson(const RunResults& r);
void printTable(const RunResults& r);
