// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/training.h"

#include "graph/capture.h"
#include "strategies/backwardrules.h"

#include <algorithm>
#include <set>

namespace core {

namespace {
std::string opLabel(const Op& op, OpIndex index) { return op.name.empty() ? op.type + "#" + std::to_string(index) : op.name; }

// Names unique in the graph: a suffix _2, _3, ... when taken.
struct Names {
    std::set<std::string> taken;
    std::string fresh(const std::string& wanted)
    {
        auto name = wanted;
        for (int i = 2; taken.count(name); ++i)
            name = wanted + "_" + std::to_string(i);
        taken.insert(name);
        return name;
    }
};

TensorIndex addTensor(Graph& graph, Tensor tensor)
{
    graph.tensors.push_back(std::move(tensor));
    return static_cast<TensorIndex>(graph.tensors.size() - 1);
}

bool passesGradient(const Op& op) { return backwardRule(op.type).flow != GradientFlow::NoGradient; }

// Input slots that are settings, not data: no gradient flows into them even when they are float.
bool settingSlot(const Op& op, std::size_t slot) { return backwardRule(op.type).settings.contains(static_cast<int>(slot)); }

// The slots of `range` that an op with `count` slots has.
std::vector<int> slotsOf(SlotRange range, std::size_t count)
{
    std::vector<int> slots;
    for (int slot = range.first; slot <= range.last && slot < static_cast<int>(count); ++slot)
        slots.push_back(slot);
    return slots;
}

// One backward pass under construction: the graph and schedule it extends, and what each stage of
// appendBackwardPass learns for the next. Per-tensor vectors cover the forward tensors (tensorCount).
struct Pass {
    Pass(const Workload& w, const TrainingOptions& o) : workload(w), options(o), forward(w.schedule.order), graph(*w.graph), schedule(w.schedule)
    {
        for (const auto& t : graph.tensors)
            names.taken.insert(t.name);
        for (const auto& op : graph.ops)
            names.taken.insert(op.name);
    }

    const Workload& workload;
    const TrainingOptions& options;
    const std::vector<OpIndex>& forward; // the forward schedule
    Graph graph;
    Schedule schedule;
    Names names;
    std::size_t tensorCount = 0; // forward tensors, Dropout masks included

    // Forward analysis.
    std::vector<bool> trainable; // depends on a trainable weight through differentiable inputs
    int scalarConstants = 0, unsizedWeights = 0;
    std::vector<TensorIndex> loss; // the outputs the loss reads

    // Backward, first pass.
    std::vector<bool> hasGrad;                        // receives a gradient
    std::vector<int> partials;                        // how many partial gradients it receives
    std::vector<std::vector<TensorIndex>> gradInputs; // per op: distinct inputs it writes gradients for

    // Second pass.
    std::vector<TensorIndex> gradOf;               // the complete gradient; -1 until the last partial is written
    std::vector<std::vector<TensorIndex>> pending; // partial gradients written so far
    std::set<std::string> unknownTypes;            // op types without a rule
    int gradientOps = 0, accumulations = 0, weightGradients = 0;

