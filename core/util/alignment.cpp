// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "util/alignment.h"

#include <string>

namespace core {

Status checkAlignment(std::int64_t alignment)
{
    if (alignment < 1 || alignment > kMaxAlignment || (alignment & (alignment - 1)) != 0)
        return makeError(ErrorCode::InvalidArgument,
            "alignment " + std::to_string(alignment) + ": expected a power of two from 1 to 2^30 bytes");
    return {};
}

} // namespace core
