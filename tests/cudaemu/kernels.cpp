// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// gpu/kernels.cu compiled as host code for the emulated build (README.md): the same kernels and
// launchers, each launch enqueued on the emulated stream (cudaemu_kernels.h).
#include "cudaemu_kernels.h"

#include "kernels.cu"
