// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/kernels.h"
#include "util/halffloat.h"

#include <algorithm>
#include <cstring>

namespace core::exec {

std::int64_t KernelCall::attrInt(const std::string& name, std::int64_t fallback) const
{
    const auto it = op->attributes.find(name);
    return it != op->attributes.end() && !it->second.ints.empty() ? it->second.ints[0] : fallback;
}

float KernelCall::attrFloat(const std::string& name, float fallback) const
{
    const auto it = op->attributes.find(name);
    return it != op->attributes.end() && !it->second.floats.empty() ? it->second.floats[0] : fallback;
}

std::string KernelCall::attrText(const std::string& name, const std::string& fallback) const
{
    const auto it = op->attributes.find(name);
    return it != op->attributes.end() && !it->second.text.empty() ? it->second.text : fallback;
}

const std::vector<std::int64_t>* KernelCall::attrInts(const std::string& name) const
{
    const auto it = op->attributes.find(name);
    return it != op->attributes.end() ? &it->second.ints : nullptr;
}

bool windowAttrs(const KernelCall& c, const Shape& in, const Shape& out, const Shape& kernel, WindowAttrs& w)
{
    const auto spatial = kernel.size();
    w.strides = c.attrIntsOr("strides", 1, spatial);
    w.dilations = c.attrIntsOr("dilations", 1, spatial);
    w.pads = c.attrIntsOr("pads", 0, 2 * spatial);
    const auto autoPad = c.attrText("auto_pad", "NOTSET");
    if (autoPad == "VALID") {
        std::fill(w.pads.begin(), w.pads.end(), 0);
    } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        for (std::size_t i = 0; i < spatial; ++i) {
            const std::int64_t total
                = std::max<std::int64_t>(0, (out[i] - 1) * w.strides[i] + (kernel[i] - 1) * w.dilations[i] + 1 - in[i]);
            w.pads[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
            w.pads[i + spatial] = total - w.pads[i];
        }
    } else if (autoPad != "NOTSET") {
        return false;
    }
    return true;
}

std::vector<std::int64_t> KernelCall::attrIntsOr(const std::string& name, std::int64_t fallback, std::size_t n) const
{
    if (const auto* values = attrInts(name); values && values->size() == n)
        return *values;
    return std::vector<std::int64_t>(n, fallback);
}

bool KernelCall::allFloat() const
{
    for (const auto& t : in)
        if (t.present() && t.dtype != DType::Float32)
            return false;
    for (const auto& t : out)
        if (t.dtype != DType::Float32)
            return false;
    return true;
}

std::int64_t intAt(const TensorView& t, std::int64_t i)
{
    if (i < 0 || i >= t.count)
        return 0;
    if (t.dtype == DType::Int64)
        return t.i64()[i];
    if (t.dtype == DType::Int32)
        return reinterpret_cast<const std::int32_t*>(t.data)[i];
    return 0;
}

double realAt(const TensorView& t, std::int64_t i)
{
    return t.dtype == DType::Float32 ? double(t.f32()[i]) : reinterpret_cast<const double*>(t.data)[i];
}

void storeReal(const TensorView& t, std::int64_t i, double value)
{
    if (t.dtype == DType::Float32)
        t.f32()[i] = float(value);
    else
        reinterpret_cast<double*>(t.data)[i] = value;
}

Shape stridesOf(const Shape& shape)
{
    Shape s(shape.size(), 1);
    for (int i = int(shape.size()) - 2; i >= 0; --i)
        s[i] = s[i + 1] * shape[i + 1];
    return s;
}

int normAxis(std::int64_t axis, int rank)
{
    if (rank <= 0)
        return 0;
    if (axis < 0)
        axis += rank;
    return int(std::clamp<std::int64_t>(axis, 0, rank - 1));
}

namespace {
// Four SSE lanes via GCC vector extensions, so the micro-kernel is vectorised at any -O level
// and on any x86-64 (no -march needed).
typedef float V4 __attribute__((vector_size(16), aligned(4)));

inline V4 load4(const float* p)
{
    V4 v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}

inline void store4(float* p, V4 v) { __builtin_memcpy(p, &v, sizeof v); }

// C[4, 8] += A[4, kb] · B[kb, 8], accumulators in registers.
inline void micro4x8(std::int64_t kb, const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc)
{
    V4 c00 = load4(c), c01 = load4(c + 4);
    V4 c10 = load4(c + ldc), c11 = load4(c + ldc + 4);
    V4 c20 = load4(c + 2 * ldc), c21 = load4(c + 2 * ldc + 4);
    V4 c30 = load4(c + 3 * ldc), c31 = load4(c + 3 * ldc + 4);
    for (std::int64_t k = 0; k < kb; ++k) {
        const V4 b0 = load4(b + k * ldb), b1 = load4(b + k * ldb + 4);
        const float a0 = a[k], a1 = a[lda + k], a2 = a[2 * lda + k], a3 = a[3 * lda + k];
        c00 += a0 * b0; c01 += a0 * b1;
        c10 += a1 * b0; c11 += a1 * b1;
        c20 += a2 * b0; c21 += a2 * b1;
        c30 += a3 * b0; c31 += a3 * b1;
    }
    store4(c, c00); store4(c + 4, c01);
    store4(c + ldc, c10); store4(c + ldc + 4, c11);
    store4(c + 2 * ldc, c20); store4(c + 2 * ldc + 4, c21);
    store4(c + 3 * ldc, c30); store4(c + 3 * ldc + 4, c31);
}
} // namespace

// Blocked over K (a panel of B stays in cache) with a 4×8 register tile; edges take a scalar path.
// Every C element sums its products in increasing k, whatever the blocking, so results are
// bit-reproducible (the plan check relies on that).
void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
    float* c, std::int64_t ldc, bool accumulate, bool bTransposed)
{
    // B[kk][j], stored as given or transposed (then its rows are B's columns).
    const auto bAt = [&](std::int64_t kk, std::int64_t j) { return bTransposed ? b[j * ldb + kk] : b[kk * ldb + j]; };
    constexpr std::int64_t kBlockK = 256;
    if (!accumulate)
        for (std::int64_t i = 0; i < m; ++i)
            std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    const std::int64_t m4 = m - m % 4, n8 = n - n % 8;
    for (std::int64_t k0 = 0; k0 < k; k0 += kBlockK) {
        const std::int64_t kb = std::min(kBlockK, k - k0);
        // The kb×8 panel of B is copied contiguous once and reused by every row block: read in
        // place, its rows lie ldb apart (a new page per k for wide B, as in a large im2col).
        alignas(64) float panel[kBlockK * 8];
        for (std::int64_t j = 0; j < n8; j += 8) {
            if (bTransposed)
                for (std::int64_t jj = 0; jj < 8; ++jj)
                    for (std::int64_t kk = 0; kk < kb; ++kk)
                        panel[kk * 8 + jj] = b[(j + jj) * ldb + k0 + kk];
            else
                for (std::int64_t kk = 0; kk < kb; ++kk)
                    std::copy(b + (k0 + kk) * ldb + j, b + (k0 + kk) * ldb + j + 8, panel + kk * 8);
            for (std::int64_t i = 0; i < m4; i += 4)
                micro4x8(kb, a + i * lda + k0, lda, panel, 8, c + i * ldc + j, ldc);
        }
        // Right edge (columns n8..n) for the 4-row blocks, then the bottom rows for all columns.
        for (std::int64_t i = 0; i < m4; ++i)
            for (std::int64_t kk = k0; kk < k0 + kb; ++kk) {
                const float av = a[i * lda + kk];
                for (std::int64_t j = n8; j < n; ++j)
                    c[i * ldc + j] += av * bAt(kk, j);
            }
        for (std::int64_t i = m4; i < m; ++i)
            for (std::int64_t kk = k0; kk < k0 + kb; ++kk) {
                const float av = a[i * lda + kk];
                for (std::int64_t j = 0; j < n; ++j)
                    c[i * ldc + j] += av * bAt(kk, j);
            }
    }
}

