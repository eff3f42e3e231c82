// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/greedybybreadth.h"

#include "planners/gapfinder.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace core {

std::string_view GreedyByBreadthPlanner::description() const
{
    return "widest step first; its buffers largest first, each in the smallest fitting gap";
}

Expected<Plan> GreedyByBreadthPlanner::plan(const PlanProblem& problem, const CancelToken& cancel) const
{
    const auto n = problem.buffers.size();
    // Breadth is constant between consecutive lifetime boundaries: work on those segments, not raw steps.
    std::vector<Step> coords;
    for (const auto& b : problem.buffers) {
        coords.push_back(b.lifetime.start);
        coords.push_back(b.lifetime.end);
    }
    std::sort(coords.begin(), coords.end());
    coords.erase(std::unique(coords.begin(), coords.end()), coords.end());
    const auto segment = [&](Step s) {
        return static_cast<int>(std::lower_bound(coords.begin(), coords.end(), s) - coords.begin());
    };
    const int segments = std::max<int>(1, static_cast<int>(coords.size()));
    std::vector<Bytes> breadth(segments + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const auto& b = problem.buffers[i];
        if (b.lifetime.end <= b.lifetime.start)
            continue;
        breadth[segment(b.lifetime.start)] += b.size;
        breadth[segment(b.lifetime.end)] -= b.size;
    }
    std::partial_sum(breadth.begin(), breadth.end(), breadth.begin());

    // Rank of each segment when visited widest first (ties: earlier step first).
    std::vector<int> visit(segments), rank(segments);
    std::iota(visit.begin(), visit.end(), 0);
    std::stable_sort(visit.begin(), visit.end(), [&](int a, int b) { return breadth[a] > breadth[b]; });
    for (int r = 0; r < segments; ++r)
        rank[visit[r]] = r;

    // Sparse table of the best (lowest) rank over ranges of segments.
    std::vector<std::vector<int>> table { rank };
    for (int width = 2; width <= segments; width *= 2) {
        const auto& prev = table.back();
        std::vector<int> level(segments - width + 1);
        for (int i = 0; i + width <= segments; ++i)
            level[i] = std::min(prev[i], prev[i + width / 2]);
        table.push_back(std::move(level));
    }
    const auto bestRank = [&](int lo, int hi) { // over segments [lo, hi), hi > lo
        const int k = std::bit_width(static_cast<unsigned>(hi - lo)) - 1;
        return std::min(table[k][lo], table[k][hi - (1 << k)]);
    };

    std::vector<int> key(n, segments); // buffers with an empty lifetime come last
    for (std::size_t i = 0; i < n; ++i) {
        const auto& b = problem.buffers[i];
        if (b.lifetime.end > b.lifetime.start)
            key[i] = bestRank(segment(b.lifetime.start), segment(b.lifetime.end));
    }
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        if (key[a] != key[b])
            return key[a] < key[b];
        return problem.buffers[a].size > problem.buffers[b].size;
    });
    return placeInOrder(problem, order, cancel);
}

} // namespace core
