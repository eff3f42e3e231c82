// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The per-element (or per-row) math of the device kernels, as plain inline functions that compile
// for the device under nvcc and for the host anywhere else (no CUDA headers needed), so that the
// host tests can compute whole outputs with exactly the code a kernel thread runs and compare them
// with the CPU kernels (tests/tst_gpumath.cpp). kernels.cu only maps a thread to its element.
// Index conventions are row-major; every function reads only inside the tensors its parameters
// describe, given parameters consistent with the shapes (the ops check that before launching).

#ifdef __CUDACC__
#define MEMPLAN_HD __host__ __device__
#else
#define MEMPLAN_HD
#endif

#include "util/halfbits.h"

#include <float.h>
#include <math.h>

#include <cstdint>

namespace gpu::kernels {

constexpr int kMaxRank = 6;

// Broadcasting: for output element i (row-major over dims[0..rank)), operand k reads
// element sum_d index_d * stride[k][d] (stride 0 on a broadcast dimension).
struct Broadcast {
    int rank = 0;
    std::int64_t dims[kMaxRank] = {};
    std::int64_t stride[3][kMaxRank] = {};
};

enum class Binary { Add, Sub, Mul, Div, Pow, Max, Min, PRelu, Fmod };
enum class Unary {
    Relu, LeakyRelu, Sigmoid, Tanh, Clip, Erf, Gelu, GeluTanh, Sqrt, Exp, Log, Abs, Neg, Reciprocal, Floor, Ceil, Sin, Cos,
    Softplus, Softsign, Elu, HardSigmoid, HardSwish, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Sign, Round, Selu,
    ThresholdedRelu, Celu, Shrink
};
enum class Compare { Equal, Less, Greater, LessOrEqual, GreaterOrEqual };
// Element types Cast converts between (the CPU kernel's set); Bool is one byte, 0 or 1.
enum class Scalar { Float32, Float64, Int64, Int32, Int8, UInt8, Bool, Float16, BFloat16 };

struct Window { // a 1-D, 2-D or 3-D convolution or pooling window; the dimensions it lacks have length 1
    std::int64_t channels = 0, depth = 1, height = 0, width = 0, outDepth = 1, outHeight = 0, outWidth = 0;
    int kernelD = 1, kernelH = 1, kernelW = 1, strideD = 1, strideH = 1, strideW = 1, padFront = 0, padTop = 0, padLeft = 0;
    int dilationD = 1, dilationH = 1, dilationW = 1;
    int padBack = 0, padBottom = 0, padRight = 0; // pooling's divisor with count_include_pad

