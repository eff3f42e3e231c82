// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/tolerance.h"

#include "util/halffloat.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace core {

namespace {

// The elements of a float32, float64, float16 or bfloat16 tensor, widened exactly to double.
std::vector<double> floatValues(const HostTensor& t)
{
    std::vector<double> values;
    const auto* p = t.data.data();
    if (t.dtype == DType::Float64) {
        values.resize(t.data.size() / sizeof(double));
        std::memcpy(values.data(), p, values.size() * sizeof(double));
    } else if (t.dtype == DType::Float32) {
        for (std::size_t i = 0; i < t.data.size() / sizeof(float); ++i) {
            float f;
            std::memcpy(&f, p + i * sizeof f, sizeof f);
            values.push_back(f);
        }
    } else {
        for (std::size_t i = 0; i < t.data.size() / sizeof(std::uint16_t); ++i) {
            std::uint16_t bits;
            std::memcpy(&bits, p + i * sizeof bits, sizeof bits);
            values.push_back(t.dtype == DType::Float16 ? halfToFloat(bits) : bfloat16ToFloat(bits));
        }
    }
    return values;
}

} // namespace

ToleranceCheck checkTolerance(const Graph& graph, const std::vector<HostTensor>& expected, const std::vector<HostTensor>& actual,
    double tolerance)
{
    ToleranceCheck check;
    constexpr double kInfinite = std::numeric_limits<double>::infinity();
    auto off = [&check](std::string message) {
        if (check.firstOff.empty())
            check.firstOff = std::move(message);
    };
    if (expected.size() != actual.size()) {
        check.maxRelativeError = kInfinite;
        off("different number of outputs");
        return check;
    }
    for (std::size_t k = 0; k < expected.size(); ++k) {
        const auto &e = expected[k], &a = actual[k];
        const std::string name = k < graph.outputs.size() ? graph.tensors[graph.outputs[k]].name : std::to_string(k);
        if (e.dtype != a.dtype || e.data.size() != a.data.size()) {
            check.maxRelativeError = kInfinite;
            off("output '" + name + "': different type or size");
            continue;
        }
        if (e.items != a.items) {
            check.maxRelativeError = kInfinite;
            off("output '" + name + "': the sequences' element shapes differ");
            continue;
        }
        if (e.dtype != DType::Float32 && e.dtype != DType::Float64 && e.dtype != DType::Float16 && e.dtype != DType::BFloat16) {
            if (e.data != a.data) {
                check.maxRelativeError = kInfinite;
                off("output '" + name + "' differs (not float: compared exactly)");
            }
            continue;
        }
        const std::vector<double> x = floatValues(e), y = floatValues(a);
        const auto n = x.size();
        double scale = 0;
        for (std::size_t i = 0; i < n; ++i)
            if (std::isfinite(x[i]))
                scale = std::max(scale, std::fabs(x[i]));
        for (std::size_t i = 0; i < n; ++i) {
            if ((std::isnan(x[i]) && std::isnan(y[i])) || x[i] == y[i])
                continue;
            const double difference = std::fabs(x[i] - y[i]);
            const double denominator = std::fabs(x[i]) + scale;
            const double relative = std::isnan(difference) ? kInfinite : denominator > 0 ? difference / denominator : kInfinite;
            check.maxRelativeError = std::max(check.maxRelativeError, relative);
            if (!(difference <= tolerance * denominator))
                off("output '" + name + "' element " + std::to_string(i) + ": expected " + std::to_string(x[i]) + ", got "
                    + std::to_string(y[i]));
        }
    }
    if (!check.within() && quantizesComputedFloats(graph))
        check.cause = "the model quantizes computed floats: a sum taken in another order can move a QuantizeLinear result by "
                      "one step, and later layers carry it on";
    return check;
}

bool quantizesComputedFloats(const Graph& graph)
{
    const auto producer = producers(graph);
    const auto quantizes = [](const Op& op) { return op.type == "QuantizeLinear" || op.type == "DynamicQuantizeLinear"; };
    for (const auto& op : graph.ops) {
        if (quantizes(op) && !op.inputs.empty() && producer[std::size_t(op.inputs[0])] >= 0)
            return true;
        for (std::size_t k = 1; k < op.body.size(); ++k) // a body op after the first reads what the body computed
            if (quantizes(op.body[k]))
                return true;
    }
    return false;
}

std::string compareWithin(const Graph& graph, const std::vector<HostTensor>& expected, const std::vector<HostTensor>& actual,
    double tolerance)
{
    return checkTolerance(graph, expected, actual, tolerance).firstOff;
}

} // namespace core
