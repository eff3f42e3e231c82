// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/skyline.h"
#include "util/cancel.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

namespace core {

// Decision search of the `exact` planner: "do all buffers fit in `capacity` bytes?"
// - Depth-first over the skyline (skyline.h): at the lowest floor m, try each candidate buffer
//   (inside any plateau at m, best rank first) at offset m; last, "raise" every plateau at m to its
//   lower neighbour (no further buffer starts at m).
// - Canonical pruning: a buffer must rest on a placed buffer's top or on 0 (no floating buffers);
//   buffers go bottom-up and, on one level, in rank order; twins (same lifetime and size) go in
//   index order. So each gap-free packing is built once per ranking.
// - Section inference (after every move): every unplaced buffer sits at or above its lowest offset
//   (the highest floor it covers), so in each section max(floor, lowest offset of its buffers) +
//   bytes of its unplaced buffers <= capacity.
// - Dominance: fail once the floor reaches min(rest offset + size) of an unplaced buffer (rest
//   offset = highest placed top under it; raises do not count): it could drop into the free space
//   below, so no completion is gap-free (MiniMalloc's "minimum height" rule, in skyline terms). No
//   raise that leaves a gap inside a plateau as tall as a buffer that fits there, for the same reason.
// - Hatless pruning (MiniMalloc): when a failed candidate shares no section with an unplaced buffer,
//   every completion has it here, so the node fails without trying the others.
// - Re-ranking: with a "total" ranking, each independent piece is ranked again by the bytes still
//   unplaced in its sections (MiniMalloc re-sorts each sub-problem the same way); measured on the
//   public problems, this and ranking "width" by steps turn I, E and H from >4 s into milliseconds.
// - Runs have a node limit: the caller restarts with other rankings and doubled limits (restarts
//   tame the heavy tail of depth-first search).
// - Decomposition: when no unplaced buffer joins two runs of sections, they are solved one after
//   the other and a failure in one does not re-search the other (MiniMalloc's dynamic decomposition).
// Complete (checked against brute force in tst_exact): returns Infeasible only when no packing fits.
// Time per node O(sections + candidates + live buffers of the sections whose bound changed); depth
// at most ~3n + 2 x sections (recursive). The search stops at `deadline` or on cancel and says so.
class CapacitySearch {
public:
    // Stopped: deadline or cancel; GaveUp: the node limit of this run was spent.
    enum class Outcome { Found, Infeasible, Stopped, GaveUp };
    using Clock = std::chrono::steady_clock;

    CapacitySearch(const SkylineInstance& instance, const CancelToken& cancel, std::function<void()> tick);

    // `rank`: candidate order (position per buffer, lower first), e.g. SkylineInstance::rank[r].
    // `ranking`: the ranking `rank` follows, or -1; with a ranking whose keys use the live bytes of a
    // section ("total"), each independent piece is re-ranked with the bytes still unplaced there.
    Outcome run(Bytes capacity, Clock::time_point deadline, const std::vector<int>& rank, std::int64_t nodeLimit,
        int ranking = -1);
    const std::vector<Bytes>& solution() const { return m_solution; } // after Found
    Bytes solutionArena() const { return m_solutionArena; }
    std::int64_t nodes() const { return m_nodes; }
    bool cancelled() const { return m_cancel.isCancelled(); }

private:
    // Done: every buffer in sections [begin, end) placed (state kept); Fail: none fits (state
    // restored); Stop: time, cancel or node limit.
    enum class Result { Done, Fail, Stop };
    // levelFloor/levelRank: the floor and rank of the last buffer placed on the current level.
    // placed: the buffer the parent just placed, or kOnePiece ([begin, end) is known to be one
    // piece), or kUnknownPieces, or kRaised (one piece; the parent raised every plateau at its
    // lowest floor, so the lowest floor here is the parent's next floor up).
    static constexpr int kOnePiece = -1, kUnknownPieces = -2, kRaised = -3;
    // heightBound: a lower bound on the minimum height (see dominance) inherited from an ancestor.
    Result dfs(int begin, int end, Bytes levelFloor, int levelRank, int placed, Bytes heightBound);
    bool stopNow();
    // Raising sections [range.begin, range.end) from range.floor to target keeps every section
    // within capacity, and no candidate inside the range fits in the gap.
    bool raiseAllowed(const Skyline::Plateau& range, Bytes target, std::span<const int> candidates) const;

    const SkylineInstance& m_in;
    const CancelToken& m_cancel;
    std::function<void()> m_tick; // called at every clock check (~ every millisecond)
    Skyline m_sky;
    // Each node's pieces, plateaus and candidates, pushed on one stack each and popped when it
    // returns (a vector per depth cost an allocation per new depth: ~5 % of a best-of-greedy call).
    template <typename T>
    struct StackFrame {
        explicit StackFrame(std::vector<T>& stack) : stack(stack), base(stack.size()) { }
        ~StackFrame() { stack.resize(base); }
        std::vector<T>& stack;
        const std::size_t base;
    };
    std::vector<std::pair<int, int>> m_pieceStack;
    std::vector<Skyline::Plateau> m_plateauStack;
    std::vector<int> m_candidateStack;
    // The plateaus at the lowest floor of [begin, end) and the next floor up, pushed on
    // m_plateauStack: scanned (with `lowest` >= 0 when the caller knows the lowest floor), or
    // derived from the parent's (m_level) after a placement that leaves sections at the parent's
    // floor (about half the nodes), which is O(plateaus + span). derivePlateaus sets `second` to
    // the next floor up when it returns true, else to the lowest floor.
    void scanPlateaus(int begin, int end, Bytes& lowest, Bytes& second);
    bool derivePlateaus(int placed, Bytes floor, Bytes& second);
    struct Level {
        std::size_t base = 0, count = 0; // the parent's plateaus in m_plateauStack
        Bytes second = 0;                // the parent's next floor up
    };
    Level m_level; // set by a node just before it calls a child
    std::vector<Bytes> m_solution;
    Bytes m_solutionArena = 0;
    Bytes m_capacity = 0;
    Clock::time_point m_deadline;
    void rerank(int begin, int end); // re-ranks the unplaced buffers of a piece; undo via m_rankUndo
    const std::vector<int>* m_rank = nullptr;
    std::vector<int> m_dynRank;
    std::vector<std::pair<int, int>> m_rankUndo; // (buffer, old rank)
    std::vector<std::pair<RankingKey, int>> m_rerankScratch;
    std::vector<int> m_rerankRanks;
    int m_ranking = -1;
    std::int64_t m_nodes = 0;
    std::int64_t m_nodeEnd = 0; // m_nodes value at which this run gives up
    std::int64_t m_checkMask = 1023;
    bool m_stopped = false;
    bool m_gaveUp = false;
};

} // namespace core
