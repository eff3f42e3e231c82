// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/exactsearch.h"

#include <algorithm>

namespace core {

// Why raising is complete. Let P be the lowest plateau, floor m, and suppose a gap-free packing that
// fits extends the current partial one (every unplaced buffer sits at or above the floors it
// covers). If some unplaced buffer inside P sits at m, a candidate branch finds it. Otherwise take
// any unplaced buffer c meeting P: if it crosses a neighbour section, it sits at or above that
// neighbour's floor, so >= m' (the lower neighbour floor). If it lies inside P and sits below m',
// it rests on a buffer d, unplaced (placed tops in P are <= m), inside P, lower than c; descending
// from d the same way ends at a buffer inside P at m, a contradiction. So all of them sit >= m':
// raising P to m' keeps the packing reachable. A raised floor is not a top, hence the canonical rule.

CapacitySearch::CapacitySearch(const SkylineInstance& instance, const CancelToken& cancel, std::function<void()> tick)
    : m_in(instance)
    , m_cancel(cancel)
    , m_tick(std::move(tick))
    , m_sky(instance)
{
    // Check the clock about every 2^17 units of work, so a stop lands within a millisecond or so.
    const std::int64_t work = instance.sections + 16;
    m_checkMask = 1;
    while (m_checkMask * 2 * work <= (1 << 17))
        m_checkMask *= 2;
    --m_checkMask;
}

bool CapacitySearch::stopNow()
{
    if (m_tick)
        m_tick();
    return m_cancel.isCancelled() || Clock::now() >= m_deadline;
}

CapacitySearch::Outcome CapacitySearch::run(Bytes capacity, Clock::time_point deadline, const std::vector<int>& rank,
    std::int64_t nodeLimit, int ranking)
{
    m_ranking = ranking;
    m_dynRank = rank;
    m_rankUndo.clear();
    m_nodeEnd = m_nodes + nodeLimit;
    m_gaveUp = false;
    m_capacity = capacity;
    m_deadline = deadline;
    m_rank = &m_dynRank;
    m_stopped = false;
    m_sky.reset();
    if (m_in.lowerBound > capacity)
        return Outcome::Infeasible;
    if (stopNow())
        return Outcome::Stopped;
    const auto result = dfs(0, m_in.sections, -1, -1, kUnknownPieces, 0);
    if (result == Result::Done) {
        m_solution.resize(m_in.count());
        for (int k = 0; k < m_in.count(); ++k)
            m_solution[k] = m_sky.offset(k);
        m_solutionArena = m_sky.top();
    }
    m_sky.reset();
    if (result == Result::Done)
        return Outcome::Found;
    return m_stopped ? Outcome::Stopped : m_gaveUp ? Outcome::GaveUp : Outcome::Infeasible;
}

bool CapacitySearch::raiseAllowed(const Skyline::Plateau& range, Bytes target, std::span<const int> candidates) const
{
    for (int s = range.begin; s < range.end; ++s)
        if (target + m_sky.pendingBytes(s) > m_capacity)
            return false;
    // A buffer inside the range no taller than the gap could drop into it: not gap-free.
    for (const int k : candidates)
        if (m_in.last[k] < range.end && m_in.first[k] >= range.begin && m_in.size[k] <= target - range.floor)
            return false;
    return true;
}

void CapacitySearch::rerank(int begin, int end)
{
    if (m_ranking < 0 || !rankingUsesTotal(static_cast<SkylineRanking>(m_ranking)))
        return;
    auto& keyed = m_rerankScratch;
    keyed.clear();
    for (const int k : m_in.startingAt.range(begin, end)) {
        if (m_sky.isPlaced(k))
            continue;
        Bytes pending = 0;
        for (int x = m_in.first[k]; x <= m_in.last[k]; ++x)
            pending = std::max(pending, m_sky.pendingBytes(x));
        keyed.push_back({ rankingKey(m_in, static_cast<SkylineRanking>(m_ranking), k, pending), k });
    }
    // Largest keys first; ties keep the old order.
    std::sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
        return x.first != y.first ? x.first > y.first : m_dynRank[x.second] < m_dynRank[y.second];
    });
    auto& oldRanks = m_rerankRanks;
    oldRanks.clear();
    for (const auto& e : keyed)
        oldRanks.push_back(m_dynRank[e.second]);
    std::sort(oldRanks.begin(), oldRanks.end());
    // Reuse the piece's own rank values, so comparisons with anything outside stay as they were.
    for (std::size_t i = 0; i < keyed.size(); ++i) {
        m_rankUndo.push_back({ keyed[i].second, m_dynRank[keyed[i].second] });
        m_dynRank[keyed[i].second] = oldRanks[i];
    }
}

