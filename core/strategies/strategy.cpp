// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/strategy.h"

#include "planners/metrics.h"
#include "strategies/fusion.h"
#include "strategies/inplace.h"
#include "strategies/recompute.h"
#include "strategies/reorder.h"
#include "strategies/simplify.h"
#include "strategies/swap.h"
#include "util/format.h"

#include <algorithm>
#include <map>

namespace core {

double extraSeconds(const std::vector<StrategyReport>& reports)
{
    double seconds = 0;
    for (const auto& r : reports)
        seconds += r.extraSeconds;
    return seconds;
}

TensorIndex Transformed::bufferRoot(TensorIndex t) const
{
    // Sharing never forms a cycle (an elementwise output shares an earlier-born input; a Concat input
    // shares the Concat's output, which shares nothing but later-born tensors), so the walk ends.
    while (sharesWith[t] != t)
        t = sharesWith[t];
    return t;
}

Bytes Transformed::offsetInRoot(TensorIndex t) const
{
    Bytes offset = 0;
    while (sharesWith[t] != t) {
        offset += shareOffset[t];
        t = sharesWith[t];
    }
    return offset;
}

TensorIndex Transformed::addCopyTensor(TensorIndex source, const std::string& name)
{
    Tensor copy = graph.tensors[source];
    copy.name = name;
    copy.kind = TensorKind::Activation;
    graph.tensors.push_back(std::move(copy));
    const auto t = static_cast<TensorIndex>(graph.tensors.size() - 1);
    origin.push_back(origin[source]);
    onHost.push_back(false);
    sharesWith.push_back(t);
    shareOffset.push_back(0);
    return t;
}

Transformed startTransform(Graph graph, Schedule schedule)
{
    Transformed state;
    const auto n = graph.tensors.size();
    state.graph = std::move(graph);
    state.schedule = std::move(schedule);
    state.origin.resize(n);
    state.sharesWith.resize(n);
    for (std::size_t t = 0; t < n; ++t)
        state.origin[t] = state.sharesWith[t] = static_cast<TensorIndex>(t);
    state.onHost.assign(n, false);
    state.shareOffset.assign(n, 0);
    return state;
}

Expected<GraphProblem> buildProblem(const Transformed& state, const ProblemOptions& options)
{
    auto built = makeProblem(state.graph, state.schedule, options);
    if (!built)
        return built;
    GraphProblem result;
    result.problem.alignment = built->problem.alignment;
    result.problem.steps = built->problem.steps;
    result.problem.capacity = built->problem.capacity;
    result.regions = std::move(built->regions);
    std::map<TensorIndex, std::size_t> slotOfRoot; // root tensor -> index in result buffers
    for (std::size_t i = 0; i < built->problem.buffers.size(); ++i) {
        const auto t = built->bufferTensor[i];
        auto& buffer = built->problem.buffers[i];
        if (t < 0) { // an op's workspace: nothing shares it, nothing moves it to host
            result.problem.buffers.push_back(std::move(buffer));
            result.bufferTensor.push_back(-1);
            result.bufferOp.push_back(built->bufferOp[i]);
            continue;
        }
        if (state.onHost[t])
            continue;
        const auto root = state.bufferRoot(t);
        const Bytes inside = state.offsetInRoot(t);
        const auto [it, fresh] = slotOfRoot.emplace(root, result.problem.buffers.size());
        if (fresh) {
            buffer.size = std::max(buffer.size, alignUp(inside + state.graph.tensors[t].size, result.problem.alignment));
            buffer.name = state.graph.tensors[std::size_t(root)].name; // a Concat input's buffer is its output's
            if (inside > 0)
                buffer.tensorOffsets.assign(buffer.tensors.size(), inside);
            result.problem.buffers.push_back(std::move(buffer));
            result.bufferTensor.push_back(root);
            result.bufferOp.push_back(-1);
            continue;
        }
        auto& merged = result.problem.buffers[it->second];
        merged.lifetime.start = std::min(merged.lifetime.start, buffer.lifetime.start);
        merged.lifetime.end = std::max(merged.lifetime.end, buffer.lifetime.end);
        merged.size = std::max(merged.size, alignUp(inside + state.graph.tensors[t].size, result.problem.alignment));
        if (inside > 0 || !merged.tensorOffsets.empty()) {
            merged.tensorOffsets.resize(merged.tensors.size(), 0);
            merged.tensorOffsets.insert(merged.tensorOffsets.end(), buffer.tensors.size(), inside);
        }
        merged.tensors.insert(merged.tensors.end(), buffer.tensors.begin(), buffer.tensors.end());
        if (buffer.kind == TensorKind::Output || (buffer.kind == TensorKind::Input && merged.kind == TensorKind::Activation))
            merged.kind = buffer.kind;
    }
    return result;
}

Bytes transformedLowerBound(const Transformed& state, Bytes alignment, bool workspaces)
{
    const auto built = buildProblem(state, ProblemOptions { alignment, workspaces });
    return built ? lowerBound(built->problem) : Bytes(-1);
}

const std::vector<std::unique_ptr<Strategy>>& strategies()
{
    static const auto list = [] {
        std::vector<std::unique_ptr<Strategy>> v;
        v.push_back(std::make_unique<SimplifyStrategy>());
        v.push_back(std::make_unique<FusionStrategy>());
        v.push_back(std::make_unique<ReorderStrategy>());
        v.push_back(std::make_unique<RecomputeStrategy>());
        v.push_back(std::make_unique<SwapStrategy>());
        v.push_back(std::make_unique<InPlaceStrategy>());
        return v;
    }();
    return list;
}

std::vector<std::string> strategyNames()
{
    std::vector<std::string> names;
    for (const auto& s : strategies())
        names.emplace_back(s->name());
    return names;
}

const Strategy* strategyByName(std::string_view name)
{
    for (const auto& s : strategies())
        if (s->name() == name)
            return s.get();
    return nullptr;
}

Expected<Transformed> runStrategy(const Strategy& strategy, Transformed state, const StrategyOptions& options)
{
    const Bytes before = transformedLowerBound(state, options.alignment, options.workspaces);
    Transformed untouched = state;
    auto result = strategy.apply(std::move(state), options);
    if (!result)
        return result;
    if (result->reports.empty() || result->reports.back().name != strategy.name()) {
        result->reports.emplace_back();
        result->reports.back().name = std::string(strategy.name());
    }
    auto& report = result->reports.back();
    report.lowerBoundBefore = before;
    report.lowerBoundAfter = transformedLowerBound(*result, options.alignment, options.workspaces);
    // Kept when it lowers the peak, or leaves it where it was at no cost (fusion and in-place save
    // time even then). Not kept when it raises the peak (a fused group's scratch with op workspaces,
    // a checkpoint policy on a small graph) or only adds work or transfers for the same peak: the
    // state goes on as it was, and the report says why.
    const bool costs = report.extraFlops > 0 || report.swappedBytes > 0;
    if (report.lowerBoundAfter < before || (report.lowerBoundAfter == before && !costs))
        return result;
    StrategyReport kept;
    kept.name = report.name;
    kept.lowerBoundBefore = kept.lowerBoundAfter = before;
    if (report.lowerBoundAfter > before)
        kept.details.push_back("not applied: it would raise the lower bound from " + formatBytes(before) + " to "
            + formatBytes(report.lowerBoundAfter));
    else
        kept.details.push_back("not applied: it would leave the lower bound at " + formatBytes(before) + " and add "
            + (report.extraFlops > 0 ? formatFlops(report.extraFlops) + " extra FLOPs of recomputation"
                                     : formatBytes(report.swappedBytes) + " of host transfers"));
    untouched.reports.push_back(std::move(kept));
    return untouched;
}

namespace {
constexpr char kStepOpen = '\x1e', kStepClose = '\x1f'; // around "OP,STEP" in a detail; never in a name
} // namespace

std::string stepOf(OpIndex op, Step now)
{
    return kStepOpen + std::to_string(op) + "," + std::to_string(now) + kStepClose;
}

void resolveSteps(std::vector<StrategyReport>& reports, const Schedule& schedule)
{
    std::map<OpIndex, Step> stepOfOp;
    for (Step s = 0; s < schedule.steps(); ++s)
        stepOfOp[schedule.order[std::size_t(s)]] = s;
    for (auto& report : reports)
        for (auto& detail : report.details) {
            std::string out;
            std::size_t at = 0;
            for (auto open = detail.find(kStepOpen); open != std::string::npos; open = detail.find(kStepOpen, at)) {
                const auto close = detail.find(kStepClose, open);
                const auto comma = detail.find(',', open);
                if (close == std::string::npos || comma > close)
                    break;
                const OpIndex op = std::stoll(detail.substr(open + 1, comma - open - 1));
                const auto found = stepOfOp.find(op);
                out += detail.substr(at, open - at)
                    + (found != stepOfOp.end() ? std::to_string(found->second) : detail.substr(comma + 1, close - comma - 1));
                at = close + 1;
            }
            detail = out + detail.substr(at);
        }
}

namespace {

bool named(const std::vector<std::string>& names, std::string_view name)
{
    return std::find(names.begin(), names.end(), name) != names.end();
}

// The named strategies, in pipeline order, on the workload's graph.
Expected<Transformed> runPipeline(const Workload& workload, const std::vector<std::string>& names, const StrategyOptions& options)
{
    auto state = startTransform(*workload.graph, workload.schedule);
    for (const auto& strategy : strategies()) {
        if (!named(names, strategy->name()))
            continue;
        auto next = runStrategy(*strategy, std::move(state), options);
        if (!next)
            return makeError(next.error().code, workload.source + ": " + std::string(strategy->name()) + ": " + next.error().message);
        state = std::move(*next);
    }
    resolveSteps(state.reports, state.schedule);
    return state;
}

// The sets of named strategies applyStrategies also runs without (see there), in a fixed order.
std::vector<std::vector<std::string>> leaveOutCandidates(const std::vector<std::string>& names)
{
    std::vector<std::vector<std::string>> sets;
    if (named(names, "simplify") && names.size() > 1)
        sets.push_back({ "simplify" });
    if (!named(names, "inplace"))
        return sets;
    for (const char* name : { "fuse", "recompute", "swap" })
        if (named(names, name))
            sets.push_back({ name });
    if (named(names, "recompute") && named(names, "swap"))
        sets.push_back({ "recompute", "swap" });
    return sets;
}

// Why a later strategy does better without `name`: what its rewrites take from the others.
std::string whyWorse(const std::string& name)
{
    if (name == "fuse")
        return "the intermediates fusion removes are the tensors inplace would have shared";
    if (name == "simplify")
        return "the later strategies find more to share in the model as loaded";
    return "rewrites break what inplace shares";
}

// See applyStrategies: runs without each candidate set, and takes a run that does at least as well
// for less; the strategies it left out get a report saying why.
Status leaveOutOutdone(const Workload& workload, const std::vector<std::string>& names, const StrategyOptions& options, Transformed& state,
    std::vector<std::string>& left)
{
    const auto leaveOut = leaveOutCandidates(names);
    const Bytes withAll = transformedLowerBound(state, options.alignment, options.workspaces);
    Bytes bestBound = withAll;
    double bestSeconds = extraSeconds(state.reports);
    for (const auto& out : leaveOut) {
        std::vector<std::string> fewer;
        for (const auto& n : names)
            if (!named(out, n))
                fewer.push_back(n);
        auto other = runPipeline(workload, fewer, options);
        if (!other)
            return other.error();
        const Bytes bound = transformedLowerBound(*other, options.alignment, options.workspaces);
        const double seconds = extraSeconds(other->reports);
        if (bound < 0 || !(bound < bestBound || (bound == bestBound && seconds < bestSeconds)))
            continue;
        state = std::move(*other);
        bestBound = bound;
        bestSeconds = seconds;
        left = out;
    }
    if (left.empty())
        return {};
    const auto without = left.size() == 1 ? left[0] : left[0] + " and " + left[1];
    auto reason = whyWorse(left[0]);
    if (reason == whyWorse("recompute"))
        reason = (left.size() == 1 ? "its " : "their ") + reason;
    const auto why = bestBound < withAll
        ? "left out: without " + without + " the strategies reach " + formatBytes(bestBound) + (left.size() == 1 ? ", with it " : ", with them ")
            + formatBytes(withAll) + " (" + reason + ")"
        : "left out: without " + without + " the strategies reach the same " + formatBytes(bestBound) + " in less estimated time";
    // A report per strategy left out, at its place in the pipeline order.
    const Bytes finalBound = bestBound;
    for (const auto& name : left) {
        const auto& order = strategies();
        const auto rank = [&](std::string_view n) {
            return std::find_if(order.begin(), order.end(), [&](const auto& s) { return s->name() == n; }) - order.begin();
        };
        auto at = std::find_if(state.reports.begin(), state.reports.end(), [&](const StrategyReport& r) { return rank(r.name) > rank(name); });
        StrategyReport report;
        report.name = name;
        // Nothing changed at its place: the bound is the one the next strategy starts from.
        report.lowerBoundBefore = report.lowerBoundAfter = at != state.reports.end() ? at->lowerBoundBefore : finalBound;
        report.details.push_back(why);
        state.reports.insert(at, std::move(report));
    }
    return {};
}

} // namespace

Expected<StrategyRun> applyStrategies(const Workload& workload, const std::vector<std::string>& names,
    const StrategyOptions& options)
{
    for (const auto& name : names)
        if (!strategyByName(name))
            return makeError(ErrorCode::InvalidArgument, "unknown strategy '" + name + "'");
    if (!workload.graph)
        return makeError(ErrorCode::InvalidArgument,
            workload.source + ": an allocation problem has no graph; strategies need a model (.onnx, .json or example:NAME)");
    auto effective = options;
    effective.workspaces = workload.workspaces;
    auto pipeline = runPipeline(workload, names, effective);
    if (!pipeline)
        return pipeline.error();
    auto state = std::move(*pipeline);
    std::vector<std::string> leftOut;
    if (effective.leaveOutOutdone && !leaveOutCandidates(names).empty())
        if (const auto status = leaveOutOutdone(workload, names, effective, state, leftOut); !status)
            return status.error();
    auto built = buildProblem(state, ProblemOptions { workload.problem.alignment, workload.workspaces });
    if (!built)
        return makeError(built.error().code, workload.source + ": " + built.error().message);
    StrategyRun run;
    run.workload.source = workload.source;
    run.workload.notes = workload.notes;
    run.workload.bindings = workload.bindings;
    run.workload.givenInputs = workload.givenInputs;
    run.workload.schedule = state.schedule;
    run.workload.problem = std::move(built->problem);
    run.workload.regions = std::move(built->regions);
    run.workload.bufferTensor = std::move(built->bufferTensor);
    run.workload.bufferOp = std::move(built->bufferOp);
    run.workload.nested = std::move(built->nested);
    run.workload.workspaces = workload.workspaces;
    run.workload.graph = state.graph;
    run.reports = state.reports;
    run.leftOut = std::move(leftOut);
    run.state = std::move(state);
    return run;
}

std::vector<std::vector<Step>> readSteps(const Graph& graph, const Schedule& schedule)
{
    std::vector<std::vector<Step>> reads(graph.tensors.size());
    for (Step s = 0; s < schedule.steps(); ++s) {
        const auto& op = graph.ops[schedule.order[s]];
        for (const auto* list : { &op.inputs, &op.captured })
            for (auto t : *list)
                if (reads[t].empty() || reads[t].back() != s)
                    reads[t].push_back(s);
    }
    return reads;
}

OpIndex insertOp(Transformed& state, Op op, Step step)
{
    const auto& order = state.schedule.order;
    if (!order.empty()) {
        const auto& next = state.graph.ops[std::size_t(order[std::size_t(std::min<Step>(step, Step(order.size()) - 1))])];
        if (!next.phase.empty())
            op.phase = next.phase;
    }
    state.graph.ops.push_back(std::move(op));
    const auto index = static_cast<OpIndex>(state.graph.ops.size() - 1);
    state.schedule.order.insert(state.schedule.order.begin() + step, index);
    return index;
}

} // namespace core
