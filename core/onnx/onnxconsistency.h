// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "graph/graph.h"

#include <functional>
#include <optional>
#include <string>

namespace core {

// The first op whose input shapes contradict its ONNX definition, e.g. a Concat whose inputs
// differ off the join axis, an Add whose operands do not broadcast, a MatMul whose inner
// dimensions differ or a Conv whose weight expects other channels. Such a model cannot run:
// the usual cause is a size the model fixes as a constant (traced at one input size) that does
// not follow --input-shape. Checks only what is known for certain: default-domain ops whose
// inputs have known ranks and are not estimated; unknown dimensions (-1) match anything.
struct ShapeConflict {
    OpIndex op = -1;
    std::string message; // "op 'X' (Concat): inputs 'a' [1,4,2] and 'b' [1,4,3] differ in dimension 2 ..."
};

// The contents of a small integer tensor when known (a Reshape's target shape), else null.
using KnownValues = std::function<const std::vector<std::int64_t>*(TensorIndex)>;
// The contents of a small floating-point tensor when known (a float Range's delta), else null.
using KnownReals = std::function<const std::vector<double>*(TensorIndex)>;

std::optional<ShapeConflict> firstShapeConflict(const Graph& graph, const KnownValues& values = {});

// The first op that breaks what the ONNX spec requires of its attributes and constant inputs
// (onnxopchecks.cpp): an axis outside [-r, r-1], a kernel, stride or dilation below 1, a group that
// is not a positive divisor of the channels, a constant Gather index out of range, pads that make a
// dimension negative, a Range with delta 0, Split sizes that do not sum to the dimension, a TopK k
// larger than its axis. The message names the op (name and type) and the attribute or input.
std::optional<ShapeConflict> firstInvalidOp(const Graph& graph, const KnownValues& values = {}, const KnownReals& reals = {});

// For a graph whose shapes a file declares (a JSON graph): the first default-domain op whose
// declared output shape MemPlan's ONNX shape rules contradict, computed from its declared inputs
// (onnxgraphrules.cpp). Ops without a rule, unknown dimensions, estimates and sequences are let be.
std::optional<ShapeConflict> firstRuleMismatch(const Graph& graph);

} // namespace core
