// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Einsum (float32, float64): a product the operands already lay out as a (batched) GEMM runs as one
// without copies; any other equation contracts the operands pairwise, left to right: each pair is
// gathered into [batch, free, contracted] order (diagonals, broadcasts and labels summed in one
// operand alone resolved while gathering), multiplied, and the last result is gathered into the
// output's order.
#include "exec/einsum.h"
#include "exec/kernels.h"

#include <algorithm>

namespace core::exec {

namespace {

// An operand seen through its labels: each distinct label once, with its element stride (the
// strides of a repeated label add up to walk the diagonal; a broadcast dimension has stride 0).
template <typename T>
struct Labelled {
    const T* data = nullptr;
    std::vector<int> labels;
    std::vector<std::int64_t> strides;

    std::int64_t strideOf(int label) const
    {
        const auto it = std::find(labels.begin(), labels.end(), label);
        return it == labels.end() ? 0 : strides[std::size_t(it - labels.begin())];
    }
    bool has(int label) const { return std::find(labels.begin(), labels.end(), label) != labels.end(); }
};

template <typename T>
Labelled<T> labelled(const T* data, const Shape& shape, const std::vector<int>& labels)
{
    Labelled<T> v { data, {}, {} };
    const auto strides = stridesOf(shape);
    for (std::size_t d = 0; d < labels.size(); ++d) {
        const std::int64_t s = shape[d] == 1 ? 0 : strides[d];
        const auto it = std::find(v.labels.begin(), v.labels.end(), labels[d]);
        if (it == v.labels.end()) {
            v.labels.push_back(labels[d]);
            v.strides.push_back(s);
        } else
            v.strides[std::size_t(it - v.labels.begin())] += s;
    }
    return v;
}

// dst (row-major over `keep`) = the sum over the operand's other labels of its elements.
template <typename T>
void gather(const Labelled<T>& src, const std::vector<int>& keep, const std::vector<std::int64_t>& extent, T* dst)
{
    std::vector<std::int64_t> keepExtent, keepStride, sumExtent, sumStride;
    for (int l : keep) {
        keepExtent.push_back(extent[std::size_t(l)]);
        keepStride.push_back(src.strideOf(l));
    }
    for (std::size_t i = 0; i < src.labels.size(); ++i)
        if (std::find(keep.begin(), keep.end(), src.labels[i]) == keep.end()) {
            sumExtent.push_back(extent[std::size_t(src.labels[i])]);
            sumStride.push_back(src.strides[i]);
        }
    std::int64_t sumCount = 1, keepCount = 1;
    for (auto e : sumExtent)
        sumCount *= e;
    for (auto e : keepExtent)
        keepCount *= e;
    // Odometers over the kept and the summed labels; `at` is the element offset of each.
    const auto advance = [](std::vector<std::int64_t>& idx, const std::vector<std::int64_t>& ext, const std::vector<std::int64_t>& str,
                             std::int64_t& at) {
        for (std::size_t d = idx.size(); d-- > 0;) {
            at += str[d];
            if (++idx[d] < ext[d])
                return;
            at -= str[d] * ext[d];
            idx[d] = 0;
        }
    };
    std::vector<std::int64_t> keepIdx(keep.size(), 0), sumIdx(sumExtent.size(), 0);
    std::int64_t keepAt = 0;
    for (std::int64_t i = 0; i < keepCount; ++i) {
        T acc = 0;
        std::int64_t sumAt = 0;
        for (std::int64_t s = 0; s < sumCount; ++s) {
            acc += src.data[keepAt + sumAt];
            advance(sumIdx, sumExtent, sumStride, sumAt);
        }
        dst[i] = acc;
        advance(keepIdx, keepExtent, keepStride, keepAt);
    }
}

void matmul(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float* c, bool transA, bool transB)
{
    if (!transA) {
        gemm(m, n, k, a, k, b, transB ? k : n, c, n, false, transB);
        return;
    }
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            float acc = 0;
            for (std::int64_t l = 0; l < k; ++l)
                acc += a[l * m + i] * (transB ? b[j * k + l] : b[l * n + j]);
            c[i * n + j] = acc;
        }
}

void matmul(std::int64_t m, std::int64_t n, std::int64_t k, const double* a, const double* b, double* c, bool transA, bool transB)
{
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (std::int64_t l = 0; l < k; ++l)
                acc += (transA ? a[l * m + i] : a[i * k + l]) * (transB ? b[j * k + l] : b[l * n + j]);
            c[i * n + j] = acc;
        }
}

