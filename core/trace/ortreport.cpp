// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "trace/ortreport.h"

#include "planners/metrics.h"
#include "planners/validate.h"
#include "util/format.h"
#include "util/printable.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace core {

namespace {

constexpr const char* kFirstRunHint = " (--run 1 shows the first run, allocating tensor by tensor)";
using ojson = nlohmann::ordered_json;

std::string pad(std::string text, std::size_t width, bool right = true)
{
    if (text.size() < width)
        text = right ? std::string(width - text.size(), ' ') + text : text + std::string(width - text.size(), ' ');
    return text;
}

std::string ratio(std::int64_t a, std::int64_t b)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.2fx", double(a) / double(b));
    return text;
}

std::string signedBytes(std::int64_t bytes) { return (bytes < 0 ? "-" : bytes > 0 ? "+" : "") + formatBytes(std::llabs(bytes)); }

std::string microseconds(std::int64_t us) { return formatSeconds(double(us) / 1e6); }

// Names come from the profile and the model: escaped for the terminal; JSON replaces invalid UTF-8.
std::string dumpJson(const ojson& j) { return j.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n"; }

struct OpTypeTime {
    std::string type;
    int count = 0;
    std::int64_t us = 0;
};

// Kernel time per op type, most first.
std::vector<OpTypeTime> timeByOpType(const OrtProfile& profile)
{
    std::map<std::string, OpTypeTime> byType;
    for (const auto& node : profile.nodes) {
        auto& row = byType[node.opType];
        row.type = node.opType;
        ++row.count;
        row.us = std::min(row.us + node.durUs, kMostProblemBytes);
    }
    std::vector<OpTypeTime> rows;
    for (auto& [type, row] : byType)
        rows.push_back(row);
    std::stable_sort(rows.begin(), rows.end(), [](const OpTypeTime& a, const OpTypeTime& b) { return a.us > b.us; });
    return rows;
}

// The step the node at `index` ran, -1 when none.
Step stepOfNode(const OrtComparison& with, int index)
{
    if (!with.overlay)
        return -1;
    for (const auto& step : with.overlay->steps)
        if (step.node == index)
            return step.step;
    return -1;
}

std::string nodeLabel(const OrtProfile& profile, const OrtComparison& with, int index)
{
    const auto& node = profile.nodes[std::size_t(index)];
    std::string text = "after node '" + printable(node.name) + "' (" + printable(node.opType) + ")";
    if (with.overlay) {
        const auto step = stepOfNode(with, index);
        text += step >= 0 ? ", step " + std::to_string(step) : ", which maps to no step";
    }
    return text;
}

const Op& opAt(const OrtComparison& with, Step step) { return with.workload->graph->ops[std::size_t(with.overlay->steps[std::size_t(step)].op)]; }

// Unmapped nodes by op type: "Identity x39, ReorderInput x2".
std::string unmappedSummary(const OrtProfile& profile, const OrtOverlay& overlay)
{
    std::map<std::string, int> byType;
    for (const int n : overlay.unmappedNodes)
        ++byType[profile.nodes[std::size_t(n)].opType];
    std::string text;
    for (const auto& [type, count] : byType)
        text += (text.empty() ? "" : ", ") + printable(type) + " x" + std::to_string(count);
    return text;
}

ojson nodeJson(const OrtProfile& profile, const OrtComparison& with, int index)
{
    if (index < 0)
        return nullptr;
    const auto& node = profile.nodes[std::size_t(index)];
    ojson j { { "name", node.name }, { "op_type", node.opType }, { "node_index", node.nodeIndex } };
    if (with.overlay)
        j["step"] = stepOfNode(with, index);
    return j;
}
} // namespace

std::vector<std::string> ortProfileNotes(const OrtProfile& profile, const std::string& firstRunHint)
{
    auto notes = profile.notes;
    std::int64_t low = -1, high = -1;
    for (const auto& node : profile.nodes)
        if (node.inUse >= 0) {
            low = low < 0 ? node.inUse : std::min(low, node.inUse);
            high = std::max(high, node.inUse);
        }
    if (profile.nodes.size() > 2 && high > 0 && high - low <= high / 20)
        notes.push_back("bytes in use stay within 5 % over the run (" + formatBytes(low) + " to " + formatBytes(high)
            + "): ONNX Runtime allocated the run's memory at once, as its memory pattern does from the second run on"
            + (profile.pass > 0 ? firstRunHint : std::string()));
    return notes;
}

