// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Outputs of one executor compared with another's within a relative tolerance: a GPU run (cuBLAS,
// fused multiply-add, other summation orders) against the CPU executor's float32 kernels. The
// bit-for-bit check (compareOutputs in executor.h) stays the one for runs on the same device.
// Used by `memplan run --device cuda --tolerance` and by the Studio after a cuda run.

#include "exec/tensordata.h"
#include "graph/graph.h"

#include <string>
#include <vector>

namespace core {

// `memplan run --tolerance`'s default, and the Studio's.
inline constexpr double kDefaultGpuTolerance = 1e-3;

struct ToleranceCheck {
    // The largest |actual - expected| / (|expected| + max |expected| of that output) over every float
    // element that differs; infinity where a NaN meets a number, or a non-float output, a type or a
    // size differs. 0 when every element is identical.
    double maxRelativeError = 0;
    // "" when every element is within the tolerance; otherwise the first output and element that is not.
    std::string firstOff;
    // When not within and the graph quantizes computed floats (quantizesComputedFloats): why another
    // executor can land that far off without a wrong kernel. "" otherwise.
    std::string cause;
    bool within() const { return firstOff.empty(); }
};

// `actual` (e.g. a GPU run) against `expected` (the CPU executor's), output by output in graph-output
// order: every float element (float32, float64, float16, bfloat16) within tolerance·(|expected| +
// max |expected| of that output), NaN where NaN; other dtypes identical. The scale term keeps elements near zero, where a relative
// error means nothing, from failing on rounding. Scans every element for the maximum.
ToleranceCheck checkTolerance(const Graph& graph, const std::vector<HostTensor>& expected, const std::vector<HostTensor>& actual,
    double tolerance);

// Whether an op rounds floats some op computed to integers (QuantizeLinear or DynamicQuantizeLinear
// fed by an op, also inside a fused op): a sum taken in another order can then land on the other
// side of a rounding step, a whole quantization step apart, and later layers carry it on.
bool quantizesComputedFloats(const Graph& graph);

// checkTolerance(...).firstOff: "" when within.
std::string compareWithin(const Graph& graph, const std::vector<HostTensor>& expected, const std::vector<HostTensor>& actual,
    double tolerance);

} // namespace core
