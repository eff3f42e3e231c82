// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Straightforward kernels, float32 but for comparisons, logical ops, Where, Cast, quantization and the index ops: one thread per output element (grid-stride), one thread per row
// for the reductions, the math of each in elementmath.h. Clarity over speed; GEMM-shaped work goes
// to cuBLAS in ops.cpp.
#include "kernels.h"

#include <type_traits>

namespace gpu::kernels {

namespace {

constexpr int kThreads = 256;

[[maybe_unused]] unsigned blocksFor(std::int64_t n) // unused by the test emulation
{
    const std::int64_t b = (n + kThreads - 1) / kThreads;
    return unsigned(b < 65535 * 16 ? b : 65535 * 16);
}

// One launch of `kernel` over n elements on `stream`. The test emulation (tests/cudaemu) compiles
// this file as host code and enqueues the call on its emulated stream instead.
#ifdef MEMPLAN_CUDA_EMULATION
#define LAUNCH(kernel, n, stream, ...) ::cudaemu::launch(stream, #kernel, [=] { kernel(__VA_ARGS__); }, __VA_ARGS__)
#else
#define LAUNCH(kernel, n, stream, ...) kernel<<<blocksFor(n), kThreads, 0, stream>>>(__VA_ARGS__)
#endif

// Calls launch(tag) with tag a null pointer to the unsigned integer type of elementBytes (1, 2, 4 or
// 8), for kernels that move elements by width; cudaErrorInvalidValue for another width.
template <class Launch>
cudaError_t byWidth(int elementBytes, Launch launch)
{
    switch (elementBytes) {
    case 1: launch(static_cast<std::uint8_t*>(nullptr)); break;
    case 2: launch(static_cast<std::uint16_t*>(nullptr)); break;
    case 4: launch(static_cast<std::uint32_t*>(nullptr)); break;
    case 8: launch(static_cast<std::uint64_t*>(nullptr)); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

#define GRID_LOOP(i, n) for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += std::int64_t(blockDim.x) * gridDim.x)

struct Dims { // copyable into a kernel argument
    int rank;
    std::int64_t dims[kMaxRank];
    std::int64_t stride[kMaxRank];
};

__global__ void binaryKernel(Binary op, float* y, const float* a, const float* b, Broadcast s, std::int64_t n)
{
    GRID_LOOP(i, n)
    {
        y[i] = binaryElement(op, a[sourceIndex(i, s.rank, s.dims, s.stride[0])], b[sourceIndex(i, s.rank, s.dims, s.stride[1])]);
    }
}

template <class T>
__global__ void compareKernel(Compare op, std::uint8_t* y, const T* a, const T* b, Broadcast s, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = compareElement(op, a[sourceIndex(i, s.rank, s.dims, s.stride[0])], b[sourceIndex(i, s.rank, s.dims, s.stride[1])]);
}

__global__ void specialKernel(std::uint8_t* y, const float* x, bool inf, bool negative, bool positive, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = specialElement(x[i], inf, negative, positive);
}

__global__ void notKernel(std::uint8_t* y, const std::uint8_t* x, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = x[i] == 0 ? 1 : 0;
}

template <class T>
__global__ void whereKernel(T* y, const std::uint8_t* condition, const T* a, const T* b, Broadcast s, std::int64_t n)
{
    GRID_LOOP(i, n)
    {
        y[i] = condition[sourceIndex(i, s.rank, s.dims, s.stride[0])] != 0 ? a[sourceIndex(i, s.rank, s.dims, s.stride[1])]
                                                                         : b[sourceIndex(i, s.rank, s.dims, s.stride[2])];
    }
}

__global__ void castKernel(Scalar from, const void* x, Scalar to, void* y, std::int64_t n)
{
    GRID_LOOP(i, n) castElement(from, x, to, y, i);
}

__global__ void quantizeKernel(const float* x, const float* scale, const void* zeroPoint, Scalar type, void* y, QuantAxis q, std::int64_t n)
{
    GRID_LOOP(i, n) quantizeElement(x, scale, zeroPoint, type, y, q, i);
}

__global__ void dynamicRangeKernel(const float* x, std::int64_t n, float* scale, std::uint8_t* zeroPoint)
{
    GRID_LOOP(i, 1) dynamicRange(x, n, scale, zeroPoint);
}

__global__ void dequantizeKernel(Scalar type, const void* x, const float* scale, const void* zeroPoint, float* y, QuantAxis q, std::int64_t n)
{
    GRID_LOOP(i, n) dequantizeElement(type, x, scale, zeroPoint, y, q, i);
}

__global__ void broadcastScaledKernel(float* y, const float* a, float scale, Broadcast s, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = scale * a[sourceIndex(i, s.rank, s.dims, s.stride[0])];
}

__global__ void unaryKernel(Unary op, float* y, const float* x, std::int64_t n, float alpha, float beta)
{
    GRID_LOOP(i, n) y[i] = unaryElement(op, x[i], alpha, beta);
}

__global__ void im2colKernel(float* col, const float* x, Window w)
{
    GRID_LOOP(i, w.channels * w.kernelSize() * w.outPlane()) col[i] = im2colElement(x, w, i);
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
        y[i] = batchNormElement(x[i], scale[c], bias[c], mean[c], var[c], epsilon);
    }
}

__global__ void softmaxKernel(float* y, const float* x, std::int64_t outer, std::int64_t count, std::int64_t inner, bool log)
{
    GRID_LOOP(r, outer * inner) softmaxRow(y, x, r, count, inner, log);
}

__global__ void layerNormKernel(float* y, const float* x, const float* scale, const float* bias, std::int64_t rows, std::int64_t inner,
    float epsilon, float* mean, float* invStdDev)
{
    GRID_LOOP(r, rows) layerNormRow(y + r * inner, x + r * inner, scale, bias, inner, epsilon, mean ? mean + r : nullptr, invStdDev ? invStdDev + r : nullptr);
}

__global__ void poolKernel(bool max, float* y, const float* x, std::int64_t images, Window w, bool countIncludePad)
{
    GRID_LOOP(i, images * w.outPlane()) y[i] = poolElement(max, x, w, countIncludePad, i);
}

__global__ void rowMeanKernel(float* y, const float* x, std::int64_t rows, std::int64_t inner)
{
    GRID_LOOP(r, rows) y[r] = rowMean(x + r * inner, inner);
}

template <class T>
__global__ void permuteKernel(T* y, const T* x, Dims d, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = x[sourceIndex(i, d.rank, d.dims, d.stride)];
}

struct TileDims { // copyable into a kernel argument
    int rank;
    std::int64_t dims[kMaxRank], inDims[kMaxRank], stride[kMaxRank];
};

template <class T>
__global__ void tileKernel(T* y, const T* x, TileDims d, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = x[tileSource(i, d.rank, d.dims, d.inDims, d.stride)];
}

__global__ void lrnKernel(float* y, const float* x, LrnShape s, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = lrnElement(x, s, i);
}

__global__ void instanceNormKernel(float* y, const float* x, const float* scale, const float* bias, std::int64_t rows, std::int64_t channels,
    std::int64_t plane, float epsilon)
{
    GRID_LOOP(r, rows) instanceNormRow(y + r * plane, x + r * plane, scale[r % channels], bias[r % channels], plane, epsilon);
}

template <class T>
__global__ void gatherKernel(T* y, const T* x, const void* indices, bool indices64, std::int64_t outer, std::int64_t count,
    std::int64_t dim, std::int64_t inner)
{
    GRID_LOOP(i, outer * count * inner) y[i] = x[gatherSource(i, indices, indices64, count, dim, inner)];
}

__global__ void padKernel(float* y, const float* x, PadShape s, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = padElement(x, s, i);
}

__global__ void resizeKernel(float* y, const float* x, ResizeShape s, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = resizeElement(x, s, i);
}

__global__ void reduceKernel(float* y, const float* x, ReduceShape s, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = reduceElement(x, s, i);
}

__global__ void col2imKernel(float* y, const float* col, const float* bias, TransposedConv s, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = col2imElement(col, bias, s, i);
}

__global__ void hardmaxKernel(float* y, const float* x, std::int64_t extent, std::int64_t inner, std::int64_t rows)
{
    GRID_LOOP(r, rows) hardmaxRow(x, y, extent, inner, r);
}

template <class T>
__global__ void oneHotKernel(T* y, const void* indices, const T* values, OneHotShape s, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = values[oneHotHit(i, indices, s) ? 1 : 0];
}

template <class T>
__global__ void scatterElementsKernel(T* y, const T* updates, const void* indices, bool indices64, GatherElementsShape s, Reduction r,
    std::int64_t lines)
{
    GRID_LOOP(l, lines)
    {
        for (std::int64_t k = 0; k < s.idxDims[s.axis]; ++k) {
            const std::int64_t i = scatterElementsIndex(l, k, s);
            const std::int64_t at = gatherElementsSource(i, indices, indices64, s);
            y[at] = r == Reduction::None ? updates[i] : scatterCombine(r, y[at], updates[i]);
        }
    }
}

template <class T>
__global__ void gatherNDKernel(T* y, const T* x, const std::int64_t* indices, GatherNDShape s, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = x[gatherNDSource(i, indices, s)];
}

template <class T>
__global__ void scatterNDKernel(T* y, const T* updates, const void* indices, bool indices64, ScatterNDShape s, std::int64_t n)
{
    GRID_LOOP(i, n)
    {
        const std::int64_t at = scatterNDTarget(i / s.slice, indices, indices64, s);
        if (at >= 0)
            y[at + i % s.slice] = updates[i];
    }
}

template <class T>
__global__ void scatterNDReduceKernel(T* y, const T* updates, const void* indices, bool indices64, ScatterNDShape s, Reduction r, std::int64_t n)
{
    GRID_LOOP(j, n)
    {
        for (std::int64_t t = 0; t < s.tuples; ++t) {
            const std::int64_t at = scatterNDTarget(t, indices, indices64, s);
            if (at >= 0)
                y[at + j] = scatterCombine(r, y[at + j], updates[t * s.slice + j]);
        }
    }
}

__global__ void topKKernel(const float* x, float* values, std::int64_t* indices, TopKShape s, std::int64_t n)
{
    GRID_LOOP(r, n) topKRow(x, values, indices, s, r);
}

__global__ void recurrentStartKernel(RecurrentStep s, const float* initialH, const float* initialC, float* hs, float* cs, std::int64_t n)
{
    GRID_LOOP(i, n) recurrentStartElement(s, initialH, initialC, hs, cs, i / s.hidden, i % s.hidden);
}

__global__ void gruResetKernel(RecurrentStep s, float* masked, const float* xw, const float* hr, const float* bias, const std::int32_t* lengths,
    const float* hs, std::int64_t n)
{
    GRID_LOOP(i, n) masked[i] = gruResetElement(s, xw, hr, bias, lengths, hs, i / s.hidden, i % s.hidden);
}

__global__ void recurrentCellKernel(RecurrentStep s, const float* xw, const float* hr, const float* rh, const float* bias, const float* peep,
    const std::int32_t* lengths, float* hs, float* cs, float* y, float* yh, float* yc, std::int64_t n)
{
    GRID_LOOP(i, n) recurrentCellElement(s, xw, hr, rh, bias, peep, lengths, hs, cs, y, yh, yc, i / s.hidden, i % s.hidden);
}

} // namespace

cudaError_t binary(Binary op, float* y, const float* a, const float* b, const Broadcast& shape, std::int64_t n, cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(binaryKernel, n, stream, op, y, a, b, shape, n);
    return cudaGetLastError();
}

cudaError_t broadcastScaled(float* y, const float* a, float scale, const Broadcast& shape, std::int64_t n, cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(broadcastScaledKernel, n, stream, y, a, scale, shape, n);
    return cudaGetLastError();
}

cudaError_t unary(Unary op, float* y, const float* x, std::int64_t n, float alpha, float beta, cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(unaryKernel, n, stream, op, y, x, n, alpha, beta);
    return cudaGetLastError();
}

cudaError_t compare(Compare op, std::uint8_t* y, const void* a, const void* b, bool int64, const Broadcast& shape, std::int64_t n,
    cudaStream_t stream)
{
    if (n > 0 && int64)
        LAUNCH(compareKernel, n, stream, op, y, static_cast<const std::int64_t*>(a), static_cast<const std::int64_t*>(b), shape, n);
    else if (n > 0)
        LAUNCH(compareKernel, n, stream, op, y, static_cast<const float*>(a), static_cast<const float*>(b), shape, n);
    return cudaGetLastError();
}

cudaError_t special(std::uint8_t* y, const float* x, bool inf, bool negative, bool positive, std::int64_t n, cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(specialKernel, n, stream, y, x, inf, negative, positive, n);
    return cudaGetLastError();
}

cudaError_t logicalNot(std::uint8_t* y, const std::uint8_t* x, std::int64_t n, cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(notKernel, n, stream, y, x, n);
    return cudaGetLastError();
}

cudaError_t where(void* y, const std::uint8_t* condition, const void* a, const void* b, int elementBytes, const Broadcast& shape,
    std::int64_t n, cudaStream_t stream)
{
    return byWidth(elementBytes, [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        if (n > 0)
            LAUNCH(whereKernel, n, stream, static_cast<T*>(y), condition, static_cast<const T*>(a), static_cast<const T*>(b), shape, n);
    });
}

cudaError_t cast(Scalar from, const void* x, Scalar to, void* y, std::int64_t n, cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(castKernel, n, stream, from, x, to, y, n);
    return cudaGetLastError();
}

cudaError_t quantize(const float* x, const float* scale, const void* zeroPoint, Scalar type, void* y, const QuantAxis& axis, std::int64_t n,
    cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(quantizeKernel, n, stream, x, scale, zeroPoint, type, y, axis, n);
    return cudaGetLastError();
}

cudaError_t dynamicRange(const float* x, std::int64_t n, float* scale, std::uint8_t* zeroPoint, cudaStream_t stream)
{
    LAUNCH(dynamicRangeKernel, 1, stream, x, n, scale, zeroPoint);
    return cudaGetLastError();
}

cudaError_t dequantize(Scalar type, const void* x, const float* scale, const void* zeroPoint, float* y, const QuantAxis& axis, std::int64_t n,
    cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(dequantizeKernel, n, stream, type, x, scale, zeroPoint, y, axis, n);
    return cudaGetLastError();
}

cudaError_t im2col(float* col, const float* x, const Window& w, cudaStream_t stream)
{
    const std::int64_t n = w.channels * w.kernelSize() * w.outPlane();
    if (n > 0)
        LAUNCH(im2colKernel, n, stream, col, x, w);
    return cudaGetLastError();
}

__global__ void groupedConvKernel(float* y, const float* x, const float* wt, const float* bias, Window w, std::int64_t groups,
    std::int64_t outChannels, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = groupedConvElement(x, wt, bias, w, groups, outChannels, i);
}

cudaError_t groupedConv(float* y, const float* x, const float* wt, const float* bias, const Window& w, std::int64_t groups,
    std::int64_t outChannels, std::int64_t n, cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(groupedConvKernel, n, stream, y, x, wt, bias, w, groups, outChannels, n);
    return cudaGetLastError();
}

cudaError_t addChannelBias(float* y, const float* bias, std::int64_t channels, std::int64_t inner, std::int64_t n, cudaStream_t stream)
{
    if (n > 0 && channels > 0 && inner > 0)
        LAUNCH(channelBiasKernel, n, stream, y, bias, channels, inner, n);
    return cudaGetLastError();
}

cudaError_t batchNorm(float* y, const float* x, const float* scale, const float* bias, const float* mean, const float* var, float epsilon,
    std::int64_t channels, std::int64_t inner, std::int64_t n, cudaStream_t stream)
{
    if (n > 0 && channels > 0 && inner > 0)
        LAUNCH(batchNormKernel, n, stream, y, x, scale, bias, mean, var, epsilon, channels, inner, n);
    return cudaGetLastError();
}

cudaError_t softmax(float* y, const float* x, std::int64_t outer, std::int64_t count, std::int64_t inner, bool log, cudaStream_t stream)
{
    if (outer * inner > 0 && count > 0)
        LAUNCH(softmaxKernel, outer * inner, stream, y, x, outer, count, inner, log);
    return cudaGetLastError();
}

cudaError_t layerNorm(float* y, const float* x, const float* scale, const float* bias, std::int64_t rows, std::int64_t inner, float epsilon,
    float* mean, float* invStdDev, cudaStream_t stream)
{
    if (rows > 0 && inner > 0)
        LAUNCH(layerNormKernel, rows, stream, y, x, scale, bias, rows, inner, epsilon, mean, invStdDev);
    return cudaGetLastError();
}

cudaError_t pool(bool max, float* y, const float* x, std::int64_t images, const Window& w, bool countIncludePad, cudaStream_t stream)
{
    const std::int64_t n = images * w.outPlane();
    if (n > 0)
        LAUNCH(poolKernel, n, stream, max, y, x, images, w, countIncludePad);
    return cudaGetLastError();
}

cudaError_t rowMean(float* y, const float* x, std::int64_t rows, std::int64_t inner, cudaStream_t stream)
{
    if (rows > 0 && inner > 0)
        LAUNCH(rowMeanKernel, rows, stream, y, x, rows, inner);
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
        LAUNCH(permuteKernel, n, stream, static_cast<std::uint32_t*>(y), static_cast<const std::uint32_t*>(x), d, n);
    else if (n > 0)
        LAUNCH(permuteKernel, n, stream, static_cast<std::uint64_t*>(y), static_cast<const std::uint64_t*>(x), d, n);
    return cudaGetLastError();
}

cudaError_t tile(void* y, const void* x, int elementBytes, int rank, const std::int64_t* outDims, const std::int64_t* inDims,
    const std::int64_t* inStride, std::int64_t n, cudaStream_t stream)
{
    if (rank < 1 || rank > kMaxRank)
        return cudaErrorInvalidValue;
    TileDims d {};
    d.rank = rank;
    for (int k = 0; k < rank; ++k) {
        d.dims[k] = outDims[k];
        d.inDims[k] = inDims[k];
        d.stride[k] = inStride[k];
    }
    return byWidth(elementBytes, [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        if (n > 0)
            LAUNCH(tileKernel, n, stream, static_cast<T*>(y), static_cast<const T*>(x), d, n);
    });
}

cudaError_t lrn(float* y, const float* x, const LrnShape& shape, std::int64_t n, cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(lrnKernel, n, stream, y, x, shape, n);
    return cudaGetLastError();
}

cudaError_t instanceNorm(float* y, const float* x, const float* scale, const float* bias, std::int64_t rows, std::int64_t channels,
    std::int64_t plane, float epsilon, cudaStream_t stream)
{
    if (rows > 0 && channels > 0 && plane > 0)
        LAUNCH(instanceNormKernel, rows, stream, y, x, scale, bias, rows, channels, plane, epsilon);
    return cudaGetLastError();
}

cudaError_t gather(void* y, const void* x, int elementBytes, const void* indices, bool indices64, std::int64_t outer, std::int64_t count,
    std::int64_t dim, std::int64_t inner, cudaStream_t stream)
{
    const std::int64_t n = outer * count * inner;
    if ((elementBytes != 4 && elementBytes != 8) || dim <= 0)
        return cudaErrorInvalidValue;
    if (n > 0 && elementBytes == 4)
        LAUNCH(gatherKernel, n, stream, static_cast<std::uint32_t*>(y), static_cast<const std::uint32_t*>(x), indices,
            indices64, outer, count, dim, inner);
    else if (n > 0)
        LAUNCH(gatherKernel, n, stream, static_cast<std::uint64_t*>(y), static_cast<const std::uint64_t*>(x), indices,
            indices64, outer, count, dim, inner);
    return cudaGetLastError();
}

cudaError_t pad(float* y, const float* x, const PadShape& shape, std::int64_t n, cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(padKernel, n, stream, y, x, shape, n);
    return cudaGetLastError();
}

cudaError_t resize(float* y, const float* x, const ResizeShape& shape, std::int64_t n, cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(resizeKernel, n, stream, y, x, shape, n);
    return cudaGetLastError();
}

cudaError_t reduce(float* y, const float* x, const ReduceShape& shape, std::int64_t n, cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(reduceKernel, n, stream, y, x, shape, n);
    return cudaGetLastError();
}

cudaError_t col2im(float* y, const float* col, const float* bias, const TransposedConv& shape, cudaStream_t stream)
{
    const std::int64_t n = shape.outChannels / shape.groups * shape.outPlane();
    if (n > 0)
        LAUNCH(col2imKernel, n, stream, y, col, bias, shape, n);
    return cudaGetLastError();
}

namespace {

__global__ void gridSampleKernel(float* y, const float* x, const float* grid, GridSampleShape s, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = gridSampleElement(s, x, grid, i);
}

__global__ void intMatMulKernel(IntMatMulShape s, const void* a, const void* b, const void* aZero, const void* bZero, const float* aScale,
    const float* bScale, const float* yScale, const void* yZero, void* y, std::int64_t n)
{
    GRID_LOOP(i, n) intMatMulElement(s, a, b, aZero, bZero, aScale, bScale, yScale, yZero, y, i);
}

__global__ void intConvKernel(IntConvShape s, const void* x, const void* w, const void* xZero, const void* wZero, const float* xScale,
    const float* wScale, const float* yScale, const void* yZero, const std::int32_t* bias, void* y, std::int64_t n)
{
    GRID_LOOP(i, n) intConvElement(s, x, w, xZero, wZero, xScale, wScale, yScale, yZero, bias, y, i);
}

__global__ void logicalKernel(Logical op, std::uint8_t* y, const std::uint8_t* a, const std::uint8_t* b, Broadcast s, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = logicalElement(op, a[sourceIndex(i, s.rank, s.dims, s.stride[0])], b[sourceIndex(i, s.rank, s.dims, s.stride[1])]);
}

template <class T>
__global__ void argExtremeKernel(std::int64_t* y, const T* x, std::int64_t extent, std::int64_t inner, bool max, bool last, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = argExtremeElement(x, i, extent, inner, max, last);
}

template <class T>
__global__ void cumSumKernel(T* y, const T* x, std::int64_t extent, std::int64_t inner, bool exclusive, bool reverse, std::int64_t rows)
{
    GRID_LOOP(r, rows) cumSumRow(y, x, r, extent, inner, exclusive, reverse);
}

template <class T>
__global__ void triluKernel(T* y, const T* x, std::int64_t rows, std::int64_t cols, std::int64_t k, bool upper, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = triluKeeps(i, rows, cols, k, upper) ? x[i] : T(0);
}

template <class T>
__global__ void gatherElementsKernel(T* y, const T* x, const void* indices, bool indices64, GatherElementsShape s, std::int64_t n)
{
    GRID_LOOP(i, n) y[i] = x[gatherElementsSource(i, indices, indices64, s)];
}

} // namespace

cudaError_t logical(Logical op, std::uint8_t* y, const std::uint8_t* a, const std::uint8_t* b, const Broadcast& shape, std::int64_t n,
    cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(logicalKernel, n, stream, op, y, a, b, shape, n);
    return cudaGetLastError();
}

cudaError_t argExtreme(std::int64_t* y, const void* x, bool int64, std::int64_t outer, std::int64_t extent, std::int64_t inner, bool max,
    bool last, cudaStream_t stream)
{
    const std::int64_t n = outer * inner;
    if (n > 0 && extent > 0 && int64)
        LAUNCH(argExtremeKernel, n, stream, y, static_cast<const std::int64_t*>(x), extent, inner, max, last, n);
    else if (n > 0 && extent > 0)
        LAUNCH(argExtremeKernel, n, stream, y, static_cast<const float*>(x), extent, inner, max, last, n);
    return cudaGetLastError();
}

cudaError_t cumSum(void* y, const void* x, Scalar type, std::int64_t outer, std::int64_t extent, std::int64_t inner, bool exclusive,
    bool reverse, cudaStream_t stream)
{
    const std::int64_t rows = outer * inner;
    if (rows <= 0)
        return cudaGetLastError();
    switch (type) {
    case Scalar::Float32:
        LAUNCH(cumSumKernel, rows, stream, static_cast<float*>(y), static_cast<const float*>(x), extent, inner, exclusive, reverse, rows);
        break;
    case Scalar::Float64:
        LAUNCH(cumSumKernel, rows, stream, static_cast<double*>(y), static_cast<const double*>(x), extent, inner, exclusive, reverse, rows);
        break;
    case Scalar::Int32:
        LAUNCH(cumSumKernel, rows, stream, static_cast<std::int32_t*>(y), static_cast<const std::int32_t*>(x), extent, inner, exclusive,
            reverse, rows);
        break;
    case Scalar::Int64:
        LAUNCH(cumSumKernel, rows, stream, static_cast<std::int64_t*>(y), static_cast<const std::int64_t*>(x), extent, inner, exclusive,
            reverse, rows);
        break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

cudaError_t trilu(void* y, const void* x, int elementBytes, std::int64_t rows, std::int64_t cols, std::int64_t k, bool upper, std::int64_t n,
    cudaStream_t stream)
{
    return byWidth(elementBytes, [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        if (n > 0 && rows > 0 && cols > 0)
            LAUNCH(triluKernel, n, stream, static_cast<T*>(y), static_cast<const T*>(x), rows, cols, k, upper, n);
    });
}

cudaError_t gatherElements(void* y, const void* x, int elementBytes, const void* indices, bool indices64, const GatherElementsShape& shape,
    std::int64_t n, cudaStream_t stream)
{
    return byWidth(elementBytes, [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        if (n > 0)
            LAUNCH(gatherElementsKernel, n, stream, static_cast<T*>(y), static_cast<const T*>(x), indices, indices64, shape, n);
    });
}

cudaError_t hardmax(float* y, const float* x, std::int64_t outer, std::int64_t extent, std::int64_t inner, cudaStream_t stream)
{
    const std::int64_t rows = extent > 0 ? outer * inner : 0;
    if (rows > 0)
        LAUNCH(hardmaxKernel, rows, stream, y, x, extent, inner, rows);
    return cudaGetLastError();
}

cudaError_t oneHot(void* y, const void* indices, const void* values, int elementBytes, const OneHotShape& shape, std::int64_t n,
    cudaStream_t stream)
{
    return byWidth(elementBytes, [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        if (n > 0)
            LAUNCH(oneHotKernel, n, stream, static_cast<T*>(y), indices, static_cast<const T*>(values), shape, n);
    });
}

cudaError_t scatterElements(void* y, const void* updates, int elementBytes, const void* indices, bool indices64, const GatherElementsShape& shape,
    Reduction reduction, std::int64_t updateCount, cudaStream_t stream)
{
    const std::int64_t along = shape.idxDims[shape.axis], lines = along > 0 ? updateCount / along : 0;
    if (reduction != Reduction::None) {
        if (elementBytes != 4)
            return cudaErrorInvalidValue;
        if (lines > 0)
            LAUNCH(scatterElementsKernel, lines, stream, static_cast<float*>(y), static_cast<const float*>(updates), indices, indices64, shape,
                reduction, lines);
        return cudaGetLastError();
    }
    return byWidth(elementBytes, [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        if (lines > 0)
            LAUNCH(scatterElementsKernel, lines, stream, static_cast<T*>(y), static_cast<const T*>(updates), indices, indices64, shape, reduction,
                lines);
    });
}

cudaError_t gatherND(void* y, const void* x, int elementBytes, const std::int64_t* indices, const GatherNDShape& shape, std::int64_t n,
    cudaStream_t stream)
{
    return byWidth(elementBytes, [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        if (n > 0)
            LAUNCH(gatherNDKernel, n, stream, static_cast<T*>(y), static_cast<const T*>(x), indices, shape, n);
    });
}

cudaError_t scatterND(void* y, const void* updates, int elementBytes, const void* indices, bool indices64, const ScatterNDShape& shape,
    Reduction reduction, bool int64, cudaStream_t stream)
{
    if (reduction == Reduction::None)
        return byWidth(elementBytes, [&](auto* tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            const std::int64_t n = shape.tuples * shape.slice;
            if (n > 0)
                LAUNCH(scatterNDKernel, n, stream, static_cast<T*>(y), static_cast<const T*>(updates), indices, indices64, shape, n);
        });
    const std::int64_t n = shape.tuples > 0 ? shape.slice : 0;
    if (n > 0 && int64)
        LAUNCH(scatterNDReduceKernel, n, stream, static_cast<std::int64_t*>(y), static_cast<const std::int64_t*>(updates), indices, indices64, shape,
            reduction, n);
    else if (n > 0)
        LAUNCH(scatterNDReduceKernel, n, stream, static_cast<float*>(y), static_cast<const float*>(updates), indices, indices64, shape, reduction, n);
    return cudaGetLastError();
}

cudaError_t topK(const float* x, float* values, std::int64_t* indices, const TopKShape& shape, cudaStream_t stream)
{
    const std::int64_t n = shape.k > 0 ? shape.outer * shape.inner : 0;
    if (n > 0)
        LAUNCH(topKKernel, n, stream, x, values, indices, shape, n);
    return cudaGetLastError();
}

cudaError_t recurrentStart(const RecurrentStep& s, const float* initialH, const float* initialC, float* hs, float* cs, cudaStream_t stream)
{
    const std::int64_t n = s.batch * s.hidden;
    if (n > 0)
        LAUNCH(recurrentStartKernel, n, stream, s, initialH, initialC, hs, cs, n);
    return cudaGetLastError();
}

cudaError_t gruReset(const RecurrentStep& s, float* masked, const float* xw, const float* hr, const float* bias, const std::int32_t* lengths,
    const float* hs, cudaStream_t stream)
{
    const std::int64_t n = s.batch * s.hidden;
    if (n > 0)
        LAUNCH(gruResetKernel, n, stream, s, masked, xw, hr, bias, lengths, hs, n);
    return cudaGetLastError();
}

cudaError_t recurrentCell(const RecurrentStep& s, const float* xw, const float* hr, const float* rh, const float* bias, const float* peep,
    const std::int32_t* lengths, float* hs, float* cs, float* y, float* yh, float* yc, cudaStream_t stream)
{
    const std::int64_t n = s.batch * s.hidden;
    if (n > 0)
        LAUNCH(recurrentCellKernel, n, stream, s, xw, hr, rh, bias, peep, lengths, hs, cs, y, yh, yc, n);
    return cudaGetLastError();
}

cudaError_t gridSample(float* y, const float* x, const float* grid, const GridSampleShape& shape, std::int64_t n, cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(gridSampleKernel, n, stream, y, x, grid, shape, n);
    return cudaGetLastError();
}

cudaError_t intMatMul(const IntMatMulShape& shape, const void* a, const void* b, const void* aZero, const void* bZero, const float* aScale,
    const float* bScale, const float* yScale, const void* yZero, void* y, std::int64_t n, cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(intMatMulKernel, n, stream, shape, a, b, aZero, bZero, aScale, bScale, yScale, yZero, y, n);
    return cudaGetLastError();
}

cudaError_t intConv(const IntConvShape& shape, const void* x, const void* w, const void* xZero, const void* wZero, const float* xScale,
    const float* wScale, const float* yScale, const void* yZero, const std::int32_t* bias, void* y, std::int64_t n, cudaStream_t stream)
{
    if (n > 0)
        LAUNCH(intConvKernel, n, stream, shape, x, w, xZero, wZero, xScale, wScale, yScale, yZero, bias, y, n);
    return cudaGetLastError();
}

} // namespace gpu::kernels
