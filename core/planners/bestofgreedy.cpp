// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/bestofgreedy.h"

#include "planners/exactsearch.h"
#include "planners/gapfinder.h"
#include "planners/greedybysize.h"
#include "planners/metrics.h"
#include "planners/skyline.h"
#include "planners/stepcounts.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <random>
#include <thread>

namespace core {

namespace {
constexpr double kMaxDiveWork = 2e7; // buffers x sections above which skyline dives are skipped
constexpr int kImproveRounds = 24;     // at most; fewer on large problems (see improveRounds)
constexpr double kImproveWork = 4e5;  // buffers x rounds: keeps 100k-buffer problems to ~8 passes
constexpr int kParallelBuffers = 50000; // from here the order passes run side by side, one per core
// Capacity-bounded dives (searchPortfolio): the first capacity, times the lower bound; the step to
// the next one, times the lower bound; node limits, times (buffers + sections) (a straight dive
// takes about one unit); the spread of the perturbed rankings; the fixed seed.
constexpr double kFirstCapacity = 1.10;
constexpr double kCapacityStep = 0.01;
constexpr double kRunNodes = 1.2;
constexpr double kBudgetNodes = 4;
constexpr double kPerturbSpread = 0.05;
constexpr unsigned kSeed = 20231;

Status cancelled() { return makeError(ErrorCode::Cancelled, "planning cancelled"); }

// Number of other buffers each buffer's lifetime conflicts with. O(n + steps) where the steps are
// few (StepCounts), else O(n log n).
std::vector<int> conflictDegree(const PlanProblem& problem)
{
    std::vector<Step> startSteps, endSteps;
    startSteps.reserve(problem.buffers.size());
    endSteps.reserve(problem.buffers.size());
    for (const auto& b : problem.buffers) {
        startSteps.push_back(b.lifetime.start);
        endSteps.push_back(b.lifetime.end);
    }
    const StepCounts starts(startSteps), ends(endSteps);
    std::vector<int> degree;
    degree.reserve(problem.buffers.size());
    for (const auto& b : problem.buffers) {
        const auto endedBefore = ends.atMost(b.lifetime.start);
        const auto startedAfter = starts.count() - starts.below(b.lifetime.end);
        degree.push_back(static_cast<int>(problem.buffers.size() - endedBefore - startedAfter));
    }
    return degree;
}

// Indices sorted by key(i), largest first, ties by index. The (key, index) pairs are sorted, not
// the indices: a comparator that looks keys up reads a scattered array at every comparison, and
// one that recomputes them the scattered Buffer records. Largest key first, then smallest index is
// a total order, so the result is that of a stable sort by key.
std::vector<int> orderBy(const PlanProblem& problem, auto key)
{
    using Key = decltype(key(0));
    std::vector<std::pair<Key, int>> keyed(problem.buffers.size());
    for (std::size_t i = 0; i < keyed.size(); ++i)
        keyed[i] = { key(static_cast<int>(i)), static_cast<int>(i) };
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
        return a.first > b.first || (!(b.first > a.first) && a.second < b.second);
    });
    std::vector<int> order(keyed.size());
    for (std::size_t i = 0; i < keyed.size(); ++i)
        order[i] = keyed[i].second;
    return order;
}

// Buffers x sections of the skyline instance, without building it (which takes a map insertion
// per buffer and every buffer's sections: seconds at a million buffers, for nothing when too large).
double skylineWork(const PlanProblem& problem)
{
    std::vector<Step> cuts;
    double count = 0;
    for (const auto& b : problem.buffers)
        if (b.size > 0 && b.lifetime.end > b.lifetime.start) {
            ++count;
            cuts.push_back(b.lifetime.start);
            cuts.push_back(b.lifetime.end);
        }
    std::sort(cuts.begin(), cuts.end());
    const auto distinct = std::unique(cuts.begin(), cuts.end()) - cuts.begin();
    return count * double(std::max<std::ptrdiff_t>(0, distinct - 1));
}

