// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "io/report.h"

#include "cost/opcost.h"
#include "io/breakdown.h"
#include "planners/metrics.h"
#include "util/format.h"
#include "util/printable.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace core {

namespace {
std::string printf(const char* format, auto... args)
{
    char line[512];
    std::snprintf(line, sizeof line, format, args...);
    return line;
}

std::string withBytes(Bytes bytes)
{
    return bytes < 1024 ? formatBytes(bytes) : formatBytes(bytes) + " (" + std::to_string(bytes) + " B)";
}

struct WorkspaceTotals {
    int count = 0;
    Bytes bytes = 0, largest = 0;
};

WorkspaceTotals workspaceTotals(const PlanProblem& problem)
{
    WorkspaceTotals w;
    for (const auto& b : problem.buffers)
        if (b.kind == TensorKind::Workspace) {
            ++w.count;
            w.bytes += b.size;
            w.largest = std::max(w.largest, b.size);
        }
    return w;
}

// " (uint8 1x96x112x112)": the element type and shape of a buffer's tensor, ? for an unknown
// dimension; "" for a buffer without one (allocation problems, op workspaces).
std::string typeSuffix(const Workload& workload, std::size_t buffer)
{
    if (!workload.graph || buffer >= workload.bufferTensor.size() || workload.bufferTensor[buffer] < 0)
        return {};
    return " (" + tensorTypeText(workload.graph->tensors[std::size_t(workload.bufferTensor[buffer])]) + ")";
}
// One line per graph of a control-flow op planned inside it, the graphs nested in it indented below.
void nestedLines(std::string& text, const std::vector<NestedPlan>& plans, int depth)
{
    for (const auto& n : plans) {
        Bytes weights = 0;
        int weightTensors = 0;
        for (const auto& region : n.built.regions) {
            weights += region.size;
            weightTensors += region.tensorCount;
        }
        const bool branches = n.type == "If";
        text += printf("  %*s%s '%s' %s (step %d): %d steps, %zu tensors, arena %s", 2 * depth, "", printable(n.type).c_str(),
                    printable(n.op).c_str(), n.body.c_str(), n.step, n.built.problem.steps, n.graph->tensors.size(),
                    withBytes(n.plan.arenaSize).c_str())
            + (weightTensors > 0 ? ", weights " + formatBytes(weights) + " in " + std::to_string(weightTensors) + " tensors" : std::string())
            + (n.decides && n.plan.arenaSize > 0
                    ? std::string(branches ? "; the larger branch: decides the If's reservation" : "; reserved at the op's step")
                    : std::string())
            + "\n";
        nestedLines(text, n.built.nested, depth + 1);
    }
}

int countNested(const std::vector<NestedPlan>& plans)
{
    int count = 0;
    for (const auto& n : plans)
        count += 1 + countNested(n.built.nested);
    return count;
}

std::string percentOf(Bytes part, Bytes whole) { return printf("%5.1f %%", whole > 0 ? 100.0 * double(part) / double(whole) : 0.0); }
} // namespace

