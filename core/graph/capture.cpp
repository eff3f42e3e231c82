// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "graph/capture.h"

#include <algorithm>
#include <array>

namespace core {

namespace {
constexpr std::array<std::string_view, kCategoryCount> kCategoryNames { "input", "parameter", "buffer", "gradient", "optimizer_state",
    "saved", "temporary", "output" };
constexpr std::array<std::string_view, kPhaseCount> kPhaseNames { "forward", "backward", "optimizer" };
} // namespace

std::string_view categoryName(TensorCategory category) { return kCategoryNames[static_cast<std::size_t>(category)]; }

std::optional<TensorCategory> parseCategory(std::string_view text)
{
    for (std::size_t i = 0; i < kCategoryNames.size(); ++i)
        if (text == kCategoryNames[i])
            return static_cast<TensorCategory>(i);
    return std::nullopt;
}

std::optional<TensorCategory> tensorCategory(const Tensor& t) { return t.category.empty() ? std::nullopt : parseCategory(t.category); }

bool hasCategories(const Graph& graph)
{
    return std::any_of(graph.tensors.begin(), graph.tensors.end(), [](const Tensor& t) { return !t.category.empty(); });
}

std::string_view phaseName(Phase phase) { return kPhaseNames[static_cast<std::size_t>(phase)]; }

std::optional<Phase> parsePhase(std::string_view text)
{
    for (std::size_t i = 0; i < kPhaseNames.size(); ++i)
        if (text == kPhaseNames[i])
            return static_cast<Phase>(i);
    return std::nullopt;
}

bool isVersionToken(const Tensor& t) { return t.size == 0 && !t.category.empty(); }

std::string_view regionOf(const Tensor& t)
{
    if (t.kind != TensorKind::Weight && t.kind != TensorKind::Persistent)
        return {};
    switch (tensorCategory(t).value_or(TensorCategory::Temporary)) {
    case TensorCategory::Parameter:
        return "parameters";
    case TensorCategory::Buffer:
        return "buffers";
    case TensorCategory::Gradient:
        return "gradients";
    case TensorCategory::OptimizerState:
        return "optimizer state";
    default:
        return t.kind == TensorKind::Weight ? "weights" : "persistent";
    }
}

} // namespace core