template <typename T>
void batchedMatmul(const EinsumGemm& g, const T* a, const T* b, T* c)
{
    for (std::int64_t i = 0; i < g.batch; ++i)
        matmul(g.m, g.n, g.k, a + i * g.m * g.k, b + i * g.k * g.n, c + i * g.m * g.n, g.transA, g.transB);
}

template <typename T>
T* scratchOf(int slot, std::int64_t count)
{
    return reinterpret_cast<T*>(scratch(slot, count * std::int64_t(sizeof(T) / sizeof(float))));
}

// Contracts x with y into scratch `slot`: the result's labels are `keep`'s labels that x or y has,
// in the order batch (in both), x's free labels, y's free labels.
template <typename T>
Labelled<T> contract(const Labelled<T>& x, const Labelled<T>& y, const std::vector<int>& keep, const std::vector<std::int64_t>& extent, int slot)
{
    std::vector<int> batch, left, right, contracted;
    for (int l : keep)
        (x.has(l) && y.has(l) ? batch : x.has(l) ? left : right).push_back(l);
    std::erase_if(right, [&](int l) { return !y.has(l); });
    for (int l : x.labels)
        if (y.has(l) && std::find(keep.begin(), keep.end(), l) == keep.end())
            contracted.push_back(l);
    const auto joined = [](std::vector<int> p, const std::vector<int>& q, const std::vector<int>& r) {
        p.insert(p.end(), q.begin(), q.end());
        p.insert(p.end(), r.begin(), r.end());
        return p;
    };
    EinsumGemm g;
    const auto product = [&](const std::vector<int>& ls) {
        std::int64_t p = 1;
        for (int l : ls)
            p *= extent[std::size_t(l)];
        return p;
    };
    g.batch = product(batch);
    g.m = product(left);
    g.n = product(right);
    g.k = product(contracted);
    T* a = scratchOf<T>(0, g.batch * g.m * g.k);
    gather(x, joined(batch, left, contracted), extent, a);
    T* b = scratchOf<T>(1, g.batch * g.k * g.n);
    gather(y, joined(batch, contracted, right), extent, b);
    T* c = scratchOf<T>(slot, g.batch * g.m * g.n);
    batchedMatmul(g, a, b, c);
    Labelled<T> r { c, joined(batch, left, right), {} };
    r.strides.assign(r.labels.size(), 0);
    std::int64_t stride = 1;
    for (std::size_t d = r.labels.size(); d-- > 0;) {
        r.strides[d] = stride;
        stride *= extent[std::size_t(r.labels[d])];
    }
    return r;
}

template <typename T>
bool einsumAs(const KernelCall& c, const EinsumLabels& e)
{
    const auto data = [&](std::size_t i) { return reinterpret_cast<const T*>(c.in[i].data); };
    T* out = reinterpret_cast<T*>(c.out[0].data);
    EinsumGemm g;
    if (einsumAsGemm(e, g)) {
        batchedMatmul(g, data(std::size_t(g.a)), data(std::size_t(g.b)), out);
        return true;
    }
    auto acc = labelled(data(0), c.in[0].shape, e.inputs[0]);
    for (std::size_t i = 1; i < e.inputs.size(); ++i) {
        // Keep what the output or a later operand still needs: the output's labels first.
        std::vector<int> keep = e.output;
        for (std::size_t j = i + 1; j < e.inputs.size(); ++j)
            for (int l : e.inputs[j])
                if (std::find(keep.begin(), keep.end(), l) == keep.end())
                    keep.push_back(l);
        acc = contract(acc, labelled(data(i), c.in[i].shape, e.inputs[i]), keep, e.extent, 2 + int(i % 2));
    }
    gather(acc, e.output, e.extent, out);
    return true;
}

bool einsum(const KernelCall& c)
{
    if (c.in.empty() || c.out.size() != 1 || !c.out[0].present())
        return false;
    const DType dtype = c.out[0].dtype;
    if (dtype != DType::Float32 && dtype != DType::Float64)
        return false;
    std::vector<Shape> shapes;
    for (const auto& v : c.in) {
        if (!v.present() || v.dtype != dtype)
            return false;
        shapes.push_back(v.shape);
    }
    EinsumLabels e;
    if (!einsumLabels(c.attrText("equation"), shapes, c.out[0].shape, e))
        return false;
    return dtype == DType::Float32 ? einsumAs<float>(c, e) : einsumAs<double>(c, e);
}

} // namespace

void addEinsumKernels(std::map<std::string, Kernel>& t)
{
    t["Einsum"] = einsum;
}

} // namespace core::exec
