// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The optimizer steps of training graphs (domain ai.onnx.preview.training): Adagrad, Adam and
// Momentum (standard and Nesterov). Each updates n tensors at once: inputs R (learning rate), T
// (update count), then X_1..X_n, G_1..G_n and the optimizer's state tensors; outputs the new X and
// the new state, in the same order. float32 or float64 tensors; arithmetic in double precision.
#include "exec/kernels.h"

#include <cmath>
#include <string>

namespace core::exec {

namespace {

double scalarAt(const TensorView& t)
{
    return t.dtype == DType::Float32 || t.dtype == DType::Float64 ? realAt(t, 0) : double(intAt(t, 0));
}

// Checks the layout of an optimizer with `states` state tensors per X: 2 + n·(2 + states) inputs,
// n·(1 + states) outputs, every tensor of group k the same element count and a float type, R and T
// scalars. Returns n, or 0 when the call does not fit.
std::int64_t tensorCount(const KernelCall& c, int states)
{
    const std::int64_t inputs = std::int64_t(c.in.size()) - 2;
    if (inputs <= 0 || inputs % (2 + states) != 0 || !c.has(0) || !c.has(1) || c.in[0].count != 1 || c.in[1].count != 1)
        return 0;
    const std::int64_t n = inputs / (2 + states);
    if (std::int64_t(c.out.size()) != n * (1 + states) || !c.outSlots.empty())
        return 0;
    for (std::int64_t k = 0; k < n; ++k) {
        const TensorView& x = c.in[std::size_t(2 + k)];
        if (x.dtype != DType::Float32 && x.dtype != DType::Float64)
            return 0;
        for (int g = 0; g < 2 + states; ++g) {
            const TensorView& t = c.in[std::size_t(2 + g * n + k)];
            if (!t.present() || t.dtype != x.dtype || t.count != x.count)
                return 0;
        }
        for (int g = 0; g < 1 + states; ++g) {
            const TensorView& t = c.out[std::size_t(g * n + k)];
            if (t.dtype != x.dtype || t.count != x.count)
                return 0;
        }
    }
    return n;
}

// h' = h + g²;  x' = x - r / (1 + t·decay_factor) · g / (sqrt(h') + epsilon), g regularised by
// norm_coefficient·x.
bool adagrad(const KernelCall& c)
{
    const std::int64_t n = tensorCount(c, 1);
    if (n == 0)
        return false;
    const double r = scalarAt(c.in[0]) / (1.0 + scalarAt(c.in[1]) * c.attrFloat("decay_factor", 0.0f));
    const double epsilon = c.attrFloat("epsilon", 1e-6f), norm = c.attrFloat("norm_coefficient", 0.0f);
    for (std::int64_t k = 0; k < n; ++k) {
        const auto &x = c.in[std::size_t(2 + k)], &g = c.in[std::size_t(2 + n + k)], &h = c.in[std::size_t(2 + 2 * n + k)];
        for (std::int64_t i = 0; i < x.count; ++i) {
            const double grad = norm * realAt(x, i) + realAt(g, i), hNew = realAt(h, i) + grad * grad;
            storeReal(c.out[std::size_t(k)], i, realAt(x, i) - r * grad / (std::sqrt(hNew) + epsilon));
            storeReal(c.out[std::size_t(n + k)], i, hNew);
        }
    }
    return true;
}

// v' = alpha·v + (1 - alpha)·g;  h' = beta·h + (1 - beta)·g²;  x' = (1 - norm_coefficient_post) ·
// (x - r·sqrt(1 - beta^t)/(1 - alpha^t) · v' / (sqrt(h') + epsilon)), the bias correction from t > 0 on.
bool adam(const KernelCall& c)
{
    const std::int64_t n = tensorCount(c, 2);
    if (n == 0)
        return false;
    const double alpha = c.attrFloat("alpha", 0.9f), beta = c.attrFloat("beta", 0.999f), epsilon = c.attrFloat("epsilon", 1e-6f);
    const double norm = c.attrFloat("norm_coefficient", 0.0f), post = c.attrFloat("norm_coefficient_post", 0.0f);
    const double t = scalarAt(c.in[1]);
    const double r = t > 0 ? scalarAt(c.in[0]) * std::sqrt(1.0 - std::pow(beta, t)) / (1.0 - std::pow(alpha, t)) : scalarAt(c.in[0]);
    for (std::int64_t k = 0; k < n; ++k) {
        const auto &x = c.in[std::size_t(2 + k)], &g = c.in[std::size_t(2 + n + k)];
        const auto &v = c.in[std::size_t(2 + 2 * n + k)], &h = c.in[std::size_t(2 + 3 * n + k)];
        for (std::int64_t i = 0; i < x.count; ++i) {
            const double grad = norm * realAt(x, i) + realAt(g, i);
            const double vNew = alpha * realAt(v, i) + (1 - alpha) * grad, hNew = beta * realAt(h, i) + (1 - beta) * grad * grad;
            storeReal(c.out[std::size_t(k)], i, (1 - post) * (realAt(x, i) - r * vNew / (std::sqrt(hNew) + epsilon)));
            storeReal(c.out[std::size_t(n + k)], i, vNew);
            storeReal(c.out[std::size_t(2 * n + k)], i, hNew);
        }
    }
    return true;
}

// v' = alpha·v + beta'·g (beta' = 1 at t = 0); x' = x - r·v' (standard) or x - r·(g + alpha·v')
// (nesterov).
bool momentum(const KernelCall& c)
{
    const std::int64_t n = tensorCount(c, 1);
    const std::string mode = c.attrText("mode", "standard");
    if (n == 0 || (mode != "standard" && mode != "nesterov"))
        return false;
    const double r = scalarAt(c.in[0]), alpha = c.attrFloat("alpha", 0.0f), norm = c.attrFloat("norm_coefficient", 0.0f);
    const double beta = scalarAt(c.in[1]) > 0 ? c.attrFloat("beta", 0.0f) : 1.0;
    for (std::int64_t k = 0; k < n; ++k) {
        const auto &x = c.in[std::size_t(2 + k)], &g = c.in[std::size_t(2 + n + k)], &v = c.in[std::size_t(2 + 2 * n + k)];
        for (std::int64_t i = 0; i < x.count; ++i) {
            const double grad = norm * realAt(x, i) + realAt(g, i), vNew = alpha * realAt(v, i) + beta * grad;
            storeReal(c.out[std::size_t(k)], i, realAt(x, i) - r * (mode == "nesterov" ? grad + alpha * vNew : vNew));
            storeReal(c.out[std::size_t(n + k)], i, vNew);
        }
    }
    return true;
}

} // namespace

void addOptimizerKernels(std::map<std::string, Kernel>& t)
{
    t["Adagrad"] = adagrad;
    t["Adam"] = adam;
    t["Momentum"] = momentum;
}

} // namespace core::exec
