// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "scenarios/multichipreport.h"

#include "util/format.h"

#include <cstdio>

namespace core {

namespace {
std::string printf1(const char* format, double value)
{
    char text[64];
    std::snprintf(text, sizeof text, format, value);
    return text;
}

const char* roleName(StageBufferRole role)
{
    switch (role) {
    case StageBufferRole::Received:
        return "received";
    case StageBufferRole::Sent:
        return "sent";
    case StageBufferRole::Local:
        break;
    }
    return "local";
}

const std::string& opName(const Graph& graph, const Schedule& schedule, Step step)
{
    return graph.ops[schedule.order[step]].name;
}

std::string linkText(const DeviceProfile& device)
{
    if (device.chipLinkBandwidth <= 0)
        return "host link " + printf1("%.0f GB/s", device.hostLinkBandwidth / 1e9) + " (the profile has no chip link)";
    return "chip link " + printf1("%.0f GB/s", device.chipLinkBandwidth / 1e9) + ", "
        + printf1("%.2g us", device.chipLinkLatency * 1e6) + " per transfer";
}
} // namespace

std::string formatDecimalBytes(Bytes bytes)
{
    const double value = static_cast<double>(bytes);
    if (value >= 1e9)
        return printf1(value >= 1e11 ? "%.0f GB" : value >= 1e10 ? "%.1f GB" : "%.2f GB", value / 1e9);
    if (value >= 1e6)
        return printf1(value >= 1e8 ? "%.0f MB" : value >= 1e7 ? "%.1f MB" : "%.2f MB", value / 1e6);
    if (value >= 1e3)
        return printf1("%.1f kB", value / 1e3);
    return std::to_string(bytes) + " B";
}

std::string formatMultiChipReport(const Graph& graph, const Schedule& schedule, const MultiChipPlan& plan)
{
    std::string out;
    const auto& device = plan.device;
    out += "chips            " + std::to_string(plan.chips()) + " x " + device.name + " ("
        + formatDecimalBytes(device.memoryCapacity) + " each) = " + formatDecimalBytes(plan.pooledCapacity())
        + " pooled (" + std::to_string(plan.pooledCapacity()) + " B)\n";
    if (plan.requestedChips)
        out += "chip count       as requested, load spread to even the fullest chip; fewest possible: "
            + std::to_string(plan.provenMinChips) + "\n";
    else if (plan.optimal && plan.chips() == 1)
        out += "chip count       the model fits one chip\n";
    else if (plan.optimal)
        out += "chip count       fewest that fit: no partition into " + std::to_string(plan.chips() - 1)
            + (plan.chips() == 2 ? " chip" : " chips") + " holds the weights and activations, whatever the planner\n";
    else
        out += "chip count       fewest the " + plan.planner + " arenas allow; no plan fits fewer than "
            + std::to_string(plan.provenMinChips) + "\n";
    out += "stage planner    " + plan.planner + ", alignment " + std::to_string(plan.alignment) + " B; " + linkText(device) + "\n";
    out += "                 sizes in MB = 10^6 B, as chip memory is quoted; in/out: transfers received/sent\n";
    char line[512];
    std::snprintf(line, sizeof line, "%-5s %-18s %9s %9s %9s %9s %7s %4s %4s %9s %9s  %s\n", "chip", "steps", "weights",
        "arena", "received", "used", "fill", "in", "out", "compute", "transfer", "first op .. last op");
    out += line;
    for (int i = 0; i < plan.chips(); ++i) {
        const auto& s = plan.stages[i];
        const std::string range = std::to_string(s.stage.begin) + "-" + std::to_string(s.stage.end - 1) + " ("
            + std::to_string(s.stage.end - s.stage.begin) + ")";
        std::snprintf(line, sizeof line, "%-5d %-18s %9s %9s %9s %9s %6.1f%% %4zu %4zu %9s %9s  %s .. %s\n", i,
            range.c_str(), formatDecimalBytes(s.stage.weightBytes).c_str(), formatDecimalBytes(s.arenaBytes()).c_str(),
            formatDecimalBytes(s.stage.receivedBytes).c_str(), formatDecimalBytes(s.usedBytes()).c_str(), s.fill() * 100,
            s.transfersIn.size(), s.transfersOut.size(),
            formatSeconds(s.computeSeconds).c_str(), formatSeconds(s.transferInSeconds).c_str(),
            opName(graph, schedule, s.stage.begin).c_str(), opName(graph, schedule, s.stage.end - 1).c_str());
        out += line;
    }
    int chipTransfers = 0;
    for (const auto& t : plan.transfers)
        chipTransfers += t.fromChip >= 0 && t.toChip >= 0;
    out += "chip to chip     " + std::to_string(chipTransfers) + " transfer" + (chipTransfers == 1 ? "" : "s") + ", "
        + formatDecimalBytes(plan.transferBytes()) + "\n";
    out += "weights held     " + formatDecimalBytes(plan.weightBytes()) + " over all chips (a weight two chips read is held by both)\n";
    out += "pipeline         latency " + formatSeconds(plan.latencySeconds()) + " per input; slowest chip "
        + formatSeconds(plan.bottleneckSeconds()) + ", so about "
        + printf1("%.0f", plan.throughputPerSecond()) + " inputs/s when pipelined (roofline estimate)\n";
    return out;
}

nlohmann::ordered_json multiChipJson(const Graph& graph, const Schedule& schedule, const MultiChipPlan& plan)
{
    nlohmann::ordered_json doc;
    doc["device"] = plan.device.name;
    doc["chips"] = plan.chips();
    doc["chip_capacity_bytes"] = plan.device.memoryCapacity;
    doc["pooled_capacity_bytes"] = plan.pooledCapacity();
    doc["proven_min_chips"] = plan.provenMinChips;
    doc["optimal"] = plan.optimal;
    doc["stage_planner"] = plan.planner;
    doc["stage_alignment"] = plan.alignment;
    doc["pipeline_latency_ms"] = plan.latencySeconds() * 1e3;
    doc["bottleneck_ms"] = plan.bottleneckSeconds() * 1e3;
    doc["throughput_per_s"] = plan.throughputPerSecond();
    doc["chip_link_gb_s"] = plan.device.chipLinkBandwidthOrHost() / 1e9;
    doc["chip_link_latency_us"] = plan.device.chipLinkLatency * 1e6;
    auto stages = nlohmann::ordered_json::array();
    for (int i = 0; i < plan.chips(); ++i) {
        const auto& s = plan.stages[i];
        nlohmann::ordered_json stage;
        stage["chip"] = i;
        stage["first_step"] = s.stage.begin;
        stage["end_step"] = s.stage.end;
        stage["first_op"] = opName(graph, schedule, s.stage.begin);
        stage["last_op"] = opName(graph, schedule, s.stage.end - 1);
        stage["ops"] = s.stage.end - s.stage.begin;
        stage["weights_bytes"] = s.stage.weightBytes;
        stage["weight_tensors"] = s.stage.weights.size();
        stage["arena_bytes"] = s.arenaBytes();
        stage["used_bytes"] = s.usedBytes();
        stage["capacity_bytes"] = s.capacity;
        stage["fill"] = s.fill();
        stage["received_bytes"] = s.stage.receivedBytes;
        stage["sent_bytes"] = s.stage.sentBytes;
        stage["compute_ms"] = s.computeSeconds * 1e3;
        stage["transfer_in_ms"] = s.transferInSeconds * 1e3;
        stage["transfers_in"] = s.transfersIn;
        stage["transfers_out"] = s.transfersOut;
        auto buffers = nlohmann::ordered_json::array();
        const auto& problem = s.stage.problem;
        for (std::size_t b = 0; b < problem.buffers.size(); ++b) {
            nlohmann::ordered_json buffer;
            buffer["name"] = problem.buffers[b].name;
            buffer["role"] = roleName(s.stage.roles[b]);
            buffer["start"] = problem.buffers[b].lifetime.start;
            buffer["end"] = problem.buffers[b].lifetime.end;
            buffer["size_bytes"] = problem.buffers[b].size;
            buffer["offset"] = s.plan.offsets[b];
            buffers.push_back(std::move(buffer));
        }
        stage["buffers"] = std::move(buffers);
        stages.push_back(std::move(stage));
    }
    doc["stages"] = std::move(stages);
    auto transfers = nlohmann::ordered_json::array();
    for (const auto& t : plan.transfers) {
        nlohmann::ordered_json transfer;
        transfer["tensor"] = t.name;
        transfer["bytes"] = t.bytes;
        transfer["from_chip"] = t.fromChip;
        transfer["to_chip"] = t.toChip;
        transfer["produced_at"] = t.producedAt;
        transfer["first_use"] = t.firstUse;
        transfer["ms"] = t.seconds * 1e3;
        transfers.push_back(std::move(transfer));
    }
    doc["transfers"] = std::move(transfers);
    return doc;
}

std::string addMultiChipToPlanJson(const std::string& planJson, const nlohmann::ordered_json& multiChip)
{
    // exportPlanJson writes one object ending in "}\n"; the fields go in before the closing brace.
    const auto close = planJson.rfind('}');
    if (close == std::string::npos)
        return planJson;
    auto head = planJson.substr(0, close);
    while (!head.empty() && (head.back() == '\n' || head.back() == ' '))
        head.pop_back();
    for (const auto& [key, value] : multiChip.items())
        head += ",\n  \"" + key + "\": " + value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    return head + "\n}\n";
}

} // namespace core
