// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Test emulation of cuBLAS (README.md): SGEMM in column-major order, enqueued on the handle's
// stream, every operand range checked against live device memory when enqueued and when it runs.
// The sums run in a plain order, so results match the CPU executor within float rounding only.
#include "state.h"

#include "cublas_v2.h"

#include <algorithm>
#include <set>

struct cublasContext {
    cudaStream_t stream = nullptr;
    cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

namespace cudaemu::detail {

namespace {

std::set<cublasHandle_t>& handles()
{
    static std::set<cublasHandle_t> h;
    return h;
}

cublasStatus_t enterBlas(cublasStatus_t planned)
{
    if (stickyError() != cudaSuccess)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    return failHere() ? planned : CUBLAS_STATUS_SUCCESS;
}

struct Gemm {
    bool ta = false, tb = false;
    int m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
    float alpha = 1, beta = 0;
    long long strideA = 0, strideB = 0, strideC = 0;
    int batches = 1;

    // Elements each operand spans in one batch.
    std::size_t spanA() const { return k == 0 ? 0 : std::size_t(lda) * std::size_t((ta ? m : k) - 1) + std::size_t(ta ? k : m); }
    std::size_t spanB() const { return k == 0 ? 0 : std::size_t(ldb) * std::size_t((tb ? k : n) - 1) + std::size_t(tb ? n : k); }
    std::size_t spanC() const { return std::size_t(ldc) * std::size_t(n - 1) + std::size_t(m); }
    static std::size_t total(std::size_t span, long long stride, int batches)
    {
        return span == 0 ? 0 : std::size_t(stride) * std::size_t(batches - 1) + span;
    }

    void run(const float* a, const float* b, float* c) const
    {
        std::vector<float> column(static_cast<std::size_t>(m));
        for (int j = 0; j < n; ++j) {
            std::fill(column.begin(), column.end(), 0.0f);
            for (int l = 0; l < k; ++l) {
                const float bv = tb ? b[j + std::size_t(l) * ldb] : b[l + std::size_t(j) * ldb];
                for (int i = 0; i < m; ++i)
                    column[std::size_t(i)] += (ta ? a[l + std::size_t(i) * lda] : a[i + std::size_t(l) * lda]) * bv;
            }
            float* y = c + std::size_t(j) * ldc;
            for (int i = 0; i < m; ++i) // beta == 0: C is not read (it may hold NaN), as in cuBLAS
                y[i] = alpha * column[std::size_t(i)] + (beta == 0 ? 0.0f : beta * y[i]);
        }
    }
};

cublasStatus_t enqueueGemm(cublasHandle_t h, const Gemm& g, const float* a, const float* b, float* c, const char* call)
{
    if (!handles().count(h))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (g.m < 0 || g.n < 0 || g.k < 0 || g.batches < 0 || g.lda < std::max(1, g.ta ? g.k : g.m) || g.ldb < std::max(1, g.tb ? g.n : g.k)
        || g.ldc < std::max(1, g.m))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (g.m == 0 || g.n == 0 || g.batches == 0)
        return CUBLAS_STATUS_SUCCESS;
    const std::size_t bytesA = Gemm::total(g.spanA(), g.strideA, g.batches) * sizeof(float);
    const std::size_t bytesB = Gemm::total(g.spanB(), g.strideB, g.batches) * sizeof(float);
    const std::size_t bytesC = Gemm::total(g.spanC(), g.strideC, g.batches) * sizeof(float);
    const std::string name = call;
    if ((bytesA && !checkDevice(a, bytesA, name + " A")) || (bytesB && !checkDevice(b, bytesB, name + " B"))
        || !checkDevice(c, bytesC, name + " C"))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    if (!validStream(h->stream))
        return CUBLAS_STATUS_INVALID_VALUE;
    enqueue(
        h->stream,
        [=] {
            if ((bytesA && !usableNow(a, bytesA, name + " A")) || (bytesB && !usableNow(b, bytesB, name + " B"))
                || !usableNow(c, bytesC, name + " C"))
                return;
            for (int i = 0; i < g.batches; ++i)
                g.run(a + i * g.strideA, b + i * g.strideB, c + i * g.strideC);
        },
        2.0 * g.m * g.n * g.k * g.batches / 1e10); // the emulated clock: 10 TFLOP/s
    return CUBLAS_STATUS_SUCCESS;
}

} // namespace

int liveBlasHandles() { return int(handles().size()); }

void resetBlas()
{
    for (auto h : handles())
        delete h;
    handles().clear();
}

} // namespace cudaemu::detail

using namespace cudaemu::detail;

const char* cublasGetStatusName(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    }
    return "CUBLAS_STATUS_UNKNOWN";
}

const char* cublasGetStatusString(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    }
    return "unknown error";
}

cublasStatus_t cublasCreate(cublasHandle_t* handle)
{
    if (const auto s = enterBlas(CUBLAS_STATUS_ALLOC_FAILED); s != CUBLAS_STATUS_SUCCESS)
        return s;
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    *handle = new cublasContext;
    handles().insert(*handle);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle)
{
    if (!handles().erase(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream)
{
    if (const auto s = enterBlas(CUBLAS_STATUS_EXECUTION_FAILED); s != CUBLAS_STATUS_SUCCESS)
        return s;
    if (!handles().count(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!validStream(stream))
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    if (const auto s = enterBlas(CUBLAS_STATUS_EXECUTION_FAILED); s != CUBLAS_STATUS_SUCCESS)
        return s;
    if (!handles().count(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->math = mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const float* alpha,
    const float* A, int lda, const float* B, int ldb, const float* beta, float* C, int ldc)
{
    if (const auto s = enterBlas(CUBLAS_STATUS_EXECUTION_FAILED); s != CUBLAS_STATUS_SUCCESS)
        return s;
    if (!alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    Gemm g { transa == CUBLAS_OP_T, transb == CUBLAS_OP_T, m, n, k, lda, ldb, ldc, *alpha, *beta };
    return enqueueGemm(handle, g, A, B, C, "cublasSgemm");
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const float* alpha, const float* A, int lda, long long strideA, const float* B, int ldb, long long strideB, const float* beta, float* C,
    int ldc, long long strideC, int batchCount)
{
    if (const auto s = enterBlas(CUBLAS_STATUS_EXECUTION_FAILED); s != CUBLAS_STATUS_SUCCESS)
        return s;
    if (!alpha || !beta || strideA < 0 || strideB < 0 || strideC < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    Gemm g { transa == CUBLAS_OP_T, transb == CUBLAS_OP_T, m, n, k, lda, ldb, ldc, *alpha, *beta, strideA, strideB, strideC, batchCount };
    return enqueueGemm(handle, g, A, B, C, "cublasSgemmStridedBatched");
}
