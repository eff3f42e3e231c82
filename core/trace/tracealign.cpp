// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "trace/tracealign.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <unordered_set>

namespace core {

bool sameSizeClass(Bytes a, Bytes b)
{
    const Bytes ra = roundedTo512(a), rb = roundedTo512(b);
    if (ra == rb)
        return true;
    constexpr Bytes kMiB = Bytes(1) << 20;
    return ra > kMiB && rb > kMiB && std::max(ra, rb) - std::min(ra, rb) <= kMiB;
}

std::string_view alignMethodName(AlignMethod method)
{
    switch (method) {
    case AlignMethod::Exact: return "exact";
    case AlignMethod::Windowed: return "windowed";
    case AlignMethod::Proportional: return "proportional";
    }
    return "?";
}

double TraceAlignment::matchedFraction(std::size_t a, std::size_t b) const
{
    const auto smaller = std::min(a, b);
    return smaller == 0 ? 1.0 : double(pairs.size()) / double(smaller);
}

namespace {
using Equal = std::function<bool(int, int)>;

// Myers' greedy O((n + m) D) diff of x[0, n) against y[0, m): the longest common subsequence under
// `eq`, appended to `out` as (i, j) offsets, increasing. Gives up (false, `out` untouched) when the
// sequences differ in more than maxEdits places or `work` (shared, counted in comparisons and
// diagonals visited) passes maxWork. Memory: the frontier of every edit count, O(D^2) integers.
bool myersDiff(int n, int m, const Equal& eq, int maxEdits, std::int64_t maxWork, std::int64_t& work, std::vector<std::pair<int, int>>& out)
{
    const int most = std::min(n + m, maxEdits);
    const int offset = most + 1;
    std::vector<int> v(std::size_t(2 * most + 3), 0);
    std::vector<std::vector<int>> frontiers; // after edit count d: v[-d..d]
    for (int d = 0; d <= most; ++d) {
        for (int k = -d; k <= d; k += 2) {
            int x = (k == -d || (k != d && v[std::size_t(offset + k - 1)] < v[std::size_t(offset + k + 1)])) ? v[std::size_t(offset + k + 1)]
                                                                                                              : v[std::size_t(offset + k - 1)] + 1;
            int y = x - k;
            const int start = x;
            while (x < n && y < m && eq(x, y)) {
                ++x;
                ++y;
            }
            work += 1 + (x - start);
            if (work > maxWork) // checked per diagonal: one edit count's snakes may run the whole length
                return false;
            v[std::size_t(offset + k)] = x;
            if (x >= n && y >= m) {
                // Walk back through the frontiers: each edit's snake is a run of matches.
                std::vector<std::pair<int, int>> matches;
                int cx = n, cy = m;
                for (int e = d; e > 0; --e) {
                    const auto& prev = frontiers[std::size_t(e - 1)];
                    const auto at = [&](int kk) { return prev[std::size_t(kk + e - 1)]; };
                    const int ck = cx - cy;
                    const int pk = (ck == -e || (ck != e && at(ck - 1) < at(ck + 1))) ? ck + 1 : ck - 1;
                    const int px = at(pk), py = px - pk;
                    while (cx > px && cy > py)
                        matches.emplace_back(--cx, --cy);
                    cx = px;
                    cy = py;
                }
                while (cx > 0 && cy > 0)
                    matches.emplace_back(--cx, --cy);
                out.insert(out.end(), matches.rbegin(), matches.rend());
                return true;
            }
        }
        frontiers.emplace_back(v.begin() + (offset - d), v.begin() + (offset + d + 1));
    }
    return false;
}

// The bounded fallback: from the last match (x, y), the nearest next match (x + i, y + j) within
// `window` in i + j (ties: the most balanced), taken greedily; with none that near, both sides step
// on by half a window. Monotone, O((n + m) * window) comparisons at worst, not the longest common
// subsequence.
void windowedMatch(int n, int m, const Equal& eq, int window, std::int64_t& work, std::vector<std::pair<int, int>>& out)
{
    int x = 0, y = 0;
    while (x < n && y < m) {
        bool found = false;
        for (int k = 0; k < window && !found; ++k)
            for (int t = 0; t <= 2 * k + 1 && !found; ++t) {
                // Around the diagonal first: i = k / 2, then k / 2 + 1, k / 2 - 1, ...
                const int i = k / 2 + ((t & 1) ? (t + 1) / 2 : -(t / 2));
                if (i < 0 || i > k)
                    continue;
                const int xi = x + i, yj = y + (k - i);
                if (xi >= n || yj >= m)
                    continue;
                ++work;
                if (eq(xi, yj)) {
                    out.emplace_back(xi, yj);
                    x = xi + 1;
                    y = yj + 1;
                    found = true;
                }
            }
        if (!found) { // nothing near: on by half a window on both sides, so a long unmatched stretch costs O(n + m) scans
            x += std::max(1, window / 2);
            y += std::max(1, window / 2);
        }
    }
}

// Whether at least half of the smaller side's allocations have a key the other side also has.
bool keysOverlap(const DiffSide& a, const DiffSide& b, bool shortKeys)
{
    const auto keyOf = [shortKeys](const DiffAllocation& d) -> const std::string& { return shortKeys ? d.shortKey : d.key; };
    const auto& small = a.allocations.size() <= b.allocations.size() ? a : b;
    const auto& large = &small == &a ? b : a;
    if (small.allocations.empty())
        return false;
    std::unordered_set<std::string> keys;
    for (const auto& d : large.allocations)
        if (!keyOf(d).empty())
            keys.insert(keyOf(d));
    std::size_t shared = 0;
    for (const auto& d : small.allocations)
        shared += !keyOf(d).empty() && keys.count(keyOf(d));
    return shared * 2 >= small.allocations.size();
}
} // namespace

TraceAlignment alignTraces(const DiffSide& a, const DiffSide& b, const AlignOptions& options)
{
    TraceAlignment al;
    const int n = int(a.allocations.size()), m = int(b.allocations.size());
    const bool shortKeys = a.measured != b.measured;
    al.keysCompared = keysOverlap(a, b, shortKeys);
    const auto keyOf = [shortKeys](const DiffAllocation& d) -> const std::string& { return shortKeys ? d.shortKey : d.key; };
    const auto sameKey = [&](int i, int j) { return !al.keysCompared || keyOf(a.allocations[std::size_t(i)]) == keyOf(b.allocations[std::size_t(j)]); };

    // Pass 1: size class (and key) over the whole sequences.
    std::int64_t work = 0;
    std::vector<std::pair<int, int>> exact;
    const Equal sameAllocation = [&](int i, int j) {
        return sameSizeClass(a.allocations[std::size_t(i)].size, b.allocations[std::size_t(j)].size) && sameKey(i, j);
    };
    bool bounded = false;
    if (!myersDiff(n, m, sameAllocation, options.maxEdits, options.maxWork, work, exact)) {
        bounded = true;
        windowedMatch(n, m, sameAllocation, options.window, work, exact);
    }
    al.exactPairs = int(exact.size());

    // Pass 2: in each gap between exact matches, the same key at another size (a resized tensor).
    if (al.keysCompared) {
        std::vector<std::pair<int, int>> merged;
        int ai = 0, bj = 0;
        for (std::size_t p = 0; p <= exact.size(); ++p) {
            const int ae = p < exact.size() ? exact[p].first : n, be = p < exact.size() ? exact[p].second : m;
            if (ae > ai && be > bj) {
                // A key alone, without the size, needs a key: allocations without frames are not paired by it.
                const Equal keyOnly = [&](int i, int j) { return !keyOf(a.allocations[std::size_t(ai + i)]).empty() && sameKey(ai + i, bj + j); };
                std::vector<std::pair<int, int>> gap;
                if (!myersDiff(ae - ai, be - bj, keyOnly, options.maxEdits, options.maxWork, work, gap)) {
                    bounded = true;
                    gap.clear();
                    windowedMatch(ae - ai, be - bj, keyOnly, options.window, work, gap);
                }
                for (const auto& [i, j] : gap)
                    merged.emplace_back(ai + i, bj + j);
            }
            if (p < exact.size())
                merged.push_back(exact[p]);
            ai = ae + 1;
            bj = be + 1;
        }
        al.pairs = std::move(merged);
    } else {
        al.pairs = std::move(exact);
    }
    al.method = bounded ? AlignMethod::Windowed : AlignMethod::Exact;
    const double matched = al.matchedFraction(std::size_t(n), std::size_t(m));
    const bool proportional = std::min(n, m) == 0 || matched < options.fewMatches;
    if (proportional)
        al.method = AlignMethod::Proportional;

    // The axis: B's steps mapped to A's through the matched births, linearly between them.
    const Step stepsA = Step(std::max<std::size_t>(a.live.size(), 1)), stepsB = Step(std::max<std::size_t>(b.live.size(), 1));
    std::vector<std::pair<double, double>> anchors { { 0.0, 0.0 } }; // (B step, A step)
    if (!proportional)
        for (const auto& [i, j] : al.pairs) {
            const double sb = double(b.allocations[std::size_t(j)].lifetime.start), sa = double(a.allocations[std::size_t(i)].lifetime.start);
            // Births are sorted on both sides, so the anchors never fall; keep the first of one B step.
            if (sb > anchors.back().first && sa >= anchors.back().second)
                anchors.emplace_back(sb, sa);
        }
    // The ends correspond: B's last step is A's last (a B of one step stays at 0: it stands for all of A).
    if (double(stepsB - 1) > anchors.back().first)
        anchors.emplace_back(double(stepsB - 1), double(stepsA - 1));
    else if (stepsB > 1)
        anchors.back().second = double(stepsA - 1);
    al.aStepAt.resize(std::size_t(stepsB));
    std::size_t seg = 0;
    for (Step s = 0; s < stepsB; ++s) {
        while (seg + 1 < anchors.size() && anchors[seg + 1].first <= double(s))
            ++seg;
        const auto& [b0, a0] = anchors[seg];
        if (seg + 1 == anchors.size()) {
            al.aStepAt[std::size_t(s)] = a0;
            continue;
        }
        const auto& [b1, a1] = anchors[seg + 1];
        al.aStepAt[std::size_t(s)] = a0 + (a1 - a0) * (double(s) - b0) / (b1 - b0);
    }

    char percent[32];
    std::snprintf(percent, sizeof percent, "%.1f %%", matched * 100.0);
    al.summary = std::to_string(al.pairs.size()) + " of " + std::to_string(n) + " and " + std::to_string(m) + " allocations matched ("
        + percent + " of the smaller side; " + std::to_string(al.exactPairs) + " by size class"
        + (al.keysCompared ? std::string(shortKeys ? " and name" : " and site") : std::string(" alone")) + ", "
        + std::to_string(al.pairs.size() - std::size_t(al.exactPairs)) + " by " + (shortKeys ? "name" : "site") + " at another size)";
    if (!al.keysCompared)
        al.summary += "; the sides name their allocations differently, so sizes alone were compared";
    if (bounded)
        al.summary += "; the exact diff passed its bound (" + std::to_string(options.maxEdits) + " unmatched allocations or "
            + std::to_string(options.maxWork) + " steps of work): a greedy scan for the nearest match within "
            + std::to_string(options.window) + " allocations matched instead";
    if (proportional)
        al.summary += "; almost nothing matched: the axis is purely proportional (B's step s is A's step s * (A steps - 1) / (B steps - 1))";
    else
        al.summary += "; the axis follows the matched births, proportionally between them";
    return al;
}

} // namespace core
