// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The checkpoint dynamic program (as in Rotor/Rockmate, on the chain of forward steps of a training graph):
// which forward steps to keep as checkpoints so that the recomputation costs least under a memory budget.
// - Model: forward step s holds bytes[s] (its outputs the backward pass reads), keeps keep[s] as a
//   checkpoint (all its outputs: a checkpoint the backward pass does not read still stays until the
//   recomputation after it reads it) and takes seconds[s] to run. A set of checkpoints c_0 < c_1 < ... cuts
//   the forward steps into segments (c_{i-1}, c_i): a segment's outputs are dropped after the forward pass
//   and the segment re-runs once before its backward reads (its seconds are the extra time); the steps
//   after the last checkpoint stay (the recompute rewrite's tail).
//   Peak = max(the checkpoints before a segment + the segment + its closing checkpoint, over the segments;
//   every checkpoint + the tail, at the end of the forward pass). A segment that reads a tensor made before
//   the checkpoint it starts from (a skip connection) holds that tensor as it holds its closing checkpoint. Constant bytes (weights' gradients, the
//   backward's own tensors) are left out: a budget here is a budget on the forward activations kept.
// - The program: states are checkpoints; each keeps the Pareto list of (bytes held by the checkpoints so
//   far, recompute seconds so far) that fit the budget; a transition adds one segment and its closing
//   checkpoint. Exact for the model when no list exceeds `listCap` entries (then thinned evenly).
// - Steps that cannot be re-run (random ops, in-place updates) are forced checkpoints. Above
//   `maxCandidates` forward steps, checkpoints are only allowed at the ends of equal blocks of steps (and
//   at the forced ones): the program then is exact over blocks, an approximation over steps.
// Real peaks and times come from applying the choice (StrategyOptions::checkpointSteps) and planning it
// (strategies/frontier.h): the model only ranks the choices.

#include "strategies/strategy.h"

#include <optional>
#include <utility>
#include <vector>

namespace core {

struct CheckpointChain {
    std::vector<Bytes> bytes;     // per forward step: its outputs the backward pass reads
    std::vector<Bytes> keep;      // per forward step: all its activation outputs (what a checkpoint there holds)
    std::vector<double> seconds;  // per forward step
    // per forward step: its activation inputs made by earlier forward steps, as (producer step, bytes). A
    // segment that reads one made before the checkpoint it starts from (a skip connection across it)
    // keeps it alive until the segment re-runs, as it would a checkpoint.
    std::vector<std::vector<std::pair<Step, Bytes>>> inputs;
    std::vector<bool> forced;     // per forward step: always a checkpoint
    std::vector<bool> candidate;  // per forward step: may be a checkpoint
    int steps() const { return static_cast<int>(bytes.size()); }
    // What the segment (last, c) reads of tensors made before step `last` (each producer's output once).
    Bytes skipBytes(Step last, Step c) const;
    Bytes kept(Step s) const { return keep.empty() ? bytes[std::size_t(s)] : std::max(bytes[std::size_t(s)], keep[std::size_t(s)]); }
};

// The chain of `state`'s forward steps (those before backwardStart) costed on `device`; empty when the
// graph has no backward pass.
CheckpointChain checkpointChain(const Transformed& state, const DeviceProfile& device, int maxCandidates = 300);

struct CheckpointChoice {
    std::vector<Step> checkpoints; // ascending forward steps (the forced ones before the last included)
    Bytes modelPeak = 0;
    double modelSeconds = 0;
};

// `checkpoints` ascending and unique, with the forced steps before the last added: a forced step
// before the last checkpoint is one; after it, it is in the tail, which stays anyway.
std::vector<Step> withForcedCheckpoints(const CheckpointChain& chain, std::vector<Step> checkpoints);

// The model's peak and recompute seconds of a set of checkpoints (forced steps before its last are added).
CheckpointChoice checkpointModel(const CheckpointChain& chain, std::vector<Step> checkpoints);

// The least-seconds set whose model peak is at most `budget` (ties: the smaller peak); nullopt when none fits.
std::optional<CheckpointChoice> bestCheckpoints(const CheckpointChain& chain, Bytes budget, int listCap = 256);

// The distinct choices of `budgets` budgets spread from the least feasible model peak to every step
// stored, least memory first; the empty set (nothing recomputed) left out.
std::vector<CheckpointChoice> checkpointSweep(const CheckpointChain& chain, int budgets, int listCap = 256);

} // namespace core
