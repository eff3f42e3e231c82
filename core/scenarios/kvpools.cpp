// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "scenarios/kvpools.h"

#include <algorithm>
#include <cassert>
#include <set>

namespace core {

namespace {

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// A stack of free unit ids over [0, count) that never materialises the untouched ones: a pool of
// millions of tiny blocks costs nothing until they are used. Returned ids are reused first.
class UnitList {
public:
    explicit UnitList(std::int64_t count) : m_count(count) { }
    std::int64_t freeCount() const { return m_count - m_next + static_cast<std::int64_t>(m_freed.size()); }
    std::int64_t take()
    {
        assert(freeCount() > 0);
        if (!m_freed.empty()) {
            const auto id = m_freed.back();
            m_freed.pop_back();
            return id;
        }
        return m_next++;
    }
    void give(std::int64_t id) { m_freed.push_back(id); }
    std::int64_t highWater() const { return m_next; }

private:
    std::int64_t m_count = 0;
    std::int64_t m_next = 0;
    std::vector<std::int64_t> m_freed;
};

// The entry of `sequence` (or page), growing the vector with `fill` as needed.
template <class T>
T& slot(std::vector<T>& perSequence, std::int64_t sequence, const T& fill = T {})
{
    if (sequence >= static_cast<std::int64_t>(perSequence.size()))
        perSequence.resize(static_cast<std::size_t>(sequence) + 1, fill);
    return perSequence[static_cast<std::size_t>(sequence)];
}

class ContiguousKvPool : public KvPool {
public:
    explicit ContiguousKvPool(const KvPoolConfig& config)
        : KvPool(config)
        , m_regions(config.capacity / regionBytes())
    {
    }
    KvPolicy policy() const override { return KvPolicy::Contiguous; }
    Bytes regionBytes() const { return m_config.maxLength * m_config.bytesPerToken; }
    Bytes unitBytes() const override { return regionBytes(); }

    KvGrowth grow(int sequence, std::int64_t tokens) override
    {
        assert(tokens <= m_config.maxLength);
        (void)tokens;
        auto& region = slot<std::int64_t>(m_region, sequence, -1);
        if (region >= 0)
            return { true, 0 };
        if (m_regions.freeCount() == 0)
            return { false, regionBytes() };
        region = m_regions.take();
        ++m_used;
        ++m_allocations;
        return { true, regionBytes() };
    }
    void release(int sequence) override
    {
        auto& region = slot<std::int64_t>(m_region, sequence, -1);
        if (region < 0)
            return;
        m_regions.give(region);
        region = -1;
        --m_used;
    }
    Bytes reservedBytes() const override { return m_used * regionBytes(); }
    Bytes externalBytes() const override { return m_config.capacity - (m_config.capacity / regionBytes()) * regionBytes(); }
    std::vector<KvExtent> extents() const override
    {
        std::vector<KvExtent> out;
        for (std::size_t s = 0; s < m_region.size(); ++s)
            if (m_region[s] >= 0)
                out.push_back({ static_cast<int>(s), m_region[s] * regionBytes(), regionBytes() });
        return out;
    }

private:
    UnitList m_regions;
    std::vector<std::int64_t> m_region; // per sequence: its region id, or -1
    std::int64_t m_used = 0;
};

// Pages of chunkTokens tokens; a slab page holds chunkTokens / blockTokens small blocks.
class TwoLevelKvPool : public KvPool {
public:
    explicit TwoLevelKvPool(const KvPoolConfig& config)
        : KvPool(config)
        , m_pageCount(config.capacity / pageBytes())
        , m_pages(m_pageCount)
    {
    }
    KvPolicy policy() const override { return KvPolicy::TwoLevel; }
    Bytes pageBytes() const { return m_config.chunkTokens * m_config.bytesPerToken; }
    Bytes smallBytes() const { return m_config.blockTokens * m_config.bytesPerToken; }
    std::int64_t slotsPerPage() const { return m_config.chunkTokens / m_config.blockTokens; }
    Bytes unitBytes() const override { return pageBytes(); }

    KvGrowth grow(int sequence, std::int64_t tokens) override
    {
        auto& held = slot(m_held, sequence);
        const auto perPage = slotsPerPage();
        // Threshold rule: small blocks up to chunkTokens tokens, large chunks after that.
        std::int64_t small = 0, chunks = 0;
        std::int64_t room = static_cast<std::int64_t>(held.small.size()) * m_config.blockTokens
            + static_cast<std::int64_t>(held.chunks.size()) * m_config.chunkTokens;
        for (auto heldSmall = static_cast<std::int64_t>(held.small.size()); room < tokens;) {
            if (heldSmall + small < perPage) {
                ++small;
                room += m_config.blockTokens;
            } else {
                const auto more = ceilDiv(tokens - room, m_config.chunkTokens);
                chunks += more;
                room += more * m_config.chunkTokens;
            }
        }
        const Bytes requested = small * smallBytes() + chunks * pageBytes();
        const auto newSlabPages = small > m_freeSlots ? ceilDiv(small - m_freeSlots, perPage) : 0;
        if (chunks + newSlabPages > m_pages.freeCount())
            return { false, requested };
        for (std::int64_t i = 0; i < small; ++i)
            held.small.push_back(takeSmall(sequence));
        for (std::int64_t i = 0; i < chunks; ++i) {
            const auto page = m_pages.take();
            state(page) = { sequence, {}, 0 };
            held.chunks.push_back(page);
        }
        m_usedSmall += small;
        m_usedChunks += chunks;
        m_allocations += small + chunks;
        return { true, requested };
    }

