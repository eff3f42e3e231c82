// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/opcall.h"

#include "exec/onednn.h"

#include "cost/opcost.h"
#include "planners/planner.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace core::exec {

namespace {

bool isDefaultDomain(const Op& op) { return op.domain.empty() || op.domain == "ai.onnx"; }

std::int64_t tensorElements(const Tensor& t)
{
    const Bytes w = dtypeBytes(t.dtype);
    return w > 0 && t.size > 0 ? t.size / w : 0;
}

// Writes an op's outputs from the constant values import folded, when it knows all of them.
bool writeKnownValues(const Graph& g, const KernelCall& call, const Op& op)
{
    for (std::size_t k = 0; k < op.outputs.size(); ++k)
        if (!writeFoldedValues(g.tensors[op.outputs[k]], call.out[k].data, call.out[k].count))
            return false; // the synthetic kernel then writes every output
    return true;
}

// Constant: a weight output was filled before the run; any other (a graph output) is copied from
// the model's data each run. False when the contents are unknown (synthetic then).
bool runConstant(const Graph& g, const KernelCall& call, const RunOptions& options)
{
    if (call.out.size() != 1)
        return false;
    const TensorIndex t = call.op->outputs[0];
    if (g.tensors[t].kind == TensorKind::Weight)
        return true;
    if (!options.modelData)
        return false;
    const auto it = options.modelData->weights.find(t);
    if (it == options.modelData->weights.end() || Bytes(it->second.data.size()) != call.out[0].bytes())
        return false;
    std::memcpy(call.out[0].data, it->second.data.data(), it->second.data.size());
    return true;
}

// ConstantOfShape: every element the `value` attribute (from the model file), float 0 without one.
// Needs the model's data to know whether the attribute exists; false without it (synthetic then).
bool runConstantOfShape(const KernelCall& call, OpIndex opIndex, const RunOptions& options)
{
    if (!options.modelData || call.out.size() != 1)
        return false;
    const auto it = options.modelData->fillValues.find(opIndex);
    return fillConstant(call.out[0], it == options.modelData->fillValues.end() ? nullptr : &it->second);
}

PreparedCall prepareCall(const Graph& g, const Op& op, const TensorAccess& access)
{
    PreparedCall p;
    p.call.op = &op;
    p.call.outSlots = op.outputSlots;
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
        const auto slot = std::size_t(inputSlot(op, k));
        if (p.call.in.size() <= slot) {
            p.call.in.resize(slot + 1);
            p.inTensor.resize(slot + 1, -1);
        }
        p.call.in[slot] = tensorView(g, op.inputs[k], access.address(op.inputs[k]));
        p.call.in[slot].channelsLast = access.channelsLast && op.inputs[k] >= 0 && access.channelsLast(op.inputs[k]);
        p.inTensor[slot] = op.inputs[k];
    }
    for (auto t : op.outputs) {
        p.call.out.push_back(tensorView(g, t, access.address(t)));
        p.call.out.back().channelsLast = access.channelsLast && access.channelsLast(t);
    }
    p.outTensor = op.outputs;
    for (auto t : op.captured) {
        p.capturedTensor.push_back(t);
        p.captured.push_back(tensorView(g, t, access.address(t)));
    }
    const bool defaultDomain = isDefaultDomain(op);
    p.constant = defaultDomain && op.type == "Constant";
    p.fill = defaultDomain && op.type == "ConstantOfShape" && op.outputs.size() == 1 && !g.tensors[op.outputs[0]].estimated;
    const bool ownCode = defaultDomain && op.captured.empty();
    p.kernel = op.captured.empty() ? findKernel(op.domain, op.type) : nullptr;
    // Kernels need every input they read present; an unsized tensor runs synthetic. An estimated
    // output's static shape is only a bound: its op runs synthetic unless the run knows run-time
    // shapes (runWithShapes).
    // A sequence op runs its sequence kernel; SequenceEmpty reads nothing. An optional op runs its
    // optional kernel (an Identity of an optional holding a sequence too); Optional() reads nothing.
    const auto touches = [&](bool Tensor::*kind) {
        const auto is = [&](TensorIndex t) { return t >= 0 && g.tensors[std::size_t(t)].*kind; };
        return std::any_of(op.inputs.begin(), op.inputs.end(), is) || std::any_of(op.outputs.begin(), op.outputs.end(), is);
    };
    const bool optionalOp = ownCode && isOptionalOp(op.type, touches(&Tensor::optional));
    const auto sequenceKernel = ownCode && !optionalOp ? findSequenceKernel(op.type, touches(&Tensor::sequence)) : nullptr;
    const bool sequenceOp = sequenceKernel != nullptr;
    // An empty sequence (SequenceEmpty's) or an optional holding nothing (Optional()'s) has no bytes
    // to store, and needs none.
    const bool valueOp = sequenceOp || optionalOp;
    const auto holds = [&](TensorIndex t) { return access.stored(t) || (valueOp && g.tensors[std::size_t(t)].size == 0); };
    bool stored = (valueOp && p.inTensor.empty()) || (!p.inTensor.empty() && p.inTensor[0] >= 0 && holds(p.inTensor[0]));
    stored = stored && !op.outputs.empty(); // kernels write output 0 (a JSON graph may list none)
    // A data-dependent op is dynamic even when the model declares its output shapes.
    p.dynamic = (ownCode && findSizingKernel(op.type)) || valueOp;
    for (auto t : op.outputs) {
        stored = stored && holds(t);
        p.dynamic = p.dynamic || g.tensors[t].estimated;
    }
    if (p.dynamic && stored && ownCode) {
        p.shapedKernel = p.kernel;
        p.sizing = findSizingKernel(op.type);
        p.sequence = sequenceOp ? sequenceKernel : nullptr;
        p.optional = optionalOp;
    }
    if (p.dynamic || !stored)
        p.kernel = nullptr;
    return p;
}

