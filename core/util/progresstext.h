// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Progress of a run in words, for the CLI's progress line and the Studio's status bar:
// "op 37 of 122 · pass 3 of 11 · 42% · about 3 s left".

#include <string>
#include <string_view>

namespace core {

// `done` of `total` units, `unit` of them per pass (the schedule's ops; the pass is left out when
// there is one), `elapsedSeconds` since the start. The estimate extrapolates the rate so far and
// shows once a second has passed. `noun` names the unit: "op 37 of 122", "decode step 40 of 600".
std::string progressText(int done, int total, int unit, double elapsedSeconds, std::string_view noun = "op");

} // namespace core
