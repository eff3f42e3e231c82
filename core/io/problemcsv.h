// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/problem.h"

#include <filesystem>
#include <optional>
#include <string>

namespace core {

// Allocation-problem CSV as used by public allocation benchmarks: header `id,lower,upper,size`
// (columns in any order, optional `offset`), one buffer per row live over [lower, upper).
// Errors name the file and line: missing column, non-integer, negative, upper <= lower, duplicate id.
struct CsvProblem {
    PlanProblem problem;
    std::optional<std::vector<Bytes>> offsets; // when the file has an offset column
};
Expected<CsvProblem> parseProblemCsv(const std::string& text, const std::string& source);
Expected<CsvProblem> importProblemCsv(const std::filesystem::path& file);

// Writes `id,lower,upper,size` and, with a plan, `offset`. Buffer names become ids.
std::string exportProblemCsv(const PlanProblem& problem, const Plan* plan = nullptr);

} // namespace core
