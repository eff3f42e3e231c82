// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// memplan: the command line over the planning engine.
#include "bench.h"
#include "chipcli.h"
#include "run.h"
#include "scenariocli.h"
#include "frontiercli.h"
#include "strategycli.h"
#include "tracecli.h"
#include "cliargs.h"
#include "render.h"

#include "examples/examples.h"
#include "io/jsongraph.h"
#include "io/planjson.h"
#include "io/problemcsv.h"
#include "io/report.h"
#include "onnx/onnximport.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "scenarios/multichipreport.h"

#include "util/printable.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <new>
#include <streambuf>

namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1; // bad input, failed planning
constexpr int kExitUsage = 2; // bad command line

const char* const kMainHelp = R"(memplan: plan how a neural network's tensors share one memory arena

usage: memplan COMMAND [ARGS] [--help]

commands:
  plan MODEL       plan a model and print a report; write the plan as JSON or CSV
  compare MODEL    run every planner on a model and print one table
  examples         list the built-in examples (use them as example:NAME)
  export MODEL     write a model as ONNX, JSON graph or allocation-problem CSV
  render MODEL     draw the plan's memory curve, lifetime bars, arena layout and coloring to PNG or SVG
  bench            time every planner on random problems of 1k, 10k and 100k buffers
  bench allocation DIR   lower bound and each planner's arena, time and optimality per problem .csv
  bench run MODEL...     the CPU executor's forward latency beside ONNX Runtime's on the same model
  run MODEL        execute the plan on the CPU; check it against a no-reuse run; measure
  scenario llm     LLM decode: KV cache as contiguous, paged and two-level pools over the decode
                   steps, largest batch per capacity, activation arena per step
  trace SNAPSHOT   what a PyTorch memory snapshot measured: peaks, fragmentation, largest
                   allocations, and the same allocations replanned offline; trace A B compares two;
                   trace PROFILE.json --model MODEL lays an ONNX Runtime profile over MemPlan's plan

MODEL is an .onnx model, a .json graph, an allocation-problem .csv (id,lower,upper,size)
or example:NAME. Sizes print in KiB/MiB/GiB; JSON and CSV carry exact bytes.
)";

const char* const kModelOptionsHelp = R"(  --alignment N         activation alignment in bytes (default 256 for graphs, 1 for CSV problems)
  --dim NAME=V          value of a symbolic dimension, repeatable (e.g. --dim batch=1)
  --input-shape X=D,..  full shape of graph input X, repeatable (e.g. --input-shape x=1,3,224,224)
  --input X=FILE.pb     graph input X's contents as an ONNX TensorProto (SequenceProto for a list,
                        OptionalProto for an optional), repeatable: fixes its shape, a list's element
                        shapes, a small integer input's values (a Range's length, a loop's count)
)";

const char* const kWorkspacesHelp = R"(  --workspaces          plan each op's workspace as a buffer of its own ("<op> workspace", kind
                        workspace, live for its op's step) instead of leaving it to kernel scratch:
                        the scratchpad oneDNN asks for (Conv, ConvTranspose, MatMul, Gemm), or the
                        im2col columns of the own kernels
  --kernels onednn|own  the CPU executor's Conv/ConvTranspose/MatMul/Gemm kernels (default onednn)
  --threads N           threads of the CPU executor's oneDNN kernels (default: every core)
  --layout nhwc|nchw    the CPU executor's activations between convolutions stored N,H,W,C (default,
                        oneDNN's fast convolutions) or every one N,C,H,W; these three size the
                        workspaces, so plan and run with the same values
)";

const std::set<std::string> kModelOptions { "alignment", "dim", "input-shape", "input", "threads", "kernels", "layout" };

std::string plannerList()
{
    std::string text;
    for (const auto& p : core::planners())
        text += "  " + std::string(p->name()) + std::string(20 - std::min<std::size_t>(19, p->name().size()), ' ')
            + std::string(p->description()) + "\n";
    return text;
}

