// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "graph/graph.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace core {

// KV-cache allocation policies of an LLM decode server, simulated step by step over one address
// space [0, capacity). Every pool hands out fixed-size units placed at multiples of their size:
//
//   contiguous  one region of max-length tokens per sequence, taken at its first step
//               |seq0 ..........|seq1 ......    |free          |   (rest of a region is internal waste)
//   paged       blocks of block-tokens tokens, taken one at a time as a sequence grows; a free-block
//               list and a block table per sequence; blocks go back to the list when it ends
//               |s0|s1|s0|s2|s1|  |s0|                              (waste < one block per sequence)
//   two-level   pages of chunk-tokens tokens; a page is either one large chunk or a slab of
//               chunk-tokens / block-tokens small blocks. Threshold rule: a sequence's first
//               chunk-tokens tokens go in small blocks, every token after that in large chunks, so a
//               short sequence wastes < one block and a long one < one chunk, with fewer allocations.
//               |chunk s0      |s1|s2|s1|  |  |chunk s0      |
//
// External fragmentation, for every policy: free bytes that lie in no whole free unit of the
// policy's largest request (contiguous: a region; paged: a block; two-level: a page), i.e. free
// memory the next largest request cannot use. Contiguous and paged only have the capacity's tail
// (less than one unit); two-level also has the free small blocks of partly used slab pages.
// A pool refuses a request it cannot serve and then changes nothing: it never overcommits.

enum class KvPolicy { Contiguous, Paged, TwoLevel };
std::string_view kvPolicyName(KvPolicy policy); // "contiguous", "paged", "two-level"
const std::vector<KvPolicy>& kvPolicies();     // in the order above

struct KvPoolConfig {
    Bytes capacity = 0;
    Bytes bytesPerToken = 0;
    std::int64_t maxLength = 0;   // tokens; contiguous regions hold this many
    std::int64_t blockTokens = 0; // paged blocks and two-level small blocks
    std::int64_t chunkTokens = 0; // two-level large chunks (a multiple of blockTokens)
};

// One request stream: a sequence arrives at `arrival`, prefills its prompt in that step and then
// adds one token per decode step; it ends after `output` steps and releases its cache.
struct KvSequence {
    int id = 0; // 0-based, equal to its index
    Step arrival = 0;
    std::int64_t prompt = 0;
    std::int64_t output = 0;

    Step end() const { return arrival + static_cast<Step>(output); } // first step it no longer holds cache
    bool liveAt(Step step) const { return step >= arrival && step < end(); }
    // Tokens stored once step `step` has run: the prompt, plus one per decode step since arrival.
    std::int64_t tokensAt(Step step) const { return prompt + (step - arrival); }
    // Tokens the step processes for this sequence: the prompt at arrival (prefill), then 1.
    std::int64_t newTokensAt(Step step) const { return step == arrival ? prompt : 1; }
};

// One live allocation of the pool, for checks and views.
struct KvExtent {
    int sequence = -1;
    Bytes offset = 0;
    Bytes size = 0;
};

struct KvGrowth {
    bool granted = true;
    Bytes requested = 0; // bytes the request needed beyond what the sequence held
};

class KvPool {
public:
    explicit KvPool(const KvPoolConfig& config) : m_config(config) { }
    virtual ~KvPool() = default;
    virtual KvPolicy policy() const = 0;
    // Grows `sequence` to hold `tokens` tokens (never shrinks). All or nothing.
    virtual KvGrowth grow(int sequence, std::int64_t tokens) = 0;
    virtual void release(int sequence) = 0;
    virtual Bytes reservedBytes() const = 0;
    virtual Bytes externalBytes() const = 0; // see the file comment
    virtual Bytes unitBytes() const = 0;     // the policy's largest request
    virtual std::vector<KvExtent> extents() const = 0;
    std::int64_t allocations() const { return m_allocations; } // units handed out so far
    const KvPoolConfig& config() const { return m_config; }

protected:
    KvPoolConfig m_config;
    std::int64_t m_allocations = 0;
};

// Paged pool internals the tests and the block map read.
class PagedKvPool : public KvPool {
public:
    explicit PagedKvPool(const KvPoolConfig& config);
    KvPolicy policy() const override { return KvPolicy::Paged; }
    KvGrowth grow(int sequence, std::int64_t tokens) override;
    void release(int sequence) override;
    Bytes reservedBytes() const override { return m_usedBlocks * blockBytes(); }
    Bytes externalBytes() const override { return m_config.capacity - m_blockCount * blockBytes(); }
    Bytes unitBytes() const override { return blockBytes(); }
    std::vector<KvExtent> extents() const override;

    Bytes blockBytes() const { return m_config.blockTokens * m_config.bytesPerToken; }
    std::int64_t blockCount() const { return m_blockCount; }
    std::int64_t freeBlocks() const { return m_blockCount - m_usedBlocks; }
    // Block ids of `sequence` in token order (its block table); empty when it holds none.
    const std::vector<std::int64_t>& blockTable(int sequence) const;
    // Owner sequence of every block ever handed out (0 .. high-water mark - 1); -1 when free.
    std::vector<int> blockOwners() const;

private:
    std::int64_t m_blockCount = 0;
    std::int64_t m_usedBlocks = 0;
    std::int64_t m_nextFresh = 0;            // blocks at or above this were never handed out
    std::vector<std::int64_t> m_freed;        // free-block list (returned blocks, reused last-in first-out)
    std::vector<std::vector<std::int64_t>> m_tables; // per sequence id
};

std::unique_ptr<KvPool> makeKvPool(KvPolicy policy, const KvPoolConfig& config);

// What one policy did over the decode steps.
struct KvStepStats {
    int live = 0;        // sequences holding cache
    Bytes inUse = 0;     // tokens actually stored × bytes per token
    Bytes reserved = 0;  // bytes held by allocations
    Bytes internal = 0;  // reserved − inUse: allocated to a sequence but holding no token
    Bytes external = 0;
    std::int64_t allocations = 0; // units handed out in this step
};

struct KvRefusal {
    Step step = 0;
    int sequence = 0;
    std::int64_t tokens = 0; // tokens the sequence needed room for
    Bytes requested = 0;     // bytes it asked for
    Bytes freeBytes = 0;     // capacity − reserved when it asked
};

struct KvPolicyRun {
    KvPolicy policy = KvPolicy::Paged;
    std::vector<KvStepStats> steps; // per step from 0; stops before the step of a refusal
    Bytes peakInUse = 0, peakReserved = 0, peakInternal = 0, peakExternal = 0;
    std::int64_t allocations = 0;
    double wasteFraction = 0; // Σ internal / Σ reserved over the steps run (time-averaged waste)
    std::optional<KvRefusal> refusal;
};

// Called after every step with the pool's state (tests check it; the block map copies it).
using KvObserver = std::function<void(Step, const KvPool&)>;

// Runs `sequences` (ids 0..n-1) through a fresh pool. Within a step, sequences that ended release
// first, then every live sequence grows to tokensAt(step) in id order; the first refused request
// ends the run. `keepSeries` false leaves KvPolicyRun::steps empty (the peaks are still computed).
// O(steps × live sequences).
KvPolicyRun simulateKvPool(KvPolicy policy, const KvPoolConfig& config, const std::vector<KvSequence>& sequences,
    const KvObserver& observe = {}, bool keepSeries = true);

} // namespace core
