// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/kernels.h"
#include "exec/onednn.h"
#include "util/halffloat.h"

#include <algorithm>
#include <set>
#include <cstring>
#include <utility>

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

namespace {
thread_local DataFault pendingFault;
} // namespace

bool refuseData(DataFault fault)
{
    if (pendingFault.why.empty())
        pendingFault = std::move(fault);
    return false;
}

bool refuseIndex(std::int64_t i, std::int64_t n, std::int64_t dim, int indicesSlot, int dataSlot, int axis)
{
    return refuseData(DataFault { nullptr,
        "index " + std::to_string(i) + " at element " + std::to_string(n) + " is outside [" + std::to_string(-dim) + ", "
            + std::to_string(dim - 1) + "]",
        indicesSlot, dataSlot, axis });
}

DataFault takeDataFault()
{
    return std::exchange(pendingFault, DataFault {});
}

void claimDataFault(const Op& op)
{
    if (!pendingFault.why.empty() && !pendingFault.op)
        pendingFault.op = &op;
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
// float32 copies of a call's half-precision tensors, reused by the next call rather than allocated
// afresh (a fresh multi-MiB block is new pages for the kernel to fault in, every call).
std::vector<float> g_staging;
Bytes g_scratchHighWater = 0;

// Bytes the slots and the staging buffer hold now.
Bytes heldBytes()
{
    std::size_t held = g_staging.size();
    for (const auto& s : g_scratch)
        held += s.size();
    return Bytes(held * sizeof(float));
}

// Floats a tensor of `count` elements takes in the staging buffer: whole 64-byte lines, so each copy
// starts where the kernels' vector loads want it (as a fresh allocation would).
std::size_t stagedFloats(std::int64_t count) { return (std::size_t(std::max<std::int64_t>(count, 1)) + 15) / 16 * 16; }

float* staging(std::size_t floats)
{
    if (g_staging.size() < floats + 16) {
        std::vector<float>(floats + 16).swap(g_staging);
        g_scratchHighWater = std::max(g_scratchHighWater, heldBytes());
    }
    const auto address = reinterpret_cast<std::uintptr_t>(g_staging.data());
    return g_staging.data() + (64 - address % 64) % 64 / sizeof(float);
}
} // namespace

float* scratch(int slot, std::int64_t floats)
{
    auto& v = g_scratch[slot & 3];
    if (std::int64_t(v.size()) < floats)
        v.resize(std::size_t(floats));
    g_scratchHighWater = std::max(g_scratchHighWater, heldBytes());
    return v.data();
}

Bytes scratchHighWater() { return g_scratchHighWater; }

void noteScratchBytes(Bytes bytes) { g_scratchHighWater = std::max(g_scratchHighWater, bytes); }

void noteKernelBuffers(Bytes bytes) { noteScratchBytes(heldBytes() + bytes); }

