// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <cstdint>
#include <string>

namespace core {

// "812 B", "1.50 KiB", "24.0 MiB", "1.25 GiB": three significant digits, binary units.
std::string formatBytes(std::int64_t bytes);

// "0.42 ms", "12.3 ms", "1.24 s".
std::string formatSeconds(double seconds);

// A FLOP count to three significant digits: "2.58e+09", "512".
std::string formatFlops(double flops);

} // namespace core
