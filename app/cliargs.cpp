// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "cliargs.h"

#include "exec/executor.h"

#include "util/alignment.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

using core::ErrorCode;
using core::makeError;

std::optional<std::string> CliArgs::value(const std::string& name) const
{
    const auto it = options.find(name);
    if (it == options.end())
        return std::nullopt;
    return it->second;
}

std::vector<std::string> CliArgs::values(const std::string& name) const
{
    std::vector<std::string> result;
    const auto [begin, end] = options.equal_range(name);
    for (auto it = begin; it != end; ++it)
        result.push_back(it->second);
    return result;
}

core::Expected<CliArgs> parseCliArgs(const std::vector<std::string>& words, const std::set<std::string>& valued,
    const std::set<std::string>& switches)
{
    CliArgs args;
    for (std::size_t i = 0; i < words.size(); ++i) {
        const auto& word = words[i];
        if (word.size() < 3 || word.rfind("--", 0) != 0) {
            if (word.size() > 1 && word[0] == '-' && word != "-")
                return makeError(ErrorCode::InvalidArgument, "unknown option '" + word + "'");
            args.positional.push_back(word);
            continue;
        }
        std::string name = word.substr(2), value;
        const auto eq = name.find('=');
        const bool inlineValue = eq != std::string::npos;
        if (inlineValue) {
            value = name.substr(eq + 1);
            name.resize(eq);
        }
        if (switches.count(name)) {
            if (inlineValue)
                return makeError(ErrorCode::InvalidArgument, "option '--" + name + "' takes no value");
            args.flags.insert(name);
        } else if (valued.count(name)) {
            if (!inlineValue) {
                if (i + 1 >= words.size())
                    return makeError(ErrorCode::InvalidArgument, "option '--" + name + "' needs a value");
                value = words[++i];
            }
            args.options.emplace(name, value);
        } else {
            return makeError(ErrorCode::InvalidArgument, "unknown option '--" + name + "'");
        }
    }
    return args;
}

std::optional<long long> parseInteger(const std::string& text)
{
    long long value = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end)
        return std::nullopt;
    return value;
}

namespace {

// "NAME=FILE.pb" of --input as its two parts; nullopt when malformed.
std::optional<std::pair<std::string, std::filesystem::path>> inputFile(const std::string& item)
{
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
        return std::nullopt;
    return std::pair<std::string, std::filesystem::path> { item.substr(0, eq), item.substr(eq + 1) };
}

} // namespace

core::Expected<core::LoadOptions> loadOptionsFrom(const CliArgs& args)
{
    for (const auto& item : args.values("input"))
        if (!inputFile(item))
            return makeError(ErrorCode::InvalidArgument, "--input '" + item + "': expected NAME=FILE.pb");
    core::LoadOptions options;
    options.workspaces = args.has("workspaces");
    // The CPU executor's kernels and threads decide the op workspaces' sizes: set before loading.
    if (const auto text = args.value("threads")) {
        const auto n = parseInteger(*text);
        if (!n || *n < 1 || *n > 1024)
            return makeError(ErrorCode::InvalidArgument, "--threads '" + *text + "': expected a whole number from 1 to 1024");
        core::setCpuThreads(int(*n));
    }
    if (const auto text = args.value("kernels")) {
        if (*text != "onednn" && *text != "own")
            return makeError(ErrorCode::InvalidArgument, "--kernels '" + *text + "': choose onednn or own");
        core::setCpuKernels(*text == "own" ? core::CpuKernels::Own : core::CpuKernels::OneDnn);
    }
    if (const auto text = args.value("layout")) {
        if (*text != "nhwc" && *text != "nchw")
            return makeError(ErrorCode::InvalidArgument, "--layout '" + *text + "': choose nhwc or nchw");
        core::setCpuChannelsLast(*text == "nhwc");
    }
    if (const auto text = args.value("alignment")) {
        const auto value = parseInteger(*text);
        if (!value || !core::checkAlignment(*value))
            return makeError(ErrorCode::InvalidArgument, "--alignment '" + *text + "': expected a power of two from 1 to 2^30 bytes");
        options.alignment = *value;
    }
    for (const auto& binding : args.values("dim")) {
        const auto eq = binding.find('=');
        const auto value = eq == std::string::npos ? std::nullopt : parseInteger(binding.substr(eq + 1));
        if (eq == 0 || !value || *value < 1)
            return makeError(ErrorCode::InvalidArgument, "--dim '" + binding + "': expected NAME=VALUE with VALUE >= 1, e.g. --dim batch=1");
        options.bindings.dims[binding.substr(0, eq)] = *value;
    }
    for (const auto& binding : args.values("input-shape")) {
        const auto eq = binding.find('=');
        if (eq == std::string::npos || eq == 0)
            return makeError(ErrorCode::InvalidArgument,
                "--input-shape '" + binding + "': expected INPUT=D0,D1,..., e.g. --input-shape x=1,3,224,224");
        std::vector<std::int64_t> shape;
        std::string rest = binding.substr(eq + 1);
        for (std::size_t start = 0; start <= rest.size();) {
            const auto comma = std::min(rest.find(',', start), rest.size());
            const auto dim = parseInteger(rest.substr(start, comma - start));
            if (!dim || *dim < 0)
                return makeError(ErrorCode::InvalidArgument,
                    "--input-shape '" + binding + "': '" + rest.substr(start, comma - start) + "' is not a dimension (whole number >= 0)");
            shape.push_back(*dim);
            start = comma + 1;
        }
        options.bindings.inputShapes[binding.substr(0, eq)] = shape;
    }
    return options;
}

