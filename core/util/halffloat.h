// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// IEEE binary16 (float16) and bfloat16 to and from float32, as ONNX's Cast defines them: widening
// is exact; narrowing rounds to nearest, ties to even, overflows to infinity and keeps NaN a NaN.

#include <cstdint>

namespace core {

float halfToFloat(std::uint16_t bits);
std::uint16_t floatToHalf(float value);
float bfloat16ToFloat(std::uint16_t bits);
std::uint16_t floatToBfloat16(float value);

// n float16 values to float32 and back, with the same results as the functions above (the
// processor's F16C conversions where it has them: eight at a time).
void halvesToFloats(const std::uint16_t* from, float* to, std::int64_t n);
void floatsToHalves(const float* from, std::uint16_t* to, std::int64_t n);

} // namespace core
