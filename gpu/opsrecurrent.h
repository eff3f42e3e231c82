// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to gpu/: RNN, GRU and LSTM on the device, added to the op table of ops.cpp. They take
// the calls the CPU kernel takes (core/exec/recurrence.h). Per direction, the input projections of
// every step come from one cuBLAS GEMM; each step then runs the hidden-state GEMM and one gate
// kernel, all on the call's stream. Sequence lengths are read on the device, so the op never waits.

#include "ops.h"

#include <map>

namespace gpu {

bool isRecurrent(const std::string& opType);

// Scratch floats a recurrent call needs, from shapes alone: the input projections of every step
// (seq × batch × gates·hidden), the hidden-state projections (batch × gates·hidden), then four
// batch × hidden blocks (GRU's reset product and its input, the hidden and the cell state). 0 when
// the shapes are not those of a recurrent op (the op then runs on the host).
std::int64_t recurrentScratchFloats(const core::exec::KernelCall& call);

void addRecurrentKernels(std::map<std::string, DeviceKernel>& table);

} // namespace gpu
