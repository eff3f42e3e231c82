// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Signal processing of audio front ends: DFT (the axis as opset 17's attribute or opset 20's input),
// STFT, the HannWindow, HammingWindow and BlackmanWindow generators and MelWeightMatrix. float32 or
// float64 data; the transforms compute in double precision, O(n log n) for any length (fft.h).
#include "exec/fft.h"
#include "exec/kernels.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

namespace core::exec {

namespace {

bool isReal(DType t) { return t == DType::Float32 || t == DType::Float64; }

// X [batch, signal..., 1 (real) or 2 (complex)] -> Y [..., 2] along one signal axis, of dft_length
// points (input 1; the line zero-padded or cut to it) or the axis' length; onesided keeps the
// first n/2 + 1 bins (not with inverse). The axis: input 2 (opset 20) or the attribute (before 20).
// With neither, opset 17 means 1 and opset 20 means -2, the same axis only for one signal dimension:
// other ranks are refused, as the graph does not say which was meant.
bool dft(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    const int rank = x.rank();
    if (!isReal(x.dtype) || y.dtype != x.dtype || rank < 3 || y.rank() != rank || c.out.size() != 1)
        return false;
    const std::int64_t parts = x.shape[std::size_t(rank - 1)];
    if ((parts != 1 && parts != 2) || y.shape[std::size_t(rank - 1)] != 2)
        return false;
    const bool axisGiven = c.has(2) || c.op->attributes.count("axis") != 0;
    if (!axisGiven && rank != 3)
        return false;
    std::int64_t axis = c.has(2) ? intAt(c.in[2], 0) : c.attrInt("axis", 1);
    if (axis < 0)
        axis += rank;
    const bool inverse = c.attrInt("inverse", 0) != 0, onesided = c.attrInt("onesided", 0) != 0;
    if (axis < 1 || axis > rank - 2 || (inverse && onesided))
        return false;
    const std::int64_t length = x.shape[std::size_t(axis)], n = c.has(1) ? intAt(c.in[1], 0) : length;
    const std::int64_t bins = onesided ? n / 2 + 1 : n;
    if (n < 1)
        return false;
    for (int d = 0; d < rank - 1; ++d)
        if (y.shape[std::size_t(d)] != (d == axis ? bins : x.shape[std::size_t(d)]))
            return false;
    std::int64_t outer = 1, inner = 1;
    for (int d = 0; d < rank - 1; ++d)
        (d < axis ? outer : inner) *= d == axis ? 1 : x.shape[std::size_t(d)];
    const FourierTransform transform(n, inverse);
    std::vector<std::complex<double>> line;
    noteKernelBuffers(transform.bytes() + n * Bytes(sizeof(std::complex<double>)));
    const std::int64_t used = std::min(length, n);
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            line.assign(std::size_t(n), {});
            for (std::int64_t t = 0; t < used; ++t) {
                const std::int64_t at = ((o * length + t) * inner + i) * parts;
                line[std::size_t(t)] = { realAt(x, at), parts == 2 ? realAt(x, at + 1) : 0.0 };
            }
            transform.apply(line);
            for (std::int64_t k = 0; k < bins; ++k) {
                const std::int64_t at = ((o * bins + k) * inner + i) * 2;
                storeReal(y, at, line[std::size_t(k)].real());
                storeReal(y, at + 1, line[std::size_t(k)].imag());
            }
        }
    return true;
}

// signal [batch, length, 1 or 2], frame_step, window [frame_length] (optional), frame_length
// (optional when the window gives it) -> [batch, frames, bins, 2]: the DFT of each frame times the
// window, frames = 1 + (length - frame_length) / frame_step; onesided (default) keeps
// frame_length/2 + 1 bins, for a real signal only.
bool stft(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    if (!isReal(x.dtype) || y.dtype != x.dtype || x.rank() != 3 || y.rank() != 4 || !c.has(1))
        return false;
    const std::int64_t batch = x.shape[0], length = x.shape[1], parts = x.shape[2], step = intAt(c.in[1], 0);
    const TensorView* window = c.has(2) ? &c.in[2] : nullptr;
    const std::int64_t frame = c.has(3) ? intAt(c.in[3], 0) : window ? window->count : 0;
    const bool onesided = c.attrInt("onesided", 1) != 0;
    if ((parts != 1 && parts != 2) || (onesided && parts == 2) || step < 1 || frame < 1 || frame > length
        || (window && (window->count != frame || !isReal(window->dtype))))
        return false;
    const std::int64_t frames = 1 + (length - frame) / step, bins = onesided ? frame / 2 + 1 : frame;
    if (y.shape != Shape { batch, frames, bins, 2 })
        return false;
    const FourierTransform transform(frame, false);
    std::vector<std::complex<double>> line(static_cast<std::size_t>(frame));
    noteKernelBuffers(transform.bytes() + frame * Bytes(sizeof(std::complex<double>)));
    for (std::int64_t b = 0; b < batch; ++b)
        for (std::int64_t f = 0; f < frames; ++f) {
            for (std::int64_t t = 0; t < frame; ++t) {
                const std::int64_t at = (b * length + f * step + t) * parts;
                const double w = window ? realAt(*window, t) : 1.0;
                line[std::size_t(t)] = { realAt(x, at) * w, parts == 2 ? realAt(x, at + 1) * w : 0.0 };
            }
            transform.apply(line);
            for (std::int64_t k = 0; k < bins; ++k) {
                const std::int64_t at = ((b * frames + f) * bins + k) * 2;
                storeReal(y, at, line[std::size_t(k)].real());
                storeReal(y, at + 1, line[std::size_t(k)].imag());
            }
        }
    return true;
}

enum class Window { Hann, Hamming, Blackman };

// size -> [size] window values; periodic (default) divides the angle by size, symmetric by size - 1.
template <Window W>
bool windowOp(const KernelCall& c)
{
    const auto& y = c.out[0];
    const std::int64_t n = intAt(c.in[0], 0);
    if (!isReal(y.dtype) || y.count != n || n < 0)
        return false;
    const std::int64_t period = c.attrInt("periodic", 1) != 0 ? n : n - 1;
    for (std::int64_t i = 0; i < n; ++i) {
        const double angle = period > 0 ? 2.0 * std::numbers::pi * double(i) / double(period) : 0.0;
        double v = 0;
        if constexpr (W == Window::Hann)
            v = 0.5 - 0.5 * std::cos(angle);
        else if constexpr (W == Window::Hamming)
            v = 25.0 / 46.0 - 21.0 / 46.0 * std::cos(angle);
        else
            v = 0.42 - 0.5 * std::cos(angle) + 0.08 * std::cos(2 * angle);
        storeReal(y, i, v);
    }
    return true;
}

// num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz -> [dft_length/2 + 1,
// num_mel_bins]: triangular filters between num_mel_bins + 2 points spaced evenly in mel
// (2595·log10(1 + f/700)) from the lower to the upper edge, each point's bin floor((dft_length + 1)
// · f / sample_rate), as the ONNX definition computes them (its spacing divides by the point count).
bool melWeightMatrix(const KernelCall& c)
{
    const auto& y = c.out[0];
    for (int i = 3; i < 5; ++i)
        if (!c.has(std::size_t(i)) || !isReal(c.in[std::size_t(i)].dtype))
            return false;
    const std::int64_t mels = intAt(c.in[0], 0), length = intAt(c.in[1], 0), rate = intAt(c.in[2], 0);
    const std::int64_t spectrum = length / 2 + 1;
    if (!isReal(y.dtype) || mels < 1 || length < 1 || rate < 1 || y.shape != Shape { spectrum, mels })
        return false;
    const auto mel = [](double hertz) { return 2595.0 * std::log10(1.0 + hertz / 700.0); };
    const double low = mel(realAt(c.in[3], 0)), high = mel(realAt(c.in[4], 0));
    const double stepMel = (high - low) / double(mels + 2);
    std::vector<std::int64_t> bin(std::size_t(mels + 2));
    for (std::int64_t i = 0; i < mels + 2; ++i) {
        const double hertz = 700.0 * (std::pow(10.0, (double(i) * stepMel + low) / 2595.0) - 1.0);
        bin[std::size_t(i)] = std::int64_t(std::floor(double(length + 1) * hertz / double(rate)));
        if (bin[std::size_t(i)] < 0 || bin[std::size_t(i)] >= spectrum)
            return false;
    }
    for (std::int64_t i = 0; i < y.count; ++i)
        storeReal(y, i, 0.0);
    for (std::int64_t m = 0; m < mels; ++m) {
        const std::int64_t left = bin[std::size_t(m)], center = bin[std::size_t(m + 1)], right = bin[std::size_t(m + 2)];
        if (center == left)
            storeReal(y, center * mels + m, 1.0);
        else
            for (std::int64_t j = left; j <= center; ++j)
                storeReal(y, j * mels + m, double(j - left) / double(center - left));
        for (std::int64_t j = center; j < right; ++j)
            storeReal(y, j * mels + m, double(right - j) / double(right - center));
    }
    return true;
}

} // namespace

void addSignalKernels(std::map<std::string, Kernel>& t)
{
    t["DFT"] = dft;
    t["STFT"] = stft;
    t["HannWindow"] = windowOp<Window::Hann>;
    t["HammingWindow"] = windowOp<Window::Hamming>;
    t["BlackmanWindow"] = windowOp<Window::Blackman>;
    t["MelWeightMatrix"] = melWeightMatrix;
}

} // namespace core::exec
