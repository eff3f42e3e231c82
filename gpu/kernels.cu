// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Straightforward float32 kernels: one thread per output element (grid-stride), one thread per row
// for the reductions. Clarity over speed; GEMM-shaped work goes to cuBLAS in ops.cpp.
#include "kernels.h"

#include <cfloat>

namespace gpu::kernels {

namespace {

constexpr int kThreads = 256;

unsigned blocksFor(std::int64_t n)
{
    const std::int64_t b = (n + kThreads - 1) / kThreads;
    return unsigned(b < 65535 * 16 ? b : 65535 * 16);
}

#define GRID_LOOP(i, n) for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += std::int64_t(blockDim.x) * gridDim.x)

struct Dims { // copyable into a kernel argument
    int rank;
    std::int64_t dims[kMaxRank];
    std::int64_t stride[kMaxRank];
};

__device__ std::int64_t sourceIndex(std::int64_t i, int rank, const std::int64_t* dims, const std::int64_t* stride)
{
    std::int64_t at = 0;
    for (int d = rank - 1; d >= 0; --d) {
        const std::int64_t k = i % dims[d];
        i /= dims[d];
        at += k * stride[d];
    }
    return at;
}

__global__ void binaryKernel(Binary op, float* y, const float* a, const float* b, Broadcast s, std::int64_t n)
{
    GRID_LOOP(i, n)
    {
        const float u = a[sourceIndex(i, s.rank, s.dims, s.stride[0])];
        const float v = b[sourceIndex(i, s.rank, s.dims, s.stride[1])];
        float r = 0;
        switch (op) {
        case Binary::Add: r = u + v; break;
        case Binary::Sub: r = u - v; break;
        case Binary::Mul: r = u * v; break;
        case Binary::Div: r = u / v; break;
        case Binary::Pow: r = powf(u, v); break;
        }
        y[i] = r;
    }
}

__global__ void broadcastScaledKernel(float* y, const float* a, float scale, Broadcast s, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = scale * a[sourceIndex(i, s.rank, s.dims, s.stride[0])];
}

__global__ void unaryKernel(Unary op, float* y, const float* x, std::int64_t n, float alpha, float beta)
{
    GRID_LOOP(i, n)
    {
        const float v = x[i];
        float r = v;
        switch (op) {
        case Unary::Relu: r = v > 0 ? v : 0.0f; break;
        case Unary::LeakyRelu: r = v >= 0 ? v : v * alpha; break;
        case Unary::Sigmoid: r = 1.0f / (1.0f + expf(-v)); break;
        case Unary::Tanh: r = tanhf(v); break;
        case Unary::Clip: r = fminf(fmaxf(v, alpha), beta); break;
        case Unary::Erf: r = erff(v); break;
        case Unary::Gelu: r = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); break;
        case Unary::GeluTanh: r = 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v))); break;
        case Unary::Sqrt: r = sqrtf(v); break;
        case Unary::Exp: r = expf(v); break;
        }
        y[i] = r;
    }
}

__global__ void im2colKernel(float* col, const float* x, Window w)
{
    const std::int64_t plane = w.outHeight * w.outWidth;
    const std::int64_t n = w.channels * w.kernelH * w.kernelW * plane;
    GRID_LOOP(i, n)
    {
        const std::int64_t p = i % plane, row = i / plane;
        const std::int64_t oh = p / w.outWidth, ow = p % w.outWidth;
        const std::int64_t kj = row % w.kernelW, ki = (row / w.kernelW) % w.kernelH, c = row / (w.kernelW * w.kernelH);
        const std::int64_t h = oh * w.strideH - w.padTop + ki * w.dilationH;
        const std::int64_t v = ow * w.strideW - w.padLeft + kj * w.dilationW;
        col[i] = h >= 0 && h < w.height && v >= 0 && v < w.width ? x[(c * w.height + h) * w.width + v] : 0.0f;
    }
}

__global__ void channelBiasKernel(float* y, const float* bias, std::int64_t channels, std::int64_t inner, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] += bias[(i / inner) % channels];
}

__global__ void batchNormKernel(float* y, const float* x, const float* scale, const float* bias, const float* mean, const float* var,
    float epsilon, std::int64_t channels, std::int64_t inner, std::int64_t n)
{
    GRID_LOOP(i, n)
    {
        const std::int64_t c = (i / inner) % channels;
        y[i] = (x[i] - mean[c]) / sqrtf(var[c] + epsilon) * scale[c] + bias[c];
    }
}

