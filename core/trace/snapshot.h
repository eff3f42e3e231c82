// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/pickle.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace core {

// A PyTorch CUDA memory snapshot as `torch.cuda.memory._dump_snapshot()` writes it (docs/FILE_FORMATS.md):
// the caching allocator's segments when the snapshot was taken and, when history was recorded
// (`_record_memory_history()`), per device the allocator's events leading up to it.

struct StackFrame {
    std::string filename;
    std::int64_t line = 0;
    std::string name;
};
// "linear.py:125 forward": the file's last path component, as PyTorch's own viewer shows frames.
std::string frameLabel(const StackFrame& frame);

enum class BlockState { ActiveAllocated, ActivePendingFree, Inactive };

struct SnapshotBlock {
    std::int64_t address = 0; // absent in old snapshots: the blocks then follow each other from the segment's start
    std::int64_t size = 0;
    std::int64_t requestedSize = 0;
    BlockState state = BlockState::Inactive;
    int frame = -1; // MemorySnapshot::frames, where it was allocated; -1 without frames
};

struct SnapshotSegment {
    int device = -1; // -1: the snapshot does not say (old single-device snapshots)
    std::int64_t address = 0;
    std::int64_t totalSize = 0;
    std::int64_t stream = 0;
    bool large = true; // segment_type "large" (requests over 1 MiB) or "small"
    std::vector<SnapshotBlock> blocks;
};

enum class TraceAction : std::uint8_t { Alloc, FreeRequested, FreeCompleted, SegmentAlloc, SegmentFree, SegmentMap, SegmentUnmap, Oom, Snapshot, Other };

// 48 bytes: a large snapshot holds tens of millions (the frame sits beside the action, in the padding).
struct TraceEvent {
    TraceAction action = TraceAction::Other;
    int frame = -1; // MemorySnapshot::frames
    std::int64_t addr = 0;
    std::int64_t size = 0;
    std::int64_t stream = 0;
    std::int64_t timeUs = -1;     // -1: not recorded
    std::int64_t deviceFree = -1; // oom only: what CUDA still reported free
};

// One entry of `external_annotations`: what PyTorch's record_function (or a user's annotation)
// recorded while history was on. Its string fields are kept: "name" and "stage" ("START"/"END")
// mark a range; anything else is joined into `text`.
struct SnapshotAnnotation {
    int device = -1;         // -1: not recorded
    std::int64_t timeUs = -1; // -1: not recorded (it cannot be placed on the event axis)
    std::string name;
    std::string stage; // "START", "END", or "" for a point
    std::string text;  // the other string fields, "key=value" joined by ", "
};

struct MemorySnapshot {
    std::vector<SnapshotSegment> segments;
    std::vector<std::vector<TraceEvent>> deviceTraces; // per device index; empty without recorded history
    // The distinct allocation sites that blocks and events name: of each stack, its most recent
    // Python frame (a .py file among its first 64), else its most recent frame; C++ frames above it (the allocator's
    // own) say nothing about which tensor it was.
    std::vector<StackFrame> frames;
    std::vector<SnapshotAnnotation> annotations; // `external_annotations` (or `annotations`), in the snapshot's order
    int unknownActions = 0; // events of actions this reader does not know, skipped
};

// The largest size or address a snapshot may name: 2^60 bytes (core::kMostProblemBytes) for sizes,
// 2^62 for addresses, so that an address plus a size never overflows.
inline constexpr std::int64_t kMostSnapshotAddress = std::int64_t(1) << 62;

// Reads the snapshot from a parsed pickle. Refusals name the segment and block or the device and
// event: a segment or block without its size, a size or address out of range, a field of the wrong
// type, blocks larger than their segment, an annotation that is not a dict. `progress` hears "reading the events"; its cancel ends the
// read with ErrorCode::Cancelled.
Expected<MemorySnapshot> snapshotFromPickle(const PickleValue& root, const std::string& source, const LoadProgress& progress = {});

// readPickleFile, then snapshotFromPickle.
Expected<MemorySnapshot> loadSnapshot(const std::filesystem::path& file, const LoadProgress& progress = {});

} // namespace core
