// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The frontier: the plans no other plan beats in both peak memory and estimated extra time, over
// recompute, checkpoint and swap decisions.
// - Candidates, each a real run of the strategy pipeline (applyStrategies), planned with the
//   planner and checked with validatePlan (a candidate that fails either is dropped and counted):
//   * "dp": on a training graph, the checkpoint sets of the dynamic program (strategies/checkpointdp.h)
//     over a sweep of budgets, applied with the checkpoint policy (StrategyOptions::checkpointSteps), on
//     the graph as it is and after fuse (then inplace after); "dp+swap": each of them with swap after.
//   * "milp": on a training graph, the checkpoint sets of the MILP (strategies/checkpointmilp.h, GLPK)
//     over its own sweep of budgets, each solve under a time limit (its best set when it stops; the notes
//     say how many stopped so and the largest gap), applied like the DP's, on the same graphs; "milp+swap"
//     with swap after. Sets the DP already found are not run again.
//   * "greedy": greedy recompute, greedy swap and both, with 1, 2, 4, ... maxRewrites (the
//     approximation: it applies to inference graphs too, and is all there is when the DP does not).
//   Above FrontierOptions::largeGraphOps ops, fewer of both (the fast approximation).
//   * the heuristics: the on/off combinations (64) ("combination", as the budget search runs them) and
//     the sqrt(n) checkpoint policy ("checkpoint") on a training graph.
// - Each point's peak is the planned arena; extra time the reports' extraSeconds on the device
//   profile; time the schedule's roofline time plus that (as the budget search counts it).
// - The frontier keeps the candidates no other has at most the peak and at most the extra time (one
//   strictly less), sorted by peak ascending (so extra time descending).
// Limits: the DP's and the MILP's memory models count forward activations only (see checkpointdp.h);
// their choices are ranked by them and then measured, so the frontier is optimal over the candidates
// tried, not over every possible rewrite. Both choose among the checkpoint policy's sets (segments
// re-run once each); the MILP's model counts the DAG's skip tensors exactly where the DP's overcounts.

#include "planners/planner.h"
#include "strategies/strategy.h"
#include "util/cancel.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace core {

struct FrontierOptions {
    StrategyOptions strategy;  // device, alignment; the policy fields are set per point
    std::string planner = std::string(kDefaultPlanner);
    int budgets = 24;          // DP: budgets swept from the least feasible model peak to everything stored
    int maxCandidates = 300;   // DP: above this many forward steps, checkpoints at block ends only
    bool withFuse = true;      // DP: also on the fused graph (fuse, recompute, [swap,] inplace)
    bool withSwap = true;      // DP: each point also with swap after
    bool greedy = true;        // the greedy sweep
    bool milp = true;          // MILP: the checkpoint MILP's sets too (on the graphs the DP runs on)
    int milpBudgets = 8;       // MILP: budgets, from its least peak to everything stored
    double milpTimeLimitSeconds = 2.0; // MILP: per solve; the best set found when it runs out
    double milpTotalSeconds = 30.0;    // MILP: all solves of the frontier together; later budgets skipped
    int milpMaxCandidates = 120;       // MILP: above this many forward steps, checkpoints at block ends only
    std::vector<int> greedyRewrites { 1, 2, 4, 8, 16, 32 };
    // Above this many ops the frontier is the fast approximation: the DP on the graph as loaded only
    // (no fused variant), over a third of the budgets (MILP: half), every other greedy sweep (1, 4, 16
    // rewrites; a note says so).
    int largeGraphOps = 5000;
};

struct FrontierPoint {
    std::string method;               // "dp", "dp+swap", "milp", "milp+swap", "greedy", "combination", "checkpoint"
    std::string label;                // compact: "fuse+recompute(12 checkpoints)+swap+inplace"
    std::vector<std::string> names;   // strategies, pipeline order
    StrategyOptions options;          // applyFrontierPoint(workload, point) rebuilds the point with these
    Bytes peakBytes = 0;              // planned arena of the transformed graph
    Bytes lowerBound = 0;
    double extraSeconds = 0;          // the reports' extra time (negative when fuse saves more)
    double seconds = 0;               // the whole step: schedule roofline time + extraSeconds
    double extraFlops = 0;
    Bytes swappedBytes = 0;
    std::vector<Step> checkpoints;    // DP and MILP points: the forward steps kept
    std::vector<std::string> recomputed; // original tensors computed again (names)
    std::vector<std::string> swapped;    // original tensors sent to host and back
};

struct Frontier {
    Bytes baseArena = 0;        // no strategy, same planner
    double baseSeconds = 0;     // the schedule's roofline time
    bool training = false;      // the graph has a backward pass (the DP applies)
    std::vector<FrontierPoint> points;     // non-dominated, peak ascending
    std::vector<FrontierPoint> heuristics; // the 64 combinations and sqrt(n) checkpoint, as measured
    int candidates = 0;         // runs planned and checked
    int dropped = 0;            // runs that failed (strategy error, planner error or an invalid plan)
    std::vector<std::string> notes;
};

// fraction in [0, 1] and what runs now; called from the computing thread.
using FrontierProgress = std::function<void(double fraction, std::string_view what)>;

// Errors: a workload without a graph, an unknown planner, `cancel` set (Cancelled).
Expected<Frontier> computeFrontier(const Workload& workload, const FrontierOptions& options, const FrontierProgress& progress = {},
    const CancelToken& cancel = {});

// The point's transformed workload (plan it like any workload): applyStrategies with its names and options.
Expected<StrategyRun> applyFrontierPoint(const Workload& workload, const FrontierPoint& point);

// The point with the least time whose peak is at most `budget` (ties: the smaller peak); nullptr when none fits.
const FrontierPoint* pickForBudget(const Frontier& frontier, Bytes budget);

// The non-dominated points of `points`, peak ascending (used by computeFrontier; exposed for tests).
std::vector<FrontierPoint> nonDominated(std::vector<FrontierPoint> points);

} // namespace core
