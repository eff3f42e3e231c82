// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Conv, ConvTranspose, Gemm and MatMul run on oneDNN (exec/onednn.h) wherever it takes the call;
// the own kernels below serve the rest: Conv (im2col + blocked GEMM), ConvTranspose (GEMM +
// col2im), Gemm, MatMul (batched, broadcast), and Det. Convolutions handle 1-D, 2-D and 3-D inputs.
#include "exec/kernels.h"
#include "exec/onednn.h"
#include "exec/opattrs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace core::exec {

bool matmulDims(Shape a, Shape b, MatMulDims& dims)
{
    if (a.empty() || b.empty())
        return false;
    if (a.size() == 1)
        a.insert(a.begin(), 1);
    if (b.size() == 1)
        b.push_back(1);
    const std::size_t rank = std::max(a.size(), b.size());
    a.insert(a.begin(), rank - a.size(), 1);
    b.insert(b.begin(), rank - b.size(), 1);
    dims = {};
    dims.m = a[rank - 2];
    dims.k = a[rank - 1];
    dims.n = b[rank - 1];
    if (b[rank - 2] != dims.k)
        return false;
    dims.y.assign(rank, 1);
    bool sharedB = true, ownA = true;
    for (std::size_t i = 0; i + 2 < rank; ++i) {
        if (a[i] != b[i] && a[i] != 1 && b[i] != 1)
            return false;
        dims.y[i] = std::max(a[i], b[i]);
        dims.batches *= dims.y[i];
        sharedB = sharedB && b[i] == 1;
        ownA = ownA && a[i] == dims.y[i];
    }
    dims.y[rank - 2] = dims.m;
    dims.y[rank - 1] = dims.n;
    dims.oneGemm = sharedB && ownA;
    dims.a = std::move(a);
    dims.b = std::move(b);
    return true;
}

namespace {

// col[((c*kD + a)*kH + i)*kW + j][(od*outH + oh)*outW + ow]
//   = x[c][od*sD - pF + a*dD][oh*sH - pT + i*dH][ow*sW - pL + j*dW] (0 outside).
void im2col(const float* x, std::int64_t channels, const ConvGeometry& g, float* col)
{
    const std::int64_t plane = g.outPlane();
    for (std::int64_t ch = 0; ch < channels; ++ch)
        for (std::int64_t a = 0; a < g.kD; ++a)
            for (std::int64_t i = 0; i < g.kH; ++i)
                for (std::int64_t j = 0; j < g.kW; ++j) {
                    float* row = col + (((ch * g.kD + a) * g.kH + i) * g.kW + j) * plane;
                    for (std::int64_t od = 0; od < g.outD; ++od) {
                        const std::int64_t id = od * g.strideD - g.padFront + a * g.dilD;
                        float* slab = row + od * g.outH * g.outW;
                        if (id < 0 || id >= g.inD) {
                            std::fill(slab, slab + g.outH * g.outW, 0.0f);
                            continue;
                        }
                        const float* src = x + (ch * g.inD + id) * g.inH * g.inW;
                        for (std::int64_t oh = 0; oh < g.outH; ++oh) {
                            const std::int64_t ih = oh * g.strideH - g.padTop + i * g.dilH;
                            float* dst = slab + oh * g.outW;
                            if (ih < 0 || ih >= g.inH) {
                                std::fill(dst, dst + g.outW, 0.0f);
                                continue;
                            }
                            for (std::int64_t ow = 0; ow < g.outW; ++ow) {
                                const std::int64_t iw = ow * g.strideW - g.padLeft + j * g.dilW;
                                dst[ow] = iw >= 0 && iw < g.inW ? src[ih * g.inW + iw] : 0.0f;
                            }
                        }
                    }
                }
}

// What the Conv kernel computes for a call: geometry, group sizes, whether the GEMM reads the input
// directly. False when the kernel has no exact implementation for it. Shapes and attributes only.
struct ConvSetup {
    ConvGeometry g;
    std::int64_t groups = 1, n = 0, cin = 0, m = 0, cg = 0, mg = 0, k = 0, plane = 0;
    bool direct = false;
};

bool convSetup(const KernelCall& c, ConvSetup& s)
{
    if (c.in.size() < 2 || c.out.size() != 1 || !c.allFloat() || c.in[0].dtype != DType::Float32 || c.in[1].dtype != DType::Float32)
        return false;
    const auto &x = c.in[0], &w = c.in[1], &y = c.out[0];
    if (!convGeometry(c, x, w, y, false, s.g))
        return false;
    s.groups = c.attrInt("group", 1);
    s.n = x.shape[0];
    s.cin = x.shape[1];
    s.m = y.shape[1];
    if (s.groups <= 0 || s.cin % s.groups || s.m % s.groups || w.shape[0] != s.m || w.shape[1] != s.cin / s.groups || y.shape[0] != s.n)
        return false;
    if (c.has(2) && c.in[2].count != s.m)
        return false;
    const auto& g = s.g;
    s.cg = s.cin / s.groups;
    s.mg = s.m / s.groups;
    s.k = s.cg * g.window();
    s.plane = g.outPlane();
    s.direct = g.window() == 1 && g.strideD == 1 && g.strideH == 1 && g.strideW == 1 && g.padFront == 0 && g.padTop == 0 && g.padLeft == 0
        && g.inPlane() == g.outPlane();
    return true;
}

// The planned workspace when it was planned for the own kernel (oneDNN does not take the call);
// otherwise it holds oneDNN's scratchpad, which may be smaller: the own kernel then takes scratch.
float* ownWorkspace(const KernelCall& c)
{
    return c.workspace && onednnScratchpadBytes(c) < 0 ? c.workspace : nullptr;
}

bool conv(const KernelCall& c)
{
    if (onednnConv(c))
        return true;
    ConvSetup s;
    if (!c.has(0) || !c.has(1) || !convSetup(c, s))
        return false;
    const auto &x = c.in[0], &w = c.in[1], &y = c.out[0];
    const auto& g = s.g;
    const std::int64_t groups = s.groups, n = s.n, cin = s.cin, m = s.m, cg = s.cg, mg = s.mg, k = s.k, plane = s.plane;
    const bool direct = s.direct;
    float* planned = ownWorkspace(c);
    float* col = direct ? nullptr : planned ? planned : scratch(0, k * plane);
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t gi = 0; gi < groups; ++gi) {
            const float* xg = x.f32() + (b * cin + gi * cg) * g.inPlane();
            if (!direct)
                im2col(xg, cg, g, col);
            float* yg = y.f32() + (b * m + gi * mg) * plane;
            gemm(mg, plane, k, w.f32() + gi * mg * k, k, direct ? xg : col, plane, yg, plane, false);
            if (c.has(2))
                for (std::int64_t o = 0; o < mg; ++o) {
                    const float bias = c.in[2].f32()[gi * mg + o];
                    for (std::int64_t p = 0; p < plane; ++p)
                        yg[o * plane + p] += bias;
                }
        }
    return true;
}