// Every output holds zero elements (a known shape with a 0 dimension, e.g. an empty Slice of a
// shape): there is nothing to compute, so the op is exact whatever its kernel.
bool writesNothing(const Graph& g, const Op& op)
{
    if (op.outputs.empty())
        return false;
    for (auto t : op.outputs) {
        const auto& x = g.tensors[t];
        if (!x.rankKnown || x.estimated || std::find(x.shape.begin(), x.shape.end(), 0) == x.shape.end())
            return false;
    }
    return true;
}

// One op with the rules above; true when real (the synthetic kernel did not run).
bool runOne(const Graph& g, const KernelCall& call, OpIndex opIndex, Kernel kernel, bool constant, bool fill, const RunOptions& options)
{
    if (writesNothing(g, *call.op))
        return true;
    bool ok = (constant && runConstant(g, call, options)) || (fill && runConstantOfShape(call, opIndex, options));
    if (!ok && kernel && !(ok = runKernel(kernel, call)))
        claimDataFault(*call.op);
    if (!ok)
        ok = writeKnownValues(g, call, *call.op);
    if (!ok)
        syntheticKernel(call);
    return ok;
}

bool runOne(const Graph& g, const PreparedCall& p, const RunOptions& options)
{
    return runOne(g, p.call, p.opIndex, p.kernel, p.constant, p.fill, options);
}

struct AlignedFree {
    void operator()(std::byte* p) const { std::free(p); }
};

} // namespace

bool writeFoldedValues(const Tensor& t, std::byte* p, std::int64_t count)
{
    if (t.values.empty() || std::int64_t(t.values.size()) != count)
        return false;
    auto put = [&]<typename T>(T) {
        for (std::int64_t i = 0; i < count; ++i) {
            const T v = T(t.values[std::size_t(i)]);
            std::memcpy(p + i * std::int64_t(sizeof(T)), &v, sizeof(T));
        }
        return true;
    };
    switch (t.dtype) {
    case DType::Int64: return put(std::int64_t {});
    case DType::UInt64: return put(std::uint64_t {});
    case DType::Int32: return put(std::int32_t {});
    case DType::UInt32: return put(std::uint32_t {});
    case DType::Int16: return put(std::int16_t {});
    case DType::UInt16: return put(std::uint16_t {});
    case DType::Int8: return put(std::int8_t {});
    case DType::UInt8: return put(std::uint8_t {});
    case DType::Bool: return put(std::uint8_t {});
    default: return false;
    }
}

