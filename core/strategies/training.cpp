// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/training.h"

#include <algorithm>
#include <set>

namespace core {

namespace {
using Types = std::set<std::string, std::less<>>;

const Types kReadsOutput { "Relu", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Exp", "Sqrt", "Reciprocal" };
const Types kReadsInput { "Gelu", "Erf", "LeakyRelu", "Elu", "Selu", "Celu", "Softplus", "Softsign", "HardSigmoid",
    "HardSwish", "Mish", "Swish", "ThresholdedRelu", "Log", "Abs", "Clip", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
    "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "ReduceL1", "ReduceL2", "ReduceLogSumExp", "ReduceSumSquare",
    "ReduceProd", "LpNormalization", "CumSum" };
const Types kReadsXAndW { "Conv", "ConvTranspose", "Gemm", "MatMul", "FusedMatMul" };
const Types kNormalizations { "BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization",
    "SimplifiedLayerNormalization", "RMSNormalization" };
const Types kReadsInputAndOutput { "MaxPool", "GlobalMaxPool", "ReduceMax", "ReduceMin", "LpPool" };
const Types kReadsAllInputs { "Mul", "Div", "Pow", "Min", "Max", "PRelu" };
const Types kShapesOnly { "Add", "Sub", "Neg", "Identity", "Concat", "Split", "Slice", "Reshape", "Flatten", "Squeeze",
    "Unsqueeze", "Transpose", "Pad", "Expand", "Tile", "ReduceSum", "ReduceMean", "AveragePool", "GlobalAveragePool",
    "Resize", "Upsample", "Cast", "Sum", "Mean", "DepthToSpace", "SpaceToDepth", "ReverseSequence" };
const Types kReadsIndices { "Gather", "GatherElements", "GatherND" };
// Outputs carry no gradient: shapes, indices, comparisons, constants, random values, rounding.
const Types kNoGradient { "Shape", "Size", "Floor", "Ceil", "Round", "Sign", "ArgMax", "ArgMin", "NonZero",
    "ConstantOfShape", "Range", "EyeLike", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
    "Multinomial", "Constant", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not", "And", "Or", "Xor",
    "IsNaN", "IsInf", "NonMaxSuppression", "OneHot", "BitShift" };

// Input slots that are settings, not data: no gradient flows into them even when they are float.
bool settingSlot(const Op& op, std::size_t slot)
{
    const auto& t = op.type;
    if (t == "Resize" || t == "Upsample" || t == "Pad" || t == "Clip" || t == "Dropout" || t == "Pow" || t == "Slice"
        || t == "Reshape" || t == "Expand" || t == "Tile" || t == "TopK" || t == "Split" || t == "Squeeze" || t == "Unsqueeze"
        || kReadsIndices.count(t) || t == "ReduceSum" || t == "ReduceMean")
        return slot >= 1;
    if (t == "BatchNormalization")
        return slot >= 3; // running mean and variance
    if (t == "Where")
        return slot == 0;
    return false;
}

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
} // namespace

bool isDifferentiableDType(DType dtype)
{
    return dtype == DType::Float32 || dtype == DType::Float16 || dtype == DType::BFloat16 || dtype == DType::Float64
        || dtype == DType::Float8;
}

GradientNeeds gradientNeeds(const Op& op)
{
    GradientNeeds needs;
    const auto& t = op.type;
    const int inputs = static_cast<int>(op.inputs.size());
    auto firstInputs = [&](int n) {
        for (int i = 0; i < std::min(n, inputs); ++i)
            needs.inputs.push_back(i);
    };
    if (kReadsOutput.count(t))
        needs.outputs = { 0 };
    else if (kReadsInput.count(t))
        firstInputs(1);
    else if (kReadsXAndW.count(t) || kNormalizations.count(t))
        firstInputs(2); // X and W; X and the scale
    else if (kReadsInputAndOutput.count(t)) {
        firstInputs(1);
        needs.outputs = { 0 };
    } else if (kReadsAllInputs.count(t))
        firstInputs(inputs);
    else if (kReadsIndices.count(t))
        needs.inputs = { 1 };
    else if (t == "Where")
        needs.inputs = { 0 };
    else if (t == "Dropout")
        needs.outputs = { 1 };
    else if (!kShapesOnly.count(t) && !kNoGradient.count(t)) {
        firstInputs(inputs);
        needs.known = false;
    }
    return needs;
}

Step backwardStart(const Graph& graph, const Schedule& schedule)
{
    for (Step s = 0; s < schedule.steps(); ++s) {
        const auto& op = graph.ops[schedule.order[s]];
        if (op.type == kLossSeedType && op.domain == kTrainingDomain)
            return s;
    }
    return schedule.steps();
}

Expected<Workload> appendBackwardPass(const Workload& workload, const TrainingOptions& options)
{
    if (!workload.graph)
        return makeError(ErrorCode::InvalidArgument,
            workload.source + ": an allocation problem has no graph; training mode needs a model (.onnx, .json or example:NAME)");
    Graph graph = *workload.graph;
    const auto& forward = workload.schedule.order;
    for (const auto& op : graph.ops)
        if (op.domain == kTrainingDomain)
            return makeError(ErrorCode::InvalidArgument, workload.source + ": the graph already has a backward pass (op '" + op.name + "')");
    Names names;
    for (const auto& t : graph.tensors)
        names.taken.insert(t.name);
    for (const auto& op : graph.ops)
        names.taken.insert(op.name);

    // Dropout keeps its mask for the backward pass.
    for (auto opIndex : forward) {
        auto& op = graph.ops[opIndex];
        if (op.type != "Dropout" || op.outputs.size() != 1 || !op.outputSlots.empty() || op.inputs.empty())
            continue;
        Tensor mask = graph.tensors[op.inputs[0]];
        mask.name = names.fresh(opLabel(op, opIndex) + ".mask");
        mask.dtype = DType::Bool;
        mask.kind = TensorKind::Activation;
        mask.size = tensorBytes(DType::Bool, mask.shape);
        mask.values.clear();
        op.outputs.push_back(addTensor(graph, std::move(mask)));
    }

    const auto tensorCount = graph.tensors.size();
    auto sized = [&](TensorIndex t) { return graph.tensors[t].size > 0; };
    auto floatTensor = [&](TensorIndex t) { return isDifferentiableDType(graph.tensors[t].dtype) && sized(t); };
    auto isFloatInput = [&](const Op& op, std::size_t slot) { return !settingSlot(op, slot) && floatTensor(op.inputs[slot]); };

    // Forward: which tensors depend on a trainable weight through differentiable inputs.
    std::vector<bool> trainable(tensorCount, false);
    int scalarConstants = 0, unsizedWeights = 0;
    for (std::size_t t = 0; t < tensorCount; ++t) {
        const auto& tensor = graph.tensors[t];
        if (tensor.kind != TensorKind::Weight || !isDifferentiableDType(tensor.dtype))
            continue;
        if (!sized(static_cast<TensorIndex>(t)))
            ++unsizedWeights;
        else if (tensor.size <= dtypeBytes(tensor.dtype))
            ++scalarConstants; // a one-element float (a scale such as 1/sqrt(d)) is a constant, not a parameter
        else
            trainable[t] = true;
    }
    for (auto opIndex : forward) {
        const auto& op = graph.ops[opIndex];
        if (kNoGradient.count(op.type))
            continue;
        bool any = false;
        for (std::size_t slot = 0; slot < op.inputs.size(); ++slot)
            any = any || (isFloatInput(op, slot) && trainable[op.inputs[slot]]);
        for (auto out : op.outputs)
            trainable[out] = any && floatTensor(out);
    }

    // The loss reads these outputs.
    std::vector<TensorIndex> loss;
    if (options.lossOutputs.empty()) {
        for (auto t : graph.outputs)
            if (trainable[t])
                loss.push_back(t);
        if (loss.empty())
            return makeError(ErrorCode::InvalidModel,
                workload.source + ": no float graph output depends on a weight: there is nothing to differentiate");
    }
    for (const auto& name : options.lossOutputs) {
        const auto t = graph.findTensor(name);
        if (!t || std::find(graph.outputs.begin(), graph.outputs.end(), *t) == graph.outputs.end())
            return makeError(ErrorCode::InvalidArgument, workload.source + ": loss output '" + name + "' is not a graph output");
        if (!trainable[*t])
            return makeError(ErrorCode::InvalidModel,
                workload.source + ": loss output '" + name + "' does not depend on a weight through differentiable ops");
        loss.push_back(*t);
    }

    // Backward, first pass: which ops get a gradient op, and how many partial gradients each tensor receives.
    std::vector<bool> hasGrad(tensorCount, false);
    std::vector<int> partials(tensorCount, 0);
    for (auto t : loss) {
        hasGrad[t] = true;
        ++partials[t];
    }
    std::vector<std::vector<TensorIndex>> gradInputs(graph.ops.size()); // per op: distinct inputs it writes gradients for
    for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
        const auto& op = graph.ops[*it];
        if (kNoGradient.count(op.type) || std::none_of(op.outputs.begin(), op.outputs.end(), [&](TensorIndex o) { return hasGrad[o]; }))
            continue;
        auto& list = gradInputs[*it];
        for (std::size_t slot = 0; slot < op.inputs.size(); ++slot) {
            const auto in = op.inputs[slot];
            if (isFloatInput(op, slot) && trainable[in] && std::find(list.begin(), list.end(), in) == list.end())
                list.push_back(in);
        }
        for (auto in : list) {
            hasGrad[in] = true;
            ++partials[in];
        }
    }

