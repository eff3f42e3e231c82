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

// The enum value whose name is `text` (names in enum order), or nullopt.
template <typename Enum, std::size_t N>
std::optional<Enum> parseName(const std::array<std::string_view, N>& names, std::string_view text)
{
    const auto it = std::find(names.begin(), names.end(), text);
    return it == names.end() ? std::nullopt : std::optional<Enum>(static_cast<Enum>(it - names.begin()));
}
} // namespace

std::string_view categoryName(TensorCategory category) { return kCategoryNames[static_cast<std::size_t>(category)]; }

std::optional<TensorCategory> parseCategory(std::string_view text) { return parseName<TensorCategory>(kCategoryNames, text); }

std::optional<TensorCategory> tensorCategory(const Tensor& t) { return t.category.empty() ? std::nullopt : parseCategory(t.category); }

bool hasCategories(const Graph& graph)
{
    return std::any_of(graph.tensors.begin(), graph.tensors.end(), [](const Tensor& t) { return !t.category.empty(); });
}

std::string_view phaseName(Phase phase) { return kPhaseNames[static_cast<std::size_t>(phase)]; }

std::optional<Phase> parsePhase(std::string_view text) { return parseName<Phase>(kPhaseNames, text); }

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