bool fillConstant(const TensorView& y, const HostTensor* value)
{
    const Bytes w = dtypeBytes(y.dtype);
    if (!value) {
        if (y.dtype != DType::Float32)
            return false;
        std::fill(y.f32(), y.f32() + y.count, 0.0f);
        return true;
    }
    if (value->dtype != y.dtype || Bytes(value->data.size()) != w)
        return false;
    for (std::int64_t i = 0; i < y.count; ++i)
        std::memcpy(y.data + i * w, value->data.data(), std::size_t(w));
    return true;
}

TensorView runtimeView(const Graph& g, TensorIndex t, std::byte* data, const RuntimeShapes& shapes)
{
    TensorView v = tensorView(g, t, data);
    if (g.tensors[t].estimated && shapes.known[std::size_t(t)]) {
        v.shape = shapes.shape[std::size_t(t)];
        v.count = elementCount(v.shape);
        v.items = shapes.items[std::size_t(t)];
        if (shapes.none[std::size_t(t)])
            v.data = nullptr;
    }
    return v;
}

HostTensor outputHeader(const Graph& g, TensorIndex t, const RuntimeShapes& shapes, Bytes& bytes)
{
    const auto& tensor = g.tensors[std::size_t(t)];
    const bool known = shapes.known[std::size_t(t)];
    const auto view = runtimeView(g, t, nullptr, shapes);
    HostTensor h;
    h.dtype = tensor.dtype;
    h.shape = view.shape;
    h.sequence = tensor.sequence;
    h.items.assign(view.items.begin(), view.items.end());
    h.optional = tensor.optional;
    h.none = known && shapes.none[std::size_t(t)];
    bytes = h.none ? 0 : std::max<Bytes>(known ? view.bytes() : tensor.size, 0);
    if (h.none)
        h.shape.clear();
    return h;
}

void seedInputShapes(const Graph& g, const RunOptions& options, RuntimeShapes& shapes)
{
    for (auto t : g.inputs) {
        const auto& tensor = g.tensors[std::size_t(t)];
        if (!tensor.sequence && !tensor.optional)
            continue;
        const auto it = options.inputs.find(tensor.name);
        const HostTensor* given = it != options.inputs.end() ? &it->second : nullptr;
        if (given && given->none) {
            shapes.shape[std::size_t(t)] = { 0 };
            shapes.none[std::size_t(t)] = shapes.known[std::size_t(t)] = true;
            continue;
        }
        if (!tensor.sequence) { // an optional tensor: present, of the given shape or its planned one
            if (given)
                shapes.shape[std::size_t(t)] = given->shape;
            else if (tensor.rankKnown && elementCount(tensor.shape) >= 0)
                shapes.shape[std::size_t(t)] = tensor.shape;
            else
                continue; // unknown: its readers run synthetic
            shapes.known[std::size_t(t)] = true;
            continue;
        }
        const std::int64_t room = tensorElements(tensor);
        auto& items = shapes.items[std::size_t(t)];
        if (given && given->sequence)
            items.assign(given->items.begin(), given->items.end());
        else if (!tensor.items.empty())
            items = tensor.items;
        else
            items = { Shape { room } };
        std::int64_t total = 0;
        for (const auto& item : items)
            total += elementCount(item);
        shapes.shape[std::size_t(t)] = { total };
        shapes.known[std::size_t(t)] = true;
    }
}

