// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to core/exec: the CPU executor's Conv, ConvTranspose, MatMul and Gemm on oneDNN primitives,
// and its activations, binary arithmetic and pooling where oneDNN takes the call.
// - Tensors stay where the plan put them: sources and destinations are the arena's row-major
//   (NCHW) memory, weights the model's plain layout, so no reorder copies exist anywhere.
// - Each primitive runs in oneDNN's user-managed scratchpad mode: the scratchpad it asks for is the
//   op's planned workspace (exec/workspace.h) when there is one, else kernel scratch. The size is
//   what planning asks for too (onednnScratchpadBytes), so measured = predicted holds.
// - A call oneDNN takes runs on it in both runs of the plan check, so the arena run stays bit for
//   bit the no-reuse run. A configuration oneDNN refuses falls back to the own kernel and leaves a
//   note (takeOnednnNotes); a failure inside a primitive is such a note too, naming the op.
// - Primitives are created once per configuration (shapes, attributes, thread count) and cached;
//   thread-safe: the cache is locked, primitives themselves hold no data.

#include "exec/kernels.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace core::exec {

// While one lives on a thread, constant weights (TensorView::constant) that a convolution wants in
// oneDNN's layout (an N,H,W,C convolution's: exec/channelslast.h) are reordered once per weights
// tensor and layout and kept here until it is destroyed; the CPU executor holds one per run (weights
// do not change during it), as a runtime keeps prepacked weights. Without one they are reordered on
// every call, into kernel scratch. The innermost one on the thread is used.
class WeightPacks {
public:
    WeightPacks();
    ~WeightPacks();
    WeightPacks(const WeightPacks&) = delete;
    WeightPacks& operator=(const WeightPacks&) = delete;
    std::int64_t bytes() const; // held in oneDNN's layouts
    int count() const;          // weights tensors packed
    struct Impl;
    Impl& impl() { return *m_impl; }

private:
    std::unique_ptr<Impl> m_impl;
    WeightPacks* m_previous = nullptr;
};

// Bytes of workspace oneDNN needs for this call: its primitive's scratchpad, and for a depthwise
// convolution the NHWC copies of its input and output and its weights in oneDNN's layout (staged
// there, reordered in and out around the primitive). -1 when oneDNN does not take the call (not one
// of its ops, dtypes or configurations). Shapes and attributes only, never data.
std::int64_t onednnScratchpadBytes(const KernelCall& call);

// Runs a call with a view stored channels-last on oneDNN (a Conv, or a pointwise op or pooling that
// takes either layout); false, writing nothing, when oneDNN does not take it.
bool onednnChannelsLast(const KernelCall& call);

// Runs the call on oneDNN; false (nothing written) when oneDNN does not take it. The scratchpad is
// call.workspace when that holds onednnScratchpadBytes, else kernel scratch.
bool onednnConv(const KernelCall& call);

// A fused op's body that is a 2-D Conv followed by activations (Relu, LeakyRelu, Sigmoid, Tanh,
// HardSwish, Clip), each reading the one before: run as one N,H,W,C convolution with oneDNN eltwise
// post-ops, writing the last call's output (the intermediate outputs are not written). The same bits
// as the calls one by one (the same convolution, the activations applied to its float results).
// False, writing nothing, when the body is not such a chain, its output is not stored N,H,W,C, the
// chain would need more workspace than its Conv alone (what the plan holds), or oneDNN does not take
// it: the calls then run one by one. A residual Add is not a post-op here: oneDNN's binary post-op
// rounds differently from the Add alone (measured on example:cnn), which would break fusion's
// bit-identical outputs.
bool onednnConvChain(const std::vector<const KernelCall*>& calls);
bool onednnConvTranspose(const KernelCall& call);
bool onednnMatMul(const KernelCall& call);
bool onednnGemm(const KernelCall& call);

// Puts oneDNN in front of the own kernels of Relu, LeakyRelu, Sigmoid, Tanh, HardSwish, Clip, Add,
// Sub, Mul, Div, MaxPool, AveragePool, GlobalAveragePool, Softmax, LogSoftmax, LayerNormalization
// (without its statistics outputs), Transpose and Slice (positive steps) in `table`: float32 calls
// oneDNN takes run on it, the rest on the own kernel. findKernel's table calls it once.
void addOnednnKernels(std::map<std::string, Kernel>& table);

// Bytes of workspace (scratchpad) oneDNN's primitive for such a call needs (a pooling over NCHW
// transposes through it), or -1 when oneDNN does not take the call or its primitive depends on
// input values (Clip's bound inputs, Slice). Shapes and attributes only, never data.
std::int64_t onednnPointwiseWorkspaceBytes(const KernelCall& call);

// Notes left since the last take, one per op and reason: "op 'conv1' (Conv): oneDNN refused it
// (...); the own kernel ran". Cleared by the take.
std::vector<std::string> takeOnednnNotes();

// Kernel calls this thread ran on oneDNN since the last take; cleared by the take.
int takeOnednnCalls();

// The implementation oneDNN chose for this call ("gemm:jit", "brg:avx512_core"), "" when it does not take it.
std::string onednnImplementation(const KernelCall& call);

} // namespace core::exec