    // Second pass: emit the seed, the gradient ops and the accumulations.
    Schedule schedule = workload.schedule;
    std::vector<TensorIndex> gradOf(tensorCount, -1);
    std::vector<std::vector<TensorIndex>> pending(tensorCount);
    int gradientOps = 0, accumulations = 0, weightGradients = 0;
    auto emit = [&](Op op) {
        graph.ops.push_back(std::move(op));
        schedule.order.push_back(static_cast<OpIndex>(graph.ops.size() - 1));
    };
    const auto weightGradientKind = options.weightGradientsInArena ? TensorKind::Output : TensorKind::Persistent;
    auto finalKind = [&](TensorIndex t) { return graph.tensors[t].kind == TensorKind::Weight ? weightGradientKind : TensorKind::Activation; };
    // A new partial gradient of `t` written by the op labelled `from`; accumulates after the last one.
    auto partialGradient = [&](TensorIndex t, const std::string& from) {
        Tensor grad = graph.tensors[t];
        grad.values.clear();
        grad.estimated = graph.tensors[t].estimated;
        const bool single = partials[t] == 1;
        grad.name = names.fresh(graph.tensors[t].name + (single ? ".grad" : ".grad@" + from));
        grad.kind = single ? finalKind(t) : TensorKind::Activation;
        const auto index = addTensor(graph, std::move(grad));
        pending[t].push_back(index);
        return index;
    };
    auto completeIfLast = [&](TensorIndex t) {
        if (static_cast<int>(pending[t].size()) != partials[t])
            return;
        if (partials[t] == 1) {
            gradOf[t] = pending[t][0];
        } else {
            Tensor sum = graph.tensors[t];
            sum.values.clear();
            sum.name = names.fresh(graph.tensors[t].name + ".grad");
            sum.kind = finalKind(t);
            gradOf[t] = addTensor(graph, std::move(sum));
            Op op;
            op.name = names.fresh(graph.tensors[t].name + ".grad.sum");
            op.type = "Sum";
            op.inputs = pending[t];
            op.outputs = { gradOf[t] };
            emit(std::move(op));
            ++accumulations;
        }
        if (graph.tensors[t].kind == TensorKind::Weight) {
            if (options.weightGradientsInArena)
                graph.outputs.push_back(gradOf[t]);
            ++weightGradients;
        }
    };

