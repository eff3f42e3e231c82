// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to gpu/: device kernels (float32, but for comparisons, logical ops, Where, Cast, quantization and the index ops) behind plain
// launch functions, so that only kernels.cu needs nvcc. Every launcher enqueues on `stream` and
// returns cudaGetLastError() (launch errors; execution errors surface at the next synchronising
// call). Sizes are element counts; all pointers are device pointers; n == 0 launches nothing.

#include "elementmath.h"
#include "indexmath.h"
#include "integermath.h"
#include "recurrentmath.h"
#include "samplemath.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpu::kernels {

// Shapes, enums and the per-element math: elementmath.h.

cudaError_t binary(Binary op, float* y, const float* a, const float* b, const Broadcast& shape, std::int64_t n, cudaStream_t stream);
// y = scale * a (operand 0 of `shape`, broadcast); Gemm's bias.
cudaError_t broadcastScaled(float* y, const float* a, float scale, const Broadcast& shape, std::int64_t n, cudaStream_t stream);
// alpha and beta: unaryElement's parameters.
cudaError_t unary(Unary op, float* y, const float* x, std::int64_t n, float alpha, float beta, cudaStream_t stream);

// y = a <op> b as bool bytes (0 or 1) over float32 operands, or int64 ones with `int64`.
cudaError_t compare(Compare op, std::uint8_t* y, const void* a, const void* b, bool int64, const Broadcast& shape, std::int64_t n,
    cudaStream_t stream);
// IsNaN / IsInf of float32 x into bool bytes (specialElement).
cudaError_t special(std::uint8_t* y, const float* x, bool inf, bool negative, bool positive, std::int64_t n, cudaStream_t stream);
// y = !x over bool bytes.
cudaError_t logicalNot(std::uint8_t* y, const std::uint8_t* x, std::int64_t n, cudaStream_t stream);
// y = condition ? a : b, operands 0, 1, 2 of `shape`; elements of 1, 2, 4 or 8 bytes.
cudaError_t where(void* y, const std::uint8_t* condition, const void* a, const void* b, int elementBytes, const Broadcast& shape,
    std::int64_t n, cudaStream_t stream);
// y = x converted element by element (castElement).
cudaError_t cast(Scalar from, const void* x, Scalar to, void* y, std::int64_t n, cudaStream_t stream);
// QuantizeLinear (quantizeElement) of float32 x into y of `type` (uint8, int8) and DequantizeLinear
// (dequantizeElement) of x of `type` (uint8, int8, int32) into float32 y; scale and zero point
// (may be null) hold axis.channels entries.
cudaError_t quantize(const float* x, const float* scale, const void* zeroPoint, Scalar type, void* y, const QuantAxis& axis, std::int64_t n,
    cudaStream_t stream);
// DynamicQuantizeLinear's scale and zero point of float32 x[n] (dynamicRange, one thread).
cudaError_t dynamicRange(const float* x, std::int64_t n, float* scale, std::uint8_t* zeroPoint, cudaStream_t stream);
cudaError_t dequantize(Scalar type, const void* x, const float* scale, const void* zeroPoint, float* y, const QuantAxis& axis, std::int64_t n,
    cudaStream_t stream);

// col[c*kh*kw + i*kw + j][oh*OW + ow] from one image x[C][H][W]; zero outside the image.
cudaError_t im2col(float* col, const float* x, const Window& w, cudaStream_t stream);
// y (n elements) = groupedConvElement for each; bias may be null.
cudaError_t groupedConv(float* y, const float* x, const float* wt, const float* bias, const Window& w, std::int64_t groups,
    std::int64_t outChannels, std::int64_t n, cudaStream_t stream);
// y[i] += bias[(i / inner) % channels] for i < n.
cudaError_t addChannelBias(float* y, const float* bias, std::int64_t channels, std::int64_t inner, std::int64_t n, cudaStream_t stream);
// Inference batch normalisation over channel (i / inner) % channels.
cudaError_t batchNorm(float* y, const float* x, const float* scale, const float* bias, const float* mean, const float* var, float epsilon,
    std::int64_t channels, std::int64_t inner, std::int64_t n, cudaStream_t stream);
