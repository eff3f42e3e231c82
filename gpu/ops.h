// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to gpu/: device implementations of ONNX ops over views into device memory. Same
// contracts as the CPU kernels (core/exec/kernels.h): shapes from the graph, inputs never written,
// an unsupported configuration is reported before anything is enqueued (the executor then runs
// the op on the host with the CPU kernel). Work is enqueued on the call's stream, never synchronised.

#include "exec/kernels.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <initializer_list>
#include <string>

namespace gpu {

struct DeviceCall {
    core::exec::KernelCall call;                // views hold device pointers
    std::vector<const std::byte*> hostContents; // per input slot: the host copy of a weight's contents, else nullptr
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;
    float* scratch = nullptr; // at least scratchFloats(call) floats: the op's planned workspace, else the run's scratch
    float* staging = nullptr; // at least stagingFloats(call) floats: float32 copies of half-precision tensors
};

struct Outcome {
    bool supported = true; // false: nothing enqueued, run it on the host
    std::string failure;   // a CUDA or cuBLAS call that failed (with its error), empty on success
};

using DeviceKernel = Outcome (*)(const DeviceCall&);

// The device kernel for an ONNX op type (default domain), or nullptr.
DeviceKernel findDeviceKernel(const std::string& opType);

// Device scratch an op needs (Conv's im2col columns; ConvTranspose's transposed weights and
// columns; a recurrent op's projections and state), in floats; 0 for most ops. For a Conv or
// ConvTranspose it is core::exec::ownWorkspaceFloats; the planned workspace (the CPU executor's
// need, core::opWorkspaceBytes) serves it when at least this large, else the run's scratch does.
std::int64_t scratchFloats(const core::exec::KernelCall& call);

// Runs `kernel` on the call; one with float16 or bfloat16 tensors (not a Cast) runs on float32 copies
// in d.staging, its results rounded back to nearest even (halfprecision.cpp). Without staging such
// a call is declined (the host runs it).
Outcome launchDeviceOp(DeviceKernel kernel, const DeviceCall& d);
// Floats of staging a call needs: its half-precision tensors, each rounded up to 256 bytes; 0 for
// a call without them and for Cast and CastLike.
std::int64_t stagingFloats(const core::exec::KernelCall& call);
// The call with its half-precision tensors typed float32 (data untouched): what the float32 kernel
// sees, for sizing its scratch.
core::exec::KernelCall widenedShapes(const core::exec::KernelCall& call);

// The Outcome of a launcher's result: a failure names `what`.
Outcome launched(cudaError_t e, const char* what);

// The Outcome of a cuBLAS call's status: a failure names `what`.
Outcome blasLaunched(cublasStatus_t s, const char* what);

// C[M,N] = alpha·op(A)·op(B) + beta·C over row-major operands; lda/ldb/ldc are the stored rows' lengths.
// Dimensions must fit cuBLAS's int (fitsInt).
cublasStatus_t gemmRowMajor(cublasHandle_t h, bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
    const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);

inline bool fitsInt(std::int64_t v) { return v >= 0 && v <= 0x7fffffff; }

// The call with the inputs an op reads as parameters (`slots`: pads, scales, axes, bounds) pointing
// at their host copies; false when one with elements has none (computed on the device), so only the
// host can read it. Inputs outside `slots` keep their device pointers.
bool hostArguments(const DeviceCall& d, std::initializer_list<std::size_t> slots, core::exec::KernelCall& host);

std::string cudaText(cudaError_t e);
std::string cublasText(cublasStatus_t s);

} // namespace gpu
