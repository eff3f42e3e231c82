// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "util/memory.h"

#include "util/format.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>

#include <sys/resource.h>
#include <unistd.h>

namespace core {

std::optional<std::int64_t> availableMemory()
{
    std::optional<std::int64_t> result;
    std::ifstream meminfo("/proc/meminfo");
    std::string line;
    while (std::getline(meminfo, line)) {
        std::istringstream fields(line);
        std::string key;
        std::int64_t kib = 0;
        if (fields >> key >> kib && key == "MemAvailable:") {
            result = kib * 1024;
            break;
        }
    }
    if (!result) {
        const long pages = sysconf(_SC_AVPHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
        if (pages > 0 && pageSize > 0)
            result = std::int64_t(pages) * pageSize;
    }
    rlimit limit {};
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        result = std::min<std::int64_t>(result.value_or(INT64_MAX), std::int64_t(limit.rlim_cur));
    return result;
}

Status checkAllocation(std::int64_t bytes, const std::string& what)
{
    const auto available = availableMemory();
    if (!available || bytes <= *available)
        return {};
    return makeError(ErrorCode::Io, what + " needs " + formatBytes(bytes) + " (" + std::to_string(bytes) + " bytes), more than the "
            + formatBytes(*available) + " of memory available");
}

} // namespace core