// Softmax (log: LogSoftmax) over the middle dimension of [outer][count][inner].
cudaError_t softmax(float* y, const float* x, std::int64_t outer, std::int64_t count, std::int64_t inner, bool log, cudaStream_t stream);
// Layer normalisation of each of `rows` rows of `inner` elements; bias may be null. Each row's
// mean and 1 / standard deviation go to mean[r] and invStdDev[r] where those are not null.
cudaError_t layerNorm(float* y, const float* x, const float* scale, const float* bias, std::int64_t rows, std::int64_t inner, float epsilon,
    float* mean, float* invStdDev, cudaStream_t stream);
// Max or average pooling of `images` volumes [D][H][W]; window.channels unused.
cudaError_t pool(bool max, float* y, const float* x, std::int64_t images, const Window& w, bool countIncludePad, cudaStream_t stream);
// y[r] = mean of x[r][0..inner).
cudaError_t rowMean(float* y, const float* x, std::int64_t rows, std::int64_t inner, cudaStream_t stream);
// Permutes elements of 4 or 8 bytes: output element i (row-major over outDims) reads input element
// sum_d index_d * inStride[d] (the input strides taken in the permuted order).
cudaError_t permute(void* y, const void* x, int elementBytes, int rank, const std::int64_t* outDims, const std::int64_t* inStride,
    std::int64_t n, cudaStream_t stream);
// Expand and Tile (tileSource): elements of 1, 2, 4 or 8 bytes.
cudaError_t tile(void* y, const void* x, int elementBytes, int rank, const std::int64_t* outDims, const std::int64_t* inDims,
    const std::int64_t* inStride, std::int64_t n, cudaStream_t stream);
// LRN of n elements (lrnElement).
cudaError_t lrn(float* y, const float* x, const LrnShape& shape, std::int64_t n, cudaStream_t stream);
// InstanceNormalization of rows = images × channels planes of `plane` elements.
cudaError_t instanceNorm(float* y, const float* x, const float* scale, const float* bias, std::int64_t rows, std::int64_t channels,
    std::int64_t plane, float epsilon, cudaStream_t stream);

// Gather along one axis of x viewed as [outer][dim][inner] with `count` indices (int64, else int32);
// an index outside [0, dim) wraps, as on the CPU. Elements of 4 or 8 bytes.
cudaError_t gather(void* y, const void* x, int elementBytes, const void* indices, bool indices64, std::int64_t outer, std::int64_t count,
    std::int64_t dim, std::int64_t inner, cudaStream_t stream);

// Pad, Resize and the reductions (ReduceShape::mode) of float32 tensors; n: output elements.
cudaError_t pad(float* y, const float* x, const PadShape& shape, std::int64_t n, cudaStream_t stream);
cudaError_t resize(float* y, const float* x, const ResizeShape& shape, std::int64_t n, cudaStream_t stream);
cudaError_t reduce(float* y, const float* x, const ReduceShape& shape, std::int64_t n, cudaStream_t stream);
// One image's group of ConvTranspose outputs y_g from its columns (col2imElement); bias (the
// group's first channel's) may be null.
cudaError_t col2im(float* y, const float* col, const float* bias, const TransposedConv& shape, cudaStream_t stream);

// The index ops (indexmath.h). And/Or/Xor over bool bytes, operands 0 and 1 of `shape`.
cudaError_t logical(Logical op, std::uint8_t* y, const std::uint8_t* a, const std::uint8_t* b, const Broadcast& shape, std::int64_t n,
    cudaStream_t stream);
// ArgMax (max) or ArgMin of float32 x, or int64 x with `int64`, viewed as [outer][extent][inner]: y[outer][inner].
cudaError_t argExtreme(std::int64_t* y, const void* x, bool int64, std::int64_t outer, std::int64_t extent, std::int64_t inner, bool max,
    bool last, cudaStream_t stream);
// CumSum of x of `type` (float32, float64, int32, int64) along the middle dimension of [outer][extent][inner].
cudaError_t cumSum(void* y, const void* x, Scalar type, std::int64_t outer, std::int64_t extent, std::int64_t inner, bool exclusive,
    bool reverse, cudaStream_t stream);
