// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "run.h"
#include "progressline.h"

#include "cliargs.h"
#include "runreport.h"
#include "strategycli.h"

#include "exec/backend.h"
#include "exec/executor.h"
#include "exec/runsession.h"
#include "exec/tolerance.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "util/format.h"


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
                    [--simplify] [--fuse] [--reorder] [--recompute] [--swap] [--inplace] [--budget SIZE] [--profile NAME|FILE]
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
                        (--workspaces: each op's oneDNN scratchpad or im2col columns in its planned
                        workspace buffer, in the arena or its own allocation, not kernel scratch)
  --kernels onednn|own  Conv, ConvTranspose, MatMul and Gemm on oneDNN (default) or the own kernels
  --threads N           threads of the oneDNN kernels (default: every core; the report says how many)
  --layout nhwc|nchw    activations between convolutions stored N,H,W,C (default) or all N,C,H,W
  --grads-in-arena      as for `memplan plan`: a captured training step's gradients in the arena

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

// The command line of a run, checked: what to run where, and how often.
struct RunSettings {
    CliArgs args;
    std::string spec;
    const core::ExecutorBackend* backend = &core::cpuExecutor();
    core::RunOptions options;
    double tolerance = core::kDefaultGpuTolerance;
    std::string plannerName;
    const core::Planner* planner = nullptr;
};

// The device the run asks for: cuda falls back to the CPU executor, saying why, when the CUDA
// executor or a device is missing.
const core::ExecutorBackend* chooseBackend(const std::string& device)
{
    if (device == "cpu")
        return &core::cpuExecutor();
    std::string why;
    const auto cuda = core::executorBackend("cuda");
    if (!cuda)
        why = cuda.error().message;
    else if ((*cuda)->available(&why))
        return *cuda;
    std::cerr << "memplan: run: no CUDA device: running on the CPU executor instead (" << why << ")\n";
    return &core::cpuExecutor();
}

std::optional<RunSettings> readSettings(const std::vector<std::string>& words, int& code)
{
    const auto failWith = [&](const std::string& message, int exit) {
        code = fail(message, exit);
        return std::nullopt;
    };
    std::set<std::string> valued { "device", "planner", "repeat", "tolerance", "json", "input", "save-outputs", "seed", "alignment", "dim",
        "input-shape", "profile", "budget", "threads", "kernels", "layout" };
    const std::set<std::string> switches { "simplify", "fuse", "reorder", "recompute", "swap", "inplace", "workspaces", "grads-in-arena" };
    auto args = parseCliArgs(words, valued, switches);
    if (!args)
        return failWith(args.error().message + " (see memplan run --help)", kUsage);
    if (args->positional.size() != 1)
        return failWith("expected one MODEL (see memplan run --help)", kUsage);
    RunSettings s;
    const auto device = args->value("device").value_or("cpu");
    if (device == "cuda" || device == "gpu")
        s.backend = chooseBackend("cuda");
    else if (device != "cpu")
        return failWith("--device '" + device + "': choose cpu or cuda (the strategies' cost profile is --profile)", kUsage);
    s.options.repeat = 5;
    if (const auto text = args->value("repeat")) {
        const auto n = parseInteger(*text);
        if (!n || *n < 1 || *n > 100000)
            return failWith("--repeat '" + *text + "': expected a whole number from 1 to 100000", kUsage);
        s.options.repeat = int(*n);
    }
    if (const auto text = args->value("seed")) {
        const auto n = parseInteger(*text);
        if (!n)
            return failWith("--seed '" + *text + "': expected a whole number", kUsage);
        s.options.seed = std::uint64_t(*n);
    }
    if (const auto text = args->value("tolerance")) {
        char* end = nullptr;
        s.tolerance = std::strtod(text->c_str(), &end);
        if (text->empty() || *end != '\0' || !(s.tolerance >= 0) || s.tolerance > 1)
            return failWith("--tolerance '" + *text + "': expected a number from 0 to 1", kUsage);
    }
    s.plannerName = args->value("planner").value_or(std::string(core::kDefaultPlanner));
    s.planner = core::plannerByName(s.plannerName);
    if (!s.planner)
        return failWith("unknown planner '" + s.plannerName + "'", kUsage);
    if (auto status = checkStrategyOptions(*args, "profile"); !status)
        return failWith(status.error().message, strategyOptionsExitCode(status.error()));
    s.spec = args->positional[0];
    s.args = std::move(*args);
    return s;
}

