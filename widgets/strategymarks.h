// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// What the Studio views mark after strategies ran: per buffer of the transformed workload, which
// strategy touched it and how (from core::Transformed), the host trips of swapped values, and the
// live-bytes curve of the untransformed workload aligned to the new schedule. Plain C++ (no Qt), so
// it is computed on the worker thread with the strategies and tested without painting.

#include "io/workload.h"
#include "strategies/strategy.h"

#include <memory>
#include <string>
#include <vector>

// Bit flags; one buffer may carry several (an in-place buffer written by a fused op).
enum StrategyMark : unsigned {
    MarkNone = 0,
    MarkFused = 1u << 0,      // written by a fused op (its intermediates are gone)
    MarkInPlace = 1u << 1,    // shared by two or more tensors (an op wrote into its input's buffer)
    MarkRecomputed = 1u << 2, // a recomputed copy: its producer was re-run before a later read
    MarkSwapOut = 1u << 3,    // a swapped value before its host trip (read by SwapOut)
    MarkSwapIn = 1u << 4,     // a swapped value after its host trip (written by SwapIn)
};
constexpr int kStrategyMarkCount = 5;

// A swapped value's trip to host and back: it leaves the device after `outBuffer` ends and returns
// in `inBuffer`; between the two it holds no device memory.
struct HostTrip {
    int outBuffer = -1;
    int inBuffer = -1;
    core::Step swapOutStep = 0; // step of the SwapOut op
    core::Step swapInStep = 0;  // step of the SwapIn op
    core::Bytes size = 0;
    std::string tensor; // the swapped value's name
};

struct StrategyFacts {
    std::shared_ptr<const core::Workload> workload; // the transformed workload the buffer indices refer to
    std::vector<unsigned> marks;                    // per buffer, StrategyMark bits
    std::vector<std::vector<std::string>> notes;    // per buffer: one line per mark, naming the strategy
    std::vector<HostTrip> trips;
    std::vector<core::Bytes> beforeCurve; // untransformed live bytes per new step (alignBeforeCurve)
    core::Bytes beforeLowerBound = 0;     // lower bound of the untransformed workload

    unsigned presentMarks() const; // union of every buffer's marks
    int countWith(StrategyMark mark) const;
};

// Facts for `transformed` (the workload of `run`) against the untransformed `original`.
StrategyFacts computeStrategyFacts(const core::Workload& original, std::shared_ptr<const core::Workload> transformed,
    const core::Transformed& state);

// The untransformed live-bytes curve on the new schedule's steps, so the two curves can be drawn on one
// axis. Strategies only append tensors, so a tensor index below the original count names the same value
// in both graphs; an op is identified by the original tensor it produces:
// - an op of the new schedule that produces an original tensor takes the original curve's value at the
//   step where that tensor was produced (reorder: the values follow their ops to their new steps);
// - a fused op stands for its whole group: it takes the largest original value over its members' steps
//   (members are found by following each fused-away output to its single reader);
// - an inserted op (recompute clone, SwapOut, SwapIn) repeats the previous step's value (the first
//   original value when it is step 0).
// Result size: state.schedule.steps(). Empty when the original workload has no graph.
std::vector<core::Bytes> alignBeforeCurve(const core::Workload& original, const core::Transformed& state);

// Where each step of `transformed` (strategies applied to `original`) falls on the step axis of
// `original`, so two configurations of one model line up op by op (Compare A/B). Same identity rule
// as alignBeforeCurve: an op that produces an original tensor sits at that tensor's original step (a
// fused op at its first member's, so it spans the group; a reordered op at its old place); inserted
// ops (recompute clones, SwapOut, SwapIn) share the unit after the op before them, evenly. Result size:
// transformed.schedule.steps(); empty when either has no graph or the schedule and the problem
// disagree on the step count (then raw steps are all there is).
std::vector<double> stepsOnOriginalAxis(const core::Workload& original, const core::Workload& transformed);

// Short name of one mark ("recomputed", "swap-out", ...) for legends and the summary.
const char* strategyMarkName(StrategyMark mark);
