// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/skyline.h"

#include "planners/gapfinder.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

namespace core {

namespace {
// `fill(add)` calls add(list, item) for every item, the same sequence when called twice: once to
// count, once to store, so each list keeps the order of its calls.
template <typename Fill>
FlatLists flatLists(int count, Fill fill)
{
    FlatLists lists;
    lists.begin.assign(static_cast<std::size_t>(count) + 1, 0);
    fill([&](int list, int) { ++lists.begin[list + 1]; });
    for (int i = 0; i < count; ++i)
        lists.begin[i + 1] += lists.begin[i];
    lists.items.resize(lists.begin[count]);
    std::vector<int> next(lists.begin.begin(), lists.begin.end() - 1);
    fill([&](int list, int item) { lists.items[next[list]++] = item; });
    return lists;
}
} // namespace

SkylineInstance makeSkylineInstance(const PlanProblem& problem, std::initializer_list<SkylineRanking> rankings)
{
    SkylineInstance in;
    std::vector<Step> cuts;
    for (std::size_t i = 0; i < problem.buffers.size(); ++i) {
        const auto& b = problem.buffers[i];
        if (b.size <= 0 || b.lifetime.end <= b.lifetime.start)
            continue;
        in.ids.push_back(static_cast<int>(i));
        in.size.push_back(placedSize(problem, static_cast<int>(i)));
        in.length.push_back(b.lifetime.end - b.lifetime.start);
        cuts.push_back(b.lifetime.start);
        cuts.push_back(b.lifetime.end);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    in.sections = std::max<int>(0, static_cast<int>(cuts.size()) - 1);
    in.sectionBytes.assign(in.sections, 0);
    const int n = in.count();
    in.first.resize(n);
    in.last.resize(n);
    in.twinBefore.assign(n, -1);
    std::map<std::tuple<int, int, Bytes>, int> lastTwin;
    Bytes g = 0;
    for (int k = 0; k < n; ++k) {
        const auto& life = problem.buffers[in.ids[k]].lifetime;
        in.first[k] = static_cast<int>(std::lower_bound(cuts.begin(), cuts.end(), life.start) - cuts.begin());
        in.last[k] = static_cast<int>(std::lower_bound(cuts.begin(), cuts.end(), life.end) - cuts.begin()) - 1;
        for (int s = in.first[k]; s <= in.last[k]; ++s)
            in.sectionBytes[s] += in.size[k];
        auto [it, inserted] = lastTwin.try_emplace({ in.first[k], in.last[k], in.size[k] }, k);
        if (!inserted) {
            in.twinBefore[k] = it->second;
            it->second = k;
        }
        g = std::gcd(g, in.size[k]);
    }
    in.startingAt = flatLists(in.sections, [&](auto&& add) {
        for (int k = 0; k < n; ++k)
            add(in.first[k], k);
    });
    in.firstOrder.resize(n);
    for (int pos = 0; pos < n; ++pos)
        in.firstOrder[in.startingAt.items[pos]] = pos;
    in.liveIn = flatLists(in.sections, [&](auto&& add) {
        for (int k = 0; k < n; ++k)
            for (int s = in.first[k]; s <= in.last[k]; ++s)
                add(s, k);
    });
    in.granularity = std::max<Bytes>(g, 1);
    in.area.resize(n);
    // Saturates: a file may pair a huge size with a long lifetime (size x steps past 2^63); the
    // area only ranks buffers, and every such buffer ranks first.
    for (int k = 0; k < n; ++k)
        if (__builtin_mul_overflow(in.size[k], in.length[k], &in.area[k]))
            in.area[k] = std::numeric_limits<Bytes>::max();
    in.crowd.assign(n, 0);
    for (int k = 0; k < n; ++k)
        for (int s = in.first[k]; s <= in.last[k]; ++s)
            in.crowd[k] = std::max(in.crowd[k], in.sectionBytes[s]);
    in.rank.resize(kSkylineRankings);
    for (const auto ranking : rankings)
        addRanking(in, ranking);
    for (const Bytes bytes : in.sectionBytes)
        in.lowerBound = std::max(in.lowerBound, bytes);
    return in;
}

void addRanking(SkylineInstance& in, SkylineRanking ranking)
{
    auto& rank = in.rank[static_cast<int>(ranking)];
    const int n = in.count();
    if (static_cast<int>(rank.size()) == n)
        return;
    std::vector<RankingKey> keys(n);
    for (int k = 0; k < n; ++k)
        keys[k] = rankingKey(in, ranking, k, in.crowd[k]);
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return keys[a] > keys[b]; });
    rank.resize(n);
    for (int pos = 0; pos < n; ++pos)
        rank[order[pos]] = pos;
}

