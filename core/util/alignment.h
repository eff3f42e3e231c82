// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "util/expected.h"

#include <cstdint>

namespace core {

// Largest activation alignment a load accepts, in bytes.
inline constexpr std::int64_t kMaxAlignment = std::int64_t(1) << 30;

// An alignment is a power of two from 1 to kMaxAlignment: offsets are rounded with alignUp, and
// buffers of a ragged alignment would fit no kernel's vector loads. The one check every load goes
// through (loadWorkload and workloadFromGraph: the CLI, the Studio); the message names `alignment`.
Status checkAlignment(std::int64_t alignment);

} // namespace core