// The model as given (`original`, with its file's weights) and as the strategies made it (`workload`).
struct RunModel {
    core::Workload original, workload;
    std::shared_ptr<const core::ModelData> originalData;
    std::vector<core::StrategyReport> reports;
    core::DeviceProfile costProfile;
    bool transformed() const { return !reports.empty(); }
};

// Loads the model (its given inputs into settings.options), applies the strategy flags and prints
// what they did.
std::optional<RunModel> loadRunModel(RunSettings& settings, int& code)
{
    const auto failWith = [&](const std::string& message, int exit = kError) {
        code = fail(message, exit);
        return std::nullopt;
    };
    const auto& args = settings.args;
    const auto& spec = settings.spec;
    auto loadOptions = loadOptionsFrom(args);
    if (!loadOptions)
        return failWith(loadOptions.error().message, kUsage);
    // An ONNX model's inputs given as files also fix what its declared shapes leave open.
    auto files = inputFilesFrom(args);
    if (!files)
        return failWith(files.error().message);
    loadOptions->inputFiles = std::move(*files);
    auto loaded = core::loadWorkload(spec, *loadOptions);
    if (!loaded)
        return failWith(loaded.error().message);
    settings.options.inputs = loaded->givenInputs;
    if (!loaded->graph)
        return failWith(spec + ": an allocation problem has no ops to run; give a model (.onnx, .json) or a graph example");
    RunModel model { *loaded, {}, {}, {}, {} };
    if (isOnnxFile(spec)) {
        auto data = core::loadTensorData(spec, *model.original.graph);
        if (!data)
            return failWith(data.error().message);
        model.originalData = std::make_shared<const core::ModelData>(std::move(*data));
    }
    auto costProfile = deviceFrom(args, "profile");
    if (!costProfile)
        return failWith(costProfile.error().message, kUsage);
    model.costProfile = std::move(*costProfile);
    model.workload = std::move(*loaded);
    if (auto status = applyGradsInArenaFlag(args, model.workload); !status)
        return failWith(status.error().message, strategyOptionsExitCode(status.error()));
    if (auto status = applyStrategyFlags(args, model.workload, model.reports, "profile"); !status)
        return failWith(status.error().message, status.error().code == core::ErrorCode::InvalidArgument ? kUsage : kError);
    if (model.transformed())
        std::fputs(formatStrategyReports(model.reports, 3).c_str(), stdout);
    if (model.originalData)
        settings.options.modelData = model.transformed()
            ? std::make_shared<const core::ModelData>(core::remapModelData(*model.originalData, *model.original.graph, *model.workload.graph))
            : model.originalData;
    return model;
}

// What the GPU's outputs vs the CPU executor's came to, as the table and the JSON say it.
void describeCpuCheck(const core::RunSession& session, double tolerance, RunResults& results)
{
    if (!session.cpuCheck) {
        results.cpuComparison = "not compared (" + std::to_string(session.syntheticOps)
            + " synthetic kernels hash their inputs' bits, so float rounding changes their outputs entirely)";
        return;
    }
    const auto& check = *session.cpuCheck;
    results.cpuMatch = check.within();
    results.cpuMaxRelativeError = check.maxRelativeError;
    char text[96];
    std::snprintf(text, sizeof text, "%g (max relative error %.2g)", tolerance, check.maxRelativeError);
    results.cpuComparison = check.within() ? std::string("within tolerance ") + text : "OFF by more than " + std::string(text) + ": " + check.firstOff;
    if (!check.cause.empty())
        results.cpuComparison += " (" + check.cause + "; --tolerance sets the bound)";
}

// --json and --save-outputs.
int writeRunFiles(const RunSettings& settings, const RunResults& results)
{
    const auto& graph = *results.workload->graph;
    const auto& m = *results.arena;
    if (const auto file = settings.args.value("json")) {
        std::ofstream out(*file);
        out << toJson(results).dump(2) << "\n";
        if (!out)
            return fail(*file + ": cannot write");
    }
    if (const auto dir = settings.args.value("save-outputs")) {
        std::error_code ec;
        std::filesystem::create_directories(*dir, ec);
        for (std::size_t k = 0; k < m.outputs.size(); ++k) {
            const auto file = std::filesystem::path(*dir) / ("output_" + std::to_string(k) + ".pb");
            if (auto s = core::writeTensorFile(file, graph.tensors[graph.outputs[k]].name, m.outputs[k]); !s)
                return fail(s.error().message);
        }
    }
    return kOk;
}