    MEMPLAN_HD std::int64_t inPlane() const { return depth * height * width; }
    MEMPLAN_HD std::int64_t outPlane() const { return outDepth * outHeight * outWidth; }
    MEMPLAN_HD std::int64_t kernelSize() const { return std::int64_t(kernelD) * kernelH * kernelW; }
};

// Element index read for output element i: sum over d of (index_d of i over dims) * stride[d].
MEMPLAN_HD inline std::int64_t sourceIndex(std::int64_t i, int rank, const std::int64_t* dims, const std::int64_t* stride)
{
    std::int64_t at = 0;
    for (int d = rank - 1; d >= 0; --d) {
        const std::int64_t k = i % dims[d];
        i /= dims[d];
        at += k * stride[d];
    }
    return at;
}

// Expand and Tile: element index read for output element i, each output index taken modulo the
// input's extent in that dimension (Expand: 1 where it broadcasts, so always 0 there).
MEMPLAN_HD inline std::int64_t tileSource(std::int64_t i, int rank, const std::int64_t* dims, const std::int64_t* inDims,
    const std::int64_t* stride)
{
    std::int64_t at = 0;
    for (int d = rank - 1; d >= 0; --d) {
        const std::int64_t k = i % dims[d];
        i /= dims[d];
        at += (k % inDims[d]) * stride[d];
    }
    return at;
}

MEMPLAN_HD inline float binaryElement(Binary op, float u, float v)
{
    switch (op) {
    case Binary::Add: return u + v;
    case Binary::Sub: return u - v;
    case Binary::Mul: return u * v;
    case Binary::Div: return u / v;
    case Binary::Pow: return v == 2.0f ? u * u : powf(u, v); // squares exact, as on the CPU
    case Binary::Max: return u != u || u > v ? u : v; // a NaN first operand wins, as on the CPU
    case Binary::Min: return u != u || u < v ? u : v;
    case Binary::PRelu: return u < 0 ? u * v : u;
    case Binary::Fmod: return fmodf(u, v);
    }
    return 0.0f;
}

// t clamped to [0, 1]; NaN stays NaN, as std::clamp leaves it on the CPU.
MEMPLAN_HD inline float unitClamp(float t) { return t < 0.0f ? 0.0f : 1.0f < t ? 1.0f : t; }

// alpha: LeakyRelu slope, Elu, Selu, Celu and ThresholdedRelu alpha, HardSigmoid slope, Shrink
// lambd or Clip lower bound; beta: HardSigmoid offset, Selu gamma, Shrink bias or Clip upper bound.
MEMPLAN_HD inline float unaryElement(Unary op, float v, float alpha, float beta)
{
    switch (op) {
    case Unary::Relu: return v > 0 ? v : 0.0f;
    case Unary::LeakyRelu: return v >= 0 ? v : v * alpha;
    case Unary::Sigmoid: return 1.0f / (1.0f + expf(-v));
    case Unary::Tanh: return tanhf(v);
    case Unary::Clip: { // std::min(std::max(v, alpha), beta), as on the CPU (NaN stays NaN)
        const float low = v < alpha ? alpha : v;
        return beta < low ? beta : low;
    }
    case Unary::Erf: return erff(v);
    case Unary::Gelu: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    case Unary::GeluTanh: return 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
    case Unary::Sqrt: return sqrtf(v);
    case Unary::Exp: return expf(v);
    case Unary::Log: return logf(v);
    case Unary::Abs: return fabsf(v);
    case Unary::Neg: return -v;
    case Unary::Reciprocal: return 1.0f / v;
    case Unary::Floor: return floorf(v);
    case Unary::Ceil: return ceilf(v);
    case Unary::Sin: return sinf(v);
    case Unary::Cos: return cosf(v);
    case Unary::Softplus: return logf(expf(v) + 1.0f);
    case Unary::Softsign: return v / (1.0f + fabsf(v));
    case Unary::Elu: return v >= 0 ? v : alpha * (expf(v) - 1.0f);
    case Unary::HardSigmoid: return unitClamp(alpha * v + beta);
    case Unary::HardSwish: return v * unitClamp(v / 6.0f + 0.5f);
    case Unary::Tan: return tanf(v);
    case Unary::Asin: return asinf(v);
    case Unary::Acos: return acosf(v);
    case Unary::Atan: return atanf(v);
    case Unary::Sinh: return sinhf(v);
    case Unary::Cosh: return coshf(v);
    case Unary::Asinh: return asinhf(v);
    case Unary::Acosh: return acoshf(v);
    case Unary::Atanh: return atanhf(v);
    case Unary::Sign: return v > 0 ? 1.0f : v < 0 ? -1.0f : v;
    case Unary::Round: return rintf(v); // halves to even
    case Unary::Selu: return v > 0 ? beta * v : beta * (alpha * expf(v) - alpha);
    case Unary::ThresholdedRelu: return v > alpha ? v : 0.0f;
    case Unary::Celu: {
        const float negative = alpha * (expf(v / alpha) - 1.0f);
        return (v > 0 ? v : 0.0f) + (negative < 0 ? negative : 0.0f);
    }
    case Unary::Shrink: return v < -alpha ? v + beta : v > alpha ? v - beta : 0.0f;
    }
    return v;
}

template <class T>
MEMPLAN_HD inline bool compareElement(Compare op, T a, T b)
{
    switch (op) {
    case Compare::Equal: return a == b;
    case Compare::Less: return a < b;
    case Compare::Greater: return a > b;
    case Compare::LessOrEqual: return a <= b;
    case Compare::GreaterOrEqual: return a >= b;
    }
    return false;
}

// Element i of x (type `from`) converted into element i of y (type `to`), as the CPU's Cast: through
// a double and an int64 read from the source; float to integer truncates toward zero; to bool: != 0.
MEMPLAN_HD inline void castElement(Scalar from, const void* x, Scalar to, void* y, std::int64_t i)
{
    double dv = 0;
    std::int64_t iv = 0;
    switch (from) {
    case Scalar::Float32: dv = static_cast<const float*>(x)[i]; iv = std::int64_t(dv); break;
    case Scalar::Float64: dv = static_cast<const double*>(x)[i]; iv = std::int64_t(dv); break;
    case Scalar::Int64: iv = static_cast<const std::int64_t*>(x)[i]; dv = double(iv); break;
    case Scalar::Int32: iv = static_cast<const std::int32_t*>(x)[i]; dv = double(iv); break;
    case Scalar::Int8: iv = static_cast<const std::int8_t*>(x)[i]; dv = double(iv); break;
    case Scalar::UInt8:
    case Scalar::Bool: iv = static_cast<const std::uint8_t*>(x)[i]; dv = double(iv); break;
    case Scalar::Float16: dv = core::halfbits::toFloat(static_cast<const std::uint16_t*>(x)[i]); iv = std::int64_t(dv); break;
    case Scalar::BFloat16: dv = core::halfbits::bfloat16ToFloat(static_cast<const std::uint16_t*>(x)[i]); iv = std::int64_t(dv); break;
    }
    switch (to) {
    case Scalar::Float32: static_cast<float*>(y)[i] = float(dv); break;
    case Scalar::Float64: static_cast<double*>(y)[i] = dv; break;
    case Scalar::Int64: static_cast<std::int64_t*>(y)[i] = iv; break;
    case Scalar::Int32: static_cast<std::int32_t*>(y)[i] = std::int32_t(iv); break;
    case Scalar::Int8: static_cast<std::int8_t*>(y)[i] = std::int8_t(iv); break;
    case Scalar::UInt8: static_cast<std::uint8_t*>(y)[i] = std::uint8_t(iv); break;
    case Scalar::Bool: static_cast<std::uint8_t*>(y)[i] = dv != 0 ? 1 : 0; break;
    case Scalar::Float16: static_cast<std::uint16_t*>(y)[i] = core::halfbits::fromFloat(float(dv)); break;
    case Scalar::BFloat16: static_cast<std::uint16_t*>(y)[i] = core::halfbits::floatToBfloat16(float(dv)); break;
    }
}

// ---- Linear quantization (QuantizeLinear, DequantizeLinear) as the CPU kernels compute it
// (core/exec/kernels_quantize.cpp): float32 division and multiplication, round half to even, then
// saturation. The scale (float32) and the optional zero point hold one entry for every element
// (channels 1) or one per index along the op's axis: element i uses entry (i / inner) % channels.
struct QuantAxis {
    std::int64_t channels = 1, inner = 1;

