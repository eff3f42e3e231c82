// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to gpu/: what every part of the CUDA executor shares: checked CUDA and cuBLAS calls
// (CUDA_TRY, BLAS_TRY return an ErrorCode::CudaFailure naming the call and where it happened),
// owning pointers for device and pinned memory, and the run's streams, cuBLAS handle and events.

#include "ops.h"

#include "util/expected.h"

#include <cublas_v2.h>
#include <cuda_runtime.h> // the typed cudaMalloc overloads

#include <memory>
#include <string>
#include <vector>

namespace gpu {

// The function a call expression calls: "cudaMalloc(&p, n)" -> "cudaMalloc" (messages name the call, not the code).
inline std::string calledFunction(const char* call)
{
    const std::string text(call);
    return text.substr(0, text.find('('));
}

inline core::Error cudaFailure(const char* call, const std::string& where, const std::string& error)
{
    return core::makeError(core::ErrorCode::CudaFailure, where + ": " + calledFunction(call) + " failed: " + error);
}

// Every CUDA call of the executor: a failure returns an error naming the call and `where` (an op or a phase).
#define CUDA_TRY(expr, where)                                                                                                              \
    do {                                                                                                                                   \
        const cudaError_t error_ = (expr);                                                                                                 \
        if (error_ != cudaSuccess)                                                                                                         \
            return ::gpu::cudaFailure(#expr, (where), ::gpu::cudaText(error_));                                                            \
    } while (0)

#define BLAS_TRY(expr, where)                                                                                                              \
    do {                                                                                                                                   \
        const cublasStatus_t status_ = (expr);                                                                                             \
        if (status_ != CUBLAS_STATUS_SUCCESS)                                                                                              \
            return ::gpu::cudaFailure(#expr, (where), ::gpu::cublasText(status_));                                                         \
    } while (0)

struct DeviceFree {
    void operator()(std::byte* p) const { cudaFree(p); }
};
using DeviceMemory = std::unique_ptr<std::byte, DeviceFree>;
struct HostFree {
    void operator()(std::byte* p) const { cudaFreeHost(p); }
};
using PinnedMemory = std::unique_ptr<std::byte, HostFree>;

// Streams, the cuBLAS handle and events, released in any case.
// Events: per step start, end and "inputs ready" (for the copy stream), then the pass's start and
// end and the copy stream's tail.
struct Context {
    cudaStream_t compute = nullptr, copy = nullptr;
    cublasHandle_t blas = nullptr;
    std::vector<cudaEvent_t> events;

    cudaEvent_t startEvent(std::size_t s) const { return events[3 * s]; }
    cudaEvent_t endEvent(std::size_t s) const { return events[3 * s + 1]; }
    cudaEvent_t readyEvent(std::size_t s) const { return events[3 * s + 2]; }
    cudaEvent_t passStart() const { return events[events.size() - 3]; }
    cudaEvent_t passEnd() const { return events[events.size() - 2]; }
    cudaEvent_t copyTail() const { return events[events.size() - 1]; }

    Context() = default;
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;
    ~Context()
    {
        for (auto e : events)
            cudaEventDestroy(e);
        if (blas)
            cublasDestroy(blas);
        if (copy)
            cudaStreamDestroy(copy);
        if (compute)
            cudaStreamDestroy(compute);
    }
};

} // namespace gpu
