// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "exec/tensordata.h"
#include "io/workload.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

// Command-line words after the command name: positionals, `--name value` / `--name=value` options
// (repeatable), and `--flag` switches. Parsing checks every option against the command's list.
struct CliArgs {
    std::vector<std::string> positional;
    std::multimap<std::string, std::string> options;
    std::set<std::string> flags;

    std::optional<std::string> value(const std::string& name) const;
    std::vector<std::string> values(const std::string& name) const;
    bool has(const std::string& name) const { return flags.count(name) > 0 || options.count(name) > 0; }
};

// `valued` lists options that take a value, `switches` those that do not (both without "--").
core::Expected<CliArgs> parseCliArgs(const std::vector<std::string>& words, const std::set<std::string>& valued,
    const std::set<std::string>& switches);

// --alignment, --dim NAME=V, --input-shape NAME=D0,D1,... and --workspaces into LoadOptions, with
// clear errors (usage errors naming the option); --input is only checked for its form here
// (inputFilesFrom lists the files). --threads N and --kernels onednn|own, when given, set the CPU
// executor's process-wide settings (core::setCpuThreads, core::setCpuKernels), which size the op
// workspaces the load plans.
core::Expected<core::LoadOptions> loadOptionsFrom(const CliArgs& args);

// An ONNX model file (not a .json graph, a .csv problem or an example:NAME).
bool isOnnxFile(const std::string& spec);

// The graph inputs `--input NAME=FILE.pb` gives, as LoadOptions::inputFiles (core::loadWorkload
// reads them: an ONNX model's through core::readGivenInputs, which adds what they fix to the
// bindings). Errors name the option.
core::Expected<std::vector<std::pair<std::string, std::filesystem::path>>> inputFilesFrom(const CliArgs& args);

// Whole-string integer parse; no sign, spaces or trailing text.
std::optional<long long> parseInteger(const std::string& text);

// --checkpoint for memplan and memplan-studio: "sqrt" is 0 (the default rule), N (1 to 1000000) is N
// forward ops per segment; nullopt otherwise, to be refused with kCheckpointExpected.
std::optional<int> parseCheckpointEvery(const std::string& text);
inline constexpr const char* kCheckpointExpected = "expected sqrt or a whole number of forward ops (>= 1)";

// Duration for --time-limit: "10s", "500ms", "2m" or a plain number of seconds ("2.5"); > 0.
std::optional<double> parseSeconds(const std::string& text);
// Size for --capacity: whole bytes, optionally with B, KiB, MiB, GiB or TiB (also K, M, G, T; binary),
// a unit taking a decimal fraction as the reports print sizes ("1.50 GiB", rounded to whole bytes); > 0.
std::optional<long long> parseByteSize(const std::string& text);
