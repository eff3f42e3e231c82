// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// `memplan bench run MODEL...`: the CPU executor's forward latency beside ONNX Runtime's on the same
// model, threads and input sizes.
#include "bench.h"
#include "progressline.h"

#include "exec/executor.h"
#include "exec/tensordata.h"
#include "io/workload.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "util/format.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

namespace {

namespace fs = std::filesystem;

// scripts/ort_profile.js: $MEMPLAN_ORT_SCRIPT, else the source tree's from a build folder
// (build/app/memplan), else beside an installed program (../share/memplan/scripts).
std::optional<fs::path> ortScript()
{
    if (const char* env = std::getenv("MEMPLAN_ORT_SCRIPT"))
        return fs::path(env);
    std::error_code ec;
    const auto exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
        return std::nullopt;
    for (const auto& candidate : { exe.parent_path() / "../../scripts/ort_profile.js", exe.parent_path() / "../share/memplan/scripts/ort_profile.js" })
        if (fs::exists(candidate, ec))
            return fs::weakly_canonical(candidate, ec);
    return std::nullopt;
}

std::string quoted(const std::string& text)
{
    std::string q = "'";
    for (char c : text)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// ONNX Runtime's p50 in milliseconds (all graph optimizations, `threads` intra-op threads), or why not.
std::optional<double> ortLatency(const fs::path& model, int runs, int threads, std::string& why)
{
    const auto script = ortScript();
    if (!script) {
        why = "scripts/ort_profile.js not found (set MEMPLAN_ORT_SCRIPT)";
        return std::nullopt;
    }
    const std::string command = "node " + quoted(script->string()) + " " + quoted(model.string()) + " - all " + std::to_string(runs)
        + " --latency --threads " + std::to_string(threads) + " 2>&1";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    if (!pipe) {
        why = "could not start node";
        return std::nullopt;
    }
    std::string out;
    std::array<char, 4096> chunk {};
    while (const auto n = std::fread(chunk.data(), 1, chunk.size(), pipe.get()))
        out.append(chunk.data(), n);
    const int status = pclose(pipe.release());
    if (status != 0) {
        why = out.empty() ? "node failed" : out.substr(0, out.find('\n'));
        return std::nullopt;
    }
    try {
        return nlohmann::json::parse(out).at("p50_ms").get<double>();
    } catch (const std::exception&) {
        why = "unexpected output from " + script->filename().string() + ": " + out.substr(0, 120);
        return std::nullopt;
    }
}

} // namespace

int benchRun(const CliArgs& args)
{
    if (args.positional.size() < 2) {
        std::cerr << "memplan: bench run: expected one or more MODEL files (see memplan bench --help)\n";
        return 2;
    }
    const auto repeat = parseInteger(args.value("repeat").value_or("10"));
    if (!repeat || *repeat < 1 || *repeat > 10000) {
        std::cerr << "memplan: bench run: --repeat expects a whole number from 1 to 10000\n";
        return 2;
    }
    if (const auto text = args.value("threads")) {
        const auto n = parseInteger(*text);
        if (!n || *n < 1 || *n > 1024) {
            std::cerr << "memplan: bench run: --threads '" << *text << "': expected a whole number from 1 to 1024\n";
            return 2;
        }
        core::setCpuThreads(int(*n));
    }
    if (const auto text = args.value("layout")) {
        if (*text != "nhwc" && *text != "nchw") {
            std::cerr << "memplan: bench run: --layout '" << *text << "': choose nhwc or nchw\n";
            return 2;
        }
        core::setCpuChannelsLast(*text == "nhwc");
    }
    const int threads = core::cpuThreads();
    std::printf("%-28s %5s %12s %12s %7s  %s\n", "model", "ops", "MemPlan p50", "ORT p50", "ratio", "notes");
    int failures = 0;
    for (std::size_t i = 1; i < args.positional.size(); ++i) {
        const fs::path model = args.positional[i];
        const std::string name = model.filename().string();
        const auto workload = core::loadWorkload(model.string(), {});
        if (!workload || !workload->graph) {
            std::cerr << "memplan: bench run: " << (workload ? model.string() + ": not a model" : workload.error().message) << "\n";
            ++failures;
            continue;
        }
        const auto plan = core::runPlanner(*core::plannerByName("best-of-greedy"), workload->problem);
        if (!plan || !core::validatePlan(workload->problem, *plan).ok()) {
            std::cerr << "memplan: bench run: " << name << ": no valid plan\n";
            ++failures;
            continue;
        }
        core::RunOptions options;
        if (auto data = core::loadTensorData(model, *workload->graph))
            options.modelData = std::make_shared<const core::ModelData>(std::move(*data));
        options.inputs = workload->givenInputs;
        options.nested = &workload->nested; // control-flow ops' graphs at their planned offsets
        ProgressLine progress("running " + name, workload->schedule.steps());
        if (progress.shown())
            options.progress = [&progress](int done, int total) { progress.update(done, total); };
        // A warm-up pass first: it creates the oneDNN primitives and touches the memory.
        options.repeat = 1;
        auto m = core::runOnCpu(*workload->graph, workload->schedule, workload->problem, *plan, workload->bufferTensor, options);
        if (m) {
            options.repeat = int(*repeat);
            m = core::runOnCpu(*workload->graph, workload->schedule, workload->problem, *plan, workload->bufferTensor, options);
        }
        progress.finish();
        if (!m) {
            std::cerr << "memplan: bench run: " << name << ": " << m.error().message << "\n";
            ++failures;
            continue;
        }
        std::string why;
        const auto ort = ortLatency(model, int(*repeat), threads, why);
        std::string notes = std::to_string(m->onednnCalls) + " oneDNN calls";
        if (m->opsSynthetic > 0)
            notes += ", " + std::to_string(m->opsSynthetic) + " synthetic ops";
        if (!ort)
            notes += "; ONNX Runtime: " + why;
        char ratio[32] = "-";
        if (ort && *ort > 0)
            std::snprintf(ratio, sizeof ratio, "%.2fx", m->latencyMs.p50 / *ort);
        std::printf("%-28s %5zu %12s %12s %7s  %s\n", name.c_str(), workload->graph->ops.size(),
            core::formatSeconds(m->latencyMs.p50 / 1e3).c_str(), ort ? core::formatSeconds(*ort / 1e3).c_str() : "-", ratio, notes.c_str());
        std::fflush(stdout);
    }
    std::printf("\n%d thread%s each; p50 of %lld timed runs after one warm-up; ONNX Runtime with all graph optimizations "
                "(onnxruntime-node, CPU provider); MemPlan's arena run, planned by best-of-greedy\n",
        threads, threads == 1 ? "" : "s", *repeat);
    return failures ? 1 : 0;
}
