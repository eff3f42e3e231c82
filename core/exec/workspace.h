// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Op workspaces: temporary memory an op needs only while it runs, planned like any other buffer
// (ProblemOptions::workspaces): the scratchpad oneDNN's primitive asks for when oneDNN runs a Conv,
// ConvTranspose, MatMul or Gemm (exec/onednn.h), else a Conv's im2col columns or a ConvTranspose's
// transposed weights and columns for the own kernels.
// - opWorkspaceBytes is the one size the CPU kernels use and makeProblem plans, so the planned
//   buffer is exactly what the kernel writes (before the problem's alignment). oneDNN's scratchpad
//   depends on the CPU and on the thread count (cpuThreads): plan and run in one process setting.
//   The CUDA executor uses the workspace where it holds its columns, else its own scratch.
// - A workspace buffer has no tensor (bufferTensor -1), kind Workspace and lifetime [s, s + 1) for the
//   step s of its op: the executors find its op from that step.
// - A fused op whose body needs workspace gets one, as large as its largest body op needs: the
//   body's ops run one at a time and share it. (The CUDA executor runs fused ops on the host with
//   host scratch, so there the fused op's workspace is reserved but unused.)

#include "planners/problem.h"
#include "schedule/schedule.h"

#include <vector>

namespace core {

// Bytes of workspace the CPU kernel of `op` needs (exec::workspaceFloats): oneDNN's scratchpad, or
// the own kernel's columns; 0 for an op that needs none (a direct convolution on the own kernel, a
// configuration no kernel runs, unknown shapes, every other op). A fused op: the most any op of its
// body needs.
// `channelsLast`: per tensor, stored N,H,W,C in the CPU executor's runs (exec::channelsLastTensors of
// the graph; empty: none), which decides whether a convolution stages a side through its workspace.
Bytes opWorkspaceBytes(const Graph& graph, const Op& op, const std::vector<bool>& channelsLast = {});

// Name of the workspace buffer of `op`: "<op name> workspace".
std::string workspaceName(const Op& op);

// Per step, the workspace buffer of the op that runs there (a control-flow op's: the arena its graphs
// are planned in, liveness/lifetimes.h NestedPlan), or -1. Errors (naming the buffer) for a
// workspace buffer whose lifetime is not one step of the schedule, two workspaces at one step, one
// whose op needs no workspace or more than the buffer holds, and a buffer with no tensor that is not
// a workspace. `bufferTensor` as in Workload (-1 for buffers without a tensor).
Expected<std::vector<int>> workspaceAtStep(const Graph& graph, const Schedule& schedule, const PlanProblem& problem,
    const std::vector<TensorIndex>& bufferTensor);

} // namespace core