// What the ConvTranspose kernel computes for a call (GEMM of Wᵀ with the input into columns, then
// col2im). False when the kernel has no exact implementation for it. Shapes and attributes only.
struct ConvTransposeSetup {
    ConvGeometry g; // of the implied convolution: its "input" is our output
    std::int64_t groups = 1, n = 0, cin = 0, m = 0, cg = 0, mg = 0, rows = 0, inPlane = 0, outPlane = 0;
};

bool convTransposeSetup(const KernelCall& c, ConvTransposeSetup& s)
{
    if (!c.allFloat() || c.in.size() < 2 || c.out.size() != 1)
        return false;
    const auto &x = c.in[0], &w = c.in[1], &y = c.out[0];
    if (!convGeometry(c, x, w, y, true, s.g))
        return false;
    s.groups = c.attrInt("group", 1);
    s.n = x.shape[0];
    s.cin = x.shape[1];
    s.m = y.shape[1];
    if (s.groups <= 0 || s.cin % s.groups || s.m % s.groups || w.shape[0] != s.cin || w.shape[1] * s.groups != s.m || y.shape[0] != s.n)
        return false;
    s.cg = s.cin / s.groups;
    s.mg = s.m / s.groups;
    s.rows = s.mg * s.g.window();
    s.inPlane = s.g.inPlane();
    s.outPlane = s.g.outPlane();
    return true;
}

