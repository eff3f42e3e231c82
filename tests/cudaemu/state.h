// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to tests/cudaemu: the emulated device shared by runtime.cpp and blas.cpp.
// Memory: every allocation is a host block, filled with 0xFF bytes (NaN floats) when allocated
// and when freed; freed blocks stay reserved for a while (quarantine) so that a late use reads
// poison instead of someone else's data, and is reported. Streams: FIFO queues of tasks that run
// only when the host waits (see cudaemu::Order); events: markers in those queues.

#include "cudaemu.h"
#include "cuda_runtime_api.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cudaemu::detail {

enum class BlockKind { Device, Pool, Pinned };

struct Block {
    std::unique_ptr<std::byte[]> bytes;
    std::size_t size = 0;
    BlockKind kind = BlockKind::Device;
    bool allocated = true;  // not yet released by the host (cudaFree*, or cudaFreeAsync enqueued)
    bool usable = true;     // in stream order: allocated and not yet freed (pool blocks: once their allocation ran)
};

// A point in a stream's queue; an event names the latest one recorded.
struct Marker {
    bool done = false;
    double timeMs = 0;
};

struct Task {
    std::function<void()> work;         // runs when the task reaches the front and is chosen
    std::shared_ptr<Marker> record;     // event record: marks done
    std::shared_ptr<Marker> waitFor;    // stream wait: runnable once done
    double costMs = 0;
};

struct Stream {
    std::deque<Task> queue;
    bool blocking = true;
};

void recordViolation(const std::string& what);
// Counts a call that can fail; true when this one is to fail (cudaemu::failCall).
bool failHere();
cudaError_t stickyError(); // cudaSuccess, or cudaErrorIllegalAddress after a violation

// The block holding [p, p + n), or nullptr.
Block* blockOf(const void* p, std::size_t n = 1);
// Checks a device range for a call enqueued now: in a block of device or pool memory still allocated.
bool checkDevice(const void* p, std::size_t n, const std::string& call);
// Checks at run time that a range's block is usable in stream order.
bool usableNow(const void* p, std::size_t n, const std::string& call);

// Enqueues work on a live stream; false (and nothing enqueued) for an unknown stream.
bool validStream(cudaStream_t stream);
void enqueue(cudaStream_t stream, std::function<void()> work, double costMs);
// Runs queued work until `done` holds.
void runUntil(const std::function<bool()>& done);

// blas.cpp: the handles cuBLAS emulation has handed out.
int liveBlasHandles();
void resetBlas();

} // namespace cudaemu::detail