// The exit status: 1 with the first check that failed.
int verdict(const core::RunSession& session, const RunResults& results)
{
    if (!session.arenaMismatch.empty())
        return fail("the arena run's outputs differ from the no-reuse run's: " + session.arenaMismatch + " (the plan corrupts a live tensor)");
    if (!session.perTensorMismatch.empty())
        return fail("the per-tensor run's outputs differ from the no-reuse run's: " + session.perTensorMismatch);
    if (results.pool && !results.poolMatch)
        return fail("the pool run's outputs differ from the no-reuse run's");
    if (!session.arena.passesAgree || !session.perTensor.passesAgree)
        return fail("a later pass computed other outputs than the first from the same inputs");
    if (results.cpuMatch && !*results.cpuMatch)
        return fail("the GPU's outputs are off the CPU executor's: " + results.cpuComparison);
    return kOk;
}

} // namespace

int runCommand(const std::vector<std::string>& words)
{
    if (std::find(words.begin(), words.end(), "--help") != words.end() || std::find(words.begin(), words.end(), "-h") != words.end()) {
        std::cout << kRunHelp << strategyHelp("profile") << kRunHelpTail;
        return kOk;
    }
    int code = kOk;
    auto settings = readSettings(words, code);
    if (!settings)
        return code;
    auto model = loadRunModel(*settings, code);
    if (!model)
        return code;
    const auto& spec = settings->spec;
    const auto& workload = model->workload;
    const auto plan = core::runPlanner(*settings->planner, workload.problem);
    if (!plan)
        return fail(spec + ": " + plan.error().message);
    if (const auto check = core::validatePlan(workload.problem, *plan); !check.ok())
        return fail(spec + ": planner '" + settings->plannerName + "' produced an invalid plan: " + check.message);

    core::RunSessionRequest request;
    request.workload = &workload;
    request.plan = &*plan;
    request.backend = settings->backend;
    request.options = settings->options;
    request.tolerance = settings->tolerance;
    request.cpuReference = model->transformed(); // compared with the untransformed model's run below
    request.costProfile = &model->costProfile;
    ProgressLine progressLine("running " + std::filesystem::path(spec).filename().string(), workload.schedule.steps());
    if (progressLine.shown())
        request.options.progress = [&progressLine](int done, int total) { progressLine.update(done, total); };
    core::RunStage failedAt = core::RunStage::Reference;
    const auto session = core::runSession(request, &failedAt);
    progressLine.finish();
    const bool onCpu = settings->backend == &core::cpuExecutor();
    if (!session) {
        // The CPU reference (every tensor its own room: the most memory of any run here) says so.
        const bool cpuReference = failedAt == core::RunStage::CpuReference || (onCpu && failedAt == core::RunStage::Reference);
        return fail(spec + ": " + (cpuReference ? "the no-reuse reference run: " : "") + session.error().message);
    }

    RunResults results;
    results.workload = &workload;
    results.plan = &*plan;
    results.arena = &session->arena;
    results.perTensor = &session->perTensor;
    results.arenaMatch = session->arenaMismatch.empty();
    results.perTensorMatch = session->perTensorMismatch.empty();
    if (!onCpu) {
        results.pool = session->pool ? &*session->pool : nullptr;
        results.poolMatch = session->poolMismatch.empty();
        results.deviceName = session->deviceName;
        describeCpuCheck(*session, settings->tolerance, results);
    }
    results.reports = &model->reports;
    results.repeat = settings->options.repeat;
    results.costProfile = session->costProfile;
    results.rooflineMs = session->rooflineSeconds * 1e3;
    results.showRoofline = !onCpu || settings->args.value("profile").has_value();
    if (model->transformed()) {
        auto originalOptions = settings->options;
        originalOptions.repeat = 1;
        originalOptions.modelData = model->originalData;
        const auto& original = model->original;
        const auto untransformed = core::runOnCpu(*original.graph, original.schedule, original.problem,
            core::noReusePlan(original.problem), original.bufferTensor, originalOptions);
        if (!untransformed)
            return fail(spec + ": " + untransformed.error().message);
        results.originalMatch = core::compareOutputs(*workload.graph, untransformed->outputs, session->cpuReference->outputs).empty();
    }
    printTable(results);
    if (const int status = writeRunFiles(*settings, results); status != kOk)
        return status;
    return verdict(*session, results);
}