// Messages are one line: names from files in them (a CSV id, an op name) are escaped (core::printable).
int fail(const std::string& message, int code = kExitError)
{
    std::cerr << "memplan: " << core::printable(message) << "\n";
    return code;
}

bool writeFile(const std::string& path, const std::string& content, std::string& error)
{
    std::ofstream out(path, std::ios::binary);
    if (out)
        out << content;
    if (!out) {
        error = path + ": cannot write the file";
        return false;
    }
    return true;
}

// Parses the command's arguments; on --help prints `help` and returns exit code 0 in `exitCode`.
std::optional<CliArgs> parseOrExplain(const std::string& command, const std::vector<std::string>& words,
    std::set<std::string> valued, std::set<std::string> switches, const std::string& help, int& exitCode)
{
    switches.insert("help");
    auto args = parseCliArgs(words, valued, switches);
    if (!args) {
        exitCode = fail(command + ": " + args.error().message + " (see memplan " + command + " --help)", kExitUsage);
        return std::nullopt;
    }
    if (args->has("help")) {
        std::cout << help;
        exitCode = kExitOk;
        return std::nullopt;
    }
    return *args;
}

std::optional<core::Workload> loadModel(const std::string& command, const CliArgs& args, int& exitCode)
{
    if (args.positional.size() != 1) {
        exitCode = fail(command + ": expected one MODEL (a file or example:NAME), got "
                + std::to_string(args.positional.size()) + " (see memplan " + command + " --help)",
            kExitUsage);
        return std::nullopt;
    }
    auto options = loadOptionsFrom(args);
    if (!options) {
        exitCode = fail(command + ": " + options.error().message, kExitUsage);
        return std::nullopt;
    }
    // Files given for an ONNX model's inputs fix what its declared shapes leave open.
    if (args.has("input") && !isOnnxFile(args.positional[0])) {
        exitCode = fail(command + ": --input fixes what an ONNX model's inputs leave open; " + args.positional[0] + " is not an ONNX model",
            kExitUsage);
        return std::nullopt;
    }
    auto files = inputFilesFrom(args);
    if (!files) {
        exitCode = fail(command + ": " + files.error().message);
        return std::nullopt;
    }
    options->inputFiles = std::move(*files);
    auto workload = core::loadWorkload(args.positional[0], *options);
    if (!workload) {
        exitCode = fail((options->inputFiles.empty() ? "" : command + ": ") + workload.error().message);
        return std::nullopt;
    }
    if (options->workspaces && !workload->graph) {
        exitCode = fail(command + ": --workspaces: " + workload->source
            + " is an allocation problem: it has no ops, so no op workspaces to plan; give a model (.onnx, .json or example:NAME)");
        return std::nullopt;
    }
    return std::move(*workload);
}

const char* const kPlannerOptionsHelp = R"(  --planner NAME        planner to use (default best-of-greedy)
  --time-limit T        search time for the exact planner: 10s, 500ms, 2m or seconds (default 5s)
  --capacity SIZE       exact: stop at the first plan within SIZE (bytes, or with KiB/MiB/GiB)
)";

// The options planModel reads, and a command's own valued options `extra`.
std::set<std::string> planValuedOptions(std::set<std::string> extra)
{
    auto valued = kModelOptions;
    valued.insert({ "planner", "time-limit", "capacity" });
    valued.merge(extra);
    valued.merge(strategyValuedOptions());
    return valued;
}

std::set<std::string> planSwitches()
{
    auto switches = strategySwitches();
    switches.insert("workspaces");
    return switches;
}

// A model planned as `plan` and `render` do: loaded with the model options, transformed by the
// training and strategy flags, planned with --planner (--time-limit, --capacity) and validated.
struct Planned {
    core::Workload workload;
    core::Plan plan;
    std::vector<core::StrategyReport> strategyReports;
    std::string plannerName;
    // With keepOriginal and strategies applied: the workload before them and what they did.
    std::optional<core::Workload> original;
    core::Transformed state;
};