Expected<TraceReplan> planForProfile(const Workload& workload, const Planner& planner)
{
    return planValidated(workload.problem, workload.source, planner);
}

std::string formatOrtReport(const OrtProfile& profile, const OrtComparison& with, int top)
{
    std::string out = printable(profile.source) + ": ONNX Runtime profile, run " + std::to_string(profile.pass + 1) + " of "
        + std::to_string(profile.runs) + ", " + std::to_string(profile.nodes.size()) + " nodes\n";
    const auto line = [&](const std::string& label, const std::string& value) { out += "  " + pad(label, 20, false) + value + "\n"; };
    const auto peakLine = [&](const std::string& label, std::int64_t OrtNodeEvent::*field) {
        const int i = profile.peakIndex(field);
        line(label, i < 0 ? std::string("not recorded") : formatBytes(profile.nodes[std::size_t(i)].*field) + " " + nodeLabel(profile, with, i));
    };
    peakLine("peak in use", &OrtNodeEvent::inUse);
    peakLine("peak requested", &OrtNodeEvent::requestedInUse);
    peakLine("peak arena held", &OrtNodeEvent::arenaHeld);
    if (const auto mark = profile.peak(&OrtNodeEvent::inUsePeak); mark >= 0)
        line("in-use high water", formatBytes(mark) + " (ORT's own mark, inside kernels and earlier runs too)");
    line("kernel time", microseconds(profile.kernelUs()) + (profile.runUs >= 0 ? " (the run took " + microseconds(profile.runUs) + ")" : ""));
    if (profile.initUs >= 0)
        line("session init", microseconds(profile.initUs));

    if (with.overlay && with.workload && with.plan) {
        const auto& overlay = *with.overlay;
        const auto& plan = *with.plan;
        const auto steps = overlay.steps.size();
        out += "\n" + printable(with.workload->source) + ": " + std::to_string(steps) + " steps, planned by " + plan.planner + "\n";
        line("lower bound", formatBytes(plan.lowerBound) + " (the most bytes MemPlan's buffers hold at once)");
        line("planned arena", formatBytes(plan.plan.arenaSize) + " (" + plan.planner + ", validated)");
        if (plan.plan.arenaSize > 0) {
            for (const auto& [label, field] : { std::pair { "peak in use", &OrtNodeEvent::inUse }, std::pair { "peak arena held", &OrtNodeEvent::arenaHeld } })
                if (const auto bytes = profile.peak(field); bytes >= 0)
                    line("ORT " + std::string(label), ratio(bytes, plan.plan.arenaSize) + " the planned arena (" + signedBytes(bytes - plan.plan.arenaSize) + ")");
        }
        line("mapped", std::to_string(overlay.mapped) + " of " + std::to_string(steps) + " steps ran as an ORT node"
                + (overlay.fused ? " (" + std::to_string(overlay.fused) + " of them as a node ORT's optimizer made, named after the step's output or op)" : ""));
        line("unmapped ORT nodes", std::to_string(overlay.unmappedNodes.size())
                + (overlay.unmappedNodes.empty() ? "" : " (" + unmappedSummary(profile, overlay) + "): ORT made them, or MemPlan folded them at import"));
        std::string unrun;
        for (std::size_t i = 0; i < overlay.unrunSteps.size() && i < 5; ++i)
            unrun += (i ? ", " : "") + printable(opAt(with, overlay.unrunSteps[i]).name);
        line("steps not run", std::to_string(overlay.unrunSteps.size())
                + (unrun.empty() ? "" : " (fused away by ORT's optimizer: " + unrun + (overlay.unrunSteps.size() > 5 ? ", ..." : "") + ")"));
        if (!overlay.typeMismatches.empty())
            line("type mismatches", std::to_string(overlay.typeMismatches.size()) + " mapped steps ran as another op type on ORT (e.g. step "
                    + std::to_string(overlay.typeMismatches.front()) + ")");
        const auto gaps = overlay.largestGaps(top);
        if (!gaps.empty()) {
            out += "\nlargest gaps between ORT's bytes in use and MemPlan's live bytes, by step:\n";
            out += "  " + pad("step", 6) + "  " + pad("ORT in use", 11) + "  " + pad("MemPlan live", 12) + "  " + pad("gap", 11) + "  op\n";
            for (const auto s : gaps) {
                const auto& step = overlay.steps[std::size_t(s)];
                const auto& op = opAt(with, s);
                out += "  " + pad(std::to_string(s), 6) + "  " + pad(formatBytes(step.inUse), 11) + "  " + pad(formatBytes(step.liveBytes), 12) + "  "
                    + pad(signedBytes(step.inUse - step.liveBytes), 11) + "  " + printable(op.name) + " (" + printable(op.type) + ")\n";
            }
        }
    } else {
        const auto rows = timeByOpType(profile);
        out += "\nkernel time by op type:\n";
        for (std::size_t i = 0; i < rows.size() && (top <= 0 || i < std::size_t(top)); ++i)
            out += "  " + pad(microseconds(rows[i].us), 10) + "  " + pad(std::to_string(rows[i].count), 5) + " x " + printable(rows[i].type) + "\n";
    }
    const auto notes = ortProfileNotes(profile, kFirstRunHint);
    if (!notes.empty()) {
        out += "\nnotes:\n";
        for (const auto& note : notes)
            out += "  " + note + "\n";
    }
    return out;
}

