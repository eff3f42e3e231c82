// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "exec/executor.h"
#include "exec/tolerance.h"
#include "io/workload.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

// The executor a Studio run uses: the CPU executor, or the CUDA executor on device 0.
enum class RunDevice { Cpu, Cuda };

// What one Studio run measured for one (workload, plan): the planned-arena run and the per-tensor
// allocator run, each checked against a no-reuse run of the same inputs on the same device (on
// cuda also the stream-ordered pool run, and the arena run's outputs against a CPU executor run of
// the same inputs, within a relative tolerance). Plain value; the
// PlanDocument holds the latest one for the plan on display and drops it when the plan changes.
struct RunMeasurement {
    std::string device = "cpu";                  // executor that ran: "cpu" or "cuda"
    std::string deviceName;                      // cuda: the GPU's name and memory; empty on cpu
    std::shared_ptr<const core::Workload> workload; // what ran
    core::Plan plan;                             // the plan the arena run used
    core::Measurement arena;                     // Allocation::Arena
    core::Measurement perTensor;                 // Allocation::PerTensor
    std::optional<core::Measurement> pool;       // cuda only: cudaMallocAsync from the device's default pool
    bool arenaMatches = false;                   // arena outputs == no-reuse outputs, bit for bit
    bool perTensorMatches = false;
    bool poolMatches = false;                    // meaningful only with `pool`
    std::string mismatch;                        // the first difference, when either does not match
    // cuda only: the GPU arena run's outputs vs a CPU executor no-reuse run of the same inputs
    // (core::checkTolerance at `tolerance`). Unset when not compared; cpuCheckNote then says why.
    std::optional<core::ToleranceCheck> cpuCheck;
    std::string cpuCheckNote;
    double tolerance = core::kDefaultGpuTolerance;
    int repeat = 1;
    // The prediction to compare the latency with: each step's roofline time on the cost profile the
    // run was started with (core::opSeconds), and their sum; empty and 0 when none was given.
    std::string costProfile;
    std::vector<double> rooflineStepMs;
    double rooflineMs = 0;
};
