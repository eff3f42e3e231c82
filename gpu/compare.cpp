// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// compareWithin (cudaexecutor.h): a GPU run's outputs against the CPU executor's, within float rounding.
#include "cudaexecutor.h"

#include <algorithm>
#include <cmath>

namespace gpu {

using core::Graph;

std::string compareWithin(const Graph& graph, const std::vector<core::HostTensor>& expected, const std::vector<core::HostTensor>& actual,
    double tolerance)
{
    if (expected.size() != actual.size())
        return "different number of outputs";
    for (std::size_t k = 0; k < expected.size(); ++k) {
        const auto &e = expected[k], &a = actual[k];
        const std::string name = k < graph.outputs.size() ? graph.tensors[graph.outputs[k]].name : std::to_string(k);
        if (e.dtype != a.dtype || e.data.size() != a.data.size())
            return "output '" + name + "': different type or size";
        if (e.dtype != core::DType::Float32) {
            if (e.data != a.data)
                return "output '" + name + "' differs (not float: compared exactly)";
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
            if (!(std::fabs(double(x[i]) - double(y[i])) <= tolerance * (std::fabs(double(x[i])) + scale)))
                return "output '" + name + "' element " + std::to_string(i) + ": expected " + std::to_string(x[i]) + ", got " + std::to_string(y[i]);
        }
    }
    return {};
}

} // namespace gpu
