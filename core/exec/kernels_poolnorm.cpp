// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Normalisations (BatchNormalization inference, LayerNormalization, InstanceNormalization),
// Softmax/LogSoftmax, and the Reduce* family.
#include "exec/kernels.h"
#include "exec/opattrs.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <type_traits>
#include <limits>

namespace core::exec {

namespace {

// Inference: Y from the given mean and var. training_mode 1: Y from the batch's own statistics (the
// mean and population variance over N and the spatial dimensions), and the optional outputs 1 and 2
// the running statistics, input · momentum + batch · (1 - momentum).
bool batchNorm(const KernelCall& c)
{
    const bool training = c.attrInt("training_mode", 0) != 0;
    if (!c.allFloat() || c.in.size() < 5 || (training ? c.out.size() > 3 : c.out.size() != 1) || c.outSlot(0) != 0)
        return false;
    const auto& x = c.in[0];
    if (x.rank() < 2)
        return false;
    const std::int64_t n = x.shape[0], ch = x.shape[1], plane = x.count / std::max<std::int64_t>(1, n * ch);
    for (int i = 1; i < 5; ++i)
        if (!c.has(i) || c.in[i].count != ch)
            return false;
    for (std::size_t k = 1; k < c.out.size(); ++k)
        if (c.out[k].count != ch)
            return false;
    const float eps = c.attrFloat("epsilon", 1e-5f);
    const double momentum = c.attrFloat("momentum", 0.9f);
    for (std::int64_t k = 0; k < ch; ++k) {
        float mean = c.in[3].f32()[k], var = c.in[4].f32()[k];
        if (training) {
            double sum = 0, squares = 0;
            for (std::int64_t b = 0; b < n; ++b) {
                const float* p = x.f32() + (b * ch + k) * plane;
                for (std::int64_t i = 0; i < plane; ++i)
                    sum += p[i];
            }
            const double batchMean = sum / double(std::max<std::int64_t>(1, n * plane));
            for (std::int64_t b = 0; b < n; ++b) {
                const float* p = x.f32() + (b * ch + k) * plane;
                for (std::int64_t i = 0; i < plane; ++i)
                    squares += (p[i] - batchMean) * (p[i] - batchMean);
            }
            const double batchVar = squares / double(std::max<std::int64_t>(1, n * plane));
            for (std::size_t o = 1; o < c.out.size(); ++o) {
                const bool ofMean = c.outSlot(o) == 1;
                const double given = ofMean ? mean : var, batch = ofMean ? batchMean : batchVar;
                c.out[o].f32()[k] = float(given * momentum + batch * (1 - momentum));
            }
            mean = float(batchMean);
            var = float(batchVar);
        }
        const float scale = c.in[1].f32()[k] / std::sqrt(var + eps);
        const float shift = c.in[2].f32()[k] - mean * scale;
        for (std::int64_t b = 0; b < n; ++b) {
            const float* p = x.f32() + (b * ch + k) * plane;
            float* q = c.out[0].f32() + (b * ch + k) * plane;
            for (std::int64_t i = 0; i < plane; ++i)
                q[i] = p[i] * scale + shift;
        }
    }
    return true;
}

bool instanceNorm(const KernelCall& c)
{
    if (!c.allFloat() || c.in.size() < 3 || c.in[0].rank() < 3)
        return false;
    const auto& x = c.in[0];
    const std::int64_t n = x.shape[0], ch = x.shape[1], plane = x.count / (n * ch);
    if (c.in[1].count != ch || c.in[2].count != ch)
        return false;
    const float eps = c.attrFloat("epsilon", 1e-5f);
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t k = 0; k < ch; ++k) {
            const float* p = x.f32() + (b * ch + k) * plane;
            float* q = c.out[0].f32() + (b * ch + k) * plane;
            double mean = 0, var = 0;
            for (std::int64_t i = 0; i < plane; ++i)
                mean += p[i];
            mean /= double(plane);
            for (std::int64_t i = 0; i < plane; ++i)
                var += (p[i] - mean) * (p[i] - mean);
            var /= double(plane);
            const float inv = float(1.0 / std::sqrt(var + eps));
            for (std::int64_t i = 0; i < plane; ++i)
                q[i] = (p[i] - float(mean)) * inv * c.in[1].f32()[k] + c.in[2].f32()[k];
        }
    return true;
}

// Y = (X - mean) / sqrt(var + eps) * scale + bias over the dimensions from `axis` on; optional
// outputs Mean and InvStdDev (shape of X with those dimensions set to 1).
bool layerNorm(const KernelCall& c)
{
    if (!c.allFloat() || !c.has(0) || !c.has(1))
        return false;
    const auto& x = c.in[0];
    const int axis = normAxis(c.attrInt("axis", -1), x.rank());
    std::int64_t inner = 1;
    for (int d = axis; d < x.rank(); ++d)
        inner *= x.shape[d];
    const std::int64_t outer = x.count / std::max<std::int64_t>(inner, 1);
    const auto& scale = c.in[1];
    if (scale.count != inner && scale.count != 1)
        return false;
    if (c.has(2) && c.in[2].count != inner && c.in[2].count != 1)
        return false;
    for (std::size_t o = 1; o < c.out.size(); ++o)
        if (c.out[o].count != outer)
            return false;
    const float eps = c.attrFloat("epsilon", 1e-5f);
    for (std::int64_t r = 0; r < outer; ++r) {
        const float* p = x.f32() + r * inner;
        float* q = c.out[0].f32() + r * inner;
        float mean = 0;
        for (std::int64_t i = 0; i < inner; ++i)
            mean += p[i];
        mean /= float(inner);
        float var = 0;
        for (std::int64_t i = 0; i < inner; ++i)
            var += (p[i] - mean) * (p[i] - mean);
        var /= float(inner);
        const float inv = 1.0f / std::sqrt(var + eps);
        for (std::int64_t i = 0; i < inner; ++i) {
            float v = (p[i] - mean) * inv * scale.f32()[scale.count == 1 ? 0 : i];
            if (c.has(2))
                v += c.in[2].f32()[c.in[2].count == 1 ? 0 : i];
            q[i] = v;
        }
        if (c.out.size() > 1)
            c.out[1].f32()[r] = mean;
        if (c.out.size() > 2)
            c.out[2].f32()[r] = inv;
    }
    return true;
}

// Softmax along one axis (opset 13 semantics): [outer, n, inner] view of the tensor.
template <bool Log>
bool softmax(const KernelCall& c)
{
    if (!c.allFloat() || c.in[0].count != c.out[0].count || c.in[0].rank() == 0)
        return false;
    const auto& x = c.in[0];
    const int axis = normAxis(c.attrInt("axis", -1), x.rank());
    std::int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d)
        outer *= x.shape[d];
    for (int d = axis + 1; d < x.rank(); ++d)
        inner *= x.shape[d];
    const std::int64_t n = x.shape[axis];
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            const float* p = x.f32() + o * n * inner + i;
            float* q = c.out[0].f32() + o * n * inner + i;
            float mx = -std::numeric_limits<float>::infinity();
            for (std::int64_t k = 0; k < n; ++k)
                mx = std::max(mx, p[k * inner]);
            float sum = 0;
            for (std::int64_t k = 0; k < n; ++k)
                sum += std::exp(p[k * inner] - mx);
            for (std::int64_t k = 0; k < n; ++k)
                q[k * inner] = Log ? p[k * inner] - mx - std::log(sum) : std::exp(p[k * inner] - mx) / sum;
        }
    return true;
}

