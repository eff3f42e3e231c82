// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Strategies: transforms of (graph, schedule) that change lifetimes, each with what it costs.
// - A strategy reads and returns a Transformed: the rewritten graph and schedule plus per-tensor
//   facts the rewrite needs (origin of copies, tensors sent to host, tensors sharing a buffer).
// - buildProblem() turns a Transformed into the ordinary PlanProblem, so every planner and
//   validatePlan work unchanged: tensors that share memory become ONE buffer listing all of them;
//   a tensor on host has no device buffer (a swapped value is two device buffers, before and after).
// - Pipeline order is fixed (simplify, fuse, reorder, recompute, swap, inplace): simplify comes first
//   (it rewrites the model as loaded), in-place last because it depends on the final lifetimes;
//   recompute and swap redirect consumers, which aliasing would forbid.
// Limits: strategies that need shapes skip tensors of unknown size; none of them changes what the
// graph computes (tests check every op still reads every value it read, produced before it runs;
// simplify removes and rewrites ops, and tests run its graphs against the originals instead).

#include "cost/device.h"
#include "io/workload.h"
#include "liveness/lifetimes.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace core {

// How recompute chooses what to drop: greedy (the tensor that lowers the lower bound most, repeatedly) or
// checkpoint (keep every k-th forward activation, recompute the rest in segments before the backward pass).
enum class RecomputePolicy { Greedy, Checkpoint };

struct StrategyOptions {
    DeviceProfile device = defaultDevice();
    Bytes alignment = 256;  // activation alignment used when measuring lower bounds
    int maxRewrites = 16;   // recompute (greedy), swap: most tensors rewritten
    int candidates = 24;    // recompute (greedy), swap: most candidates tried per round (largest size × gap first)
    RecomputePolicy recomputePolicy = RecomputePolicy::Greedy;
    int checkpointEvery = 0; // checkpoint policy: keep the outputs of every k-th forward op; 0: round(sqrt(forward ops))
    // checkpoint policy: the forward steps (0-based, among the forward ops) whose outputs stay, instead of every
    // k-th (the frontier's choices, strategies/frontier.h); steps out of the forward range are ignored. Empty: every k-th.
    std::vector<Step> checkpointSteps;
    // Lower bounds count op workspaces too (ProblemOptions::workspaces); applyStrategies sets it from the workload.
    bool workspaces = false;
    // swap: issue each SwapIn early enough to hide its copy behind compute, as far as the peak allows;
    // false: just before the read (the copy then always stalls the read).
    bool swapPrefetch = true;
    // applyStrategies: leave out simplify, fuse, recompute or swap when the strategies after them
    // reach a lower bound as low in less time, or a lower one, without them (recompute's clones and
    // swap's host trips can break a Concat family; fusion removes intermediates inplace would have
    // shared). False: run exactly what is named (the budget search tries every combination itself).
    bool leaveOutOutdone = true;
};

// What one strategy saved and spent.
struct StrategyReport {
    std::string name;
    Bytes lowerBoundBefore = 0;
    Bytes lowerBoundAfter = 0;
    double extraFlops = 0;      // recomputed work (negative never; fusion saves traffic, not FLOPs)
    Bytes swappedBytes = 0;     // bytes sent to host (each comes back once)
    double transferSeconds = 0; // swap: both directions' copy time on the device profile (extraSeconds: what stalls)
    double extraSeconds = 0;    // estimated on the device profile; negative when the strategy saves time
    std::vector<std::string> details; // one line per fused group, aliased pair, recomputed or swapped tensor
    Bytes savedBytes() const { return lowerBoundBefore - lowerBoundAfter; }
};

// The estimated time the reports add to the schedule's (the sum of their extraSeconds).
double extraSeconds(const std::vector<StrategyReport>& reports);

struct Transformed {
    Graph graph;
    Schedule schedule;
    std::vector<TensorIndex> origin;     // per tensor: the original tensor whose value it holds (itself, or a copy's source)
    std::vector<bool> onHost;            // per tensor: held in host memory (swap), no device buffer
    std::vector<TensorIndex> sharesWith; // per tensor: the tensor whose buffer it writes into (in-place); itself when none
    std::vector<Bytes> shareOffset;      // per tensor: where it starts in sharesWith's buffer (a Concat input's slice); 0 otherwise
    std::vector<std::string> fusedOps;   // names of original ops folded into fused ops
    std::vector<StrategyReport> reports; // in the order applied

