// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "runreport.h"

#include "exec/executor.h"
#include "planners/metrics.h"
#include "util/format.h"

#include <cstdio>
#include <map>

namespace {

// Graph inputs whose given contents sized the plan (Tensor::values, Tensor::items): a run with
// other contents for them is refused.
std::vector<std::string> sizedByTheirContents(const core::Graph& g)
{
    std::vector<std::string> names;
    for (const auto t : g.inputs)
        if (const auto& tensor = g.tensors[std::size_t(t)]; !tensor.values.empty() || !tensor.items.empty())
            names.push_back(tensor.name);
    return names;
}

// Op workspace buffers of the problem: how many, and their planned bytes.
std::pair<int, core::Bytes> workspaceTotals(const core::Workload& w)
{
    int count = 0;
    core::Bytes bytes = 0;
    for (const auto& b : w.problem.buffers)
        if (b.kind == core::TensorKind::Workspace) {
            ++count;
            bytes += b.size;
        }
    return { count, bytes };
}

nlohmann::ordered_json latencyJson(const core::LatencyStats& l)
{
    return { { "median", l.median }, { "p50", l.p50 }, { "p99", l.p99 } };
}

// Measured time of the swap strategy's transfers: the SwapOut/SwapIn ops (host copies here).
double swapMs(const core::Measurement& m)
{
    double ms = 0;
    for (const auto& op : m.ops)
        if (op.type == "SwapOut" || op.type == "SwapIn")
            ms += op.medianMs;
    return ms;
}



} // namespace

