// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/planner.h"
#include "scenarios/kvpools.h"
#include "util/cancel.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace core {

// LLM decode with a KV cache: a decoder-only transformer serves a batch of sequences; each one
// prefills its prompt in its first step and then adds one token per decode step. The KV cache is
// persistent state that grows by one token per step and is released when the sequence ends.
// This file holds the scenario's configuration, its timeline and the whole run (KV policies,
// largest batch per policy, per-step activation arena).

// The largest values validateLlmConfig accepts (the command line reads options within them).
struct LlmLimits {
    static constexpr std::int64_t layers = 10'000, hidden = 1'000'000, heads = 100'000, batch = 1'000'000,
                                  maxLength = 100'000'000, blockTokens = 1'000'000, ffn = 10'000'000,
                                  arrivalInterval = 1'000'000;
};

// Inclusive range of token counts, drawn uniformly per sequence.
struct LengthRange {
    std::int64_t min = 0;
    std::int64_t max = 0;
};

struct LlmConfig {
    int layers = 32;
    std::int64_t hidden = 4096;
    int heads = 32;
    int kvHeads = 0;      // 0: same as heads; fewer: grouped-query attention (must divide heads)
    std::int64_t ffn = 0; // MLP width; 0: 4 × hidden
    int dtypeBytes = 2;   // 1 (float8), 2 (float16) or 4 (float32), for the cache and the activations
    int batch = 16;
    // Per-sequence lengths: an explicit list (repeated cyclically up to the batch size), or drawn
    // from the range with `seed` when the list is empty. Sequence i's lengths never depend on the
    // batch size, so batch b+1 is batch b plus one sequence (what the largest-batch search needs).
    std::vector<std::int64_t> promptLengths;
    LengthRange promptRange { 128, 1024 };
    std::vector<std::int64_t> outputLengths;
    LengthRange outputRange { 64, 512 };
    std::uint64_t seed = 1;
    std::int64_t maxLength = 4096; // tokens; prompt + output of every sequence must fit
    std::int64_t blockTokens = 16;
    std::int64_t chunkTokens = 0;  // two-level pool's large chunk; 0: 16 × blockTokens
    Bytes capacity = Bytes(80) << 30; // bytes for the KV cache (weights and activations not included)
    int arrivalInterval = 0;          // steps between the arrivals of sequence i and i+1; 0: all at step 0

    int effectiveKvHeads() const { return kvHeads > 0 ? kvHeads : heads; }
    std::int64_t headDim() const { return heads > 0 ? hidden / heads : 0; }
    std::int64_t effectiveFfn() const { return ffn > 0 ? ffn : 4 * hidden; }
    std::int64_t effectiveChunkTokens() const { return chunkTokens > 0 ? chunkTokens : 16 * blockTokens; }
    // K and V of every layer: 2 × layers × kv heads × head dim × dtype bytes.
    Bytes kvBytesPerToken() const { return 2 * Bytes(layers) * effectiveKvHeads() * headDim() * dtypeBytes; }
    KvPoolConfig poolConfig() const;
};

// Checks every field; the message names the field and the rule ("llm: kv heads (5) must divide
// heads (32)"). ErrorCode::InvalidArgument.
Status validateLlmConfig(const LlmConfig& config);

// Sequences 0..batch-1 (ids = indices) with their arrival, prompt and output lengths.
// `config` must be valid. Deterministic for a seed.
std::vector<KvSequence> makeSequences(const LlmConfig& config, int batch);

// Steps until the last sequence ends.
Step timelineSteps(const std::vector<KvSequence>& sequences);

// Largest batch b such that every batch 1..b runs without a refusal under `policy` (the same
// length distribution; the search assumes a batch that fits means every smaller one fits, which
// holds for contiguous and paged and is checked for two-level in the tests). 0 when even one
// sequence does not fit; `limit` (and atLimit) when `limit` fits. O(log b) simulations.
struct LargestBatch {
    int batch = 0;
    bool atLimit = false;
};
LargestBatch largestBatchThatFits(const LlmConfig& config, KvPolicy policy, int limit = 4096);

// Activation arena of one decode step (see llmstepgraph.h).
struct LlmStepArena {
    int sequences = 0;        // live at the step
    std::int64_t tokens = 0;  // tokens processed (a prompt at its prefill step, else 1 per sequence)
    std::int64_t context = 0; // longest context, rounded up to whole blocks
    Bytes arena = 0;
    Bytes lowerBound = 0;
};

struct LlmPolicyResult {
    KvPolicyRun run;
    LargestBatch largest;
};

struct LlmScenarioResult {
    LlmConfig config;
    std::vector<KvSequence> sequences;
    Step steps = 0;
    std::vector<LlmPolicyResult> policies; // in kvPolicies() order
    std::string planner;
    std::vector<LlmStepArena> arenas; // per step
    int distinctPlans = 0;            // step shapes actually planned (equal shapes share one plan)
    Bytes weightBytes = 0;            // the model's weights (outside the KV capacity)
    Bytes activationPeak() const;
};

struct LlmRunOptions {
    std::string planner { kDefaultPlanner };
    double planTimeLimitSeconds = 0; // search planners (exact), per distinct step shape; 0: their default
    bool searchLargestBatch = true;
    int batchSearchLimit = 4096;
    CancelToken cancel;
    // Called from the running thread after each decode step is planned: (steps done, steps in all).
    std::function<void(Step, Step)> progress;
};

// The whole scenario. Errors: invalid config, unknown planner, a step graph that cannot be planned
// or whose plan fails validatePlan, cancellation.
Expected<LlmScenarioResult> runLlmScenario(const LlmConfig& config, const LlmRunOptions& options = {});

// Paged pool at one step: owner sequence of each block, up to the pool's high-water mark at that step.
struct KvBlockMap {
    Step step = 0;              // the step shown (the last step run when the pool refused earlier)
    std::int64_t blockCount = 0; // blocks in the pool
    Bytes blockBytes = 0;
    std::vector<int> owners;     // -1: free
};
KvBlockMap pagedBlockMap(const LlmConfig& config, Step step);

} // namespace core
