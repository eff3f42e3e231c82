// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "cost/device.h"
#include "planners/planner.h"
#include "scenarios/chipstage.h"
#include "util/cancel.h"

#include <string>
#include <vector>

namespace core {

// Multi-chip partition for fixed-memory accelerators (a chip whose SRAM must hold weights and
// activations, with no cache and no DRAM behind it):
// - the schedule is cut into contiguous stages, one per chip; each stage's weights plus its planned
//   activation arena (received and sent boundary tensors included, see chipstage.h) must fit the
//   chip's memory capacity;
// - a tensor crossing a boundary goes from the chip that produces it straight to every later chip
//   that reads it, once per receiving chip, after its producer's stage and before the receiving
//   stage starts (so before its first use there); graph inputs come from the host, graph outputs go
//   back to it over the host link;
// - transfer time = bytes / link bandwidth + link latency (the profile's chip link, else the host
//   link: DeviceProfile::chipLinkBandwidthOrHost); stage time = the opcost roofline of its ops.
//
// Fewest chips (`chips` = 0). "weights + lower bound <= capacity" is hereditary: a sub-range of a
// fitting stage fits (chipstage.h). Under a hereditary test, taking each stage as long as it can be
// (greedy) gives the fewest stages: if an optimal partition's i-th stage ends at o_i and greedy's at
// g_i, then g_1 >= o_1, and g_{i-1} >= o_{i-1} makes [g_{i-1}, o_i) a sub-range of a fitting stage,
// so g_i >= o_i; greedy ends no later. No plan beats the lower bound, so that greedy count
// (`provenMinChips`) is a floor for every planner. The chips actually used come from the same greedy
// with the planner's arenas (each longest stage found by binary search on its end); when the
// planner packs every stage at its lower bound, as the default planner does on most models, the two counts
// agree and the partition is optimal (`optimal`).
//
// Given chips (`chips` = N): spreads the load, minimising the largest fill: binary search for the
// smallest per-chip cap under which the greedy needs at most N stages, then stages are split in two
// (largest fill first) until there are exactly N. Errors when N chips cannot hold the model (N below
// the proven minimum, or the planner's arenas need more), or N exceeds the number of ops.
//
// Errors name the op that alone cannot fit a chip, with its bytes. Each stage plan is checked with
// validatePlan. Cost: O(stages · log(steps)) stage builds and plans for `auto`, about 12 times that
// for a given N. Pure: safe on any thread; `cancel` is checked between stage plans.

struct MultiChipOptions {
    int chips = 0;                         // 0: fewest that fit; N > 0: exactly N stages
    std::string planner { kDefaultPlanner }; // registry name (planners/planner.h)
    Bytes alignment = 0;                   // arena alignment; 0: the device's
    CancelToken cancel;
};

struct ChipTransfer {
    TensorIndex tensor = -1;
    std::string name;
    Bytes bytes = 0;      // the tensor's size (unaligned)
    int fromChip = -1;    // producing stage; -1: the host (graph input)
    int toChip = -1;      // receiving stage; -1: the host (graph output)
    Step producedAt = -1; // global step of the producing op; -1 for graph inputs
    Step firstUse = 0;    // global step of its first read on the receiving chip (steps for the host)
    double seconds = 0;   // bytes / bandwidth + latency
};

struct ChipStage {
    StageProblem stage;
    Plan plan;              // validated plan of stage.problem
    Bytes capacity = 0;     // the chip's memory
    double computeSeconds = 0;     // roofline sum of the stage's ops
    double transferInSeconds = 0;  // sum of the transfers it receives (one link, one after another)
    std::vector<int> transfersIn;  // indices into MultiChipPlan::transfers
    std::vector<int> transfersOut;

    Bytes arenaBytes() const { return plan.arenaSize; }
    Bytes usedBytes() const { return stage.weightBytes + plan.arenaSize; }
    double fill() const { return capacity > 0 ? static_cast<double>(usedBytes()) / static_cast<double>(capacity) : 0; }
};

struct MultiChipPlan {
    DeviceProfile device;
    std::string planner;
    Bytes alignment = 1;
    Step steps = 0;
    std::vector<ChipStage> stages; // in schedule order; stage i runs on chip i
    std::vector<ChipTransfer> transfers;
    int provenMinChips = 0; // no partition with fewer chips fits, whatever the planner
    bool optimal = false;   // chips() == provenMinChips
    bool requestedChips = false; // the count was given (spread the load) rather than searched

    int chips() const { return static_cast<int>(stages.size()); }
    Bytes pooledCapacity() const { return device.memoryCapacity * chips(); }
    Bytes weightBytes() const;   // summed over stages (a weight two stages read counts twice)
    Bytes transferBytes() const; // chip-to-chip only
    // One input through the pipeline: every stage's received transfers and compute, then the outputs to the host.
    double latencySeconds() const;
    // The slowest stage (its received transfers + compute): one input leaves the pipeline per this time.
    double bottleneckSeconds() const;
    double throughputPerSecond() const { return bottleneckSeconds() > 0 ? 1.0 / bottleneckSeconds() : 0; }
};

Expected<MultiChipPlan> planMultiChip(
    const Graph& graph, const Schedule& schedule, const DeviceProfile& device, const MultiChipOptions& options);

} // namespace core