std::optional<Planned> planModel(const std::string& command, const CliArgs& args, int& code, bool keepOriginal = false)
{
    const auto failWith = [&](const std::string& message, int exit = kExitError) {
        code = fail(message, exit);
        return std::nullopt;
    };
    core::PlanOptions options;
    if (const auto text = args.value("time-limit")) {
        const auto seconds = parseSeconds(*text);
        if (!seconds)
            return failWith(command + ": --time-limit '" + *text + "': expected a duration such as 10s, 500ms, 2m or 2.5 (seconds)", kExitUsage);
        options.timeLimitSeconds = *seconds;
    }
    if (const auto text = args.value("capacity")) {
        const auto bytes = parseByteSize(*text);
        if (!bytes)
            return failWith(command + ": --capacity '" + *text + "': expected a size such as 1048576, 512KiB, 24MiB or 2GiB", kExitUsage);
        options.capacity = *bytes;
    }
    Planned planned;
    planned.plannerName = args.value("planner").value_or(std::string(core::kDefaultPlanner));
    const auto* planner = core::plannerByName(planned.plannerName);
    if (!planner)
        return failWith(command + ": unknown planner '" + planned.plannerName + "'; choose one of:\n" + plannerList(), kExitUsage);
    // Only the exact search reads them: taken silently by another planner, they would look obeyed.
    for (const char* exactOnly : { "time-limit", "capacity" })
        if (args.has(exactOnly) && planned.plannerName != "exact")
            return failWith(command + ": --" + exactOnly + " applies to the exact planner only (this plan uses "
                    + planned.plannerName + "); add --planner exact",
                kExitUsage);
    if (const auto status = checkStrategyOptions(args); !status)
        return failWith(command + ": " + status.error().message, strategyOptionsExitCode(status.error()));
    auto workload = loadModel(command, args, code);
    if (!workload)
        return std::nullopt;
    if (const auto status = applyTrainingFlag(args, *workload); !status)
        return failWith(command + ": " + status.error().message);
    if (const auto status = checkCheckpointTarget(args, *workload); !status)
        return failWith(command + ": " + status.error().message, kExitUsage);
    if (const auto status = applyGradsInArenaFlag(args, *workload); !status)
        return failWith(command + ": " + status.error().message, strategyOptionsExitCode(status.error()));
    if (keepOriginal)
        planned.original = *workload;
    if (const auto status = applyStrategyFlags(args, *workload, planned.strategyReports, "device", &planned.state); !status)
        return failWith(command + ": " + status.error().message);
    if (planned.strategyReports.empty())
        planned.original.reset();
    auto plan = core::runPlanner(*planner, workload->problem, {}, options);
    if (!plan)
        return failWith(workload->source + ": " + plan.error().message);
    const auto check = core::validatePlan(workload->problem, *plan);
    if (!check.ok())
        return failWith(workload->source + ": planner '" + planned.plannerName + "' produced an invalid plan: " + check.message);
    planned.workload = std::move(*workload);
    planned.plan = std::move(*plan);
    return planned;
}

