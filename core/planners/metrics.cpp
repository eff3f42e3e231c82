// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/metrics.h"

#include "util/format.h"

#include <algorithm>
#include <set>

namespace core {

Bytes alignUp(Bytes value, Bytes alignment)
{
    if (alignment <= 1)
        return value;
    return (value + alignment - 1) / alignment * alignment;
}

Status checkProblemSize(const PlanProblem& problem)
{
    Bytes total = 0;
    const Buffer* largest = nullptr;
    bool over = false;
    for (const auto& b : problem.buffers) {
        if (!largest || b.size > largest->size)
            largest = &b;
        const Bytes room = kMostProblemBytes - total;
        const Bytes aligned = b.size > room ? room + 1 : alignUp(b.size, problem.alignment);
        over = over || aligned > room || b.size < 0; // negative: a size that overflowed on its way here
        total = over ? kMostProblemBytes : total + aligned;
    }
    if (!over)
        return {};
    return makeError(ErrorCode::InvalidModel, "the buffers need more than 2^60 bytes (1 EiB) in all, beyond any memory; the largest, '"
        + largest->name + "', holds " + formatBytes(largest->size) + " (" + std::to_string(largest->size) + " bytes)");
}

namespace {
// Difference arrays: +x at start, -x at end; prefix sums give the per-step value. O(n + steps).
template <class Value, class Weight>
std::vector<Value> sweep(const PlanProblem& problem, Weight weight)
{
    std::vector<Value> delta(static_cast<std::size_t>(problem.steps) + 1, 0);
    for (const auto& b : problem.buffers) {
        const auto w = weight(b);
        if (w == 0 || b.lifetime.end <= b.lifetime.start)
            continue;
        delta[std::clamp<Step>(b.lifetime.start, 0, problem.steps)] += w;
        delta[std::clamp<Step>(b.lifetime.end, 0, problem.steps)] -= w;
    }
    std::vector<Value> curve(problem.steps, 0);
    Value running = 0;
    for (Step s = 0; s < problem.steps; ++s) {
        running += delta[s];
        curve[s] = running;
    }
    return curve;
}
} // namespace

std::vector<Bytes> liveBytesCurve(const PlanProblem& problem)
{
    return sweep<Bytes>(problem, [](const Buffer& b) { return b.size; });
}

Bytes lowerBound(const PlanProblem& problem)
{
    // The maximum of liveBytesCurve() from sorted lifetime ends instead of a per-step array:
    // O(n log n) whatever the step count (the public benchmark problems have ~200k steps).
    std::vector<std::pair<Step, Bytes>> events;
    events.reserve(2 * problem.buffers.size());
    for (const auto& b : problem.buffers) {
        const Step start = std::clamp<Step>(b.lifetime.start, 0, problem.steps);
        const Step end = std::clamp<Step>(b.lifetime.end, 0, problem.steps);
        if (b.size == 0 || end <= start)
            continue;
        events.emplace_back(start, b.size);
        events.emplace_back(end, -b.size);
    }
    std::sort(events.begin(), events.end()); // at one step, ends before starts (half-open lifetimes)
    Bytes live = 0, peak = 0;
    for (const auto& [step, delta] : events)
        peak = std::max(peak, live += delta);
    return peak;
}

int maxOverlapDepth(const PlanProblem& problem)
{
    const auto curve = sweep<int>(problem, [](const Buffer& b) { return b.size > 0 ? 1 : 0; });
    return curve.empty() ? 0 : *std::max_element(curve.begin(), curve.end());
}

Step peakStep(const PlanProblem& problem)
{
    const auto curve = liveBytesCurve(problem);
    if (curve.empty())
        return -1;
    return static_cast<Step>(std::max_element(curve.begin(), curve.end()) - curve.begin());
}

std::vector<int> liveAt(const PlanProblem& problem, Step step)
{
    std::vector<int> result;
    for (std::size_t i = 0; i < problem.buffers.size(); ++i) {
        const auto& life = problem.buffers[i].lifetime;
        if (life.start <= step && step < life.end)
            result.push_back(static_cast<int>(i));
    }
    std::stable_sort(result.begin(), result.end(),
        [&](int a, int b) { return problem.buffers[a].size > problem.buffers[b].size; });
    return result;
}

Bytes sumOfSizes(const PlanProblem& problem)
{
    Bytes total = 0;
    for (const auto& b : problem.buffers)
        total += b.size;
    return total;
}

double fragmentation(Bytes arena, Bytes lowerBound)
{
    return lowerBound > 0 ? static_cast<double>(arena) / static_cast<double>(lowerBound) - 1.0 : 0.0;
}

PlanMetrics computeMetrics(const PlanProblem& problem, const Plan& plan)
{
    PlanMetrics m;
    m.lowerBound = lowerBound(problem);
    m.arena = plan.arenaSize;
    m.fragmentation = fragmentation(plan.arenaSize, m.lowerBound);
    if (plan.colors.empty()) {
        m.colors = -1;
    } else {
        std::set<int> used(plan.colors.begin(), plan.colors.end());
        used.erase(-1);
        m.colors = static_cast<int>(used.size());
    }
    m.maxOverlapDepth = maxOverlapDepth(problem);
    m.peakStep = peakStep(problem);
    m.seconds = plan.seconds;
    return m;
}

} // namespace core