bool isOnnxFile(const std::string& spec)
{
    if (spec.rfind("example:", 0) == 0)
        return false;
    const auto ext = std::filesystem::path(spec).extension().string();
    return ext != ".json" && ext != ".csv";
}

core::Expected<std::vector<std::pair<std::string, std::filesystem::path>>> inputFilesFrom(const CliArgs& args)
{
    std::vector<std::pair<std::string, std::filesystem::path>> files;
    for (const auto& item : args.values("input")) {
        auto file = inputFile(item);
        if (!file)
            return makeError(ErrorCode::InvalidArgument, "--input '" + item + "': expected NAME=FILE.pb");
        files.push_back(std::move(*file));
    }
    return files;
}

std::optional<double> parseSeconds(const std::string& text)
{
    struct Unit {
        const char* suffix;
        double seconds;
    };
    // Longest suffix first so "ms" is not read as "s".
    for (const Unit unit : { Unit { "ms", 1e-3 }, Unit { "min", 60 }, Unit { "s", 1 }, Unit { "m", 60 }, Unit { "", 1 } }) {
        const std::string suffix = unit.suffix;
        if (text.size() <= suffix.size() || text.compare(text.size() - suffix.size(), suffix.size(), suffix) != 0)
            continue;
        const std::string number = text.substr(0, text.size() - suffix.size());
        double value = 0;
        const auto* end = number.data() + number.size();
        const auto [ptr, ec] = std::from_chars(number.data(), end, value);
        if (ec != std::errc() || ptr != end || !std::isfinite(value) || value <= 0)
            return std::nullopt;
        return value * unit.seconds;
    }
    return std::nullopt;
}

std::optional<int> parseCheckpointEvery(const std::string& text)
{
    if (text == "sqrt")
        return 0;
    const auto n = parseInteger(text);
    if (!n || *n < 1 || *n > 1000000)
        return std::nullopt;
    return static_cast<int>(*n);
}

std::optional<long long> parseByteSize(const std::string& text)
{
    struct Unit {
        const char* suffix;
        long long bytes;
    };
    for (const Unit unit : { Unit { "KiB", 1LL << 10 }, Unit { "MiB", 1LL << 20 }, Unit { "GiB", 1LL << 30 },
             Unit { "TiB", 1LL << 40 }, Unit { "K", 1LL << 10 }, Unit { "M", 1LL << 20 }, Unit { "G", 1LL << 30 },
             Unit { "T", 1LL << 40 }, Unit { "B", 1 }, Unit { "", 1 } }) {
        const std::string suffix = unit.suffix;
        if (text.size() <= suffix.size() || text.compare(text.size() - suffix.size(), suffix.size(), suffix) != 0)
            continue;
        std::string number = text.substr(0, text.size() - suffix.size());
        while (!number.empty() && number.back() == ' ')
            number.pop_back();
        if (const auto dot = number.find('.'); dot != std::string::npos) {
            // "1.50": digits on both sides of one dot, with a unit larger than a byte.
            const std::string whole = number.substr(0, dot), fraction = number.substr(dot + 1);
            const auto digits = [](const std::string& s) {
                return !s.empty() && s.size() <= 18 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
            };
            if (unit.bytes == 1 || !digits(whole) || !digits(fraction))
                return std::nullopt;
            const long double value = std::stold(whole + "." + fraction) * static_cast<long double>(unit.bytes);
            if (!(value >= 0.5L) || value > static_cast<long double>(1LL << 62))
                return std::nullopt;
            return std::llround(value);
        }
        const auto value = parseInteger(number);
        if (!value || *value <= 0 || *value > (1LL << 62) / unit.bytes)
            return std::nullopt;
        return *value * unit.bytes;
    }
    return std::nullopt;
}
