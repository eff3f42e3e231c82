// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "io/breakdown.h"

#include <algorithm>
#include <map>

namespace core {

namespace {
int slotOf(const Tensor& t)
{
    const auto category = tensorCategory(t);
    return category ? static_cast<int>(*category) : kOtherSlot;
}

// The slot and module of arena buffer `b`: its tensor's, or for a workspace "other" and its op's module.
std::pair<int, const std::string*> bufferOwner(const Workload& workload, std::size_t b)
{
    static const std::string kNone;
    if (!workload.graph)
        return { kOtherSlot, &kNone };
    const auto& graph = *workload.graph;
    if (b < workload.bufferTensor.size() && workload.bufferTensor[b] >= 0) {
        const auto& t = graph.tensors[std::size_t(workload.bufferTensor[b])];
        return { slotOf(t), &t.module };
    }
    if (b < workload.bufferOp.size() && workload.bufferOp[b] >= 0)
        return { kOtherSlot, &graph.ops[std::size_t(workload.bufferOp[b])].module };
    return { kOtherSlot, &kNone };
}

// Calls add(slot, module, bytes) for every tensor in a region, as makeProblem counts them.
template <typename Add>
void forEachRegionTensor(const Workload& workload, Add add)
{
    if (!workload.graph)
        return;
    const auto& graph = *workload.graph;
    const auto lifetimes = computeLifetimes(graph, workload.schedule);
    for (std::size_t t = 0; t < graph.tensors.size(); ++t) {
        const auto& tensor = graph.tensors[t];
        if (lifetimes[t].end > lifetimes[t].start && !regionOf(tensor).empty() && tensor.size > 0)
            add(slotOf(tensor), tensor.module, tensor.size);
    }
}
} // namespace

std::string_view breakdownSlotName(int slot)
{
    return slot >= 0 && slot < kCategoryCount ? categoryName(static_cast<TensorCategory>(slot)) : std::string_view("other");
}

Bytes PeakBreakdown::total() const
{
    Bytes sum = 0;
    for (auto b : categories)
        sum += b;
    return sum;
}

PeakBreakdown peakBreakdown(const Workload& workload, Step step)
{
    PeakBreakdown result;
    result.step = step;
    if (workload.graph && step >= 0 && step < workload.schedule.steps())
        result.op = workload.schedule.order[std::size_t(step)];
    std::map<std::string, Bytes> modules;
    const auto add = [&](int slot, const std::string& module, Bytes bytes) {
        result.categories[std::size_t(slot)] += bytes;
        modules[module] += bytes;
    };
    const auto& buffers = workload.problem.buffers;
    for (std::size_t b = 0; b < buffers.size(); ++b)
        if (buffers[b].lifetime.start <= step && step < buffers[b].lifetime.end) {
            const auto [slot, module] = bufferOwner(workload, b);
            add(slot, *module, buffers[b].size);
        }
    forEachRegionTensor(workload, add);
    for (auto& [module, bytes] : modules)
        if (bytes > 0)
            result.modules.push_back(ModuleBytes { module, bytes });
    std::stable_sort(result.modules.begin(), result.modules.end(), [](const ModuleBytes& a, const ModuleBytes& b) { return a.bytes > b.bytes; });
    return result;
}

std::vector<CategoryBytes> categoryCurve(const Workload& workload)
{
    const Step steps = std::max<Step>(workload.problem.steps, 0);
    std::vector<CategoryBytes> delta(std::size_t(steps) + 1, CategoryBytes {});
    const auto& buffers = workload.problem.buffers;
    for (std::size_t b = 0; b < buffers.size(); ++b) {
        const auto slot = std::size_t(bufferOwner(workload, b).first);
        const auto start = std::clamp<Step>(buffers[b].lifetime.start, 0, steps), end = std::clamp<Step>(buffers[b].lifetime.end, 0, steps);
        delta[std::size_t(start)][slot] += buffers[b].size;
        delta[std::size_t(end)][slot] -= buffers[b].size;
    }
    CategoryBytes regions {};
    forEachRegionTensor(workload, [&](int slot, const std::string&, Bytes bytes) { regions[std::size_t(slot)] += bytes; });
    std::vector<CategoryBytes> curve(static_cast<std::size_t>(steps));
    CategoryBytes live {};
    for (Step s = 0; s < steps; ++s)
        for (std::size_t k = 0; k < live.size(); ++k) {
            live[k] += delta[std::size_t(s)][k];
            curve[std::size_t(s)][k] = live[k] + regions[k];
        }
    return curve;
}

std::vector<PhaseRange> phaseRanges(const Graph& graph, const Schedule& schedule)
{
    std::vector<PhaseRange> result;
    for (int p = 0; p < kPhaseCount; ++p) {
        const auto name = phaseName(static_cast<Phase>(p));
        PhaseRange range { std::string(name), -1, -1 };
        for (Step s = 0; s < schedule.steps(); ++s)
            if (graph.ops[std::size_t(schedule.order[std::size_t(s)])].phase == name) {
                range.first = range.first < 0 ? s : range.first;
                range.last = s;
            }
        if (range.first >= 0)
            result.push_back(std::move(range));
    }
    return result;
}

} // namespace core
