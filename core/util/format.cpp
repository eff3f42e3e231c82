// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "util/format.h"

#include <cmath>
#include <cstdio>

namespace core {

namespace {
std::string threeDigits(double value, const char* unit)
{
    char text[48];
    const char* format = value >= 100 ? "%.0f %s" : value >= 10 ? "%.1f %s" : "%.2f %s";
    std::snprintf(text, sizeof text, format, value, unit);
    return text;
}
} // namespace

std::string formatBytes(std::int64_t bytes)
{
    const char* units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
    if (std::llabs(bytes) < 1024)
        return std::to_string(bytes) + " B";
    double value = static_cast<double>(bytes);
    int unit = -1;
    while (std::fabs(value) >= 1024 && unit < 4) {
        value /= 1024;
        ++unit;
    }
    // 1023.7 KiB would print as "1024 KiB": move to the next unit instead.
    if (std::fabs(value) >= 999.95 && unit < 4) {
        value /= 1024;
        ++unit;
    }
    return threeDigits(value, units[unit]);
}

std::string formatFlops(double flops)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", flops);
    return text;
}

std::string formatSeconds(double seconds)
{
    if (seconds < 1e-3)
        return threeDigits(seconds * 1e6, "us");
    if (seconds < 1)
        return threeDigits(seconds * 1e3, "ms");
    return threeDigits(seconds, "s");
}

} // namespace core
