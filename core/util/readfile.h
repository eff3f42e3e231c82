// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "util/expected.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace core {

// Caps on the files MemPlan reads whole. Generous: each is far above what a real file of its kind
// holds, and only there so that a wrong path (/dev/zero, a disk image) ends in a message, not in
// memory exhaustion.
inline constexpr std::int64_t kKiB = 1024;
inline constexpr std::int64_t kMiB = kKiB * 1024;
inline constexpr std::int64_t kGiB = kMiB * 1024;
// A device profile is about 1 KiB of JSON.
inline constexpr std::int64_t kMaxDeviceProfileBytes = 1 * kMiB;
// An allocation-problem CSV: a 2-million-row problem with 40-character ids is about 120 MiB.
inline constexpr std::int64_t kMaxProblemCsvBytes = 2 * kGiB;
// A JSON file (graph, plan): as large as the largest CSV, since a graph has at least one line per tensor.
inline constexpr std::int64_t kMaxJsonBytes = 2 * kGiB;
// A protobuf message (an ONNX model, a TensorProto .pb): protobuf itself refuses 2 GiB and more.
inline constexpr std::int64_t kMaxProtobufBytes = 2 * kGiB - 1;
// A PyTorch memory snapshot (a pickle, maybe gzip-compressed), on disk and after decompression: a
// long training run's trace with stack frames reaches a few GiB. Just under 4 GiB, so that every
// offset and length inside one fits 32 bits (core/io/pickle.h).
inline constexpr std::int64_t kMaxSnapshotBytes = 4 * kGiB - 1;
// An ONNX Runtime profile (JSON): a run of a thousand-node model writes about 1 MB per pass, so this
// is a thousand passes; the parsed document takes several times the file in memory.
inline constexpr std::int64_t kMaxOrtProfileBytes = 1 * kGiB;

// Checks that `file` is a regular file (not a folder, a device such as /dev/zero, a FIFO or a
// socket, which could be read forever or block) of at most `maxBytes` bytes, and returns its size.
// `what` names the kind of file, with its article, in the message ("a device profile"); messages name the file and the cap.
Expected<std::int64_t> checkReadableFile(const std::filesystem::path& file, std::int64_t maxBytes, std::string_view what);

// Reads all of `file`, after checkReadableFile; a file that grows past the cap while being read is
// refused too.
Expected<std::string> readFileCapped(const std::filesystem::path& file, std::int64_t maxBytes, std::string_view what);

} // namespace core
