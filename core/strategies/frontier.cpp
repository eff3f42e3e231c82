// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/frontier.h"

#include "cost/opcost.h"
#include "planners/metrics.h"
#include "planners/validate.h"
#include "strategies/budget.h"
#include "strategies/checkpointdp.h"
#include "strategies/checkpointmilp.h"
#include "strategies/training.h"
#include "util/format.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

namespace core {

namespace {

std::string joined(const std::vector<std::string>& names)
{
    std::string label;
    for (const auto& n : names)
        label += (label.empty() ? "" : "+") + n;
    return label.empty() ? "none" : label;
}

// What the run recomputed and swapped, by original tensor name, first occurrence first.
void fillDecisions(const Transformed& state, FrontierPoint& point)
{
    std::set<TensorIndex> recomputed, swapped;
    for (std::size_t t = 0; t < state.graph.tensors.size(); ++t) {
        const auto source = state.origin[t];
        if (source == static_cast<TensorIndex>(t) || source < 0)
            continue;
        if (state.onHost[t]) {
            if (swapped.insert(source).second)
                point.swapped.push_back(state.graph.tensors[std::size_t(source)].name);
        } else if (state.graph.tensors[t].name.find(".recompute") != std::string::npos) {
            if (recomputed.insert(source).second)
                point.recomputed.push_back(state.graph.tensors[std::size_t(source)].name);
        }
    }
}

// How the MILP's solves on one graph ended: proven optimal, or stopped on the time limit with the largest gap.
std::string milpNote(const std::string& what, const MilpSweep& sweep, int added, int steps, const FrontierOptions& options)
{
    std::string note = what + ": " + std::to_string(sweep.solves) + " programs solved by GLPK, " + std::to_string(sweep.optimal) + " proven optimal";
    if (sweep.timedOut > 0) {
        char gap[64];
        std::snprintf(gap, sizeof gap, "%.1f %%", 100.0 * sweep.worstGap);
        note += ", " + std::to_string(sweep.timedOut) + " stopped on the " + formatSeconds(options.milpTimeLimitSeconds)
            + " limit with their best set (gap up to " + (sweep.worstGap < 0 ? std::string("unknown: the DP's set") : std::string(gap)) + ")";
    }
    note += "; " + std::to_string(sweep.choices.size()) + " sets, " + std::to_string(added) + " not among the DP's";
    if (steps > options.milpMaxCandidates)
        note += "; " + std::to_string(steps) + " forward steps, checkpoints at the ends of " + std::to_string(options.milpMaxCandidates) + " blocks";
    if (sweep.capped)
        note += "; the MILP's total time (" + formatSeconds(options.milpTotalSeconds) + ") ran out before its last budget";
    return note;
}

// Fills a point's measures from a planned run.
void measure(const StrategyRun& run, const Plan& plan, double baseSeconds, FrontierPoint& point)
{
    point.peakBytes = plan.arenaSize;
    point.lowerBound = lowerBound(run.workload.problem);
    point.extraSeconds = extraSeconds(run.reports);
    point.seconds = baseSeconds + point.extraSeconds;
    for (const auto& r : run.reports) {
        point.extraFlops += r.extraFlops;
        point.swappedBytes += r.swappedBytes;
    }
    fillDecisions(run.state, point);
}

struct Builder {
    const Workload& workload;
    const Planner& planner;
    double baseSeconds = 0;
    Frontier& frontier;
    const CancelToken& cancel;
    std::vector<FrontierPoint> candidates;

