// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Small helpers of the tests that call CPU kernels directly (tst_conv3d, tst_einsum, tst_integer).
#include "exec/kernels.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace kerneltest {

// Elements of a tensor of this shape.
inline std::int64_t countOf(const core::exec::Shape& s)
{
    std::int64_t n = 1;
    for (auto d : s)
        n *= d;
    return n;
}

// An integer-list attribute (strides, pads, axis, ...).
inline core::Attribute ints(std::vector<std::int64_t> v)
{
    core::Attribute a;
    a.ints = std::move(v);
    return a;
}

} // namespace kerneltest
