// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to gpu/: the measurement passes of one CUDA run (see cudaexecutor.h): a warm-up pass
// (its outputs are the run's), timed passes (per-op and whole-pass CUDA events) and one traced pass
// that synchronises after every step to record the bytes in use. Each pass allocates (PerTensor,
// Pool) and releases buffers at the steps bufferUse gives, uploads the inputs, launches every step
// (launch.cpp) and orders swap-outs before anything overwrites or frees their source.

#include "steps.h"

namespace gpu {

enum class Pass { Warmup, Timed, Traced };

struct Passes {
    Passes(const core::Graph& graph, const core::PlanProblem& problem, const core::Plan& plan, const core::RunOptions& options,
        Layout& layout, std::vector<Prepared>& steps, const InputImages& inputs, Context& ctx)
        : graph(graph), problem(problem), plan(plan), options(options), layout(layout), steps(steps), inputs(inputs), ctx(ctx)
    {
    }

    // What every pass reads.
    const core::Graph& graph;
    const core::PlanProblem& problem;
    const core::Plan& plan;
    const core::RunOptions& options;
    Layout& layout;
    std::vector<Prepared>& steps;
    const InputImages& inputs;
    Context& ctx;
    bool arena = true, pool = false;
    cudaMemPool_t memPool = nullptr; // Pool: the device's default pool
    std::vector<std::vector<int>> bornAt, diesAt; // per step + 1 (slot 0: before step 0): buffers first used there / dead after
    std::vector<std::vector<core::TensorIndex>> tensorsOf; // per buffer: its stored tensors
    std::vector<int> workspaceAt; // per step: the planned workspace buffer the device kernel uses, or -1 (too small for it, or none)
    int repeat = 1; // timed passes, for progress

    // What the passes record (sized by init()).
    std::vector<std::vector<double>> opTimes; // per step: milliseconds of each timed pass
    std::vector<double> totals;               // per timed pass: milliseconds
    std::vector<bool> real, onHost, waited;   // per step: the last pass's (waited: a host op that synchronised)
    std::vector<core::Bytes> stepBytes;       // per step: from the traced pass
    std::vector<core::HostTensor> outputs;    // graph outputs from the warm-up pass
    core::exec::RuntimeShapes shapes;         // the warm-up pass's run-time shapes
    std::vector<std::string> refusals;        // per step: why an If or Loop ran synthetic (the last pass's)

    void init();
    core::Status run(Pass kind, int passIndex);

private:
    struct PendingSwap {
        int buffer;
        core::Bytes from, to; // arena byte range of the source
        cudaEvent_t done;
    };
    // What one pass holds. A pass that fails part-way leaves buffers allocated: the destructor waits
    // for the device and returns them the way they came (cudaFree, or cudaFreeAsync for pool memory).
    struct PassState {
        std::vector<std::byte*> owned; // PerTensor, Pool: per buffer, null when not held
        std::vector<PendingSwap> pending;
        // Per tensor: the end event of the SwapIn that writes it, until the first step that reads it
        // makes the compute stream wait for it (the copy overlaps the ops in between).
        std::vector<cudaEvent_t> arrival;
        cudaStream_t poolStream = nullptr; // Pool: the stream its allocations are ordered on
        core::exec::RuntimeShapes shapes;  // of the tensors sized by an upper bound, as shaped ops make them
        PassState() = default;
        PassState(const PassState&) = delete;
        PassState& operator=(const PassState&) = delete;
        ~PassState();
    };
    core::Status waitPending(PassState& state, int b, bool blockHost);
    void point(PassState& state, int b);
    core::Status allocate(PassState& state, int b);
    core::Status release(PassState& state, int b);
    core::Status poolInUse(core::Bytes& used);
    core::Status readOutputs(const core::exec::RuntimeShapes& shapes);
    core::Status launch(PassState& state, std::size_t s); // launch.cpp
};

} // namespace gpu
