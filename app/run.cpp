// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "run.h"

#include "cliargs.h"
#include "strategycli.h"

#include "cost/opcost.h"
#include "exec/executor.h"
#include "exec/tolerance.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "util/format.h"

#ifdef MEMPLAN_HAVE_CUDA
#include "cudaexecutor.h"
#endif

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <fstream>
#include <iostream>

namespace {

constexpr int kOk = 0, kError = 1, kUsage = 2;

const char* const kRunHelp = R"(usage: memplan run MODEL [--device cpu|cuda] [--planner NAME] [--repeat N] [--json FILE]
                    [--input NAME=FILE.pb]... [--save-outputs DIR] [--seed N]
                    [--fuse] [--reorder] [--recompute] [--swap] [--inplace] [--budget SIZE] [--profile NAME|FILE]
                    [options]

Applies the strategies given, then runs MODEL three times on the CPU executor (--device cuda: on
the GPU, with a fourth run from the stream-ordered pool, cudaMallocAsync):
  - with no reuse (every buffer its own range): the reference;
  - in the planned arena (every activation at its planned offset in one allocation);
  - per tensor (every buffer its own malloc when produced, freed after its last read: the CPU
    analogue of per-tensor cudaMalloc), measured through the C allocator.
Checks that the arena and per-tensor runs give the reference's outputs bit for bit, and prints the
predicted vs measured memory (per step and peak) and latency of both allocation modes.

  --device cpu|cuda     executor (default cpu; cuda runs on GPU 0 when this build has the CUDA
                        executor and a device is present, else on the CPU executor)
  --tolerance R         --device cuda: the GPU's outputs vs the CPU executor's, |gpu - cpu| <=
                        R·(|cpu| + max|cpu| of that output) (default 1e-3)
  --planner NAME        planner to use (default best-of-greedy)
  --repeat N            timed runs of each allocation mode (default 5); latency median, p50, p99
  --json FILE           write the measurement as JSON
  --input NAME=FILE.pb  a graph input from an ONNX TensorProto file (a SequenceProto for a list,
                        an OptionalProto for an optional; repeatable); others random. The file
                        also fixes what the model leaves open: its shape, a list's element shapes,
                        a small integer input's values
  --save-outputs DIR    write every graph output as DIR/output_K.pb (graph-output order)
  --seed N              seed for random inputs and for weights the model does not store (default 1)
  --alignment N, --dim NAME=V, --input-shape NAME=D0,D1,..., --workspaces   as for `memplan plan`
                        (--workspaces: each Conv's im2col columns in its planned workspace buffer,
                        in the arena or its own allocation, instead of kernel scratch)

)";

const char* const kRunHelpTail = R"(
In `memplan run`, --device picks the executor; the strategies' cost profile is --profile (it is
--device in `memplan plan`), which also gives the predicted latency: the schedule's roofline bound
(shown on the GPU, or on the CPU when --profile is given; always in the JSON as roofline_latency_ms). A fused op runs its ops one after another, the tensors between them in
kernel scratch (not in the arena), so fusion keeps the outputs bit-identical; swap transfers are host copies.
With --workspaces, a fused op holding a Conv gets one workspace its body's Convs share.
Ops without a real kernel run a labelled synthetic kernel (deterministic, reads all inputs).
Exit status 1 when the arena or per-tensor run's outputs differ from the no-reuse run's; on the GPU
also when the pool run's do, or when the outputs are off the CPU executor's by more than --tolerance
(compared only when no synthetic kernel ran: it hashes its inputs' bits, so rounding changes it all).
)";

int fail(const std::string& message, int code = kError)
{
    std::cerr << "memplan: run: " << message << "\n";
    return code;
}

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