void releaseScratch()
{
    for (auto& v : g_scratch)
        std::vector<float>().swap(v);
    std::vector<float>().swap(g_staging);
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
        addTextKernels(t);
        addOnednnKernels(t);
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

namespace {

bool isNarrow(const TensorView& v) { return v.present() && (v.dtype == DType::Float16 || v.dtype == DType::BFloat16); }

// Elements [first, first + count) of a float16 or bfloat16 tensor, widened into `to`.
void widenRange(const TensorView& v, std::int64_t first, std::int64_t count, float* to)
{
    const auto* bits = reinterpret_cast<const std::uint16_t*>(v.data) + first;
    if (v.dtype == DType::Float16)
        halvesToFloats(bits, to, count);
    else
        for (std::int64_t i = 0; i < count; ++i)
            to[i] = bfloat16ToFloat(bits[i]);
}

// `count` floats rounded to nearest even into elements [first, first + count) of v.
void narrowRange(const float* from, const TensorView& v, std::int64_t first, std::int64_t count)
{
    auto* bits = reinterpret_cast<std::uint16_t*>(v.data) + first;
    if (v.dtype == DType::Float16)
        floatsToHalves(from, bits, count);
    else
        for (std::int64_t i = 0; i < count; ++i)
            bits[i] = floatToBfloat16(from[i]);
}

// Ops whose every output element depends only on the same element of each input (and on scalar
// inputs, attributes): their kernels give the same results on any slice of the elements.
const std::set<std::string> kPointwise { "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Mod", "Relu",
    "LeakyRelu", "Clip", "Abs", "Neg", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Exp", "Log", "Erf", "Gelu",
    "Sigmoid", "Tanh", "Softplus", "Softsign", "Elu", "Selu", "Celu", "HardSigmoid", "HardSwish", "Mish", "Sin", "Cos",
    "Where", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "IsNaN", "IsInf" };

// A pointwise call whose inputs are each as long as its outputs or a single element; the elements
// run in slices of kTile, so the float32 copies hold a slice, not the tensor.
constexpr std::int64_t kTile = 16384;

bool runsInSlices(const KernelCall& call)
{
    if (!kPointwise.count(call.op->type) || call.out.empty() || call.out[0].count <= kTile)
        return false;
    const std::int64_t n = call.out[0].count;
    return std::all_of(call.out.begin(), call.out.end(), [&](const TensorView& v) { return v.present() && v.count == n; })
        && std::all_of(call.in.begin(), call.in.end(), [&](const TensorView& v) { return !v.present() || v.count == n || v.count == 1; });
}

bool runInSlices(Kernel kernel, const KernelCall& call)
{
    const std::int64_t n = call.out[0].count;
    // One staging buffer per narrow tensor, in input-then-output order: a slice, or a single element.
    std::vector<float*> buffers;
    std::size_t floats = 0;
    KernelCall slice = call;
    for (auto* list : { &slice.in, &slice.out })
        for (auto& v : *list)
            floats += isNarrow(v) ? stagedFloats(v.count == 1 && list == &slice.in ? 1 : kTile) : 0;
    float* next = staging(floats);
    for (auto* list : { &slice.in, &slice.out })
        for (auto& v : *list)
            if (isNarrow(v)) {
                const bool single = v.count == 1 && list == &slice.in;
                buffers.push_back(next);
                if (single)
                    widenRange(v, 0, 1, next);
                next += stagedFloats(single ? 1 : kTile);
            }
    for (std::int64_t first = 0; first < n; first += kTile) {
        const std::int64_t count = std::min(kTile, n - first);
        std::size_t buffer = 0;
        for (auto* list : { &slice.in, &slice.out }) {
            const bool inputs = list == &slice.in;
            const auto& original = inputs ? call.in : call.out;
            for (std::size_t k = 0; k < list->size(); ++k) {
                const TensorView& from = original[k];
                TensorView& to = (*list)[k];
                if (!from.present())
                    continue;
                const bool whole = inputs && from.count == 1;
                to.shape = whole ? Shape {} : Shape { count };
                to.count = whole ? 1 : count;
                if (!isNarrow(from)) {
                    to.data = from.data + (whole ? 0 : first * dtypeBytes(from.dtype));
                    continue;
                }
                float* values = buffers[buffer++];
                to.dtype = DType::Float32;
                to.data = reinterpret_cast<std::byte*>(values);
                if (inputs && !whole)
                    widenRange(from, first, count, values);
            }
        }
        if (!kernel(slice))
            return false; // only the first slice can refuse (the rest differ only in length): nothing written
        std::size_t out = 0;
        for (const auto& v : call.in)
            out += isNarrow(v) ? 1 : 0;
        for (std::size_t k = 0; k < call.out.size(); ++k)
            if (isNarrow(call.out[k]))
                narrowRange(buffers[out++], call.out[k], first, count);
    }
    return true;
}

// N,H,W,C <-> N,C,H,W of a rank-4 float32 view.
void copyLayout(const TensorView& v, const float* from, float* to, bool toChannelsLast)
{
    const std::int64_t n = v.shape[0], c = v.shape[1], plane = v.shape[2] * v.shape[3];
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t ch = 0; ch < c; ++ch)
            for (std::int64_t i = 0; i < plane; ++i) {
                const std::int64_t planar = (b * c + ch) * plane + i, last = (b * plane + i) * c + ch;
                to[toChannelsLast ? last : planar] = from[toChannelsLast ? planar : last];
            }
}

// A call with a channels-last view that oneDNN does not take: the kernel runs on N,C,H,W copies
// (kernel scratch), and its channels-last outputs are copied back.
bool runOnPlainCopies(Kernel kernel, const KernelCall& call)
{
    KernelCall plain = call;
    std::vector<std::vector<float>> copies;
    Bytes bytes = 0;
    const auto unstore = [&](TensorView& v, bool values) {
        if (!v.channelsLast || !v.present())
            return;
        copies.emplace_back(std::size_t(v.count));
        if (values)
            copyLayout(v, v.f32(), copies.back().data(), false);
        v.data = reinterpret_cast<std::byte*>(copies.back().data());
        v.channelsLast = false;
        bytes += v.bytes();
    };
    copies.reserve(call.in.size() + call.out.size());
    for (auto& v : plain.in)
        unstore(v, true);
    for (auto& v : plain.out)
        unstore(v, false);
    noteKernelBuffers(bytes);
    if (!runKernel(kernel, plain))
        return false;
    for (std::size_t k = 0; k < call.out.size(); ++k)
        if (call.out[k].channelsLast && call.out[k].present())
            copyLayout(call.out[k], plain.out[k].f32(), call.out[k].f32(), true);
    return true;
}

} // namespace