__global__ void softmaxKernel(float* y, const float* x, std::int64_t outer, std::int64_t count, std::int64_t inner)
{
    GRID_LOOP(r, outer * inner)
    {
        const std::int64_t base = (r / inner) * count * inner + r % inner;
        float mx = -FLT_MAX;
        for (std::int64_t k = 0; k < count; ++k)
            mx = fmaxf(mx, x[base + k * inner]);
        float sum = 0;
        for (std::int64_t k = 0; k < count; ++k)
            sum += expf(x[base + k * inner] - mx);
        for (std::int64_t k = 0; k < count; ++k)
            y[base + k * inner] = expf(x[base + k * inner] - mx) / sum;
    }
}

__global__ void layerNormKernel(float* y, const float* x, const float* scale, const float* bias, std::int64_t rows, std::int64_t inner,
    float epsilon)
{
    GRID_LOOP(r, rows)
    {
        const float* p = x + r * inner;
        float* q = y + r * inner;
        double mean = 0, var = 0;
        for (std::int64_t k = 0; k < inner; ++k)
            mean += p[k];
        mean /= double(inner);
        for (std::int64_t k = 0; k < inner; ++k)
            var += (p[k] - mean) * (p[k] - mean);
        var /= double(inner);
        const float inv = float(1.0 / sqrt(var + epsilon));
        for (std::int64_t k = 0; k < inner; ++k)
            q[k] = float(p[k] - mean) * inv * scale[k] + (bias ? bias[k] : 0.0f);
    }
}

__global__ void poolKernel(bool max, float* y, const float* x, std::int64_t images, Window w, bool countIncludePad)
{
    const std::int64_t plane = w.outHeight * w.outWidth;
    GRID_LOOP(i, images * plane)
    {
        const std::int64_t img = i / plane, oh = (i % plane) / w.outWidth, ow = i % w.outWidth;
        const float* p = x + img * w.height * w.width;
        float acc = max ? -__int_as_float(0x7f800000) : 0.0f; // -inf, as on the CPU
        int inside = 0, padded = 0;
        for (int ki = 0; ki < w.kernelH; ++ki)
            for (int kj = 0; kj < w.kernelW; ++kj) {
                const std::int64_t h = oh * w.strideH - w.padTop + ki * w.dilationH;
                const std::int64_t v = ow * w.strideW - w.padLeft + kj * w.dilationW;
                if (h < -w.padTop || h >= w.height + w.padBottom || v < -w.padLeft || v >= w.width + w.padRight)
                    continue;
                ++padded;
                if (h >= 0 && h < w.height && v >= 0 && v < w.width) {
                    acc = max ? fmaxf(acc, p[h * w.width + v]) : acc + p[h * w.width + v];
                    ++inside;
                }
            }
        const int counted = countIncludePad ? padded : inside;
        y[i] = max ? acc : (counted > 0 ? acc / float(counted) : 0.0f);
    }
}

__global__ void rowMeanKernel(float* y, const float* x, std::int64_t rows, std::int64_t inner)
{
    GRID_LOOP(r, rows)
    {
        double sum = 0;
        for (std::int64_t k = 0; k < inner; ++k)
            sum += x[r * inner + k];
        y[r] = float(sum / double(inner));
    }
}

template <class T>
__global__ void permuteKernel(T* y, const T* x, Dims d, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = x[sourceIndex(i, d.rank, d.dims, d.stride)];
}

template <class T>
__global__ void gatherKernel(T* y, const T* x, const void* indices, bool indices64, std::int64_t outer, std::int64_t count,
    std::int64_t dim, std::int64_t inner)
{
    GRID_LOOP(i, outer * count * inner)
    {
        const std::int64_t j = i % inner, k = (i / inner) % count, o = i / (inner * count);
        std::int64_t at = indices64 ? static_cast<const std::int64_t*>(indices)[k] : std::int64_t(static_cast<const std::int32_t*>(indices)[k]);
        at %= dim;
        if (at < 0)
            at += dim;
        y[i] = x[(o * dim + at) * inner + j];
    }
}

} // namespace

cudaError_t binary(Binary op, float* y, const float* a, const float* b, const Broadcast& shape, std::int64_t n, cudaStream_t stream)
{
    if (n > 0)
        binaryKernel<<<blocksFor(n), kThreads, 0, stream>>>(op, y, a, b, shape, n);
    return cudaGetLastError();
}

cudaError_t broadcastScaled(float* y, const float* a, float scale, const Broadcast& shape, std::int64_t n, cudaStream_t stream)
{
    if (n > 0)
        broadcastScaledKernel<<<blocksFor(n), kThreads, 0, stream>>>(y, a, scale, shape, n);
    return cudaGetLastError();
}

cudaError_t unary(Unary op, float* y, const float* x, std::int64_t n, float alpha, float beta, cudaStream_t stream)
{
    if (n > 0)
        unaryKernel<<<blocksFor(n), kThreads, 0, stream>>>(op, y, x, n, alpha, beta);
    return cudaGetLastError();
}

