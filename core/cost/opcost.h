// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "cost/device.h"
#include "graph/graph.h"
#include "schedule/schedule.h"

namespace core {

// Work of one op, from tensor shapes and op attributes:
// - Conv: 2 · output elements · (C_in / group · kH · kW); ConvTranspose: 2 · input elements · (C_out / group · kH · kW);
//   Gemm/MatMul: 2 · output elements · K (K from A's last axis, or its first when transA);
// - pooling: output elements · kernel size (global pooling: input elements); reductions: input elements;
// - normalizations: BatchNormalization 2, Layer/Instance/Group 8, Softmax 5 FLOPs per element;
// - elementwise: 1 FLOP per output element, transcendental ones (Exp, Erf, Gelu, Sigmoid, Tanh, ...) 8;
// - data movement (Concat, Split, Slice, Gather, Transpose, Pad, Expand, Tile, Resize): no FLOPs, reads and writes bytes;
// - views (Reshape, Flatten, Squeeze, Unsqueeze, Identity): no FLOPs and no bytes moved;
// - training-mode gradients of Conv/ConvTranspose/Gemm/MatMul: the forward op's FLOPs per gradient written (dX, dW);
// - a fused op (Op::body): the sum of its body ops' FLOPs; bytes are only its own inputs and outputs;
// - a control-flow op with graphs (Op::bodies): its own inputs and outputs, plus its graphs' ops by
//   these rules: an If's larger branch, a Loop's, Scan's or SequenceMap's body times the iterations
//   import knows (the trip count, the scan axis, the list length; else once);
// - a captured op (domain "aten", graph/capture.h): its integer attribute "flops" (the capture counted
//   them from the op's real arguments); without one its cost is unknown (costKnown) and counts 0 FLOPs;
// - anything else: 1 FLOP per output element, reads its inputs, writes its outputs.
// Bytes read are every input (weights included), bytes written every output. Unknown sizes count 0.
// Limits: no sparsity, no cache model; a roofline is an optimistic bound, good for comparing, not predicting.
struct OpCost {
    double flops = 0;
    double bytesRead = 0;
    double bytesWritten = 0;
    OpCost& operator+=(const OpCost& o)
    {
        flops += o.flops;
        bytesRead += o.bytesRead;
        bytesWritten += o.bytesWritten;
        return *this;
    }
};

OpCost opCost(const Graph& graph, const Op& op);

// False for a captured op (domain "aten") without a non-negative integer "flops" attribute: opCost
// then counts its bytes but no FLOPs. True for every other op (the rules above cost it).
bool costKnown(const Op& op);

// The scheduled ops whose cost is unknown (costKnown false): how many, and their distinct types in
// schedule order, the first kListed of them.
struct UnknownCosts {
    static constexpr std::size_t kListed = 10;
    int ops = 0;
    std::vector<std::string> types;
};
UnknownCosts costUnknownOps(const Graph& graph, const Schedule& schedule);

// True for ops that move no data (their output may alias their input): Reshape, Flatten, Squeeze, Unsqueeze, Identity.
bool isViewOp(const std::string& type);
// True for elementwise ops (unary activations and broadcasting binary arithmetic).
bool isElementwiseOp(const std::string& type);

// Roofline: max(FLOPs / FLOP/s for the op's dtype, bytes moved / memory bandwidth), in seconds.
double opSeconds(const Graph& graph, const Op& op, const DeviceProfile& device);

struct ScheduleCost {
    double flops = 0;
    double bytesMoved = 0;
    double seconds = 0; // sum of op roofline times (ops run one after another)
};
ScheduleCost scheduleCost(const Graph& graph, const Schedule& schedule, const DeviceProfile& device);
// opSeconds of each step's op, in schedule order (their sum is scheduleCost's seconds).
std::vector<double> scheduleStepSeconds(const Graph& graph, const Schedule& schedule, const DeviceProfile& device);

} // namespace core
