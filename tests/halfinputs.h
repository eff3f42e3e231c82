// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// One input for a float16 model and its float32 twin: the same values in both.

#include "exec/tensordata.h"
#include "util/halffloat.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace halfinputs {

// draw() for every element, rounded to float16; first the float16 tensor, then its float32 widening.
template <typename Draw>
std::pair<core::HostTensor, core::HostTensor> halfAndSingle(const std::vector<std::int64_t>& shape, Draw draw)
{
    core::HostTensor half, single;
    half.dtype = core::DType::Float16;
    single.dtype = core::DType::Float32;
    half.shape = single.shape = shape;
    for (std::int64_t i = 0, n = half.elementCount(); i < n; ++i) {
        const std::uint16_t bits = core::floatToHalf(draw());
        const float wide = core::halfToFloat(bits);
        const auto* b = reinterpret_cast<const std::byte*>(&bits);
        const auto* w = reinterpret_cast<const std::byte*>(&wide);
        half.data.insert(half.data.end(), b, b + sizeof bits);
        single.data.insert(single.data.end(), w, w + sizeof wide);
    }
    return { std::move(half), std::move(single) };
}

} // namespace halfinputs
