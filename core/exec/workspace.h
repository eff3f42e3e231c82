// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Op workspaces: temporary memory an op needs only while it runs, planned like any other buffer
// (ProblemOptions::workspaces): a Conv's im2col columns, a ConvTranspose's transposed weights and
// columns.
// - convWorkspaceBytes is the one size the kernels use and makeProblem plans, so the planned buffer
//   is exactly what the kernel writes (before the problem's alignment), on the CPU and on the GPU.
// - A workspace buffer has no tensor (bufferTensor -1), kind Workspace and lifetime [s, s + 1) for the
//   step s of its op: the executors find its op from that step.
// - A fused op whose body holds a Conv gets one workspace, as large as its largest body Conv needs:
//   the body's ops run one at a time and share it. (The CUDA executor runs fused ops on the host
//   with host scratch, so there the fused op's workspace is reserved but unused.)

#include "planners/problem.h"
#include "schedule/schedule.h"

#include <vector>

namespace core {

// Bytes of workspace the kernel of `op` needs (exec::workspaceFloats): a Conv's im2col columns (the
// same for both executors), a ConvTranspose's transposed weights and columns; 0 for a direct
// convolution (1x1, stride 1, no padding), a convolution the kernels do not run (not float32, 3-D,
// unknown shapes) and every other op. A fused op: the most any op of its body needs.
Bytes convWorkspaceBytes(const Graph& graph, const Op& op);

// Name of the workspace buffer of `op`: "<op name> workspace".
std::string workspaceName(const Op& op);

// Per step, the workspace buffer of the op that runs there, or -1. Errors (naming the buffer) for a
// workspace buffer whose lifetime is not one step of the schedule, two workspaces at one step, one
// whose op needs no workspace or more than the buffer holds, and a buffer with no tensor that is not
// a workspace. `bufferTensor` as in Workload (-1 for buffers without a tensor).
Expected<std::vector<int>> workspaceAtStep(const Graph& graph, const Schedule& schedule, const PlanProblem& problem,
    const std::vector<TensorIndex>& bufferTensor);

} // namespace core