// Short runs of the exact planner's capacity search (exactsearch.h), each little more than one dive:
// with the capacity bound, its section inference steers a dive around the dead ends a plain skyline
// dive walks into (those lose 10-40 %). Which (capacity, ranking) pairs pack is erratic, so the
// portfolio walks down from 1.10 x the lower bound in steps of 1 %, whether the last capacity packed
// or not, trying at each: the crowded-sections ranking, a perturbed copy of it, a perturbed copy of
// longest-first, another perturbed copy of the first. A node budget (not a clock) ends it, so the
// same problem gives the same plan. Returns a plan with arenaSize -1 when nothing packed, or
// cancelled.
Expected<Plan> searchPortfolio(const PlanProblem& problem, const SkylineInstance& instance, const CancelToken& cancel)
{
    Plan best;
    best.arenaSize = -1;
    const Bytes lb = instance.lowerBound, g = instance.granularity;
    const std::int64_t unit = std::int64_t(instance.count()) + instance.sections;
    const auto budget = static_cast<std::int64_t>(kBudgetNodes * double(unit));
    const auto limit = static_cast<std::int64_t>(kRunNodes * double(unit));
    const Bytes step = std::max<Bytes>(g, static_cast<Bytes>(kCapacityStep * double(lb)) / g * g);
    // The first run re-ranks each independent piece by its unplaced bytes (exactsearch.h).
    const struct { int ranking; bool perturb; } runs[] = {
        { static_cast<int>(SkylineRanking::TotalSpanArea), false },
        { static_cast<int>(SkylineRanking::TotalSpanArea), true },
        { static_cast<int>(SkylineRanking::LongestFirst), true },
        { static_cast<int>(SkylineRanking::TotalSpanArea), true },
    };
    CapacitySearch search(instance, cancel, {});
    const auto farFuture = CapacitySearch::Clock::now() + std::chrono::hours(1);
    std::mt19937 rng(kSeed);
    Bytes capacity = static_cast<Bytes>(kFirstCapacity * double(lb)) / g * g;
    while (search.nodes() + unit <= budget && capacity >= lb) {
        bool found = false;
        for (const auto& run : runs) {
            if (search.nodes() + unit > budget)
                break;
            const auto& base = instance.rank[run.ranking];
            const auto outcome = run.perturb ? search.run(capacity, farFuture, perturbedRank(base, kPerturbSpread, rng), limit)
                                             : search.run(capacity, farFuture, base, limit, run.ranking);
            if (search.cancelled())
                return cancelled().error();
            if (outcome == CapacitySearch::Outcome::Found) {
                if (best.arenaSize < 0 || search.solutionArena() < best.arenaSize)
                    best = planFromSkyline(problem, instance, search.solution());
                found = true;
                break;
            }
        }
        capacity = (found ? std::min(capacity, best.arenaSize) : capacity) - step;
        if (capacity < lb && best.arenaSize > lb)
            capacity = lb;
    }
    return best;
}
} // namespace

std::string_view BestOfGreedyPlanner::description() const
{
    return "fast heuristic: short capacity-bounded dives of the exact search, else offset passes in several orders";
}

namespace {

// One offset pass per order, in that order's place in the result. From kParallelBuffers buffers on,
// the passes run side by side (one thread per core): each has its own GapFinder and only reads the
// shared index, so the plans are the same as one after the other. An exception in a pass (out of
// memory) is thrown again here, after every thread has ended.
std::vector<Expected<Plan>> placeEach(const GapIndex& index, const std::vector<std::vector<int>>& orders, const CancelToken& cancel)
{
    std::vector<std::optional<Expected<Plan>>> results(orders.size());
    std::vector<std::exception_ptr> failures(orders.size());
    std::atomic<std::size_t> next { 0 };
    auto work = [&] {
        for (std::size_t k; (k = next++) < orders.size();) {
            try {
                results[k] = placeInOrder(index, orders[k], cancel);
            } catch (...) {
                failures[k] = std::current_exception();
            }
        }
    };
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const unsigned threads = index.count() >= kParallelBuffers ? std::min<unsigned>(cores, unsigned(orders.size())) : 1;
    {
        std::vector<std::jthread> helpers;
        for (unsigned t = 1; t < threads; ++t)
            helpers.emplace_back(work);
        work();
    } // joined
    std::vector<Expected<Plan>> plans;
    for (std::size_t k = 0; k < orders.size(); ++k) {
        if (failures[k])
            std::rethrow_exception(failures[k]);
        plans.push_back(std::move(*results[k]));
    }
    return plans;
}

} // namespace

Expected<Plan> BestOfGreedyPlanner::plan(const PlanProblem& problem, const CancelToken& cancel) const
{
    return bestOfGreedyPlan(problem, cancel);
}