struct RunResults {
    const core::Workload* workload = nullptr;
    const core::Plan* plan = nullptr;
    const core::Measurement* arena = nullptr;
    const core::Measurement* perTensor = nullptr;
    const core::Measurement* pool = nullptr; // GPU runs only: the stream-ordered pool
    bool arenaMatch = false, perTensorMatch = false, poolMatch = false;
    std::string deviceName;
    std::optional<bool> cpuMatch; // GPU runs: outputs within tolerance of the CPU executor's (unset: not comparable)
    std::string cpuComparison;    // what that comparison found
    std::optional<double> cpuMaxRelativeError; // its largest relative error (checkTolerance)
    std::optional<bool> originalMatch; // set when strategies ran: outputs equal the untransformed model's
    const std::vector<core::StrategyReport>* reports = nullptr;
    int repeat = 1;
    std::string costProfile;  // the --profile the roofline and the strategies' costs use
    double rooflineMs = 0;    // the schedule's roofline time on costProfile (scheduleCost)
    bool showRoofline = false; // in the table: on the GPU, or when --profile was given
};

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
            if (!op.refusal.empty())
                std::printf("  %s '%s' did not run its graph: %s\n", op.type.c_str(), op.name.c_str(), op.refusal.c_str());
    }
}

} // namespace

