// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <random>
#include <span>
#include <tuple>
#include <vector>

namespace core {

// Shared machinery of the `exact` and `best-of-greedy` planners: the problem in compressed time
// ("sections") and a "skyline" of per-section floors that buffers are stacked on.
//
// - Time is cut at every lifetime start and end; a section is one piece between two cuts. A buffer
//   covers the contiguous sections [first, last].
// - floor(s) = top of the highest buffer placed so far over section s. A section where every live
//   buffer is placed is closed (kClosed) and takes no further part.
// - Buffers are placed bottom-up: always on the lowest plateau P (maximal run of sections at the
//   minimum floor m). Either some unplaced buffer whose sections lie inside P goes at offset m, or no
//   buffer will ever start at m inside P and P is raised to its lower neighbour ("waste").
//   Every gap-free ("canonical") packing is reachable this way, so a search over these two kinds
//   of moves is complete; see exactsearch.cpp for the argument.
//
//   offset
//     ^            +------+
//     |   +--------|  c   |          P = lowest plateau (floor m): candidates are the unplaced
//     |   |   a    +------+----+     buffers whose lifetime fits inside P's sections
//     |   +--------+   b       |
//     +---|   P    |-----------+---> time (sections)
//
// Sizes are rounded up to the problem's alignment; all offsets are sums of those sizes, so they
// stay aligned. Buffers of size 0 or with an empty lifetime are not placed here (offset 0).
// Lists of ints for each of 0 .. count - 1, stored back to back (one allocation, scanned in order).
struct FlatLists {
    std::vector<int> begin; // list i is items[begin[i] .. begin[i + 1])
    std::vector<int> items;
    std::span<const int> operator[](int i) const { return { items.data() + begin[i], items.data() + begin[i + 1] }; }
    // Lists from .. to - 1, one after the other.
    std::span<const int> range(int from, int to) const { return { items.data() + begin[from], items.data() + begin[to] }; }
};

struct SkylineInstance {
    std::vector<int> ids;          // index into PlanProblem::buffers
    std::vector<Bytes> size;       // aligned size
    std::vector<int> first, last;  // covered sections, inclusive
    std::vector<Step> length;      // lifetime in steps
    std::vector<int> twinBefore;   // previous buffer with the same sections and size, or -1
    FlatLists startingAt; // per section: buffers whose first section it is, in index order
    std::vector<int> firstOrder; // per buffer: its position in startingAt.items (order by first section)
    FlatLists liveIn;     // per section: buffers covering it, in index order
    std::vector<Bytes> sectionBytes;          // per section: sum of sizes of live buffers
    std::vector<Bytes> crowd;                 // per buffer: the most live bytes in a section it covers
    // Per SkylineRanking: position of each buffer, 0 = first; empty until added (addRanking).
    std::vector<std::vector<int>> rank;
    std::vector<Bytes> area;                  // size x lifetime
    int sections = 0;
    Bytes granularity = 1; // gcd of the sizes: every canonical offset and arena is a multiple
    Bytes lowerBound = 0;  // max over sections of live bytes