    MEMPLAN_HD std::int64_t entry(std::int64_t i) const { return channels == 1 ? 0 : (i / inner) % channels; }
};

// Element i of an integer tensor of type Int8, UInt8 or Int32, as int64 (0 for another type).
MEMPLAN_HD inline std::int64_t integerElement(Scalar type, const void* p, std::int64_t i)
{
    switch (type) {
    case Scalar::UInt8: return static_cast<const std::uint8_t*>(p)[i];
    case Scalar::Int8: return static_cast<const std::int8_t*>(p)[i];
    case Scalar::Int32: return static_cast<const std::int32_t*>(p)[i];
    default: return 0;
    }
}

// y[i] = saturate(round_half_even(x[i] / scale) + zero point) into uint8 or int8 (`type`, also the
// zero point's type; zeroPoint may be null: 0). The quotient is clamped to ±1e9 before rounding (NaN:
// 0), as on the CPU, so the int64 conversion is defined and saturation sees the right side. rintf
// rounds half to even in the default rounding mode, as the CPU's nearbyint; the division must be
// IEEE (no fast-math: nvcc's default -prec-div=true).
MEMPLAN_HD inline void quantizeElement(const float* x, const float* scale, const void* zeroPoint, Scalar type, void* y, const QuantAxis& q,
    std::int64_t i)
{
    const std::int64_t e = q.entry(i);
    const float v = x[i] / scale[e];
    const std::int64_t rounded = v != v ? 0 : std::int64_t(rintf(v < -1e9f ? -1e9f : 1e9f < v ? 1e9f : v));
    const std::int64_t r = rounded + (zeroPoint ? integerElement(type, zeroPoint, e) : 0);
    if (type == Scalar::UInt8)
        static_cast<std::uint8_t*>(y)[i] = std::uint8_t(r < 0 ? 0 : r > 255 ? 255 : r);
    else
        static_cast<std::int8_t*>(y)[i] = std::int8_t(r < -128 ? -128 : r > 127 ? 127 : r);
}

// DynamicQuantizeLinear's scale and zero point over the n elements of x, as the CPU kernel computes
// them: uint8 over [min(0, min x), max(0, max x)], scale = range / 255, zero point =
// round_half_even(-min / scale) saturated. One thread reads all of x; NaN elements are skipped (the
// CPU kernel refuses such data: the range would be undefined).
MEMPLAN_HD inline void dynamicRange(const float* x, std::int64_t n, float* scale, std::uint8_t* zeroPoint)
{
    float lo = 0, hi = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    const float s = (hi == lo ? 1.0f : hi - lo) / 255.0f;
    const float z = 0.0f - lo / s;
    *scale = s;
    *zeroPoint = std::uint8_t(rintf(z < 0.0f ? 0.0f : z > 255.0f ? 255.0f : z));
}

// y[i] = (float(x[i]) - float(zero point)) * scale for x of uint8, int8 or int32 (`type`, also the
// zero point's; zeroPoint may be null: 0), the conversions from int64 as on the CPU.
MEMPLAN_HD inline void dequantizeElement(Scalar type, const void* x, const float* scale, const void* zeroPoint, float* y, const QuantAxis& q,
    std::int64_t i)
{
    const std::int64_t e = q.entry(i);
    const float zero = zeroPoint ? float(integerElement(type, zeroPoint, e)) : 0.0f;
    y[i] = (float(integerElement(type, x, i)) - zero) * scale[e];
}

// Element i of the im2col matrix col[((c*kd + a)*kh + ki)*kw + kj][(od*OH + oh)*OW + ow] of one
// image x[C][D][H][W].
MEMPLAN_HD inline float im2colElement(const float* x, const Window& w, std::int64_t i)
{
    const std::int64_t plane = w.outPlane();
    const std::int64_t p = i % plane, row = i / plane;
    const std::int64_t ow = p % w.outWidth, oh = (p / w.outWidth) % w.outHeight, od = p / (w.outWidth * w.outHeight);
    const std::int64_t kj = row % w.kernelW, ki = (row / w.kernelW) % w.kernelH, kd = (row / (w.kernelW * w.kernelH)) % w.kernelD;
    const std::int64_t c = row / w.kernelSize();
    const std::int64_t z = od * w.strideD - w.padFront + kd * w.dilationD;
    const std::int64_t h = oh * w.strideH - w.padTop + ki * w.dilationH;
    const std::int64_t v = ow * w.strideW - w.padLeft + kj * w.dilationW;
    return z >= 0 && z < w.depth && h >= 0 && h < w.height && v >= 0 && v < w.width ? x[((c * w.depth + z) * w.height + h) * w.width + v]
                                                                                     : 0.0f;
}

// A grouped convolution with few products per output (depthwise: one input channel per group)
// runs as one thread per output element instead of an im2col and a GEMM per group and image, which
// for MobileNet's depthwise layers means thousands of tiny launches per op.
inline constexpr std::int64_t kDirectGroupedConvProducts = 512;
MEMPLAN_HD inline bool directGroupedConv(std::int64_t groups, std::int64_t productsPerOutput)
{
    return groups > 1 && productsPerOutput <= kDirectGroupedConvProducts;
}

// Output element i of y[N][outChannels][outPlane] = the grouped convolution of x[N][groups·C][inPlane]
// (C = w.channels per group) with wt[outChannels][C][kernel] plus bias (may be null): the products
// summed in im2col's row order (channel, then kernel position), in float.
MEMPLAN_HD inline float groupedConvElement(const float* x, const float* wt, const float* bias, const Window& w, std::int64_t groups,
    std::int64_t outChannels, std::int64_t i)
{
    const std::int64_t plane = w.outPlane(), ch = (i / plane) % outChannels, img = i / (plane * outChannels);
    const std::int64_t p = i % plane, g = ch / (outChannels / groups);
    const std::int64_t ow = p % w.outWidth, oh = (p / w.outWidth) % w.outHeight, od = p / (w.outWidth * w.outHeight);
    const float* xg = x + (img * groups + g) * w.channels * w.inPlane();
    const float* wc = wt + ch * w.channels * w.kernelSize();
    float acc = 0.0f;
    for (std::int64_t c = 0; c < w.channels; ++c)
        for (int kd = 0; kd < w.kernelD; ++kd)
            for (int ki = 0; ki < w.kernelH; ++ki)
                for (int kj = 0; kj < w.kernelW; ++kj) {
                    const float weight = *wc++;
                    const std::int64_t z = od * w.strideD - w.padFront + kd * w.dilationD;
                    const std::int64_t h = oh * w.strideH - w.padTop + ki * w.dilationH;
                    const std::int64_t v = ow * w.strideW - w.padLeft + kj * w.dilationW;
                    if (z >= 0 && z < w.depth && h >= 0 && h < w.height && v >= 0 && v < w.width)
                        acc += weight * xg[((c * w.depth + z) * w.height + h) * w.width + v];
                }
    return bias ? acc + bias[ch] : acc;
}

// Output element i of max or average pooling over volumes x[images][D][H][W]. Average: the divisor
// counts window positions inside the input, or inside the padded input with countIncludePad.
MEMPLAN_HD inline float poolElement(bool max, const float* x, const Window& w, bool countIncludePad, std::int64_t i)
{
    const std::int64_t plane = w.outPlane();
    const std::int64_t img = i / plane, ow = i % w.outWidth, oh = (i / w.outWidth) % w.outHeight, od = (i % plane) / (w.outWidth * w.outHeight);
    const float* p = x + img * w.inPlane();
    float acc = max ? -INFINITY : 0.0f; // -inf, as on the CPU
    int inside = 0, padded = 0;
    for (int kd = 0; kd < w.kernelD; ++kd)
        for (int ki = 0; ki < w.kernelH; ++ki)
            for (int kj = 0; kj < w.kernelW; ++kj) {
                const std::int64_t z = od * w.strideD - w.padFront + kd * w.dilationD;
                const std::int64_t h = oh * w.strideH - w.padTop + ki * w.dilationH;
                const std::int64_t v = ow * w.strideW - w.padLeft + kj * w.dilationW;
                if (z < -w.padFront || z >= w.depth + w.padBack || h < -w.padTop || h >= w.height + w.padBottom || v < -w.padLeft
                    || v >= w.width + w.padRight)
                    continue;
                ++padded;
                if (z >= 0 && z < w.depth && h >= 0 && h < w.height && v >= 0 && v < w.width) {
                    const float e = p[(z * w.height + h) * w.width + v];
                    acc = max ? fmaxf(acc, e) : acc + e;
                    ++inside;
                }
            }
    const int counted = countIncludePad ? padded : inside;
    return max ? acc : (counted > 0 ? acc / float(counted) : 0.0f);
}

// Inference batch normalisation of one element of channel c.
MEMPLAN_HD inline float batchNormElement(float x, float scale, float bias, float mean, float var, float epsilon)
{
    return (x - mean) / sqrtf(var + epsilon) * scale + bias;
}

// Softmax (log: LogSoftmax) of row r of x viewed as [outer][count][inner] (row r: outer index
// r / inner, inner index r % inner, elements `inner` apart).
MEMPLAN_HD inline void softmaxRow(float* y, const float* x, std::int64_t r, std::int64_t count, std::int64_t inner, bool log = false)
{
    const std::int64_t base = (r / inner) * count * inner + r % inner;
    float mx = -FLT_MAX;
    for (std::int64_t k = 0; k < count; ++k)
        mx = fmaxf(mx, x[base + k * inner]);
    float sum = 0;
    for (std::int64_t k = 0; k < count; ++k)
        sum += expf(x[base + k * inner] - mx);
    for (std::int64_t k = 0; k < count; ++k)
        y[base + k * inner] = log ? x[base + k * inner] - mx - logf(sum) : expf(x[base + k * inner] - mx) / sum;
}

// Mean and 1 / sqrt(variance + epsilon) of p[0..n), statistics in double as the CPU kernels take them.
MEMPLAN_HD inline float rowStatistics(const float* p, std::int64_t n, float epsilon, double& mean)
{
    double var = 0;
    mean = 0;
    for (std::int64_t k = 0; k < n; ++k)
        mean += p[k];
    mean /= double(n);
    for (std::int64_t k = 0; k < n; ++k)
        var += (p[k] - mean) * (p[k] - mean);
    var /= double(n);
    return float(1.0 / sqrt(var + epsilon));
}

// Instance normalisation of one (image, channel) plane p[0..plane) into q, as the CPU kernel: the
// result in float with the channel's scale and bias.
// ---- IsNaN, and IsInf (detect_negative, detect_positive) as bool bytes.
MEMPLAN_HD inline std::uint8_t specialElement(float v, bool inf, bool negative, bool positive)
{
    if (!inf)
        return v != v ? 1 : 0;
    return (v == INFINITY && positive) || (v == -INFINITY && negative) ? 1 : 0;
}

// ---- LRN over x [N][C][plane...]: element i divided by (bias + alpha / size · Σ x²)^beta, the sum over
// the channels from c - (size - 1) / 2 to c + size / 2 (clipped), in channel order as on the CPU.
struct LrnShape {
    std::int64_t channels = 0, plane = 1, size = 1;
    float alpha = 1e-4f, beta = 0.75f, bias = 1.0f;
};

MEMPLAN_HD inline float lrnElement(const float* x, const LrnShape& s, std::int64_t i)
{
    const std::int64_t p = i % s.plane, ch = (i / s.plane) % s.channels, image = i / (s.plane * s.channels);
    const std::int64_t below = (s.size - 1) / 2, above = s.size - 1 - below;
    const std::int64_t first = ch - below < 0 ? 0 : ch - below, last = ch + above < s.channels - 1 ? ch + above : s.channels - 1;
    float squares = 0;
    for (std::int64_t k = first; k <= last; ++k) {
        const float v = x[(image * s.channels + k) * s.plane + p];
        squares += v * v;
    }
    return x[i] / powf(s.bias + s.alpha / float(s.size) * squares, s.beta);
}

MEMPLAN_HD inline void instanceNormRow(float* q, const float* p, float scale, float bias, std::int64_t plane, float epsilon)
{
    double mean = 0;
    const float inv = rowStatistics(p, plane, epsilon, mean);
    for (std::int64_t i = 0; i < plane; ++i)
        q[i] = (p[i] - float(mean)) * inv * scale + bias;
}

// Layer normalisation of one row p[0..inner) into q; bias may be null. The row's mean and
// 1 / standard deviation go to *mean and *invStdDev where those are not null.
MEMPLAN_HD inline void layerNormRow(float* q, const float* p, const float* scale, const float* bias, std::int64_t inner, float epsilon,
    float* mean = nullptr, float* invStdDev = nullptr)
{
    double average = 0;
    const float inv = rowStatistics(p, inner, epsilon, average);
    for (std::int64_t k = 0; k < inner; ++k)
        q[k] = float(p[k] - average) * inv * scale[k] + (bias ? bias[k] : 0.0f);
    if (mean)
        *mean = float(average);
    if (invStdDev)
        *invStdDev = inv;
}

// Mean of p[0..inner), summed in double.
MEMPLAN_HD inline float rowMean(const float* p, std::int64_t inner)
{
    double sum = 0;
    for (std::int64_t k = 0; k < inner; ++k)
        sum += p[k];
    return float(sum / double(inner));
}

// Gather: the element of x ([outer][dim][inner]) that output element i ([outer][count][inner])
// copies; an index outside [0, dim) wraps, as on the CPU. indices: int64, else int32.
MEMPLAN_HD inline std::int64_t gatherSource(std::int64_t i, const void* indices, bool indices64, std::int64_t count, std::int64_t dim,
    std::int64_t inner)
{
    const std::int64_t j = i % inner, k = (i / inner) % count, o = i / (inner * count);
    std::int64_t at = indices64 ? static_cast<const std::int64_t*>(indices)[k] : std::int64_t(static_cast<const std::int32_t*>(indices)[k]);
    at %= dim;
    if (at < 0)
        at += dim;
    return (o * dim + at) * inner + j;
}

// ---- Pad: constant, edge, reflect (core/exec PadAttrs).
enum class PadMode { Constant, Edge, Reflect };
struct PadShape {
    int rank = 0;
    PadMode mode = PadMode::Constant;
    float fill = 0;
    std::int64_t inDims[kMaxRank] = {}, inStride[kMaxRank] = {}, outDims[kMaxRank] = {}, begin[kMaxRank] = {};
};

// The input element output element o copies, or -1 where it takes the constant.
MEMPLAN_HD inline std::int64_t padSource(std::int64_t o, const PadShape& s)
{
    std::int64_t at = 0;
    bool outside = false;
    for (int d = s.rank - 1; d >= 0; --d) {
        std::int64_t k = o % s.outDims[d] - s.begin[d];
        o /= s.outDims[d];
        const std::int64_t n = s.inDims[d];
        if (k < 0 || k >= n) {
            if (s.mode == PadMode::Constant || n == 0)
                outside = true;
            else if (s.mode == PadMode::Edge)
                k = k < 0 ? 0 : n - 1;
            else {
                const std::int64_t period = n > 1 ? 2 * (n - 1) : 1;
                k = ((k % period) + period) % period;
                if (k >= n)
                    k = period - k;
            }
        }
        k = k < 0 ? 0 : (k > n - 1 ? (n > 0 ? n - 1 : 0) : k);
        at += k * s.inStride[d];
    }
    return outside ? -1 : at;
}

MEMPLAN_HD inline float padElement(const float* x, const PadShape& s, std::int64_t o)
{
    const std::int64_t at = padSource(o, s);
    return at < 0 ? s.fill : x[at];
}

// ---- Resize: nearest and linear (core/exec ResizeAttrs), per axis the CPU kernel's rule.
enum class ResizeMode { Nearest, Linear };
enum class ResizeTransform { HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric };
enum class ResizeRounding { Floor, Ceil, RoundPreferCeil, RoundPreferFloor };
struct ResizeShape {
    int rank = 0;
    ResizeMode mode = ResizeMode::Nearest;
    ResizeTransform transform = ResizeTransform::HalfPixel;
    ResizeRounding rounding = ResizeRounding::RoundPreferFloor;
    std::int64_t inDims[kMaxRank] = {}, outDims[kMaxRank] = {}, inStride[kMaxRank] = {};
    float scale[kMaxRank] = {};
    float length[kMaxRank] = {};          // the resized length: in * scale when scales are given, else out
    bool interpolate[kMaxRank] = {};      // linear and in != out: the axis blends two neighbours
};

// Source coordinate of output coordinate o on axis d.
MEMPLAN_HD inline float resizeCoordinate(const ResizeShape& s, int d, std::int64_t o)
{
    const float in = float(s.inDims[d]), out = s.length[d];
    switch (s.transform) {
    case ResizeTransform::AlignCorners: return out <= 1 ? 0.0f : float(o) * (in - 1) / (out - 1);
    case ResizeTransform::Asymmetric: return float(o) / s.scale[d];
    case ResizeTransform::PytorchHalfPixel:
        if (out <= 1)
            return 0.0f;
        break;
    case ResizeTransform::HalfPixel: break;
    }
    return (float(o) + 0.5f) / s.scale[d] - 0.5f;
}

// Two source indices on axis d and the weight of the second (nearest: one index, weight 0).
MEMPLAN_HD inline void resizeAxis(const ResizeShape& s, int d, std::int64_t o, std::int64_t& i0, std::int64_t& i1, float& weight)
{
    float v = resizeCoordinate(s, d, o);
    const std::int64_t n = s.inDims[d];
    weight = 0;
    if (s.mode == ResizeMode::Nearest) {
        switch (s.rounding) {
        case ResizeRounding::Floor: i0 = std::int64_t(floorf(v)); break;
        case ResizeRounding::Ceil: i0 = std::int64_t(ceilf(v)); break;
        case ResizeRounding::RoundPreferCeil: i0 = std::int64_t(floorf(v + 0.5f)); break;
        case ResizeRounding::RoundPreferFloor: i0 = v - floorf(v) == 0.5f ? std::int64_t(floorf(v)) : std::int64_t(roundf(v)); break;
        }
        i0 = i0 < 0 ? 0 : (i0 > n - 1 ? n - 1 : i0);
        i1 = i0;
        return;
    }
    v = v < 0.0f ? 0.0f : (float(n - 1) < v ? float(n - 1) : v);
    i0 = std::int64_t(floorf(v));
    i1 = i0 + 1 < n - 1 ? i0 + 1 : n - 1;
    weight = v - float(i0);
}

MEMPLAN_HD inline float resizeElement(const float* x, const ResizeShape& s, std::int64_t o)
{
    std::int64_t lo[kMaxRank], hi[kMaxRank];
    float weight[kMaxRank];
    int blended = 0;
    for (int d = s.rank - 1; d >= 0; --d) {
        resizeAxis(s, d, o % s.outDims[d], lo[d], hi[d], weight[d]);
        o /= s.outDims[d];
        blended += s.interpolate[d] ? 1 : 0;
    }
    float acc = 0;
    for (int corner = 0; corner < (1 << blended); ++corner) {
        float w = 1;
        std::int64_t at = 0;
        int bit = 0;
        for (int d = 0; d < s.rank; ++d) {
            std::int64_t idx = lo[d];
            if (s.interpolate[d]) {
                const bool upper = (corner >> bit++) & 1;
                w *= upper ? weight[d] : 1.0f - weight[d];
                idx = upper ? hi[d] : idx;
            }
            at += idx * s.inStride[d];
        }
        acc += w * x[at];
    }
    return acc;
}

// ---- Reductions (the Reduce* ops, GlobalMaxPool) over the axes flagged `reduced`, output row-major
// over the kept axes. Each output accumulates its inputs in input order from the mode's start value,
// with the CPU kernel's comparisons (std::max/std::min), so the bits match the CPU's.
// LogSum and LogSumExp: the log of the sum (of exp), without a max shift, as the CPU kernel and the ONNX reference.
enum class ReduceMode : int { Mean, Sum, Max, Min, Prod, SumSquare, L1, L2, LogSum, LogSumExp };

struct ReduceShape {
    int rank = 0;
    std::int64_t dims[kMaxRank] = {}, stride[kMaxRank] = {};
    bool reduced[kMaxRank] = {};
    std::int64_t group = 1; // elements accumulated per output
    ReduceMode mode = ReduceMode::Mean;
    bool noop = false; // noop_with_empty_axes and no axes: the input itself
};

MEMPLAN_HD inline float reduceElement(const float* x, const ReduceShape& s, std::int64_t o)
{
    std::int64_t base = 0;
    for (int d = s.rank - 1; d >= 0; --d)
        if (!s.reduced[d]) {
            base += (o % s.dims[d]) * s.stride[d];
            o /= s.dims[d];
        }
    if (s.noop)
        return x[base];
    float acc = s.mode == ReduceMode::Max ? -INFINITY : s.mode == ReduceMode::Min ? INFINITY : s.mode == ReduceMode::Prod ? 1.0f : 0.0f;
    for (std::int64_t g = 0; g < s.group; ++g) {
        std::int64_t at = base, rest = g;
        for (int d = s.rank - 1; d >= 0; --d)
            if (s.reduced[d]) {
                at += (rest % s.dims[d]) * s.stride[d];
                rest /= s.dims[d];
            }
        const float v = x[at];
        switch (s.mode) {
        case ReduceMode::Max: acc = acc < v ? v : acc; break;
        case ReduceMode::Min: acc = v < acc ? v : acc; break;
        case ReduceMode::Prod: acc *= v; break;
        case ReduceMode::SumSquare: case ReduceMode::L2: acc += v * v; break;
        case ReduceMode::L1: acc += fabsf(v); break;
        case ReduceMode::LogSumExp: acc += expf(v); break;
        default: acc += v; break;
        }
    }
    if (s.mode == ReduceMode::Mean)
        return acc / float(s.group);
    if (s.mode == ReduceMode::LogSum || s.mode == ReduceMode::LogSumExp)
        return logf(acc);
    return s.mode == ReduceMode::L2 ? sqrtf(acc) : acc;
}

// ---- ConvTranspose as a GEMM and col2im, the CPU kernel's scheme: per group the columns
// col[mg * kD * kH * kW][inD * inH * inW] = W_gᵀ · x_g, then each output element sums the column
// entries that land on it, in the CPU kernel's order (kernel depth, row, column), then adds its bias.
// x[batch][inChannels][inD][inH][inW], w[inChannels][outChannels / groups][kD][kH][kW],
// y[batch][outChannels][outD][outH][outW]; 1-D and 2-D have depth (and height) 1.
struct TransposedConv {
    std::int64_t batch = 0, inChannels = 0, outChannels = 0, groups = 1;
    std::int64_t inD = 1, inH = 1, inW = 1, outD = 1, outH = 1, outW = 1, kD = 1, kH = 1, kW = 1;
    std::int64_t strideD = 1, strideH = 1, strideW = 1, dilD = 1, dilH = 1, dilW = 1, padFront = 0, padTop = 0, padLeft = 0;

