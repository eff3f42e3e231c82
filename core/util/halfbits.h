// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The scalar float16 and bfloat16 conversions of util/halffloat.h, header-only so that the CUDA
// executor's device kernels (gpu/) compile the same code: widening is exact; narrowing rounds to
// nearest, ties to even, overflows to infinity and keeps NaN a NaN.

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define MEMPLAN_HALF_HD __host__ __device__
#else
#define MEMPLAN_HALF_HD
#endif

namespace core::halfbits {

MEMPLAN_HALF_HD inline float asFloat(std::uint32_t bits)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
#endif
}

MEMPLAN_HALF_HD inline std::uint32_t asBits(float value)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(value);
#else
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
#endif
}

MEMPLAN_HALF_HD inline float toFloat(std::uint16_t h)
{
    const std::uint32_t sign = std::uint32_t(h & 0x8000) << 16;
    std::uint32_t exponent = (h >> 10) & 0x1f;
    std::uint32_t mantissa = h & 0x3ff;
    if (exponent == 0) {
        if (mantissa == 0)
            return asFloat(sign);
        // Subnormal half: normalise it.
        exponent = 1;
        while (!(mantissa & 0x400)) {
            mantissa <<= 1;
            --exponent;
        }
        mantissa &= 0x3ff;
        return asFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
    }
    if (exponent == 31)
        return asFloat(sign | 0x7f800000u | (mantissa << 13));
    return asFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

MEMPLAN_HALF_HD inline std::uint16_t fromFloat(float value)
{
    const std::uint32_t f = asBits(value);
    const auto sign = std::uint16_t((f >> 16) & 0x8000);
    const std::uint32_t biased = (f >> 23) & 0xff, mantissa = f & 0x7fffff;
    if (biased == 0xff)
        return std::uint16_t(sign | 0x7c00 | (mantissa ? 0x200 : 0));
    const std::int32_t exponent = std::int32_t(biased) - 127 + 15;
    if (exponent >= 31)
        return std::uint16_t(sign | 0x7c00);
    // The 24-bit significand shifted into half's 10 bits (fewer for a subnormal), rounded to
    // nearest even on the bits shifted out; a carry into the exponent is the right result.
    std::uint32_t significand = mantissa | 0x800000;
    std::uint32_t shift = 13;
    std::uint32_t top = std::uint32_t(exponent) << 10;
    if (exponent <= 0) {
        if (exponent < -10)
            return sign; // below half the smallest subnormal
        shift = std::uint32_t(14 - exponent);
        top = 0;
    } else {
        significand &= 0x7fffff;
    }
    const std::uint32_t kept = significand >> shift, rest = significand & ((1u << shift) - 1), half = 1u << (shift - 1);
    std::uint32_t bits = top + kept;
    if (rest > half || (rest == half && (kept & 1)))
        ++bits;
    return std::uint16_t(sign | bits);
}

MEMPLAN_HALF_HD inline float bfloat16ToFloat(std::uint16_t bits) { return asFloat(std::uint32_t(bits) << 16); }

MEMPLAN_HALF_HD inline std::uint16_t floatToBfloat16(float value)
{
    const std::uint32_t f = asBits(value);
    if ((f & 0x7f800000) == 0x7f800000 && (f & 0x7fffff))
        return std::uint16_t((f >> 16) | 0x40); // a quiet NaN, whatever the payload's low bits
    const std::uint32_t rounded = f + 0x7fff + ((f >> 16) & 1);
    return std::uint16_t(rounded >> 16);
}

} // namespace core::halfbits