bool convTranspose(const KernelCall& c)
{
    if (onednnConvTranspose(c))
        return true;
    ConvTransposeSetup s;
    if (!c.has(0) || !c.has(1) || !convTransposeSetup(c, s))
        return false;
    const auto &x = c.in[0], &w = c.in[1], &y = c.out[0];
    const auto& g = s.g;
    const std::int64_t groups = s.groups, n = s.n, cin = s.cin, m = s.m, cg = s.cg, mg = s.mg, rows = s.rows;
    const std::int64_t inPlane = s.inPlane, outPlane = s.outPlane;
    // Wᵀ of one group, then its columns: back to back in a planned workspace, else in scratch.
    float* planned = ownWorkspace(c);
    float* wt = planned ? planned : scratch(1, rows * cg);
    float* col = planned ? planned + rows * cg : scratch(0, rows * inPlane);
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t gi = 0; gi < groups; ++gi) {
            // wt = W_g^T: [mg*kk, cg]
            const float* wg = w.f32() + gi * cg * rows;
            for (std::int64_t ci = 0; ci < cg; ++ci)
                for (std::int64_t r = 0; r < rows; ++r)
                    wt[r * cg + ci] = wg[ci * rows + r];
            gemm(rows, inPlane, cg, wt, cg, x.f32() + (b * cin + gi * cg) * inPlane, inPlane, col, inPlane, false);
            float* yg = y.f32() + (b * m + gi * mg) * outPlane;
            std::fill(yg, yg + mg * outPlane, 0.0f);
            for (std::int64_t o = 0; o < mg; ++o)
                for (std::int64_t a = 0; a < g.kD; ++a)
                    for (std::int64_t i = 0; i < g.kH; ++i)
                        for (std::int64_t j = 0; j < g.kW; ++j) {
                            const float* row = col + (((o * g.kD + a) * g.kH + i) * g.kW + j) * inPlane;
                            for (std::int64_t dz = 0; dz < g.inD; ++dz) {
                                const std::int64_t od = dz * g.strideD - g.padFront + a * g.dilD;
                                if (od < 0 || od >= g.outD)
                                    continue;
                                float* slab = yg + o * outPlane + od * g.outH * g.outW;
                                const float* from = row + dz * g.inH * g.inW;
                                for (std::int64_t h = 0; h < g.inH; ++h) {
                                    const std::int64_t oh = h * g.strideH - g.padTop + i * g.dilH;
                                    if (oh < 0 || oh >= g.outH)
                                        continue;
                                    for (std::int64_t v = 0; v < g.inW; ++v) {
                                        const std::int64_t ow = v * g.strideW - g.padLeft + j * g.dilW;
                                        if (ow >= 0 && ow < g.outW)
                                            slab[oh * g.outW + ow] += from[h * g.inW + v];
                                    }
                                }
                            }
                        }
            if (c.has(2) && c.in[2].count == m)
                for (std::int64_t o = 0; o < mg; ++o)
                    for (std::int64_t p = 0; p < outPlane; ++p)
                        yg[o * outPlane + p] += c.in[2].f32()[gi * mg + o];
        }
    return true;
}

// Copies a [rows, cols] matrix transposed into `out` ([cols, rows]).
void transpose2d(const float* in, std::int64_t rows, std::int64_t cols, float* out)
{
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t k = 0; k < cols; ++k)
            out[k * rows + r] = in[r * cols + k];
}

bool gemmOp(const KernelCall& c)
{
    if (onednnGemm(c))
        return true;
    if (!c.allFloat() || !c.has(0) || !c.has(1) || c.in[0].rank() != 2 || c.in[1].rank() != 2 || c.out[0].rank() != 2)
        return false;
    const bool ta = c.attrInt("transA", 0), tb = c.attrInt("transB", 0);
    const float alpha = c.attrFloat("alpha", 1.0f), beta = c.attrFloat("beta", 1.0f);
    const auto &a = c.in[0], &b = c.in[1], &y = c.out[0];
    const std::int64_t m = y.shape[0], n = y.shape[1], k = ta ? a.shape[0] : a.shape[1];
    if ((ta ? a.shape[1] : a.shape[0]) != m || (tb ? b.shape[1] : b.shape[0]) != k || (tb ? b.shape[0] : b.shape[1]) != n)
        return false;
    const float* pa = a.f32();
    const float* pb = b.f32();
    if (ta) {
        float* t = scratch(0, m * k);
        transpose2d(pa, k, m, t);
        pa = t;
    }
    gemm(m, n, k, pa, k, pb, tb ? k : n, y.f32(), n, false, tb);
    const float* cp = c.has(2) ? c.in[2].f32() : nullptr;
    const auto& cs = c.has(2) ? c.in[2].shape : Shape {};
    if (cp && cs.size() > 2)
        return false;
    const std::int64_t cRows = cs.size() == 2 ? cs[0] : 1, cCols = cs.empty() ? 1 : cs.back();
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            float v = alpha * y.f32()[i * n + j];
            if (cp)
                v += beta * cp[(cRows == 1 ? 0 : i) * cCols + (cCols == 1 ? 0 : j)];
            y.f32()[i * n + j] = v;
        }
    return true;
}

