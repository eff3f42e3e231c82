// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/fft.h"

#include <numbers>
#include <utility>

namespace core::exec {

namespace {

using Complex = std::complex<double>;

// In-place radix-2 transform of a (size a power of two, roots e^(-2πi·k/size) for k < size/2); with
// `conjugate` the roots are conjugated (the unscaled inverse).
void radix2(std::vector<Complex>& a, const std::vector<Complex>& roots, bool conjugate)
{
    const std::size_t size = a.size();
    for (std::size_t i = 1, j = 0; i < size; ++i) {
        std::size_t bit = size >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j |= bit;
        if (i < j)
            std::swap(a[i], a[j]);
    }
    for (std::size_t len = 2; len <= size; len <<= 1) {
        const std::size_t half = len / 2, step = size / len;
        for (std::size_t i = 0; i < size; i += len)
            for (std::size_t j = 0; j < half; ++j) {
                const Complex w = conjugate ? std::conj(roots[j * step]) : roots[j * step];
                const Complex u = a[i + j], v = a[i + j + half] * w;
                a[i + j] = u + v;
                a[i + j + half] = u - v;
            }
    }
}

} // namespace

FourierTransform::FourierTransform(std::int64_t n, bool inverse)
    : m_n(n)
    , m_inverse(inverse)
{
    const bool powerOfTwo = (n & (n - 1)) == 0;
    m_size = 1;
    while (m_size < (powerOfTwo ? n : 2 * n - 1))
        m_size <<= 1;
    m_roots.resize(std::size_t(m_size / 2));
    for (std::int64_t k = 0; k < m_size / 2; ++k)
        m_roots[std::size_t(k)] = std::polar(1.0, -2.0 * std::numbers::pi * double(k) / double(m_size));
    if (powerOfTwo)
        return;
    // X[k] = chirp[k] · Σ_t (x[t]·chirp[t]) · conj(chirp[k - t]), since 2kt = k² + t² - (k - t)².
    const double sign = inverse ? 1.0 : -1.0;
    m_chirp.resize(std::size_t(n));
    for (std::int64_t t = 0; t < n; ++t)
        m_chirp[std::size_t(t)] = std::polar(1.0, sign * std::numbers::pi * double((t * t) % (2 * n)) / double(n));
    m_kernel.assign(std::size_t(m_size), Complex {});
    for (std::int64_t t = 0; t < n; ++t) {
        m_kernel[std::size_t(t)] = std::conj(m_chirp[std::size_t(t)]);
        if (t > 0)
            m_kernel[std::size_t(m_size - t)] = std::conj(m_chirp[std::size_t(t)]);
    }
    radix2(m_kernel, m_roots, false);
}

std::int64_t FourierTransform::bytes() const
{
    const std::size_t values = m_roots.size() + m_chirp.size() + m_kernel.size() + (m_chirp.empty() ? 0 : std::size_t(m_size));
    return std::int64_t(values * sizeof(Complex));
}

void FourierTransform::apply(std::vector<Complex>& line) const
{
    const double scale = m_inverse ? 1.0 / double(m_n) : 1.0;
    if (m_chirp.empty()) {
        radix2(line, m_roots, m_inverse);
    } else {
        m_work.assign(std::size_t(m_size), Complex {});
        for (std::int64_t t = 0; t < m_n; ++t)
            m_work[std::size_t(t)] = line[std::size_t(t)] * m_chirp[std::size_t(t)];
        radix2(m_work, m_roots, false);
        for (std::int64_t k = 0; k < m_size; ++k)
            m_work[std::size_t(k)] *= m_kernel[std::size_t(k)];
        radix2(m_work, m_roots, true);
        const double convolutionScale = 1.0 / double(m_size);
        for (std::int64_t k = 0; k < m_n; ++k)
            line[std::size_t(k)] = m_work[std::size_t(k)] * m_chirp[std::size_t(k)] * convolutionScale;
    }
    if (scale != 1.0)
        for (auto& v : line)
            v *= scale;
}

} // namespace core::exec
