// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/runsession.h"

#include "cost/opcost.h"

#include <algorithm>

namespace core {

std::string_view runStageName(RunStage stage)
{
    switch (stage) {
    case RunStage::Reference: return "no-reuse reference";
    case RunStage::Arena: return "arena";
    case RunStage::PerTensor: return "per-tensor";
    case RunStage::Pool: return "pool";
    case RunStage::CpuReference: return "CPU reference";
    }
    return "?";
}

std::string RunSession::firstMismatch() const
{
    if (!arenaMismatch.empty())
        return "arena run: " + arenaMismatch;
    if (!perTensorMismatch.empty())
        return "per-tensor run: " + perTensorMismatch;
    if (!poolMismatch.empty())
        return "pool run: " + poolMismatch;
    return {};
}

Expected<RunSession> runSession(const RunSessionRequest& request, RunStage* failedAt)
{
    const auto& w = *request.workload;
    const auto& backend = request.backend ? *request.backend : cpuExecutor();
    const bool onCpu = backend.name() == "cpu";
    const bool withPool = backend.hasPool();
    const int steps = w.schedule.steps();
    const int repeat = std::max(1, request.options.repeat);
    // Progress units per run: the CPU executor counts every pass of the reference; a device its timed passes.
    const int modes = withPool ? 3 : 2;
    const int total = onCpu ? steps * (1 + modes * repeat) : steps * (2 + modes * repeat);
    const auto& progress = request.options.progress;
    auto phase = [&](int offset) -> std::function<void(int, int)> {
        if (!progress)
            return {};
        return [&progress, offset, total](int done, int) { progress(offset + done, total); };
    };
    const auto failed = [failedAt](RunStage stage, Error error) {
        if (failedAt)
            *failedAt = stage;
        return error;
    };

    RunSession s;
    s.device = std::string(backend.name());
    if (request.costProfile) {
        s.costProfile = request.costProfile->name;
        s.rooflineStepSeconds = scheduleStepSeconds(*w.graph, w.schedule, *request.costProfile);
        for (const double seconds : s.rooflineStepSeconds)
            s.rooflineSeconds += seconds;
    }
    auto options = request.options;
    // The planned runs place the values of control-flow ops' graphs as their plans say; the
    // references keep each its own allocation (no reuse inside either).
    options.nested = &w.nested;
    auto referenceOptions = options;
    referenceOptions.nested = nullptr;
    if (request.scope == RunScope::ArenaOnly) {
        options.repeat = repeat; // progress: the executor's own count of its timed passes
        auto arena = backend.run(*w.graph, w.schedule, w.problem, *request.plan, w.bufferTensor, options, DeviceAllocation::Arena);
        if (!arena)
            return failed(RunStage::Arena, arena.error());
        s.arena = std::move(*arena);
        s.deviceName = backend.description();
        return s;
    }
    referenceOptions.repeat = 1;
    referenceOptions.progress = phase(0);
    auto reference = backend.run(*w.graph, w.schedule, w.problem, noReusePlan(w.problem), w.bufferTensor, referenceOptions, DeviceAllocation::Arena);
    if (!reference)
        return failed(RunStage::Reference, reference.error());
    s.reference = std::move(*reference);
    s.syntheticOps = s.reference.opsSynthetic;

    options.repeat = repeat;
    const DeviceAllocation allocations[3] = { DeviceAllocation::Arena, DeviceAllocation::PerTensor, DeviceAllocation::Pool };
    const RunStage stages[3] = { RunStage::Arena, RunStage::PerTensor, RunStage::Pool };
    Measurement* into[3] = { &s.arena, &s.perTensor, nullptr };
    std::string* mismatch[3] = { &s.arenaMismatch, &s.perTensorMismatch, &s.poolMismatch };
    for (int i = 0; i < modes; ++i) {
        options.progress = phase(steps * (1 + i * repeat));
        auto run = backend.run(*w.graph, w.schedule, w.problem, *request.plan, w.bufferTensor, options, allocations[i]);
        if (!run)
            return failed(stages[i], run.error());
        *mismatch[i] = compareOutputs(*w.graph, s.reference.outputs, run->outputs);
        if (into[i])
            *into[i] = std::move(*run);
        else
            s.pool = std::move(*run);
    }

    // Asked after the runs: a device query that fails here must not take the place of a failure in a run.
    s.deviceName = backend.description();
    if (onCpu) {
        s.cpuReference = s.reference;
        return s;
    }
    if (s.syntheticOps > 0 && !request.cpuReference)
        return s;
    referenceOptions.repeat = 1;
    referenceOptions.progress = phase(steps * (1 + modes * repeat));
    auto cpu = cpuExecutor().run(*w.graph, w.schedule, w.problem, noReusePlan(w.problem), w.bufferTensor, referenceOptions, DeviceAllocation::Arena);
    if (!cpu)
        return failed(RunStage::CpuReference, cpu.error());
    s.cpuReference = std::move(*cpu);
    if (s.syntheticOps == 0)
        s.cpuCheck = checkTolerance(*w.graph, s.cpuReference->outputs, s.reference.outputs, request.tolerance);
    return s;
}

} // namespace core
