// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Test emulation (tests/cudaemu/README.md): the runtime API plus the typed allocation overloads
// that the real cuda_runtime.h adds.

#include "cuda_runtime_api.h"

template <class T>
cudaError_t cudaMalloc(T** devPtr, std::size_t size)
{
    return cudaMalloc(reinterpret_cast<void**>(devPtr), size);
}

template <class T>
cudaError_t cudaMallocHost(T** ptr, std::size_t size)
{
    return cudaMallocHost(reinterpret_cast<void**>(ptr), size);
}

template <class T>
cudaError_t cudaMallocAsync(T** devPtr, std::size_t size, cudaStream_t stream)
{
    return cudaMallocAsync(reinterpret_cast<void**>(devPtr), size, stream);
}