int commandPlan(const std::vector<std::string>& words)
{
    const std::string help = std::string(R"(usage: memplan plan MODEL [--planner NAME] [--json FILE] [--csv FILE] [options]

Plans MODEL and prints the lower bound, the arena, fragmentation, colors, planning time and
the largest buffers alive at the peak step (with their element type and shape). Every plan is
checked by the independent validator.

  --json FILE           write the plan as JSON (exact bytes; see docs/FILE_FORMATS.md)
  --csv FILE            write the plan as allocation-problem CSV with an offset column
)") + kPlannerOptionsHelp + kModelOptionsHelp + kWorkspacesHelp + strategyHelp() + trainingHelp() + chipHelp() + "\nplanners:\n" + plannerList();
    int code = kExitOk;
    const auto args = parseOrExplain("plan", words, planValuedOptions({ "json", "csv", "chips" }), planSwitches(), help, code);
    if (!args)
        return code;
    const auto chips = chipsFrom(*args);
    if (!chips)
        return fail("plan: " + chips.error().message, kExitUsage);
    if (*chips && args->has("workspaces"))
        return fail("plan: --chips does not combine with --workspaces yet: chip stages plan tensors only", kExitUsage);
    if (*chips) {
        for (const char* flag : { "simplify", "fuse", "reorder", "recompute", "swap", "inplace", "budget", "checkpoint" })
            if (args->has(flag))
                return fail(std::string("plan: --chips does not combine with --") + flag
                        + " yet: the partition plans the model as loaded",
                    kExitUsage);
    }
    auto planned = planModel("plan", *args, code);
    if (!planned)
        return code;
    const auto& workload = planned->workload;
    const auto& plan = planned->plan;
    const auto& strategyReports = planned->strategyReports;
    const auto& plannerName = planned->plannerName;
    nlohmann::ordered_json multiChip;
    const auto chipText = chipReport(*args, workload, plan, plannerName, multiChip);
    if (!chipText)
        return fail("plan: " + chipText.error().message);
    std::cout << core::formatReport(workload, plan) << formatStrategyReports(strategyReports) << *chipText;
    std::string error;
    if (const auto path = args->value("json")) { // built only when asked for: 250 MB at 2 million buffers
        auto planJson = addStrategiesToPlanJson(core::exportPlanJson(workload, plan), strategyReports);
        if (!multiChip.is_null())
            planJson = core::addMultiChipToPlanJson(planJson, multiChip);
        if (!writeFile(*path, planJson, error))
            return fail(error);
    }
    if (const auto path = args->value("csv"); path && !writeFile(*path, core::exportProblemCsv(workload.problem, &plan), error))
        return fail(error);
    return kExitOk;
}