RankingKey rankingKey(const SkylineInstance& in, SkylineRanking ranking, int k, Bytes total)
{
    const Bytes width = in.length[k], span = in.last[k] - in.first[k], area = in.area[k], size = in.size[k];
    switch (ranking) {
    case SkylineRanking::TotalWidthArea: return { total, width, area };
    case SkylineRanking::WidthAreaTotal: return { width, area, total };
    case SkylineRanking::TotalAreaWidth: return { total, area, width };
    case SkylineRanking::LongestFirst: return { width, size, 0 };
    case SkylineRanking::LargestFirst: return { size, width, 0 };
    case SkylineRanking::AreaFirst: return { area, size, 0 };
    case SkylineRanking::TotalSpanArea: return { total, span, area };
    }
    return {};
}

bool rankingUsesTotal(SkylineRanking ranking)
{
    return ranking == SkylineRanking::TotalWidthArea || ranking == SkylineRanking::WidthAreaTotal
        || ranking == SkylineRanking::TotalAreaWidth || ranking == SkylineRanking::TotalSpanArea;
}

std::vector<int> perturbedRank(const std::vector<int>& rank, double spread, std::mt19937& rng)
{
    const int n = static_cast<int>(rank.size());
    std::uniform_real_distribution<double> noise(0, std::max(1.0, spread * n));
    std::vector<std::pair<double, int>> keyed(n);
    for (int k = 0; k < n; ++k)
        keyed[k] = { rank[k] + noise(rng), k };
    std::sort(keyed.begin(), keyed.end());
    std::vector<int> result(n);
    for (int pos = 0; pos < n; ++pos)
        result[keyed[pos].second] = pos;
    return result;
}

Skyline::Skyline(const SkylineInstance& instance)
    : m_in(instance)
    , m_startCount(instance.sections, 0)
    , m_startCrossing(std::max(instance.sections, 1), 0)
{
    for (int k = 0; k < instance.count(); ++k) {
        for (int s = instance.first[k]; s <= instance.last[k]; ++s)
            ++m_startCount[s];
        for (int s = instance.first[k]; s < instance.last[k]; ++s)
            ++m_startCrossing[s];
    }
    reset();
    // Each buffer's time-overlapping buffers, once each: a placement lifts them all to one offset.
    // Those live in its first section, plus those starting inside its other sections.
    m_overlaps = flatLists(instance.count(), [&](auto&& add) {
        for (int k = 0; k < instance.count(); ++k) {
            for (const int j : instance.liveIn[instance.first[k]])
                if (j != k)
                    add(k, j);
            for (const int j : instance.startingAt.range(instance.first[k] + 1, instance.last[k] + 1))
                add(k, j);
        }
    });
    // Room for every placement's records (its own, one per section, two per overlapping buffer)
    // plus as many again for raises: growing the log by doubling copied megabytes into fresh pages,
    // and those page faults were a third of a best-of-greedy call on J. Reserving touches nothing.
    std::size_t records = 4 * static_cast<std::size_t>(instance.count() + instance.sections);
    for (int k = 0; k < instance.count(); ++k)
        records += 2 + static_cast<std::size_t>(instance.last[k] - instance.first[k] + 1) + 2 * m_overlaps[k].size();
    m_undo.reserve(records);
}

void Skyline::reset()
{
    // Copies into the vectors' existing storage: after a long search this is much cheaper than
    // undoing the log (a third of a best-of-greedy call on J went to undoing whole paths).
    m_undo.clear();
    m_placed = 0;
    m_ceiling = 0;
    forgetTouched();
    m_pendingBytes = m_in.sectionBytes;
    m_pendingCount = m_startCount;
    m_crossing = m_startCrossing;
    m_floor.resize(m_in.sections);
    for (int s = 0; s < m_in.sections; ++s)
        m_floor[s] = m_startCount[s] == 0 ? kClosed : 0;
    m_raised.assign(m_in.sections, 0);
    m_offset.assign(m_in.count(), -1);
    m_raisedTo.assign(m_in.count(), 0);
    m_rest.assign(m_in.count(), 0);
    m_restTop.resize(m_in.count());
    for (int k = 0; k < m_in.count(); ++k)
        m_restTop[m_in.firstOrder[k]] = m_in.size[k];
}

Skyline::Plateau Skyline::lowestPlateau(int begin, int end) const
{
    if (end < 0)
        end = m_in.sections;
    Plateau p;
    for (int s = begin; s < end; ++s)
        if (m_floor[s] < p.floor) {
            p.floor = m_floor[s];
            p.begin = s;
        }
    if (p.floor == kClosed)
        return p;
    p.end = p.begin + 1;
    while (p.end < end && m_floor[p.end] == p.floor)
        ++p.end;
    return p;
}