    Op seed;
    seed.name = names.fresh("loss.grad");
    seed.type = kLossSeedType;
    seed.domain = kTrainingDomain;
    seed.inputs = loss;
    for (auto t : loss)
        seed.outputs.push_back(partialGradient(t, seed.name));
    emit(std::move(seed));
    for (auto t : loss)
        completeIfLast(t);

    std::set<std::string> unknownTypes;
    for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
        const auto opIndex = *it;
        if (gradInputs[opIndex].empty())
            continue;
        const Op forwardOp = graph.ops[opIndex]; // a copy: emitting grows graph.ops
        Op grad;
        grad.name = names.fresh(opLabel(forwardOp, opIndex) + ".grad");
        grad.type = forwardOp.type + "Grad";
        grad.domain = kTrainingDomain;
        grad.attributes = forwardOp.attributes;
        for (auto o : forwardOp.outputs)
            if (hasGrad[o]) {
                if (gradOf[o] < 0)
                    return makeError(ErrorCode::InvalidModel, workload.source + ": internal: gradient of '" + graph.tensors[o].name
                            + "' incomplete at op '" + forwardOp.name + "'");
                grad.inputs.push_back(gradOf[o]);
            }
        const auto needs = gradientNeeds(forwardOp);
        if (!needs.known)
            unknownTypes.insert(forwardOp.type);
        auto read = [&](TensorIndex t) {
            if (t >= 0 && std::find(grad.inputs.begin(), grad.inputs.end(), t) == grad.inputs.end())
                grad.inputs.push_back(t);
        };
        for (auto slot : needs.inputs)
            if (slot < static_cast<int>(forwardOp.inputs.size()))
                read(forwardOp.inputs[slot]);
        for (auto slot : needs.outputs)
            if (slot < static_cast<int>(forwardOp.outputs.size()))
                read(forwardOp.outputs[slot]);
        for (auto in : gradInputs[opIndex])
            grad.outputs.push_back(partialGradient(in, grad.name));
        const auto writes = gradInputs[opIndex];
        emit(std::move(grad));
        ++gradientOps;
        for (auto in : writes)
            completeIfLast(in);
    }

