// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// One run of a plan as `memplan run` and the Studio do it, on any executor (exec/backend.h):
//   1. the reference: a no-reuse run (noReusePlan, every buffer its own range; every value inside a
//      control-flow op's graph its own allocation) on the same device, so the bit-for-bit checks
//      stay on one device;
//   2. the planned arena run, 3. the per-tensor run, 4. on a device with a pool, the pool run
//      (RunOptions::repeat timed passes each, the same inputs and weights);
//   5. on a device other than the CPU, a CPU executor no-reuse run of the same inputs, and the
//      device reference's outputs against it within `tolerance` (checkTolerance); skipped when a
//      synthetic kernel ran (it hashes its inputs' bits, so rounding changes its outputs entirely),
//      unless `cpuReference` asks for that run anyway.
// The other runs place the values of control-flow ops' graphs as Workload::nested plans them
// (RunOptions::nested), so a wrong nested offset shows as a mismatch too.
// Each run's outputs are compared with the reference bit for bit (compareOutputs).
// RunOptions::progress gets ops done over the whole session (the CPU executor counts its reference
// pass too; the CUDA executor its timed passes only, as each executor reports).
// With a cost profile the session also carries the prediction the measured latency is read against:
// each step's roofline time on that profile (opSeconds) and their sum, computed here once for the
// CLI's table and the Studio's latency lane.
// RunScope::ArenaOnly (the chip view's repeated timings) makes the arena run alone: no reference,
// no checks; `reference` and the mismatch fields stay empty.

#include "cost/device.h"
#include "exec/backend.h"
#include "exec/tolerance.h"
#include "io/workload.h"

#include <optional>
#include <string>
#include <vector>

namespace core {

enum class RunScope { Checked, ArenaOnly };

struct RunSessionRequest {
    const Workload* workload = nullptr; // with a graph
    const Plan* plan = nullptr;         // valid for workload->problem
    const ExecutorBackend* backend = nullptr; // null: the CPU executor
    RunOptions options;                 // repeat, seed, inputs, weights, cancel, progress; allocation ignored
    double tolerance = kDefaultGpuTolerance;
    bool cpuReference = false;          // device runs: make the CPU reference run even when nothing is compared with it
    const DeviceProfile* costProfile = nullptr; // null: no roofline prediction
    RunScope scope = RunScope::Checked;
};

// Which run failed, for messages.
enum class RunStage { Reference, Arena, PerTensor, Pool, CpuReference };
std::string_view runStageName(RunStage stage); // "no-reuse reference", "arena", "per-tensor", "pool", "CPU reference"

struct RunSession {
    std::string device;        // the backend's name
    std::string deviceName;    // its description ("" on the CPU)
    Measurement reference;     // the no-reuse run on the device
    Measurement arena, perTensor;
    std::optional<Measurement> pool;         // devices with a pool
    std::optional<Measurement> cpuReference; // the CPU no-reuse run (on the CPU: a copy of `reference`)
    std::string arenaMismatch, perTensorMismatch, poolMismatch; // compareOutputs against `reference`; "" when bit-identical
    std::optional<ToleranceCheck> cpuCheck;  // device runs: the device reference vs cpuReference
    int syntheticOps = 0;                    // synthetic kernels in the reference run (no tolerance check when > 0)
    // With RunSessionRequest::costProfile: its name, each step's roofline seconds and their sum.
    std::string costProfile;
    std::vector<double> rooflineStepSeconds;
    double rooflineSeconds = 0;

    bool allMatch() const { return arenaMismatch.empty() && perTensorMismatch.empty() && poolMismatch.empty(); }
    // The first mismatch as "arena run: ...", "per-tensor run: ..." or "pool run: ..."; "" when all match.
    std::string firstMismatch() const;
};

// The runs above. On failure, *failedAt (when given) says which run failed.
Expected<RunSession> runSession(const RunSessionRequest& request, RunStage* failedAt = nullptr);

} // namespace core
