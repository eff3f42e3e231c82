// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// For compiling gpu/kernels.cu as host code (tests/cudaemu/kernels.cpp): __global__ functions
// become plain functions run by one host thread that covers the whole grid (block 0 of 1, thread 0
// of 1, so every grid-stride loop visits each index once), and a launch enqueues that call on the
// stream after checking its pointer arguments (again when it runs: stream-ordered use after free).

#include "cuda_runtime_api.h"

#include <functional>
#include <type_traits>
#include <vector>

#define __global__

namespace cudaemu {

struct Dim {
    unsigned x;
};

void launchChecked(cudaStream_t stream, const char* kernel, std::function<void()> body, std::vector<const void*> pointers);

template <class... Args>
void launch(cudaStream_t stream, const char* kernel, std::function<void()> body, const Args&... args)
{
    std::vector<const void*> pointers;
    auto collect = [&](const auto& a) {
        if constexpr (std::is_pointer_v<std::decay_t<decltype(a)>>)
            if (a)
                pointers.push_back(static_cast<const void*>(a));
    };
    (collect(args), ...);
    launchChecked(stream, kernel, std::move(body), std::move(pointers));
}

} // namespace cudaemu

inline constexpr cudaemu::Dim blockIdx { 0 }, threadIdx { 0 }, blockDim { 1 }, gridDim { 1 };
