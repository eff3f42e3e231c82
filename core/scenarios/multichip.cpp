// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "scenarios/multichip.h"

#include "cost/opcost.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "scenarios/multichipreport.h"
#include "util/format.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace core {

namespace {

struct Context {
    const StageIndex& index;
    const Planner& planner;
    const CancelToken& cancel;
    Step steps = 0;
};

// A stage built and planned.
struct Trial {
    StageProblem stage;
    Plan plan;
    Bytes used = 0; // weights + arena
};

Error cancelled() { return makeError(ErrorCode::Cancelled, "multi-chip partition cancelled"); }

Bytes boundOf(const Context& ctx, Step begin, Step end)
{
    const auto stage = buildStageProblem(ctx.index, begin, end);
    return stage.weightBytes + lowerBound(stage.problem);
}

Expected<Trial> planStage(const Context& ctx, Step begin, Step end)
{
    if (ctx.cancel.isCancelled())
        return cancelled();
    Trial trial;
    trial.stage = buildStageProblem(ctx.index, begin, end);
    auto plan = runPlanner(ctx.planner, trial.stage.problem, ctx.cancel);
    if (!plan)
        return plan.error();
    trial.plan = std::move(*plan);
    trial.used = trial.stage.weightBytes + trial.plan.arenaSize;
    return trial;
}

// Largest end in (begin, steps] whose stage fits `cap` by weights + lower bound (hereditary, so
// galloping then bisecting finds it); `begin` when even the single op at `begin` does not fit.
Step longestByBound(const Context& ctx, Step begin, Bytes cap)
{
    if (boundOf(ctx, begin, begin + 1) > cap)
        return begin;
    Step fits = begin + 1, stride = 1;
    while (fits + stride <= ctx.steps && boundOf(ctx, begin, fits + stride) <= cap) {
        fits += stride;
        stride *= 2;
    }
    Step fails = std::min<Step>(ctx.steps + 1, fits + stride); // first end known not to fit (or past the end)
    while (fails - fits > 1) {
        const Step mid = fits + (fails - fits) / 2;
        (boundOf(ctx, begin, mid) <= cap ? fits : fails) = mid;
    }
    return fits;
}

// Fewest stages under `cap` by weights + lower bound: the floor for any planner. -1 when the op at
// some step does not fit alone (its step in `stuckAt`), or when more than `maxStages` are needed.
int boundStageCount(const Context& ctx, Bytes cap, int maxStages, Step* stuckAt)
{
    int count = 0;
    for (Step begin = 0; begin < ctx.steps; ++count) {
        if (count == maxStages)
            return -1;
        const Step end = longestByBound(ctx, begin, cap);
        if (end == begin) {
            if (stuckAt)
                *stuckAt = begin;
            return -1;
        }
        begin = end;
    }
    return count;
}

struct Greedy {
    std::vector<Trial> stages;
    bool complete = false; // false: stuck on an op, or more than maxStages needed
};

// Greedy stages under `cap` with the planner's arenas: each stage's end is the longest by the lower
// bound, shortened by bisection when the planner's arena does not reach that bound.
Expected<Greedy> greedyPlanned(const Context& ctx, Bytes cap, int maxStages)
{
    Greedy result;
    for (Step begin = 0; begin < ctx.steps;) {
        if (static_cast<int>(result.stages.size()) == maxStages)
            return result;
        const Step end = longestByBound(ctx, begin, cap);
        if (end == begin)
            return result;
        auto trial = planStage(ctx, begin, end);
        if (!trial)
            return trial.error();
        if (trial->used > cap) {
            Step fits = begin, fails = end;
            std::optional<Trial> best;
            while (fails - fits > 1) {
                const Step mid = fits + (fails - fits) / 2;
                auto t = planStage(ctx, begin, mid);
                if (!t)
                    return t.error();
                if (t->used <= cap) {
                    fits = mid;
                    best = std::move(*t);
                } else {
                    fails = mid;
                }
            }
            if (!best)
                return result;
            trial = std::move(*best);
        }
        begin = trial->stage.end;
        result.stages.push_back(std::move(*trial));
    }
    result.complete = true;
    return result;
}

// The error for the op at `step` that does not fit one chip alone, with its bytes.
Error opTooBig(const Context& ctx, const DeviceProfile& device, Step step)
{
    auto alone = planStage(ctx, step, step + 1);
    if (!alone)
        return alone.error();
    const auto& op = ctx.index.graph->ops[ctx.index.schedule->order[step]];
    return makeError(ErrorCode::Infeasible,
        "op '" + op.name + "' (" + op.type + ", step " + std::to_string(step) + ") alone needs "
            + formatDecimalBytes(alone->used) + " (" + std::to_string(alone->used) + " B: weights "
            + formatDecimalBytes(alone->stage.weightBytes) + " + activations " + formatDecimalBytes(alone->plan.arenaSize)
            + "), more than one " + device.name + " chip holds (" + formatDecimalBytes(device.memoryCapacity) + ")");
}

// Splits stages in two, the fullest splittable one first, until there are `chips`.
Expected<std::vector<Trial>> splitTo(const Context& ctx, std::vector<Trial> stages, int chips, Bytes capacity)
{
    std::vector<char> unsplittable(stages.size(), 0);
    while (static_cast<int>(stages.size()) < chips) {
        int pick = -1;
        for (int i = 0; i < static_cast<int>(stages.size()); ++i)
            if (!unsplittable[i] && stages[i].stage.end - stages[i].stage.begin >= 2
                && (pick < 0 || stages[i].used > stages[pick].used))
                pick = i;
        if (pick < 0)
            return makeError(ErrorCode::Infeasible, "cannot split the stages into " + std::to_string(chips) + " chips");
        const Step begin = stages[pick].stage.begin, end = stages[pick].stage.end, mid = begin + (end - begin) / 2;
        auto left = planStage(ctx, begin, mid);
        if (!left)
            return left.error();
        auto right = planStage(ctx, mid, end);
        if (!right)
            return right.error();
        if (left->used > capacity || right->used > capacity) {
            unsplittable[pick] = 1; // the planner packed a half worse than the whole; try another stage
            continue;
        }
        stages[pick] = std::move(*left);
        stages.insert(stages.begin() + pick + 1, std::move(*right));
        unsplittable.insert(unsplittable.begin() + pick + 1, 0);
        unsplittable[pick] = 0;
    }
    return stages;
}

} // namespace

