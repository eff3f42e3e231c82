// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// One executor's outputs against another's within a relative tolerance (core::checkTolerance, the
// check of `memplan run --device cuda --tolerance` and of the Studio's cuda runs), on hand-made
// outputs: no GPU needed. And the Studio's words for it (gpuVsCpuText, the tolerance box's format).
#include "exec/tolerance.h"
#include "runmeasurement.h"
#include "summarypanel.h"
#include "tolerancespinbox.h"

#include <QTest>

#include <cmath>
#include <cstring>
#include <limits>

using namespace core;

namespace {
HostTensor floats(const std::vector<float>& values)
{
    HostTensor t;
    t.dtype = DType::Float32;
    t.shape = { static_cast<std::int64_t>(values.size()) };
    t.data.resize(values.size() * sizeof(float));
    std::memcpy(t.data.data(), values.data(), t.data.size());
    return t;
}

HostTensor int64s(const std::vector<std::int64_t>& values)
{
    HostTensor t;
    t.dtype = DType::Int64;
    t.shape = { static_cast<std::int64_t>(values.size()) };
    t.data.resize(values.size() * sizeof(std::int64_t));
    std::memcpy(t.data.data(), values.data(), t.data.size());
    return t;
}

// A graph with outputs named y and k: the names the messages use.
Graph twoOutputs()
{
    Graph g;
    g.tensors.push_back(Tensor { .name = "y", .dtype = DType::Float32 });
    g.tensors.push_back(Tensor { .name = "k", .dtype = DType::Int64 });
    g.outputs = { 0, 1 };
    return g;
}

// x -> [first] -> c -> QuantizeLinear -> q -> DequantizeLinear -> y (the output). `first` "" leaves
// the first op out: QuantizeLinear then reads the graph input x.
Graph quantizing(const std::string& first)
{
    Graph g;
    for (const char* name : { "x", "c", "q", "y" })
        g.tensors.push_back(Tensor { .name = name, .dtype = DType::Float32 });
    g.tensors[2].dtype = DType::UInt8;
    g.inputs = { 0 };
    g.outputs = { 3 };
    if (!first.empty())
        g.ops.push_back(Op { .name = "first", .type = first, .inputs = { 0 }, .outputs = { 1 } });
    g.ops.push_back(Op { .name = "quantize", .type = "QuantizeLinear", .inputs = { first.empty() ? 0 : 1 }, .outputs = { 2 } });
    g.ops.push_back(Op { .name = "dequantize", .type = "DequantizeLinear", .inputs = { 2 }, .outputs = { 3 } });
    return g;
}
} // namespace

class TestTolerance : public QObject {
    Q_OBJECT
private slots:
    void identicalIsZero();
    void relativeToTheOutputsScale();
    void offNamesTheFirstElement();
    void nanAndExactTypes();
    void halfPrecisionWithinTolerance();
    void gpuVsCpuWords();
    void quantizedModelsNameTheCause();
    void toleranceFormat();
};

void TestTolerance::identicalIsZero()
{
    const Graph g = twoOutputs();
    const std::vector<HostTensor> cpu { floats({ 1, -2, 4 }), int64s({ 3, 4 }) };
    const auto check = checkTolerance(g, cpu, cpu, 0);
    QVERIFY(check.within());
    QCOMPARE(check.maxRelativeError, 0.0);
    QCOMPARE(compareWithin(g, cpu, cpu, 0), std::string());
}

// |gpu - cpu| / (|cpu| + max |cpu|): an error of 8e-6 at 4 (scale 4) is 1e-6; the same absolute
// error at 1 is 8e-6 / 5, and the maximum over the output is reported.
void TestTolerance::relativeToTheOutputsScale()
{
    const Graph g = twoOutputs();
    const std::vector<HostTensor> cpu { floats({ 1, -2, 4 }), int64s({ 3, 4 }) };
    const float four = std::nextafter(4.0f, 5.0f); // 4 + 4.77e-7
    const auto check = checkTolerance(g, cpu, { floats({ 1, -2, four }), int64s({ 3, 4 }) }, 1e-4);
    QVERIFY(check.within());
    QCOMPARE(check.maxRelativeError, (double(four) - 4.0) / 8.0);
    const float one = std::nextafter(1.0f, 2.0f); // 1 + 1.19e-7: relative 1.19e-7 / 5, less than the one at 4
    const auto both = checkTolerance(g, cpu, { floats({ one, -2, four }), int64s({ 3, 4 }) }, 1e-4);
    QCOMPARE(both.maxRelativeError, (double(four) - 4.0) / 8.0);
    // The tolerance is a bound on that number: just below it fails, at it passes.
    QVERIFY(!checkTolerance(g, cpu, { floats({ 1, -2, four }), int64s({ 3, 4 }) }, check.maxRelativeError * 0.99).within());
    QVERIFY(checkTolerance(g, cpu, { floats({ 1, -2, four }), int64s({ 3, 4 }) }, check.maxRelativeError).within());
}

