// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to core/onnx: evaluates the shape arithmetic exporters leave in a graph
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape and friends) on small constant tensors.

#include "onnx/onnxvalue.h"

#include <optional>
#include <string>
#include <vector>

namespace core::onnxdetail {

// True for op types foldNode() can evaluate (default ONNX domain).
bool isFoldable(const std::string& opType);

// Evaluates `node` when every input it reads has a value (Shape and Size only need a fully known
// shape). `inputs` is aligned with node.input(), nullptr for absent optional inputs. Returns one
// value per node output, or nullopt when an input is unknown, the op is not supported, the data is
// inconsistent, or a result would exceed kFoldLimit elements. Never throws.
std::optional<std::vector<ConstValue>> foldNode(const onnx::NodeProto& node, const std::vector<const ValueFacts*>& inputs);

} // namespace core::onnxdetail