    bool sized(TensorIndex t) const { return graph.tensors[t].size > 0; }
    bool floatTensor(TensorIndex t) const { return isDifferentiableDType(graph.tensors[t].dtype) && sized(t); }
    bool isFloatInput(const Op& op, std::size_t slot) const { return !settingSlot(op, slot) && floatTensor(op.inputs[slot]); }
};

// Dropout keeps its mask for the backward pass (its rule reads output 1, the mask).
void keepDropoutMasks(Pass& p)
{
    for (auto opIndex : p.forward) {
        auto& op = p.graph.ops[opIndex];
        if (op.type != "Dropout" || op.outputs.size() != 1 || !op.outputSlots.empty() || op.inputs.empty())
            continue;
        Tensor mask = p.graph.tensors[op.inputs[0]];
        mask.name = p.names.fresh(opLabel(op, opIndex) + ".mask");
        mask.dtype = DType::Bool;
        mask.kind = TensorKind::Activation;
        mask.size = tensorBytes(DType::Bool, mask.shape);
        mask.values.clear();
        op.outputs.push_back(addTensor(p.graph, std::move(mask)));
    }
}

// Forward: which tensors depend on a trainable weight through differentiable inputs.
void markTrainable(Pass& p)
{
    p.trainable.assign(p.tensorCount, false);
    for (std::size_t t = 0; t < p.tensorCount; ++t) {
        const auto& tensor = p.graph.tensors[t];
        if (tensor.kind != TensorKind::Weight || !isDifferentiableDType(tensor.dtype))
            continue;
        if (!p.sized(static_cast<TensorIndex>(t)))
            ++p.unsizedWeights;
        else if (tensor.size <= dtypeBytes(tensor.dtype))
            ++p.scalarConstants; // a one-element float (a scale such as 1/sqrt(d)) is a constant, not a parameter
        else
            p.trainable[t] = true;
    }
    for (auto opIndex : p.forward) {
        const auto& op = p.graph.ops[opIndex];
        if (!passesGradient(op))
            continue;
        bool any = false;
        for (std::size_t slot = 0; slot < op.inputs.size(); ++slot)
            any = any || (p.isFloatInput(op, slot) && p.trainable[op.inputs[slot]]);
        for (auto out : op.outputs)
            p.trainable[out] = any && p.floatTensor(out);
    }
}

// The loss reads these outputs: the named ones, or every trainable graph output.
Status chooseLoss(Pass& p)
{
    const auto& source = p.workload.source;
    if (p.options.lossOutputs.empty()) {
        for (auto t : p.graph.outputs)
            if (p.trainable[t])
                p.loss.push_back(t);
        if (p.loss.empty())
            return makeError(ErrorCode::InvalidModel, source + ": no float graph output depends on a weight: there is nothing to differentiate");
    }
    for (const auto& name : p.options.lossOutputs) {
        const auto t = p.graph.findTensor(name);
        if (!t || std::find(p.graph.outputs.begin(), p.graph.outputs.end(), *t) == p.graph.outputs.end())
            return makeError(ErrorCode::InvalidArgument, source + ": loss output '" + name + "' is not a graph output");
        if (!p.trainable[*t])
            return makeError(ErrorCode::InvalidModel, source + ": loss output '" + name + "' does not depend on a weight through differentiable ops");
        p.loss.push_back(*t);
    }
    return {};
}

// Backward, first pass: which ops get a gradient op, and how many partial gradients each tensor receives.
void countGradients(Pass& p)
{
    p.hasGrad.assign(p.tensorCount, false);
    p.partials.assign(p.tensorCount, 0);
    for (auto t : p.loss) {
        p.hasGrad[t] = true;
        ++p.partials[t];
    }
    p.gradInputs.assign(p.graph.ops.size(), {});
    for (auto it = p.forward.rbegin(); it != p.forward.rend(); ++it) {
        const auto& op = p.graph.ops[*it];
        if (!passesGradient(op) || std::none_of(op.outputs.begin(), op.outputs.end(), [&](TensorIndex o) { return p.hasGrad[o]; }))
            continue;
        auto& list = p.gradInputs[*it];
        for (std::size_t slot = 0; slot < op.inputs.size(); ++slot) {
            const auto in = op.inputs[slot];
            if (p.isFloatInput(op, slot) && p.trainable[in] && std::find(list.begin(), list.end(), in) == list.end())
                list.push_back(in);
        }
        for (auto in : list) {
            p.hasGrad[in] = true;
            ++p.partials[in];
        }
    }
}

// Second pass: emit the seed, the gradient ops and the accumulations, appending each to the schedule.
void emit(Pass& p, Op op)
{
    p.graph.ops.push_back(std::move(op));
    p.schedule.order.push_back(static_cast<OpIndex>(p.graph.ops.size() - 1));
}

// The kind of t's complete gradient: weight gradients live to the end of the step.
TensorKind finalKind(const Pass& p, TensorIndex t)
{
    if (p.graph.tensors[t].kind != TensorKind::Weight)
        return TensorKind::Activation;
    return p.options.weightGradientsInArena ? TensorKind::Output : TensorKind::Persistent;
}

// A new partial gradient of `t` written by the op labelled `from`: t's dtype and shape.
TensorIndex partialGradient(Pass& p, TensorIndex t, const std::string& from)
{
    Tensor grad = p.graph.tensors[t];
    grad.values.clear();
    const bool single = p.partials[t] == 1;
    grad.name = p.names.fresh(p.graph.tensors[t].name + (single ? ".grad" : ".grad@" + from));
    grad.kind = single ? finalKind(p, t) : TensorKind::Activation;
    const auto index = addTensor(p.graph, std::move(grad));
    p.pending[t].push_back(index);
    return index;
}

// Once t's last partial gradient is written: t's gradient is that one, or their Sum emitted now.
void completeIfLast(Pass& p, TensorIndex t)
{
    auto& graph = p.graph;
    if (static_cast<int>(p.pending[t].size()) != p.partials[t])
        return;
    if (p.partials[t] == 1) {
        p.gradOf[t] = p.pending[t][0];
    } else {
        Tensor sum = graph.tensors[t];
        sum.values.clear();
        sum.name = p.names.fresh(graph.tensors[t].name + ".grad");
        sum.kind = finalKind(p, t);
        p.gradOf[t] = addTensor(graph, std::move(sum));
        Op op;
        op.name = p.names.fresh(graph.tensors[t].name + ".grad.sum");
        op.type = "Sum";
        op.inputs = p.pending[t];
        op.outputs = { p.gradOf[t] };
        emit(p, std::move(op));
        ++p.accumulations;
    }
    if (graph.tensors[t].kind == TensorKind::Weight) {
        if (p.options.weightGradientsInArena)
            graph.outputs.push_back(p.gradOf[t]);
        ++p.weightGradients;
    }
}

// The loss-gradient seed: reads the loss outputs, writes a gradient for each.
void emitSeed(Pass& p)
{
    Op seed;
    seed.name = p.names.fresh("loss.grad");
    seed.type = kLossSeedType;
    seed.domain = kTrainingDomain;
    seed.inputs = p.loss;
    for (auto t : p.loss)
        seed.outputs.push_back(partialGradient(p, t, seed.name));
    emit(p, std::move(seed));
    for (auto t : p.loss)
        completeIfLast(p, t);
}

// The gradient op of forward op `opIndex`: reads its output gradients and the forward tensors its
// rule names, writes a partial gradient per input in gradInputs.
Status emitGradientOp(Pass& p, OpIndex opIndex)
{
    const Op forwardOp = p.graph.ops[opIndex]; // a copy: emitting grows graph.ops
    Op grad;
    grad.name = p.names.fresh(opLabel(forwardOp, opIndex) + ".grad");
    grad.type = forwardOp.type + "Grad";
    grad.domain = kTrainingDomain;
    grad.attributes = forwardOp.attributes;
    for (auto o : forwardOp.outputs)
        if (p.hasGrad[o]) {
            if (p.gradOf[o] < 0)
                return makeError(ErrorCode::InvalidModel, p.workload.source + ": internal: gradient of '" + p.graph.tensors[o].name
                        + "' incomplete at op '" + forwardOp.name + "'");
            grad.inputs.push_back(p.gradOf[o]);
        }
    const auto needs = gradientNeeds(forwardOp);
    if (!needs.known)
        p.unknownTypes.insert(forwardOp.type);
    auto read = [&](TensorIndex t) {
        if (t >= 0 && std::find(grad.inputs.begin(), grad.inputs.end(), t) == grad.inputs.end())
            grad.inputs.push_back(t);
    };
    for (auto slot : needs.inputs)
        read(forwardOp.inputs[slot]);
    for (auto slot : needs.outputs)
        read(forwardOp.outputs[slot]);
    const auto writes = p.gradInputs[opIndex];
    for (auto in : writes)
        grad.outputs.push_back(partialGradient(p, in, grad.name));
    emit(p, std::move(grad));
    ++p.gradientOps;
    for (auto in : writes)
        completeIfLast(p, in);
    return {};
}

Status emitBackward(Pass& p)
{
    p.gradOf.assign(p.tensorCount, -1);
    p.pending.assign(p.tensorCount, {});
    emitSeed(p);
    for (auto it = p.forward.rbegin(); it != p.forward.rend(); ++it)
        if (!p.gradInputs[*it].empty())
            if (auto emitted = emitGradientOp(p, *it); !emitted)
                return emitted.error();
    return {};
}

// The training workload: the pass's graph and schedule, its notes, the problem rebuilt.
Expected<Workload> finish(Pass& p)
{
    const auto& workload = p.workload;
    Workload result;
    result.source = workload.source;
    result.notes = workload.notes;
    result.bindings = workload.bindings;
    result.givenInputs = workload.givenInputs;
    result.notes.push_back("training mode: backward pass of " + std::to_string(p.gradientOps) + " gradient ops, "
        + std::to_string(p.accumulations) + " gradient accumulations and " + std::to_string(p.weightGradients)
        + " weight gradients after the " + std::to_string(p.forward.size()) + " forward ops"
        + (p.options.weightGradientsInArena ? "" : "; weight gradients are persistent, outside the arena"));
    if (!p.unknownTypes.empty()) {
        std::string list;
        for (const auto& t : p.unknownTypes)
            list += (list.empty() ? "" : ", ") + t;
        result.notes.push_back("training mode: no gradient rule for " + list + ": their gradients keep every input alive (conservative)");
    }
    if (p.scalarConstants > 0)
        result.notes.push_back("training mode: " + std::to_string(p.scalarConstants) + " one-element float weight(s) treated as constants (no gradient)");
    if (p.unsizedWeights > 0)
        result.notes.push_back("training mode: " + std::to_string(p.unsizedWeights) + " weight(s) of unknown size get no gradient");
    auto built = makeProblem(p.graph, p.schedule, ProblemOptions { workload.problem.alignment, workload.workspaces });
    if (!built)
        return makeError(built.error().code, workload.source + ": training mode: " + built.error().message);
    result.schedule = std::move(p.schedule);
    result.problem = std::move(built->problem);
    result.regions = std::move(built->regions);
    result.bufferTensor = std::move(built->bufferTensor);
    result.bufferOp = std::move(built->bufferOp);
    result.workspaces = workload.workspaces;
    result.graph = std::move(p.graph);
    return result;
}
} // namespace

bool isDifferentiableDType(DType dtype)
{
    return dtype == DType::Float32 || dtype == DType::Float16 || dtype == DType::BFloat16 || dtype == DType::Float64
        || dtype == DType::Float8;
}

GradientNeeds gradientNeeds(const Op& op)
{
    const auto& rule = backwardRule(op.type);
    GradientNeeds needs;
    needs.inputs = slotsOf(rule.readsInputs, op.inputs.size());
    needs.outputs = slotsOf(rule.readsOutputs, op.outputs.size());
    needs.known = rule.flow != GradientFlow::NoRule;
    return needs;
}

Step backwardStart(const Graph& graph, const Schedule& schedule)
{
    const auto backward = phaseName(Phase::Backward);
    const bool captured = std::any_of(graph.ops.begin(), graph.ops.end(), [&](const Op& op) { return op.phase == backward; });
    for (Step s = 0; s < schedule.steps(); ++s) {
        const auto& op = graph.ops[schedule.order[s]];
        if (captured ? op.phase == backward : op.type == kLossSeedType && op.domain == kTrainingDomain)
            return s;
    }
    return schedule.steps();
}

Expected<Workload> gradientsInArena(const Workload& workload)
{
    if (!workload.graph)
        return makeError(ErrorCode::InvalidArgument, workload.source + ": an allocation problem has no gradients to move into the arena");
    Graph graph = *workload.graph;
    int moved = 0;
    for (std::size_t t = 0; t < graph.tensors.size(); ++t) {
        auto& tensor = graph.tensors[t];
        if (tensorCategory(tensor) != TensorCategory::Gradient || tensor.kind != TensorKind::Persistent || isVersionToken(tensor))
            continue;
        tensor.kind = TensorKind::Output;
        if (std::find(graph.outputs.begin(), graph.outputs.end(), static_cast<TensorIndex>(t)) == graph.outputs.end())
            graph.outputs.push_back(static_cast<TensorIndex>(t));
        ++moved;
    }
    if (moved == 0)
        return makeError(ErrorCode::InvalidArgument, workload.source
                + ": --grads-in-arena: the graph has no persistent gradient tensors (category \"gradient\", kind persistent), as a captured "
                  "training step writes them");
    auto built = makeProblem(graph, workload.schedule, ProblemOptions { workload.problem.alignment, workload.workspaces });
    if (!built)
        return makeError(built.error().code, workload.source + ": " + built.error().message);
    Workload result = workload;
    result.notes.push_back(std::to_string(moved) + " gradients planned in the arena (born where computed, alive to the end of the step)");
    result.problem = std::move(built->problem);
    result.regions = std::move(built->regions);
    result.bufferTensor = std::move(built->bufferTensor);
    result.bufferOp = std::move(built->bufferOp);
    result.graph = std::move(graph);
    return result;
}

Expected<Workload> appendBackwardPass(const Workload& workload, const TrainingOptions& options)
{
    if (!workload.graph)
        return makeError(ErrorCode::InvalidArgument,
            workload.source + ": an allocation problem has no graph; training mode needs a model (.onnx, .json or example:NAME)");
    for (const auto& op : workload.graph->ops) {
        if (op.domain == kTrainingDomain)
            return makeError(ErrorCode::InvalidArgument, workload.source + ": the graph already has a backward pass (op '" + op.name + "')");
        if (op.phase == phaseName(Phase::Backward))
            return makeError(ErrorCode::InvalidArgument, workload.source + ": --training: the graph is a captured training step, its backward "
                    "pass already in it (op '" + op.name + "' has phase backward); plan it without --training (--checkpoint, --recompute and "
                    "--swap work on it as it is)");
    }
    Pass p(workload, options);
    keepDropoutMasks(p);
    p.tensorCount = p.graph.tensors.size();
    markTrainable(p);
    if (auto chosen = chooseLoss(p); !chosen)
        return chosen.error();
    countGradients(p);
    if (auto emitted = emitBackward(p); !emitted)
        return emitted.error();
    return finish(p);
}

} // namespace core