void TestTolerance::offNamesTheFirstElement()
{
    const Graph g = twoOutputs();
    const std::vector<HostTensor> cpu { floats({ 1, -2, 4 }), int64s({ 3, 4 }) };
    const auto check = checkTolerance(g, cpu, { floats({ 1, -2.5f, 5 }), int64s({ 3, 4 }) }, 1e-4);
    QVERIFY(!check.within());
    QVERIFY2(check.firstOff.find("output 'y' element 1: expected -2") == 0, check.firstOff.c_str());
    QCOMPARE(check.maxRelativeError, 1.0 / 8.0); // element 2: |5 - 4| / (4 + 4), larger than element 1's 0.5 / 6
    QCOMPARE(compareWithin(g, cpu, { floats({ 1, -2.5f, 5 }), int64s({ 3, 4 }) }, 1e-4), check.firstOff);
}

void TestTolerance::nanAndExactTypes()
{
    const Graph g = twoOutputs();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<HostTensor> cpu { floats({ nan, 1 }), int64s({ 3, 4 }) };
    QVERIFY(checkTolerance(g, cpu, cpu, 0).within()); // NaN where NaN
    const auto number = checkTolerance(g, cpu, { floats({ 0, 1 }), int64s({ 3, 4 }) }, 0.5);
    QVERIFY(!number.within());
    QVERIFY(std::isinf(number.maxRelativeError));
    const auto ints = checkTolerance(g, cpu, { floats({ nan, 1 }), int64s({ 3, 5 }) }, 0.5);
    QCOMPARE(ints.firstOff, std::string("output 'k' differs (not float: compared exactly)"));
    QCOMPARE(checkTolerance(g, cpu, { floats({ nan, 1 }) }, 0.5).firstOff, std::string("different number of outputs"));
    QCOMPARE(checkTolerance(g, cpu, { floats({ nan }), int64s({ 3, 4 }) }, 0.5).firstOff,
        std::string("output 'y': different type or size"));
}

// float16 outputs (a half-precision model on the GPU) compare by value like float32 ones: one unit in
// the last place is within 1e-2, where an exact comparison would fail it.
void TestTolerance::halfPrecisionWithinTolerance()
{
    Graph g;
    g.tensors.push_back(Tensor { .name = "h", .dtype = DType::Float16 });
    g.outputs = { 0 };
    const auto halves = [](const std::vector<std::uint16_t>& bits) {
        HostTensor t;
        t.dtype = DType::Float16;
        t.shape = { std::int64_t(bits.size()) };
        t.data.resize(bits.size() * 2);
        std::memcpy(t.data.data(), bits.data(), t.data.size());
        return t;
    };
    const std::vector<HostTensor> cpu { halves({ 0x3c00, 0x4000 }) }; // 1, 2
    const auto ulp = checkTolerance(g, cpu, { halves({ 0x3c01, 0x4000 }) }, 1e-2); // 1 + 2^-10
    QVERIFY2(ulp.within(), ulp.firstOff.c_str());
    QVERIFY(std::fabs(ulp.maxRelativeError - (1.0 / 1024) / 3) < 1e-9); // / (|1| + max |expected| 2)
    const auto far = checkTolerance(g, cpu, { halves({ 0x3c00, 0x4200 }) }, 1e-2); // 2 -> 3
    QCOMPARE(far.firstOff, std::string("output 'h' element 1: expected 2.000000, got 3.000000"));
}

