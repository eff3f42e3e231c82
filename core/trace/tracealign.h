// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "trace/diffside.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace core {

// The aligned axis. Allocations are matched in order of birth: first an exact diff (Myers' O(ND)
// algorithm) on "same size class and, where the sides' keys are comparable, same key", then within
// each unmatched gap by key alone (allocations resized between the sides). The step axes are mapped
// through the matched allocations' birth steps, proportionally between them.
struct AlignOptions {
    // The exact diff gives up past this many unmatched allocations (its memory grows as the square)
    // or this much work (diagonals visited plus comparisons); the sequences are then matched by a
    // greedy scan that takes the nearest next match within `window` allocations summed over both
    // sides, O((n + m) * window) comparisons at worst.
    int maxEdits = 2000;
    std::int64_t maxWork = 50'000'000;
    int window = 32;
    // Fewer matches than this fraction of the smaller side: the axis is purely proportional.
    double fewMatches = 0.1;
};

enum class AlignMethod { Exact, Windowed, Proportional };
std::string_view alignMethodName(AlignMethod method); // "exact", "windowed", "proportional"

struct TraceAlignment {
    // Matched allocations (indices into a.allocations, b.allocations), strictly increasing in both.
    std::vector<std::pair<int, int>> pairs;
    int exactPairs = 0;         // of those, matched by size class (and key)
    bool keysCompared = false;  // the sides' keys overlap enough to require them (else size alone)
    AlignMethod method = AlignMethod::Exact;
    // Per B step: the A step it corresponds to (fractional), non-decreasing, from 0 to A's last step
    // (a B of one step: just 0, and that step stands for all of A).
    std::vector<double> aStepAt;
    std::string summary; // one line: how the axis was made, what fell back and why
    double matchedFraction(std::size_t a, std::size_t b) const;
};

// The 512-byte rounding of PyTorch's caching allocator (at least 512 bytes).
inline Bytes roundedTo512(Bytes size) { return size <= 512 ? 512 : (size + 511) / 512 * 512; }
// Same size class: equal after the 512-byte rounding, or both in the large pool (over 1 MiB) with
// the larger at most 1 MiB more (the allocator does not split off a remainder of 1 MiB or less).
bool sameSizeClass(Bytes a, Bytes b);

TraceAlignment alignTraces(const DiffSide& a, const DiffSide& b, const AlignOptions& options = {});

} // namespace core
