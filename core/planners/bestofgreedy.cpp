// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/bestofgreedy.h"

#include "planners/exactsearch.h"
#include "planners/gapfinder.h"
#include "planners/skyline.h"

#include <algorithm>
#include <numeric>

namespace core {

namespace {
constexpr double kMaxDiveWork = 2e7; // buffers x sections above which skyline dives are skipped
constexpr int kImproveRounds = 24;     // at most; fewer on large problems (see improveRounds)
constexpr double kImproveWork = 4e5;  // buffers x rounds: keeps 100k-buffer problems to ~8 passes
constexpr double kSearchSlack[] = { 1.10, 1.06, 1.03, 1.0 }; // capacities tried, times the lower bound
constexpr int kSearchNodesPerBuffer = 2;

Status cancelled() { return makeError(ErrorCode::Cancelled, "planning cancelled"); }

// One offset-calculation pass in `order`; -1 arena when cancelled.
Plan offsetPass(const PlanProblem& problem, const std::vector<int>& order, const CancelToken& cancel)
{
    GapFinder finder(problem);
    int counter = 0;
    for (const int i : order) {
        if ((++counter & 1023) == 0 && cancel.isCancelled()) {
            Plan none;
            none.arenaSize = -1;
            return none;
        }
        finder.place(i, finder.bestOffset(i));
    }
    Plan plan;
    plan.offsets = finder.offsets();
    plan.arenaSize = finder.arenaSize();
    return plan;
}

// Number of other buffers each buffer's lifetime conflicts with. O(n log n).
std::vector<int> conflictDegree(const PlanProblem& problem)
{
    std::vector<Step> starts, ends;
    for (const auto& b : problem.buffers) {
        starts.push_back(b.lifetime.start);
        ends.push_back(b.lifetime.end);
    }
    std::sort(starts.begin(), starts.end());
    std::sort(ends.begin(), ends.end());
    std::vector<int> degree;
    for (const auto& b : problem.buffers) {
        const auto endedBefore = std::upper_bound(ends.begin(), ends.end(), b.lifetime.start) - ends.begin();
        const auto startedAfter = starts.end() - std::lower_bound(starts.begin(), starts.end(), b.lifetime.end);
        degree.push_back(static_cast<int>(problem.buffers.size() - endedBefore - startedAfter));
    }
    return degree;
}

std::vector<int> orderBy(const PlanProblem& problem, auto key)
{
    std::vector<int> order(problem.buffers.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) > key(b); });
    return order;
}
} // namespace

std::string_view BestOfGreedyPlanner::description() const
{
    return "fast heuristic: best of skyline and offset passes in several orders, then local improvement";
}

Expected<Plan> BestOfGreedyPlanner::plan(const PlanProblem& problem, const CancelToken& cancel) const
{
    return bestOfGreedyPlan(problem, cancel);
}

Expected<Plan> bestOfGreedyPlan(const PlanProblem& problem, const CancelToken& cancel)
{
    Plan best;
    best.arenaSize = -1;
    auto consider = [&](Plan&& candidate) {
        if (candidate.arenaSize >= 0 && (best.arenaSize < 0 || candidate.arenaSize < best.arenaSize))
            best = std::move(candidate);
    };

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
    for (const auto& order : orders) {
        auto plan = offsetPass(problem, order, cancel);
        if (plan.arenaSize < 0)
            return cancelled().error();
        if (bestOrderPlan.arenaSize < 0 || plan.arenaSize < bestOrderPlan.arenaSize) {
            bestOrderPlan = plan;
            bestOrder = order;
        }
        consider(std::move(plan));
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
        auto plan = offsetPass(problem, next, cancel);
        if (plan.arenaSize < 0)
            return cancelled().error();
        if (plan.arenaSize > arena)
            break;
        bestOrderPlan = plan;
        bestOrder = std::move(next);
        consider(std::move(plan));
    }

    const auto instance = makeSkylineInstance(problem);
    if (double(instance.count()) * double(instance.sections) <= kMaxDiveWork) {
        for (const auto ranking : { SkylineRanking::LongestFirst, SkylineRanking::AreaFirst, SkylineRanking::LargestFirst }) {
            if (cancel.isCancelled())
                return cancelled().error();
            consider(planFromSkyline(problem, instance, skylineDive(instance, ranking).offsets));
        }
        // Short bounded searches: with a few percent of slack over the lower bound the exact search
        // usually packs on its first dive, where the plain dives above lose 15-30 %.
        CapacitySearch search(instance, cancel, {});
        const auto farFuture = CapacitySearch::Clock::now() + std::chrono::hours(1);
        Bytes total = 0;
        for (const Bytes size : instance.size)
            total += size;
        for (int r = 0; r < kSkylineRankings; ++r) {
            const auto outcome = search.run(total, farFuture, instance.rank[r], kSearchNodesPerBuffer * instance.count());
            if (search.cancelled())
                return cancelled().error();
            if (outcome == CapacitySearch::Outcome::Found)
                consider(planFromSkyline(problem, instance, search.solution()));
        }
        for (const double slack : kSearchSlack) {
            const Bytes target = static_cast<Bytes>(double(instance.lowerBound) * slack) / instance.granularity * instance.granularity;
            if (target >= best.arenaSize || target < instance.lowerBound)
                continue;
            bool found = false;
            for (int r = 0; r < 3 && !found; ++r) {
                const auto outcome = search.run(target, farFuture, instance.rank[r], kSearchNodesPerBuffer * instance.count());
                if (search.cancelled())
                    return cancelled().error();
                if (outcome == CapacitySearch::Outcome::Found) {
                    consider(planFromSkyline(problem, instance, search.solution()));
                    found = true;
                }
            }
            if (!found)
                break;
        }
    }
    return best;
}

} // namespace core