nlohmann::ordered_json toJson(const RunResults& r)
{
    const auto& w = *r.workload;
    const auto& m = *r.arena;
    const auto& pt = *r.perTensor;
    nlohmann::ordered_json j;
    j["model"] = w.source;
    j["device"] = m.device;
    j["planner"] = r.plan->planner;
    j["outputs_match_reference"] = r.arenaMatch;
    j["passes_agree"] = m.passesAgree && pt.passesAgree;
    j["ops_real"] = m.opsReal;
    j["ops_synthetic"] = m.opsSynthetic;
    j["ops_runtime_shapes"] = m.opsRuntimeShaped;
    j["bounded_tensors"] = m.boundedTensors;
    j["bounded_bytes"] = m.boundedBytes;
    j["bounded_used_bytes"] = m.boundedUsedBytes;
    j["inputs_sized_by_contents"] = sizedByTheirContents(*w.graph);
    if (r.pool) {
        j["device_name"] = r.deviceName;
        j["ops_on_host"] = m.opsHost;
        j["ops_on_host_waited"] = m.opsHostWaited;
        j["ops_precomputed"] = m.opsPrecomputed;
        j["outputs_match_cpu"] = r.cpuMatch ? nlohmann::ordered_json(*r.cpuMatch) : nlohmann::ordered_json();
        j["cpu_comparison"] = r.cpuComparison;
        j["cpu_max_relative_error"] = r.cpuMaxRelativeError ? nlohmann::ordered_json(*r.cpuMaxRelativeError) : nlohmann::ordered_json();
    }
    if (m.device == "cpu") {
        j["kernels"] = std::string(core::cpuKernelsName(core::cpuKernels()));
        j["threads"] = m.threads;
        j["channels_last_tensors"] = m.channelsLastTensors;
        j["packed_weights_bytes"] = m.packedWeightsBytes;
        j["onednn_calls"] = m.onednnCalls;
        j["kernel_notes"] = m.kernelNotes;
    }
    j["predicted_arena_bytes"] = r.plan->arenaSize;
    j["lower_bound_bytes"] = core::lowerBound(w.problem);
    j["arena_bytes"] = m.arenaBytes;
    j["weights_bytes"] = m.weightsBytes;
    j["scratch_bytes"] = m.scratchBytes;
    const auto [workspaceCount, workspaceBytes] = workspaceTotals(w);
    j["workspace_buffers"] = workspaceCount;
    j["workspace_bytes"] = workspaceBytes;
    j["peak_bytes"] = m.peakBytes;
    j["peak_rss_bytes"] = m.peakRssBytes;
    j["repeat"] = r.repeat;
    j["latency_ms"] = latencyJson(m.latencyMs);
    j["cost_profile"] = r.costProfile;
    j["roofline_latency_ms"] = r.rooflineMs;
    j["predicted_step_bytes"] = core::liveBytesCurve(w.problem);
    j["step_bytes"] = m.stepBytes;
    j["step_peak_bytes"] = m.stepPeakBytes;
    nlohmann::ordered_json per;
    per["outputs_match_reference"] = r.perTensorMatch;
    // Each mode as the table's rows: activations at the peak step, and everything held (with weights and scratch).
    per["activation_peak_bytes"] = pt.stepPeakBytes;
    per["peak_bytes"] = pt.peakBytes;
    per["latency_ms"] = latencyJson(pt.latencyMs);
    per["step_bytes"] = pt.stepBytes;
    j["per_tensor"] = std::move(per);
    if (r.pool) {
        nlohmann::ordered_json pool;
        pool["outputs_match_reference"] = r.poolMatch;
        pool["activation_peak_bytes"] = r.pool->stepPeakBytes;
        pool["peak_bytes"] = r.pool->peakBytes;
        pool["latency_ms"] = latencyJson(r.pool->latencyMs);
        pool["step_bytes"] = r.pool->stepBytes;
        j["pool"] = std::move(pool);
    }
    if (!r.reports->empty()) {
        auto list = nlohmann::ordered_json::array();
        for (const auto& s : *r.reports)
            list.push_back({ { "name", s.name }, { "saved_bytes", s.savedBytes() }, { "swapped_bytes", s.swappedBytes },
                { "estimated_transfer_ms", s.transferSeconds * 1e3 }, { "estimated_extra_ms", s.extraSeconds * 1e3 } });
        j["strategies"] = std::move(list);
        j["measured_swap_ms"] = swapMs(m);
        j["outputs_match_original"] = r.originalMatch.value_or(false);
    }
    auto ops = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < m.ops.size(); ++i) {
        const auto& op = m.ops[i];
        nlohmann::ordered_json entry { { "name", op.name }, { "type", op.type }, { "kernel", op.real ? "real" : "synthetic" },
            { "median_ms", op.medianMs }, { "p99_ms", op.p99Ms },
            { "per_tensor_median_ms", i < pt.ops.size() ? pt.ops[i].medianMs : 0.0 } };
        if (!op.refusal.empty())
            entry["refusal"] = op.refusal;
        if (r.pool) {
            entry["pool_median_ms"] = i < r.pool->ops.size() ? r.pool->ops[i].medianMs : 0.0;
            entry["on"] = op.host ? "host" : op.precomputed ? "precomputed" : "device";
            if (op.host)
                entry["waited_for_device"] = op.hostWaited;
        }
        ops.push_back(std::move(entry));
    }
    j["ops"] = std::move(ops);
    return j;
}

