// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The CPU executor: runs a planned graph for real, every activation at its planned offset inside
// one arena allocation, and measures what happened.
// - Arena: one aligned allocation of plan.arenaSize bytes; buffer b at plan.offsets[b]; the tensor
//   behind it from Workload::bufferTensor (plus any other tensor the buffer lists by name).
// - Side region: weights, persistent state and anything without a buffer, one slot each.
// - Weights: contents from RunOptions::modelData when given, else a small integer constant's known
//   values, else seeded random values (scaled by 1/sqrt(fan-in) so deep nets stay finite).
// - Inputs: RunOptions::inputs by name, else seeded random (float in [-1, 1), integers in [0, 4)).
// - Kernels: float32 (and int64 shape arithmetic) for the common CNN/transformer ops; an op
//   without a real kernel runs the synthetic kernel (see kernels.h) and is counted as synthetic.
// - Data-dependent shapes (NonZero, NonMaxSuppression, Compress and what is computed from them):
//   the plan holds each such tensor's upper bound; the run writes its run-time shape's elements
//   from the start of that room and the ops after it read that shape (exec/opcall.h: runWithShapes).
//   Graph outputs come back with their run-time shapes.
// - Control-flow ops (If, Loop, Scan, SequenceMap: exec/branch.h) with their graphs' plans
//   (RunOptions::nested): the values their graphs compute live in the op's "<op> body" buffer at
//   their planned offsets (exec/bodyslots.h); a value the plan does not hold or whose run-time size
//   exceeds its buffer, and lists and optionals, fall back to host allocations (kernel scratch),
//   each with a line in Measurement::kernelNotes.
// - Fused ops (Op::body): the body's ops run one after another with their own kernels; the internal
//   tensors between them live in a fused scratch allocation (counted in Measurement::scratchBytes),
//   never in the arena. The fused op counts as real when every body op ran a real kernel, so a fused
//   model computes the unfused model's outputs bit for bit.
// - Allocation::PerTensor instead gives every buffer its own malloc when its first tensor is
//   produced and frees it after its last read: the CPU analogue of per-tensor cudaMalloc/cudaFree,
//   measured through the C allocator (glibc mallinfo2) rather than predicted.
// - Measured memory per step (Measurement::stepBytes) comes from the run itself: which buffers the
//   executor has written and still has to read (arena), or what malloc holds (per-tensor).
// - Op workspaces (exec/workspace.h), when the problem plans them: the Conv at that step writes its
//   im2col columns into its workspace buffer (arena: at the plan's offset; PerTensor: a malloc made
//   before the op and freed after it), counted in stepBytes at that step and not in scratchBytes.
// - Conv, ConvTranspose, MatMul and Gemm run on oneDNN primitives over the arena's memory, with
//   cpuThreads() threads; their scratchpads are the op workspaces when planned, else kernel scratch.
//   So do the pointwise ops, pooling, Softmax and the rest oneDNN takes (exec/onednn.h); the own
//   kernels are single-threaded.
// - Layouts: the activations between convolutions are stored N,H,W,C in their planned places (same
//   bytes, same offsets; exec/channelslast.h), the rest N,C,H,W; graph inputs and outputs always
//   N,C,H,W. The convolutions' weights are packed once per run into oneDNN's layout (WeightPacks;
//   Measurement::packedWeightsBytes).
// Deterministic: the same inputs and thread count give the same output bits in any valid plan.
// Not thread-safe (kernel scratch is shared); run one at a time.

#include "exec/tensordata.h"
#include "planners/problem.h"
#include "schedule/schedule.h"
#include "util/cancel.h"

#include <functional>
#include <memory>