Status checkGivenInput(const Tensor& tensor, const HostTensor& given)
{
    if (given.optional && !tensor.optional)
        return makeError(ErrorCode::InvalidArgument, "input '" + tensor.name + "': the model expects a "
                + (tensor.sequence ? "sequence" : "tensor") + ", the file gives an optional");
    if (given.none) // an optional holding nothing: nothing to place
        return {};
    const Bytes bytes = Bytes(given.data.size());
    if (given.dtype == tensor.dtype && given.sequence == tensor.sequence && (tensor.sequence ? bytes <= tensor.size : bytes == tensor.size)) {
        // The plan was sized by the contents a file gave at import: other contents would not fit it.
        const auto planned = [&] {
            if (!tensor.items.empty())
                return given.items == tensor.items;
            std::vector<std::byte> values(given.data.size());
            return tensor.values.empty() || (writeFoldedValues(tensor, values.data(), given.elementCount()) && values == given.data);
        };
        if (planned())
            return {};
        return makeError(ErrorCode::InvalidArgument, "input '" + tensor.name + "': the plan was made for the "
                + (tensor.items.empty() ? std::string("values") : std::string("element shapes"))
                + " a file gave it at import, and these differ: import the model with this input");
    }
    const auto what = [](bool sequence, DType dtype, Bytes size) {
        return std::string(sequence ? "a sequence of " : "") + std::string(dtypeName(dtype)) + " of " + std::to_string(size) + " bytes";
    };
    if (!tensor.sequence && !given.sequence && tensor.rankKnown) { // two tensors: their shapes say more than their bytes
        Tensor file = tensor;
        file.dtype = given.dtype;
        file.shape = given.shape;
        return makeError(ErrorCode::InvalidArgument, "input '" + tensor.name + "': the model expects " + tensorTypeText(tensor)
                + " (" + std::to_string(tensor.size) + " bytes), the file gives " + tensorTypeText(file) + " (" + std::to_string(bytes) + " bytes)");
    }
    return makeError(ErrorCode::InvalidArgument, "input '" + tensor.name + "': the model expects "
            + (tensor.sequence ? "at most " : "") + what(tensor.sequence, tensor.dtype, tensor.size) + ", the file gives "
            + what(given.sequence, given.dtype, bytes));
}

Status checkGivenInputs(const Graph& g, const std::map<std::string, HostTensor>& inputs)
{
    for (const auto& [name, value] : inputs) {
        const std::string& wanted = name; // clang 14 cannot capture a structured binding in a lambda
        const auto t = std::find_if(g.inputs.begin(), g.inputs.end(), [&](TensorIndex i) { return g.tensors[i].name == wanted; });
        if (t == g.inputs.end())
            return makeError(ErrorCode::InvalidArgument, "input '" + name + "': the model has no such graph input");
        if (auto s = checkGivenInput(g.tensors[*t], value); !s)
            return s;
    }
    return {};
}

void countBounds(const Graph& g, const std::function<bool(TensorIndex)>& stored, const RuntimeShapes& shapes, Measurement& m)
{
    for (std::size_t t = 0; t < g.tensors.size(); ++t) {
        const auto& tensor = g.tensors[t];
        if (!sizeIsBound(tensor) || !stored(TensorIndex(t)))
            continue;
        ++m.boundedTensors;
        m.boundedBytes += tensor.size;
        m.boundedUsedBytes += shapes.known[t] ? elementCount(shapes.shape[t]) * dtypeBytes(tensor.dtype) : tensor.size;
    }
}

TensorView tensorView(const Graph& g, TensorIndex t, std::byte* data)
{
    TensorView v;
    const auto& tensor = g.tensors[t];
    v.dtype = tensor.dtype;
    v.count = tensorElements(tensor);
    v.data = data;
    const bool shapeKnown = tensor.rankKnown && !tensor.estimated
        && std::all_of(tensor.shape.begin(), tensor.shape.end(), [](std::int64_t d) { return d >= 0; });
    v.shape = shapeKnown ? tensor.shape : Shape { v.count };
    v.sequence = tensor.sequence;
    v.constant = tensor.kind == TensorKind::Weight;
    return v;
}

PreparedCall prepareOp(const Graph& g, const Op& op, OpIndex opIndex, const RunOptions& options, const TensorAccess& access)
{
    PreparedCall p = prepareCall(g, op, access);
    p.opIndex = opIndex;
    if (options.modelData && runsGraphs(op.type) && isDefaultDomain(op))
        if (auto it = options.modelData->subgraphs.find(opIndex); it != options.modelData->subgraphs.end()) {
            p.subgraphs = it->second;
            p.dynamic = true;
        }
    for (const auto& part : op.body)
        p.body.push_back(prepareCall(g, part, access));
    return p;
}