namespace {
std::vector<float> g_scratch[4];
Bytes g_scratchHighWater = 0;
} // namespace

float* scratch(int slot, std::int64_t floats)
{
    auto& v = g_scratch[slot & 3];
    if (std::int64_t(v.size()) < floats)
        v.resize(std::size_t(floats));
    std::size_t held = 0;
    for (const auto& s : g_scratch)
        held += s.size();
    g_scratchHighWater = std::max<Bytes>(g_scratchHighWater, Bytes(held) * 4);
    return v.data();
}

Bytes scratchHighWater() { return g_scratchHighWater; }

void noteScratchBytes(Bytes bytes) { g_scratchHighWater = std::max(g_scratchHighWater, bytes); }

void noteKernelBuffers(Bytes bytes)
{
    for (const auto& s : g_scratch)
        bytes += Bytes(s.size() * sizeof(float));
    noteScratchBytes(bytes);
}

void releaseScratch()
{
    for (auto& v : g_scratch)
        std::vector<float>().swap(v);
    g_scratchHighWater = 0;
}

Kernel findKernel(const std::string& opType)
{
    static const std::map<std::string, Kernel> table = [] {
        std::map<std::string, Kernel> t;
        addElementwiseKernels(t);
        addLinearKernels(t);
        addPoolNormKernels(t);
        addPoolKernels(t);
        addShapeKernels(t);
        addIndexKernels(t);
        addEinsumKernels(t);
        addRecurrentKernels(t);
        addSelectKernels(t);
        addNormalizeKernels(t);
        addQuantizeKernels(t);
        addIntegerKernels(t);
        addSampleKernels(t);
        addLossKernels(t);
        addSignalKernels(t);
        return t;
    }();
    const auto it = table.find(opType);
    return it == table.end() ? nullptr : it->second;
}

