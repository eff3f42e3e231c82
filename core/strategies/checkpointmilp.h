// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The checkpoint MILP (after Checkmate: a mixed-integer program on the forward DAG, solved by GLPK): which
// forward steps to keep as checkpoints so that the recomputation costs least under a memory budget,
// solved exactly by branch and bound under a time limit, the best set found reported when it stops.
// - The choice is the checkpoint policy's (StrategyOptions::checkpointSteps): a set of checkpoints cuts
//   the forward steps into segments, each dropped after the forward pass and re-run once before its
//   backward reads; the steps after the last checkpoint stay. So the result is applied, planned and
//   validated like the DP's (strategies/checkpointdp.h) and uses its CheckpointChain. (Checkmate's own
//   variables, which op runs at which stage, would allow schedules this rewrite cannot apply.)
// - The memory model is the DP's with the DAG's reads counted per tensor: a tensor made inside a segment
//   and read by a later segment's ops (a skip connection, an op with several inputs) must be there when
//   that segment re-runs, so its original stays alive from the forward pass until the re-run of the
//   earliest later segment that reads it (the rewrite re-runs the last segment first); it is counted once
//   however many segments read it, and not at all when its producer is a checkpoint (it is kept then).
//   The DP counts it once per reading segment and also when its producer is a checkpoint, so for every
//   set this model's peak is at most the DP's, equal on a chain without skip connections.
//   Tensors are told apart as the DP does: by (producer step, bytes).
// - The program (n candidates, the positions a checkpoint may take): a binary x(a, b) per pair of
//   consecutive checkpoints a < b (a path from the start to the end of the forward pass, O(n^2)
//   binaries; pairs whose segment exceeds the budget with the two checkpoints and the forced ones before
//   them alone, or that would put a forced checkpoint inside a segment, are left out), y(c) = c is a checkpoint, u(t, c) = skip tensor t
//   is held when the segment closing at c re-runs (monotone in c, forced to 1 by a segment that reads t
//   unless t's producer is a checkpoint; only for the tensors a candidate can separate from a reader). Per candidate c one row: the checkpoints before c, the skip
//   tensors held, the segment into c and c's own bytes fit the budget; one more at the end of the forward
//   pass (every checkpoint, every skip tensor held, the tail). No big-M: a row of a position off the path
//   holds a prefix of the final state, which fits when that state does. Objective: the segments' seconds.
//   The least-peak program has the same rows with the budget replaced by a variable it minimises.
// - Above `maxCandidates` forward steps the caller coarsens the chain (checkpointChain's block ends): the
//   program is then exact over blocks.
// - GLPK keeps one environment per thread: each call builds, solves and deletes its problem and frees the
//   calling thread's environment before returning, so calls on different threads (the Studio's pool) run
//   side by side and nothing of GLPK outlives a call; terminal output is off. Do not call it from a
//   thread that holds GLPK objects of its own.

#include "strategies/checkpointdp.h"
#include "util/cancel.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace core {

struct MilpOptions {
    double timeLimitSeconds = 2.0; // the whole solve (LP relaxation and branch and bound)
    bool warmStart = true;         // the DP's set on the same chain as the first incumbent: for the budget, or
                                   // (least peak) at the DP's least feasible budget; it fits this model
    CancelToken cancel;            // stops the branch and bound; the best set so far is returned
};

struct MilpResult {
    std::optional<CheckpointChoice> choice; // the best set found; modelPeak and modelSeconds in this model
    bool optimal = false;    // proven optimal for the model (gap 0)
    bool infeasible = false; // proven: no set of checkpoints fits the budget
    bool timedOut = false;   // stopped on the time limit (choice: the best found, if any)
    bool cancelled = false;  // stopped by the cancel token
    double gap = 0;          // relative gap between the best set and the best bound when it stopped
    int binaries = 0;        // the program's size
    int columns = 0;
    int rows = 0;
    std::string message;     // why there is no choice, when there is none and it is not proven infeasible
};

// The model's peak and recompute seconds of a set of checkpoints (forced steps before its last added).
CheckpointChoice milpModel(const CheckpointChain& chain, std::vector<Step> checkpoints);

// The least-seconds set of checkpoints whose model peak is at most `budget`.
MilpResult milpCheckpoints(const CheckpointChain& chain, Bytes budget, const MilpOptions& options = {});

// The set with the least model peak (ties unbroken); its choice's modelPeak is where a budget sweep starts.
MilpResult milpLeastPeak(const CheckpointChain& chain, const MilpOptions& options = {});

struct MilpSweep {
    std::vector<CheckpointChoice> choices; // distinct, least memory first; the empty set left out
    int solves = 0;          // the least peak's and one per budget
    int optimal = 0;         // of them, proven optimal
    int timedOut = 0;        // of them, stopped on the time limit with a best set found
    double worstGap = 0;     // the largest gap of those (-1: one had no bound yet, its set is the DP's)
    bool capped = false;     // `totalSeconds` ran out before the last budget
    bool cancelled = false;
};

// The MILP over `budgets` budgets from the least peak (milpLeastPeak, or the DP's least feasible budget
// when that is lower or the MILP found none) to every step stored, spread quadratically (denser at the
// low end, where the frontier's hard choices are); each solve gets `options.timeLimitSeconds`, all of
// them together `totalSeconds`. `progress(solved, budgets)` after each solve.
MilpSweep milpSweep(const CheckpointChain& chain, int budgets, const MilpOptions& options, double totalSeconds,
    const std::function<void(int, int)>& progress = {});

} // namespace core
