// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "io/planjson.h"

#include "cost/opcost.h"
#include "graph/capture.h"
#include "io/breakdown.h"
#include "io/report.h"
#include "planners/metrics.h"

#include <nlohmann/json.hpp>

#include <set>

namespace core {

namespace {
using OrderedJson = nlohmann::ordered_json;

// Compact one-line JSON; invalid UTF-8 in names is replaced rather than thrown on.
std::string dump(const OrderedJson& value) { return value.dump(-1, ' ', false, OrderedJson::error_handler_t::replace); }

// Names of the graph tensors a region holds: tensors of that region that some op touches, version
// tokens left out (as makeProblem counts them).
OrderedJson regionTensors(const Workload& workload, const Region& region)
{
    auto names = OrderedJson::array();
    if (!workload.graph)
        return names;
    const auto& graph = *workload.graph;
    std::vector<bool> used(graph.tensors.size(), false);
    for (const auto& op : graph.ops)
        for (const auto* list : { &op.inputs, &op.outputs, &op.captured })
            for (auto t : *list)
                used[t] = true;
    for (std::size_t t = 0; t < graph.tensors.size(); ++t)
        if (used[t] && regionOf(graph.tensors[t]) == region.name && !isVersionToken(graph.tensors[t]))
            names.push_back(graph.tensors[t].name);
    return names;
}
// The fields of a captured training step (graph/capture.h): capture, phases, and with categories
// peak_breakdown and cost_unknown.
template <typename Field>
void capturedFields(const Workload& workload, Field& field)
{
    const auto& graph = *workload.graph;
    if (!graph.capture.empty())
        field("capture", OrderedJson(graph.capture));
    const auto phases = phaseRanges(graph, workload.schedule);
    if (!phases.empty()) {
        auto list = OrderedJson::array();
        for (const auto& p : phases)
            list.push_back(OrderedJson { { "name", p.name }, { "start", p.first }, { "end", p.last + 1 } });
        field("phases", list);
    }
    const Step peak = peakStep(workload.problem);
    if (!hasCategories(graph) || peak < 0)
        return;
    const auto b = peakBreakdown(workload, peak);
    OrderedJson breakdown;
    breakdown["step"] = peak;
    breakdown["op"] = b.op >= 0 ? OrderedJson(graph.ops[std::size_t(b.op)].name) : OrderedJson(nullptr);
    OrderedJson categories = OrderedJson::object();
    for (int k = 0; k < kBreakdownSlots; ++k)
        if (b.categories[std::size_t(k)] > 0)
            categories[std::string(breakdownSlotName(k))] = b.categories[std::size_t(k)];
    breakdown["categories"] = std::move(categories);
    auto modules = OrderedJson::array();
    for (std::size_t i = 0; i < b.modules.size() && i < kTopModules; ++i)
        modules.push_back(OrderedJson { { "module", b.modules[i].module }, { "bytes", b.modules[i].bytes } });
    breakdown["modules"] = std::move(modules);
    field("peak_breakdown", breakdown);
    const auto unknown = costUnknownOps(graph, workload.schedule);
    field("cost_unknown", OrderedJson { { "ops", unknown.ops }, { "types", unknown.types } });
}

// Buffer i of `problem` as the plan JSON lists it: its lifetime, size, offset under `plan`, tensors
// and, for an op's workspace, the op (bufferOp, graph may be null).
OrderedJson bufferJson(const PlanProblem& problem, const Plan& plan, std::size_t i, const std::vector<OpIndex>& bufferOp, const Graph* graph)
{
    const auto& buffer = problem.buffers[i];
    OrderedJson entry;
    entry["name"] = buffer.name;
    entry["kind"] = std::string(kindName(buffer.kind));
    entry["start"] = buffer.lifetime.start;
    entry["end"] = buffer.lifetime.end;
    entry["size_bytes"] = buffer.size;
    entry["offset"] = i < plan.offsets.size() ? OrderedJson(plan.offsets[i]) : OrderedJson(nullptr);
    entry["tensors"] = buffer.tensors;
    if (!buffer.tensorOffsets.empty())
        entry["tensor_offsets"] = buffer.tensorOffsets; // bytes into the buffer, per tensor (in-place Concat inputs)
    if (graph && i < bufferOp.size() && bufferOp[i] >= 0 && std::size_t(bufferOp[i]) < graph->ops.size())
        entry["op"] = graph->ops[std::size_t(bufferOp[i])].name; // an op's workspace
    return entry;
}

// The graphs of control-flow ops planned inside them (Workload::nested), each with its own buffers,
// offsets and regions, and the graphs nested in it under "subgraphs".
OrderedJson subgraphsJson(const std::vector<NestedPlan>& plans)
{
    auto list = OrderedJson::array();
    for (const auto& n : plans) {
        const auto& problem = n.built.problem;
        OrderedJson entry;
        entry["op"] = n.op;
        entry["op_type"] = n.type;
        entry["body"] = n.body;
        entry["step"] = n.step;
        entry["steps"] = problem.steps;
        entry["tensors"] = n.graph->tensors.size();
        entry["planner"] = n.plan.planner;
        entry["arena_bytes"] = n.plan.arenaSize;
        entry["lower_bound_bytes"] = lowerBound(problem);
        entry["reserved"] = n.decides;
        auto buffers = OrderedJson::array();
        for (std::size_t i = 0; i < problem.buffers.size(); ++i)
            buffers.push_back(bufferJson(problem, n.plan, i, n.built.bufferOp, n.graph.get()));
        entry["buffers"] = std::move(buffers);
        auto regions = OrderedJson::array();
        for (const auto& region : n.built.regions)
            regions.push_back(OrderedJson { { "name", region.name }, { "size_bytes", region.size }, { "tensor_count", region.tensorCount } });
        entry["regions"] = std::move(regions);
        if (!n.built.nested.empty())
            entry["subgraphs"] = subgraphsJson(n.built.nested);
        list.push_back(std::move(entry));
    }
    return list;
}
} // namespace

std::string exportPlanJson(const Workload& workload, const Plan& plan)
{
    const auto& problem = workload.problem;
    const Bytes lower = lowerBound(problem);

    // One buffer per line: readable, and a diff shows which buffer moved.
    std::string out = "{\n";
    auto field = [&](const char* name, const OrderedJson& value, bool last = false) {
        out += "  \"" + std::string(name) + "\": " + dump(value) + (last ? "\n" : ",\n");
    };
    field("model", workload.source);
    field("planner", plan.planner);
    field("alignment", problem.alignment);
    field("steps", problem.steps);
    field("arena_bytes", plan.arenaSize);
    field("lower_bound_bytes", lower);

    out += "  \"buffers\": [";
    for (std::size_t i = 0; i < problem.buffers.size(); ++i)
        out += (i ? ",\n    " : "\n    ") + dump(bufferJson(problem, plan, i, workload.bufferOp, workload.graph ? &*workload.graph : nullptr));
    out += problem.buffers.empty() ? "],\n" : "\n  ],\n";

    out += "  \"regions\": [";
    for (std::size_t i = 0; i < workload.regions.size(); ++i) {
        const auto& region = workload.regions[i];
        OrderedJson entry;
        entry["name"] = region.name;
        entry["size_bytes"] = region.size;
        entry["tensors"] = regionTensors(workload, region);
        out += (i ? ",\n    " : "\n    ") + dump(entry);
    }
    out += workload.regions.empty() ? "],\n" : "\n  ],\n";

    if (workload.graph)
        capturedFields(workload, field);
    if (!workload.nested.empty()) { // one graph per line
        const auto list = subgraphsJson(workload.nested);
        out += "  \"subgraphs\": [";
        for (std::size_t i = 0; i < list.size(); ++i)
            out += (i ? ",\n    " : "\n    ") + dump(list[i]);
        out += "\n  ],\n";
    }

    OrderedJson metrics;
    metrics["fragmentation"] = fragmentation(plan.arenaSize, lower);
    metrics["max_overlap_depth"] = maxOverlapDepth(problem);
    if (!plan.colors.empty())
        metrics["colors"] = std::set<int>(plan.colors.begin(), plan.colors.end()).size();
    metrics["planning_seconds"] = plan.seconds;
    field("metrics", metrics, true);
    out += "}\n";
    return out;
}

} // namespace core