    int count() const { return static_cast<int>(size.size()); }
};


// Candidate order for a dive or the search: which buffer goes first onto the lowest plateau.
// "Total" = the most live bytes in any section the buffer covers (crowded sections first),
// "Width" = lifetime in steps (not sections: measured, sections rank I and H far worse),
// "Area" = size x steps; each ranking sorts by its keys, largest first.
// "Span" = sections covered (TotalSpanArea: best-of-greedy's dives pack best with it).
enum class SkylineRanking { TotalWidthArea, WidthAreaTotal, TotalAreaWidth, LongestFirst, LargestFirst, AreaFirst, TotalSpanArea };
constexpr int kSkylineRankings = 7;

// The instance with the given rankings (default: all of them).
SkylineInstance makeSkylineInstance(const PlanProblem& problem,
    std::initializer_list<SkylineRanking> rankings = { SkylineRanking::TotalWidthArea, SkylineRanking::WidthAreaTotal,
        SkylineRanking::TotalAreaWidth, SkylineRanking::LongestFirst, SkylineRanking::LargestFirst, SkylineRanking::AreaFirst,
        SkylineRanking::TotalSpanArea });
// Fills instance.rank for `ranking` when it is empty (a stable sort of the buffers).
void addRanking(SkylineInstance& instance, SkylineRanking ranking);

// A buffer's sort key under a ranking (compared largest first), with `total` as its "total": the
// instance's live bytes at the start, the bytes still unplaced when a piece is re-ranked.
using RankingKey = std::tuple<Bytes, Bytes, Bytes>;
RankingKey rankingKey(const SkylineInstance& instance, SkylineRanking ranking, int buffer, Bytes total);
bool rankingUsesTotal(SkylineRanking ranking);

// A ranking with noise: each buffer moves by up to `spread` x the number of buffers, so restarts
// explore other orders while keeping the ranking's broad shape. Deterministic for a seeded `rng`.
std::vector<int> perturbedRank(const std::vector<int>& rank, double spread, std::mt19937& rng);

// The skyline itself, with exact undo. Not thread safe; one per search.
class Skyline {
public:
    static constexpr Bytes kClosed = std::numeric_limits<Bytes>::max();

    explicit Skyline(const SkylineInstance& instance);

    struct Plateau {
        int begin = 0, end = 0; // sections [begin, end)
        Bytes floor = kClosed;  // kClosed: every buffer placed
    };
    // Within sections [begin, end) (default: all).
    Plateau lowestPlateau(int begin = 0, int end = -1) const;
    // Splits [begin, end) into independent pieces: runs of sections that no unplaced buffer joins
    // across a boundary; appends them to `out`. Pieces without unplaced buffers are left out.
    void pieces(int begin, int end, std::vector<std::pair<int, int>>& out) const;
    // Appends to `out` the unplaced buffers that may go at the plateau's floor, in index order. One
    // buffer of each group of identical twins (the first unplaced one) stands for the group.
    void candidates(const Plateau& plateau, std::vector<int>& out) const;
    // Floor the plateau would be raised to (its lower neighbour inside [begin, end)), kClosed when
    // it has none.
    Bytes raiseTarget(const Plateau& plateau, int begin = 0, int end = -1) const;

    void place(int buffer, Bytes offset); // at the plateau floor; records undo information
    void raise(const Plateau& plateau, Bytes to);
    std::size_t mark() const { return m_undo.size(); }
    void undoTo(std::size_t mark);
    void reset(); // nothing placed or raised: undoTo(0), in time O(buffers + sections)

    // Section inference after the last place() or raise(): every unplaced buffer sits at or above
    // its lowest offset (the highest floor it covers), so in each section everything above
    // max(floor, lowest offset of its unplaced buffers) must hold all of them within `capacity`.
    // Checks the sections whose buffers' lowest offsets rose (their hull); a section with room above
    // the highest open floor is skipped in O(1), the others cost O(their live buffers).
    bool boundsHold(Bytes capacity);
    void forgetTouched(); // instead of boundsHold() when no check is wanted