cudaError_t im2col(float* col, const float* x, const Window& w, cudaStream_t stream)
{
    const std::int64_t n = w.channels * w.kernelH * w.kernelW * w.outHeight * w.outWidth;
    if (n > 0)
        im2colKernel<<<blocksFor(n), kThreads, 0, stream>>>(col, x, w);
    return cudaGetLastError();
}

cudaError_t addChannelBias(float* y, const float* bias, std::int64_t channels, std::int64_t inner, std::int64_t n, cudaStream_t stream)
{
    if (n > 0 && channels > 0 && inner > 0)
        channelBiasKernel<<<blocksFor(n), kThreads, 0, stream>>>(y, bias, channels, inner, n);
    return cudaGetLastError();
}

cudaError_t batchNorm(float* y, const float* x, const float* scale, const float* bias, const float* mean, const float* var, float epsilon,
    std::int64_t channels, std::int64_t inner, std::int64_t n, cudaStream_t stream)
{
    if (n > 0 && channels > 0 && inner > 0)
        batchNormKernel<<<blocksFor(n), kThreads, 0, stream>>>(y, x, scale, bias, mean, var, epsilon, channels, inner, n);
    return cudaGetLastError();
}

cudaError_t softmax(float* y, const float* x, std::int64_t outer, std::int64_t count, std::int64_t inner, cudaStream_t stream)
{
    if (outer * inner > 0 && count > 0)
        softmaxKernel<<<blocksFor(outer * inner), kThreads, 0, stream>>>(y, x, outer, count, inner);
    return cudaGetLastError();
}

cudaError_t layerNorm(float* y, const float* x, const float* scale, const float* bias, std::int64_t rows, std::int64_t inner, float epsilon,
    cudaStream_t stream)
{
    if (rows > 0 && inner > 0)
        layerNormKernel<<<blocksFor(rows), kThreads, 0, stream>>>(y, x, scale, bias, rows, inner, epsilon);
    return cudaGetLastError();
}

cudaError_t pool(bool max, float* y, const float* x, std::int64_t images, const Window& w, bool countIncludePad, cudaStream_t stream)
{
    const std::int64_t n = images * w.outHeight * w.outWidth;
    if (n > 0)
        poolKernel<<<blocksFor(n), kThreads, 0, stream>>>(max, y, x, images, w, countIncludePad);
    return cudaGetLastError();
}

cudaError_t rowMean(float* y, const float* x, std::int64_t rows, std::int64_t inner, cudaStream_t stream)
{
    if (rows > 0 && inner > 0)
        rowMeanKernel<<<blocksFor(rows), kThreads, 0, stream>>>(y, x, rows, inner);
    return cudaGetLastError();
}

cudaError_t permute(void* y, const void* x, int elementBytes, int rank, const std::int64_t* outDims, const std::int64_t* inStride,
    std::int64_t n, cudaStream_t stream)
{
    if (rank < 1 || rank > kMaxRank || (elementBytes != 4 && elementBytes != 8))
        return cudaErrorInvalidValue;
    Dims d {};
    d.rank = rank;
    for (int k = 0; k < rank; ++k) {
        d.dims[k] = outDims[k];
        d.stride[k] = inStride[k];
    }
    if (n > 0 && elementBytes == 4)
        permuteKernel<<<blocksFor(n), kThreads, 0, stream>>>(static_cast<std::uint32_t*>(y), static_cast<const std::uint32_t*>(x), d, n);
    else if (n > 0)
        permuteKernel<<<blocksFor(n), kThreads, 0, stream>>>(static_cast<std::uint64_t*>(y), static_cast<const std::uint64_t*>(x), d, n);
    return cudaGetLastError();
}

cudaError_t gather(void* y, const void* x, int elementBytes, const void* indices, bool indices64, std::int64_t outer, std::int64_t count,
    std::int64_t dim, std::int64_t inner, cudaStream_t stream)
{
    const std::int64_t n = outer * count * inner;
    if ((elementBytes != 4 && elementBytes != 8) || dim <= 0)
        return cudaErrorInvalidValue;
    if (n > 0 && elementBytes == 4)
        gatherKernel<<<blocksFor(n), kThreads, 0, stream>>>(static_cast<std::uint32_t*>(y), static_cast<const std::uint32_t*>(x), indices,
            indices64, outer, count, dim, inner);
    else if (n > 0)
        gatherKernel<<<blocksFor(n), kThreads, 0, stream>>>(static_cast<std::uint64_t*>(y), static_cast<const std::uint64_t*>(x), indices,
            indices64, outer, count, dim, inner);
    return cudaGetLastError();
}

} // namespace gpu::kernels
