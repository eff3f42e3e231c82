// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Controls of the test emulation of CUDA (tests/cudaemu/README.md), for tests of the emulated
// build of the CUDA executor. Single-threaded, like the executor.

#include <cstddef>
#include <string>
#include <vector>

namespace cudaemu {

// Which runnable stream goes first whenever the emulation has to run queued work. Work runs only
// when the host waits for it (a synchronising call), so with OldestStreamFirst a stream created
// later (the executor's copy stream) runs as late as its events allow; NewestStreamFirst runs it
// as early as they allow. A missing event wait shows up as wrong data under one of the two.
enum class Order { OldestStreamFirst, NewestStreamFirst };

// Frees everything and starts over from the environment's settings, as at start-up:
//   MEMPLAN_CUDAEMU_ORDER      "oldest" or "newest" (default oldest; see Order)
//   MEMPLAN_CUDAEMU_DEVICES    device count (default 1; 0: no device)
//   MEMPLAN_CUDAEMU_MEMORY     device memory in bytes (default 16 GiB)
//   MEMPLAN_CUDAEMU_FAIL_CALL  n: the n-th counted call fails (failCall; default 0, none)
//   MEMPLAN_CUDAEMU_TRACE      set: print allocations, releases and launches to stderr
// No violations. At exit, a violation or anything still allocated or created is printed and the
// process exits with status 70.
void reset();
void setOrder(Order order);
Order order();
const char* orderName(Order order);

// Calls that can fail (everything but error queries, frees and destroys) are counted; the n-th
// counted call after this one fails (allocations with cudaErrorMemoryAllocation or
// CUBLAS_STATUS_ALLOC_FAILED, others with cudaErrorUnknown or CUBLAS_STATUS_EXECUTION_FAILED,
// kernel launches with cudaErrorLaunchFailure at the next cudaGetLastError). 0: none.
void failCall(long n);
long calls(); // counted calls since reset()

// For testing the emulation itself: cudaStreamWaitEvent returns success and orders nothing.
void setIgnoreStreamWaits(bool ignore);

void setDeviceCount(int count);          // 0: cudaGetDeviceCount reports cudaErrorNoDevice
void setDeviceMemory(std::size_t bytes); // cudaMalloc/cudaMallocAsync beyond it fail

struct Census {
    int deviceBlocks = 0, pinnedBlocks = 0, streams = 0, events = 0, blasHandles = 0;
    std::size_t deviceBytes = 0;
};
Census live(); // what is allocated or created and not yet released

// What real hardware would have faulted on or silently corrupted: a kernel, copy or GEMM touching
// memory outside a live allocation of the right kind, a stream-ordered use after free, an invalid
// handle. Each names the call; the first also makes every later call return cudaErrorIllegalAddress.
std::vector<std::string> violations();

} // namespace cudaemu
