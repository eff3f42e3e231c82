// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to gpu/: device memory for the shared placement (core/exec/layout.h). The arena and the
// side region (weights, persistent and unbuffered tensors) are cudaMallocs; swap-out outputs that
// no buffer holds are pinned host memory; fused ops' internals live in one device scratch of their
// own (offsets as the CPU executor's fused scratch; a fused op that runs on the host uses a host
// scratch instead). Weights are uploaded once; their host copy stays for host ops.

#include "cudacommon.h"

#include "exec/executor.h"
#include "exec/layout.h"

#include <utility>

namespace gpu {

constexpr core::Bytes kDeviceAlignment = 256; // cudaMalloc's own alignment; side slots keep it

// Where each tensor lives for one run.
struct Layout {
    DeviceMemory arena, side;
    std::vector<std::byte> sideHost;         // the side region's initial contents (weights), kept for host ops
    std::vector<PinnedMemory> pinned;        // swap-strategy host tensors
    std::vector<std::byte*> address;         // per tensor: device (or pinned host) address; PerTensor/Pool: set per pass
    std::vector<const std::byte*> hostCopy;  // per tensor: its contents in sideHost (weights no op but a Constant writes), else nullptr
    std::vector<int> bufferOf;               // per tensor: its buffer, -1 outside the arena
    std::vector<bool> stored, onHost;
    DeviceMemory fused;                      // fused ops' internal tensors (every fused op at once: one runs at a time)
    std::vector<core::Bytes> fusedOffset;    // per tensor: its offset in `fused`, -1 when not a fused op's internal
    core::Bytes arenaBytes = 0, sideBytes = 0, fusedBytes = 0;
    core::exec::Placement placement;
};

bool isSwapOut(const core::Op& op);

// `arena`: one cudaMalloc at the plan's offsets (offsets must suit each tensor's element size);
// otherwise buffer tensors get their addresses per pass.
core::Expected<Layout> makeLayout(const core::Graph& g, const core::PlanProblem& problem, const core::Plan& plan,
    const std::vector<core::TensorIndex>& bufferTensor, bool arena, const core::RunOptions& options);

// Contents of every stored graph input, as the CPU executor makes them; errors name the input.
using InputImages = std::vector<std::pair<core::TensorIndex, std::vector<std::byte>>>;
core::Expected<InputImages> inputImages(const core::Graph& g, const Layout& layout, const core::RunOptions& options);

} // namespace gpu