void Skyline::pieces(int begin, int end, std::vector<std::pair<int, int>>& out) const
{
    int pieceBegin = -1;
    for (int s = begin; s < end; ++s) {
        if (m_pendingCount[s] == 0)
            continue;
        if (pieceBegin < 0)
            pieceBegin = s;
        if (s + 1 >= end || m_crossing[s] == 0) {
            out.emplace_back(pieceBegin, s + 1);
            pieceBegin = -1;
        }
    }
}

void Skyline::candidates(const Plateau& plateau, std::vector<int>& out) const
{
    for (const int k : m_in.startingAt.range(plateau.begin, plateau.end))
        if (m_offset[k] < 0 && m_in.last[k] < plateau.end && (m_in.twinBefore[k] < 0 || m_offset[m_in.twinBefore[k]] >= 0))
            out.push_back(k);
}

Bytes Skyline::raiseTarget(const Plateau& plateau, int begin, int end) const
{
    if (end < 0)
        end = m_in.sections;
    const Bytes left = plateau.begin > begin ? m_floor[plateau.begin - 1] : kClosed;
    const Bytes right = plateau.end < end ? m_floor[plateau.end] : kClosed;
    return std::min(left, right);
}

void Skyline::liftBuffer(int k, Bytes to)
{
    if (m_offset[k] >= 0 || m_raisedTo[k] >= to || m_rest[k] >= to)
        return;
    m_undo.push_back({ m_raisedTo[k], kRaisedRecord, k });
    m_raisedTo[k] = to;
    touch(k);
}

void Skyline::touch(int k)
{
    m_touchBegin = std::min(m_touchBegin, m_in.first[k]);
    m_touchEnd = std::max(m_touchEnd, m_in.last[k] + 1);
}

void Skyline::place(int buffer, Bytes offset)
{
    m_undo.push_back({ 0, -1 - buffer, 0 });
    m_offset[buffer] = offset;
    m_restTop[m_in.firstOrder[buffer]] = kClosed;
    ++m_placed;
    const Bytes size = m_in.size[buffer];
    for (int s = m_in.first[buffer]; s < m_in.last[buffer]; ++s)
        --m_crossing[s];
    for (int s = m_in.first[buffer]; s <= m_in.last[buffer]; ++s) {
        m_undo.push_back({ m_floor[s], s, m_raised[s] });
        m_pendingBytes[s] -= size;
        m_floor[s] = --m_pendingCount[s] == 0 ? kClosed : offset + size;
        m_raised[s] = 0;
    }
    raiseCeiling(offset + size);
    // Every section of the buffer gets the same floor: lift each overlapping buffer once.
    const Bytes top = offset + size;
    for (const int k : m_overlaps[buffer]) {
        if (m_offset[k] >= 0 || m_rest[k] >= top)
            continue;
        m_undo.push_back({ m_rest[k], kRestRecord, k });
        m_rest[k] = top;
        m_restTop[m_in.firstOrder[k]] = top + m_in.size[k];
        if (m_raisedTo[k] < top)
            touch(k); // its lowest offset rose
    }
}

void Skyline::liftLowest(int begin, int end, Bytes to)
{
    // The buffers covering [begin, end), once each: those live in `begin`, then those starting later.
    for (const int k : m_in.liveIn[begin])
        liftBuffer(k, to);
    for (const int k : m_in.startingAt.range(begin + 1, end))
        liftBuffer(k, to);
}


bool Skyline::boundsHold(Bytes capacity)
{
    // Every lowest offset is some floor, so a section with room above the highest floor for all its
    // pending bytes cannot fail: skip it without scanning its buffers. m_ceiling bounds the highest
    // open floor from above (it counts closed sections' last floors too), which keeps this O(1).
    // With headroom >= 0, a closed section (no pending bytes) passes the first test too.
    const Bytes headroom = capacity - m_ceiling;
    const Bytes* pending = m_pendingBytes.data();
    bool holds = true;
    for (int s = m_touchBegin; s < m_touchEnd; ++s) {
        if (pending[s] <= headroom || m_pendingCount[s] == 0)
            continue;
        // Fails when the floor, or the lowest offset of every unplaced buffer, leaves too little
        // room: stop at the first buffer that leaves enough.
        const Bytes room = capacity - m_pendingBytes[s];
        bool fails = m_floor[s] > room;
        if (!fails) {
            fails = true;
            for (const int k : m_in.liveIn[s])
                if (m_offset[k] < 0 && lowestOffset(k) <= room) {
                    fails = false;
                    break;
                }
        }
        if (fails) {
            holds = false;
            break;
        }
    }
    forgetTouched();
    return holds;
}