    TensorIndex bufferRoot(TensorIndex t) const; // follows sharesWith to the owner of the buffer
    Bytes offsetInRoot(TensorIndex t) const;     // where t starts in bufferRoot(t)'s buffer
    // Appends a tensor that holds a copy of `source`'s value; returns its index.
    TensorIndex addCopyTensor(TensorIndex source, const std::string& name);
};

// The identity transform of a graph under a schedule.
Transformed startTransform(Graph graph, Schedule schedule);

// The plannable problem: makeProblem's buffers, minus tensors on host, with buffer-sharing tensors merged
// into one buffer (lifetime = union, size = the furthest end of a member, aligned; Buffer::tensorOffsets
// when a member starts inside). bufferTensor holds each buffer's root tensor.
// Op workspaces (options.workspaces) pass through unchanged: they are rebuilt for the transformed
// schedule, so a reordered Conv keeps its workspace at its new step and a fused op holding a Conv
// gets one for its body. With StrategyOptions::workspaces the strategies' lower
// bounds (their choices and the reports' before/after) count the workspaces, as the plan will.
Expected<GraphProblem> buildProblem(const Transformed& state, const ProblemOptions& options);

// Lower bound of buildProblem(state); -1 when the problem cannot be built.
Bytes transformedLowerBound(const Transformed& state, Bytes alignment, bool workspaces = false);

class Strategy {
public:
    virtual ~Strategy() = default;
    virtual std::string_view name() const = 0;
    virtual std::string_view description() const = 0;
    // Rewrites `state` and appends one StrategyReport (costs and details; run() fills the bounds).
    virtual Expected<Transformed> apply(Transformed state, const StrategyOptions& options) const = 0;
};

// Every built-in strategy in pipeline order: simplify, fuse, reorder, recompute, swap, inplace.
const std::vector<std::unique_ptr<Strategy>>& strategies();
std::vector<std::string> strategyNames();
const Strategy* strategyByName(std::string_view name);

// apply() plus the lower bounds before and after in the new report.
Expected<Transformed> runStrategy(const Strategy& strategy, Transformed state, const StrategyOptions& options);

struct StrategyRun {
    Workload workload; // graph, schedule and problem after the strategies; plan it like any workload
    Transformed state;
    std::vector<StrategyReport> reports;
    std::vector<std::string> leftOut; // named but left out (see applyStrategies), pipeline order
};

// Runs the named strategies (in pipeline order, whatever the order of `names`) on a workload with a graph.
// A combination is never worse than the subsets of it that are cheap to try (with
// StrategyOptions::leaveOutOutdone): the pipeline also runs without simplify (when named beside
// another strategy) and, with inplace named, without fuse, without recompute, without swap and
// without both of those; a run that reaches a lower lower bound, or as low a one in less estimated
// time, is taken (the first best in that order), and each strategy it left out keeps a report
// saying so (no change, one detail line: "left out: without ... "). Errors: unknown name, a workload
// without a graph (allocation problems have nothing to rewrite).
Expected<StrategyRun> applyStrategies(const Workload& workload, const std::vector<std::string>& names,
    const StrategyOptions& options);

// Helpers shared by the strategies.
// Per tensor, the steps at which it is read (inputs and captured), ascending.
std::vector<std::vector<Step>> readSteps(const Graph& graph, const Schedule& schedule);
// Inserts `op` into the graph and runs it at `step` (later ops move one step down); returns its op index.
// On a captured graph the op takes the phase of the op it runs before (the last op's at the end): a
// recomputation before a backward read runs in the backward phase.
OpIndex insertOp(Transformed& state, Op op, Step step);
// A step named in a report detail: later rewrites insert ops and move it, so the detail holds the op
// run there (and `now`, its step when written) until resolveSteps writes the op's final step.
std::string stepOf(OpIndex op, Step now);
// Replaces every stepOf in the details with the op's step in `schedule` (the step it was written
// with when the op no longer runs). runPipeline calls it on the schedule it ends with.
void resolveSteps(std::vector<StrategyReport>& reports, const Schedule& schedule);

} // namespace core
