// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/randomproblem.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

namespace core {

PlanProblem networkShapedProblem(int n, unsigned seed)
{
    std::mt19937_64 rng(seed);
    PlanProblem problem;
    problem.alignment = 256;
    problem.steps = std::max(1, n / 2);
    std::uniform_int_distribution<int> start(0, problem.steps - 1);
    std::uniform_real_distribution<double> unit(0, 1);
    std::geometric_distribution<int> shortLife(1.0 / 3.0);
    problem.buffers.reserve(std::size_t(std::max(0, n)));
    for (int i = 0; i < n; ++i) {
        const int s = start(rng);
        const double kind = unit(rng);
        int length = 1 + shortLife(rng);
        if (kind > 0.99)
            length = 1 + static_cast<int>(unit(rng) * 500);
        else if (kind > 0.9)
            length = 1 + static_cast<int>(unit(rng) * 50);
        const Bytes size = alignUp(static_cast<Bytes>(std::exp2(8 + unit(rng) * 16)), problem.alignment);
        problem.buffers.push_back({ "b" + std::to_string(i), { s, std::min(problem.steps, s + length) }, size, TensorKind::Activation, {} });
    }
    return problem;
}

} // namespace core
