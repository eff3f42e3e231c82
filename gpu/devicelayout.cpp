// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "devicelayout.h"

#include "exec/hostops.h"
#include "exec/opcall.h"
#include "util/format.h"

#include <algorithm>

namespace gpu {

using core::Bytes;
using core::ErrorCode;
using core::Graph;
using core::TensorIndex;

bool isSwapOut(const core::Op& op) { return (op.domain.empty() || op.domain == "ai.onnx") && op.type == "SwapOut"; }

// Device pointers for the device-independent placement (exec/layout.h): the arena and the side
// region are cudaMallocs; swap-out outputs outside any buffer are pinned host memory instead of side slots.
core::Expected<Layout> makeLayout(const Graph& g, const core::PlanProblem& problem, const core::Plan& plan,
    const std::vector<TensorIndex>& bufferTensor, bool arena, const core::RunOptions& options)
{
    const auto n = g.tensors.size();
    std::vector<bool> swapped(n, false); // pinned unless a buffer holds them
    std::vector<bool> excluded(n, false); // swapped, and fused ops' internals (host scratch of the host path)
    for (const auto& op : g.ops) {
        if (isSwapOut(op))
            for (auto t : op.outputs)
                if (t >= 0 && t < TensorIndex(n))
                    swapped[std::size_t(t)] = excluded[std::size_t(t)] = true;
        for (auto t : core::fusedInternals(op))
            if (t >= 0 && t < TensorIndex(n))
                excluded[std::size_t(t)] = true;
    }
    auto placement = core::exec::placeTensors(g, problem, plan, bufferTensor, core::exec::PlacementOptions { arena, kDeviceAlignment, &excluded });
    if (!placement)
        return placement.error();
    const auto& places = placement->tensors;
    if (arena) {
        const auto byBuffer = core::exec::storedTensorsByBuffer(*placement, problem.buffers.size());
        for (std::size_t b = 0; b < byBuffer.size(); ++b)
            for (auto t : byBuffer[b])
                if (const Bytes w = core::dtypeBytes(g.tensors[t].dtype); w > 1 && places[t].offset % w != 0)
                    return core::makeError(ErrorCode::InvalidArgument, "the plan puts '" + g.tensors[t].name + "' at offset "
                            + std::to_string(places[t].offset) + ", not a multiple of its " + std::to_string(w)
                            + "-byte elements: the GPU needs aligned tensors (plan with a larger --alignment, e.g. 256)");
    }
    Layout layout;
    layout.address.assign(n, nullptr);
    layout.hostCopy.assign(n, nullptr);
    layout.bufferOf.assign(n, -1);
    layout.stored.assign(n, false);
    layout.onHost.assign(n, false);
    layout.arenaBytes = placement->arenaBytes;
    layout.sideBytes = placement->sideBytes;
    if (arena) {
        std::byte* p = nullptr;
        CUDA_TRY(cudaMalloc(&p, std::size_t(std::max<Bytes>(plan.arenaSize, kDeviceAlignment))), "allocating the arena (" + core::formatBytes(plan.arenaSize) + ")");
        layout.arena.reset(p);
    }
    for (std::size_t t = 0; t < n; ++t) {
        layout.bufferOf[t] = places[t].buffer;
        layout.stored[t] = places[t].stored;
        if (places[t].kind == core::exec::PlaceKind::Buffer && arena)
            layout.address[t] = layout.arena.get() + places[t].offset;
    }
    for (std::size_t t = 0; t < n; ++t)
        if (swapped[t] && places[t].kind == core::exec::PlaceKind::None && g.tensors[t].size > 0) {
            std::byte* p = nullptr;
            CUDA_TRY(cudaMallocHost(&p, std::size_t(g.tensors[t].size)), "allocating pinned host memory for '" + g.tensors[t].name + "' (" + core::formatBytes(g.tensors[t].size) + ")");
            layout.pinned.emplace_back(p);
            layout.address[t] = p;
            layout.onHost[t] = true;
            layout.stored[t] = true;
        }
    std::byte* side = nullptr;
    CUDA_TRY(cudaMalloc(&side, std::size_t(std::max<Bytes>(layout.sideBytes, kDeviceAlignment))), "allocating the weights (" + core::formatBytes(layout.sideBytes) + ")");
    layout.side.reset(side);
    layout.sideHost.assign(std::size_t(layout.sideBytes), std::byte(0));
    const auto producer = core::producers(g);
    for (std::size_t t = 0; t < n; ++t) {
        if (places[t].kind != core::exec::PlaceKind::Side)
            continue;
        const Bytes offset = places[t].offset;
        layout.address[t] = side + offset;
        const auto& tensor = g.tensors[t];
        if (tensor.kind == core::TensorKind::Weight || tensor.kind == core::TensorKind::Persistent)
            core::exec::weightContents(g, TensorIndex(t), layout.sideHost.data() + offset, options);
        // A weight an op writes at run time (an exporter's Identity alias) holds only the fill
        // here: host ops read it from the device like an activation.
        const auto* writer = producer[t] >= 0 ? &g.ops[std::size_t(producer[t])] : nullptr;
        const bool constant = !writer || ((writer->domain.empty() || writer->domain == "ai.onnx") && writer->type == "Constant");
        if (tensor.kind == core::TensorKind::Weight && constant)
            layout.hostCopy[t] = layout.sideHost.data() + offset;
    }
    if (layout.sideBytes > 0)
        CUDA_TRY(cudaMemcpy(side, layout.sideHost.data(), layout.sideHost.size(), cudaMemcpyHostToDevice), "uploading the weights");
    std::vector<const core::Op*> fusedOps;
    for (const auto& op : g.ops)
        if (!op.body.empty())
            fusedOps.push_back(&op);
    const auto fused = core::exec::fusedScratchLayout(g, fusedOps, kDeviceAlignment);
    if (!fused)
        return fused.error();
    layout.fusedOffset = fused->offset;
    layout.fusedBytes = fused->bytes;
    if (layout.fusedBytes > 0) {
        std::byte* p = nullptr;
        CUDA_TRY(cudaMalloc(&p, std::size_t(layout.fusedBytes)), "allocating the fused ops' internal tensors (" + core::formatBytes(layout.fusedBytes) + ")");
        layout.fused.reset(p);
    }
    layout.placement = std::move(*placement);
    return layout;
}

core::Expected<InputImages> inputImages(const Graph& g, const Layout& layout, const core::RunOptions& options)
{
    InputImages images;
    for (auto t : g.inputs) {
        const auto& tensor = g.tensors[t];
        if (!layout.stored[t] || tensor.size <= 0)
            continue;
        std::vector<std::byte> data(std::size_t(tensor.size));
        const auto it = options.inputs.find(tensor.name);
        if (it == options.inputs.end())
            core::exec::inputContents(tensor, data.data(), options.seed);
        else if (auto st = core::exec::checkGivenInput(tensor, it->second); !st)
            return st.error();
        else
            std::copy(it->second.data.begin(), it->second.data.end(), data.begin()); // a sequence may hold less than its room
        images.emplace_back(t, std::move(data));
    }
    for (const auto& [name, value] : options.inputs)
        if (std::none_of(g.inputs.begin(), g.inputs.end(), [&](TensorIndex t) { return g.tensors[t].name == name; }))
            return core::makeError(ErrorCode::InvalidArgument, "input '" + name + "': the model has no such graph input");
    return images;
}

} // namespace gpu
