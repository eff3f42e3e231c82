// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The entry point of the CUDA executor plugin (core/exec/backend.h): the only symbol it exports.
#include "cudabackend.h"

extern "C" __attribute__((visibility("default"))) const core::ExecutorBackend* memplan_executor_plugin(std::uint64_t abi)
{
    return abi == core::kExecutorPluginAbi ? &gpu::cudaBackend() : nullptr;
}