// Trilu of n elements of 1, 2, 4 or 8 bytes over [...][rows][cols].
cudaError_t trilu(void* y, const void* x, int elementBytes, std::int64_t rows, std::int64_t cols, std::int64_t k, bool upper, std::int64_t n,
    cudaStream_t stream);
// GatherElements of n output elements of 1, 2, 4 or 8 bytes; indices int64, else int32.
cudaError_t gatherElements(void* y, const void* x, int elementBytes, const void* indices, bool indices64, const GatherElementsShape& shape,
    std::int64_t n, cudaStream_t stream);

// ScatterElements' updates into y (already a copy of data), one thread per line along the axis
// (scatterElementsIndex); reductions over float32 only.
cudaError_t scatterElements(void* y, const void* updates, int elementBytes, const void* indices, bool indices64, const GatherElementsShape& shape,
    Reduction reduction, std::int64_t updateCount, cudaStream_t stream);
// Hardmax, one thread per row (hardmaxRow).
cudaError_t hardmax(float* y, const float* x, std::int64_t outer, std::int64_t extent, std::int64_t inner, cudaStream_t stream);
// OneHot of n output elements of 1, 2, 4 or 8 bytes; values: [off, on] on the device.
cudaError_t oneHot(void* y, const void* indices, const void* values, int elementBytes, const OneHotShape& shape, std::int64_t n,
    cudaStream_t stream);
// GatherND of n output elements of 1, 2, 4 or 8 bytes (gatherNDSource).
cudaError_t gatherND(void* y, const void* x, int elementBytes, const std::int64_t* indices, const GatherNDShape& shape, std::int64_t n,
    cudaStream_t stream);
// ScatterND's updates into y (already a copy of data): without reduction one thread per update
// element (any width); with one, one thread per slice element running through the tuples in order,
// so repeated tuples combine in the CPU kernel's order (float32, else int64 with `int64`).
cudaError_t scatterND(void* y, const void* updates, int elementBytes, const void* indices, bool indices64, const ScatterNDShape& shape,
    Reduction reduction, bool int64, cudaStream_t stream);
// TopK, one thread per row (topKRow).
cudaError_t topK(const float* x, float* values, std::int64_t* indices, const TopKShape& shape, cudaStream_t stream);

// RNN, GRU and LSTM, one direction's step s.step at a time (recurrentmath.h); n = s.batch * s.hidden.
// The state hs, cs from initial_h, initial_c (each may be null).
cudaError_t recurrentStart(const RecurrentStep& s, const float* initialH, const float* initialC, float* hs, float* cs, cudaStream_t stream);
// masked = r ⊙ H (gruResetElement), for the GEMM with Rh that follows.
cudaError_t gruReset(const RecurrentStep& s, float* masked, const float* xw, const float* hr, const float* bias, const std::int32_t* lengths,
    const float* hs, cudaStream_t stream);
// The gates of the step (recurrentCellElement).
cudaError_t recurrentCell(const RecurrentStep& s, const float* xw, const float* hr, const float* rh, const float* bias, const float* peep,
    const std::int32_t* lengths, float* hs, float* cs, float* y, float* yh, float* yc, cudaStream_t stream);

// GridSample (gridSampleElement) of x at grid into y, n output elements.
cudaError_t gridSample(float* y, const float* x, const float* grid, const GridSampleShape& shape, std::int64_t n, cudaStream_t stream);

// MatMulInteger / QLinearMatMul (intMatMulElement) and ConvInteger / QLinearConv (intConvElement)
// over n output elements; absent zero points, scales and bias may be null.
cudaError_t intMatMul(const IntMatMulShape& shape, const void* a, const void* b, const void* aZero, const void* bZero, const float* aScale,
    const float* bScale, const float* yScale, const void* yZero, void* y, std::int64_t n, cudaStream_t stream);
cudaError_t intConv(const IntConvShape& shape, const void* x, const void* w, const void* xZero, const void* wZero, const float* xScale,
    const float* wScale, const float* yScale, const void* yZero, const std::int32_t* bias, void* y, std::int64_t n, cudaStream_t stream);

} // namespace gpu::kernels
