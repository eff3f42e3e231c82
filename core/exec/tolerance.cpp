// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/tolerance.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace core {

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
        if (e.dtype != DType::Float32) {
            if (e.data != a.data) {
                check.maxRelativeError = kInfinite;
                off("output '" + name + "' differs (not float: compared exactly)");
            }
            continue;
        }
        const auto n = e.data.size() / sizeof(float);
        const auto* x = reinterpret_cast<const float*>(e.data.data());
        const auto* y = reinterpret_cast<const float*>(a.data.data());
        double scale = 0;
        for (std::size_t i = 0; i < n; ++i)
            if (std::isfinite(x[i]))
                scale = std::max(scale, std::fabs(double(x[i])));
        for (std::size_t i = 0; i < n; ++i) {
            if ((std::isnan(x[i]) && std::isnan(y[i])) || x[i] == y[i])
                continue;
            const double difference = std::fabs(double(x[i]) - double(y[i]));
            const double denominator = std::fabs(double(x[i])) + scale;
            const double relative = std::isnan(difference) ? kInfinite : denominator > 0 ? difference / denominator : kInfinite;
            check.maxRelativeError = std::max(check.maxRelativeError, relative);
            if (!(difference <= tolerance * denominator))
                off("output '" + name + "' element " + std::to_string(i) + ": expected " + std::to_string(x[i]) + ", got "
                    + std::to_string(y[i]));
        }
    }
    return check;
}

std::string compareWithin(const Graph& graph, const std::vector<HostTensor>& expected, const std::vector<HostTensor>& actual,
    double tolerance)
{
    return checkTolerance(graph, expected, actual, tolerance).firstOff;
}

} // namespace core