int commandCompare(const std::vector<std::string>& words)
{
    const std::string help = std::string(R"(usage: memplan compare MODEL [options]

Runs every planner on MODEL and prints one row each: arena, ratio to the lower bound, colors, time.
With strategy flags (--fuse, --inplace, ...): the planners on the model those strategies made.
With --strategies: one row per strategy combination instead (best-of-greedy): lower bound, arena,
saved bytes, extra FLOPs, bytes swapped and estimated time on --device NAME|FILE (default h200).
With --training, the rows also include recompute with the checkpoint policy (--checkpoint N, default sqrt).
With --frontier: the frontier of peak memory against estimated extra time over recompute, checkpoint
and swap decisions (a dynamic program and a MILP over the checkpoints of a training graph, greedy
sweeps, the 64 on/off combinations), each point a planned and validated transformed graph, then the
heuristics for contrast; --budget SIZE picks the point with the least time that fits; --json FILE
writes them; --milp-time-limit SECONDS bounds each MILP solve (default 2; 0: no MILP)
(docs/CLI.md#the-frontier).

)") + kModelOptionsHelp + kWorkspacesHelp + strategyHelp() + trainingHelp();
    int code = kExitOk;
    auto valued = kModelOptions;
    valued.merge(strategyValuedOptions());
    auto switches = strategySwitches();
    switches.insert("workspaces");
    switches.insert("frontier");
    valued.insert("json");
    valued.insert("milp-time-limit");
    const auto args = parseOrExplain("compare", words, valued, switches, help, code);
    if (!args)
        return code;
    if (args->has("json") && !args->has("frontier"))
        return fail("compare: --json writes the frontier; add --frontier", kExitUsage);
    if (args->has("milp-time-limit") && !args->has("frontier"))
        return fail("compare: --milp-time-limit bounds the frontier's MILP; add --frontier", kExitUsage);
    if (args->has("frontier"))
        for (const char* flag : { "strategies", "fuse", "inplace", "reorder", "recompute", "swap", "checkpoint" })
            if (args->has(flag))
                return fail(std::string("compare: --frontier tries the strategies itself; drop --") + flag, kExitUsage);
    if (args->has("strategies"))
        for (const char* flag : { "simplify", "fuse", "inplace", "reorder", "recompute", "swap", "budget" })
            if (args->has(flag))
                return fail(std::string("compare: --strategies compares every combination itself; drop --") + flag, kExitUsage);
    if (const auto status = checkStrategyOptions(*args); !status)
        return fail("compare: " + status.error().message, strategyOptionsExitCode(status.error()));
    auto workload = loadModel("compare", *args, code);
    if (!workload)
        return code;
    if (const auto status = applyTrainingFlag(*args, *workload); !status)
        return fail("compare: " + status.error().message);
    if (const auto status = checkCheckpointTarget(*args, *workload); !status)
        return fail("compare: " + status.error().message, kExitUsage);
    if (const auto status = applyGradsInArenaFlag(*args, *workload); !status)
        return fail("compare: " + status.error().message, strategyOptionsExitCode(status.error()));
    if (args->has("strategies"))
        return compareStrategies(*args, *workload);
    if (args->has("frontier"))
        return compareFrontier(*args, *workload);
    std::vector<core::StrategyReport> strategyReports;
    if (const auto status = applyStrategyFlags(*args, *workload, strategyReports); !status)
        return fail("compare: " + status.error().message);
    std::vector<core::Plan> plans;
    for (const auto& planner : core::planners()) {
        auto plan = core::runPlanner(*planner, workload->problem);
        if (!plan)
            return fail(workload->source + ": " + std::string(planner->name()) + ": " + plan.error().message);
        const auto check = core::validatePlan(workload->problem, *plan);
        if (!check.ok())
            return fail(workload->source + ": planner '" + std::string(planner->name()) + "' produced an invalid plan: " + check.message);
        plans.push_back(std::move(*plan));
    }
    std::cout << core::formatComparison(*workload, plans) << formatStrategyReports(strategyReports, 0);
    return kExitOk;
}

int commandExamples(const std::vector<std::string>& words)
{
    int code = kExitOk;
    const auto args = parseOrExplain("examples", words, {}, {}, "usage: memplan examples\n\nLists the built-in examples; any command takes example:NAME as its MODEL.\n", code);
    if (!args)
        return code;
    if (!args->positional.empty())
        return fail("examples: takes no arguments", kExitUsage);
    for (const auto& example : core::exampleList())
        std::cout << "  example:" << example.name << std::string(16 - std::min<std::size_t>(15, example.name.size()), ' ')
                  << example.description << "\n";
    return kExitOk;
}

int commandExport(const std::vector<std::string>& words)
{
    const std::string help = std::string(R"(usage: memplan export MODEL [--onnx FILE] [--graph-json FILE] [--csv FILE] [options]

Writes MODEL in another format: an ONNX model or a JSON graph (graphs only), or the allocation
problem as CSV (id,lower,upper,size). Example: memplan export example:unet --onnx unet.onnx
The ONNX model is for planning, not running: float weights are written as zeros of their size.
With --training the graph written is the training graph (forward, then backward; gradient ops in
domain ai.memplan.training); with --checkpoint sqrt|N also its checkpoint recomputations.
)") + kModelOptionsHelp + trainingHelp();
    int code = kExitOk;
    auto valued = kModelOptions;
    valued.insert({ "onnx", "graph-json", "csv", "checkpoint" });
    const auto args = parseOrExplain("export", words, valued, { "training", "persistent-grads", "grads-in-arena" }, help, code);
    if (!args)
        return code;
    if (!args->has("onnx") && !args->has("graph-json") && !args->has("csv"))
        return fail("export: say what to write: --onnx FILE, --graph-json FILE or --csv FILE", kExitUsage);
    if (const auto status = checkStrategyOptions(*args); !status)
        return fail("export: " + status.error().message, strategyOptionsExitCode(status.error()));
    auto workload = loadModel("export", *args, code);
    if (!workload)
        return code;
    if (const auto status = applyTrainingFlag(*args, *workload); !status)
        return fail("export: " + status.error().message);
    if (const auto status = checkCheckpointTarget(*args, *workload); !status)
        return fail("export: " + status.error().message, kExitUsage);
    if (const auto status = applyGradsInArenaFlag(*args, *workload); !status)
        return fail("export: " + status.error().message, strategyOptionsExitCode(status.error()));
    std::vector<core::StrategyReport> unused;
    if (const auto status = applyStrategyFlags(*args, *workload, unused); !status)
        return fail("export: " + status.error().message);
    if ((args->has("onnx") || args->has("graph-json")) && !workload->graph)
        return fail("export: " + workload->source + " is an allocation problem, not a graph; export it with --csv FILE");
    std::string error;
    // Ops in schedule order, so the file's order is the plan's: strategies insert ops (a checkpoint's
    // recomputations) at the end of the graph, before the ops that read them in the schedule.
    core::Graph ordered;
    if (workload->graph) {
        ordered = *workload->graph;
        ordered.ops.clear();
        std::vector<bool> placed(workload->graph->ops.size(), false);
        for (const auto op : workload->schedule.order)
            if (op >= 0 && std::size_t(op) < placed.size() && !placed[std::size_t(op)]) {
                ordered.ops.push_back(workload->graph->ops[std::size_t(op)]);
                placed[std::size_t(op)] = true;
            }
        for (std::size_t op = 0; op < placed.size(); ++op)
            if (!placed[op])
                ordered.ops.push_back(workload->graph->ops[op]);
    }
    if (const auto path = args->value("onnx")) {
        const auto status = core::exportOnnx(ordered, *path);
        if (!status)
            return fail(status.error().message);
    }
    if (const auto path = args->value("graph-json"); path && !writeFile(*path, core::exportJsonGraph(ordered), error))
        return fail(error);
    if (const auto path = args->value("csv"); path && !writeFile(*path, core::exportProblemCsv(workload->problem), error))
        return fail(error);
    return kExitOk;
}

int commandRender(const std::vector<std::string>& words)
{
    const std::string help = std::string(R"(usage: memplan render MODEL [--out DIR] [--format png|svg] [--size WxH] [--planner NAME] [options]

Plans MODEL as `memplan plan` does (the same planner, model, training and strategy options) and
draws the Studio's views of the plan to image files, without a window or a display:
DIR/memory-curve, lifetime-bars, arena-layout and coloring, each .png or .svg.

  --out DIR             folder for the images, created when missing (default: .)
  --format png|svg      image format (default png)
  --size WxH            pixels of each image (640x240 to 8000x8000; default 1400x420, with the lifetime
                        bars and coloring as tall as their rows need, up to 8000; a view whose rows
                        do not fit says which it shows)
  --color-by WHAT       color the lifetime bars and arena by kind, category or module (default: category
                        for a captured PyTorch step, kind otherwise; docs/PYTORCH.md)
)") + kPlannerOptionsHelp + kModelOptionsHelp + kWorkspacesHelp + strategyHelp() + trainingHelp() + "\nplanners:\n" + plannerList();
    int code = kExitOk;
    const auto args = parseOrExplain("render", words, planValuedOptions({ "out", "format", "size", "color-by" }), planSwitches(), help, code);
    if (!args)
        return code;
    RenderOptions options;
    options.outDir = args->value("out").value_or(".");
    options.format = args->value("format").value_or("png");
    if (options.format != "png" && options.format != "svg")
        return fail("render: --format '" + options.format + "': expected png or svg", kExitUsage);
    options.colorBy = args->value("color-by").value_or("");
    if (!options.colorBy.empty() && options.colorBy != "kind" && options.colorBy != "category" && options.colorBy != "module")
        return fail("render: --color-by '" + options.colorBy + "': expected kind, category or module", kExitUsage);
    if (const auto size = args->value("size")) {
        const auto x = size->find('x');
        const auto w = x == std::string::npos ? std::nullopt : parseInteger(size->substr(0, x));
        const auto h = x == std::string::npos ? std::nullopt : parseInteger(size->substr(x + 1));
        if (!w || !h || *w < 640 || *h < 240 || *w > 8000 || *h > 8000)
            return fail("render: --size '" + *size + "': expected WIDTHxHEIGHT in pixels, 640x240 to 8000x8000", kExitUsage);
        options.width = int(*w);
        options.height = int(*h);
        options.fitRows = false;
    }
    const auto planned = planModel("render", *args, code, true);
    if (!planned)
        return code;
    std::vector<std::filesystem::path> written;
    std::string error;
    const StrategyMarking marking { planned->original ? &*planned->original : nullptr, &planned->state };
    if (!renderViews(planned->workload, planned->plan, options, written, error, marking))
        return fail("render: " + error);
    for (const auto& path : written)
        std::cout << path.string() << "\n";
    return kExitOk;
}

} // namespace