Expected<Plan> bestOfGreedyPlan(const PlanProblem& problem, const CancelToken& cancel)
{
    // One greedy-by-size pass first: the result is never worse than it, and on real models it often
    // reaches the lower bound already (swin_t: 2.8 ms instead of 41 ms of dives that find the same).
    // The gap index serves it and every offset pass below.
    const GapIndex index(problem);
    auto greedy = placeInOrder(index, greedyBySizeOrder(problem), cancel);
    if (!greedy || greedy->arenaSize <= lowerBound(problem))
        return greedy;
    const bool skylineFits = skylineWork(problem) <= kMaxDiveWork;
    // The portfolio's rankings only; the fallback dives add theirs.
    SkylineInstance instance;
    if (skylineFits) {
        instance = makeSkylineInstance(problem, { SkylineRanking::TotalSpanArea, SkylineRanking::LongestFirst });
        auto found = searchPortfolio(problem, instance, cancel);
        if (!found)
            return found;
        if (found->arenaSize >= 0)
            return greedy->arenaSize < found->arenaSize ? std::move(greedy) : std::move(found);
    }

    // Nothing packed, or a problem too large for the skyline: offset passes.
    Plan best;
    best.arenaSize = -1;
    auto consider = [&](Plan&& candidate) {
        if (candidate.arenaSize >= 0 && (best.arenaSize < 0 || candidate.arenaSize < best.arenaSize))
            best = std::move(candidate);
    };
    consider(std::move(*greedy));

    const auto& buffers = problem.buffers;
    const auto degree = conflictDegree(problem);
    auto size = [&](int i) { return placedSize(problem, i); };
    auto length = [&](int i) { return Bytes(buffers[i].lifetime.end) - buffers[i].lifetime.start; };
    std::vector<std::vector<int>> orders;
    orders.push_back(orderBy(problem, [&](int i) { return std::make_pair(size(i), length(i)); }));
    orders.push_back(orderBy(problem, [&](int i) { return std::make_pair(double(size(i)) * double(length(i)), size(i)); }));
    orders.push_back(orderBy(problem, [&](int i) { return std::make_pair(length(i), size(i)); }));
    orders.push_back(orderBy(problem, [&](int i) { return std::make_pair(degree[i], size(i)); }));

    std::vector<int> bestOrder;
    Plan bestOrderPlan;
    bestOrderPlan.arenaSize = -1;
    auto plans = placeEach(index, orders, cancel);
    for (std::size_t k = 0; k < orders.size(); ++k) {
        auto& plan = plans[k];
        if (!plan)
            return plan.error();
        if (bestOrderPlan.arenaSize < 0 || plan->arenaSize < bestOrderPlan.arenaSize) {
            bestOrderPlan = *plan;
            bestOrder = orders[k];
        }
        consider(std::move(*plan));
    }

    // Local improvement: the buffers on the top of the arena go first next time; kept while the
    // arena does not grow (equal arenas move the search sideways).
    const int improveRounds = std::min<int>(kImproveRounds, static_cast<int>(kImproveWork / std::max<std::size_t>(1, buffers.size())));
    for (int round = 0; round < improveRounds && bestOrderPlan.arenaSize > 0; ++round) {
        const Bytes arena = bestOrderPlan.arenaSize;
        std::vector<int> next;
        for (const int i : bestOrder)
            if (bestOrderPlan.offsets[i] + size(i) == arena)
                next.push_back(i);
        if (next.empty() || next.size() == bestOrder.size())
            break;
        for (const int i : bestOrder)
            if (bestOrderPlan.offsets[i] + size(i) != arena)
                next.push_back(i);
        auto plan = placeInOrder(index, next, cancel);
        if (!plan)
            return plan.error();
        if (plan->arenaSize > arena)
            break;
        bestOrderPlan = *plan;
        bestOrder = std::move(next);
        consider(std::move(*plan));
    }

    if (skylineFits)
        for (const auto ranking : { SkylineRanking::LongestFirst, SkylineRanking::AreaFirst, SkylineRanking::LargestFirst }) {
            if (cancel.isCancelled())
                return cancelled().error();
            addRanking(instance, ranking);
            consider(planFromSkyline(problem, instance, skylineDive(instance, ranking).offsets));
        }
    return best;
}

} // namespace core