    Workload result;
    result.source = workload.source;
    result.notes = workload.notes;
    result.bindings = workload.bindings;
    result.givenInputs = workload.givenInputs;
    result.notes.push_back("training mode: backward pass of " + std::to_string(gradientOps) + " gradient ops, "
        + std::to_string(accumulations) + " gradient accumulations and " + std::to_string(weightGradients)
        + " weight gradients after the " + std::to_string(forward.size()) + " forward ops"
        + (options.weightGradientsInArena ? "" : "; weight gradients are persistent, outside the arena"));
    if (!unknownTypes.empty()) {
        std::string list;
        for (const auto& t : unknownTypes)
            list += (list.empty() ? "" : ", ") + t;
        result.notes.push_back("training mode: no gradient rule for " + list + ": their gradients keep every input alive (conservative)");
    }
    if (scalarConstants > 0)
        result.notes.push_back("training mode: " + std::to_string(scalarConstants) + " one-element float weight(s) treated as constants (no gradient)");
    if (unsizedWeights > 0)
        result.notes.push_back("training mode: " + std::to_string(unsizedWeights) + " weight(s) of unknown size get no gradient");
    auto built = makeProblem(graph, schedule, ProblemOptions { workload.problem.alignment, workload.workspaces });
    if (!built)
        return makeError(built.error().code, workload.source + ": training mode: " + built.error().message);
    result.schedule = std::move(schedule);
    result.problem = std::move(built->problem);
    result.regions = std::move(built->regions);
    result.bufferTensor = std::move(built->bufferTensor);
    result.bufferOp = std::move(built->bufferOp);
    result.workspaces = workload.workspaces;
    result.graph = std::move(graph);
    return result;
}

} // namespace core
