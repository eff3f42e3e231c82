// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The CUDA executor: runs a planned graph on the GPU with every activation at its planned offset
// inside one cudaMalloc, and measures it. Built only when CMake finds a CUDA compiler (the library
// memplan_gpu defines MEMPLAN_HAVE_CUDA for its users); this header needs no CUDA headers.
// - Placement as on the CPU (core/exec/layout.h, shared): the activation arena (one cudaMalloc of
//   plan.arenaSize), weights and anything without a buffer in a second allocation, swap-strategy
//   host tensors (SwapOut outputs) in pinned host memory.
// - Contents: the CPU executor's weights and inputs (same seed, same bits), uploaded once.
// - Kernels: float32 device kernels for the common ops (cuBLAS for Gemm/MatMul, im2col + cuBLAS
//   for Conv, whose column buffer is its planned workspace when the problem has one (arena: at its
//   offset; PerTensor/Pool: allocated at its step like any buffer), else one device scratch reported
//   in Measurement::scratchBytes; a direct 1x1 Conv needs none); every other op runs on the host with
//   the CPU executor's own kernel (real or synthetic) between a device-to-host and a host-to-device
//   copy, counted in Measurement::opsHost. So outputs match the CPU run within float rounding.
//   An op whose inputs are all constant is computed once before the passes, the same way, and
//   its outputs copied to the device at its step (Measurement::opsPrecomputed; steps.h).
//   A fused op (Op::body) runs on the host the same way, its body on the CPU executor's kernels
//   (core::exec::runHostOp), real when every body op is; its internal tensors never reach the device.
// - SwapOut/SwapIn: copies through pinned host memory on a second (copy) stream, ordered by events;
//   the compute stream waits for a swap-out only before it overwrites or frees the source.
// - Allocation modes: Arena; PerTensor (cudaMalloc at a buffer's first use, cudaFree after its last
//   read); Pool (cudaMallocAsync/cudaFreeAsync on the compute stream, the device's default pool
//   keeping its memory between passes).
// - Passes: one warm-up (its outputs are returned), RunOptions::repeat timed passes (per-op CUDA
//   events, end-to-end events; median and p99), then one traced pass that synchronises after every
//   step to record Measurement::stepBytes:
//     Arena, PerTensor: the executor's own count, as on the CPU: bytes of the buffers holding a
//                value still to be read (arena) or allocated with cudaMalloc (per-tensor; requested
//                sizes, not the driver's rounding). Its maximum is the problem's lower bound.
//     Pool:      the pool's own count of bytes in use by allocations (cudaMemPoolAttrUsedMemCurrent),
//                which includes the pool's rounding.
// Every CUDA and cuBLAS call is checked; a failure is an ErrorCode::CudaFailure naming the call and the op.
// One run at a time per process (the host kernels share scratch memory).

#include "exec/executor.h"

#include <string>
#include <string_view>

namespace gpu {

enum class CudaAllocation { Arena, PerTensor, Pool };
std::string_view cudaAllocationName(CudaAllocation allocation); // "arena", "per-tensor", "pool"

// True when a CUDA device can be used; otherwise false and *why (when given) says why, e.g.
// "no CUDA driver is loaded (cudaErrorInsufficientDriver)".
bool cudaAvailable(std::string* why = nullptr);

// Name and memory of device 0, for reports ("NVIDIA H100 80GB HBM3, 79.1 GiB"); empty without one.
std::string cudaDeviceDescription();

// Runs `graph` on device 0 (see above). The Measurement's device is "cuda"; allocation Arena for the
// arena, PerTensor for both other modes (planner "per-tensor" or "pool"). RunOptions::allocation is ignored.
core::Expected<core::Measurement> runOnCuda(const core::Graph& graph, const core::Schedule& schedule, const core::PlanProblem& problem,
    const core::Plan& plan, const std::vector<core::TensorIndex>& bufferTensor, const core::RunOptions& options,
    CudaAllocation allocation = CudaAllocation::Arena);

} // namespace gpu
