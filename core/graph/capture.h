// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The vocabulary of captured training steps: a framework's real forward, backward and optimizer
// step written as a JSON graph (docs/FILE_FORMATS.md#json-graph). Tensors carry a category (their
// role in the step) and ops a phase; both are strings on Tensor and Op, empty when not captured.

#include "graph/graph.h"

#include <optional>
#include <string_view>

namespace core {

// The domain of captured ops; their type is the ATen op name ("convolution", "addmm", ...).
inline constexpr const char* kAtenDomain = "aten";

enum class TensorCategory { Input, Parameter, Buffer, Gradient, OptimizerState, Saved, Temporary, Output };
inline constexpr int kCategoryCount = 8;
// "input", "parameter", "buffer", "gradient", "optimizer_state", "saved", "temporary", "output".
std::string_view categoryName(TensorCategory category);
std::optional<TensorCategory> parseCategory(std::string_view text); // exact spelling only
// The category `t` names; nullopt when it has none (or one that is not a category).
std::optional<TensorCategory> tensorCategory(const Tensor& t);
// True when any tensor of `graph` has a category: the graph was captured.
bool hasCategories(const Graph& graph);

enum class Phase { Forward, Backward, Optimizer };
inline constexpr int kPhaseCount = 3;
std::string_view phaseName(Phase phase); // "forward", "backward", "optimizer"
std::optional<Phase> parsePhase(std::string_view text); // exact spelling only

// An in-place update's version token: a zero-byte tensor with a category ("w1@1", written by an op
// that updates w1 in place so later ops are ordered after it). It holds no memory of its own.
bool isVersionToken(const Tensor& t);

// The region outside the arena that holds `t`, for weight and persistent tensors: by category
// "parameters" (parameter), "buffers" (buffer), "gradients" (gradient), "optimizer state"
// (optimizer_state), else by kind "weights" or "persistent". "" for every other kind (arena tensors).
std::string_view regionOf(const Tensor& t);
// Every region name regionOf gives, in the order makeProblem lists regions.
inline constexpr std::string_view kRegionNames[] = { "weights", "persistent", "parameters", "buffers", "gradients", "optimizer state" };

} // namespace core