void Skyline::forgetTouched()
{
    m_touchBegin = std::numeric_limits<int>::max();
    m_touchEnd = 0;
}

void Skyline::raise(const Plateau& plateau, Bytes to)
{
    for (int s = plateau.begin; s < plateau.end; ++s) {
        m_undo.push_back({ m_floor[s], s, m_raised[s] });
        m_floor[s] = to;
        m_raised[s] = 1;
    }
    raiseCeiling(to);
    liftLowest(plateau.begin, plateau.end, to);
    m_touchBegin = std::min(m_touchBegin, plateau.begin);
    m_touchEnd = std::max(m_touchEnd, plateau.end);
}

void Skyline::undoTo(std::size_t mark)
{
    while (m_undo.size() > mark) {
        const Undo u = m_undo.back();
        m_undo.pop_back();
        if (u.section == kRaisedRecord) {
            m_raisedTo[u.aux] = u.floor;
            continue;
        }
        if (u.section == kCeilingRecord) {
            m_ceiling = u.floor;
            continue;
        }
        if (u.section == kRestRecord) {
            m_rest[u.aux] = u.floor;
            m_restTop[m_in.firstOrder[u.aux]] = u.floor + m_in.size[u.aux];
            continue;
        }
        if (u.section >= 0) {
            m_floor[u.section] = u.floor;
            m_raised[u.section] = static_cast<char>(u.aux);
            continue;
        }
        // A placement record sits below its section records, so those are already restored.
        const int buffer = -1 - u.section;
        for (int s = m_in.first[buffer]; s < m_in.last[buffer]; ++s)
            ++m_crossing[s];
        for (int s = m_in.first[buffer]; s <= m_in.last[buffer]; ++s) {
            m_pendingBytes[s] += m_in.size[buffer];
            ++m_pendingCount[s];
        }
        m_offset[buffer] = -1;
        m_restTop[m_in.firstOrder[buffer]] = m_rest[buffer] + m_in.size[buffer];
        --m_placed;
    }
}

bool Skyline::restsOnSomething(int buffer, Bytes floor) const
{
    if (floor == 0)
        return true;
    for (int s = m_in.first[buffer]; s <= m_in.last[buffer]; ++s)
        if (!m_raised[s])
            return true;
    return false;
}

void Skyline::raiseCeiling(Bytes to)
{
    if (to <= m_ceiling)
        return;
    m_undo.push_back({ m_ceiling, kCeilingRecord, 0 });
    m_ceiling = to;
}

bool Skyline::hatless(int buffer) const
{
    for (int s = m_in.first[buffer]; s <= m_in.last[buffer]; ++s)
        if (m_pendingCount[s] > 1)
            return false;
    return true;
}

Bytes Skyline::top() const
{
    Bytes top = 0;
    for (int k = 0; k < m_in.count(); ++k)
        if (m_offset[k] >= 0)
            top = std::max(top, m_offset[k] + m_in.size[k]);
    return top;
}

SkylinePacking skylineDive(const SkylineInstance& instance, SkylineRanking ranking)
{
    Skyline sky(instance);
    const auto& rank = instance.rank[static_cast<int>(ranking)];
    std::vector<int> candidates;
    while (sky.placedCount() < instance.count()) {
        sky.forgetTouched();
        const auto plateau = sky.lowestPlateau();
        candidates.clear();
        sky.candidates(plateau, candidates);
        if (!candidates.empty()) {
            sky.place(*std::min_element(candidates.begin(), candidates.end(), [&](int a, int b) { return rank[a] < rank[b]; }),
                plateau.floor);
            continue;
        }
        // No buffer fits inside: some buffer crosses a neighbour, so the raise target is finite.
        sky.raise(plateau, sky.raiseTarget(plateau));
    }
    SkylinePacking result;
    result.offsets.resize(instance.count());
    for (int k = 0; k < instance.count(); ++k)
        result.offsets[k] = sky.offset(k);
    result.arena = sky.top();
    return result;
}

Plan planFromSkyline(const PlanProblem& problem, const SkylineInstance& instance, const std::vector<Bytes>& offsets)
{
    Plan plan;
    plan.offsets.assign(problem.buffers.size(), 0);
    for (int k = 0; k < instance.count(); ++k) {
        plan.offsets[instance.ids[k]] = offsets[k];
        plan.arenaSize = std::max(plan.arenaSize, offsets[k] + instance.size[k]);
    }
    return plan;
}

} // namespace core