void repoint(PreparedCall& p, const TensorAccess& access)
{
    for (std::size_t k = 0; k < p.call.in.size(); ++k)
        if (p.inTensor[k] >= 0)
            p.call.in[k].data = access.address(p.inTensor[k]);
    for (std::size_t k = 0; k < p.call.out.size(); ++k)
        p.call.out[k].data = access.address(p.outTensor[k]);
    for (std::size_t k = 0; k < p.captured.size(); ++k)
        p.captured[k].data = access.address(p.capturedTensor[k]);
    for (auto& part : p.body)
        repoint(part, access);
}

bool runCall(const Graph& g, const KernelCall& call, OpIndex opIndex, Kernel kernel, const RunOptions& options)
{
    const auto& op = *call.op;
    const bool defaultDomain = isDefaultDomain(op);
    const bool constant = defaultDomain && op.type == "Constant";
    const bool fill = defaultDomain && op.type == "ConstantOfShape" && op.outputs.size() == 1 && !g.tensors[op.outputs[0]].estimated;
    return runOne(g, call, opIndex, kernel, constant, fill, options);
}

namespace {

// The address of a value with no bytes that is present all the same (an empty sequence).
std::byte* emptyValue()
{
    static std::byte none {};
    return &none;
}

// Views tensor t as the run knows it: its run-time shape when known, else the graph's (for an
// estimated tensor: its planned room as one dimension).
void viewAs(const Graph& g, TensorView& v, TensorIndex t, const RuntimeShapes& shapes)
{
    if (t < 0 || !g.tensors[t].estimated)
        return;
    if (shapes.known[std::size_t(t)]) {
        v.shape = shapes.shape[std::size_t(t)];
        v.count = elementCount(v.shape);
        v.items = shapes.items[std::size_t(t)];
        if (shapes.none[std::size_t(t)])
            v.data = nullptr; // an optional holding nothing reads as left out
        else if (g.tensors[t].sequence && !v.data && v.count == 0)
            v.data = emptyValue(); // an empty sequence has no bytes, hence no address, yet it is present
    } else {
        v = tensorView(g, t, v.data);
    }
}

void viewInputs(const Graph& g, PreparedCall& p, const RuntimeShapes& shapes)
{
    for (std::size_t k = 0; k < p.call.in.size(); ++k)
        viewAs(g, p.call.in[k], p.inTensor[k], shapes);
    for (std::size_t k = 0; k < p.captured.size(); ++k)
        viewAs(g, p.captured[k], p.capturedTensor[k], shapes);
    for (auto& part : p.body)
        viewInputs(g, part, shapes);
}

// n elements fit output t's planned room `room`: at most the bound of an estimated tensor, exactly
// the graph's count for any other.
bool fitsRoom(const Graph& g, TensorIndex t, const TensorView& room, std::int64_t n)
{
    return g.tensors[t].estimated ? n <= room.count : n == room.count;
}

// Output shapes for a dynamic op, its kernel run on them; false (outputs unspecified) when either fails.
// outItems[k]: the element shapes of a sequence output (empty for the others); outNone[k]: the
// output is an optional holding nothing.
bool runShaped(const Graph& g, PreparedCall& p, const RunOptions& options, const RuntimeShapes& shapes,
    std::vector<Shape>& outShapes, std::vector<std::vector<Shape>>& outItems, std::vector<bool>& outNone)
{
    outItems.assign(p.call.out.size(), {});
    outNone.assign(p.call.out.size(), false);
    auto& call = p.call;
    for (std::size_t k = 0; k < call.out.size(); ++k)
        call.out[k] = tensorView(g, p.outTensor[k], call.out[k].data); // the planned room
    // A value with no elements (an empty sequence, a [0, H, W] tensor a Loop starts its results
    // from) has no address in the arena, yet it is present; an optional holding nothing is not.
    const auto holdsNothing = [&](TensorIndex t) { return g.tensors[std::size_t(t)].estimated && shapes.known[std::size_t(t)] && shapes.none[std::size_t(t)]; };
    if (p.subgraphs || p.sequence || p.optional)
        for (std::size_t k = 0; k < call.in.size(); ++k)
            if (p.inTensor[k] >= 0 && !call.in[k].data && call.in[k].count == 0 && !holdsNothing(p.inTensor[k]))
                call.in[k].data = emptyValue();
    if (p.optional) {
        outShapes.assign(1, {});
        bool none = false;
        const bool ran = runOptionalOp(call, outShapes[0], outItems[0], none, p.refusal);
        outNone.assign(1, none);
        return ran && fitsRoom(g, p.outTensor[0], call.out[0], elementCount(outShapes[0]));
    }
    if (p.subgraphs) {
        std::vector<bool> bounded;
        for (auto t : p.outTensor)
            bounded.push_back(g.tensors[t].estimated);
        const OuterLookup outer = [&](const std::string& name, TensorView& view) {
            for (std::size_t k = 0; k < p.captured.size(); ++k)
                // An optional holding nothing has no data, yet the graphs may read it.
                if (g.tensors[p.capturedTensor[k]].name == name && (p.captured[k].present() || g.tensors[p.capturedTensor[k]].optional)) {
                    view = p.captured[k];
                    return true;
                }
            return false;
        };
        Bytes held = 0;
        BodyArena arena;
        if (p.bodySlots && call.workspace)
            arena = BodyArena { reinterpret_cast<std::byte*>(call.workspace), p.bodySlots.get(), &p.bodyNotes };
        const bool ran = runControlFlow(*p.subgraphs, call, bounded, outer, outShapes, outItems, outNone, held, p.refusal, options.cancel, arena);
        noteScratchBytes(held);
        return ran;
    }
    if (p.sequence) {
        if (!p.sequence(call, outShapes, outItems) || outShapes.size() != call.out.size() || outItems.size() != call.out.size())
            return false;
        for (std::size_t k = 0; k < call.out.size(); ++k)
            if (elementCount(outShapes[k]) < 0 || !fitsRoom(g, p.outTensor[k], call.out[k], elementCount(outShapes[k])))
                return false;
        return true;
    }
    if (p.sizing) {
        if (!p.sizing(call, outShapes) || outShapes.size() != call.out.size())
            return false;
        for (std::size_t k = 0; k < call.out.size(); ++k)
            if (elementCount(outShapes[k]) < 0 || !fitsRoom(g, p.outTensor[k], call.out[k], elementCount(outShapes[k])))
                return false;
        return true;
    }
    if (!runtimeShapes(call, outShapes))
        return false;
    bool empty = true;
    for (std::size_t k = 0; k < call.out.size(); ++k) {
        const std::int64_t n = elementCount(outShapes[k]);
        if (!fitsRoom(g, p.outTensor[k], call.out[k], n))
            return false; // more than the plan reserved: never written
        call.out[k].shape = outShapes[k];
        call.out[k].count = n;
        empty = empty && n == 0;
    }
    if (empty)
        return true; // nothing to compute
    const bool fill = isDefaultDomain(*call.op) && call.op->type == "ConstantOfShape";
    return (fill && runConstantOfShape(call, p.opIndex, options)) || (p.shapedKernel && runKernel(p.shapedKernel, call));
}

} // namespace