// a op b; integers wrap around (two's complement) instead of overflowing.
template <typename T, typename Op>
T wrapping(T a, T b, Op op)
{
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return T(U(op(U(a), U(b))));
    } else {
        return op(a, b);
    }
}

// LogSum and LogSumExp take the log of the sum (of exp), as the ONNX reference does (no max shift).
enum class Reduce { Mean, Sum, Max, Min, Prod, SumSquare, L1, L2, LogSum, LogSumExp };

template <typename T, Reduce R>
bool reduceAs(const KernelCall& c)
{
    const auto& x = c.in[0];
    const T* xv = reinterpret_cast<const T*>(x.data);
    const int rank = x.rank();
    std::vector<bool> reduced;
    bool noop = false;
    reduceAxes(c, reduced, noop);
    if (noop) {
        if (x.count != c.out[0].count)
            return false;
        std::copy(xv, xv + x.count, reinterpret_cast<T*>(c.out[0].data));
        return true;
    }
    std::int64_t outCount = 1, groupSize = 1;
    Shape outStride(rank, 0);
    for (int d = rank - 1; d >= 0; --d) {
        if (reduced[d]) {
            groupSize *= x.shape[d];
            continue;
        }
        outStride[d] = outCount;
        outCount *= x.shape[d];
    }
    if (outCount != c.out[0].count)
        return false;
    T* y = reinterpret_cast<T*>(c.out[0].data);
    constexpr bool fp = std::is_floating_point_v<T>;
    const T init = R == Reduce::Max ? (fp ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest())
        : R == Reduce::Min          ? (fp ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max())
        : R == Reduce::Prod         ? T(1)
                                    : T(0);
    std::fill(y, y + outCount, init);
    Shape counter(rank, 0);
    std::int64_t o = 0;
    for (std::int64_t i = 0; i < x.count; ++i) {
        const T v = xv[i];
        T& acc = y[o];
        switch (R) {
        case Reduce::Max: acc = std::max(acc, v); break;
        case Reduce::Min: acc = std::min(acc, v); break;
        case Reduce::Prod: acc = wrapping(acc, v, std::multiplies<>()); break;
        case Reduce::SumSquare: case Reduce::L2: acc += v * v; break;
        case Reduce::L1: acc += T(std::fabs(v)); break;
        case Reduce::LogSumExp: acc += T(std::exp(v)); break;
        default: acc = wrapping(acc, v, std::plus<>()); break;
        }
        for (int d = rank - 1; d >= 0; --d) {
            o += outStride[d];
            if (++counter[d] < x.shape[d])
                break;
            o -= outStride[d] * x.shape[d];
            counter[d] = 0;
        }
    }
    for (std::int64_t k = 0; k < outCount; ++k) {
        if (R == Reduce::Mean)
            y[k] /= T(groupSize);
        if (R == Reduce::L2)
            y[k] = T(std::sqrt(y[k]));
        if (R == Reduce::LogSum || R == Reduce::LogSumExp)
            y[k] = T(std::log(y[k]));
    }
    return true;
}

