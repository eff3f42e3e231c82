// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "scenarios/llmreport.h"

#include "util/format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

namespace core {

namespace {
using OrderedJson = nlohmann::ordered_json;

std::string printf1(const char* format, double value)
{
    char text[64];
    std::snprintf(text, sizeof text, format, value);
    return text;
}

std::string lengths(const std::vector<std::int64_t>& list, const LengthRange& range)
{
    if (list.empty())
        return range.min == range.max ? std::to_string(range.min) : std::to_string(range.min) + ".." + std::to_string(range.max);
    std::string text;
    for (std::size_t i = 0; i < list.size() && i < 8; ++i)
        text += (i ? "," : "") + std::to_string(list[i]);
    return list.size() > 8 ? text + ",..." : text;
}

std::string refusalText(const std::optional<KvRefusal>& refusal)
{
    if (!refusal)
        return "none";
    // Enough bytes free yet refused: they lie in no whole free unit (a two-level pool carves its small
    // blocks out of chunks, so less than a chunk free holds no block either).
    const bool scattered = refusal->freeBytes >= refusal->requested;
    return "step " + std::to_string(refusal->step) + ", sequence " + std::to_string(refusal->sequence) + " (needs "
        + formatBytes(refusal->requested) + "; " + formatBytes(refusal->freeBytes) + " free"
        + (scattered ? ", in no whole free unit)" : ")");
}

// Refused in the first step: no step ran, so there are no peaks to show.
bool anyStepRan(const KvPolicyRun& run) { return !run.refusal || run.refusal->step > 0; }

template <class F>
OrderedJson series(const std::vector<KvStepStats>& steps, F field)
{
    auto values = OrderedJson::array();
    for (const auto& s : steps)
        values.push_back(field(s));
    return values;
}
} // namespace

std::string formatLlmReport(const LlmScenarioResult& r)
{
    const auto& c = r.config;
    const auto perToken = c.kvBytesPerToken();
    std::string out;
    out += "LLM decode: " + std::to_string(c.layers) + " layers, hidden " + std::to_string(c.hidden) + ", "
        + std::to_string(c.heads) + " heads (" + std::to_string(c.effectiveKvHeads()) + " KV heads, head dim "
        + std::to_string(c.headDim()) + "), MLP " + std::to_string(c.effectiveFfn()) + ", " + std::to_string(c.dtypeBytes)
        + "-byte values\n";
    out += "KV cache: " + formatBytes(perToken) + " per token; blocks of " + std::to_string(c.blockTokens) + " tokens ("
        + formatBytes(perToken * c.blockTokens) + "), chunks of " + std::to_string(c.effectiveChunkTokens()) + " tokens ("
        + formatBytes(perToken * c.effectiveChunkTokens()) + "), max length " + std::to_string(c.maxLength) + " ("
        + formatBytes(perToken * c.maxLength) + ")\n";
    out += "batch " + std::to_string(c.batch) + ": prompts " + lengths(c.promptLengths, c.promptRange) + ", outputs "
        + lengths(c.outputLengths, c.outputRange) + " tokens"
        + (c.promptLengths.empty() || c.outputLengths.empty() ? " (seed " + std::to_string(c.seed) + ")" : "")
        + (c.arrivalInterval > 0 ? ", one arrival every " + std::to_string(c.arrivalInterval) + " steps"
                                 : ", all arriving at step 0")
        + "; " + std::to_string(r.steps) + " steps\n";
    out += "capacity " + formatBytes(c.capacity) + " for the KV cache (weights " + formatBytes(r.weightBytes)
        + " and the activation arena not included)\n\n";

    char line[256];
    std::snprintf(line, sizeof line, "%-11s %12s %14s %8s %14s %12s %14s  %s\n", "policy", "peak in use", "peak reserved",
        "waste", "peak external", "allocations", "largest batch", "first refusal");
    out += line;
    for (const auto& p : r.policies) {
        const auto largest = p.largest.atLimit ? ">= " + std::to_string(p.largest.batch) : std::to_string(p.largest.batch);
        const bool ran = anyStepRan(p.run);
        auto bytes = [ran](Bytes value) { return ran ? formatBytes(value) : std::string("-"); };
        std::snprintf(line, sizeof line, "%-11s %12s %14s %8s %14s %12lld %14s  %s\n",
            std::string(kvPolicyName(p.run.policy)).c_str(), bytes(p.run.peakInUse).c_str(), bytes(p.run.peakReserved).c_str(),
            ran ? printf1("%.1f %%", p.run.wasteFraction * 100).c_str() : "-", bytes(p.run.peakExternal).c_str(),
            static_cast<long long>(p.run.allocations), largest.c_str(), refusalText(p.run.refusal).c_str());
        out += line;
    }
    out += "waste: reserved bytes holding no token, as a share of reserved, over all steps run; external: free bytes\n"
           "in no whole free unit (contiguous region, paged block, two-level chunk). Two-level: the first "
        + std::to_string(c.effectiveChunkTokens()) + " tokens\nof a sequence in blocks, the rest in chunks.\n\n";

    Bytes low = -1, high = 0;
    Step highStep = 0;
    for (std::size_t s = 0; s < r.arenas.size(); ++s) {
        const auto& a = r.arenas[s];
        if (a.sequences == 0)
            continue;
        low = low < 0 ? a.arena : std::min(low, a.arena);
        if (a.arena > high) {
            high = a.arena;
            highStep = static_cast<Step>(s);
        }
    }
    out += "activation arena (" + r.planner + ", a scoped arena reset every step): " + formatBytes(std::max<Bytes>(low, 0))
        + " .. " + formatBytes(high) + " (largest at step " + std::to_string(highStep) + ", "
        + std::to_string(highStep < static_cast<Step>(r.arenas.size()) ? r.arenas[highStep].tokens : 0) + " tokens); "
        + std::to_string(r.distinctPlans) + " plans for " + std::to_string(r.steps) + " steps\n";
    return out;
}

std::string exportLlmJson(const LlmScenarioResult& r)
{
    const auto& c = r.config;
    OrderedJson root;
    root["scenario"] = "llm";
    OrderedJson config;
    config["layers"] = c.layers;
    config["hidden"] = c.hidden;
    config["heads"] = c.heads;
    config["kv_heads"] = c.effectiveKvHeads();
    config["head_dim"] = c.headDim();
    config["ffn"] = c.effectiveFfn();
    config["dtype_bytes"] = c.dtypeBytes;
    config["batch"] = c.batch;
    // Lengths as given, one shape for every form: {min, max, list}; the list repeats over the batch,
    // and is empty when the lengths were drawn from [min, max].
    auto lengthSpec = [](const std::vector<std::int64_t>& list, const LengthRange& range) {
        OrderedJson spec;
        spec["min"] = list.empty() ? range.min : *std::min_element(list.begin(), list.end());
        spec["max"] = list.empty() ? range.max : *std::max_element(list.begin(), list.end());
        spec["list"] = list;
        return spec;
    };
    config["prompt_lengths"] = lengthSpec(c.promptLengths, c.promptRange);
    config["output_lengths"] = lengthSpec(c.outputLengths, c.outputRange);
    config["max_length"] = c.maxLength;
    config["block_tokens"] = c.blockTokens;
    config["chunk_tokens"] = c.effectiveChunkTokens();
    config["capacity_bytes"] = c.capacity;
    config["seed"] = c.seed;
    config["arrival_interval"] = c.arrivalInterval;
    root["config"] = std::move(config);
    root["kv_bytes_per_token"] = c.kvBytesPerToken();
    root["steps"] = r.steps;
    root["weight_bytes"] = r.weightBytes;
    auto sequences = OrderedJson::array();
    for (const auto& s : r.sequences)
        sequences.push_back({ { "id", s.id }, { "arrival", s.arrival }, { "prompt", s.prompt }, { "output", s.output } });
    root["sequences"] = std::move(sequences);

    auto policies = OrderedJson::array();
    for (const auto& p : r.policies) {
        const auto& run = p.run;
        OrderedJson entry;
        entry["name"] = std::string(kvPolicyName(run.policy));
        // Peaks and waste cover the steps run (steps_run, fewer than steps after a refusal); none ran: null.
        const bool ran = anyStepRan(run);
        const auto peak = [ran](auto value) { return ran ? OrderedJson(value) : OrderedJson(nullptr); };
        entry["steps_run"] = run.steps.size();
        entry["peak_in_use_bytes"] = peak(run.peakInUse);
        entry["peak_reserved_bytes"] = peak(run.peakReserved);
        entry["peak_internal_bytes"] = peak(run.peakInternal);
        entry["peak_external_bytes"] = peak(run.peakExternal);
        entry["waste_fraction"] = peak(run.wasteFraction);
        entry["allocations"] = run.allocations;
        entry["largest_batch"] = p.largest.batch;
        entry["largest_batch_at_limit"] = p.largest.atLimit;
        if (run.refusal)
            entry["refusal"] = { { "step", run.refusal->step }, { "sequence", run.refusal->sequence },
                { "tokens", run.refusal->tokens }, { "requested_bytes", run.refusal->requested },
                { "free_bytes", run.refusal->freeBytes } };
        else
            entry["refusal"] = nullptr;
        OrderedJson s;
        s["live"] = series(run.steps, [](const KvStepStats& x) { return x.live; });
        s["in_use"] = series(run.steps, [](const KvStepStats& x) { return x.inUse; });
        s["reserved"] = series(run.steps, [](const KvStepStats& x) { return x.reserved; });
        s["internal"] = series(run.steps, [](const KvStepStats& x) { return x.internal; });
        s["external"] = series(run.steps, [](const KvStepStats& x) { return x.external; });
        s["allocations"] = series(run.steps, [](const KvStepStats& x) { return x.allocations; });
        entry["series"] = std::move(s);
        policies.push_back(std::move(entry));
    }
    root["policies"] = std::move(policies);

    OrderedJson activation;
    activation["planner"] = r.planner;
    activation["distinct_plans"] = r.distinctPlans;
    activation["peak_arena_bytes"] = r.activationPeak();
    OrderedJson s;
    for (const char* key : { "sequences", "tokens", "context", "arena", "lower_bound" })
        s[key] = OrderedJson::array();
    for (const auto& a : r.arenas) {
        s["sequences"].push_back(a.sequences);
        s["tokens"].push_back(a.tokens);
        s["context"].push_back(a.context);
        s["arena"].push_back(a.arena);
        s["lower_bound"].push_back(a.lowerBound);
    }
    activation["series"] = std::move(s);
    root["activation"] = std::move(activation);
    return root.dump(-1, ' ', false, OrderedJson::error_handler_t::replace) + "\n";
}

} // namespace core