bool runWithShapes(const Graph& g, PreparedCall& p, const RunOptions& options, RuntimeShapes& shapes)
{
    p.refusal.clear();
    viewInputs(g, p, shapes);
    for (auto t : p.outTensor)
        shapes.known[std::size_t(t)] = shapes.none[std::size_t(t)] = false;
    const auto known = [&](TensorIndex t) { return t < 0 || !g.tensors[t].estimated || shapes.known[std::size_t(t)]; };
    const bool inputsKnown = std::all_of(p.inTensor.begin(), p.inTensor.end(), known)
        && (!p.subgraphs || std::all_of(p.capturedTensor.begin(), p.capturedTensor.end(), known));
    if (!inputsKnown && p.body.empty()) {
        // An input's shape is unknown (its producer ran synthetic): no kernel can be exact on it.
        for (std::size_t k = 0; k < p.call.out.size(); ++k)
            p.call.out[k] = tensorView(g, p.outTensor[k], p.call.out[k].data);
        syntheticKernel(p.call);
        return false;
    }
    if (!p.dynamic)
        return runPrepared(g, p, options);
    std::vector<Shape> outShapes;
    std::vector<std::vector<Shape>> outItems;
    std::vector<bool> outNone;
    // Only an optional output can hold nothing.
    const auto noneFits = [&] {
        for (std::size_t k = 0; k < outNone.size(); ++k)
            if (outNone[k] && !(g.tensors[std::size_t(p.outTensor[k])].optional && g.tensors[std::size_t(p.outTensor[k])].estimated))
                return false;
        return true;
    };
    if (p.body.empty() && runShaped(g, p, options, shapes, outShapes, outItems, outNone) && noneFits()) {
        for (std::size_t k = 0; k < p.outTensor.size(); ++k) {
            const auto t = std::size_t(p.outTensor[k]);
            p.call.out[k].shape = outShapes[k];
            p.call.out[k].count = elementCount(outShapes[k]);
            p.call.out[k].items = outItems[k];
            if (g.tensors[t].estimated) {
                shapes.shape[t] = outShapes[k];
                shapes.known[t] = true;
                shapes.items[t] = std::move(outItems[k]);
                shapes.none[t] = outNone[k];
            }
        }
        return true;
    }
    for (std::size_t k = 0; k < p.call.out.size(); ++k)
        p.call.out[k] = tensorView(g, p.outTensor[k], p.call.out[k].data);
    if (p.subgraphs) {
        // Its graphs could not run (p.refusal says why): outputs the plan expects empty are no proof
        // of anything (the graphs may never end), so only values import computed make it exact.
        if (writeKnownValues(g, p.call, *p.call.op))
            return true;
        syntheticKernel(p.call);
        return false;
    }
    return runPrepared(g, p, options);
}

