// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "util/cancel.h"
#include "util/expected.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace core {

// True when `bytes` starts with the gzip magic 1f 8b.
bool isGzip(std::string_view bytes);

// Decompresses a gzip file's bytes (one member or several concatenated, as `cat a.gz b.gz` makes).
// Refuses output beyond `maxBytes` (a decompression bomb ends in a message, not in memory
// exhaustion), a corrupt or truncated stream, and bytes after the last member that are not another
// member; messages start with `source` and give the compressed byte offset. `progress` hears
// "decompressing" with the fraction of compressed bytes read (every 16 MiB); its cancel ends it
// with ErrorCode::Cancelled.
Expected<std::string> gunzip(std::string_view bytes, std::int64_t maxBytes, const std::string& source, const LoadProgress& progress = {});

} // namespace core