namespace {
// Everything written to std::cerr (each command's own messages included) passes through this:
// control characters other than the line end are escaped, so text from a file cannot drive the
// terminal. fail() escapes its line ends too, since its messages are one line.
class PrintableStderr : public std::streambuf {
public:
    explicit PrintableStderr(std::streambuf* target) : m_target(target) { }

protected:
    int_type overflow(int_type ch) override
    {
        if (traits_type::eq_int_type(ch, traits_type::eof()))
            return sync() == 0 ? traits_type::not_eof(ch) : traits_type::eof();
        const char c = traits_type::to_char_type(ch);
        const auto text = c == '\n' ? std::string(1, c) : core::printable(std::string_view(&c, 1));
        return m_target->sputn(text.data(), std::streamsize(text.size())) == std::streamsize(text.size()) ? ch : traits_type::eof();
    }
    int sync() override { return m_target->pubsync(); }

private:
    std::streambuf* m_target;
};
} // namespace

int main(int argc, char** argv)
{
    // Never destroyed: std::cerr may be flushed after main returns.
    std::cerr.rdbuf(new PrintableStderr(std::cerr.rdbuf()));
    std::vector<std::string> words(argv + 1, argv + argc);
    if (words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
        std::cout << kMainHelp;
        return words.empty() ? kExitUsage : kExitOk;
    }
    if (words[0] == "--version") {
        std::cout << "memplan " MEMPLAN_VERSION "\n";
        return kExitOk;
    }
    const auto command = words[0];
    words.erase(words.begin());
    try {
        if (command == "plan")
            return commandPlan(words);
        if (command == "compare")
            return commandCompare(words);
        if (command == "examples")
            return commandExamples(words);
        if (command == "export")
            return commandExport(words);
        if (command == "render")
            return commandRender(words);
        if (command == "run")
            return runCommand(words);
        if (command == "scenario")
            return scenarioCommand(words);
        if (command == "trace")
            return traceCommand(words);
        if (command == "bench") {
            int code = kExitOk;
            const auto args = parseOrExplain("bench", words, benchValuedOptions(), {}, benchHelp(), code);
            return args ? runBench(*args) : code;
        }
    } catch (const std::bad_alloc&) {
        // Sizes are checked against the memory available before large allocations; this is what
        // slipped past them. Name what was being worked on: the first operand is the model or folder.
        const auto operand = std::find_if(words.begin(), words.end(), [](const std::string& w) { return !w.starts_with("-"); });
        return fail(command + (operand == words.end() ? "" : ": " + *operand) + ": out of memory (std::bad_alloc)");
    } catch (const std::exception& e) {
        // Last line of defence: a bug must still end with a message, not an abort.
        return fail(command + ": internal error: " + e.what());
    }
    return fail("unknown command '" + command + "' (see memplan --help)", kExitUsage);
}
