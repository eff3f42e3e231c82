// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The executors a run can use, by device name: "cpu" (the CPU executor, built in) and "cuda" (the
// CUDA executor, a plugin loaded on first use, so programs that never ask for it never map CUDA).
// - The CUDA plugin is libmemplan-cuda.so next to the running program (or in ../lib from it);
//   the environment variable MEMPLAN_CUDA_PLUGIN names another file instead (tests: the build
//   against the test emulation of CUDA). Loaded once per process and never unloaded.
// - A plugin exports kExecutorPluginEntry, a C function taking kExecutorPluginAbi and returning
//   its executor (null when the ABI differs: it was built from other sources than this program).
//   It links none of memplan_core: it uses the loading program's, which exports it (CMake:
//   memplan_module_host), so one engine with one state serves both.
// - A program that links an executor itself (tests on the emulation) registers it with
//   registerExecutorBackend; a registered backend wins over any plugin of that name.
// Thread-safe: lookups may come from any thread.

#include "exec/executor.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace core {

// How a run allocates its activations. Pool: a device's stream-ordered pool (cudaMallocAsync),
// for executors whose hasPool() is true.
enum class DeviceAllocation { Arena, PerTensor, Pool };
std::string_view deviceAllocationName(DeviceAllocation allocation); // "arena", "per-tensor", "pool"

class ExecutorBackend {
public:
    virtual ~ExecutorBackend() = default;
    // The device name: "cpu", "cuda" (Measurement::device of its runs).
    virtual std::string_view name() const = 0;
    // True when the device can run now; otherwise false and *why (when given) says why.
    virtual bool available(std::string* why = nullptr) const = 0;
    // The device's name and memory for reports ("NVIDIA H100 80GB HBM3, 79.1 GiB"); "" for the CPU.
    virtual std::string description() const = 0;
    // Whether DeviceAllocation::Pool exists on this device.
    virtual bool hasPool() const = 0;
    // One run of `plan` (the executor's contract: exec/executor.h, gpu/cudaexecutor.h).
    // RunOptions::allocation is ignored: `allocation` decides.
    virtual Expected<Measurement> run(const Graph& graph, const Schedule& schedule, const PlanProblem& problem, const Plan& plan,
        const std::vector<TensorIndex>& bufferTensor, const RunOptions& options, DeviceAllocation allocation) const
        = 0;
};

// The CPU executor (runOnCpu); always there.
const ExecutorBackend& cpuExecutor();

// The executor for `device` ("cpu", "cuda"; "gpu" means cuda). Errors: ErrorCode::InvalidArgument for
// an unknown name; ErrorCode::NoGpu when the CUDA executor cannot be had, with the reason ("this
// build has no CUDA executor" when no plugin file exists). A device that is present but unusable
// is the backend's available() to say.
Expected<const ExecutorBackend*> executorBackend(std::string_view device);

// For programs that link an executor in: `backend` (static lifetime) answers for its name from now on.
void registerExecutorBackend(const ExecutorBackend* backend);

// The plugin contract. A constant compiled into each side (the plugin takes the engine's code from
// the program that loads it): it changes with the layouts that cross the boundary.
inline constexpr std::uint64_t kExecutorPluginAbi = (std::uint64_t(1) << 56) ^ (std::uint64_t(sizeof(Measurement)) << 32)
    ^ (std::uint64_t(sizeof(RunOptions)) << 16) ^ (std::uint64_t(sizeof(PlanProblem)) << 8) ^ std::uint64_t(sizeof(Graph));
inline constexpr const char* kExecutorPluginEntry = "memplan_executor_plugin";
using ExecutorPluginEntry = const ExecutorBackend* (*)(std::uint64_t abi);

} // namespace core
