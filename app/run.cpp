// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "run.h"

#include "cliargs.h"
#include "strategycli.h"

#include "exec/executor.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "util/format.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>

namespace {

constexpr int kOk = 0, kError = 1, kUsage = 2;

const char* const kRunHelp = R"(usage: memplan run MODEL [--device cpu|cuda] [--planner NAME] [--repeat N] [--json FILE]
                    [--input NAME=FILE.pb]... [--save-outputs DIR] [--seed N]
                    [--fuse] [--reorder] [--recompute] [--swap] [--inplace] [--budget SIZE] [--profile NAME|FILE]
                    [options]

Applies the strategies given, then runs MODEL three times on the CPU executor:
  - with no reuse (every buffer its own range): the reference;
  - in the planned arena (every activation at its planned offset in one allocation);
  - per tensor (every buffer its own malloc when produced, freed after its last read: the CPU
    analogue of per-tensor cudaMalloc), measured through the C allocator.
Checks that the arena and per-tensor runs give the reference's outputs bit for bit, and prints the
predicted vs measured memory (per step and peak) and latency of both allocation modes.

  --device cpu|cuda     executor (default cpu; cuda falls back to the CPU executor in this build)
  --planner NAME        planner to use (default greedy-by-size)
  --repeat N            timed runs of each allocation mode (default 5); latency median, p50, p99
  --json FILE           write the measurement as JSON
  --input NAME=FILE.pb  a graph input from an ONNX TensorProto file (repeatable); others random
  --save-outputs DIR    write every graph output as DIR/output_K.pb (graph-output order)
  --seed N              seed for random inputs and for weights the model does not store (default 1)
  --alignment N, --dim NAME=V, --input-shape NAME=D0,D1,...   as for `memplan plan`

)";

const char* const kRunHelpTail = R"(
In `memplan run`, --device picks the executor; the strategies' cost profile is --profile (it is
--device in `memplan plan`). A fused op runs its ops one after another, the tensors between them in
kernel scratch (not in the arena), so fusion keeps the outputs bit-identical; swap transfers are host copies.
Ops without a real kernel run a labelled synthetic kernel (deterministic, reads all inputs).
Exit status 1 when the arena or per-tensor run's outputs differ from the no-reuse run's.
)";

int fail(const std::string& message, int code = kError)
{
    std::cerr << "memplan: run: " << message << "\n";
    return code;
}

bool isOnnxFile(const std::string& spec)
{
    if (spec.rfind("example:", 0) == 0)
        return false;
    const auto ext = std::filesystem::path(spec).extension().string();
    return ext != ".json" && ext != ".csv";
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
    bool arenaMatch = false, perTensorMatch = false;
    std::optional<bool> originalMatch; // set when strategies ran: outputs equal the untransformed model's
    const std::vector<core::StrategyReport>* reports = nullptr;
    int repeat = 1;
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
    j["ops_real"] = m.opsReal;
    j["ops_synthetic"] = m.opsSynthetic;
    j["predicted_arena_bytes"] = r.plan->arenaSize;
    j["lower_bound_bytes"] = core::lowerBound(w.problem);
    j["arena_bytes"] = m.arenaBytes;
    j["weights_bytes"] = m.weightsBytes;
    j["scratch_bytes"] = m.scratchBytes;
    j["peak_bytes"] = m.peakBytes;
    j["peak_rss_bytes"] = m.peakRssBytes;
    j["repeat"] = r.repeat;
    j["latency_ms"] = latencyJson(m.latencyMs);
    j["predicted_step_bytes"] = core::liveBytesCurve(w.problem);
    j["step_bytes"] = m.stepBytes;
    j["step_peak_bytes"] = m.stepPeakBytes;
    nlohmann::ordered_json per;
    per["outputs_match_reference"] = r.perTensorMatch;
    per["peak_bytes"] = pt.stepPeakBytes;
    per["latency_ms"] = latencyJson(pt.latencyMs);
    per["step_bytes"] = pt.stepBytes;
    j["per_tensor"] = std::move(per);
    if (!r.reports->empty()) {
        auto list = nlohmann::ordered_json::array();
        for (const auto& s : *r.reports)
            list.push_back({ { "name", s.name }, { "saved_bytes", s.savedBytes() }, { "swapped_bytes", s.swappedBytes },
                { "estimated_extra_ms", s.extraSeconds * 1e3 } });
        j["strategies"] = std::move(list);
        j["measured_swap_ms"] = swapMs(m);
        j["outputs_match_original"] = r.originalMatch.value_or(false);
    }
    auto ops = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < m.ops.size(); ++i) {
        const auto& op = m.ops[i];
        ops.push_back({ { "name", op.name }, { "type", op.type }, { "kernel", op.real ? "real" : "synthetic" },
            { "median_ms", op.medianMs }, { "p99_ms", op.p99Ms },
            { "per_tensor_median_ms", i < pt.ops.size() ? pt.ops[i].medianMs : 0.0 } });
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
    const auto row = [](const char* label, const std::string& predicted, const std::string& arena, const std::string& perTensor) {
        std::printf("%-26s %14s %14s %14s\n", label, predicted.c_str(), arena.c_str(), perTensor.c_str());
    };
    const auto ms = [](double v) {
        char text[32];
        std::snprintf(text, sizeof text, "%.2f ms", v);
        return std::string(text);
    };
    std::printf("model       %s\ndevice      cpu\nplanner     %s\n", w.source.c_str(), plan.planner.c_str());
    std::printf("ops         %d real, %d synthetic\n\n", m.opsReal, m.opsSynthetic);
    row("", "predicted", "arena run", "per-tensor run");
    row("activation memory", bytes(plan.arenaSize), bytes(m.arenaBytes), bytes(pt.stepPeakBytes) + "*");
    row("live activations, peak", bytes(core::lowerBound(w.problem)), bytes(m.stepPeakBytes), "-");
    row("weights + other", bytes(predictedWeights), bytes(m.weightsBytes), bytes(pt.weightsBytes));
    row("kernel scratch", "-", bytes(m.scratchBytes), bytes(pt.scratchBytes));
    row("peak (all of the above)", bytes(plan.arenaSize + predictedWeights), bytes(m.peakBytes), bytes(pt.peakBytes));
    row("latency median", "-", ms(m.latencyMs.median), ms(pt.latencyMs.median));
    row("latency p50", "-", ms(m.latencyMs.p50), ms(pt.latencyMs.p50));
    row("latency p99", "-", ms(m.latencyMs.p99), ms(pt.latencyMs.p99));
    std::printf("%-26s %14s\n", "peak resident (RSS)", bytes(m.peakRssBytes).c_str());
    std::printf("* allocator peak: bytes malloc held above its level before the run (mallinfo2), chunk overhead included\n");
    double predictedSwap = 0;
    bool swapped = false;
    for (const auto& s : *r.reports)
        if (s.name == "swap") {
            predictedSwap += s.extraSeconds * 1e3;
            swapped = s.swappedBytes > 0;
        }
    if (swapped)
        std::printf("swap transfers: estimated %.3f ms on the cost profile, measured %.3f ms as host copies\n", predictedSwap,
            swapMs(m));
    std::printf("\nrepeat %d; outputs vs no-reuse run: arena %s, per-tensor %s\n", r.repeat,
        r.arenaMatch ? "bit-identical" : "DIFFER", r.perTensorMatch ? "bit-identical" : "DIFFER");
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
    }
}

} // namespace