void CapacitySearch::scanPlateaus(int begin, int end, Bytes& lowest, Bytes& second)
{
    // The lowest floor, unless the caller knows it (closed sections are kClosed, above any open
    // floor); then its plateaus and the next floor up.
    const Bytes* floor = m_sky.floors();
    if (lowest < 0) {
        lowest = Skyline::kClosed;
        for (int s = begin; s < end; ++s)
            lowest = std::min(lowest, floor[s]);
    }
    second = Skyline::kClosed;
    int run = -1; // first section of the plateau being scanned, or -1
    for (int s = begin; s < end; ++s) {
        const Bytes f = floor[s];
        if (f == lowest) {
            run = run < 0 ? s : run;
            continue;
        }
        second = std::min(second, f);
        if (run >= 0) {
            m_plateauStack.push_back({ run, s, lowest });
            run = -1;
        }
    }
    if (run >= 0)
        m_plateauStack.push_back({ run, end, lowest });
}

bool CapacitySearch::derivePlateaus(int placed, Bytes floor, Bytes& second)
{
    // The parent's plateaus at `floor` (m_level) less the sections of the buffer it just placed
    // there: those now sit at floor + size, or are closed. The others kept their floors.
    const int first = m_in.first[placed], last = m_in.last[placed];
    const std::size_t base = m_plateauStack.size();
    for (std::size_t i = 0; i < m_level.count; ++i) {
        const auto p = m_plateauStack[m_level.base + i];
        if (last < p.begin || first >= p.end) {
            m_plateauStack.push_back(p);
            continue;
        }
        if (p.begin < first)
            m_plateauStack.push_back({ p.begin, first, floor });
        if (last + 1 < p.end)
            m_plateauStack.push_back({ last + 1, p.end, floor });
    }
    second = m_level.second;
    for (int s = first; s <= last; ++s)
        if (m_sky.floor(s) != Skyline::kClosed) {
            second = std::min(second, m_sky.floor(s));
            break;
        }
    return m_plateauStack.size() > base;
}