int runCommand(const std::vector<std::string>& words)
{
    std::set<std::string> valued { "device", "planner", "repeat", "tolerance", "json", "input", "save-outputs", "seed", "alignment", "dim",
        "input-shape", "profile", "budget" };
    const std::set<std::string> switches { "fuse", "reorder", "recompute", "swap", "inplace", "workspaces" };
    if (std::find(words.begin(), words.end(), "--help") != words.end() || std::find(words.begin(), words.end(), "-h") != words.end()) {
        std::cout << kRunHelp << strategyHelp("profile") << kRunHelpTail;
        return kOk;
    }
    const auto args = parseCliArgs(words, valued, switches);
    if (!args)
        return fail(args.error().message + " (see memplan run --help)", kUsage);
    if (args->positional.size() != 1)
        return fail("expected one MODEL (see memplan run --help)", kUsage);
    const auto device = args->value("device").value_or("cpu");
    bool useCuda = false;
    if (device == "cuda" || device == "gpu") {
        std::string why = "this build has no CUDA executor";
#ifdef MEMPLAN_HAVE_CUDA
        useCuda = gpu::cudaAvailable(&why);
#endif
        if (!useCuda)
            std::cerr << "memplan: run: no CUDA device: running on the CPU executor instead (" << why << ")\n";
    } else if (device != "cpu")
        return fail("--device '" + device + "': choose cpu or cuda (the strategies' cost profile is --profile)", kUsage);

    core::RunOptions options;
    options.repeat = 5;
    if (const auto text = args->value("repeat")) {
        const auto n = parseInteger(*text);
        if (!n || *n < 1 || *n > 100000)
            return fail("--repeat '" + *text + "': expected a whole number from 1 to 100000", kUsage);
        options.repeat = int(*n);
    }
    if (const auto text = args->value("seed")) {
        const auto n = parseInteger(*text);
        if (!n)
            return fail("--seed '" + *text + "': expected a whole number", kUsage);
        options.seed = std::uint64_t(*n);
    }
    double tolerance = core::kDefaultGpuTolerance;
    if (const auto text = args->value("tolerance")) {
        char* end = nullptr;
        tolerance = std::strtod(text->c_str(), &end);
        if (text->empty() || *end != '\0' || !(tolerance >= 0) || tolerance > 1)
            return fail("--tolerance '" + *text + "': expected a number from 0 to 1", kUsage);
    }
    static_cast<void>(tolerance); // read by the GPU comparison only
    const auto plannerName = args->value("planner").value_or(std::string(core::kDefaultPlanner));
    const auto* planner = core::plannerByName(plannerName);
    if (!planner)
        return fail("unknown planner '" + plannerName + "'", kUsage);
    if (auto s = checkStrategyOptions(*args, "profile"); !s)
        return fail(s.error().message, strategyOptionsExitCode(s.error()));
    auto loadOptions = loadOptionsFrom(*args);
    if (!loadOptions)
        return fail(loadOptions.error().message, kUsage);
    const auto& spec = args->positional[0];
    // An ONNX model's inputs given as files also fix what its declared shapes leave open.
    auto files = inputFilesFrom(*args);
    if (!files)
        return fail(files.error().message);
    loadOptions->inputFiles = std::move(*files);
    auto loaded = core::loadWorkload(spec, *loadOptions);
    if (!loaded)
        return fail(loaded.error().message);
    options.inputs = loaded->givenInputs;
    if (!loaded->graph)
        return fail(spec + ": an allocation problem has no ops to run; give a model (.onnx, .json) or a graph example");
    const core::Workload original = *loaded;
    std::shared_ptr<const core::ModelData> originalData;
    if (isOnnxFile(spec)) {
        auto data = core::loadTensorData(spec, *original.graph);
        if (!data)
            return fail(data.error().message);
        originalData = std::make_shared<const core::ModelData>(std::move(*data));
    }

    const auto costProfile = deviceFrom(*args, "profile");
    if (!costProfile)
        return fail(costProfile.error().message, kUsage);
    auto workload = std::move(*loaded);
    std::vector<core::StrategyReport> reports;
    if (auto s = applyStrategyFlags(*args, workload, reports, "profile"); !s)
        return fail(s.error().message, s.error().code == core::ErrorCode::InvalidArgument ? kUsage : kError);
    const bool transformed = !reports.empty();
    if (!reports.empty())
        std::fputs(formatStrategyReports(reports, 3).c_str(), stdout);
    const auto& graph = *workload.graph;
    if (originalData)
        options.modelData = transformed
            ? std::make_shared<const core::ModelData>(core::remapModelData(*originalData, *original.graph, graph))
            : originalData;

    const auto plan = core::runPlanner(*planner, workload.problem);
    if (!plan)
        return fail(spec + ": " + plan.error().message);
    if (const auto check = core::validatePlan(workload.problem, *plan); !check.ok())
        return fail(spec + ": planner '" + plannerName + "' produced an invalid plan: " + check.message);

    auto referenceOptions = options;
    referenceOptions.repeat = 1;
    const auto reference = core::runOnCpu(graph, workload.schedule, workload.problem, core::noReusePlan(workload.problem),
        workload.bufferTensor, referenceOptions);
    if (!reference) // every tensor its own room: the most memory of any run here
        return fail(spec + ": the no-reuse reference run: " + reference.error().message);
    // CPU: the no-reuse reference above, the arena, per-tensor. GPU: its own no-reuse reference
    // (the bit-for-bit check stays on one device), the arena, per-tensor and the pool.
    std::optional<core::Measurement> measured, perTensor, pool, deviceReference;
    auto perTensorOptions = options;
    perTensorOptions.allocation = core::Allocation::PerTensor;
    RunResults results;
    if (!useCuda) {
        auto a = core::runOnCpu(graph, workload.schedule, workload.problem, *plan, workload.bufferTensor, options);
        if (!a)
            return fail(spec + ": " + a.error().message);
        auto p = core::runOnCpu(graph, workload.schedule, workload.problem, *plan, workload.bufferTensor, perTensorOptions);
        if (!p)
            return fail(spec + ": " + p.error().message);
        measured = std::move(*a);
        perTensor = std::move(*p);
    }
#ifdef MEMPLAN_HAVE_CUDA
    else {
        const auto onGpu = [&](const core::Plan& p, const core::RunOptions& o, gpu::CudaAllocation mode) -> std::optional<core::Measurement> {
            auto run = gpu::runOnCuda(graph, workload.schedule, workload.problem, p, workload.bufferTensor, o, mode);
            if (!run) {
                fail(spec + ": " + run.error().message);
                return std::nullopt;
            }
            return std::move(*run);
        };
        if (!(deviceReference = onGpu(core::noReusePlan(workload.problem), referenceOptions, gpu::CudaAllocation::Arena))
            || !(measured = onGpu(*plan, options, gpu::CudaAllocation::Arena))
            || !(perTensor = onGpu(*plan, options, gpu::CudaAllocation::PerTensor)) || !(pool = onGpu(*plan, options, gpu::CudaAllocation::Pool)))
            return kError;
        results.pool = &*pool;
        results.deviceName = gpu::cudaDeviceDescription();
        results.poolMatch = core::compareOutputs(graph, deviceReference->outputs, pool->outputs).empty();
        if (deviceReference->opsSynthetic > 0)
            results.cpuComparison = "not compared (" + std::to_string(deviceReference->opsSynthetic)
                + " synthetic kernels hash their inputs' bits, so float rounding changes their outputs entirely)";
        else {
            const auto check = core::checkTolerance(graph, reference->outputs, deviceReference->outputs, tolerance);
            results.cpuMatch = check.within();
            results.cpuMaxRelativeError = check.maxRelativeError;
            char text[96];
            std::snprintf(text, sizeof text, "%g (max relative error %.2g)", tolerance, check.maxRelativeError);
            results.cpuComparison = check.within() ? std::string("within tolerance ") + text : "OFF by more than " + std::string(text) + ": " + check.firstOff;
            if (!check.cause.empty())
                results.cpuComparison += " (" + check.cause + "; --tolerance sets the bound)";
        }
    }
#endif
    const auto& bitReference = deviceReference ? *deviceReference : *reference;
    const auto mismatch = core::compareOutputs(graph, bitReference.outputs, measured->outputs);
    const auto perTensorMismatch = core::compareOutputs(graph, bitReference.outputs, perTensor->outputs);

    results.workload = &workload;
    results.plan = &*plan;
    results.arena = &*measured;
    results.perTensor = &*perTensor;
    results.arenaMatch = mismatch.empty();
    results.perTensorMatch = perTensorMismatch.empty();
    results.reports = &reports;
    results.repeat = options.repeat;
    results.costProfile = costProfile->name;
    results.rooflineMs = core::scheduleCost(graph, workload.schedule, *costProfile).seconds * 1e3;
    results.showRoofline = useCuda || args->value("profile").has_value();
    if (transformed) {
        auto originalOptions = referenceOptions;
        originalOptions.modelData = originalData;
        const auto untransformed = core::runOnCpu(*original.graph, original.schedule, original.problem,
            core::noReusePlan(original.problem), original.bufferTensor, originalOptions);
        if (!untransformed)
            return fail(spec + ": " + untransformed.error().message);
        results.originalMatch = core::compareOutputs(graph, untransformed->outputs, reference->outputs).empty();
    }
    printTable(results);

    const auto& m = *measured;
    if (const auto file = args->value("json")) {
        std::ofstream out(*file);
        out << toJson(results).dump(2) << "\n";
        if (!out)
            return fail(*file + ": cannot write");
    }
    if (const auto dir = args->value("save-outputs")) {
        std::error_code ec;
        std::filesystem::create_directories(*dir, ec);
        for (std::size_t k = 0; k < m.outputs.size(); ++k) {
            const auto file = std::filesystem::path(*dir) / ("output_" + std::to_string(k) + ".pb");
            if (auto s = core::writeTensorFile(file, graph.tensors[graph.outputs[k]].name, m.outputs[k]); !s)
                return fail(s.error().message);
        }
    }
    if (!mismatch.empty())
        return fail("the arena run's outputs differ from the no-reuse run's: " + mismatch + " (the plan corrupts a live tensor)");
    if (!perTensorMismatch.empty())
        return fail("the per-tensor run's outputs differ from the no-reuse run's: " + perTensorMismatch);
    if (results.pool && !results.poolMatch)
        return fail("the pool run's outputs differ from the no-reuse run's");
    if (!m.passesAgree || !results.perTensor->passesAgree)
        return fail("a later pass computed other outputs than the first from the same inputs");
    if (results.cpuMatch && !*results.cpuMatch)
        return fail("the GPU's outputs are off the CPU executor's: " + results.cpuComparison);
    return kOk;
}
