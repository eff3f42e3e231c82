// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to core/exec: discrete Fourier transforms of one length for the DFT and STFT kernels.
// Powers of two run radix-2; every other length runs Bluestein's chirp-z transform through a
// power-of-two one, so any length costs O(n log n). Double precision; every angle comes from an
// exact integer index (k mod size, t² mod 2n), so no rounding error builds up along the line.

#include <complex>
#include <cstdint>
#include <vector>

namespace core::exec {

class FourierTransform {
public:
    // Forward: X[k] = Σ_t x[t]·e^(-2πi·k·t/n). Inverse: e^(+2πi·k·t/n), scaled by 1/n. n >= 1.
    FourierTransform(std::int64_t n, bool inverse);

    // `line` holds n values; they are replaced by their transform.
    void apply(std::vector<std::complex<double>>& line) const;
    // Bytes of the tables and work buffer apply() uses (kernel scratch).
    std::int64_t bytes() const;

private:
    std::int64_t m_n;
    bool m_inverse;
    std::int64_t m_size;                        // the power of two the work runs at
    std::vector<std::complex<double>> m_roots;  // e^(-2πi·k/size), k < size/2
    std::vector<std::complex<double>> m_chirp;  // Bluestein: e^(sign·πi·t²/n), t < n
    std::vector<std::complex<double>> m_kernel; // Bluestein: the transformed conjugate chirp
    mutable std::vector<std::complex<double>> m_work;
};

} // namespace core::exec