// The summary's line for a cuda run, built from hand-made outputs as the run controller builds it.
void TestTolerance::gpuVsCpuWords()
{
    const Graph g = twoOutputs();
    const std::vector<HostTensor> cpu { floats({ 1, -2, 4 }), int64s({ 3, 4 }) };
    RunMeasurement run;
    run.device = "cuda";
    run.tolerance = 1e-4;
    QCOMPARE(gpuVsCpuText(run), QStringLiteral("not compared"));
    run.cpuCheckNote = "not compared: 2 synthetic kernels hash their inputs' bits";
    QCOMPARE(gpuVsCpuText(run), QString::fromStdString(run.cpuCheckNote));

    // 4 -> 4.0000248: relative 2.48e-5 / 8 = 3.1e-6.
    run.cpuCheck = checkTolerance(g, cpu, { floats({ 1, -2, 4.0000248f }), int64s({ 3, 4 }) }, run.tolerance);
    QVERIFY(run.cpuCheck->within());
    QCOMPARE(gpuVsCpuText(run), QStringLiteral("max relative error 3.1e-6 within 1e-4"));

    run.cpuCheck = checkTolerance(g, cpu, { floats({ 1, -2, 5 }), int64s({ 3, 4 }) }, run.tolerance);
    QCOMPARE(gpuVsCpuText(run),
        QStringLiteral("OFF by more than 1e-4 (max relative error 0.13): output 'y' element 2: expected 4.000000, got 5.000000"));
}

// A model that rounds computed floats to integers says why it may land a step off: only then, and
// only when the check fails. Quantizing the graph's input alone is no cause (both executors read it).
void TestTolerance::quantizedModelsNameTheCause()
{
    QVERIFY(quantizesComputedFloats(quantizing("Conv")));
    QVERIFY(!quantizesComputedFloats(quantizing("")));
    QVERIFY(!quantizesComputedFloats(twoOutputs()));
    Graph fused = quantizing("");
    fused.ops.erase(fused.ops.begin()); // one fused op: Conv then QuantizeLinear inside its body
    fused.ops.insert(fused.ops.begin(), Op { .name = "fused", .type = "Fused", .inputs = { 0 }, .outputs = { 2 },
                                            .body = { Op { .type = "Conv" }, Op { .type = "QuantizeLinear" } } });
    QVERIFY(quantizesComputedFloats(fused));

    const Graph g = quantizing("Relu");
    const std::vector<HostTensor> cpu { floats({ 0.5f, 1.0f }) };
    QVERIFY(checkTolerance(g, cpu, { floats({ 0.5f, 1.0f }) }, 1e-3).cause.empty()); // identical
    RunMeasurement run;
    run.device = "cuda";
    run.tolerance = 1e-3;
    run.cpuCheck = checkTolerance(g, cpu, { floats({ 0.5f, 1.25f }) }, run.tolerance);
    QVERIFY(!run.cpuCheck->within());
    QVERIFY(run.cpuCheck->cause.find("QuantizeLinear result by one step") != std::string::npos);
    QVERIFY2(gpuVsCpuText(run).endsWith(QStringLiteral("later layers carry it on; the Tolerance box sets the bound)")), qPrintable(gpuVsCpuText(run)));
    QVERIFY(checkTolerance(quantizing(""), cpu, { floats({ 0.5f, 1.25f }) }, 1e-3).cause.empty());
}

void TestTolerance::toleranceFormat()
{
    QCOMPARE(ToleranceSpinBox::format(1e-3), QStringLiteral("1e-3"));
    QCOMPARE(ToleranceSpinBox::format(3.14e-6), QStringLiteral("3.1e-6"));
    QCOMPARE(ToleranceSpinBox::format(9.96e-5), QStringLiteral("1e-4")); // rounding carries into the exponent
    QCOMPARE(ToleranceSpinBox::format(0.25), QStringLiteral("0.25"));
    QCOMPARE(ToleranceSpinBox::format(0), QStringLiteral("0"));
    QCOMPARE(ToleranceSpinBox::format(std::numeric_limits<double>::infinity()), QStringLiteral("inf"));

    ToleranceSpinBox box;
    QCOMPARE(box.minimum(), 1e-9);
    box.setValue(kDefaultGpuTolerance);
    QCOMPARE(box.text(), QStringLiteral("1e-3"));
    box.stepBy(-2); // arrows step by factors of ten
    QCOMPARE(box.value(), 1e-5);
    QCOMPARE(box.text(), QStringLiteral("1e-5"));
    box.stepBy(1);
    QCOMPARE(box.value(), 1e-4);
    QCOMPARE(box.valueFromText(QStringLiteral("2.5E-7")), 2.5e-7);
    QString typed = QStringLiteral("1e-");
    int pos = typed.size();
    QCOMPARE(box.validate(typed, pos), QValidator::Intermediate);
    typed = QStringLiteral("abc");
    QCOMPARE(box.validate(typed, pos), QValidator::Invalid);
    typed = QStringLiteral("2");
    QCOMPARE(box.validate(typed, pos), QValidator::Intermediate); // above the range's 1
}

QTEST_MAIN(TestTolerance)
#include "tst_tolerance.moc"