bool runKernel(Kernel kernel, const KernelCall& call)
{
    const auto stored = [](const TensorView& v) { return v.channelsLast; };
    if (std::any_of(call.in.begin(), call.in.end(), stored) || std::any_of(call.out.begin(), call.out.end(), stored)) {
        // A byte copy between views of one layout needs no N,C,H,W copies.
        const auto& t = call.op->type;
        if ((t == "Identity" || t == "SwapOut" || t == "SwapIn") && call.in.size() == 1 && call.out.size() == 1
            && call.in[0].channelsLast == call.out[0].channelsLast)
            return kernel(call);
        return onednnChannelsLast(call) || runOnPlainCopies(kernel, call);
    }
    const std::string& type = call.op->type;
    if (type == "Cast" || type == "CastLike"
        || (std::none_of(call.in.begin(), call.in.end(), isNarrow) && std::none_of(call.out.begin(), call.out.end(), isNarrow)))
        return kernel(call);
    if (runsInSlices(call))
        return runInSlices(kernel, call);
    KernelCall wide = call;
    std::size_t floats = 0;
    for (auto* list : { &wide.in, &wide.out })
        for (const auto& v : *list)
            floats += isNarrow(v) ? stagedFloats(v.count) : 0;
    float* next = staging(floats);
    const auto widen = [&](TensorView& v, bool values) {
        if (!isNarrow(v))
            return;
        if (values)
            widenRange(v, 0, v.count, next);
        v.dtype = DType::Float32;
        v.data = reinterpret_cast<std::byte*>(next);
        v.constant = false; // a copy in the staging buffer, which the next call reuses
        next += stagedFloats(v.count);
    };
    for (auto& v : wide.in)
        widen(v, true);
    for (auto& v : wide.out)
        widen(v, false); // kernels write every output element before reading it
    if (!kernel(wide))
        return false;
    for (std::size_t k = 0; k < call.out.size(); ++k)
        if (isNarrow(call.out[k]))
            narrowRange(wide.out[k].f32(), call.out[k], 0, call.out[k].count);
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