std::string capturedSummary(const Workload& workload, Step peak)
{
    if (!workload.graph)
        return {};
    const auto& graph = *workload.graph;
    std::string text;
    if (!graph.capture.empty()) {
        std::string line;
        for (const auto& [key, value] : graph.capture)
            line += (line.empty() ? "" : ", ") + key + "=" + value;
        text += printf("%-16s ", "captured from") + printable(line) + "\n";
    }
    const auto phases = phaseRanges(graph, workload.schedule);
    if (!phases.empty()) {
        std::string line;
        for (const auto& p : phases)
            line += (line.empty() ? p.name + " steps " : ", " + p.name + " ") + std::to_string(p.first) + "-" + std::to_string(p.last);
        text += printf("%-16s %s\n", "phases", line.c_str());
    }
    if (!hasCategories(graph))
        return text;
    const auto unknown = costUnknownOps(graph, workload.schedule);
    if (unknown.ops > 0) {
        std::string types;
        for (const auto& t : unknown.types)
            types += (types.empty() ? "" : ", ") + t;
        text += printf("%-16s %d of %d ops (%s): no FLOPs in the capture, counted as 0\n", "cost unknown", unknown.ops,
            workload.schedule.steps(), printable(types).c_str());
    }
    if (peak < 0)
        return text;
    const auto b = peakBreakdown(workload, peak);
    const auto total = b.total();
    std::string op;
    if (b.op >= 0)
        op = ", op '" + printable(graph.ops[std::size_t(b.op)].name) + "'";
    text += printf("at the peak (step %d%s): %s held, by category:\n", peak, op.c_str(), withBytes(total).c_str());
    std::vector<int> slots;
    for (int k = 0; k < kBreakdownSlots; ++k)
        if (b.categories[std::size_t(k)] > 0)
            slots.push_back(k);
    std::stable_sort(slots.begin(), slots.end(), [&](int x, int y) { return b.categories[std::size_t(x)] > b.categories[std::size_t(y)]; });
    for (auto k : slots)
        text += printf("  %-22s %10s  %s\n", std::string(breakdownSlotName(k)).c_str(), formatBytes(b.categories[std::size_t(k)]).c_str(),
            percentOf(b.categories[std::size_t(k)], total).c_str());
    text += printf("at the peak, by module (top %d of %zu):\n", int(std::min<std::size_t>(kTopModules, b.modules.size())), b.modules.size());
    int width = 22; // module paths line up however long they are (encoder.layers.encoder_layer_11.mlp.0)
    for (std::size_t i = 0; i < b.modules.size() && i < kTopModules; ++i)
        width = std::max(width, int(printable(b.modules[i].module).size()));
    for (std::size_t i = 0; i < b.modules.size() && i < kTopModules; ++i) {
        const auto& m = b.modules[i];
        text += printf("  %-*s %10s  %s\n", width, m.module.empty() ? "(top level)" : printable(m.module).c_str(), formatBytes(m.bytes).c_str(),
            percentOf(m.bytes, total).c_str());
    }
    return text;
}

