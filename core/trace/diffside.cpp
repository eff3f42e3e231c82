// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "trace/diffside.h"

#include "graph/capture.h"
#include "planners/metrics.h"
#include "trace/tracereport.h"

#include <algorithm>
#include <cctype>
#include <fstream>

namespace core {

namespace {
void sortByBirth(std::vector<DiffAllocation>& allocations)
{
    std::stable_sort(allocations.begin(), allocations.end(), [](const DiffAllocation& x, const DiffAllocation& y) {
        return x.lifetime.start != y.lifetime.start ? x.lifetime.start < y.lifetime.start : x.buffer < y.buffer;
    });
}

Step firstPeak(const std::vector<Bytes>& curve)
{
    return curve.empty() ? 0 : Step(std::max_element(curve.begin(), curve.end()) - curve.begin());
}
} // namespace

DiffSide measuredSide(const MeasuredTrace& trace)
{
    DiffSide side;
    side.source = trace.source;
    side.measured = true;
    side.planner = "pytorch";
    side.device = trace.device;
    side.events = trace.eventCount;
    side.live = trace.allocated;
    side.held = trace.reserved;
    side.peakStep = firstPeak(side.live);
    side.peak = side.live.empty() ? 0 : side.live[std::size_t(side.peakStep)];
    side.heldPeak = trace.peakReserved();
    side.notes = trace.notes;
    side.allocations.reserve(trace.allocations.size());
    for (std::size_t i = 0; i < trace.allocations.size(); ++i) {
        const auto& a = trace.allocations[i];
        DiffAllocation d;
        d.lifetime = trace.problem.buffers[i].lifetime;
        d.size = a.size;
        d.site = trace.frameName(a.frame);
        // Without a frame an allocation has no key: size alone matches it.
        const bool framed = a.frame >= 0 && std::size_t(a.frame) < trace.frames.size();
        d.key = framed ? d.site : std::string();
        d.shortKey = framed ? trace.frames[std::size_t(a.frame)].name : std::string();
        d.buffer = int(i);
        side.allocations.push_back(std::move(d));
    }
    sortByBirth(side.allocations);
    return side;
}

Expected<DiffSide> plannedSide(const Workload& workload, const Planner& planner)
{
    if (workload.recorded)
        return makeError(ErrorCode::InvalidArgument, workload.source + ": a measured snapshot, not a model to plan");
    auto plan = planValidated(workload.problem, workload.source, planner);
    if (!plan)
        return plan.error();
    DiffSide side;
    side.source = workload.source;
    side.planner = plan->planner;
    side.live = liveBytesCurve(workload.problem);
    side.peakStep = firstPeak(side.live);
    side.peak = side.live.empty() ? 0 : side.live[std::size_t(side.peakStep)];
    side.heldPeak = plan->plan.arenaSize;
    side.held.assign(side.live.size(), side.heldPeak);
    for (const auto& region : workload.regions)
        side.outside += region.size;
    side.notes = workload.notes;
    const Graph* graph = workload.graph ? &*workload.graph : nullptr;
    const bool captured = graph && hasCategories(*graph);
    // The op that writes each tensor: a plan's site when the graph names no modules.
    std::vector<OpIndex> producer(graph ? graph->tensors.size() : 0, -1);
    if (graph)
        for (std::size_t o = 0; o < graph->ops.size(); ++o)
            for (const auto t : graph->ops[o].outputs)
                if (producer[std::size_t(t)] < 0)
                    producer[std::size_t(t)] = OpIndex(o);
    const auto& buffers = workload.problem.buffers;
    for (std::size_t i = 0; i < buffers.size(); ++i) {
        DiffAllocation d;
        d.lifetime = buffers[i].lifetime;
        d.size = buffers[i].size;
        d.key = d.shortKey = buffers[i].name;
        d.category = std::string(kindName(buffers[i].kind));
        d.site = d.category;
        d.buffer = int(i);
        const TensorIndex t = i < workload.bufferTensor.size() ? workload.bufferTensor[i] : -1;
        if (graph && t >= 0) {
            const auto& tensor = graph->tensors[std::size_t(t)];
            if (captured && !tensor.category.empty())
                d.category = tensor.category;
            if (captured)
                d.site = tensor.module.empty() ? "(top level)" : tensor.module;
            else if (producer[std::size_t(t)] >= 0)
                d.site = graph->ops[std::size_t(producer[std::size_t(t)])].type;
            else
                d.site = "graph input";
        } else if (graph && i < workload.bufferOp.size() && workload.bufferOp[i] >= 0) {
            d.site = graph->ops[std::size_t(workload.bufferOp[i])].type + " workspace";
        }
        side.allocations.push_back(std::move(d));
    }
    sortByBirth(side.allocations);
    return side;
}

bool isSnapshotFile(const std::string& spec)
{
    const auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        return s;
    };
    const auto name = lower(spec);
    if (name.ends_with(".pickle") || name.ends_with(".pkl") || name.ends_with(".pickle.gz"))
        return true;
    if (name.ends_with(".onnx") || name.ends_with(".json") || name.ends_with(".csv") || name.starts_with("example:"))
        return false;
    std::ifstream in(spec, std::ios::binary);
    unsigned char head[2] = { 0, 0 };
    in.read(reinterpret_cast<char*>(head), 2);
    return in.gcount() == 2 && ((head[0] == 0x80 && head[1] >= 2 && head[1] <= 5) || (head[0] == 0x1f && head[1] == 0x8b));
}

namespace {
Expected<DiffSide> loadSide(const std::string& spec, std::optional<int> device, const Planner& planner)
{
    if (isSnapshotFile(spec)) {
        auto snapshot = loadSnapshot(spec);
        if (!snapshot)
            return snapshot.error();
        auto trace = measureTrace(*snapshot, spec, device);
        if (!trace)
            return trace.error();
        return measuredSide(*trace);
    }
    auto workload = loadWorkload(spec, LoadOptions {});
    if (!workload)
        return workload.error();
    return plannedSide(*workload, planner);
}
} // namespace

Expected<DiffSide> loadDiffSide(const std::string& spec, std::optional<int> device, const Planner& planner)
{
    auto side = loadSide(spec, device, planner);
    if (!side && side.error().message.find(spec) == std::string::npos)
        return makeError(side.error().code, spec + ": " + side.error().message);
    return side;
}

} // namespace core