// float32 or float64 data; int64 and int32 for Max, Min, Sum and Prod (shape arithmetic: the
// smaller of a count and a limit). The axes input, when given, is int64.
template <Reduce R>
bool reduce(const KernelCall& c)
{
    if (!c.has(0) || c.out.size() != 1 || c.out[0].dtype != c.in[0].dtype)
        return false;
    if (c.in[0].dtype == DType::Float32)
        return reduceAs<float, R>(c);
    if (c.in[0].dtype == DType::Float64)
        return reduceAs<double, R>(c);
    constexpr bool exact = R == Reduce::Max || R == Reduce::Min || R == Reduce::Sum || R == Reduce::Prod;
    if constexpr (exact) {
        if (c.in[0].dtype == DType::Int64)
            return reduceAs<std::int64_t, R>(c);
        if (c.in[0].dtype == DType::Int32)
            return reduceAs<std::int32_t, R>(c);
    }
    return false;
}

} // namespace

void addPoolNormKernels(std::map<std::string, Kernel>& t)
{
    t["BatchNormalization"] = batchNorm;
    t["InstanceNormalization"] = instanceNorm;
    t["LayerNormalization"] = layerNorm;
    t["Softmax"] = softmax<false>;
    t["LogSoftmax"] = softmax<true>;
    t["ReduceMean"] = reduce<Reduce::Mean>;
    t["ReduceSum"] = reduce<Reduce::Sum>;
    t["ReduceMax"] = reduce<Reduce::Max>;
    t["ReduceMin"] = reduce<Reduce::Min>;
    t["ReduceProd"] = reduce<Reduce::Prod>;
    t["ReduceSumSquare"] = reduce<Reduce::SumSquare>;
    t["ReduceL1"] = reduce<Reduce::L1>;
    t["ReduceL2"] = reduce<Reduce::L2>;
    t["ReduceLogSum"] = reduce<Reduce::LogSum>;
    t["ReduceLogSumExp"] = reduce<Reduce::LogSumExp>;
}

} // namespace core::exec
