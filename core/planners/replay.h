// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"
#include "util/cancel.h"
#include "util/expected.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <vector>

namespace core {

// Buffer indices by lifetime start; ties keep input order.
inline std::vector<int> orderByStart(const PlanProblem& problem)
{
    std::vector<int> order(problem.buffers.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
        [&](int a, int b) { return problem.buffers[a].lifetime.start < problem.buffers[b].lifetime.start; });
    return order;
}

// Replays the schedule for the online planners (first-fit, best-fit, coloring): buffers in order of
// start; before each, release(j) for every placed buffer j whose end <= its start, in order of end
// (ties: input order); then place(i). Returns Cancelled when the token fires.
template <class Release, class Place>
Status replayByStart(const PlanProblem& problem, const CancelToken& cancel, Release release, Place place)
{
    using Ending = std::pair<Step, int>; // (end, buffer): the smallest pair is released first
    std::priority_queue<Ending, std::vector<Ending>, std::greater<>> live;
    int counter = 0;
    for (const int i : orderByStart(problem)) {
        if ((++counter & 4095) == 0 && cancel.isCancelled())
            return makeError(ErrorCode::Cancelled, "planning cancelled");
        const auto& b = problem.buffers[i];
        while (!live.empty() && live.top().first <= b.lifetime.start) {
            release(live.top().second);
            live.pop();
        }
        place(i);
        live.emplace(b.lifetime.end, i);
    }
    return {};
}

} // namespace core
