// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to gpu/: float32 device kernels behind plain launch functions, so that only kernels.cu
// needs nvcc. Every launcher enqueues on `stream` and returns cudaGetLastError() (launch errors;
// execution errors surface at the next synchronising call). Sizes are element counts; all
// pointers are device pointers; n == 0 launches nothing.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpu::kernels {

constexpr int kMaxRank = 6;

// Broadcasting: for output element i (row-major over dims[0..rank)), operand k reads
// element sum_d index_d * stride[k][d] (stride 0 on a broadcast dimension).
struct Broadcast {
    int rank = 0;
    std::int64_t dims[kMaxRank] = {};
    std::int64_t stride[2][kMaxRank] = {};
};

enum class Binary { Add, Sub, Mul, Div, Pow };
enum class Unary { Relu, LeakyRelu, Sigmoid, Tanh, Clip, Erf, Gelu, GeluTanh, Sqrt, Exp };

cudaError_t binary(Binary op, float* y, const float* a, const float* b, const Broadcast& shape, std::int64_t n, cudaStream_t stream);
// y = scale * a (operand 0 of `shape`, broadcast); Gemm's bias.
cudaError_t broadcastScaled(float* y, const float* a, float scale, const Broadcast& shape, std::int64_t n, cudaStream_t stream);
// alpha: LeakyRelu slope or Clip lower bound; beta: Clip upper bound.
cudaError_t unary(Unary op, float* y, const float* x, std::int64_t n, float alpha, float beta, cudaStream_t stream);

struct Window { // a 2-D convolution or pooling window
    std::int64_t channels = 0, height = 0, width = 0, outHeight = 0, outWidth = 0;
    int kernelH = 1, kernelW = 1, strideH = 1, strideW = 1, padTop = 0, padLeft = 0, dilationH = 1, dilationW = 1;
    int padBottom = 0, padRight = 0; // pooling's divisor with count_include_pad
};
// col[c*kh*kw + i*kw + j][oh*OW + ow] from one image x[C][H][W]; zero outside the image.
cudaError_t im2col(float* col, const float* x, const Window& w, cudaStream_t stream);
// y[i] += bias[(i / inner) % channels] for i < n.
cudaError_t addChannelBias(float* y, const float* bias, std::int64_t channels, std::int64_t inner, std::int64_t n, cudaStream_t stream);
// Inference batch normalisation over channel (i / inner) % channels.
cudaError_t batchNorm(float* y, const float* x, const float* scale, const float* bias, const float* mean, const float* var, float epsilon,
    std::int64_t channels, std::int64_t inner, std::int64_t n, cudaStream_t stream);
// Softmax over the middle dimension of [outer][count][inner].
cudaError_t softmax(float* y, const float* x, std::int64_t outer, std::int64_t count, std::int64_t inner, cudaStream_t stream);
// Layer normalisation of each of `rows` rows of `inner` elements; bias may be null.
cudaError_t layerNorm(float* y, const float* x, const float* scale, const float* bias, std::int64_t rows, std::int64_t inner, float epsilon,
    cudaStream_t stream);
// Max or average pooling of `images` planes [H][W]; window.channels unused.
cudaError_t pool(bool max, float* y, const float* x, std::int64_t images, const Window& w, bool countIncludePad, cudaStream_t stream);
// y[r] = mean of x[r][0..inner).
cudaError_t rowMean(float* y, const float* x, std::int64_t rows, std::int64_t inner, cudaStream_t stream);
// Permutes elements of 4 or 8 bytes: output element i (row-major over outDims) reads input element
// sum_d index_d * inStride[d] (the input strides taken in the permuted order).
cudaError_t permute(void* y, const void* x, int elementBytes, int rank, const std::int64_t* outDims, const std::int64_t* inStride,
    std::int64_t n, cudaStream_t stream);

// Gather along one axis of x viewed as [outer][dim][inner] with `count` indices (int64, else int32);
// an index outside [0, dim) wraps, as on the CPU. Elements of 4 or 8 bytes.
cudaError_t gather(void* y, const void* x, int elementBytes, const void* indices, bool indices64, std::int64_t outer, std::int64_t count,
    std::int64_t dim, std::int64_t inner, cudaStream_t stream);

} // namespace gpu::kernels
