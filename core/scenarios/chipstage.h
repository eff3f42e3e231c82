// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"
#include "schedule/schedule.h"

#include <vector>

namespace core {

// One stage of a multi-chip partition: the ops at steps [begin, end) of a schedule run on one chip,
// which holds in its own memory
// - the weights those ops read (a weight read by two stages is held by both; an Identity that only
//   forwards a weight holds nothing, its readers hold the weight it forwards), persistent state alike;
// - one activation arena for every non-weight tensor the stage produces or reads.
//
// Local lifetimes in the stage arena (steps renumbered from 0 = begin):
//   received (produced on an earlier chip, or a graph input from the host): arrives before the stage
//     starts, so [0, last read here + 1);
//   sent (produced here and read on a later chip, or a graph output): held until the stage ends and
//     its transfers go out, so [produced, end - begin);
//   local (produced and last read here): its usual lifetime, [produced, last read + 1).
//
// Why the rules matter: for any sub-range of a stage, every tensor alive at a step of the sub-range
// is also alive at that step of the whole stage (a received tensor was alive since its producer, a
// sent one lives on to its later reader). So the lower bound of a stage's arena, and its weights,
// never grow when the stage shrinks: "the stage's weights + lower bound fit" is hereditary, which
// the partition search in multichip.h relies on.

enum class StageBufferRole { Local, Received, Sent };

// Facts about every tensor of (graph, schedule), computed once and shared by every stage built from it.
struct StageIndex {
    const Graph* graph = nullptr;
    const Schedule* schedule = nullptr;
    Bytes alignment = 1;
    std::vector<Step> producedAt;           // per tensor: step of the producing op; -1 none (graph input, weight)
    std::vector<std::vector<Step>> readAt;  // per tensor: ascending steps whose op reads it (inputs, captured)
    std::vector<char> graphOutput;          // per tensor: 1 for graph outputs
    std::vector<TensorIndex> weightRoot;    // per weight/persistent tensor: the tensor it aliases (itself if none)
    std::vector<char> forwardsWeight;       // per step: 1 when the op only forwards a weight (Identity)
};

// `graph` and `schedule` must outlive the index. `alignment` >= 1 rounds every arena buffer up.
StageIndex indexStages(const Graph& graph, const Schedule& schedule, Bytes alignment);

struct StageProblem {
    Step begin = 0, end = 0; // global steps of the stage, [begin, end)
    PlanProblem problem;     // the stage's arena, local steps [0, end - begin)
    std::vector<TensorIndex> bufferTensor; // per buffer of `problem`
    std::vector<StageBufferRole> roles;    // per buffer of `problem`
    std::vector<TensorIndex> weights;      // weight/persistent tensors the stage holds (roots), ascending
    Bytes weightBytes = 0;
    Bytes receivedBytes = 0; // sum of received buffers (aligned sizes)
    Bytes sentBytes = 0;     // sum of sent buffers (aligned sizes)
};

// Builds the stage [begin, end), 0 <= begin < end <= steps. O(ops and tensor reads in the stage, log).
StageProblem buildStageProblem(const StageIndex& index, Step begin, Step end);

} // namespace core