std::string ortReportJson(const OrtProfile& profile, const OrtComparison& with, int top)
{
    ojson j;
    j["source"] = profile.source;
    j["format"] = "onnxruntime-profile";
    j["runs"] = profile.runs;
    j["run_used"] = profile.pass + 1;
    j["nodes"] = profile.nodes.size();
    j["has_memory"] = profile.hasMemory;
    for (const auto& [key, field] : { std::pair { "in_use", &OrtNodeEvent::inUse }, std::pair { "requested_in_use", &OrtNodeEvent::requestedInUse },
             std::pair { "arena_held", &OrtNodeEvent::arenaHeld } }) {
        j[std::string("peak_") + key + "_bytes"] = profile.peak(field);
        j[std::string("peak_") + key + "_node"] = nodeJson(profile, with, profile.peakIndex(field));
    }
    j["in_use_high_water_bytes"] = profile.peak(&OrtNodeEvent::inUsePeak);
    j["kernel_time_us"] = profile.kernelUs();
    j["run_time_us"] = profile.runUs;
    j["session_init_us"] = profile.initUs;
    auto& types = j["op_types"] = ojson::array();
    for (const auto& row : timeByOpType(profile))
        types.push_back({ { "op_type", row.type }, { "count", row.count }, { "kernel_time_us", row.us } });
    if (with.overlay && with.workload && with.plan) {
        const auto& overlay = *with.overlay;
        ojson m;
        m["source"] = with.workload->source;
        m["steps"] = overlay.steps.size();
        m["planner"] = with.plan->planner;
        m["lower_bound_bytes"] = with.plan->lowerBound;
        m["planned_arena_bytes"] = with.plan->plan.arenaSize;
        m["mapped_steps"] = overlay.mapped;
        m["fused_steps"] = overlay.fused;
        auto& unmapped = m["unmapped_nodes"] = ojson::array();
        for (const int n : overlay.unmappedNodes)
            unmapped.push_back(nodeJson(profile, {}, n));
        auto& unrun = m["unrun_steps"] = ojson::array();
        for (const auto s : overlay.unrunSteps)
            unrun.push_back({ { "step", s }, { "op", opAt(with, s).name }, { "op_type", opAt(with, s).type } });
        auto& gaps = m["largest_gaps"] = ojson::array();
        for (const auto s : overlay.largestGaps(top)) {
            const auto& step = overlay.steps[std::size_t(s)];
            gaps.push_back({ { "step", s }, { "op", opAt(with, s).name }, { "in_use_bytes", step.inUse }, { "live_bytes", step.liveBytes },
                { "gap_bytes", step.inUse - step.liveBytes } });
        }
        auto& steps = m["per_step"] = ojson::array();
        for (const auto& step : overlay.steps) {
            const auto& op = opAt(with, step.step);
            steps.push_back({ { "step", step.step }, { "op", op.name }, { "op_type", op.type },
                { "ort_node", step.node >= 0 ? ojson(profile.nodes[std::size_t(step.node)].name) : ojson(nullptr) },
                { "fused", step.fused }, { "kernel_time_us", step.kernelUs }, { "in_use_bytes", step.inUse }, { "requested_in_use_bytes", step.requestedInUse },
                { "arena_held_bytes", step.arenaHeld }, { "ort_output_bytes", step.ortOutputBytes },
                { "planned_output_bytes", step.plannedOutputBytes }, { "live_bytes", step.liveBytes } });
        }
        j["model"] = m;
    }
    j["notes"] = ortProfileNotes(profile, kFirstRunHint);
    return dumpJson(j);
}

} // namespace core
