// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "util/halffloat.h"

#include <bit>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define MEMPLAN_F16C 1
#endif

namespace core {

float halfToFloat(std::uint16_t h)
{
    const std::uint32_t sign = std::uint32_t(h & 0x8000) << 16;
    std::uint32_t exponent = (h >> 10) & 0x1f;
    std::uint32_t mantissa = h & 0x3ff;
    if (exponent == 0) {
        if (mantissa == 0)
            return std::bit_cast<float>(sign);
        // Subnormal half: normalise it.
        exponent = 1;
        while (!(mantissa & 0x400)) {
            mantissa <<= 1;
            --exponent;
        }
        mantissa &= 0x3ff;
        return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
    }
    if (exponent == 31)
        return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

std::uint16_t floatToHalf(float value)
{
    const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
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

float bfloat16ToFloat(std::uint16_t bits) { return std::bit_cast<float>(std::uint32_t(bits) << 16); }

std::uint16_t floatToBfloat16(float value)
{
    const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
    if ((f & 0x7f800000) == 0x7f800000 && (f & 0x7fffff))
        return std::uint16_t((f >> 16) | 0x40); // a quiet NaN, whatever the payload's low bits
    const std::uint32_t rounded = f + 0x7fff + ((f >> 16) & 1);
    return std::uint16_t(rounded >> 16);
}

namespace {

#ifdef MEMPLAN_F16C
__attribute__((target("f16c,avx"))) void halvesToFloatsF16c(const std::uint16_t* from, float* to, std::int64_t n)
{
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(to + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i))));
    for (; i < n; ++i)
        to[i] = halfToFloat(from[i]);
}

__attribute__((target("f16c,avx"))) void floatsToHalvesF16c(const float* from, std::uint16_t* to, std::int64_t n)
{
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i), _mm256_cvtps_ph(_mm256_loadu_ps(from + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; ++i)
        to[i] = floatToHalf(from[i]);
}

bool hasF16c()
{
    static const bool has = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
    return has;
}
#endif

} // namespace

void halvesToFloats(const std::uint16_t* from, float* to, std::int64_t n)
{
#ifdef MEMPLAN_F16C
    if (hasF16c())
        return halvesToFloatsF16c(from, to, n);
#endif
    for (std::int64_t i = 0; i < n; ++i)
        to[i] = halfToFloat(from[i]);
}

void floatsToHalves(const float* from, std::uint16_t* to, std::int64_t n)
{
#ifdef MEMPLAN_F16C
    if (hasF16c())
        return floatsToHalvesF16c(from, to, n);
#endif
    for (std::int64_t i = 0; i < n; ++i)
        to[i] = floatToHalf(from[i]);
}

} // namespace core