CapacitySearch::Result CapacitySearch::dfs(int begin, int end, Bytes levelFloor, int levelRank, int placed, Bytes heightBound)
{
    if ((++m_nodes & m_checkMask) == 0 && stopNow()) {
        m_stopped = true;
        return Result::Stop;
    }
    if (m_nodes >= m_nodeEnd) {
        m_gaveUp = true;
        return Result::Stop;
    }
    // The range splits only where a placement dropped a crossing count to zero: inside the span of
    // the buffer just placed. Otherwise it stays one piece (closed sections at its ends are inert).
    bool mayHaveSplit = placed == kUnknownPieces;
    if (placed >= 0)
        for (int s = std::max(begin, m_in.first[placed]); s < std::min(end - 1, m_in.last[placed]) && !mayHaveSplit; ++s)
            mayHaveSplit = m_sky.crossing(s) == 0;
    const auto mark = m_sky.mark();
    if (mayHaveSplit) {
        const StackFrame frame(m_pieceStack);
        m_sky.pieces(begin, end, m_pieceStack);
        const std::size_t pieces = m_pieceStack.size() - frame.base;
        if (pieces == 0)
            return Result::Done;
        if (pieces > 1) {
            // Independent pieces: solve one after the other, keeping each solution. When one has no
            // packing, the others' choices cannot help, so this node fails without trying them again.
            for (std::size_t p = 0; p < pieces; ++p) {
                const auto [pieceBegin, pieceEnd] = m_pieceStack[frame.base + p];
                const auto rankMark = m_rankUndo.size();
                rerank(pieceBegin, pieceEnd);
                const auto result = dfs(pieceBegin, pieceEnd, -1, -1, kOnePiece, heightBound);
                while (m_rankUndo.size() > rankMark) {
                    m_dynRank[m_rankUndo.back().first] = m_rankUndo.back().second;
                    m_rankUndo.pop_back();
                }
                if (result == Result::Stop)
                    return result;
                if (result == Result::Fail) {
                    m_sky.undoTo(mark);
                    return result;
                }
            }
            return Result::Done;
        }
        begin = m_pieceStack[frame.base].first;
        end = m_pieceStack[frame.base].second;
    }
    // All plateaus at the lowest floor m of this piece; their candidates, best rank first. On one
    // level buffers go in rank order (after `levelRank`), so each set of buffers at m is tried once.
    // After a placement or a raise the parent's plateaus tell the lowest floor, and often the
    // plateaus themselves (see derivePlateaus); a scan finds the rest.
    const StackFrame plateauFrame(m_plateauStack);
    Skyline::Plateau lowest;
    Bytes second = Skyline::kClosed;
    if (placed >= 0 && derivePlateaus(placed, levelFloor, second)) {
        lowest.floor = levelFloor;
    } else {
        lowest.floor = placed >= 0 ? second : placed == kRaised ? m_level.second : -1; // -1: unknown
        scanPlateaus(begin, end, lowest.floor, second);
    }
    const std::size_t plateaus = m_plateauStack.size() - plateauFrame.base;
    if (lowest.floor == Skyline::kClosed)
        return Result::Done; // the last buffer of the range was just placed
    // Dominance (MiniMalloc's "minimum height"): an unplaced buffer c could drop to its rest offset
    // (the highest placed top under it); that space stays free, as every later buffer goes at or
    // above the current floor. So once the floor reaches rest(c) + size(c), c is left floating in
    // every completion, which is then not gap-free: nothing from here on is worth building.
    // Rest offsets only rise and placed buffers leave the minimum, so an ancestor's minimum height
    // (`heightBound`) stays a lower bound below it: no scan while the floor is under it.
    Bytes minHeight = -1;
    auto minimumHeight = [&] {
        if (minHeight < 0) {
            minHeight = Skyline::kClosed;
            for (const Bytes top : m_sky.restTops(begin, end))
                minHeight = std::min(minHeight, top);
        }
        return minHeight;
    };
    if (lowest.floor >= heightBound && lowest.floor >= minimumHeight())
        return Result::Fail;
    const Bytes childBound = minHeight >= 0 ? minHeight : heightBound;
    const StackFrame candidateFrame(m_candidateStack);
    for (std::size_t p = 0; p < plateaus; ++p)
        m_sky.candidates(m_plateauStack[plateauFrame.base + p], m_candidateStack);
    const auto& rank = *m_rank;
    std::sort(m_candidateStack.begin() + std::ptrdiff_t(candidateFrame.base), m_candidateStack.end(),
        [&](int a, int b) { return rank[a] < rank[b]; });
    const std::size_t candidates = m_candidateStack.size() - candidateFrame.base;
    const int minRank = levelFloor == lowest.floor ? levelRank : -1;
    for (std::size_t c = 0; c < candidates; ++c) {
        const int k = m_candidateStack[candidateFrame.base + c];
        if (rank[k] <= minRank || !m_sky.restsOnSomething(k, lowest.floor))
            continue;
        const bool hatless = m_sky.hatless(k);
        m_sky.place(k, lowest.floor);
        if (m_sky.boundsHold(m_capacity)) {
            m_level = { plateauFrame.base, plateaus, second };
            const auto result = dfs(begin, end, lowest.floor, rank[k], k, childBound);
            if (result != Result::Fail)
                return result;
        }
        m_sky.undoTo(mark);
        // Hatless pruning (MiniMalloc): k shares no section with an unplaced buffer, so every
        // completion has it at m. The later branches place a buffer of higher rank at m, or raise
        // k's sections, and either way k could no longer go at m: they all fail.
        if (hatless)
            return Result::Fail;
    }
    // No further buffer at m: every plateau at m rises to its lower neighbour. Dominance: a buffer
    // whose whole extent fits below the new lowest floor (above its own lowest offset) could drop
    // there, so that packing is not gap-free (MiniMalloc's "minimum height" rule).
    // Every raise target is a floor above m, so the new lowest floor is `second`.
    // `childBound` is a lower bound on the minimum height: below it, no scan.
    if (second >= childBound && second >= minimumHeight())
        return Result::Fail;
    const std::span<const int> all(m_candidateStack.data() + candidateFrame.base, candidates);
    for (std::size_t i = 0; i < plateaus; ++i) {
        const auto p = m_plateauStack[plateauFrame.base + i];
        const Bytes target = m_sky.raiseTarget(p, begin, end);
        if (target == Skyline::kClosed || !raiseAllowed(p, target, all)) {
            m_sky.undoTo(mark);
            return Result::Fail;
        }
        m_sky.raise(p, target);
    }
    if (m_sky.boundsHold(m_capacity)) {
        m_level = { plateauFrame.base, plateaus, second };
        const auto result = dfs(begin, end, -1, -1, kRaised, minHeight >= 0 ? minHeight : childBound);
        if (result != Result::Fail)
            return result;
    }
    m_sky.undoTo(mark);
    return Result::Fail;
}

} // namespace core