std::string describeFault(const Graph& g, const Op& step, const DataFault& fault)
{
    const Op& op = fault.op ? *fault.op : step;
    const auto tensorAt = [&](int slot) -> const Tensor* {
        for (std::size_t k = 0; k < op.inputs.size(); ++k)
            if (inputSlot(op, k) == slot && op.inputs[k] >= 0 && std::size_t(op.inputs[k]) < g.tensors.size())
                return &g.tensors[std::size_t(op.inputs[k])];
        return nullptr;
    };
    std::string text = "op '" + step.name + "' (" + step.type + "): ";
    if (&op != &step)
        text += "its op '" + op.name + "' (" + op.type + "): ";
    const auto* indices = tensorAt(fault.indicesSlot);
    const auto* data = tensorAt(fault.dataSlot);
    auto why = fault.why;
    if (const auto at = why.find(" is outside "); indices && at != std::string::npos)
        why.insert(at, " of '" + indices->name + "'");
    text += why;
    if (data && fault.axis >= 0)
        text += ", the size of axis " + std::to_string(fault.axis) + " of '" + data->name + "'";
    return text;
}

bool runPrepared(const Graph& g, const PreparedCall& p, const RunOptions& options)
{
    if (p.body.empty())
        return runOne(g, p, options);
    // Conv + activations / residual Adds: one convolution with post-ops when oneDNN takes it.
    if (std::all_of(p.body.begin(), p.body.end(), [](const PreparedCall& part) { return part.kernel && !part.constant && !part.fill; })) {
        std::vector<const KernelCall*> calls;
        for (const auto& part : p.body)
            calls.push_back(&part.call);
        if (onednnConvChain(calls))
            return true;
    }
    bool all = true;
    for (const auto& part : p.body)
        all = runOne(g, part, options) && all;
    return all;
}

