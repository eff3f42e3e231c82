// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Classification losses of exported training graphs (float32): NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss, with class weights, ignore_index and the three reductions.
#include "exec/kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace core::exec {

namespace {

// loss[n, d] = -weight[t] · logProb[n, t, d] with t = target[n, d], 0 where t is the ignore index;
// reduced as `reduction` says: "none" (shape of target), "sum", or "mean" (the sum divided by the
// weights applied; without weights, by the targets not ignored). logProb is [N, C, D...] read as
// [N, C, D]. False for a target outside [0, C) that is not ignored, or an unknown reduction.
bool negativeLogLikelihood(const float* logProb, const TensorView& input, const TensorView& target, const TensorView* weight,
    const KernelCall& c, const TensorView& loss)
{
    if (input.rank() < 2 || target.rank() != input.rank() - 1 || (target.dtype != DType::Int64 && target.dtype != DType::Int32))
        return false;
    const std::int64_t n = input.shape[0], classes = input.shape[1], inner = classes > 0 && n > 0 ? input.count / (n * classes) : 0;
    if (target.count != n * inner || target.shape[0] != n)
        return false;
    if (weight && (weight->dtype != DType::Float32 || weight->count != classes))
        return false;
    const std::string reduction = c.attrText("reduction", "mean");
    const bool none = reduction == "none";
    if (!none && reduction != "sum" && reduction != "mean")
        return false;
    if (loss.dtype != DType::Float32 || loss.count != (none ? target.count : 1))
        return false;
    const bool ignores = c.op->attributes.count("ignore_index") != 0;
    const std::int64_t ignored = c.attrInt("ignore_index", 0);
    for (std::int64_t i = 0; i < target.count; ++i) {
        const std::int64_t t = intAt(target, i);
        if (!(ignores && t == ignored) && (t < 0 || t >= classes))
            return false;
    }
    double sum = 0, applied = 0;
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t d = 0; d < inner; ++d) {
            const std::int64_t i = b * inner + d, t = intAt(target, i);
            float value = 0, w = 0;
            if (!(ignores && t == ignored)) {
                w = weight ? weight->f32()[t] : 1.0f;
                value = -w * logProb[(b * classes + t) * inner + d];
            }
            if (none)
                loss.f32()[i] = value;
            sum += value;
            applied += w;
        }
    if (reduction == "sum")
        loss.f32()[0] = float(sum);
    else if (reduction == "mean")
        loss.f32()[0] = applied != 0 ? float(sum / applied) : std::numeric_limits<float>::quiet_NaN(); // 0/0 as ONNX
    return true;
}

bool negativeLogLikelihoodLoss(const KernelCall& c)
{
    if (c.in.size() < 2 || !c.has(0) || !c.has(1) || c.out.size() != 1 || c.in[0].dtype != DType::Float32)
        return false;
    return negativeLogLikelihood(c.in[0].f32(), c.in[0], c.in[1], c.has(2) ? &c.in[2] : nullptr, c, c.out[0]);
}

// log_prob = LogSoftmax(scores) over the classes (axis 1), then the negative log-likelihood of the
// labels; the optional second output is log_prob.
bool softmaxCrossEntropyLoss(const KernelCall& c)
{
    if (c.in.size() < 2 || !c.has(0) || !c.has(1) || c.out.empty() || c.out.size() > 2)
        return false;
    const auto& scores = c.in[0];
    if (scores.dtype != DType::Float32 || scores.rank() < 2 || scores.shape[0] <= 0 || scores.shape[1] <= 0)
        return false;
    if (c.out.size() == 2 && (c.out[1].dtype != DType::Float32 || c.out[1].count != scores.count))
        return false;
    const std::int64_t n = scores.shape[0], classes = scores.shape[1], inner = scores.count / (n * classes);
    float* logProb = scratch(0, scores.count); // copied to the output once the loss is known to fit
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t d = 0; d < inner; ++d) {
            const float* x = scores.f32() + b * classes * inner + d;
            float* y = logProb + b * classes * inner + d;
            float top = x[0];
            for (std::int64_t k = 1; k < classes; ++k)
                top = std::max(top, x[k * inner]);
            float sum = 0;
            for (std::int64_t k = 0; k < classes; ++k)
                sum += std::exp(x[k * inner] - top);
            const float logSum = std::log(sum);
            for (std::int64_t k = 0; k < classes; ++k)
                y[k * inner] = x[k * inner] - top - logSum;
        }
    if (!negativeLogLikelihood(logProb, scores, c.in[1], c.has(2) ? &c.in[2] : nullptr, c, c.out[0]))
        return false;
    if (c.out.size() == 2)
        std::copy(logProb, logProb + scores.count, c.out[1].f32());
    return true;
}

} // namespace

void addLossKernels(std::map<std::string, Kernel>& t)
{
    t["NegativeLogLikelihoodLoss"] = negativeLogLikelihoodLoss;
    t["SoftmaxCrossEntropyLoss"] = softmaxCrossEntropyLoss;
}

} // namespace core::exec
