// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "scenarios/llmscenario.h"

#include "scenarios/llmstepgraph.h"
#include "util/format.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace core {

namespace {

Error invalid(const std::string& message) { return makeError(ErrorCode::InvalidArgument, "llm: " + message); }

std::string str(std::int64_t value) { return std::to_string(value); }

// splitmix64: a fixed, portable mix, so a seed gives the same lengths on every platform.
std::uint64_t mix(std::uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Sequence i's length for stream `which` (0 prompt, 1 output): depends only on seed, i and which.
std::int64_t lengthOf(const std::vector<std::int64_t>& list, const LengthRange& range, std::uint64_t seed, int i, int which)
{
    if (!list.empty())
        return list[static_cast<std::size_t>(i) % list.size()];
    const auto span = static_cast<std::uint64_t>(range.max - range.min) + 1;
    const auto draw = mix(mix(seed * 2 + static_cast<std::uint64_t>(which)) ^ static_cast<std::uint64_t>(i));
    return range.min + static_cast<std::int64_t>(draw % span);
}

Status checkLengths(const char* what, const std::vector<std::int64_t>& list, const LengthRange& range, int batch)
{
    if (!list.empty()) {
        if (static_cast<std::int64_t>(list.size()) > batch)
            return invalid(std::string(what) + " lengths: " + str(static_cast<std::int64_t>(list.size()))
                + " given but the batch has " + str(batch) + " sequences");
        for (std::size_t i = 0; i < list.size(); ++i)
            if (list[i] < 1)
                return invalid(std::string(what) + " length of sequence " + str(static_cast<std::int64_t>(i)) + " is "
                    + str(list[i]) + "; it must be at least 1 token");
        return {};
    }
    if (range.min < 1 || range.max < range.min)
        return invalid(std::string(what) + " length range " + str(range.min) + ".." + str(range.max)
            + " is empty or below 1; give MIN..MAX with 1 <= MIN <= MAX");
    return {};
}

std::int64_t longest(const std::vector<std::int64_t>& list, const LengthRange& range)
{
    return list.empty() ? range.max : *std::max_element(list.begin(), list.end());
}

// The longest prompt and output one sequence can pair, at any batch (the largest-batch search runs
// more sequences than the batch). Lists repeat over the batch in step, so sequence i pairs prompt
// i mod P with output i mod O: entries a and b meet exactly when a = b mod gcd(P, O). A drawn range
// can pair its maximum with anything.
std::pair<std::int64_t, std::int64_t> longestPair(const LlmConfig& c)
{
    const auto& prompts = c.promptLengths;
    const auto& outputs = c.outputLengths;
    if (prompts.empty() || outputs.empty())
        return { longest(prompts, c.promptRange), longest(outputs, c.outputRange) };
    const std::size_t g = std::gcd(prompts.size(), outputs.size());
    std::vector<std::int64_t> prompt(g, 0), output(g, 0);
    for (std::size_t a = 0; a < prompts.size(); ++a)
        prompt[a % g] = std::max(prompt[a % g], prompts[a]);
    for (std::size_t b = 0; b < outputs.size(); ++b)
        output[b % g] = std::max(output[b % g], outputs[b]);
    std::pair<std::int64_t, std::int64_t> best { 0, 0 };
    for (std::size_t r = 0; r < g; ++r)
        if (prompt[r] + output[r] > best.first + best.second)
            best = { prompt[r], output[r] };
    return best;
}

// Longest timeline a run simulates (each step is stored per policy in the series).
constexpr std::int64_t kMaxSteps = 1'000'000;

Status checkRange(const char* what, std::int64_t value, std::int64_t low, std::int64_t high)
{
    if (value < low || value > high)
        return invalid(std::string(what) + " (" + str(value) + ") must be between " + str(low) + " and " + str(high));
    return {};
}

} // namespace

KvPoolConfig LlmConfig::poolConfig() const
{
    return KvPoolConfig { capacity, kvBytesPerToken(), maxLength, blockTokens, effectiveChunkTokens() };
}

Status validateLlmConfig(const LlmConfig& c)
{
    using L = LlmLimits;
    for (const auto& status : { checkRange("layers", c.layers, 1, L::layers), checkRange("hidden", c.hidden, 1, L::hidden),
             checkRange("heads", c.heads, 1, L::heads), checkRange("batch", c.batch, 1, L::batch),
             checkRange("max length", c.maxLength, 1, L::maxLength), checkRange("block tokens", c.blockTokens, 1, L::blockTokens),
             checkRange("ffn", c.ffn, 0, L::ffn), checkRange("arrival interval", c.arrivalInterval, 0, L::arrivalInterval) })
        if (!status)
            return status;
    if (c.hidden % c.heads != 0)
        return invalid("hidden (" + str(c.hidden) + ") must be a multiple of heads (" + str(c.heads) + ")");
    if (c.kvHeads < 0 || c.kvHeads > c.heads || (c.kvHeads > 0 && c.heads % c.kvHeads != 0))
        return invalid("kv heads (" + str(c.kvHeads) + ") must divide heads (" + str(c.heads) + ")");
    if (c.dtypeBytes != 1 && c.dtypeBytes != 2 && c.dtypeBytes != 4)
        return invalid("dtype bytes (" + str(c.dtypeBytes) + ") must be 1, 2 or 4");
    if (c.chunkTokens != 0 && (c.chunkTokens < c.blockTokens || c.chunkTokens % c.blockTokens != 0))
        return invalid("chunk tokens (" + str(c.chunkTokens) + ") must be a multiple of block tokens (" + str(c.blockTokens) + ")");
    if (c.chunkTokens == 0 && c.blockTokens > 1'000'000 / 16)
        return invalid("block tokens (" + str(c.blockTokens) + ") too large for the default chunk of 16 blocks; set chunk tokens");
    if (c.capacity <= 0 || c.capacity > (Bytes(1) << 62))
        return invalid("capacity (" + str(c.capacity) + " bytes) must be positive and at most 2^62 bytes");
    if (const auto s = checkLengths("prompt", c.promptLengths, c.promptRange, c.batch); !s)
        return s;
    if (const auto s = checkLengths("output", c.outputLengths, c.outputRange, c.batch); !s)
        return s;
    if (const auto [prompt, output] = longestPair(c); prompt > c.maxLength - output)
        return invalid("a sequence of prompt " + str(prompt) + " plus output " + str(output) + " tokens exceeds max length ("
            + str(c.maxLength) + ")");
    const auto output = longest(c.outputLengths, c.outputRange);
    // Every byte count below stays far from overflow: one sequence's region at most 2^52 bytes.
    const auto perToken = static_cast<long double>(2) * c.layers * c.effectiveKvHeads() * c.headDim() * c.dtypeBytes;
    if (perToken * static_cast<long double>(std::max(c.maxLength, c.effectiveChunkTokens())) > static_cast<long double>(Bytes(1) << 52))
        return invalid("a sequence of max length (" + str(c.maxLength) + " tokens) would need more than 2^52 bytes of KV cache");
    if (const Bytes block = c.kvBytesPerToken() * c.blockTokens; c.capacity < block)
        return invalid("capacity (" + str(c.capacity) + " bytes) holds no block of KV cache: one block of " + str(c.blockTokens)
            + " tokens needs " + str(block) + " bytes (" + formatBytes(block) + ")");
    if (std::int64_t(c.arrivalInterval) * (c.batch - 1) + output > kMaxSteps)
        return invalid("the timeline is too long: arrival interval x (batch - 1) + the longest output must be at most "
            + str(kMaxSteps) + " steps");
    return {};
}

std::vector<KvSequence> makeSequences(const LlmConfig& config, int batch)
{
    std::vector<KvSequence> sequences;
    sequences.reserve(static_cast<std::size_t>(std::max(batch, 0)));
    for (int i = 0; i < batch; ++i)
        sequences.push_back({ i, static_cast<Step>(static_cast<std::int64_t>(config.arrivalInterval) * i),
            lengthOf(config.promptLengths, config.promptRange, config.seed, i, 0),
            lengthOf(config.outputLengths, config.outputRange, config.seed, i, 1) });
    return sequences;
}

Step timelineSteps(const std::vector<KvSequence>& sequences)
{
    Step steps = 0;
    for (const auto& s : sequences)
        steps = std::max(steps, s.end());
    return steps;
}

LargestBatch largestBatchThatFits(const LlmConfig& config, KvPolicy policy, int limit)
{
    // Staggered arrivals: keep the searched timeline as long as a run may be.
    if (config.arrivalInterval > 0) {
        const auto output = longest(config.outputLengths, config.outputRange);
        limit = static_cast<int>(std::min<std::int64_t>(limit, (kMaxSteps - output) / config.arrivalInterval + 1));
    }
    const auto all = makeSequences(config, std::max(limit, 1));
    const auto pool = config.poolConfig();
    auto fits = [&](int batch) {
        const std::vector<KvSequence> prefix(all.begin(), all.begin() + batch);
        return !simulateKvPool(policy, pool, prefix, {}, false).refusal.has_value();
    };
    if (limit < 1 || !fits(1))
        return { 0, false };
    int good = 1, bad = 0; // bad: smallest batch known not to fit, 0 while none
    while (bad == 0 && good < limit) {
        const int next = static_cast<int>(std::min<std::int64_t>(std::int64_t(good) * 2, limit));
        if (fits(next))
            good = next;
        else
            bad = next;
    }
    if (bad == 0)
        return { good, true };
    while (bad - good > 1) {
        const int mid = good + (bad - good) / 2;
        (fits(mid) ? good : bad) = mid;
    }
    return { good, false };
}

Bytes LlmScenarioResult::activationPeak() const
{
    Bytes peak = 0;
    for (const auto& a : arenas)
        peak = std::max(peak, a.arena);
    return peak;
}

Expected<LlmScenarioResult> runLlmScenario(const LlmConfig& config, const LlmRunOptions& options)
{
    if (const auto status = validateLlmConfig(config); !status)
        return status.error();
    const auto* planner = plannerByName(options.planner);
    if (!planner) {
        std::string names;
        for (const auto& name : plannerNames())
            names += (names.empty() ? "" : ", ") + name;
        return invalid("unknown planner '" + options.planner + "'; choose one of " + names);
    }
    auto cancelled = [] { return makeError(ErrorCode::Cancelled, "llm: cancelled"); };
    LlmScenarioResult result;
    result.config = config;
    result.planner = options.planner;
    result.sequences = makeSequences(config, config.batch);
    result.steps = timelineSteps(result.sequences);
    for (const auto policy : kvPolicies()) {
        if (options.cancel.isCancelled())
            return cancelled();
        LlmPolicyResult entry;
        entry.run = simulateKvPool(policy, config.poolConfig(), result.sequences);
        if (options.searchLargestBatch)
            entry.largest = largestBatchThatFits(config, policy, options.batchSearchLimit);
        result.policies.push_back(std::move(entry));
    }
    PlanOptions planOptions;
    planOptions.timeLimitSeconds = options.planTimeLimitSeconds;
    LlmArenaPlanner arenas(config, *planner, planOptions);
    result.arenas.reserve(static_cast<std::size_t>(result.steps));
    for (Step step = 0; step < result.steps; ++step) {
        if (options.cancel.isCancelled())
            return cancelled();
        const auto shape = stepShape(config, result.sequences, step);
        const auto arena = arenas.arenaFor(shape, options.cancel);
        if (!arena)
            return arena.error();
        result.arenas.push_back({ shape.sequences, shape.tokens, shape.context, arena->arena, arena->lowerBound });
        result.weightBytes = std::max(result.weightBytes, arena->weights);
        if (options.progress)
            options.progress(step + 1, result.steps);
    }
    result.distinctPlans = arenas.distinctPlans();
    return result;
}

KvBlockMap pagedBlockMap(const LlmConfig& config, Step step)
{
    KvBlockMap map;
    const auto pool = config.poolConfig();
    map.blockBytes = pool.blockTokens * pool.bytesPerToken;
    map.blockCount = map.blockBytes > 0 ? pool.capacity / map.blockBytes : 0;
    const auto sequences = makeSequences(config, config.batch);
    Step last = -1;
    auto capture = [&](Step wanted) {
        simulateKvPool(KvPolicy::Paged, pool, sequences, [&](Step s, const KvPool& kv) {
            last = s;
            if (s == wanted) {
                map.step = s;
                map.owners = static_cast<const PagedKvPool&>(kv).blockOwners();
            }
        }, false);
    };
    capture(std::max<Step>(step, 0));
    if (map.owners.empty() && last >= 0 && last < step) // past the end, or the pool refused earlier
        capture(last);
    return map;
}

} // namespace core