std::string formatReport(const Workload& workload, const Plan& plan, int topAtPeak)
{
    const auto& problem = workload.problem;
    const auto m = computeMetrics(problem, plan);
    std::string text;
    text += printf("%-16s %s\n", "model", printable(workload.source).c_str());
    text += printf("%-16s %s\n", "planner", plan.planner.c_str());
    if (workload.graph)
        text += printf("%-16s %zu (%zu ops)\n", "tensors", workload.graph->tensors.size(), workload.graph->ops.size());
    text += printf("%-16s %zu\n", "buffers", problem.buffers.size());
    text += printf("%-16s %d\n", "steps", problem.steps);
    text += printf("%-16s %lld B\n", "alignment", static_cast<long long>(problem.alignment));
    text += printf("%-16s %s\n", "lower bound", withBytes(m.lowerBound).c_str());
    text += printf("%-16s %s\n", "arena", withBytes(m.arena).c_str());
    text += printf("%-16s %.2f %%\n", "fragmentation", 100.0 * m.fragmentation);
    if (m.colors >= 0)
        text += printf("%-16s %d (max overlap depth %d)\n", "colors", m.colors, m.maxOverlapDepth);
    else
        text += printf("%-16s %d buffers live at once at most\n", "overlap depth", m.maxOverlapDepth);
    text += printf("%-16s %s\n", "planning time", formatSeconds(plan.seconds).c_str());
    if (plan.provenOptimal)
        text += printf("%-16s proven optimal\n", "search");
    else if (plan.provenLowerBound > 0)
        text += printf("%-16s best found; proven lower bound %s\n", "search", withBytes(plan.provenLowerBound).c_str());
    if (!plan.details.empty())
        text += printf("%-16s %s\n", "", plan.details.c_str());
    if (workload.workspaces) {
        const auto w = workspaceTotals(problem);
        text += printf("%-16s %d op workspace buffers, %s in all, largest %s (planned in the arena)\n", "workspaces", w.count,
            formatBytes(w.bytes).c_str(), formatBytes(w.largest).c_str());
    }
    // A control-flow op's graphs hold weights of their own (an If's branches both load, as a runtime
    // loads every initializer): counted beside the outer graph's, so the line is the model's total.
    std::map<std::string, std::pair<Bytes, int>> inBodies;
    for (const auto& region : nestedRegions(workload.nested))
        inBodies[region.name] = { region.size, region.tensorCount };
    auto regionLine = [&](const std::string& name, Bytes size, int tensors) {
        const auto body = inBodies.find(name);
        if (body == inBodies.end() || body->second.second == 0) {
            text += printf("%-16s %s in %d tensors (outside the arena)\n", printable(name).c_str(), formatBytes(size).c_str(), tensors);
            return;
        }
        if (tensors == 0)
            text += printf("%-16s %s in %d tensors (outside the arena), all in control-flow graphs\n", printable(name).c_str(),
                formatBytes(body->second.first).c_str(), body->second.second);
        else
            text += printf("%-16s %s in %d tensors (outside the arena): %s in %d tensors of the graph, %s in %d of control-flow graphs\n",
                printable(name).c_str(), formatBytes(size + body->second.first).c_str(), tensors + body->second.second,
                formatBytes(size).c_str(), tensors, formatBytes(body->second.first).c_str(), body->second.second);
        inBodies.erase(body);
    };
    for (const auto& region : workload.regions)
        regionLine(region.name, region.size, region.tensorCount);
    for (const auto& [name, total] : std::map(inBodies))
        regionLine(name, 0, 0);
    if (!workload.nested.empty()) {
        std::set<std::string> ops;
        for (const auto& n : workload.nested)
            ops.insert(n.op);
        text += printf("%-16s %d graphs of %zu control-flow ops planned inside them; the arenas they reserve ('<op> body' buffers) are in the arena:\n",
            "subgraphs", countNested(workload.nested), ops.size());
        nestedLines(text, workload.nested, 0);
    }
    for (const auto& note : workload.notes)
        text += "note: " + printable(note) + "\n";
    if (const auto& recorded = workload.recorded) { // a memory snapshot: what the allocator did with the same allocations
        Bytes reserved = 0;
        for (const Bytes r : recorded->reserved)
            reserved = std::max(reserved, r);
        text += printf("%-16s %s: reserved peak %s, address span %s (segments stacked)\n", "recorded by", recorded->allocator.c_str(),
            formatBytes(reserved).c_str(), formatBytes(recorded->plan.arenaSize).c_str());
    }
    text += capturedSummary(workload, m.peakStep);
    if (m.peakStep >= 0) {
        const auto live = liveAt(problem, m.peakStep);
        std::string op;
        if (workload.graph && m.peakStep < workload.schedule.steps()) {
            const auto& o = workload.graph->ops[workload.schedule.order[m.peakStep]];
            op = " (op '" + printable(o.name) + "', " + printable(o.type) + ")";
        }
        text += printf("peak at step %d%s: %zu buffers live; largest:\n", m.peakStep, op.c_str(), live.size());
        for (std::size_t k = 0; k < live.size() && k < static_cast<std::size_t>(topAtPeak); ++k) {
            const auto& b = problem.buffers[live[k]];
            text += printf("  %10s  [%d, %d)  offset %lld  %s", formatBytes(b.size).c_str(), b.lifetime.start,
                b.lifetime.end, static_cast<long long>(plan.offsets[live[k]]), printable(b.name).c_str())
                + typeSuffix(workload, live[k]) + "\n";
        }
    }
    return text;
}

std::string formatComparison(const Workload& workload, const std::vector<Plan>& plans)
{
    const Bytes bound = lowerBound(workload.problem);
    std::string text = printf("%s: %zu buffers, %d steps, lower bound %s\n", printable(workload.source).c_str(),
        workload.problem.buffers.size(), workload.problem.steps, withBytes(bound).c_str());
    if (workload.workspaces) {
        const auto w = workspaceTotals(workload.problem);
        text += printf("  of them %d op workspace buffers, %s in all\n", w.count, formatBytes(w.bytes).c_str());
    }
    text += printf("%-18s %14s %16s %8s %7s %10s\n", "planner", "arena", "arena bytes", "ratio", "colors", "time");
    for (const auto& plan : plans) {
        const auto m = computeMetrics(workload.problem, plan);
        const double ratio = bound > 0 ? static_cast<double>(plan.arenaSize) / static_cast<double>(bound) : 1.0;
        text += printf("%-18s %14s %16lld %8.3f %7s %10s\n", plan.planner.c_str(), formatBytes(plan.arenaSize).c_str(),
            static_cast<long long>(plan.arenaSize), ratio, m.colors >= 0 ? std::to_string(m.colors).c_str() : "-",
            formatSeconds(plan.seconds).c_str());
    }
    return text;
}

} // namespace core
