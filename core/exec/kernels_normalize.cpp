// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Normalisations of older CNN exports (float32): LRN across channels (AlexNet, GoogLeNet as the
// ONNX model zoo has them) and MeanVarianceNormalization over the given axes.
#include "exec/kernels.h"
#include "exec/opattrs.h"

#include <cmath>

namespace core::exec {

namespace {

// y = x / (bias + alpha / size · Σ x² over the channels [c - ⌊(size-1)/2⌋, c + ⌈(size-1)/2⌉])^beta.
bool lrn(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    const std::int64_t size = c.attrInt("size", 0);
    if (!c.allFloat() || c.out.size() != 1 || x.rank() < 3 || x.count != y.count || size <= 0)
        return false;
    const float alpha = c.attrFloat("alpha", 1e-4f), beta = c.attrFloat("beta", 0.75f), bias = c.attrFloat("bias", 1.0f);
    const std::int64_t n = x.shape[0], channels = x.shape[1], plane = x.count / std::max<std::int64_t>(1, n * channels);
    const std::int64_t below = (size - 1) / 2, above = size - 1 - below;
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t ch = 0; ch < channels; ++ch)
            for (std::int64_t p = 0; p < plane; ++p) {
                float squares = 0;
                for (std::int64_t k = std::max<std::int64_t>(0, ch - below); k <= std::min(channels - 1, ch + above); ++k) {
                    const float v = x.f32()[(b * channels + k) * plane + p];
                    squares += v * v;
                }
                const std::int64_t at = (b * channels + ch) * plane + p;
                y.f32()[at] = x.f32()[at] / std::pow(bias + alpha / float(size) * squares, beta);
            }
    return true;
}

// y = (x - E[x]) / (sqrt(E[x²] - E[x]²) + 1e-9), the expectations over `axes` (default 0, 2, 3),
// as the ONNX function body computes it.
bool meanVarianceNormalization(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    if (!c.allFloat() || c.out.size() != 1 || x.count != y.count || x.rank() == 0)
        return false;
    const int rank = x.rank();
    std::vector<bool> reduced(std::size_t(rank), false);
    const auto* axes = c.attrInts("axes");
    const Shape fallback { 0, 2, 3 };
    for (auto a : axes ? *axes : fallback) {
        if (a < -rank || a >= rank)
            return false;
        reduced[std::size_t(normAxis(a, rank))] = true;
    }
    // Group of element i: its index over the kept dimensions.
    std::int64_t groups = 1;
    Shape groupStride(std::size_t(rank), 0);
    for (int d = rank - 1; d >= 0; --d)
        if (!reduced[std::size_t(d)]) {
            groupStride[std::size_t(d)] = groups;
            groups *= x.shape[std::size_t(d)];
        }
    const std::int64_t perGroup = x.count / std::max<std::int64_t>(1, groups);
    float* sums = scratch(0, 2 * groups);
    std::fill(sums, sums + 2 * groups, 0.0f);
    const auto strides = stridesOf(x.shape);
    const auto groupOf = [&](std::int64_t i) {
        std::int64_t g = 0;
        for (int d = 0; d < rank; ++d)
            g += (i / strides[std::size_t(d)]) % x.shape[std::size_t(d)] * groupStride[std::size_t(d)];
        return g;
    };
    for (std::int64_t i = 0; i < x.count; ++i) {
        const std::int64_t g = groupOf(i);
        const float v = x.f32()[i];
        sums[g] += v;
        sums[groups + g] += v * v;
    }
    for (std::int64_t i = 0; i < x.count; ++i) {
        const std::int64_t g = groupOf(i);
        const float mean = sums[g] / float(perGroup), meanSquare = sums[groups + g] / float(perGroup);
        y.f32()[i] = (x.f32()[i] - mean) / (std::sqrt(meanSquare - mean * mean) + 1e-9f);
    }
    return true;
}

} // namespace

void addNormalizeKernels(std::map<std::string, Kernel>& t)
{
    t["LRN"] = lrn;
    t["MeanVarianceNormalization"] = meanVarianceNormalization;
}

} // namespace core::exec
