// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "exec/executor.h"

// Runs the rest of a scope on the given CPU kernels (core::setCpuKernels: they also size the op
// workspaces) and puts back the process defaults when the scope ends, however the test leaves it:
// oneDNN kernels on every core, activations between convolutions N,H,W,C. A test may switch kernels or threads again inside the scope.
class CpuKernelsInScope {
public:
    explicit CpuKernelsInScope(core::CpuKernels kernels) { core::setCpuKernels(kernels); }
    ~CpuKernelsInScope()
    {
        core::setCpuKernels(core::CpuKernels::OneDnn);
        core::setCpuThreads(0);
        core::setCpuChannelsLast(true);
    }
    CpuKernelsInScope(const CpuKernelsInScope&) = delete;
    CpuKernelsInScope& operator=(const CpuKernelsInScope&) = delete;
};
