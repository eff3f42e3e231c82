// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "run.h"

#include "cliargs.h"

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
                    [--input NAME=FILE.pb]... [--save-outputs DIR] [--seed N] [options]

Runs MODEL with every activation at its planned offset in one arena on the CPU executor, runs it
again with no reuse (every tensor its own allocation) and checks that every graph output is the
same bit for bit. Prints predicted vs measured arena, peak memory and latency.

  --device cpu|cuda     executor (default cpu; cuda falls back to the CPU executor in this build)
  --planner NAME        planner to use (default greedy-by-size)
  --repeat N            timed runs of the planned arena (default 5); latency median, p50, p99
  --json FILE           write the measurement as JSON
  --input NAME=FILE.pb  a graph input from an ONNX TensorProto file (repeatable); others random
  --save-outputs DIR    write every graph output as DIR/output_K.pb (graph-output order)
  --seed N              seed for random inputs and for weights the model does not store (default 1)
  --alignment N, --dim NAME=V, --input-shape NAME=D0,D1,...   as for `memplan plan`

Ops without a real kernel run a labelled synthetic kernel (deterministic, reads all inputs).
Exit status 1 when the arena run's outputs differ from the no-reuse run's.
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

nlohmann::ordered_json toJson(const core::Workload& w, const core::Plan& plan, const core::Measurement& m, bool match, int repeat)
{
    nlohmann::ordered_json j;
    j["model"] = w.source;
    j["device"] = m.device;
    j["planner"] = plan.planner;
    j["outputs_match_reference"] = match;
    j["ops_real"] = m.opsReal;
    j["ops_synthetic"] = m.opsSynthetic;
    j["predicted_arena_bytes"] = plan.arenaSize;
    j["lower_bound_bytes"] = core::lowerBound(w.problem);
    j["arena_bytes"] = m.arenaBytes;
    j["weights_bytes"] = m.weightsBytes;
    j["scratch_bytes"] = m.scratchBytes;
    j["peak_bytes"] = m.peakBytes;
    j["peak_rss_bytes"] = m.peakRssBytes;
    j["repeat"] = repeat;
    j["latency_ms"] = { { "median", m.latencyMs.median }, { "p50", m.latencyMs.p50 }, { "p99", m.latencyMs.p99 } };
    auto ops = nlohmann::ordered_json::array();
    for (const auto& op : m.ops)
        ops.push_back({ { "name", op.name }, { "type", op.type }, { "kernel", op.real ? "real" : "synthetic" },
            { "median_ms", op.medianMs }, { "p99_ms", op.p99Ms } });
    j["ops"] = std::move(ops);
    return j;
}

} // namespace

int runCommand(const std::vector<std::string>& words)
{
    std::set<std::string> valued { "device", "planner", "repeat", "json", "input", "save-outputs", "seed", "alignment", "dim",
        "input-shape" };
    if (std::find(words.begin(), words.end(), "--help") != words.end() || std::find(words.begin(), words.end(), "-h") != words.end()) {
        std::cout << kRunHelp;
        return kOk;
    }
    const auto args = parseCliArgs(words, valued, {});
    if (!args)
        return fail(args.error().message + " (see memplan run --help)", kUsage);
    if (args->positional.size() != 1)
        return fail("expected one MODEL (see memplan run --help)", kUsage);
    const auto device = args->value("device").value_or("cpu");
    if (device == "cuda" || device == "gpu")
        std::cerr << "memplan: run: no CUDA device: running on the CPU executor instead\n";
    else if (device != "cpu")
        return fail("--device '" + device + "': choose cpu or cuda", kUsage);

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
    auto workload = core::loadWorkload(spec, *loadOptions);
    if (!workload)
        return fail(workload.error().message);
    if (!workload->graph)
        return fail(spec + ": an allocation problem has no ops to run; give a model (.onnx, .json) or a graph example");
    const auto& graph = *workload->graph;
    if (isOnnxFile(spec)) {
        auto data = core::loadTensorData(spec, graph);
        if (!data)
            return fail(data.error().message);
        options.modelData = std::make_shared<const core::ModelData>(std::move(*data));
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

    const auto plan = core::runPlanner(*planner, workload->problem);
    if (!plan)
        return fail(spec + ": " + plan.error().message);
    if (const auto check = core::validatePlan(workload->problem, *plan); !check.ok())
        return fail(spec + ": planner '" + plannerName + "' produced an invalid plan: " + check.message);

    auto referenceOptions = options;
    referenceOptions.repeat = 1;
    const auto reference = core::runOnCpu(graph, workload->schedule, workload->problem, core::noReusePlan(workload->problem),
        workload->bufferTensor, referenceOptions);
    if (!reference)
        return fail(spec + ": " + reference.error().message);
    const auto measured = core::runOnCpu(graph, workload->schedule, workload->problem, *plan, workload->bufferTensor, options);
    if (!measured)
        return fail(spec + ": " + measured.error().message);
    const auto mismatch = core::compareOutputs(graph, reference->outputs, measured->outputs);

    core::Bytes predictedWeights = 0;
    for (const auto& r : workload->regions)
        predictedWeights += r.size;
    const auto& m = *measured;
    std::printf("model       %s\ndevice      cpu\nplanner     %s\n", workload->source.c_str(), plan->planner.c_str());
    std::printf("ops         %d real, %d synthetic\n\n", m.opsReal, m.opsSynthetic);
    std::printf("%-22s %16s %16s\n", "", "predicted", "measured");
    std::printf("%-22s %16s %16s\n", "arena", core::formatBytes(plan->arenaSize).c_str(), core::formatBytes(m.arenaBytes).c_str());
    std::printf("%-22s %16s %16s\n", "weights + other", core::formatBytes(predictedWeights).c_str(), core::formatBytes(m.weightsBytes).c_str());
    std::printf("%-22s %16s %16s\n", "peak (arena+weights)", core::formatBytes(plan->arenaSize + predictedWeights).c_str(),
        core::formatBytes(m.peakBytes).c_str());
    std::printf("%-22s %16s %16s\n", "  of which scratch", "-", core::formatBytes(m.scratchBytes).c_str());
    std::printf("%-22s %16s %16s\n", "peak resident (RSS)", "-", core::formatBytes(m.peakRssBytes).c_str());
    std::printf("%-22s %16s %13.2f ms\n", "latency median", "-", m.latencyMs.median);
    std::printf("%-22s %16s %13.2f ms\n", "latency p99", "-", m.latencyMs.p99);
    std::printf("\nrepeat %d; outputs vs no-reuse run: %s\n", options.repeat, mismatch.empty() ? "bit-identical" : mismatch.c_str());
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

    if (const auto file = args->value("json")) {
        std::ofstream out(*file);
        out << toJson(*workload, *plan, m, mismatch.empty(), options.repeat).dump(2) << "\n";
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
    return kOk;
}