    void release(int sequence) override
    {
        auto& held = slot(m_held, sequence);
        for (const auto& [page, index] : held.small) {
            auto& p = state(page);
            p.slots[static_cast<std::size_t>(index)] = -1;
            --p.used;
            ++m_freeSlots;
            if (p.used == 0) { // an empty slab becomes a free page again
                m_partial.erase(page);
                m_freeSlots -= slotsPerPage();
                p = {};
                m_pages.give(page);
            } else {
                m_partial.insert(page);
            }
        }
        for (const auto page : held.chunks) {
            state(page) = {};
            m_pages.give(page);
        }
        m_usedSmall -= static_cast<std::int64_t>(held.small.size());
        m_usedChunks -= static_cast<std::int64_t>(held.chunks.size());
        held = {};
    }

    Bytes reservedBytes() const override { return m_usedChunks * pageBytes() + m_usedSmall * smallBytes(); }
    Bytes externalBytes() const override
    {
        return m_freeSlots * smallBytes() + (m_config.capacity - m_pageCount * pageBytes());
    }
    std::vector<KvExtent> extents() const override
    {
        std::vector<KvExtent> out;
        for (std::size_t s = 0; s < m_held.size(); ++s) {
            for (const auto& [page, index] : m_held[s].small)
                out.push_back({ static_cast<int>(s), page * pageBytes() + index * smallBytes(), smallBytes() });
            for (const auto page : m_held[s].chunks)
                out.push_back({ static_cast<int>(s), page * pageBytes(), pageBytes() });
        }
        return out;
    }

private:
    struct Page {
        int chunkOwner = -1;     // sequence owning the page as one chunk
        std::vector<int> slots;  // slab: owner per small block (-1 free); empty for a chunk or a free page
        std::int64_t used = 0;   // slab: small blocks in use
    };
    struct Held {
        std::vector<std::pair<std::int64_t, std::int64_t>> small; // (page, slot)
        std::vector<std::int64_t> chunks;                          // pages
    };

    Page& state(std::int64_t page) { return slot(m_state, page); }

    // From the lowest partly used slab, else a fresh slab page (the caller checked there is one).
    std::pair<std::int64_t, std::int64_t> takeSmall(int sequence)
    {
        if (m_partial.empty()) {
            const auto page = m_pages.take();
            state(page) = { -1, std::vector<int>(static_cast<std::size_t>(slotsPerPage()), -1), 0 };
            m_partial.insert(page);
            m_freeSlots += slotsPerPage();
        }
        const auto page = *m_partial.begin();
        auto& p = state(page);
        const auto free = std::find(p.slots.begin(), p.slots.end(), -1);
        assert(free != p.slots.end());
        *free = sequence;
        ++p.used;
        --m_freeSlots;
        if (p.used == slotsPerPage())
            m_partial.erase(page);
        return { page, free - p.slots.begin() };
    }

