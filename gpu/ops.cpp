// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Device ops: Gemm/MatMul/Einsum through cuBLAS (row-major operands handed to column-major cuBLAS as their
// transposes), Conv as im2col + cuBLAS per image and group, ConvTranspose as cuBLAS + col2im,
// BatchNormalization, Softmax and LogSoftmax, LayerNormalization, LRN, pooling, the view family (device-to-device
// copies), Transpose, Slice, Gather, Concat and Split (2-D strided copies). Elementwise ops:
// opselementwise.cpp; Pad, Resize, the reductions and GlobalMaxPool: opsresample.cpp; ArgMax, CumSum,
// Trilu, GatherElements and the logical ops: opsindex.cpp; RNN, GRU and LSTM: opsrecurrent.cpp.
#include "ops.h"

#include "cudacommon.h"
#include "kernels.h"
#include "opparams.h"
#include "opselementwise.h"
#include "opsindex.h"
#include "opsinteger.h"
#include "opsrecurrent.h"
#include "opsresample.h"

#include "exec/einsum.h"

#include <algorithm>
#include <map>

namespace gpu {

using core::exec::KernelCall;
using core::exec::Shape;
using core::exec::TensorView;

std::string cudaText(cudaError_t e) { return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")"; }

std::string cublasText(cublasStatus_t s) { return std::string(cublasGetStatusName(s)) + " (" + cublasGetStatusString(s) + ")"; }

Outcome launched(cudaError_t e, const char* what)
{
    if (e != cudaSuccess)
        return Outcome { true, std::string(what) + " failed: " + cudaText(e) };
    return {};
}

Outcome blasLaunched(cublasStatus_t s, const char* what)
{
    if (s != CUBLAS_STATUS_SUCCESS)
        return Outcome { true, std::string(what) + " failed: " + cublasText(s) };
    return {};
}

// Row-major operands handed to column-major cuBLAS as their transposes: C becomes Cᵀ = op(B)ᵀ·op(A)ᵀ.
cublasStatus_t gemmRowMajor(cublasHandle_t h, bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
    const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc)
{
    return cublasSgemm(h, transB ? CUBLAS_OP_T : CUBLAS_OP_N, transA ? CUBLAS_OP_T : CUBLAS_OP_N, int(n), int(m), int(k), &alpha, b, int(ldb),
        a, int(lda), &beta, c, int(ldc));
}

bool hostArguments(const DeviceCall& d, std::initializer_list<std::size_t> slots, KernelCall& host)
{
    host = d.call;
    for (const auto k : slots) {
        if (k >= host.in.size() || !host.in[k].present() || host.in[k].count == 0)
            continue;
        if (k >= d.hostContents.size() || !d.hostContents[k])
            return false;
        host.in[k].data = const_cast<std::byte*>(d.hostContents[k]);
    }
    return true;
}

namespace {

bool ok(cudaError_t e) { return e == cudaSuccess; }
bool ok(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS; }
std::string text(cudaError_t e) { return cudaText(e); }
std::string text(cublasStatus_t s) { return cublasText(s); }

// Every CUDA/cuBLAS call in an op: its failure becomes the op's Outcome naming the call.
#define DEVICE_CHECK(expr)                                                                                                                 \
    do {                                                                                                                                   \
        const auto status_ = (expr);                                                                                                       \
        if (!ok(status_))                                                                                                                  \
            return Outcome { true, calledFunction(#expr) + " failed: " + text(status_) };                                                      \
    } while (0)

const Outcome kUnsupported { false, {} };



// A scalar input from the host copy of a weight; false when the input is an activation.
bool hostScalar(const DeviceCall& d, std::size_t slot, float& value)
{
    if (!d.call.has(slot))
        return true;
    if (slot >= d.hostContents.size() || !d.hostContents[slot] || d.call.in[slot].count != 1 || d.call.in[slot].dtype != core::DType::Float32)
        return false;
    value = *reinterpret_cast<const float*>(d.hostContents[slot]);
    return true;
}

// Dropout that drops nothing, as the CPU kernel decides it: inference, or training at ratio 0 (read
// from the weights' host copies); false when that cannot be told without reading the device.
bool dropsNothing(const DeviceCall& d)
{
    const auto& c = d.call;
    bool training = c.attrInt("training_mode", 0) != 0;
    if (c.has(2)) {
        if (d.hostContents.size() < 3 || !d.hostContents[2] || c.in[2].count != 1 || c.in[2].dtype != core::DType::Bool)
            return false;
        training = training || *d.hostContents[2] != std::byte(0);
    }
    float ratio = c.attrFloat("ratio", 0.5f);
    return !training || (hostScalar(d, 1, ratio) && ratio == 0.0f);
}

// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout dropping nothing (its mask all true): the input's bytes.
Outcome view(const DeviceCall& d)
{
    const auto& c = d.call;
    if (!c.has(0) || c.out.empty() || c.in[0].dtype != c.out[0].dtype || c.in[0].count != c.out[0].count)
        return kUnsupported;
    const bool dropout = c.op->type == "Dropout";
    if (dropout && (c.out.size() > 2 || !dropsNothing(d) || (c.out.size() == 2 && c.out[1].dtype != core::DType::Bool)))
        return kUnsupported;
    if (c.out[0].data != c.in[0].data) // an alias strategy may give the view its input's own buffer
        DEVICE_CHECK(cudaMemcpyAsync(c.out[0].data, c.in[0].data, std::size_t(c.out[0].bytes()), cudaMemcpyDeviceToDevice, d.stream));
    if (dropout && c.out.size() == 2 && c.out[1].data)
        DEVICE_CHECK(cudaMemsetAsync(c.out[1].data, 1, std::size_t(c.out[1].bytes()), d.stream));
    return {};
}

Outcome gemm(const DeviceCall& d)
{
    const auto& c = d.call;
    if (!c.allFloat() || c.out.size() != 1 || !c.has(1) || c.in[0].rank() != 2 || c.in[1].rank() != 2 || c.out[0].rank() != 2)
        return kUnsupported;
    const bool ta = c.attrInt("transA", 0) != 0, tb = c.attrInt("transB", 0) != 0;
    const auto &a = c.in[0], &b = c.in[1], &y = c.out[0];
    const std::int64_t m = y.shape[0], n = y.shape[1], k = ta ? a.shape[0] : a.shape[1];
    if ((ta ? a.shape[1] : a.shape[0]) != m || (tb ? b.shape[0] : b.shape[1]) != n || (tb ? b.shape[1] : b.shape[0]) != k
        || !fitsInt(m) || !fitsInt(n) || !fitsInt(k))
        return kUnsupported;
    const float alpha = c.attrFloat("alpha", 1.0f), beta = c.attrFloat("beta", 1.0f);
    float gemmBeta = 0;
    if (c.has(2) && beta != 0) {
        kernels::Broadcast s;
        if (!broadcastShape(y, { &c.in[2] }, s))
            return kUnsupported;
        DEVICE_CHECK(kernels::broadcastScaled(y.f32(), c.in[2].f32(), beta, s, y.count, d.stream));
        gemmBeta = 1;
    }
    DEVICE_CHECK(gemmRowMajor(d.blas, ta, tb, m, n, k, alpha, a.f32(), a.shape[1], b.f32(), b.shape[1], gemmBeta, y.f32(), n));
    return {};
}

// MatMul: 2-D, a batched A times a 2-D B (folded into one GEMM), or equal batch dimensions (strided batched).
Outcome matMul(const DeviceCall& d)
{
    const auto& c = d.call;
    if (!c.allFloat() || c.out.size() != 1 || !c.has(1))
        return kUnsupported;
    const auto &a = c.in[0], &b = c.in[1], &y = c.out[0];
    if (a.rank() < 2 || b.rank() < 2 || y.rank() != std::max(a.rank(), b.rank()))
        return kUnsupported;
    const std::int64_t m = a.shape[a.rank() - 2], k = a.shape[a.rank() - 1], n = b.shape[b.rank() - 1];
    if (b.shape[b.rank() - 2] != k || y.shape[y.rank() - 2] != m || y.shape[y.rank() - 1] != n || !fitsInt(m) || !fitsInt(n) || !fitsInt(k))
        return kUnsupported;
    const std::int64_t batchA = a.count / std::max<std::int64_t>(1, m * k), batchB = b.count / std::max<std::int64_t>(1, k * n);
    const std::int64_t batchY = y.count / std::max<std::int64_t>(1, m * n);
    if (b.rank() == 2 && batchA == batchY && fitsInt(batchA * m)) {
        DEVICE_CHECK(gemmRowMajor(d.blas, false, false, batchA * m, n, k, 1.0f, a.f32(), k, b.f32(), n, 0.0f, y.f32(), n));
        return {};
    }
    if (a.rank() != b.rank() || batchA != batchB || batchA != batchY || !std::equal(a.shape.begin(), a.shape.end() - 2, b.shape.begin())
        || !fitsInt(batchA))
        return kUnsupported;
    const float alpha = 1, beta = 0;
    DEVICE_CHECK(cublasSgemmStridedBatched(d.blas, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(m), int(k), &alpha, b.f32(), int(n), k * n, a.f32(),
        int(k), m * k, &beta, y.f32(), int(n), m * n, int(batchA)));
    return {};
}

// Einsum that is one batched GEMM of its operands as stored (core::exec::einsumAsGemm: attention's
// "bhid,bhjd->bhij" and "bhij,bhjd->bhid", transposed operands, the output's free labels in either
// order). Other equations (diagonals, broadcasts, three operands) run on the host.
Outcome einsum(const DeviceCall& d)
{
    const auto& c = d.call;
    if (!c.allFloat() || c.in.size() != 2 || c.out.size() != 1 || !c.has(0) || !c.has(1))
        return kUnsupported;
    core::exec::EinsumLabels e;
    core::exec::EinsumGemm g;
    if (!core::exec::einsumLabels(c.attrText("equation"), { c.in[0].shape, c.in[1].shape }, c.out[0].shape, e) || !core::exec::einsumAsGemm(e, g)
        || g.k == 0 || !fitsInt(g.m) || !fitsInt(g.n) || !fitsInt(g.k) || !fitsInt(g.batch))
        return kUnsupported;
    if (c.out[0].count == 0)
        return {};
    const auto &a = c.in[std::size_t(g.a)], &b = c.in[std::size_t(g.b)];
    const float alpha = 1, beta = 0;
    // Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ.
    DEVICE_CHECK(cublasSgemmStridedBatched(d.blas, g.transB ? CUBLAS_OP_T : CUBLAS_OP_N, g.transA ? CUBLAS_OP_T : CUBLAS_OP_N, int(g.n), int(g.m),
        int(g.k), &alpha, b.f32(), int(g.transB ? g.k : g.n), g.k * g.n, a.f32(), int(g.transA ? g.m : g.k), g.m * g.k, &beta, c.out[0].f32(),
        int(g.n), g.m * g.n, int(g.batch)));
    return {};
}


struct ConvShape {
    kernels::Window w;
    std::int64_t batch = 0, outChannels = 0, groups = 1, k = 0; // k: rows of the im2col matrix per group
};

bool convShape(const KernelCall& c, ConvShape& s)
{
    if (!c.allFloat() || c.out.size() != 1 || !c.has(1))
        return false;
    const auto &x = c.in[0], &wt = c.in[1], &y = c.out[0];
    if (x.rank() < 3 || wt.rank() != x.rank() || !window(c, x, y, Shape(wt.shape.begin() + 2, wt.shape.end()), s.w))
        return false;
    s.groups = c.attrInt("group", 1);
    s.batch = x.shape[0];
    s.outChannels = y.shape[1];
    const std::int64_t inChannels = x.shape[1];
    if (s.groups < 1 || inChannels % s.groups || s.outChannels % s.groups || wt.shape[0] != s.outChannels
        || wt.shape[1] * s.groups != inChannels || y.shape[0] != s.batch)
        return false;
    if (c.has(2) && c.in[2].count != s.outChannels)
        return false;
    s.w.channels = inChannels / s.groups;
    s.k = s.w.channels * s.w.kernelSize();
    return fitsInt(s.k) && fitsInt(s.w.outPlane());
}

// Per image and group: columns = im2col(x), y = W_g · columns; then the bias per channel. A direct
// convolution (1x1, stride 1, no padding) multiplies x itself, as the CPU kernel does, so both
// executors need the same columns: core::exec::convColumnFloats, the size of the planned workspace
// or the run's scratch. Should the two ever disagree, the op runs on the host instead. A grouped
// convolution with few products per output (depthwise) runs directly and leaves the workspace unused.
Outcome conv(const DeviceCall& d)
{
    const auto& c = d.call;
    ConvShape s;
    if (!convShape(c, s))
        return kUnsupported;
    if (kernels::directGroupedConv(s.groups, s.k)) {
        DEVICE_CHECK(kernels::groupedConv(c.out[0].f32(), c.in[0].f32(), c.in[1].f32(), c.has(2) ? c.in[2].f32() : nullptr, s.w, s.groups,
            s.outChannels, c.out[0].count, d.stream));
        return {};
    }
    const std::int64_t plane = s.w.outPlane(), inPlane = s.w.inPlane();
    const std::int64_t mg = s.outChannels / s.groups;
    const bool direct = s.w.kernelSize() == 1 && s.w.strideD == 1 && s.w.strideH == 1 && s.w.strideW == 1 && s.w.padFront == 0 && s.w.padTop == 0
        && s.w.padLeft == 0 && s.w.padBack == 0 && s.w.padBottom == 0 && s.w.padRight == 0 && plane == inPlane;
    const std::int64_t columns = core::exec::convColumnFloats(c);
    if (direct ? columns != 0 : (columns != s.k * plane || !d.scratch))
        return kUnsupported;
    for (std::int64_t n = 0; n < s.batch; ++n)
        for (std::int64_t g = 0; g < s.groups; ++g) {
            const float* x = c.in[0].f32() + (n * s.groups + g) * s.w.channels * inPlane;
            if (!direct)
                DEVICE_CHECK(kernels::im2col(d.scratch, x, s.w, d.stream));
            const float* columns = direct ? x : d.scratch;
            float* y = c.out[0].f32() + (n * s.outChannels + g * mg) * plane;
            DEVICE_CHECK(gemmRowMajor(d.blas, false, false, mg, plane, s.k, 1.0f, c.in[1].f32() + g * mg * s.k, s.k, columns, plane, 0.0f, y, plane));
        }
    if (c.has(2))
        DEVICE_CHECK(kernels::addChannelBias(c.out[0].f32(), c.in[2].f32(), s.outChannels, plane, c.out[0].count, d.stream));
    return {};
}

// Per group: Wᵀ_g into the workspace (once), then per image the columns after it, Wᵀ_g · x_g through
// cuBLAS, and col2im into y_g with the bias. The same workspace as the CPU kernel
// (core::exec::ownWorkspaceFloats: transposed weights, then columns), planned or the run's scratch.
Outcome convTranspose(const DeviceCall& d)
{
    const auto& c = d.call;
    kernels::TransposedConv s;
    if (!transposedConvShape(c, s))
        return kUnsupported;
    const std::int64_t cg = s.inChannels / s.groups, mg = s.outChannels / s.groups, rows = mg * s.kernelSize();
    const std::int64_t inPlane = s.inPlane(), outPlane = s.outPlane();
    if (core::exec::ownWorkspaceFloats(c) != rows * cg + rows * inPlane || !d.scratch || !fitsInt(rows) || !fitsInt(cg) || !fitsInt(inPlane))
        return kUnsupported;
    float* wt = d.scratch;
    float* col = d.scratch + rows * cg;
    const std::int64_t dims[2] = { rows, cg }, strides[2] = { 1, rows };
    for (std::int64_t g = 0; g < s.groups; ++g) {
        DEVICE_CHECK(kernels::permute(wt, c.in[1].f32() + g * cg * rows, 4, 2, dims, strides, rows * cg, d.stream));
        for (std::int64_t n = 0; n < s.batch; ++n) {
            const float* x = c.in[0].f32() + (n * s.inChannels + g * cg) * inPlane;
            DEVICE_CHECK(gemmRowMajor(d.blas, false, false, rows, inPlane, cg, 1.0f, wt, cg, x, inPlane, 0.0f, col, inPlane));
            float* y = c.out[0].f32() + (n * s.outChannels + g * mg) * outPlane;
            DEVICE_CHECK(kernels::col2im(y, col, c.has(2) ? c.in[2].f32() + g * mg : nullptr, s, d.stream));
        }
    }
    return {};
}

Outcome batchNorm(const DeviceCall& d)
{
    const auto& c = d.call;
    if (!c.allFloat() || c.out.size() != 1 || c.attrInt("training_mode", 0) != 0 || c.in.size() < 5 || c.in[0].rank() < 2)
        return kUnsupported;
    const auto& x = c.in[0];
    const std::int64_t ch = x.shape[1], inner = x.count / std::max<std::int64_t>(1, x.shape[0] * ch);
    for (int i = 1; i < 5; ++i)
        if (!c.has(i) || c.in[i].count != ch)
            return kUnsupported;
    DEVICE_CHECK(kernels::batchNorm(c.out[0].f32(), x.f32(), c.in[1].f32(), c.in[2].f32(), c.in[3].f32(), c.in[4].f32(),
        c.attrFloat("epsilon", 1e-5f), ch, inner, x.count, d.stream));
    return {};
}

template <bool Log>
Outcome softmax(const DeviceCall& d)
{
    const auto& c = d.call;
    RowParams p;
    if (!softmaxParams(c, p))
        return kUnsupported;
    DEVICE_CHECK(kernels::softmax(c.out[0].f32(), c.in[0].f32(), p.outer, p.count, p.inner, Log, d.stream));
    return {};
}

Outcome instanceNorm(const DeviceCall& d)
{
    const auto& c = d.call;
    std::int64_t channels = 0, plane = 0;
    if (!instanceNormParams(c, channels, plane))
        return kUnsupported;
    DEVICE_CHECK(kernels::instanceNorm(c.out[0].f32(), c.in[0].f32(), c.in[1].f32(), c.in[2].f32(), c.in[0].count / std::max<std::int64_t>(1, plane),
        channels, plane, c.attrFloat("epsilon", 1e-5f), d.stream));
    return {};
}

Outcome lrn(const DeviceCall& d)
{
    const auto& c = d.call;
    kernels::LrnShape s;
    if (!lrnParams(c, s))
        return kUnsupported;
    DEVICE_CHECK(kernels::lrn(c.out[0].f32(), c.in[0].f32(), s, c.out[0].count, d.stream));
    return {};
}

Outcome layerNorm(const DeviceCall& d)
{
    const auto& c = d.call;
    std::int64_t rows = 0, inner = 0;
    if (!layerNormParams(c, rows, inner))
        return kUnsupported;
    auto statistic = [&](std::size_t k) { return k < c.out.size() && c.out[k].present() ? c.out[k].f32() : nullptr; };
    DEVICE_CHECK(kernels::layerNorm(c.out[0].f32(), c.in[0].f32(), c.in[1].f32(), c.has(2) ? c.in[2].f32() : nullptr, rows, inner,
        c.attrFloat("epsilon", 1e-5f), statistic(1), statistic(2), d.stream));
    return {};
}

template <bool Max>
Outcome pool(const DeviceCall& d)
{
    const auto& c = d.call;
    const auto* kernel = c.attrInts("kernel_shape");
    kernels::Window w;
    if (!c.allFloat() || c.out.size() != 1 || !kernel || c.attrInt("storage_order", 0) != 0 || c.in[0].rank() < 3
        || !window(c, c.in[0], c.out[0], *kernel, w) || c.in[0].shape[0] != c.out[0].shape[0] || c.in[0].shape[1] != c.out[0].shape[1])
        return kUnsupported;
    DEVICE_CHECK(kernels::pool(Max, c.out[0].f32(), c.in[0].f32(), c.in[0].shape[0] * c.in[0].shape[1], w,
        c.attrInt("count_include_pad", 0) != 0, d.stream));
    return {};
}

Outcome globalAveragePool(const DeviceCall& d)
{
    const auto& c = d.call;
    if (!c.allFloat() || c.out.size() != 1 || c.in[0].rank() < 3)
        return kUnsupported;
    const std::int64_t rows = c.in[0].shape[0] * c.in[0].shape[1];
    if (c.out[0].count != rows)
        return kUnsupported;
    DEVICE_CHECK(kernels::rowMean(c.out[0].f32(), c.in[0].f32(), rows, c.in[0].count / std::max<std::int64_t>(1, rows), d.stream));
    return {};
}

// Transpose, DepthToSpace and SpaceToDepth: one permutation kernel.
Outcome transpose(const DeviceCall& d)
{
    const auto& c = d.call;
    PermuteParams p;
    if (!(c.op->type == "Transpose" ? permuteParams(c, p) : depthSpaceParams(c, p)))
        return kUnsupported;
    DEVICE_CHECK(kernels::permute(c.out[0].data, c.in[0].data, p.bytes, p.rank, p.outDims, p.inStride, c.out[0].count, d.stream));
    return {};
}

// Expand and Tile: one index kernel; the shape or repeats input is not read (y's shape says it all).
Outcome tile(const DeviceCall& d)
{
    const auto& c = d.call;
    TileParams p;
    if (!tileParams(c, p))
        return kUnsupported;
    DEVICE_CHECK(kernels::tile(c.out[0].data, c.in[0].data, p.bytes, p.rank, c.out[0].shape.data(), p.inDims, p.inStride, c.out[0].count,
        d.stream));
    return {};
}

// Concat and Split: blocks of [outer][axis extent × inner] bytes moved with one 2-D copy each.
Outcome concat(const DeviceCall& d)
{
    const auto& c = d.call;
    const auto& y = c.out[0];
    if (c.out.size() != 1 || y.rank() == 0)
        return kUnsupported;
    const int axis = core::exec::normAxis(c.attrInt("axis", 0), y.rank());
    const auto bytes = core::dtypeBytes(y.dtype);
    std::int64_t outer = 1;
    for (int i = 0; i < axis; ++i)
        outer *= y.shape[std::size_t(i)];
    const std::int64_t rowBytes = y.count / std::max<std::int64_t>(1, outer) * bytes;
    std::int64_t at = 0, total = 0;
    for (const auto& x : c.in)
        total += x.count;
    if (total != y.count)
        return kUnsupported;
    for (const auto& x : c.in) {
        if (!x.present() || x.dtype != y.dtype || x.rank() != y.rank())
            return kUnsupported;
        if (x.count == 0)
            continue;
        const std::int64_t width = x.count / std::max<std::int64_t>(1, outer) * bytes;
        if (outer == 1 && x.data == y.data + at) { // already in its slice of the output (in-place Concat)
            at += width;
            continue;
        }
        DEVICE_CHECK(cudaMemcpy2DAsync(y.data + at, std::size_t(rowBytes), x.data, std::size_t(width), std::size_t(width), std::size_t(outer),
            cudaMemcpyDeviceToDevice, d.stream));
        at += width;
    }
    return {};
}

Outcome split(const DeviceCall& d)
{
    const auto& c = d.call;
    const auto& x = c.in[0];
    if (x.rank() == 0 || c.out.empty())
        return kUnsupported;
    const int axis = core::exec::normAxis(c.attrInt("axis", 0), x.rank());
    const auto bytes = core::dtypeBytes(x.dtype);
    std::int64_t outer = 1, total = 0;
    for (int i = 0; i < axis; ++i)
        outer *= x.shape[std::size_t(i)];
    for (const auto& y : c.out) {
        if (y.dtype != x.dtype || y.rank() != x.rank())
            return kUnsupported;
        total += y.count;
    }
    if (total != x.count)
        return kUnsupported;
    const std::int64_t rowBytes = x.count / std::max<std::int64_t>(1, outer) * bytes;
    std::int64_t at = 0;
    for (const auto& y : c.out) {
        if (y.count == 0)
            continue;
        const std::int64_t width = y.count / std::max<std::int64_t>(1, outer) * bytes;
        DEVICE_CHECK(cudaMemcpy2DAsync(y.data, std::size_t(width), x.data + at, std::size_t(rowBytes), std::size_t(width), std::size_t(outer),
            cudaMemcpyDeviceToDevice, d.stream));
        at += width;
    }
    return {};
}

// Gather: the CPU kernel's rule (indices wrap) for elements of 4 or 8 bytes.
Outcome gather(const DeviceCall& d)
{
    const auto& c = d.call;
    GatherParams p;
    if (!gatherParams(c, p))
        return kUnsupported;
    const auto& idx = c.in[1];
    DEVICE_CHECK(kernels::gather(c.out[0].data, c.in[0].data, p.bytes, idx.data, idx.dtype == core::DType::Int64, p.outer, idx.count, p.dim,
        p.inner, d.stream));
    return {};
}

// Slice with its starts/ends/axes/steps known on the host (weights); the CPU kernel's rule when no
// index needs clamping (always, for a valid model), a strided copy through the permute kernel.
Outcome slice(const DeviceCall& d)
{
    const auto& c = d.call;
    const auto &x = c.in[0], &y = c.out[0];
    const int rank = x.rank();
    const auto bytes = core::dtypeBytes(x.dtype);
    if (c.out.size() != 1 || x.dtype != y.dtype || y.rank() != rank || rank < 1 || rank > kernels::kMaxRank || (bytes != 4 && bytes != 8))
        return kUnsupported;
    // The CPU kernel's own reading of starts/axes/steps, on a call whose index inputs point at their
    // host copies (the device holds the originals).
    core::exec::KernelCall host = c;
    for (const std::size_t slot : { std::size_t(1), std::size_t(3), std::size_t(4) }) {
        if (!c.has(slot))
            continue;
        if (slot >= d.hostContents.size() || !d.hostContents[slot])
            return kUnsupported;
        host.in[slot].data = const_cast<std::byte*>(d.hostContents[slot]);
    }
    Shape first, step;
    if (!core::exec::sliceStarts(host, first, step))
        return kUnsupported;
    const auto xs = core::exec::stridesOf(x.shape);
    std::int64_t base = 0, stride[kernels::kMaxRank] {};
    for (int i = 0; i < rank; ++i) {
        const auto u = std::size_t(i);
        const std::int64_t last = first[u] + (y.shape[u] - 1) * step[u];
        if (y.shape[u] > 0 && (first[u] < 0 || first[u] >= x.shape[u] || last < 0 || last >= x.shape[u]))
            return kUnsupported; // would clamp: leave it to the CPU kernel
        base += first[u] * xs[u];
        stride[i] = step[u] * xs[u];
    }
    if (y.count == 0)
        return {};
    DEVICE_CHECK(kernels::permute(y.data, x.data + base * bytes, int(bytes), rank, y.shape.data(), stride, y.count, d.stream));
    return {};
}

const std::map<std::string, DeviceKernel>& table()
{
    static const std::map<std::string, DeviceKernel> t = [] {
        std::map<std::string, DeviceKernel> m {
        { "Gemm", gemm }, { "MatMul", matMul }, { "Einsum", einsum }, { "Conv", conv },
        { "BatchNormalization", batchNorm }, { "Softmax", softmax<false> }, { "LogSoftmax", softmax<true> }, { "LayerNormalization", layerNorm }, { "ConvTranspose", convTranspose },
        { "MaxPool", pool<true> }, { "AveragePool", pool<false> }, { "GlobalAveragePool", globalAveragePool },
        { "Reshape", view }, { "Flatten", view }, { "Squeeze", view }, { "Unsqueeze", view }, { "Identity", view }, { "Dropout", view },
        { "Transpose", transpose }, { "DepthToSpace", transpose }, { "SpaceToDepth", transpose }, { "Expand", tile }, { "Tile", tile }, { "InstanceNormalization", instanceNorm }, { "LRN", lrn }, { "Concat", concat }, { "Split", split }, { "Gather", gather }, { "Slice", slice },
        };
        addResampleKernels(m);
        addElementwiseKernels(m);
        addIndexKernels(m);
        addRecurrentKernels(m);
        addIntegerKernels(m);
        return m;
    }();
    return t;
}

} // namespace

DeviceKernel findDeviceKernel(const std::string& opType)
{
    const auto& t = table();
    const auto it = t.find(opType);
    return it == t.end() ? nullptr : it->second;
}

std::int64_t scratchFloats(const KernelCall& call)
{
    // Shapes only: before a pass, activations have no address.
    if (isRecurrent(call.op->type))
        return recurrentScratchFloats(call);
    if (call.op->type == "ConvTranspose") {
        kernels::TransposedConv s;
        return transposedConvShape(call, s) ? core::exec::ownWorkspaceFloats(call) : 0;
    }
    ConvShape s;
    if (call.op->type != "Conv" || !convShape(call, s))
        return 0;
    return core::exec::convColumnFloats(call);
}

} // namespace gpu
