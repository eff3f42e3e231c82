// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "onnx/onnxshapemath.h"

#include <algorithm>

namespace core::onnxdetail {

std::optional<std::vector<std::int64_t>> constInts(const ValueFacts* facts)
{
    if (!facts || !facts->value)
        return std::nullopt;
    std::vector<std::int64_t> out;
    for (std::int64_t i = 0; i < facts->value->count(); ++i)
        out.push_back(facts->value->integer(i));
    return out;
}

std::optional<std::vector<double>> constReals(const ValueFacts* facts)
{
    if (!facts || !facts->value)
        return std::nullopt;
    std::vector<double> out;
    for (std::int64_t i = 0; i < facts->value->count(); ++i)
        out.push_back(facts->value->real(i));
    return out;
}

} // namespace core::onnxdetail
