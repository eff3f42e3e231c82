// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Text features: TfIdfVectorizer, the n-gram counter of exported text-classification pipelines
// (scikit-learn's CountVectorizer/TfidfVectorizer through sklearn-onnx), on token ids (int32 or
// int64, [C] or [N, C]); a pool of strings has no kernel (MemPlan holds no string tensors).
#include "exec/kernels.h"

#include <algorithm>
#include <map>
#include <vector>

namespace core::exec {

namespace {

// The pool as n-grams: for each length n, each n-gram's ids and its position in the pool (the index
// into ngram_indexes and weights).
struct NgramPool {
    std::map<std::int64_t, std::map<std::vector<std::int64_t>, std::size_t>> byLength;
    std::size_t count = 0;
};

// ngram_counts[j] is where the (j+1)-grams start in pool_int64s (in ids); each level runs to the next
// start or the pool's end and must hold whole n-grams. False for a pool that does not split so.
bool readPool(const std::vector<std::int64_t>& pool, const std::vector<std::int64_t>& starts, NgramPool& out)
{
    for (std::size_t j = 0; j < starts.size(); ++j) {
        const std::int64_t n = std::int64_t(j) + 1;
        const std::int64_t begin = starts[j], end = j + 1 < starts.size() ? starts[j + 1] : std::int64_t(pool.size());
        if (begin < 0 || end < begin || end > std::int64_t(pool.size()) || (end - begin) % n != 0)
            return false;
        for (std::int64_t at = begin; at < end; at += n) {
            std::vector<std::int64_t> gram(pool.begin() + at, pool.begin() + at + n);
            out.byLength[n].emplace(std::move(gram), out.count); // a repeated n-gram counts for its first entry
            ++out.count;
        }
    }
    return true;
}

// Y[ngram_indexes[k]] is how often pool n-gram k occurs in a row: an n-gram of n >= 2 ids is taken at
// every start and every stride 1 .. max_skip_count + 1 that keeps it inside the row; a 1-gram once
// per position. IDF keeps 1 for a count above 0, scaled by weights[k]; TFIDF scales the count.
bool tfIdfVectorizer(const KernelCall& c)
{
    const auto &x = c.in[0], &y = c.out[0];
    const auto* pool = c.attrInts("pool_int64s");
    const auto* starts = c.attrInts("ngram_counts");
    const auto* indexes = c.attrInts("ngram_indexes");
    const std::string mode = c.attrText("mode");
    const std::int64_t minLength = c.attrInt("min_gram_length", 0), maxLength = c.attrInt("max_gram_length", 0);
    const std::int64_t maxSkip = c.attrInt("max_skip_count", 0);
    if (!c.has(0) || (x.dtype != DType::Int32 && x.dtype != DType::Int64) || y.dtype != DType::Float32 || !pool || !starts || !indexes
        || (x.rank() != 1 && x.rank() != 2) || y.rank() != x.rank() || (mode != "TF" && mode != "IDF" && mode != "TFIDF")
        || minLength < 1 || maxLength < minLength || maxSkip < 0)
        return false;
    NgramPool grams;
    if (!readPool(*pool, *starts, grams) || indexes->size() != grams.count)
        return false;
    const std::int64_t rows = x.rank() == 2 ? x.shape[0] : 1, width = x.shape.back(), outWidth = y.shape.back();
    if ((x.rank() == 2 && y.shape[0] != rows) || std::any_of(indexes->begin(), indexes->end(), [&](std::int64_t i) { return i < 0 || i >= outWidth; }))
        return false;
    std::vector<float> weights(grams.count, 1.0f);
    if (const auto it = c.op->attributes.find("weights"); it != c.op->attributes.end() && !it->second.floats.empty()) {
        if (it->second.floats.size() != grams.count)
            return false;
        weights = it->second.floats;
    }
    const auto id = [&](std::int64_t i) { return x.dtype == DType::Int64 ? x.i64()[i] : std::int64_t(reinterpret_cast<const std::int32_t*>(x.data)[i]); };
    std::fill(y.f32(), y.f32() + y.count, 0.0f);
    std::vector<std::int64_t> counts(grams.count);
    std::vector<std::int64_t> gram;
    for (std::int64_t r = 0; r < rows; ++r) {
        std::fill(counts.begin(), counts.end(), 0);
        // Only the pool's lengths and the strides at which an n-gram fits in the row: the
        // attributes alone may ask for 2^62 of either.
        for (const auto& [n, level] : grams.byLength) {
            if (n < minLength || n > maxLength)
                continue;
            const std::int64_t lastStride = n == 1 ? 1 : std::min(std::min(maxSkip, width) + 1, width / (n - 1));
            for (std::int64_t stride = 1; stride <= lastStride; ++stride)
                for (std::int64_t start = 0; start + (n - 1) * stride < width; ++start) {
                    gram.clear();
                    for (std::int64_t k = 0; k < n; ++k)
                        gram.push_back(id(r * width + start + k * stride));
                    if (const auto hit = level.find(gram); hit != level.end())
                        ++counts[hit->second];
                }
        }
        float* row = y.f32() + r * outWidth;
        for (std::size_t k = 0; k < grams.count; ++k) {
            if (counts[k] == 0)
                continue;
            const float value = mode == "TF" ? float(counts[k]) : mode == "IDF" ? weights[k] : float(counts[k]) * weights[k];
            row[(*indexes)[k]] = value;
        }
    }
    return true;
}

} // namespace

void addTextKernels(std::map<std::string, Kernel>& t)
{
    t["TfIdfVectorizer"] = tfIdfVectorizer;
}

} // namespace core::exec
