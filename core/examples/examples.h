// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "graph/graph.h"
#include "planners/problem.h"

#include <optional>
#include <string>
#include <vector>

namespace core {

struct ExampleInfo {
    std::string name;
    std::string description; // one line for `memplan examples`
};

// Built-in examples: hotel, five-tensors (allocation problems with alignment 1),
// cnn, unet, transformer (graphs with realistic shapes).
const std::vector<ExampleInfo>& exampleList();

// Exactly one of graph / problem is set.
struct Example {
    std::optional<Graph> graph;
    std::optional<PlanProblem> problem;
};
Expected<Example> buildExample(const std::string& name); // unknown name: error listing the known ones

} // namespace core