    std::int64_t m_pageCount = 0;
    UnitList m_pages;
    std::vector<Page> m_state;       // per page touched so far
    std::set<std::int64_t> m_partial; // slab pages with a free small block
    std::vector<Held> m_held;         // per sequence id
    std::int64_t m_freeSlots = 0;     // free small blocks in slab pages
    std::int64_t m_usedSmall = 0, m_usedChunks = 0;
};

} // namespace

std::string_view kvPolicyName(KvPolicy policy)
{
    switch (policy) {
    case KvPolicy::Contiguous:
        return "contiguous";
    case KvPolicy::Paged:
        return "paged";
    case KvPolicy::TwoLevel:
        return "two-level";
    }
    return "?";
}

const std::vector<KvPolicy>& kvPolicies()
{
    static const std::vector<KvPolicy> all { KvPolicy::Contiguous, KvPolicy::Paged, KvPolicy::TwoLevel };
    return all;
}

PagedKvPool::PagedKvPool(const KvPoolConfig& config)
    : KvPool(config)
    , m_blockCount(config.capacity / blockBytes())
{
}

KvGrowth PagedKvPool::grow(int sequence, std::int64_t tokens)
{
    auto& table = slot(m_tables, sequence);
    const auto need = ceilDiv(tokens, m_config.blockTokens) - static_cast<std::int64_t>(table.size());
    if (need <= 0)
        return { true, 0 };
    const Bytes requested = need * blockBytes();
    if (need > m_blockCount - m_usedBlocks)
        return { false, requested };
    for (std::int64_t i = 0; i < need; ++i) {
        if (!m_freed.empty()) {
            table.push_back(m_freed.back());
            m_freed.pop_back();
        } else {
            table.push_back(m_nextFresh++);
        }
    }
    m_usedBlocks += need;
    m_allocations += need;
    return { true, requested };
}

void PagedKvPool::release(int sequence)
{
    auto& table = slot(m_tables, sequence);
    // Returned in reverse so the sequence's first block is the next one handed out.
    for (auto it = table.rbegin(); it != table.rend(); ++it)
        m_freed.push_back(*it);
    m_usedBlocks -= static_cast<std::int64_t>(table.size());
    table.clear();
}

const std::vector<std::int64_t>& PagedKvPool::blockTable(int sequence) const
{
    static const std::vector<std::int64_t> none;
    return sequence >= 0 && sequence < static_cast<int>(m_tables.size()) ? m_tables[static_cast<std::size_t>(sequence)] : none;
}

std::vector<int> PagedKvPool::blockOwners() const
{
    std::vector<int> owners(static_cast<std::size_t>(m_nextFresh), -1);
    for (std::size_t s = 0; s < m_tables.size(); ++s)
        for (const auto block : m_tables[s])
            owners[static_cast<std::size_t>(block)] = static_cast<int>(s);
    return owners;
}

std::vector<KvExtent> PagedKvPool::extents() const
{
    std::vector<KvExtent> out;
    for (std::size_t s = 0; s < m_tables.size(); ++s)
        for (const auto block : m_tables[s])
            out.push_back({ static_cast<int>(s), block * blockBytes(), blockBytes() });
    return out;
}

std::unique_ptr<KvPool> makeKvPool(KvPolicy policy, const KvPoolConfig& config)
{
    switch (policy) {
    case KvPolicy::Contiguous:
        return std::make_unique<ContiguousKvPool>(config);
    case KvPolicy::Paged:
        return std::make_unique<PagedKvPool>(config);
    case KvPolicy::TwoLevel:
        return std::make_unique<TwoLevelKvPool>(config);
    }
    return nullptr;
}

KvPolicyRun simulateKvPool(KvPolicy policy, const KvPoolConfig& config, const std::vector<KvSequence>& sequences,
    const KvObserver& observe, bool keepSeries)
{
    KvPolicyRun run;
    run.policy = policy;
    auto pool = makeKvPool(policy, config);
    Step steps = 0;
    for (const auto& s : sequences)
        steps = std::max(steps, s.end());
    // Sequences by arrival (stable: id order within a step), fed into `live` as their step comes.
    std::vector<int> byArrival(sequences.size());
    for (std::size_t i = 0; i < sequences.size(); ++i)
        byArrival[i] = static_cast<int>(i);
    std::stable_sort(byArrival.begin(), byArrival.end(),
        [&](int a, int b) { return sequences[static_cast<std::size_t>(a)].arrival < sequences[static_cast<std::size_t>(b)].arrival; });
    std::size_t nextArrival = 0;
    std::vector<int> live; // ids, ascending
    double internalSum = 0, reservedSum = 0;
    for (Step step = 0; step < steps; ++step) {
        std::vector<int> next;
        next.reserve(live.size());
        for (const int id : live) {
            if (sequences[static_cast<std::size_t>(id)].liveAt(step))
                next.push_back(id);
            else
                pool->release(id);
        }
        bool arrived = false;
        for (; nextArrival < byArrival.size()
             && sequences[static_cast<std::size_t>(byArrival[nextArrival])].arrival <= step;
             ++nextArrival) {
            next.push_back(byArrival[nextArrival]);
            arrived = true;
        }
        if (arrived)
            std::sort(next.begin(), next.end());
        live = std::move(next);

        const auto allocationsBefore = pool->allocations();
        KvStepStats stats;
        for (const int id : live) {
            const auto& s = sequences[static_cast<std::size_t>(id)];
            const auto tokens = s.tokensAt(step);
            const auto growth = pool->grow(id, tokens);
            if (!growth.granted) {
                run.refusal = KvRefusal { step, id, tokens, growth.requested, config.capacity - pool->reservedBytes() };
                break;
            }
            stats.inUse += tokens * config.bytesPerToken;
        }
        if (run.refusal)
            break;
        stats.live = static_cast<int>(live.size());
        stats.reserved = pool->reservedBytes();
        stats.internal = stats.reserved - stats.inUse;
        stats.external = pool->externalBytes();
        stats.allocations = pool->allocations() - allocationsBefore;
        run.peakInUse = std::max(run.peakInUse, stats.inUse);
        run.peakReserved = std::max(run.peakReserved, stats.reserved);
        run.peakInternal = std::max(run.peakInternal, stats.internal);
        run.peakExternal = std::max(run.peakExternal, stats.external);
        internalSum += static_cast<double>(stats.internal);
        reservedSum += static_cast<double>(stats.reserved);
        if (keepSeries)
            run.steps.push_back(stats);
        if (observe)
            observe(step, *pool);
    }
    run.allocations = pool->allocations();
    run.wasteFraction = reservedSum > 0 ? internalSum / reservedSum : 0;
    return run;
}

} // namespace core