int runCommand(const std::vector<std::string>& words)
{
    std::set<std::string> valued { "device", "planner", "repeat", "json", "input", "save-outputs", "seed", "alignment", "dim",
        "input-shape", "profile", "budget" };
    const std::set<std::string> switches { "fuse", "reorder", "recompute", "swap", "inplace" };
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
    if (device == "cuda" || device == "gpu")
        std::cerr << "memplan: run: no CUDA device: running on the CPU executor instead\n";
    else if (device != "cpu")
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
    const auto plannerName = args->value("planner").value_or("greedy-by-size");
    const auto* planner = core::plannerByName(plannerName);
    if (!planner)
        return fail("unknown planner '" + plannerName + "'", kUsage);
    const auto loadOptions = loadOptionsFrom(*args);
    if (!loadOptions)
        return fail(loadOptions.error().message, kUsage);
    const auto& spec = args->positional[0];
    auto loaded = core::loadWorkload(spec, *loadOptions);
    if (!loaded)
        return fail(loaded.error().message);
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
    for (const auto& item : args->values("input")) {
        const auto eq = item.find('=');
        if (eq == std::string::npos || eq == 0)
            return fail("--input '" + item + "': expected NAME=FILE.pb", kUsage);
        auto tensor = core::readTensorFile(item.substr(eq + 1));
        if (!tensor)
            return fail(tensor.error().message);
        options.inputs[item.substr(0, eq)] = std::move(tensor->second);
    }

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
    if (!reference)
        return fail(spec + ": " + reference.error().message);
    const auto measured = core::runOnCpu(graph, workload.schedule, workload.problem, *plan, workload.bufferTensor, options);
    if (!measured)
        return fail(spec + ": " + measured.error().message);
    auto perTensorOptions = options;
    perTensorOptions.allocation = core::Allocation::PerTensor;
    const auto perTensor = core::runOnCpu(graph, workload.schedule, workload.problem, *plan, workload.bufferTensor, perTensorOptions);
    if (!perTensor)
        return fail(spec + ": " + perTensor.error().message);
    const auto mismatch = core::compareOutputs(graph, reference->outputs, measured->outputs);
    const auto perTensorMismatch = core::compareOutputs(graph, reference->outputs, perTensor->outputs);

    RunResults results;
    results.workload = &workload;
    results.plan = &*plan;
    results.arena = &*measured;
    results.perTensor = &*perTensor;
    results.arenaMatch = mismatch.empty();
    results.perTensorMatch = perTensorMismatch.empty();
    results.reports = &reports;
    results.repeat = options.repeat;
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
    return kOk;
}
