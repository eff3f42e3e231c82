// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Which activations the CPU executor stores channels-last (N,H,W,C) instead of ONNX's N,C,H,W.
// oneDNN's fast convolutions (brgconv) want NHWC; on NCHW it falls back to im2col GEMMs that run
// 1.1-2.6x slower on ResNet's layers, and a depthwise convolution 15-20x slower. So the convolutions
// and the pointwise ops and pooling between them keep their tensors NHWC from one convolution to the
// next, and no copy is made anywhere but at a convolution whose other side stays NCHW (it stages
// that side through its workspace).
// - A tensor is NHWC only when it is a float32 activation of a known rank-4 shape with more than one
//   spatial element (with H·W = 1 both layouts are the same bytes), is no graph input or output, and
//   every op that writes or reads it takes either layout: a 2-D Conv, Relu, LeakyRelu, Sigmoid, Tanh,
//   HardSwish, Clip, Identity, SwapOut, SwapIn (byte copies), Add, Sub, Mul, Div (whose full-size operands share
//   the result's layout; a broadcast operand must have H·W = 1), MaxPool, AveragePool (ceil_mode 0,
//   one output) or GlobalAveragePool. A fused op's body ops count as ops, its internal tensors as
//   tensors, so a fused group computes the bits of the unfused ops.
// - Pointwise ops, copies and pooling keep one layout for their full-size operands: tensors joined
//   through them are NHWC together or not at all, and only when a convolution reads or writes one.
// - A 2-D float32 convolution runs N,H,W,C whatever its sides' layouts (staging an N,C,H,W side), so
//   its output bits do not depend on the layouts around it: a strategy that changes them (swap's
//   copies, recompute's clones) leaves every convolution's result as it was.
// - A function of the graph and cpuKernels() alone, so planning (op workspaces) and every run of a
//   plan see the same layouts: the arena run stays bit for bit the no-reuse run.
// - The own kernels never see an NHWC tensor: a call oneDNN does not take after all runs on NCHW
//   copies (runKernel). Only the CPU executor uses this; the CUDA executor keeps NCHW.

#include "graph/graph.h"

#include <vector>

namespace core::exec {

// Per tensor of `graph`: stored NHWC. All false with the own kernels (cpuKernels() == Own) or
// with cpuChannelsLast() off.
std::vector<bool> channelsLastTensors(const Graph& graph);

} // namespace core::exec