    // Runs, plans and checks one candidate; false when it was dropped.
    bool realize(FrontierPoint point)
    {
        point.options.leaveOutOutdone = false; // exactly what the point names
        auto run = applyStrategies(workload, point.names, point.options);
        if (!run) {
            ++frontier.dropped;
            return false;
        }
        auto plan = runPlanner(planner, run->workload.problem, cancel);
        if (!plan && plan.error().code == ErrorCode::Cancelled)
            return false; // computeFrontier sees the token and stops
        if (!plan || !validatePlan(run->workload.problem, *plan).ok()) {
            ++frontier.dropped;
            return false;
        }
        ++frontier.candidates;
        measure(*run, *plan, baseSeconds, point);
        candidates.push_back(std::move(point));
        return true;
    }
};

} // namespace

std::vector<FrontierPoint> nonDominated(std::vector<FrontierPoint> points)
{
    std::stable_sort(points.begin(), points.end(), [](const FrontierPoint& a, const FrontierPoint& b) {
        return a.peakBytes != b.peakBytes ? a.peakBytes < b.peakBytes : a.extraSeconds < b.extraSeconds;
    });
    std::vector<FrontierPoint> kept;
    for (auto& p : points)
        if (kept.empty() || p.extraSeconds < kept.back().extraSeconds - 1e-12)
            kept.push_back(std::move(p));
    return kept;
}

Expected<Frontier> computeFrontier(const Workload& workload, const FrontierOptions& options, const FrontierProgress& progress,
    const CancelToken& cancel)
{
    if (!workload.graph)
        return makeError(ErrorCode::InvalidArgument,
            workload.source + ": an allocation problem has no graph; the frontier needs strategies, which need a model");
    const auto* planner = plannerByName(options.planner);
    if (!planner)
        return makeError(ErrorCode::InvalidArgument, "unknown planner '" + options.planner + "'");
    const auto report = [&](double fraction, std::string_view what) {
        if (progress)
            progress(std::min(1.0, fraction), what);
    };
    const auto cancelled = [] { return makeError(ErrorCode::Cancelled, "frontier: cancelled"); };
    Frontier frontier;
    auto base = options.strategy;
    base.leaveOutOutdone = false;
    base.recomputePolicy = RecomputePolicy::Greedy;
    base.checkpointSteps.clear();
    frontier.baseSeconds = scheduleCost(*workload.graph, workload.schedule, base.device).seconds;
    frontier.training = backwardStart(*workload.graph, workload.schedule) < workload.schedule.steps();
    Builder builder { workload, *planner, frontier.baseSeconds, frontier, cancel, {} };

    // The heuristics: the budget search's on/off combinations (2^strategies), then sqrt(n) checkpointing.
    const double combinations = static_cast<double>(1u << strategyNames().size());
    report(0.0, "the on/off combinations");
    int seen = 0;
    const auto status = forEachCombination(workload, *planner, base, [&](CombinationResult&& c) {
        FrontierPoint point;
        point.method = "combination";
        point.label = joined(c.names);
        point.names = c.names;
        point.options = base;
        measure(c.run, c.plan, frontier.baseSeconds, point);
        if (c.mask == 0)
            frontier.baseArena = c.plan.arenaSize;
        ++frontier.candidates;
        frontier.heuristics.push_back(point);
        builder.candidates.push_back(std::move(point));
        report(0.3 * ++seen / combinations, "the on/off combinations");
    }, cancel);
    if (!status)
        return status.error();
    if (frontier.training) {
        FrontierPoint point;
        point.method = "checkpoint";
        point.label = "checkpoint sqrt(n)";
        point.names = { "recompute" };
        point.options = base;
        point.options.recomputePolicy = RecomputePolicy::Checkpoint;
        point.options.checkpointEvery = 0;
        if (builder.realize(point))
            frontier.heuristics.push_back(builder.candidates.back());
    }

    // The dynamic program, on the graph as loaded and after fuse.
    struct Recipe {
        std::string method;
        std::vector<std::string> names;
        StrategyOptions options;
        std::string label;
        std::vector<Step> checkpoints;
    };
    std::vector<Recipe> runs;
    const bool large = static_cast<int>(workload.graph->ops.size()) > options.largeGraphOps;
    const int budgets = large ? std::max(1, options.budgets / 3) : options.budgets;
    std::vector<int> greedyRewrites; // large: every other one (1, 4, 16 of the default)
    for (std::size_t i = 0; i < options.greedyRewrites.size(); i += large ? 2 : 1)
        greedyRewrites.push_back(options.greedyRewrites[i]);
    if (large) {
        frontier.notes.push_back(std::to_string(workload.graph->ops.size()) + " ops (over " + std::to_string(options.largeGraphOps)
            + "): the fast approximation, fewer DP budgets and greedy sweeps, no fused variant");
    }
    if (frontier.training) {
        std::vector<std::vector<std::string>> bases { {} };
        if (options.withFuse && !large)
            bases.push_back({ "fuse" });
        const int milpBudgets = large ? std::max(1, options.milpBudgets / 2) : options.milpBudgets;
        double milpSpent = 0;
        int milpBase = 0;
        const auto milpLeft = [&](double spent) { return options.milpTotalSeconds - spent; };
        for (const auto& prefix : bases) {
            Transformed state;
            if (prefix.empty()) {
                state = startTransform(*workload.graph, workload.schedule);
            } else {
                auto fused = applyStrategies(workload, prefix, base);
                if (!fused)
                    continue;
                state = std::move(fused->state);
            }
            const auto chain = checkpointChain(state, base.device, options.maxCandidates);
            if (chain.steps() > options.maxCandidates)
                frontier.notes.push_back("dp: " + std::to_string(chain.steps()) + " forward steps, checkpoints at the ends of "
                    + std::to_string(options.maxCandidates) + " blocks");
            auto choices = checkpointSweep(chain, budgets);
            const auto fromDp = choices.size();
            if (options.milp && milpLeft(milpSpent) > 0) {
                const auto started = std::chrono::steady_clock::now();
                const auto milpChain = options.milpMaxCandidates == options.maxCandidates ? chain
                                                                                         : checkpointChain(state, base.device, options.milpMaxCandidates);
                MilpOptions milpOptions;
                milpOptions.timeLimitSeconds = options.milpTimeLimitSeconds;
                milpOptions.cancel = cancel;
                const std::string what = std::string("milp") + (prefix.empty() ? "" : " (fused graph)");
                const auto sweep = milpSweep(milpChain, milpBudgets, milpOptions, milpLeft(milpSpent), [&](int solved, int total) {
                    report(0.3 + 0.15 * (static_cast<double>(milpBase) + static_cast<double>(solved) / total) / static_cast<double>(bases.size()),
                        what + ": budget " + std::to_string(solved) + " of " + std::to_string(total));
                });
                milpSpent += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
                if (sweep.cancelled || cancel.isCancelled())
                    return cancelled();
                int added = 0;
                for (const auto& choice : sweep.choices)
                    if (std::none_of(choices.begin(), choices.begin() + std::ptrdiff_t(fromDp),
                            [&](const CheckpointChoice& c) { return c.checkpoints == choice.checkpoints; })) {
                        choices.push_back(choice);
                        ++added;
                    }
                frontier.notes.push_back(milpNote(what, sweep, added, milpChain.steps(), options));
            }
            ++milpBase;
            for (std::size_t c = 0; c < choices.size(); ++c) {
                const auto& choice = choices[c];
                const std::string method = c < fromDp ? "dp" : "milp";
                for (bool swap : { false, true }) {
                    if (swap && !options.withSwap)
                        continue;
                    Recipe p;
                    p.method = swap ? method + "+swap" : method;
                    p.names = prefix;
                    p.names.push_back("recompute");
                    if (swap)
                        p.names.push_back("swap");
                    if (!prefix.empty())
                        p.names.push_back("inplace");
                    p.options = base;
                    p.options.recomputePolicy = RecomputePolicy::Checkpoint;
                    p.options.checkpointSteps = choice.checkpoints;
                    p.checkpoints = choice.checkpoints;
                    p.label = (prefix.empty() ? "" : "fuse+") + std::string("recompute(") + std::to_string(choice.checkpoints.size())
                        + " checkpoints)" + (swap ? "+swap" : "") + (prefix.empty() ? "" : "+inplace");
                    runs.push_back(std::move(p));
                }
            }
        }
    }
    // The greedy sweep.
    if (options.greedy)
        for (int rewrites : greedyRewrites)
            for (const auto& names : std::vector<std::vector<std::string>> { { "recompute" }, { "swap" }, { "recompute", "swap" } }) {
                Recipe p;
                p.method = "greedy";
                p.names = names;
                p.options = base;
                p.options.maxRewrites = rewrites;
                p.label = joined(names) + " (" + std::to_string(rewrites) + " rewrites)";
                runs.push_back(std::move(p));
            }
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (cancel.isCancelled())
            return cancelled();
        const double from = frontier.training && options.milp ? 0.45 : 0.3;
        report(from + (1.0 - from) * static_cast<double>(i) / static_cast<double>(runs.size()), runs[i].method + ": " + runs[i].label);
        FrontierPoint point;
        point.method = runs[i].method;
        point.label = runs[i].label;
        point.names = runs[i].names;
        point.options = runs[i].options;
        point.checkpoints = runs[i].checkpoints;
        builder.realize(std::move(point));
    }
    if (cancel.isCancelled())
        return cancelled();
    if (!frontier.training)
        frontier.notes.push_back("no backward pass: the frontier holds the greedy sweep and the combinations (the DP needs a training graph)");
    if (frontier.dropped > 0)
        frontier.notes.push_back(std::to_string(frontier.dropped) + " candidates dropped (the rewrite, the planner or the validator refused them)");
    frontier.points = nonDominated(std::move(builder.candidates));
    report(1.0, "done");
    return frontier;
}

Expected<StrategyRun> applyFrontierPoint(const Workload& workload, const FrontierPoint& point)
{
    auto options = point.options;
    options.leaveOutOutdone = false;
    return applyStrategies(workload, point.names, options);
}

const FrontierPoint* pickForBudget(const Frontier& frontier, Bytes budget)
{
    const FrontierPoint* best = nullptr;
    for (const auto& p : frontier.points)
        if (p.peakBytes <= budget && (!best || p.seconds < best->seconds || (p.seconds == best->seconds && p.peakBytes < best->peakBytes)))
            best = &p;
    return best;
}

} // namespace core
