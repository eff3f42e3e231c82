// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// `memplan scenario llm`: the LLM decode scenario from the command line.
#include "scenariocli.h"

#include "cliargs.h"

#include "planners/planner.h"
#include "scenarios/llmreport.h"
#include "scenarios/llmscenario.h"

#include <climits>
#include <fstream>
#include <iostream>

namespace {

constexpr int kOk = 0, kError = 1, kUsage = 2;

const char* const kScenarioHelp = R"(usage: memplan scenario NAME [options] [--help]

scenarios:
  llm              LLM decode: KV cache as contiguous, paged and two-level pools; activation arena per step
)";

const char* const kLlmHelp = R"(usage: memplan scenario llm [--layers N] [--hidden N] [--heads N] [--kv-heads N] [--ffn N]
                           [--dtype-bytes 1|2|4] [--batch N] [--prompt-len L] [--output-len L]
                           [--max-len N] [--arrival-interval N] [--seed N] [--capacity SIZE]
                           [--block-tokens N] [--chunk-tokens N] [--planner NAME] [--time-limit T]
                           [--json FILE]

A decoder-only transformer serves a batch of sequences: each prefills its prompt in its first step,
then adds one token per decode step to its KV cache and releases the cache after its last output
token. Three KV-cache policies run over the same steps against --capacity:
  contiguous   one region of --max-len tokens per sequence, taken when it arrives
  paged        blocks of --block-tokens tokens from a free-block list, a block table per sequence
  two-level    a sequence's first --chunk-tokens tokens in small blocks, the rest in large chunks
and the table compares peak memory in use and reserved, waste, allocations, the largest batch that
fits the capacity (same length distribution) and the first refused request. Each step's activations
are planned as a scoped arena (reset every step) with --planner; equal step shapes share one plan.

model:
  --layers N            decoder layers (default 32)
  --hidden N            hidden size (default 4096; a multiple of --heads)
  --heads N             attention heads (default 32); head dim = hidden / heads
  --kv-heads N          KV heads (default = heads; fewer: grouped-query attention, must divide heads)
  --ffn N               MLP width (default 4 x hidden)
  --dtype-bytes N       bytes per value of the weights, the cache and the activations: 1, 2 or 4 (default 2)
sequences:
  --batch N             sequences (default 16)
  --prompt-len L        prompt tokens: MIN..MAX drawn per sequence with --seed, N for all, or a list
                        A,B,C repeated over the batch (default 128..1024)
  --output-len L        output tokens, the same forms (default 64..512)
  --max-len N           longest sequence, prompt + output (default 4096)
  --arrival-interval N  steps between arrivals of consecutive sequences (default 0: all at step 0)
  --seed N              seed for drawn lengths (default 1)
pools:
  --capacity SIZE       memory for the KV cache (default 80GiB; bytes or KiB/MiB/GiB); weights and
                        activations are not counted in it
  --block-tokens N      tokens per paged block and two-level small block (default 16)
  --chunk-tokens N      tokens per two-level chunk, a multiple of --block-tokens (default 16 blocks)
output:
  --planner NAME        planner for the activation arena (default best-of-greedy)
  --time-limit T        exact planner: search time per distinct step shape (10s, 500ms; default 5s)
  --json FILE           write everything, with the per-step series, as JSON (exact bytes)

KV bytes per token = 2 x layers x kv-heads x head-dim x dtype-bytes. External fragmentation counts
free bytes that lie in no whole free unit of the policy's largest request (region, block, chunk).
)";

int fail(const std::string& message, int code)
{
    std::cerr << "memplan: " << message << "\n";
    return code;
}

// The last value given for `name`: a later --batch overrides an earlier one, as in most tools.
std::optional<std::string> lastValue(const CliArgs& args, const std::string& name)
{
    const auto values = args.values(name);
    if (values.empty())
        return std::nullopt;
    return values.back();
}

// A whole number option in [low, high]; `error` set on a bad value.
template <class T>
void readNumber(const CliArgs& args, const std::string& name, T& target, long long low, long long high, std::string& error)
{
    const auto text = lastValue(args, name);
    if (!text || !error.empty())
        return;
    const auto value = parseInteger(*text);
    if (!value || *value < low || *value > high) {
        error = "--" + name + " '" + *text + "': expected a whole number from " + std::to_string(low) + " to "
            + std::to_string(high);
        return;
    }
    target = static_cast<T>(*value);
}

