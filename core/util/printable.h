// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <string>
#include <string_view>

namespace core {

// `text` safe to print on a terminal: control characters (bytes below 0x20 and 0x7f), which a
// name read from a file may hold, are written as escapes (\n, \r, \t, \x1b), so a name cannot
// move the cursor, recolour the terminal or forge a line. Other bytes (UTF-8 included) stay.
std::string printable(std::string_view text);

} // namespace core
