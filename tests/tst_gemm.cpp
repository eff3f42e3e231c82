// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The CPU GEMM reads a transposed B in place (Gemm's transB weights), so a Gemm needs no kernel
// scratch, and gives the very bits of a GEMM on an explicitly transposed copy.
#include "cpukernels.h"
#include "exec/executor.h"
#include "exec/kernels.h"
#include "graphbuilder.h"
#include "planners/planner.h"
#include "planners/validate.h"

#include <QTest>

#include <cmath>
#include <cstring>
#include <random>

class TestGemm : public QObject {
    Q_OBJECT
private slots:
    void transposedBInPlace_data();
    void transposedBInPlace();
    void gemmOpNeedsNoScratch();
};

void TestGemm::transposedBInPlace_data()
{
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    // Edges of the 4x8 register tile and of the 256-deep K blocks.
    QTest::newRow("tile") << 4 << 8 << 16;
    QTest::newRow("edges") << 7 << 13 << 5;
    QTest::newRow("k-blocks") << 9 << 17 << 600;
    QTest::newRow("one row") << 1 << 1000 << 2048;
    QTest::newRow("one column") << 33 << 1 << 300;
}

void TestGemm::transposedBInPlace()
{
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> value(-1, 1);
    std::vector<float> a(std::size_t(m) * k), bt(std::size_t(n) * k), b(std::size_t(k) * n);
    for (auto& v : a)
        v = value(rng);
    for (auto& v : bt)
        v = value(rng);
    for (int j = 0; j < n; ++j)
        for (int kk = 0; kk < k; ++kk)
            b[std::size_t(kk) * n + j] = bt[std::size_t(j) * k + kk];
    std::vector<float> copied(std::size_t(m) * n), inPlace(std::size_t(m) * n, 42.0f);
    core::exec::gemm(m, n, k, a.data(), k, b.data(), n, copied.data(), n, false);
    core::exec::gemm(m, n, k, a.data(), k, bt.data(), k, inPlace.data(), n, false, true);
    QVERIFY(std::memcmp(copied.data(), inPlace.data(), copied.size() * sizeof(float)) == 0);
}

void TestGemm::gemmOpNeedsNoScratch()
{
    // The own Gemm kernel (oneDNN's matmul has a scratchpad of its own: tst_onednn).
    const CpuKernelsInScope ownKernels(core::CpuKernels::Own);
    // y = x · Wᵀ + bias with W stored [out, in], as exporters write Linear layers; all three given.
    constexpr int rows = 3, in = 300, out = 70;
    GraphBuilder gb;
    const auto x = gb.tensor("x", { rows, in }, core::TensorKind::Input);
    const auto w = gb.tensor("w", { out, in }, core::TensorKind::Input);
    const auto bias = gb.tensor("bias", { out }, core::TensorKind::Input);
    const auto y = gb.tensor("y", { rows, out }, core::TensorKind::Output);
    gb.op("fc", "Gemm", { x, w, bias }, { y })->attributes["transB"].ints = { 1 };
    const auto workload = gb.workload("gemm", 64);
    const auto plan = core::runPlanner(*core::plannerByName("greedy-by-size"), workload.problem);
    QVERIFY(plan);
    QVERIFY(core::validatePlan(workload.problem, *plan).ok());

    std::mt19937 rng(11);
    std::uniform_real_distribution<float> value(-1, 1);
    core::RunOptions options;
    std::vector<std::vector<float>> values;
    for (const auto& [name, shape] : { std::pair { "x", std::vector<std::int64_t> { rows, in } }, { "w", { out, in } }, { "bias", { out } } }) {
        std::size_t count = 1;
        for (auto d : shape)
            count *= std::size_t(d);
        std::vector<float> v(count);
        for (auto& e : v)
            e = value(rng);
        core::HostTensor t;
        t.dtype = core::DType::Float32;
        t.shape = shape;
        t.data.resize(count * sizeof(float));
        std::memcpy(t.data.data(), v.data(), t.data.size());
        options.inputs[name] = std::move(t);
        values.push_back(std::move(v));
    }
    const auto m = core::runOnCpu(*workload.graph, workload.schedule, workload.problem, *plan, workload.bufferTensor, options);
    QVERIFY2(m, m ? "" : m.error().message.c_str());
    QCOMPARE(m->opsReal, 1);
    QCOMPARE(m->scratchBytes, core::Bytes(0)); // no transposed copy of W
    QCOMPARE(m->outputs.size(), std::size_t(1));
    const auto* result = reinterpret_cast<const float*>(m->outputs[0].data.data());
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < out; ++j) {
            double expected = values[2][std::size_t(j)];
            for (int kk = 0; kk < in; ++kk)
                expected += double(values[0][std::size_t(i) * in + kk]) * values[1][std::size_t(j) * in + kk];
            QVERIFY2(std::abs(result[i * out + j] - expected) <= 1e-4 * (1 + std::abs(expected)),
                qPrintable(QStringLiteral("y[%1][%2] = %3, expected %4").arg(i).arg(j).arg(result[i * out + j]).arg(expected)));
        }
}

QTEST_GUILESS_MAIN(TestGemm)
#include "tst_gemm.moc"
