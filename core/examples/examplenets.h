// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "graph/graph.h"

namespace core {

// The graph examples behind buildExample(), private to core/examples. Every tensor has dtype, shape
// and size; ops carry ONNX (opset 17) types and attributes. Each Reshape's shape input is an int64
// weight whose values are exactly the Reshape output's shape (no 0 or -1 entries).
Graph buildCnnExample();         // ResNet-18, batch-norm folded, 1x3x224x224
Graph buildUnetExample();        // 4-level U-Net, 1x3x256x256
Graph buildTransformerExample(); // 4 encoder layers, seq 128, hidden 512, 8 heads

} // namespace core