// MIN..MAX, N, or A,B,C.
void readLengths(const CliArgs& args, const std::string& name, std::vector<std::int64_t>& list, core::LengthRange& range,
    std::string& error)
{
    const auto text = lastValue(args, name);
    if (!text || !error.empty())
        return;
    const auto bad = [&] {
        error = "--" + name + " '" + *text + "': expected MIN..MAX (e.g. 128..1024), one length, or a list such as 100,200,300";
    };
    if (const auto dots = text->find(".."); dots != std::string::npos) {
        const auto low = parseInteger(text->substr(0, dots)), high = parseInteger(text->substr(dots + 2));
        if (!low || !high)
            return bad();
        range = { *low, *high };
        list.clear();
        return;
    }
    std::vector<std::int64_t> values;
    for (std::size_t start = 0; start <= text->size();) {
        const auto comma = std::min(text->find(',', start), text->size());
        const auto value = parseInteger(text->substr(start, comma - start));
        if (!value)
            return bad();
        values.push_back(*value);
        start = comma + 1;
    }
    if (values.size() == 1) {
        range = { values[0], values[0] };
        list.clear();
    } else {
        list = std::move(values);
    }
}

int runLlm(const std::vector<std::string>& words)
{
    auto args = parseCliArgs(words,
        { "layers", "hidden", "heads", "kv-heads", "ffn", "dtype-bytes", "batch", "prompt-len", "output-len", "max-len",
            "arrival-interval", "seed", "capacity", "block-tokens", "chunk-tokens", "planner", "time-limit", "json" },
        { "help" });
    if (!args)
        return fail("scenario llm: " + args.error().message + " (see memplan scenario llm --help)", kUsage);
    if (args->has("help")) {
        std::cout << kLlmHelp;
        return kOk;
    }
    if (!args->positional.empty())
        return fail("scenario llm: unexpected argument '" + args->positional[0] + "' (see memplan scenario llm --help)", kUsage);

    core::LlmConfig config;
    std::string error;
    using L = core::LlmLimits;
    readNumber(*args, "layers", config.layers, 1, L::layers, error);
    readNumber(*args, "hidden", config.hidden, 1, L::hidden, error);
    readNumber(*args, "heads", config.heads, 1, L::heads, error);
    readNumber(*args, "kv-heads", config.kvHeads, 1, L::heads, error);
    readNumber(*args, "ffn", config.ffn, 1, L::ffn, error);
    readNumber(*args, "dtype-bytes", config.dtypeBytes, 1, 4, error);
    if (error.empty() && config.dtypeBytes == 3)
        error = "--dtype-bytes '3': expected 1, 2 or 4";
    readNumber(*args, "batch", config.batch, 1, L::batch, error);
    readNumber(*args, "max-len", config.maxLength, 1, L::maxLength, error);
    readNumber(*args, "arrival-interval", config.arrivalInterval, 0, L::arrivalInterval, error);
    readNumber(*args, "seed", config.seed, 0, LLONG_MAX, error);
    readNumber(*args, "block-tokens", config.blockTokens, 1, L::blockTokens, error);
    readNumber(*args, "chunk-tokens", config.chunkTokens, 1, LLONG_MAX, error);
    readLengths(*args, "prompt-len", config.promptLengths, config.promptRange, error);
    readLengths(*args, "output-len", config.outputLengths, config.outputRange, error);
    if (const auto text = lastValue(*args, "capacity"); text && error.empty()) {
        const auto bytes = parseByteSize(*text);
        if (!bytes)
            error = "--capacity '" + *text + "': expected a size such as 1073741824, 512MiB or 80GiB";
        else
            config.capacity = *bytes;
    }
    if (!error.empty())
        return fail("scenario llm: " + error, kUsage);
    if (const auto status = core::validateLlmConfig(config); !status)
        return fail("scenario " + status.error().message, kUsage);

    core::LlmRunOptions options;
    options.planner = lastValue(*args, "planner").value_or(options.planner);
    if (!core::plannerByName(options.planner)) {
        std::string names;
        for (const auto& name : core::plannerNames())
            names += (names.empty() ? "" : ", ") + name;
        return fail("scenario llm: unknown planner '" + options.planner + "'; choose one of " + names, kUsage);
    }
    if (const auto text = lastValue(*args, "time-limit")) {
        const auto seconds = parseSeconds(*text);
        if (!seconds)
            return fail("scenario llm: --time-limit '" + *text + "': expected a duration such as 10s, 500ms, 2m or 2.5 (seconds)",
                kUsage);
        options.planTimeLimitSeconds = *seconds;
    }
    const auto result = core::runLlmScenario(config, options);
    if (!result)
        return fail("scenario " + result.error().message, kError);
    std::cout << core::formatLlmReport(*result);
    if (const auto path = lastValue(*args, "json")) {
        std::ofstream out(*path, std::ios::binary);
        if (out)
            out << core::exportLlmJson(*result);
        if (!out)
            return fail(*path + ": cannot write the file", kError);
    }
    return kOk;
}

} // namespace

int scenarioCommand(const std::vector<std::string>& words)
{
    if (words.empty() || words[0] == "--help" || words[0] == "-h") {
        std::cout << kScenarioHelp;
        return words.empty() ? kUsage : kOk;
    }
    const std::vector<std::string> rest(words.begin() + 1, words.end());
    if (words[0] == "llm")
        return runLlm(rest);
    return fail("scenario: unknown scenario '" + words[0] + "' (see memplan scenario --help)", kUsage);
}
