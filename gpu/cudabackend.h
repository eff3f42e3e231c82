// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The CUDA executor (cudaexecutor.h) behind core's executor interface (exec/backend.h): what the
// plugin libmemplan-cuda.so hands to core, and what a program linking this code registers itself.

#include "exec/backend.h"

namespace gpu {

// Static lifetime; name() is "cuda", hasPool() true.
const core::ExecutorBackend& cudaBackend();

} // namespace gpu