bool matmul(const KernelCall& c)
{
    if (onednnMatMul(c))
        return true;
    MatMulDims dims;
    if (!c.allFloat() || !c.has(0) || !c.has(1) || !matmulDims(c.in[0].shape, c.in[1].shape, dims))
        return false;
    const std::int64_t m = dims.m, k = dims.k, n = dims.n, total = dims.batches;
    if (total * m * n != c.out[0].count)
        return false;
    if (dims.oneGemm) {
        gemm(total * m, n, k, c.in[0].f32(), k, c.in[1].f32(), n, c.out[0].f32(), n, false);
        return true;
    }
    // Per batch dimension: extent and element strides of A and B (0 where broadcast).
    const int batchRank = int(dims.y.size()) - 2;
    Shape batch(dims.y.begin(), dims.y.end() - 2), sa(batchRank, 0), sb(batchRank, 0);
    std::int64_t strideA = m * k, strideB = k * n;
    for (int d = batchRank - 1; d >= 0; --d) {
        sa[d] = dims.a[d] == 1 ? 0 : strideA;
        sb[d] = dims.b[d] == 1 ? 0 : strideB;
        strideA *= dims.a[d];
        strideB *= dims.b[d];
    }
    Shape counter(batchRank, 0);
    std::int64_t offA = 0, offB = 0;
    for (std::int64_t t = 0; t < total; ++t) {
        gemm(m, n, k, c.in[0].f32() + offA, k, c.in[1].f32() + offB, n, c.out[0].f32() + t * m * n, n, false);
        for (int d = batchRank - 1; d >= 0; --d) {
            offA += sa[d];
            offB += sb[d];
            if (++counter[d] < batch[d])
                break;
            offA -= sa[d] * batch[d];
            offB -= sb[d] * batch[d];
            counter[d] = 0;
        }
    }
    return true;
}

// Determinant of each trailing [M, M] matrix (float32, float64): LU decomposition with partial
// pivoting in double precision.
bool det(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    const DType t = x.dtype;
    if ((t != DType::Float32 && t != DType::Float64) || y.dtype != t || x.rank() < 2 || x.shape[x.rank() - 1] != x.shape[x.rank() - 2])
        return false;
    const std::int64_t m = x.shape[x.rank() - 1], size = m * m;
    if (y.count * size != x.count)
        return false;
    std::vector<double> a(static_cast<std::size_t>(size));
    for (std::int64_t b = 0; b < y.count; ++b) {
        for (std::int64_t i = 0; i < size; ++i)
            a[std::size_t(i)] = realAt(x, b * size + i);
        double d = 1;
        for (std::int64_t k = 0; k < m && d != 0; ++k) {
            std::int64_t pivot = k;
            for (std::int64_t i = k + 1; i < m; ++i)
                if (std::abs(a[std::size_t(i * m + k)]) > std::abs(a[std::size_t(pivot * m + k)]))
                    pivot = i;
            if (pivot != k) {
                std::swap_ranges(a.begin() + k * m, a.begin() + (k + 1) * m, a.begin() + pivot * m);
                d = -d;
            }
            const double p = a[std::size_t(k * m + k)];
            d *= p;
            if (p == 0)
                break;
            for (std::int64_t i = k + 1; i < m; ++i) {
                const double f = a[std::size_t(i * m + k)] / p;
                for (std::int64_t j = k + 1; j < m; ++j)
                    a[std::size_t(i * m + j)] -= f * a[std::size_t(k * m + j)];
            }
        }
        storeReal(y, b, d);
    }
    return true;
}

} // namespace

std::int64_t convColumnFloats(const KernelCall& call)
{
    ConvSetup s;
    if (!call.op || call.op->type != "Conv" || !convSetup(call, s) || s.direct)
        return 0;
    return s.k * s.plane;
}

std::int64_t ownWorkspaceFloats(const KernelCall& call)
{
    if (call.op && call.op->type == "ConvTranspose") {
        ConvTransposeSetup s;
        return convTransposeSetup(call, s) ? s.rows * s.cg + s.rows * s.inPlane : 0;
    }
    return convColumnFloats(call);
}

std::int64_t workspaceFloats(const KernelCall& call)
{
    std::int64_t pad = onednnScratchpadBytes(call);
    if (pad < 0 && call.op && call.op->type != "Conv" && call.op->type != "ConvTranspose")
        pad = onednnPointwiseWorkspaceBytes(call);
    if (pad >= 0)
        return (pad + std::int64_t(sizeof(float)) - 1) / std::int64_t(sizeof(float));
    return ownWorkspaceFloats(call);
}

void addLinearKernels(std::map<std::string, Kernel>& t)
{
    t["Conv"] = conv;
    t["ConvTranspose"] = convTranspose;
    t["Gemm"] = gemmOp;
    t["MatMul"] = matmul;
    t["Det"] = det;
}

} // namespace core::exec
