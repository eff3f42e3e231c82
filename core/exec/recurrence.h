// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The configuration of an RNN, GRU or LSTM call as its kernels take it, shared by the CPU kernel
// (kernels_recurrent.cpp) and the CUDA executor's, so both accept exactly the same calls.

#include "exec/kernels.h"

namespace core::exec {

enum class Cell { Rnn, Gru, Lstm };

// The activations without parameters: the defaults and what exporters write.
enum class RecurrentActivation { Sigmoid, Tanh, Relu };

struct Recurrence {
    Cell cell = Cell::Lstm;
    int gates = 4, dirs = 1; // gates: 4 (LSTM i, o, f, c), 3 (GRU z, r, h), 1 (RNN)
    bool reverseOnly = false, batchFirst = false, linearBeforeReset = false;
    std::int64_t seq = 0, batch = 0, input = 0, hidden = 0;
    float clip = 0; // 0: none
    // Per direction: f, g, h (LSTM), f, g (GRU), f (RNN).
    RecurrentActivation f[2] = { RecurrentActivation::Sigmoid, RecurrentActivation::Sigmoid };
    RecurrentActivation g[2] = { RecurrentActivation::Tanh, RecurrentActivation::Tanh };
    RecurrentActivation h[2] = { RecurrentActivation::Tanh, RecurrentActivation::Tanh };
};

// The call's shapes and attributes, checked: float32 operands (sequence_lens int32), the shapes ONNX
// states, activations above, no input_forget, no activation_alpha/beta. False when a kernel does
// not take the call (it then runs elsewhere or synthetically).
bool recurrence(const KernelCall& c, Cell cell, Recurrence& r);

// The output in ONNX slot `slot` (0 Y, 1 Y_h, 2 Y_c), or null when the call leaves it out.
float* recurrentOutput(const KernelCall& c, int slot);

} // namespace core::exec