namespace core {

struct NestedPlan; // liveness/lifetimes.h

// Threads the CPU executor's oneDNN primitives use, and plan their scratchpads for (op workspaces):
// n >= 1, or 0 for every core (the default). Process-wide; set it before planning a run.
void setCpuThreads(int threads);
int cpuThreads();
// Which kernels the CPU executor runs Conv, ConvTranspose, MatMul and Gemm on: oneDNN (the default)
// or its own (single-threaded, im2col columns as workspace). Process-wide, like the thread count:
// it decides the op workspaces' sizes, so set it before planning a run.
enum class CpuKernels { OneDnn, Own };
void setCpuKernels(CpuKernels kernels);
CpuKernels cpuKernels();
std::string_view cpuKernelsName(CpuKernels kernels); // "onednn", "own"
// Whether the CPU executor stores the activations between oneDNN's convolutions N,H,W,C (true, the
// default: exec/channelslast.h) or every activation N,C,H,W. Process-wide, like the kernels: it
// decides which convolutions stage a side through their workspace.
void setCpuChannelsLast(bool on);
bool cpuChannelsLast();
// The kernel library the CPU executor runs on now: "oneDNN 2.6.3" (its version at run time), or
// "own kernels".
std::string cpuKernelLibrary();

enum class Allocation {
    Arena,     // every activation at its planned offset in one allocation of plan.arenaSize bytes
    PerTensor, // every buffer its own malloc at its first write, freed after its last read; the plan's offsets unused
};
std::string_view allocationName(Allocation allocation); // "arena", "per-tensor"

struct RunOptions {
    int repeat = 1;           // timed runs (>= 1); outputs come from the first
    std::uint64_t seed = 1;   // for random inputs and for weights without contents
    std::map<std::string, HostTensor> inputs;      // by graph input name; must match dtype and size
    std::shared_ptr<const ModelData> modelData;    // from loadTensorData; null: random weights
    Allocation allocation = Allocation::Arena;
    // Checked before every op; a cancelled run returns ErrorCode::Cancelled (nothing leaks).
    CancelToken cancel;
    // Called on the running thread after every op: ops done so far and in all (steps × repeat).
    // Keep it cheap (it runs inside the timed loop); may be empty.
    std::function<void(int done, int total)> progress;
    // The plans of the control-flow ops' graphs for the problem run (GraphProblem::nested,
    // Workload::nested; must outlive the run): the CPU executor places their values in each op's
    // "<op> body" buffer at their planned offsets. Null: every value inside is its own host
    // allocation (kernel scratch), as in the no-reuse reference run of the plan check.
    const std::vector<NestedPlan>* nested = nullptr;
};

struct LatencyStats {
    double median = 0, p50 = 0, p99 = 0; // milliseconds
};

struct OpMeasurement {
    std::string name, type;
    bool real = false;   // false: the synthetic kernel ran
    double medianMs = 0; // over RunOptions::repeat runs
    double p99Ms = 0;
    bool host = false;   // CUDA executor: ran on the host (no device kernel, or run-time shapes), outputs copied in
    bool precomputed = false; // CUDA executor: constant inputs; computed once before the passes, its outputs copied in each
    std::string refusal; // an op that ran synthetic, when known why (first run): an If or Loop whose graph could not run, an index refused in made-up values
    bool hostWaited = false; // a host op that synchronised both streams and copied inputs back (Measurement::opsHostWaited)
};

struct Measurement {
    std::string device = "cpu";
    std::string planner;
    Allocation allocation = Allocation::Arena;
    Bytes arenaBytes = 0;   // the activation arena allocated (plan.arenaSize); 0 for PerTensor
    Bytes weightsBytes = 0; // the side region: weights, persistent and unbuffered tensors
    // Kernel scratch (im2col unless workspaces are planned) high-water plus the fused ops' internal
    // tensors; with it the values of control-flow ops' graphs in allocations of their own (without
    // RunOptions::nested all of them, else the fallbacks) and the copies carried between iterations.
    Bytes scratchBytes = 0;
    Bytes peakBytes = 0;    // arena (PerTensor: stepPeakBytes) + side region + scratch: the most the executor held at once
    Bytes peakRssBytes = 0; // the process's peak resident memory after the run (getrusage)
    // Activation bytes in use while each step ran (index = step; its outputs written, the inputs it
    // reads for the last time not yet released), from the last timed run:
    // - Arena: summed (aligned) sizes of the buffers holding a value still to be read, tracked from
    //   the executor's own writes and last reads; a graph output counts until the end. Its maximum
    //   equals the problem's lower bound when the plan's lifetimes describe the run.
    // - PerTensor: bytes the C allocator has handed out (mallinfo2 uordblks + hblkhd) above what it
    //   held before the run started: buffer sizes plus alignment padding and chunk headers, and any
    //   kernel scratch that grew during the run.
    std::vector<Bytes> stepBytes;
    Bytes stepPeakBytes = 0; // max of stepBytes
    int opsReal = 0, opsSynthetic = 0;
    int opsHost = 0; // CUDA executor: ops that ran on the host for want of a device kernel (counted in real/synthetic too)
    // CUDA executor: of opsHost, those that waited for the device (both streams synchronised, inputs
    // copied back); the others read only what host ops before them wrote, weights and constants.
    int opsHostWaited = 0;
    int opsPrecomputed = 0; // CUDA executor: ops computed once before the passes (constant inputs; counted in real too)
    // Data-dependent shapes (both executors): real ops whose outputs the run sized
    // (sizing kernels and ops computed from them), and the tensors import sized by an upper bound
    // that the run placed: how many, the bytes their bounds reserve in the plan, and the bytes their
    // run-time shapes filled in the first run (one whose shape stayed unknown counts whole).
    int opsRuntimeShaped = 0;
    int boundedTensors = 0;
    Bytes boundedBytes = 0, boundedUsedBytes = 0;
    int threads = 1;     // CPU executor: cpuThreads() of the run
    // CPU executor: activations stored N,H,W,C (exec/channelslast.h), and the bytes of the weights
    // oneDNN's convolutions hold in their own layout, packed once for the run beside the model's
    // weights (not in the plan, not in peakBytes: a kernel library's copy, as a runtime's prepacked weights).
    int channelsLastTensors = 0;
    Bytes packedWeightsBytes = 0;
    int onednnCalls = 0; // CPU executor: kernel calls of one pass that ran on oneDNN (a fused op's body calls each count; a Conv chain with post-ops once)
    // CPU executor: why a call oneDNN should have run fell back to the own kernel, one line per op and
    // reason; and each value of a control-flow op's graph that ran outside its planned place (an
    // allocation of its own, in scratchBytes), one line naming the op, the graph and the value.
    std::vector<std::string> kernelNotes;
    LatencyStats latencyMs;          // whole forward pass
    std::vector<OpMeasurement> ops;  // in schedule order
    std::vector<HostTensor> outputs; // graph outputs, in graph order
    // Every later pass computed the first pass's outputs bit for bit (CPU executor; each pass starts
    // from the same inputs, so a difference means one pass read what another left behind).
    bool passesAgree = true;
};

// Runs `graph` under `schedule` with the activations placed by `plan` (a plan for `problem`);
// `bufferTensor` maps each buffer of the problem to its tensor (Workload::bufferTensor), -1 for an op's workspace.
Expected<Measurement> runOnCpu(const Graph& graph, const Schedule& schedule, const PlanProblem& problem, const Plan& plan,
    const std::vector<TensorIndex>& bufferTensor, const RunOptions& options);

// Every buffer its own range: no reuse at all (the reference run of the plan check).
Plan noReusePlan(const PlanProblem& problem);

// "" when both lists hold the same tensors bit for bit; otherwise which output differs and where.
std::string compareOutputs(const Graph& graph, const std::vector<HostTensor>& expected, const std::vector<HostTensor>& actual);

struct PlanRunCheck {
    bool outputsMatch = false; // planned arena run == no-reuse run, bit for bit
    std::string mismatch;      // compareOutputs' message when they differ
    Measurement reference;     // the no-reuse run
    Measurement planned;       // the arena run
};

// The plan check: runs once with noReusePlan() and once with `plan`, same inputs and weights; the
// reference without RunOptions::nested (every value inside a control-flow op its own allocation), the
// planned run with the options' nested plans, so that a wrong nested offset shows too.
Expected<PlanRunCheck> checkPlanByRunning(const Graph& graph, const Schedule& schedule, const PlanProblem& problem,
    const Plan& plan, const std::vector<TensorIndex>& bufferTensor, const RunOptions& options);

} // namespace core
