// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "util/progresstext.h"

#include <algorithm>
#include <cstdio>

namespace core {

std::string progressText(int done, int total, int unit, double elapsedSeconds, std::string_view noun)
{
    unit = std::max(unit, 1);
    total = std::max(total, 1);
    done = std::clamp(done, 0, total);
    const int passes = (total + unit - 1) / unit;
    const int pass = std::min(done / unit + 1, passes);
    const int op = done - (pass - 1) * unit;
    std::string text = std::string(noun) + " " + std::to_string(op) + " of " + std::to_string(unit);
    if (passes > 1)
        text += " · pass " + std::to_string(pass) + " of " + std::to_string(passes);
    text += " · " + std::to_string(int(100.0 * done / total)) + "%";
    if (done > 0 && done < total && elapsedSeconds > 1.0) {
        const double left = elapsedSeconds * double(total - done) / double(done);
        char estimate[64];
        std::snprintf(estimate, sizeof estimate, left < 90 ? " · about %.0f s left" : " · about %.0f min left", left < 90 ? left : left / 60);
        text += estimate;
    }
    return text;
}

} // namespace core
