// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Shape arithmetic as the ONNX operator definitions state it, shared by import (shape rules and
// folding, where a dimension may be unknown: -1) and the CPU executor's run-time shapes (every
// dimension known).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace core {

using Dims = std::vector<std::int64_t>; // -1: unknown dimension

// Element count, or -1 when a dim is unknown or negative or the product exceeds int64.
std::int64_t elementCount(const Dims& dims);

// Numpy-style broadcast of shapes; -1 dims propagate as unknown. nullopt when incompatible.
std::optional<Dims> broadcastDims(const std::vector<Dims>& shapes);

// One axis of a Slice after ONNX's clamping rules.
struct SliceAxis {
    std::int64_t start = 0;
    std::int64_t step = 1;
    std::int64_t count = 0;
};
// Start/step/count for each axis of `dims` (untouched axes: whole range). Needs the dims of the
// sliced axes; nullopt on bad axes, zero steps or an unknown sliced dim.
std::optional<std::vector<SliceAxis>> sliceAxes(const Dims& dims, const std::vector<std::int64_t>& starts,
                                                const std::vector<std::int64_t>& ends,
                                                const std::vector<std::int64_t>& axes,
                                                const std::vector<std::int64_t>& steps);

// Output dims of Reshape with ONNX's 0 (copy) and -1 (infer) rules. Unknown input dims give -1
// where they matter. nullopt when the request is inconsistent.
std::optional<Dims> reshapeDims(const Dims& input, const std::vector<std::int64_t>& shape, bool allowZero);

// One spatial axis of a sliding window (Conv, ConvTranspose, pools): the output length as the ONNX
// definitions give it for an input of `size`, from the kernel, stride, dilation, the two pads,
// auto_pad ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"), ceil_mode (pools) and, for a
// transposed convolution, output_padding. -1 when `size` or `kernel` is unknown (negative).
struct WindowAxis {
    std::int64_t kernel = -1, stride = 1, dilation = 1, padBegin = 0, padEnd = 0, outputPadding = 0;
};
std::int64_t windowOutputLength(std::int64_t size, const WindowAxis& axis, const std::string& autoPad, bool ceilMode, bool transposed);

// Transpose's order of input axes for an input of `rank`: `perm` when the op states one (null or
// empty: none), else the axes reversed. nullopt when `perm` is not an order of the axes (another length,
// a repeated or out-of-range axis), which ONNX leaves undefined.
std::optional<std::vector<std::int64_t>> transposeOrder(const std::vector<std::int64_t>* perm, std::size_t rank);

// Normalises a possibly negative axis against `rank`; nullopt when out of range.
std::optional<std::int64_t> normalizeAxis(std::int64_t axis, std::int64_t rank);

} // namespace core