    int placedCount() const { return m_placed; }
    bool isPlaced(int buffer) const { return m_offset[buffer] >= 0; }
    Bytes offset(int buffer) const { return m_offset[buffer]; }
    // Of an unplaced buffer: the highest floor over its sections, from placements or raises.
    Bytes lowestOffset(int buffer) const { return std::max(m_rest[buffer], m_raisedTo[buffer]); }
    // Where an unplaced buffer would rest if dropped: the highest top of the placed buffers that
    // share a section with it (raises do not count). <= lowestOffset().
    Bytes restOffset(int buffer) const { return m_rest[buffer]; }
    // Per buffer in SkylineInstance::startingAt order (so the buffers starting in a run of sections
    // are contiguous): rest offset + size while unplaced, kClosed once placed.
    std::span<const Bytes> restTops(int beginSection, int endSection) const
    {
        return { m_restTop.data() + m_in.startingAt.begin[beginSection], m_restTop.data() + m_in.startingAt.begin[endSection] };
    }
    Bytes floor(int section) const { return m_floor[section]; }
    const Bytes* floors() const { return m_floor.data(); }
    // Bytes of unplaced buffers live in a section.
    Bytes pendingBytes(int section) const { return m_pendingBytes[section]; }
    int pendingCount(int section) const { return m_pendingCount[section]; }
    // Unplaced buffers covering both section s and s + 1.
    int crossing(int s) const { return m_crossing[s]; }
    Bytes top() const; // highest placed buffer top
    // A buffer placed at `floor` in a gap-free packing rests on a placed buffer's top (or on 0):
    // some section it covers must have its floor from a placement, not from a raise.
    bool restsOnSomething(int buffer, Bytes floor) const;
    // No other unplaced buffer is live in any section of this unplaced buffer.
    bool hatless(int buffer) const;

private:
    struct Undo {
        Bytes floor; // old floor, or old lowest offset
        int section; // >= 0: floor record; -1-buffer: placement record; kRaisedRecord/kRestRecord: raised-to/rest offset
        int aux;     // floor record: old raised flag; lowest/rest-offset record: the buffer
    };
    static constexpr int kRaisedRecord = std::numeric_limits<int>::min();
    static constexpr int kRestRecord = std::numeric_limits<int>::min() + 1;
    static constexpr int kCeilingRecord = std::numeric_limits<int>::min() + 2;
    void raiseCeiling(Bytes to);
    void liftLowest(int begin, int end, Bytes to); // unplaced buffers covering [begin, end) sit at >= to
    inline void liftBuffer(int k, Bytes to);       // a raise: unplaced buffer k sits at >= to
    inline void touch(int k);                      // k's lowest offset rose: check its sections
    const SkylineInstance& m_in;
    std::vector<int> m_startCount, m_startCrossing; // m_pendingCount and m_crossing with nothing placed
    std::vector<Bytes> m_floor;
    std::vector<char> m_raised; // floor came from a raise, not from a placed buffer's top
    std::vector<Bytes> m_pendingBytes;
    std::vector<int> m_pendingCount;
    std::vector<int> m_crossing; // per boundary s|s+1: unplaced buffers covering both sections
    std::vector<Bytes> m_offset;
    FlatLists m_overlaps; // per buffer: the other buffers sharing a section
    // Per buffer: the highest raise over its sections. With m_rest (the highest placed top) it gives
    // the lowest offset; kept apart so a placement writes one undo record per lifted buffer, not two.
    std::vector<Bytes> m_raisedTo;
    std::vector<Bytes> m_rest;   // per buffer: highest top of a placed buffer sharing a section with it
    std::vector<Bytes> m_restTop; // see restTops()
    Bytes m_ceiling = 0;         // highest floor ever set on this path (>= every open floor)
    std::vector<Undo> m_undo;
    // Sections to check in boundsHold(): the hull [m_touchBegin, m_touchEnd) of those whose buffers'
    // lowest offsets rose. A superset of them gives the same answer (unchanged sections passed the
    // last check) and costs O(1) per lifted buffer instead of O(its sections).
    int m_touchBegin = std::numeric_limits<int>::max();
    int m_touchEnd = 0;
    int m_placed = 0;
};

// One greedy pass: always the best candidate by `ranking` (added to the instance), raise only when
// none fits. O(n * sections).
// Returns offsets per instance buffer and the arena.
struct SkylinePacking {
    std::vector<Bytes> offsets;
    Bytes arena = 0;
};
SkylinePacking skylineDive(const SkylineInstance& instance, SkylineRanking ranking);

// Offsets for every buffer of the problem from offsets of the instance's buffers (others at 0).
Plan planFromSkyline(const PlanProblem& problem, const SkylineInstance& instance, const std::vector<Bytes>& offsets);

} // namespace core