Expected<FusedScratch> fusedScratchLayout(const Graph& g, const std::vector<const Op*>& ops, Bytes alignment)
{
    alignment = std::max<Bytes>(alignment, 64);
    FusedScratch scratch;
    scratch.internal.assign(g.tensors.size(), false);
    scratch.offset.assign(g.tensors.size(), -1);
    for (const auto* o : ops) {
        const auto& op = *o;
        for (const auto& part : op.body)
            for (const auto* list : { &part.inputs, &part.outputs })
                for (const auto t : *list)
                    if (t < 0 || t >= TensorIndex(g.tensors.size()))
                        return makeError(ErrorCode::InvalidArgument,
                            "fused op '" + op.name + "': body op '" + part.name + "' names a tensor index out of range");
        const auto internals = fusedInternals(op);
        // A recompute clone of a fused op shares its internals: same offsets, same size.
        if (internals.empty() || scratch.internal[std::size_t(internals.front())])
            continue;
        // Internal t lives from the body op that writes it through the last body op that reads it
        // (inclusive: a kernel's output never overlaps its inputs), and the internals are packed as
        // the arena is, so a long group (a quantized one: dequantized input and weights, the
        // convolution, its activation) holds only what is live at once. As the inplace strategy
        // does in the arena, an elementwise body op writes into an internal input of its size that
        // it reads last (Conv -> Relu: the activation overwrites the convolution's output).
        PlanProblem problem;
        problem.alignment = alignment;
        problem.steps = Step(op.body.size());
        std::vector<std::size_t> bufferOf(internals.size());
        for (std::size_t i = 0; i < internals.size(); ++i) {
            const auto t = internals[i];
            Lifetime life { problem.steps, 0 };
            for (std::size_t k = 0; k < op.body.size(); ++k) {
                const auto& part = op.body[k];
                if (std::find(part.outputs.begin(), part.outputs.end(), t) != part.outputs.end())
                    life.start = std::min(life.start, Step(k));
                if (std::find(part.inputs.begin(), part.inputs.end(), t) != part.inputs.end())
                    life.end = Step(k) + 1;
            }
            life.end = std::max(life.end, life.start + 1);
            const Bytes size = std::max<Bytes>(g.tensors[std::size_t(t)].size, 0);
            const auto& writer = op.body[std::size_t(life.start)];
            bool aliased = false;
            for (std::size_t j = 0; j < i && !aliased && writer.outputs.size() == 1 && isElementwiseOp(writer.type); ++j) {
                auto& held = problem.buffers[bufferOf[j]];
                const auto x = internals[j];
                if (std::find(writer.inputs.begin(), writer.inputs.end(), x) != writer.inputs.end()
                    && held.lifetime.end == life.start + 1 && g.tensors[std::size_t(x)].size == size && size > 0) {
                    bufferOf[i] = bufferOf[j];
                    held.lifetime.end = life.end;
                    aliased = true;
                }
            }
            if (aliased)
                continue;
            Buffer b;
            b.lifetime = life;
            b.size = alignUp(size, alignment);
            bufferOf[i] = problem.buffers.size();
            problem.buffers.push_back(std::move(b));
        }
        const auto plan = runPlanner(*plannerByName(kDefaultPlanner), problem);
        if (!plan)
            return plan.error();
        for (std::size_t i = 0; i < internals.size(); ++i) {
            scratch.internal[std::size_t(internals[i])] = true;
            scratch.offset[std::size_t(internals[i])] = plan->offsets[bufferOf[i]];
        }
        scratch.bytes = std::max(scratch.bytes, plan->arenaSize);
    }
    return scratch;
}

Expected<FusedScratch> makeFusedScratch(const Graph& g, const std::vector<const Op*>& ops, Bytes alignment)
{
    auto layout = fusedScratchLayout(g, ops, alignment);
    if (!layout)
        return layout;
    auto& scratch = *layout;
    alignment = std::max<Bytes>(alignment, 64);
    if (scratch.bytes > 0) {
        auto* p = static_cast<std::byte*>(std::aligned_alloc(std::size_t(alignment), std::size_t(scratch.bytes)));
        if (!p)
            return makeError(ErrorCode::Io, "cannot allocate " + std::to_string(scratch.bytes) + " bytes of fused-op scratch");
        std::memset(p, 0, std::size_t(scratch.bytes));
        scratch.memory = std::shared_ptr<std::byte>(p, AlignedFree {});
    }
    return layout;
}

} // namespace core::exec
