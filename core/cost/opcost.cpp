// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "cost/opcost.h"

#include "exec/einsum.h"
#include "graph/capture.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

namespace core {

namespace {
const std::set<std::string> kViews { "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity" };
const std::set<std::string> kCheapElementwise { "Add", "Sub", "Mul", "Div", "Relu", "LeakyRelu", "PRelu", "Clip", "Abs", "Neg",
    "Max", "Min", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Not", "And", "Or", "Xor", "Equal", "Less",
    "Greater", "LessOrEqual", "GreaterOrEqual", "Where", "Cast", "Pow", "Mod", "HardSigmoid", "Dropout", "QuantizeLinear", "DequantizeLinear" };
const std::set<std::string> kCostlyElementwise { "Exp", "Log", "Erf", "Gelu", "Sigmoid", "Tanh", "Softplus", "Elu", "Selu",
    "Celu", "HardSwish", "Mish", "Sin", "Cos", "Swish", "SiLU" };
const std::set<std::string> kDataMovement { "Concat", "Split", "Slice", "Gather", "GatherElements", "GatherND", "Transpose",
    "Pad", "Expand", "Tile", "Resize", "Upsample", "DepthToSpace", "SpaceToDepth", "ScatterND", "ScatterElements" };
const std::set<std::string> kReductions { "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2",
    "ReduceL1", "ReduceSumSquare", "ReduceLogSumExp", "ArgMax", "ArgMin" };

double elements(const Tensor& t)
{
    if (t.shape.empty())
        return t.rankKnown ? 1.0 : 0.0;
    double n = 1;
    for (auto d : t.shape)
        n *= d > 0 ? static_cast<double>(d) : 0.0;
    return n;
}

double bytesOf(const Tensor& t) { return t.size > 0 ? static_cast<double>(t.size) : 0.0; }

double productFrom(const std::vector<std::int64_t>& shape, std::size_t first)
{
    double n = 1;
    for (std::size_t i = first; i < shape.size(); ++i)
        n *= shape[i] > 0 ? static_cast<double>(shape[i]) : 0.0;
    return n;
}

std::int64_t intAttribute(const Op& op, const std::string& name, std::int64_t fallback)
{
    const auto it = op.attributes.find(name);
    return it != op.attributes.end() && !it->second.ints.empty() ? it->second.ints.front() : fallback;
}
// Einsum: a multiply and an add for every combination of its labels' values (one operand: an add);
// the output's elements when the equation does not fit the shapes.
double einsumFlops(const Graph& graph, const Op& op, double out)
{
    std::vector<exec::Shape> shapes;
    for (auto t : op.inputs) {
        if (t < 0)
            return out;
        shapes.push_back(graph.tensors[t].shape);
    }
    const auto equation = op.attributes.find("equation");
    exec::EinsumLabels e;
    if (op.outputs.empty() || equation == op.attributes.end()
        || !exec::einsumLabels(equation->second.text, shapes, graph.tensors[op.outputs[0]].shape, e))
        return out;
    std::set<int> labels;
    for (const auto& v : e.inputs)
        labels.insert(v.begin(), v.end());
    double combinations = 1;
    for (int l : labels)
        combinations *= static_cast<double>(e.extent[std::size_t(l)]);
    return (shapes.size() > 1 ? 2.0 : 1.0) * combinations;
}

// A fast Fourier transform of n points costs about 5·n·log2(n) flops. STFT [batch, frames, bins, 2]:
// one transform per frame, n the window's length (a float vector input) or, without a window, the
// bins' (twice them, less 2, when one-sided, the default). DFT [..., bins, ..., 2]: one per line
// along the axis attribute (default 1), n from the bins as for STFT (one-sided off by default).
double fourierFlops(const Graph& graph, const Op& op)
{
    const auto& y = graph.tensors[op.outputs[0]].shape;
    const bool stft = op.type == "STFT";
    const std::int64_t rank = std::int64_t(y.size()), axis = stft ? 2 : intAttribute(op, "axis", 1);
    if (rank < 3 || axis < 1 || axis >= rank - 1 || y[std::size_t(axis)] < 1)
        return 0;
    const std::int64_t bins = y[std::size_t(axis)];
    double n = intAttribute(op, "onesided", stft ? 1 : 0) != 0 ? 2.0 * double(bins - 1) : double(bins);
    for (std::size_t k = 2; stft && k < op.inputs.size(); ++k) {
        const auto& t = graph.tensors[op.inputs[k]];
        if (t.shape.size() == 1 && (t.dtype == DType::Float32 || t.dtype == DType::Float64))
            n = double(t.shape[0]);
    }
    const double transforms = elements(graph.tensors[op.outputs[0]]) / (2.0 * double(bins));
    return n > 1 ? transforms * 5.0 * n * std::log2(n) : transforms;
}

// How many times a control-flow op runs its body, as far as import knows: a Loop's trip count (its
// first input's value), a Scan's (opset 9 on) length along its first scan input's axis, a
// SequenceMap's list length (its first input's element shapes); 1 when not known or beyond
// kMostCostedIterations (a while loop's INT64_MAX trip count).
double bodyIterations(const Graph& graph, const Op& op)
{
    constexpr std::int64_t kMostCostedIterations = std::int64_t(1) << 20;
    auto counted = [](std::int64_t n) { return n >= 1 && n <= kMostCostedIterations ? static_cast<double>(n) : 1.0; };
    if (op.type == "Loop" && !op.inputs.empty() && inputSlot(op, 0) == 0) {
        const auto& trips = graph.tensors[std::size_t(op.inputs[0])];
        return trips.values.size() == 1 ? counted(trips.values[0]) : 1.0;
    }
    const auto opset = graph.opsets.find("");
    if (op.type == "Scan" && (opset == graph.opsets.end() || opset->second >= 9)) {
        const auto scans = op.attributes.find("num_scan_inputs");
        if (scans == op.attributes.end() || scans->second.ints.size() != 1 || scans->second.ints[0] < 1
            || std::size_t(scans->second.ints[0]) > op.inputs.size())
            return 1.0;
        const auto& first = graph.tensors[std::size_t(op.inputs[op.inputs.size() - std::size_t(scans->second.ints[0])])];
        std::int64_t axis = 0;
        if (const auto axes = op.attributes.find("scan_input_axes"); axes != op.attributes.end() && !axes->second.ints.empty())
            axis = axes->second.ints[0];
        const auto rank = static_cast<std::int64_t>(first.shape.size());
        if (axis < 0)
            axis += rank;
        return first.rankKnown && axis >= 0 && axis < rank ? counted(first.shape[std::size_t(axis)]) : 1.0;
    }
    if (op.type == "SequenceMap" && !op.inputs.empty())
        return counted(static_cast<std::int64_t>(graph.tensors[std::size_t(op.inputs[0])].items.size()));
    return 1.0;
}

// The work a control-flow op's graphs (Op::bodies) do: an If runs one branch, costed as the larger
// (FLOPs, then bytes); a Loop, Scan or SequenceMap its body once per iteration (bodyIterations).
OpCost bodiesCost(const Graph& graph, const Op& op)
{
    OpCost largest;
    for (const auto& body : op.bodies) {
        OpCost one;
        for (const auto& inner : body.graph->ops)
            one += opCost(*body.graph, inner);
        if (std::make_pair(one.flops, one.bytesRead + one.bytesWritten) > std::make_pair(largest.flops, largest.bytesRead + largest.bytesWritten))
            largest = one;
    }
    const double times = bodyIterations(graph, op);
    largest.flops *= times;
    largest.bytesRead *= times;
    largest.bytesWritten *= times;
    return largest;
}
} // namespace

bool isViewOp(const std::string& type) { return kViews.count(type) > 0; }

bool costKnown(const Op& op)
{
    if (op.domain != kAtenDomain)
        return true;
    const auto flops = op.attributes.find("flops");
    return flops != op.attributes.end() && flops->second.ints.size() == 1 && !flops->second.list && flops->second.ints.front() >= 0;
}
bool isElementwiseOp(const std::string& type) { return kCheapElementwise.count(type) > 0 || kCostlyElementwise.count(type) > 0; }

OpCost opCost(const Graph& graph, const Op& op)
{
    OpCost cost;
    if (isViewOp(op.type) || op.type == "SwapOut" || op.type == "SwapIn")
        return cost; // a view reinterprets its input's memory; swap transfers are costed over the host link
    for (auto t : op.inputs)
        cost.bytesRead += bytesOf(graph.tensors[t]);
    for (auto t : op.outputs)
        cost.bytesWritten += bytesOf(graph.tensors[t]);
    const double out = op.outputs.empty() ? 0.0 : elements(graph.tensors[op.outputs[0]]);
    const Tensor* in0 = op.inputs.empty() ? nullptr : &graph.tensors[op.inputs[0]];
    const Tensor* in1 = op.inputs.size() < 2 ? nullptr : &graph.tensors[op.inputs[1]];
    const auto& t = op.type;
    if (op.domain == kAtenDomain) {
        const auto flops = op.attributes.find("flops");
        cost.flops = costKnown(op) ? static_cast<double>(flops->second.ints.front()) : 0.0;
        return cost;
    }
    // Gradient ops of training mode (strategies/training.h): inputs are dY, then X and W. Each gradient they
    // write (dX, dW) costs as much as the forward op; other gradient ops fall through to the rules below.
    if (op.domain == "ai.memplan.training" && op.inputs.size() >= 3 && (t == "ConvGrad" || t == "ConvTransposeGrad"
            || t == "GemmGrad" || t == "MatMulGrad" || t == "FusedMatMulGrad")) {
        const auto& dy = graph.tensors[op.inputs[0]];
        const auto& x = graph.tensors[op.inputs[1]];
        const auto& w = graph.tensors[op.inputs[2]];
        double forward = 0;
        if (t == "ConvGrad")
            forward = 2.0 * elements(dy) * productFrom(w.shape, 1);
        else if (t == "ConvTransposeGrad")
            forward = 2.0 * elements(x) * productFrom(w.shape, 1);
        else if (!x.shape.empty())
            forward = 2.0 * elements(dy) * static_cast<double>(std::max<std::int64_t>(
                t == "GemmGrad" && intAttribute(op, "transA", 0) != 0 ? x.shape.front() : x.shape.back(), 0));
        cost.flops = forward * static_cast<double>(op.outputs.size());
        return cost;
    }
    if (!op.bodies.empty()) {
        // A control-flow op reads its inputs and writes its outputs, and its graphs do their work.
        cost += bodiesCost(graph, op);
        return cost;
    }
    if (!op.body.empty()) {
        // A fused op does its body's work; its traffic is only what it reads and writes outside.
        for (const auto& part : op.body)
            cost.flops += opCost(graph, part).flops;
    } else if (t == "Conv" && in1) {
        cost.flops = 2.0 * out * productFrom(in1->shape, 1); // weight [M, C/group, kH, kW]
    } else if (t == "Einsum") {
        cost.flops = einsumFlops(graph, op, out);
    } else if (t == "ConvTranspose" && in0 && in1) {
        cost.flops = 2.0 * elements(*in0) * productFrom(in1->shape, 1); // weight [C, M/group, kH, kW]
    } else if ((t == "Gemm" || t == "MatMul" || t == "FusedMatMul") && in0 && !in0->shape.empty()) {
        const bool transA = t == "Gemm" && intAttribute(op, "transA", 0) != 0;
        const auto k = transA ? in0->shape.front() : in0->shape.back();
        cost.flops = 2.0 * out * static_cast<double>(std::max<std::int64_t>(k, 0));
    } else if ((t == "STFT" || t == "DFT") && !op.outputs.empty()) {
        cost.flops = fourierFlops(graph, op);
    } else if (t == "MaxPool" || t == "AveragePool" || t == "LpPool") {
        double kernel = 1;
        if (auto it = op.attributes.find("kernel_shape"); it != op.attributes.end())
            for (auto k : it->second.ints)
                kernel *= static_cast<double>(k);
        cost.flops = out * kernel;
    } else if (t == "GlobalAveragePool" || t == "GlobalMaxPool" || kReductions.count(t)) {
        cost.flops = in0 ? elements(*in0) : 0.0;
    } else if (t == "BatchNormalization") {
        cost.flops = 2.0 * out;
    } else if (t == "LayerNormalization" || t == "InstanceNormalization" || t == "GroupNormalization"
        || t == "RMSNormalization" || t == "SimplifiedLayerNormalization") {
        cost.flops = 8.0 * out;
    } else if (t == "Softmax" || t == "LogSoftmax") {
        cost.flops = 5.0 * out;
    } else if (kCostlyElementwise.count(t)) {
        cost.flops = 8.0 * out;
    } else if (kDataMovement.count(t)) {
        cost.flops = 0;
    } else {
        cost.flops = out; // cheap elementwise and anything unknown
    }
    return cost;
}

UnknownCosts costUnknownOps(const Graph& graph, const Schedule& schedule)
{
    UnknownCosts result;
    for (auto o : schedule.order) {
        const auto& op = graph.ops[std::size_t(o)];
        if (costKnown(op))
            continue;
        ++result.ops;
        if (result.types.size() < UnknownCosts::kListed && std::find(result.types.begin(), result.types.end(), op.type) == result.types.end())
            result.types.push_back(op.type);
    }
    return result;
}

double opSeconds(const Graph& graph, const Op& op, const DeviceProfile& device)
{
    const auto cost = opCost(graph, op);
    const DType dtype = op.outputs.empty() ? DType::Float32 : graph.tensors[op.outputs[0]].dtype;
    const double rate = device.flopsFor(dtype);
    const double compute = rate > 0 ? cost.flops / rate : 0.0;
    const double memory = device.memoryBandwidth > 0 ? (cost.bytesRead + cost.bytesWritten) / device.memoryBandwidth : 0.0;
    return std::max(compute, memory);
}

ScheduleCost scheduleCost(const Graph& graph, const Schedule& schedule, const DeviceProfile& device)
{
    ScheduleCost total;
    for (auto o : schedule.order) {
        const auto& op = graph.ops[o];
        const auto cost = opCost(graph, op);
        total.flops += cost.flops;
        total.bytesMoved += cost.bytesRead + cost.bytesWritten;
        total.seconds += opSeconds(graph, op, device);
    }
    return total;
}

std::vector<double> scheduleStepSeconds(const Graph& graph, const Schedule& schedule, const DeviceProfile& device)
{
    std::vector<double> seconds;
    seconds.reserve(schedule.order.size());
    for (auto o : schedule.order)
        seconds.push_back(opSeconds(graph, graph.ops[o], device));
    return seconds;
}

} // namespace core