Bytes MultiChipPlan::weightBytes() const
{
    Bytes total = 0;
    for (const auto& s : stages)
        total += s.stage.weightBytes;
    return total;
}

Bytes MultiChipPlan::transferBytes() const
{
    Bytes total = 0;
    for (const auto& t : transfers)
        if (t.fromChip >= 0 && t.toChip >= 0)
            total += t.bytes;
    return total;
}

double MultiChipPlan::latencySeconds() const
{
    double total = 0;
    for (const auto& s : stages)
        total += s.transferInSeconds + s.computeSeconds;
    for (const auto& t : transfers)
        if (t.toChip < 0)
            total += t.seconds;
    return total;
}

double MultiChipPlan::bottleneckSeconds() const
{
    double slowest = 0;
    for (const auto& s : stages)
        slowest = std::max(slowest, s.transferInSeconds + s.computeSeconds);
    return slowest;
}

Expected<MultiChipPlan> planMultiChip(
    const Graph& graph, const Schedule& schedule, const DeviceProfile& device, const MultiChipOptions& options)
{
    if (schedule.steps() == 0)
        return makeError(ErrorCode::InvalidModel, "the graph has no ops: nothing to partition");
    if (device.memoryCapacity <= 0)
        return makeError(ErrorCode::InvalidArgument, "device '" + device.name + "' has no memory capacity");
    if (options.chips < 0)
        return makeError(ErrorCode::InvalidArgument, "chip count must be positive (or 0 for the fewest that fit)");
    if (options.chips > schedule.steps())
        return makeError(ErrorCode::InvalidArgument,
            std::to_string(options.chips) + " chips for " + std::to_string(schedule.steps())
                + " ops: a chip needs at least one op");
    const auto* planner = plannerByName(options.planner);
    if (!planner)
        return makeError(ErrorCode::InvalidArgument, "unknown planner '" + options.planner + "'");
    const Bytes alignment = options.alignment > 0 ? options.alignment : std::max<Bytes>(device.alignment, 1);
    const auto index = indexStages(graph, schedule, alignment);
    const Context ctx { index, *planner, options.cancel, schedule.steps() };
    const Bytes capacity = device.memoryCapacity;
    constexpr int kUnlimited = std::numeric_limits<int>::max();

    Step stuck = -1;
    const int provenMin = boundStageCount(ctx, capacity, kUnlimited, &stuck);
    if (provenMin < 0)
        return opTooBig(ctx, device, stuck);
    if (options.chips > 0 && options.chips < provenMin)
        return makeError(ErrorCode::Infeasible,
            std::to_string(options.chips) + " " + device.name + " chip(s) (" + formatDecimalBytes(capacity * options.chips)
                + ") cannot hold the model: it needs at least " + std::to_string(provenMin) + " chips ("
                + formatDecimalBytes(capacity * provenMin) + " pooled), whatever the planner");

    const int limit = options.chips > 0 ? options.chips : kUnlimited;
    auto greedy = greedyPlanned(ctx, capacity, limit);
    if (!greedy)
        return greedy.error();
    if (!greedy->complete) {
        if (options.chips > 0)
            return makeError(ErrorCode::Infeasible,
                "planner '" + options.planner + "' cannot fit the model on " + std::to_string(options.chips) + " "
                    + device.name + " chips (no plan needs fewer than " + std::to_string(provenMin)
                    + "; its arenas need more)");
        const Step at = greedy->stages.empty() ? 0 : greedy->stages.back().stage.end;
        return opTooBig(ctx, device, at);
    }
    std::vector<Trial> stages = std::move(greedy->stages);

    if (options.chips > 0) {
        // Smallest per-chip cap under which the greedy still needs at most N stages: minimises the fullest chip.
        Bytes fails = 0, fits = 0;
        for (const auto& s : stages)
            fits = std::max(fits, s.used);
        const Bytes resolution = std::max<Bytes>(capacity / 1000, 1);
        while (fits - fails > resolution) {
            const Bytes mid = fails + (fits - fails) / 2;
            auto tighter = greedyPlanned(ctx, mid, options.chips);
            if (!tighter)
                return tighter.error();
            if (!tighter->complete) {
                fails = mid;
                continue;
            }
            fits = 0;
            for (const auto& s : tighter->stages)
                fits = std::max(fits, s.used);
            stages = std::move(tighter->stages);
        }
        auto split = splitTo(ctx, std::move(stages), options.chips, capacity);
        if (!split)
            return split.error();
        stages = std::move(*split);
    }

    MultiChipPlan result;
    result.device = device;
    result.planner = options.planner;
    result.alignment = alignment;
    result.steps = schedule.steps();
    result.provenMinChips = provenMin;
    result.requestedChips = options.chips > 0;
    std::vector<int> stageOf(schedule.order.size(), 0);
    for (int i = 0; i < static_cast<int>(stages.size()); ++i) {
        auto& trial = stages[i];
        const auto check = validatePlan(trial.stage.problem, trial.plan);
        if (!check.ok())
            return makeError(ErrorCode::Infeasible, "chip " + std::to_string(i) + ": planner '" + options.planner
                    + "' produced an invalid plan: " + check.message);
        if (trial.used > capacity)
            return makeError(ErrorCode::Infeasible, "chip " + std::to_string(i) + " needs " + formatDecimalBytes(trial.used)
                    + ", more than its " + formatDecimalBytes(capacity));
        for (Step s = trial.stage.begin; s < trial.stage.end; ++s)
            stageOf[s] = i;
        ChipStage chip;
        chip.stage = std::move(trial.stage);
        chip.plan = std::move(trial.plan);
        chip.capacity = capacity;
        for (Step s = chip.stage.begin; s < chip.stage.end; ++s)
            chip.computeSeconds += opSeconds(graph, graph.ops[schedule.order[s]], device);
        result.stages.push_back(std::move(chip));
    }
    result.optimal = result.chips() == provenMin;

    // Transfers: into each stage its received buffers, then each graph output back to the host.
    auto addTransfer = [&](ChipTransfer t) {
        const bool chipLink = t.fromChip >= 0 && t.toChip >= 0;
        const double bandwidth = chipLink ? device.chipLinkBandwidthOrHost() : device.hostLinkBandwidth;
        t.seconds = (bandwidth > 0 ? static_cast<double>(t.bytes) / bandwidth : 0) + (chipLink ? device.chipLinkLatency : 0);
        const int id = static_cast<int>(result.transfers.size());
        if (t.toChip >= 0) {
            result.stages[t.toChip].transfersIn.push_back(id);
            result.stages[t.toChip].transferInSeconds += t.seconds;
        }
        if (t.fromChip >= 0)
            result.stages[t.fromChip].transfersOut.push_back(id);
        result.transfers.push_back(std::move(t));
    };
    for (int i = 0; i < result.chips(); ++i) {
        const auto& stage = result.stages[i].stage;
        for (std::size_t b = 0; b < stage.roles.size(); ++b) {
            if (stage.roles[b] != StageBufferRole::Received)
                continue;
            const auto t = stage.bufferTensor[b];
            const auto& reads = index.readAt[t];
            ChipTransfer transfer;
            transfer.tensor = t;
            transfer.name = graph.tensors[t].name;
            transfer.bytes = std::max<Bytes>(graph.tensors[t].size, 0);
            transfer.producedAt = index.producedAt[t];
            transfer.fromChip = transfer.producedAt >= 0 ? stageOf[transfer.producedAt] : -1;
            transfer.toChip = i;
            transfer.firstUse = *std::lower_bound(reads.begin(), reads.end(), stage.begin);
            addTransfer(std::move(transfer));
        }
    }
    for (int i = 0; i < result.chips(); ++i) {
        const auto& stage = result.stages[i].stage;
        for (std::size_t b = 0; b < stage.roles.size(); ++b) {
            const auto t = stage.bufferTensor[b];
            if (stage.roles[b] != StageBufferRole::Sent || !index.graphOutput[t])
                continue;
            addTransfer(ChipTransfer { t, graph.tensors[t].name, std::max<Bytes>(graph.tensors[t].size, 0), i, -1,
                index.producedAt[t], schedule.steps(), 0 });
        }
    }
    return result;
}

} // namespace core
