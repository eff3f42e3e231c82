// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "steps.h"

#include "exec/hostops.h"
#include "exec/opcall.h"
#include "exec/runshape.h"

#include <algorithm>

namespace gpu {

using core::Bytes;
using core::Graph;
using core::TensorIndex;

namespace {

// Outputs a device op may have and still be precomputed.
constexpr Bytes kPrecomputeDeviceBytes = Bytes(64) << 10;

bool readsOnlyShapes(const core::Op& op)
{
    return (op.domain.empty() || op.domain == "ai.onnx") && (op.type == "Shape" || op.type == "Size");
}

// The Precomputed rule (steps.h), in schedule order so that chains of constant ops fold whole.
// Then every op reads the constants it takes as host contents, as it reads weights (a device Pad
// needs its pads on the host).
void precomputeConstants(const Graph& g, std::vector<Prepared>& steps, const Layout& layout, const core::RunOptions& options)
{
    static const std::byte kEmpty {}; // the contents of a tensor with no elements (non-null: present)
    std::vector<const std::byte*> known(layout.hostCopy); // per tensor: its constant contents on the host
    for (std::size_t t = 0; t < g.tensors.size(); ++t)
        if (g.tensors[t].size == 0 && g.tensors[t].rankKnown && !g.tensors[t].estimated)
            known[t] = &kEmpty;
    for (auto& p : steps) {
        const auto& op = g.ops[p.opIndex];
        if ((p.where != Where::Host && p.where != Where::Device) || !op.captured.empty() || p.shaped)
            continue;
        // An input only Shape or Size reads (in a fused op: every body op that reads it) need not be known.
        const auto shapeOnly = [&g, &op](TensorIndex t) {
            if (g.tensors[std::size_t(t)].estimated)
                return false; // its shape is known only when the run has made it
            if (op.body.empty())
                return readsOnlyShapes(op);
            return std::all_of(op.body.begin(), op.body.end(), [t](const core::Op& part) {
                return readsOnlyShapes(part) || std::find(part.inputs.begin(), part.inputs.end(), t) == part.inputs.end();
            });
        };
        bool constant = true;
        for (auto t : p.inTensor)
            constant = constant && (t < 0 || known[std::size_t(t)] || shapeOnly(t));
        Bytes bytes = 0;
        for (std::size_t k = 0; k < p.outTensor.size(); ++k) {
            const auto t = p.outTensor[k];
            const bool staged = layout.stored[t] && !layout.onHost[t] && Bytes(p.outStage[k].size()) == g.tensors[t].size;
            constant = constant && (staged || known[std::size_t(t)] == &kEmpty);
            bytes += g.tensors[t].size;
        }
        if (!constant || (p.where == Where::Device && bytes > kPrecomputeDeviceBytes))
            continue;
        auto call = p.host;
        for (std::size_t k = 0; k < p.inTensor.size(); ++k)
            if (const auto t = p.inTensor[k]; t >= 0 && known[std::size_t(t)])
                call.in[k] = core::exec::tensorView(g, t, const_cast<std::byte*>(known[std::size_t(t)]));
        if (!core::exec::runHostOp(g, call, p.opIndex, p.cpuKernel, options))
            continue; // synthetic: it stays as it was
        // A float32 device op keeps its kernel (asynchronous already; an Identity of a weight stays a
        // device copy) and only makes its value known to the ops after it. Device ops on shapes
        // (int64, bool) are precomputed: their kernels are mostly float-only and would fall back to
        // the host at run time.
        const bool floats = std::all_of(p.outTensor.begin(), p.outTensor.end(),
            [&](TensorIndex t) { return g.tensors[t].dtype == core::DType::Float32; });
        if (p.where == Where::Host || !floats)
            p.where = Where::Precomputed;
        for (std::size_t k = 0; k < p.outTensor.size(); ++k)
            if (!p.outStage[k].empty())
                known[std::size_t(p.outTensor[k])] = p.outStage[k].data();
    }
    for (auto& p : steps) {
        for (std::size_t k = 0; k < p.inTensor.size(); ++k)
            if (const auto t = p.inTensor[k]; t >= 0 && !p.device.hostContents[k] && known[std::size_t(t)] != &kEmpty)
                p.device.hostContents[k] = known[std::size_t(t)];
        for (std::size_t b = 0; b < p.bodyHostContents.size(); ++b) // a fused op's body on the device
            for (std::size_t k = 0; k < p.body.body[b].inTensor.size(); ++k)
                if (const auto t = p.body.body[b].inTensor[k]; t >= 0 && !p.bodyHostContents[b][k] && known[std::size_t(t)] != &kEmpty)
                    p.bodyHostContents[b][k] = known[std::size_t(t)];
    }
}

// Where each tensor is on the device now; a fused op's internals in the fused scratch.
core::exec::TensorAccess deviceAccess(const Graph& g, const Layout& layout)
{
    core::exec::TensorAccess access;
    access.address = [&layout](TensorIndex t) {
        const Bytes offset = layout.fusedOffset[std::size_t(t)];
        return offset >= 0 ? layout.fused.get() + offset : layout.address[std::size_t(t)];
    };
    access.stored = [&g, &layout](TensorIndex t) {
        return layout.fusedOffset[std::size_t(t)] >= 0 ? g.tensors[std::size_t(t)].size > 0 : bool(layout.stored[std::size_t(t)]);
    };
    return access;
}

// Prepares a fused op's body for the device when the CPU executor would run every body op on a
// real kernel and each has a device kernel; false leaves the op to the host.
bool prepareDeviceBody(const Graph& g, const core::Op& op, Prepared& p, const Layout& layout, const core::RunOptions& options)
{
    if (op.body.empty() || !op.captured.empty() || !layout.fused)
        return false;
    auto call = core::exec::prepareOp(g, op, p.opIndex, options, deviceAccess(g, layout));
    std::vector<DeviceKernel> kernels;
    for (const auto& part : call.body) {
        const DeviceKernel kernel = part.kernel && !part.constant && !part.fill ? findDeviceKernel(part.call.op->type) : nullptr;
        if (!kernel)
            return false;
        kernels.push_back(kernel);
    }
    p.bodyHostContents.clear();
    for (const auto& part : call.body) {
        std::vector<const std::byte*> contents;
        for (const auto t : part.inTensor)
            contents.push_back(t >= 0 ? layout.hostCopy[std::size_t(t)] : nullptr);
        p.bodyHostContents.push_back(std::move(contents));
    }
    p.body = std::move(call);
    p.bodyKernels = std::move(kernels);
    return true;
}

// Where the host reads tensor t: a pinned or weight tensor in place, any other stored tensor in
// `stage` (sized to it here, filled from the device before each host call); null when not stored.
std::byte* hostAddress(const Graph& g, const Layout& layout, TensorIndex t, std::vector<std::byte>& stage)
{
    if (layout.onHost[t])
        return layout.address[t];
    if (layout.hostCopy[t])
        return const_cast<std::byte*>(layout.hostCopy[t]);
    if (!layout.stored[t])
        return nullptr;
    stage.resize(std::size_t(g.tensors[t].size));
    return stage.data();
}

// The Shaped rule (steps.h).
bool needsRunTimeShapes(const Graph& g, const core::Op& op, core::OpIndex opIndex, const core::RunOptions& options)
{
    if (!op.body.empty())
        return false;
    const auto bounded = [&g](TensorIndex t) { return t >= 0 && g.tensors[std::size_t(t)].estimated; };
    for (const auto* list : { &op.inputs, &op.outputs, &op.captured })
        if (std::any_of(list->begin(), list->end(), bounded))
            return true;
    if (!(op.domain.empty() || op.domain == "ai.onnx"))
        return false;
    if (core::exec::findSizingKernel(op.type))
        return true;
    return core::exec::runsGraphs(op.type) && options.modelData && options.modelData->subgraphs.contains(opIndex);
}

// A shaped op's call on its host views (its inputs', outputs' and captured tensors').
void prepareShaped(const Graph& g, const core::Op& op, Prepared& p, const Layout& layout, const core::RunOptions& options)
{
    std::vector<std::byte*> captured;
    p.capturedStage.assign(op.captured.size(), {});
    for (std::size_t k = 0; k < op.captured.size(); ++k)
        captured.push_back(hostAddress(g, layout, op.captured[k], p.capturedStage[k]));
    core::exec::TensorAccess access;
    access.address = [&](TensorIndex t) -> std::byte* {
        for (std::size_t k = 0; k < p.inTensor.size(); ++k)
            if (p.inTensor[k] == t)
                return p.host.in[k].data;
        for (std::size_t k = 0; k < p.outTensor.size(); ++k)
            if (p.outTensor[k] == t)
                return p.host.out[k].data;
        for (std::size_t k = 0; k < op.captured.size(); ++k)
            if (op.captured[k] == t)
                return captured[k];
        return nullptr;
    };
    access.stored = [&layout](TensorIndex t) { return bool(layout.stored[std::size_t(t)]); };
    p.shapedCall = core::exec::prepareOp(g, op, p.opIndex, options, access);
    p.shaped = true;
    p.where = Where::Host;
    p.deviceKernel = nullptr;
}

// The host-image rule (steps.h): host ops read the tensors earlier host and precomputed ops wrote
// from those ops' output staging; readsDevice says whether anything is left to copy back.
void shareHostImages(const Graph& g, std::vector<Prepared>& steps, const Layout& layout)
{
    std::vector<std::byte*> image(g.tensors.size(), nullptr);
    for (auto& p : steps) {
        if (p.where == Where::Host) {
            const auto& op = g.ops[std::size_t(p.opIndex)];
            const auto useImage = [&](TensorIndex t, std::vector<std::byte>& stage, std::byte*& view) {
                if (image[std::size_t(t)]) {
                    view = image[std::size_t(t)];
                    stage = {};
                    if (p.shaped) {
                        for (std::size_t j = 0; j < p.shapedCall.inTensor.size(); ++j)
                            if (p.shapedCall.inTensor[j] == t)
                                p.shapedCall.call.in[j].data = view;
                        for (std::size_t j = 0; j < p.shapedCall.capturedTensor.size(); ++j)
                            if (p.shapedCall.capturedTensor[j] == t)
                                p.shapedCall.captured[j].data = view;
                    }
                }
                return !stage.empty() || layout.onHost[std::size_t(t)];
            };
            p.readsDevice = false;
            for (std::size_t k = 0; k < p.inTensor.size(); ++k)
                if (const auto t = p.inTensor[k]; t >= 0)
                    p.readsDevice = useImage(t, p.inStage[k], p.host.in[k].data) || p.readsDevice;
            for (std::size_t k = 0; k < p.capturedStage.size(); ++k) {
                std::byte* unused = nullptr; // the shaped call's view is the captured tensor's only host view
                p.readsDevice = useImage(op.captured[k], p.capturedStage[k], unused) || p.readsDevice;
            }
        }
        if (p.where == Where::Host || p.where == Where::Precomputed)
            for (std::size_t k = 0; k < p.outTensor.size(); ++k)
                if (!p.outStage[k].empty())
                    image[std::size_t(p.outTensor[k])] = p.outStage[k].data();
    }
}

} // namespace

std::vector<Prepared> prepareSteps(const Graph& g, const core::Schedule& schedule, const Layout& layout, const core::RunOptions& options)
{
    std::vector<Prepared> steps(schedule.order.size());
    for (std::size_t s = 0; s < schedule.order.size(); ++s) {
        const auto opIndex = schedule.order[s];
        const auto& op = g.ops[opIndex];
        auto& p = steps[s];
        p.opIndex = opIndex;
        p.label = "op '" + op.name + "' (" + op.type + ")";
        p.device.call.op = p.host.op = &op;
        p.device.call.outSlots = p.host.outSlots = op.outputSlots;
        for (std::size_t k = 0; k < op.inputs.size(); ++k) {
            const auto slot = std::size_t(inputSlot(op, k));
            if (p.inTensor.size() <= slot) {
                p.inTensor.resize(slot + 1, -1);
                p.device.call.in.resize(slot + 1);
                p.host.in.resize(slot + 1);
                p.inStage.resize(slot + 1);
                p.device.hostContents.resize(slot + 1, nullptr);
            }
            p.inTensor[slot] = op.inputs[k];
        }
        p.outTensor = op.outputs;
        p.outStage.resize(op.outputs.size());
        const bool defaultDomain = op.domain.empty() || op.domain == "ai.onnx";
        p.cpuKernel = op.captured.empty() ? core::exec::findKernel(op.domain, op.type) : nullptr;
        for (auto t : op.outputs)
            if (g.tensors[t].estimated || !layout.stored[t])
                p.cpuKernel = nullptr;
        if (p.inTensor.empty() || p.inTensor[0] < 0 || !layout.stored[p.inTensor[0]])
            p.cpuKernel = nullptr;
        const bool constant = defaultDomain && op.type == "Constant";
        const bool fill = defaultDomain && op.type == "ConstantOfShape";
        const bool swap = defaultDomain && (op.type == "SwapOut" || op.type == "SwapIn") && op.inputs.size() == 1 && op.outputs.size() == 1
            && g.tensors[op.inputs[0]].size == g.tensors[op.outputs[0]].size && layout.stored[op.inputs[0]] && layout.stored[op.outputs[0]];
        if (constant && op.outputs.size() == 1 && g.tensors[op.outputs[0]].kind == core::TensorKind::Weight)
            p.where = Where::Nothing; // its output is a weight, uploaded with the others
        else if (swap && op.type == "SwapOut" && layout.onHost[op.outputs[0]] && !layout.onHost[op.inputs[0]])
            p.where = Where::SwapOut;
        else if (swap && op.type == "SwapIn" && layout.onHost[op.inputs[0]] && !layout.onHost[op.outputs[0]])
            p.where = Where::SwapIn;
        else if (p.cpuKernel && !constant && !fill && (p.deviceKernel = findDeviceKernel(op.type)))
            p.where = Where::Device;
        else if (prepareDeviceBody(g, op, p, layout, options))
            p.where = Where::Device;
        else
            p.where = Where::Host;
        // Host views: pinned and weight tensors in place, everything else through staging.
        for (std::size_t k = 0; k < p.inTensor.size(); ++k) {
            const auto t = p.inTensor[k];
            if (t < 0)
                continue;
            p.host.in[k] = core::exec::tensorView(g, t, hostAddress(g, layout, t, p.inStage[k]));
            p.device.hostContents[k] = layout.hostCopy[t];
        }
        for (std::size_t k = 0; k < op.outputs.size(); ++k) {
            const auto t = op.outputs[k];
            std::byte* host = nullptr;
            if (layout.onHost[t])
                host = layout.address[t];
            else if (layout.stored[t]) {
                p.outStage[k].resize(std::size_t(g.tensors[t].size));
                host = p.outStage[k].data();
            }
            p.host.out.push_back(core::exec::tensorView(g, t, host));
        }
        if ((p.where == Where::Host || p.where == Where::Device) && needsRunTimeShapes(g, op, opIndex, options))
            prepareShaped(g, op, p, layout, options);
    }
    precomputeConstants(g, steps, layout, options);
    shareHostImages(g, steps, layout);
    return steps;
}

void pointDeviceViews(const Graph& g, Prepared& p, const Layout& layout)
{
    p.device.call.in.assign(p.inTensor.size(), core::exec::TensorView {});
    for (std::size_t k = 0; k < p.inTensor.size(); ++k)
        if (p.inTensor[k] >= 0)
            p.device.call.in[k] = core::exec::tensorView(g, p.inTensor[k], layout.address[p.inTensor[k]]);
    p.device.call.out.clear();
    for (auto t : p.outTensor)
        p.device.call.out.push_back(core::exec::tensorView(g, t, layout.address[t]));
    if (!p.bodyKernels.empty())
        core::exec::repoint(p.body, deviceAccess(g, layout));
}

Outcome launchBody(const Prepared& p)
{
    for (std::size_t k = 0; k < p.bodyKernels.size(); ++k) {
        const DeviceCall call { p.body.body[k].call, p.bodyHostContents[k], p.device.stream, p.device.blas, p.device.scratch,
            p.device.staging };
        const auto outcome = launchDeviceOp(p.bodyKernels[k], call);
        if (!outcome.failure.empty())
            return Outcome { true, "body op '" + p.body.body[k].call.op->name + "': " + outcome.failure };
        if (!outcome.supported)
            return outcome;
    }
    return {};
}

} // namespace gpu
