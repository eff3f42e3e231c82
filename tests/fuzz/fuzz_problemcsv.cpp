// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// An allocation-problem CSV (name, size, lower, upper[, offset]): parse, every planner, and the
// file's own offsets through the validator. A problem that loads must survive its own export.
#include "fuzzcommon.h"

#include "io/problemcsv.h"

#include <algorithm>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    auto csv = core::parseProblemCsv(fuzz::text(data, size), "fuzz.csv");
    if (!csv) {
        fuzz::checkError(csv.error(), "parseProblemCsv");
        return 0;
    }
    const auto& problem = csv->problem;
    if (csv->offsets) {
        // The file's own plan may be wrong (that is what the validator is for), but it is checked without a crash.
        core::Plan given;
        given.offsets = *csv->offsets;
        for (std::size_t i = 0; i < problem.buffers.size() && i < given.offsets.size(); ++i)
            if (given.offsets[i] >= 0 && given.offsets[i] <= core::kMostProblemBytes && problem.buffers[i].size >= 0
                && problem.buffers[i].size <= core::kMostProblemBytes)
                given.arenaSize = std::max(given.arenaSize, given.offsets[i] + problem.buffers[i].size);
        (void)core::validatePlan(problem, given);
    }
    fuzz::checkCsvRoundTrip(problem);
    fuzz::planAndValidate(problem, "CSV problem");
    return 0;
}