    MEMPLAN_HD std::int64_t inPlane() const { return inD * inH * inW; }
    MEMPLAN_HD std::int64_t outPlane() const { return outD * outH * outW; }
    MEMPLAN_HD std::int64_t kernelSize() const { return kD * kH * kW; }
};

// Element i of one image's group of outputs y_g[outChannels / groups][outH][outW] from its columns;
// bias: the group's first channel's bias, or null.
MEMPLAN_HD inline float col2imElement(const float* col, const float* bias, const TransposedConv& s, std::int64_t i)
{
    const std::int64_t ow = i % s.outW, oh = (i / s.outW) % s.outH, od = (i / (s.outW * s.outH)) % s.outD, o = i / s.outPlane();
    const std::int64_t inPlane = s.inPlane();
    float acc = 0;
    for (std::int64_t kd = 0; kd < s.kD; ++kd) {
        const std::int64_t td = od + s.padFront - kd * s.dilD;
        if (td < 0 || td % s.strideD != 0 || td / s.strideD >= s.inD)
            continue;
        const std::int64_t z = td / s.strideD;
        for (std::int64_t ki = 0; ki < s.kH; ++ki) {
            const std::int64_t th = oh + s.padTop - ki * s.dilH;
            if (th < 0 || th % s.strideH != 0 || th / s.strideH >= s.inH)
                continue;
            const std::int64_t h = th / s.strideH;
            for (std::int64_t kj = 0; kj < s.kW; ++kj) {
                const std::int64_t tw = ow + s.padLeft - kj * s.dilW;
                if (tw < 0 || tw % s.strideW != 0 || tw / s.strideW >= s.inW)
                    continue;
                acc += col[(((o * s.kD + kd) * s.kH + ki) * s.kW + kj) * inPlane + (z * s.inH + h) * s.inW + tw / s.strideW];
            }
        }
    }
    return bias ? acc + bias[o] : acc;
}

} // namespace gpu::kernels