void printTable(const RunResults& r)
{
    const auto& w = *r.workload;
    const auto& plan = *r.plan;
    const auto& m = *r.arena;
    const auto& pt = *r.perTensor;
    core::Bytes predictedWeights = 0;
    for (const auto& region : w.regions)
        predictedWeights += region.size;
    const auto bytes = [](core::Bytes b) { return core::formatBytes(b); };
    const auto* pool = r.pool;
    const auto row = [pool](const char* label, const std::string& predicted, const std::string& arena, const std::string& perTensor,
                         const std::string& pooled = "-") {
        std::printf("%-26s %14s %14s %14s", label, predicted.c_str(), arena.c_str(), perTensor.c_str());
        if (pool)
            std::printf(" %14s", pooled.c_str());
        std::printf("\n");
    };
    const auto ms = [](double v) {
        char text[32];
        std::snprintf(text, sizeof text, v < 1 ? "%.3f ms" : "%.2f ms", v); // a GPU's sub-millisecond times keep 3 digits
        return std::string(text);
    };
    std::printf("model       %s\ndevice      %s%s\nplanner     %s\n", w.source.c_str(), m.device.c_str(),
        r.deviceName.empty() ? "" : (" (" + r.deviceName + ")").c_str(), plan.planner.c_str());
    std::printf("ops         %d real, %d synthetic", m.opsReal, m.opsSynthetic);
    if (pool)
        std::printf(" (%d of them on the host: no device kernel, or run-time shapes; %d of those waited for the device, the others read "
                    "what host ops wrote; %d precomputed: constant inputs, computed once, copied in)",
            m.opsHost, m.opsHostWaited, m.opsPrecomputed);
    std::printf("\n");
    if (m.device == "cpu") {
        if (core::cpuKernels() == core::CpuKernels::Own)
            std::printf("kernels     own kernels (--kernels own), single-threaded\n");
        else
            std::printf("kernels     oneDNN ran %d kernel calls per pass (convolutions, matrix products, activations, arithmetic, "
                        "pooling), own kernels the rest; %d thread%s\n",
                m.onednnCalls, m.threads, m.threads == 1 ? "" : "s");
        if (m.channelsLastTensors > 0 || m.packedWeightsBytes > 0)
            std::printf("layout      %d activations stored N,H,W,C between convolutions; weights packed in oneDNN's layout: %s "
                        "(once per run, beside the model's weights, outside the plan)\n",
                m.channelsLastTensors, core::formatBytes(m.packedWeightsBytes).c_str());
        for (const auto& note : m.kernelNotes)
            std::printf("  %s\n", note.c_str());
    }
    std::string given;
    for (const auto& name : sizedByTheirContents(*w.graph))
        given += (given.empty() ? "'" : ", '") + name + "'";
    if (!given.empty())
        std::printf("given       the plan is sized for the contents given for %s (a run with other contents is refused)\n", given.c_str());
    if (m.boundedTensors > 0)
        std::printf("bounds      %d tensors sized by an upper bound: %s of bounds, the data filled %s "
                    "(%d ops on run-time shapes)\n",
            m.boundedTensors, bytes(m.boundedBytes).c_str(), bytes(m.boundedUsedBytes).c_str(), m.opsRuntimeShaped);
    if (w.workspaces) {
        const auto [count, total] = workspaceTotals(w);
        std::printf("workspaces  %d op workspace buffers, %s in all, planned with the activations (not kernel scratch)\n", count,
            bytes(total).c_str());
    }
    std::printf("\n");
    const auto poolValue = [&](auto f) { return pool ? f(*pool) : std::string("-"); };
    row("", "predicted", "arena run", "per-tensor run", "pool run");
    row("activation memory", bytes(plan.arenaSize), bytes(m.arenaBytes), bytes(pt.stepPeakBytes) + "*",
        poolValue([&](const core::Measurement& p) { return bytes(p.stepPeakBytes) + "*"; }));
    row("live activations, peak", bytes(core::lowerBound(w.problem)), bytes(m.stepPeakBytes), "-");
    row("weights + other", bytes(predictedWeights), bytes(m.weightsBytes), bytes(pt.weightsBytes),
        poolValue([&](const core::Measurement& p) { return bytes(p.weightsBytes); }));
    row("kernel scratch", "-", bytes(m.scratchBytes), bytes(pt.scratchBytes), poolValue([&](const core::Measurement& p) { return bytes(p.scratchBytes); }));
    row("peak (all of the above)", bytes(plan.arenaSize + predictedWeights), bytes(m.peakBytes), bytes(pt.peakBytes),
        poolValue([&](const core::Measurement& p) { return bytes(p.peakBytes); }));
    row("latency median", r.showRoofline ? ms(r.rooflineMs) + "+" : "-", ms(m.latencyMs.median), ms(pt.latencyMs.median),
        poolValue([&](const core::Measurement& p) { return ms(p.latencyMs.median); }));
    row("latency p50", "-", ms(m.latencyMs.p50), ms(pt.latencyMs.p50), poolValue([&](const core::Measurement& p) { return ms(p.latencyMs.p50); }));
    row("latency p99", "-", ms(m.latencyMs.p99), ms(pt.latencyMs.p99), poolValue([&](const core::Measurement& p) { return ms(p.latencyMs.p99); }));
    if (r.showRoofline && r.rooflineMs > 0)
        std::printf("+ roofline bound on the %s cost profile: each op at its peak FLOP/s or memory bandwidth, one after\n"
                    "  another (no launch overhead; swap copies apart); the arena run's median is %.1fx it\n",
            r.costProfile.c_str(), m.latencyMs.median / r.rooflineMs);
    if (pool)
        std::printf("* per-tensor: bytes held from cudaMalloc (requested sizes) at the peak step;\n"
                    "  pool: bytes in use in the pool (cudaMemPoolAttrUsedMemCurrent), the pool's rounding included\n");
    else {
        std::printf("%-26s %14s\n", "peak resident (RSS)", bytes(m.peakRssBytes).c_str());
        std::printf("* allocator peak: bytes malloc held above its level before the run (mallinfo2), chunk overhead included\n");
    }
    // Scratch the plan does not see, large next to what it does: the prediction falls short by it.
    if (!w.workspaces && m.scratchBytes > 0 && m.scratchBytes * 4 >= m.arenaBytes)
        std::printf("kernel scratch: the ops' temporary memory (%s, %.0f%% of the arena) is outside the plan and the\n"
                    "  predicted peak; --workspaces plans it as buffers with the activations\n",
            bytes(m.scratchBytes).c_str(), m.arenaBytes > 0 ? 100.0 * double(m.scratchBytes) / double(m.arenaBytes) : 0.0);
    double predictedTransfer = 0, predictedStall = 0;
    bool swapped = false;
    for (const auto& s : *r.reports)
        if (s.name == "swap") {
            predictedTransfer += s.transferSeconds * 1e3;
            predictedStall += s.extraSeconds * 1e3;
            swapped = s.swappedBytes > 0;
        }
    if (swapped)
        std::printf("swap transfers: estimated %.3f ms of copies (%.3f ms of it stalling compute) on the cost profile, "
                    "measured %.3f ms of %s\n",
            predictedTransfer, predictedStall, swapMs(m), pool ? "pinned-host copies on the copy stream" : "host copies");
    std::printf("\nrepeat %d; outputs vs no-reuse run: arena %s, per-tensor %s", r.repeat,
        r.arenaMatch ? "bit-identical" : "DIFFER", r.perTensorMatch ? "bit-identical" : "DIFFER");
    if (pool)
        std::printf(", pool %s", r.poolMatch ? "bit-identical" : "DIFFER");
    std::printf("\n");
    if (!m.passesAgree || !r.perTensor->passesAgree)
        std::printf("the %d passes DIFFER: a later pass computed other outputs than the first from the same inputs\n", r.repeat);
    if (pool)
        std::printf("outputs vs the CPU executor: %s\n", r.cpuComparison.c_str());
    if (r.originalMatch)
        std::printf("outputs vs the model without strategies: %s\n",
            *r.originalMatch ? "bit-identical" : "DIFFER");
    if (m.opsSynthetic > 0) {
        std::map<std::string, int> types;
        for (const auto& op : m.ops)
            if (!op.real)
                ++types[op.type];
        std::string list;
        for (const auto& [type, n] : types)
            list += (list.empty() ? "" : ", ") + type + " ×" + std::to_string(n);
        std::printf("synthetic kernels (no real kernel or unsupported configuration): %s\n", list.c_str());
        for (const auto& op : m.ops)
            if (!op.refusal.empty() && op.refusal.starts_with("op '")) // a refused index: the text names the op
                std::printf("  %s\n", op.refusal.c_str());
            else if (!op.refusal.empty())
                std::printf("  %s '%s' did not run its graph: %s\n", op.type.c_str(), op.name.c_str(), op.refusal.c_str());
    }
}
