// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "util/halffloat.h"
#include "util/halfbits.h"

// clang before 15 rejects __builtin_cpu_supports("f16c"): it takes the scalar path.
#if defined(__x86_64__) && defined(__GNUC__) && !(defined(__clang__) && __clang_major__ < 15)
#include <immintrin.h>
#define MEMPLAN_F16C 1
#endif

namespace core {

float halfToFloat(std::uint16_t bits) { return halfbits::toFloat(bits); }
std::uint16_t floatToHalf(float value) { return halfbits::fromFloat(value); }
float bfloat16ToFloat(std::uint16_t bits) { return halfbits::bfloat16ToFloat(bits); }
std::uint16_t floatToBfloat16(float value) { return halfbits::floatToBfloat16(value); }

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