Kernel findKernel(const std::string& domain, const std::string& opType)
{
    if (domain.empty() || domain == "ai.onnx")
        return findKernel(opType);
    static const std::map<std::string, Kernel> training = [] {
        std::map<std::string, Kernel> t;
        addOptimizerKernels(t);
        return t;
    }();
    const auto it = domain == "ai.onnx.preview.training" ? training.find(opType) : training.end();
    return it == training.end() ? nullptr : it->second;
}

bool runKernel(Kernel kernel, const KernelCall& call)
{
    const auto narrow = [](const TensorView& v) { return v.present() && (v.dtype == DType::Float16 || v.dtype == DType::BFloat16); };
    const std::string& type = call.op->type;
    if (type == "Cast" || type == "CastLike"
        || (std::none_of(call.in.begin(), call.in.end(), narrow) && std::none_of(call.out.begin(), call.out.end(), narrow)))
        return kernel(call);
    KernelCall wide = call;
    std::vector<std::vector<float>> copies; // fresh each call: held only while it runs
    const auto widen = [&](TensorView& v, bool values) {
        if (!narrow(v))
            return;
        auto& copy = copies.emplace_back(std::size_t(std::max<std::int64_t>(v.count, 1)));
        const auto* bits = reinterpret_cast<const std::uint16_t*>(v.data);
        if (values && v.dtype == DType::Float16)
            halvesToFloats(bits, copy.data(), v.count);
        else if (values)
            for (std::int64_t i = 0; i < v.count; ++i)
                copy[std::size_t(i)] = bfloat16ToFloat(bits[i]);
        v.dtype = DType::Float32;
        v.data = reinterpret_cast<std::byte*>(copy.data());
    };
    for (auto& v : wide.in)
        widen(v, true);
    for (auto& v : wide.out)
        widen(v, false); // kernels write every output element before reading it
    if (!kernel(wide))
        return false;
    Bytes held = 0;
    for (const auto& c : copies)
        held += Bytes(c.size() * sizeof(float));
    noteKernelBuffers(held);
    for (std::size_t k = 0; k < call.out.size(); ++k) {
        const auto& v = call.out[k];
        if (!narrow(v))
            continue;
        auto* bits = reinterpret_cast<std::uint16_t*>(v.data);
        const float* values = wide.out[k].f32();
        if (v.dtype == DType::Float16)
            floatsToHalves(values, bits, v.count);
        else
            for (std::int64_t i = 0; i < v.count; ++i)
                bits[i] = floatToBfloat16(values[i]);
    }
    return true;
}

namespace {
std::uint64_t mix(std::uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}
} // namespace

void syntheticKernel(const KernelCall& call)
{
    // FNV-1a over every input byte: any change to any input changes every output.
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const auto& t : call.in) {
        if (!t.present())
            continue;
        const Bytes n = t.bytes();
        for (Bytes i = 0; i < n; ++i) {
            h ^= std::uint64_t(t.data[i]);
            h *= 0x100000001b3ULL;
        }
    }
    for (std::size_t o = 0; o < call.out.size(); ++o) {
        const auto& t = call.out[o];
        const std::uint64_t seed = mix(h + o);
        for (std::int64_t i = 0; i < t.count; ++i) {
            const std::uint64_t r = mix(seed ^ std::uint64_t(i) * 0x9e3779b97f4a7c15ULL);
            switch (t.dtype) {
            case DType::Float32: t.f32()[i] = float(r >> 40) / float(1 << 23) - 1.0f; break;
            case DType::Int64: t.i64()[i] = std::int64_t(r & 3); break;
            case DType::Int32: reinterpret_cast<std::int32_t*>(t.data)[i] = std::int32_t(r & 3); break;
            default: {
                const Bytes w = dtypeBytes(t.dtype);
                for (Bytes b = 0; b < w; ++b)
                    t.data[i * w + b] = std::byte((r >> (8 * (b % 8))) & (t.dtype == DType::Bool ? 1 : 0xff));
            }
            }
        }
    }
}

} // namespace core::exec
