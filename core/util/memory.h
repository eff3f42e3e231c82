// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "util/expected.h"

#include <cstdint>
#include <optional>
#include <string>

namespace core {

// Bytes of memory the system can give this process now: MemAvailable of /proc/meminfo, else the
// free physical pages (sysconf), lowered to the address-space limit (ulimit -v) when one is set;
// nullopt when none of these can be read.
std::optional<std::int64_t> availableMemory();

// Refuses, before it is made, a host allocation of `bytes` that is more than availableMemory()
// (allowed when that is unknown). `what` names what the memory is for ("an arena", "tensor 'y' of
// ConstantOfShape 'fill'"); the message gives both sizes.
Status checkAllocation(std::int64_t bytes, const std::string& what);

} // namespace core
