// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// float16 and bfloat16: the conversions (exact widening, narrowing to nearest with ties to even),
// and a half-precision model run on the float32 kernels.
#include "boundedgraphs.h"
#include "exec/kernels.h"
#include "io/workload.h"
#include "planners/metrics.h"
#include "util/halffloat.h"

#include <QtTest>

#include <filesystem>
#include <random>

#include <bit>
#include <cmath>
#include <limits>

using core::bfloat16ToFloat;
using core::floatToBfloat16;
using core::floatToHalf;
using core::halfToFloat;

namespace {

// draw() for every element, rounded to float16: the float16 tensor, then its float32 widening.
template <typename Draw>
std::pair<core::HostTensor, core::HostTensor> halfAndSingle(const std::vector<std::int64_t>& shape, Draw draw)
{
    core::HostTensor half, single;
    half.dtype = core::DType::Float16;
    single.dtype = core::DType::Float32;
    half.shape = single.shape = shape;
    for (std::int64_t i = 0, n = half.elementCount(); i < n; ++i) {
        const std::uint16_t bits = floatToHalf(draw());
        const float wide = halfToFloat(bits);
        const auto* b = reinterpret_cast<const std::byte*>(&bits);
        const auto* w = reinterpret_cast<const std::byte*>(&wide);
        half.data.insert(half.data.end(), b, b + sizeof bits);
        single.data.insert(single.data.end(), w, w + sizeof wide);
    }
    return { std::move(half), std::move(single) };
}

} // namespace

class TestHalfPrecision : public QObject {
    Q_OBJECT
private slots:
    void halfRoundsToNearestEven()
    {
        QCOMPARE(floatToHalf(1.0f), std::uint16_t(0x3c00));
        QCOMPARE(floatToHalf(-2.5f), std::uint16_t(0xc100));
        QCOMPARE(floatToHalf(65504.0f), std::uint16_t(0x7bff));   // the largest half
        QCOMPARE(floatToHalf(65519.0f), std::uint16_t(0x7bff));   // below the midpoint to infinity
        QCOMPARE(floatToHalf(65520.0f), std::uint16_t(0x7c00));   // the midpoint rounds up, to infinity
        QCOMPARE(floatToHalf(2049.0f), std::uint16_t(0x6800));    // 2048 and 2050 tie: 2048's last bit is even
        QCOMPARE(floatToHalf(2051.0f), std::uint16_t(0x6802));    // 2050 and 2052 tie: to 2052
        QCOMPARE(floatToHalf(1.0f + 1.0f / 4096), std::uint16_t(0x3c00)); // a quarter step: down
        QCOMPARE(floatToHalf(1.0f + 3.0f / 4096), std::uint16_t(0x3c01)); // three quarters: up
        // Subnormals: the smallest is 2^-24; half of it ties to 0, a little more rounds up to it.
        QCOMPARE(floatToHalf(std::ldexp(1.0f, -24)), std::uint16_t(0x0001));
        QCOMPARE(floatToHalf(std::ldexp(1.0f, -25)), std::uint16_t(0x0000));
        QCOMPARE(floatToHalf(std::ldexp(1.5f, -25)), std::uint16_t(0x0001));
        QCOMPARE(floatToHalf(std::ldexp(3.0f, -25)), std::uint16_t(0x0002)); // 1.5 steps tie to 2
        QCOMPARE(floatToHalf(std::ldexp(1023.5f, -24)), std::uint16_t(0x0400)); // carries into the smallest normal
        QCOMPARE(floatToHalf(-0.0f), std::uint16_t(0x8000));
        QCOMPARE(floatToHalf(std::numeric_limits<float>::infinity()), std::uint16_t(0x7c00));
        QVERIFY(std::isnan(halfToFloat(floatToHalf(std::numeric_limits<float>::quiet_NaN()))));
    }

    void halfWidensExactly()
    {
        // Every finite half survives the round trip bit for bit.
        for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
            const auto h = std::uint16_t(bits);
            if ((h & 0x7c00) == 0x7c00)
                continue;
            QCOMPARE(floatToHalf(halfToFloat(h)), h);
        }
        QCOMPARE(halfToFloat(0x0001), std::ldexp(1.0f, -24));
        QCOMPARE(halfToFloat(0x7bff), 65504.0f);
    }

    // The bulk conversions (F16C where the processor has it) give the scalar functions' results,
    // on every half and on floats around every rounding boundary, lengths not a multiple of 8 too.
    void bulkConversionsMatch()
    {
        std::vector<std::uint16_t> halves(1 << 16);
        for (std::size_t h = 0; h < halves.size(); ++h)
            halves[h] = std::uint16_t(h);
        std::vector<float> wide(halves.size() - 3);
        core::halvesToFloats(halves.data(), wide.data(), std::int64_t(wide.size()));
        for (std::size_t h = 0; h < wide.size(); ++h) {
            const float expected = halfToFloat(halves[h]);
            QVERIFY2(std::isnan(expected) ? std::isnan(wide[h]) : std::bit_cast<std::uint32_t>(expected) == std::bit_cast<std::uint32_t>(wide[h]),
                qPrintable(QString::number(h, 16)));
        }
        std::vector<float> floats;
        std::mt19937 rng(11);
        for (std::size_t h = 0; h < 0x7c00; ++h) { // each finite half, the midpoints next to it, and a random point between
            const float v = halfToFloat(std::uint16_t(h)), next = halfToFloat(std::uint16_t(h + 1));
            const float mid = v + (next - v) / 2;
            for (float f : { v, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f), v + (next - v) * std::uniform_real_distribution<float>(0, 1)(rng) })
                floats.insert(floats.end(), { f, -f });
        }
        floats.insert(floats.end(), { 1e9f, -1e9f, 65520.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN() });
        std::vector<std::uint16_t> narrow(floats.size());
        core::floatsToHalves(floats.data(), narrow.data(), std::int64_t(floats.size()));
        for (std::size_t i = 0; i < floats.size(); ++i) {
            const auto expected = floatToHalf(floats[i]);
            const bool nan = std::isnan(floats[i]);
            QVERIFY2(nan ? std::isnan(halfToFloat(narrow[i])) : narrow[i] == expected,
                qPrintable(QStringLiteral("%1: %2, expected %3").arg(double(floats[i])).arg(narrow[i], 0, 16).arg(expected, 0, 16)));
        }
    }

    void bfloat16RoundsToNearestEven()
    {
        const auto from = [](std::uint32_t bits) { return floatToBfloat16(std::bit_cast<float>(bits)); };
        QCOMPARE(from(0x3f800000), std::uint16_t(0x3f80));
        QCOMPARE(from(0x3f808000), std::uint16_t(0x3f80)); // a tie: stays on the even 0x3f80
        QCOMPARE(from(0x3f818000), std::uint16_t(0x3f82)); // a tie: up to the even 0x3f82
        QCOMPARE(from(0x3f808001), std::uint16_t(0x3f81)); // just above the tie: up
        QCOMPARE(from(0x3ef5eeb0), std::uint16_t(0x3ef6));
        QCOMPARE(from(0x7f7fffff), std::uint16_t(0x7f80)); // the largest float rounds to infinity
        QCOMPARE(from(0xff800000), std::uint16_t(0xff80));
        QVERIFY(std::isnan(bfloat16ToFloat(from(0x7f800001)))); // a NaN whose payload sits in the dropped bits
        QCOMPARE(bfloat16ToFloat(0x4049), std::bit_cast<float>(0x40490000u));
    }

    // A pointwise op on a large float16 tensor runs its float32 kernel a slice at a time: each element
    // is what the op gives on it alone (widened, computed, rounded to nearest even), the scalar input
    // and a bool condition read alongside, and the float32 copies hold a slice, not the tensor.
    void pointwiseOpsRunInSlices()
    {
        using core::exec::TensorView;
        const std::int64_t n = 50000; // three slices and a partial one
        std::vector<std::uint16_t> a(n), scalar { floatToHalf(0.3f) }, sum(n), picked(n);
        std::vector<std::uint8_t> condition(n);
        std::mt19937 rng(3);
        std::uniform_real_distribution<float> uniform(-100.0f, 100.0f);
        for (std::int64_t i = 0; i < n; ++i) {
            a[std::size_t(i)] = floatToHalf(uniform(rng));
            condition[std::size_t(i)] = std::uint8_t(i % 3 == 0);
        }
        const auto view = [](core::DType dtype, void* data, std::int64_t count) {
            return TensorView { dtype, count == 1 ? core::exec::Shape {} : core::exec::Shape { count }, static_cast<std::byte*>(data), count };
        };
        core::Op add, where;
        add.type = "Add";
        where.type = "Where";
        core::exec::KernelCall addCall, whereCall;
        addCall.op = &add;
        addCall.in = { view(core::DType::Float16, a.data(), n), view(core::DType::Float16, scalar.data(), 1) };
        addCall.out = { view(core::DType::Float16, sum.data(), n) };
        whereCall.op = &where;
        whereCall.in = { view(core::DType::Bool, condition.data(), n), view(core::DType::Float16, a.data(), n),
            view(core::DType::Float16, scalar.data(), 1) };
        whereCall.out = { view(core::DType::Float16, picked.data(), n) };
        core::exec::releaseScratch();
        QVERIFY(core::exec::runKernel(core::exec::findKernel("Add"), addCall));
        QVERIFY(core::exec::runKernel(core::exec::findKernel("Where"), whereCall));
        for (std::int64_t i = 0; i < n; ++i) {
            const auto k = std::size_t(i);
            QCOMPARE(sum[k], floatToHalf(halfToFloat(a[k]) + halfToFloat(scalar[0])));
            QCOMPARE(picked[k], condition[k] ? a[k] : scalar[0]);
        }
        QVERIFY2(core::exec::scratchHighWater() < n * core::Bytes(sizeof(float)),
            qPrintable(QStringLiteral("%1 bytes of scratch").arg(core::exec::scratchHighWater())));
        core::exec::releaseScratch();
    }

    // tricky/cnn_float16 and its float32 twin (same weights): the half-precision model runs every op
    // on a real kernel, in an arena half the float32 one, within float16 rounding of the float32
    // outputs, and bit-identically with every planner.
    void halfPrecisionModelRuns()
    {
        const auto half = boundedgraphs::fixture("cnn_float16"), single = boundedgraphs::fixture("cnn_float32");
        if (!std::filesystem::exists(half) || !std::filesystem::exists(single))
            QSKIP("tests/models/tricky/cnn_float16.onnx is missing: run scripts/make_models.sh to make the test models");
        const auto w16 = core::loadWorkload(half, {}), w32 = core::loadWorkload(single, {});
        QVERIFY2(w16 && w32, w16 ? (w32 ? "" : w32.error().message.c_str()) : w16.error().message.c_str());
        auto o16 = boundedgraphs::withModelData(half, *w16->graph), o32 = boundedgraphs::withModelData(single, *w32->graph);
        QVERIFY(o16.modelData && o32.modelData);
        // The same input in both: float16 values, widened for the float32 model.
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
        auto [x16, x32] = halfAndSingle({ 1, 3, 16, 16 }, [&] { return uniform(rng); });
        o16.inputs["X"] = x16;
        o32.inputs["X"] = x32;
        const auto r16 = core::runOnCpu(*w16->graph, w16->schedule, w16->problem, core::noReusePlan(w16->problem), w16->bufferTensor, o16);
        const auto r32 = core::runOnCpu(*w32->graph, w32->schedule, w32->problem, core::noReusePlan(w32->problem), w32->bufferTensor, o32);
        QVERIFY2(r16 && r32, r16 ? (r32 ? "" : r32.error().message.c_str()) : r16.error().message.c_str());
        QCOMPARE(r16->opsSynthetic, 0);
        QCOMPARE(r16->opsReal, r32->opsReal);
        QCOMPARE(core::lowerBound(w16->problem) * 2, core::lowerBound(w32->problem)); // the live bytes at the peak
        QCOMPARE(r16->outputs.size(), std::size_t(2));
        for (std::size_t k = 0; k < 2; ++k) {
            QCOMPARE(r16->outputs[k].dtype, core::DType::Float16);
            const auto single32 = boundedgraphs::valuesOf<float>(r32->outputs[k]);
            const auto bits = boundedgraphs::valuesOf<std::uint16_t>(r16->outputs[k]);
            QCOMPARE(bits.size(), single32.size());
            double scale = 0;
            for (float v : single32)
                scale = std::max(scale, double(std::fabs(v)));
            QVERIFY(scale > 0);
            for (std::size_t i = 0; i < bits.size(); ++i) {
                const double difference = std::fabs(double(halfToFloat(bits[i])) - double(single32[i]));
                QVERIFY2(difference <= 1e-2 * scale, qPrintable(QStringLiteral("output %1 element %2: float16 %3, float32 %4")
                                                         .arg(k).arg(i).arg(halfToFloat(bits[i])).arg(single32[i])));
            }
        }
        boundedgraphs::checkEveryPlanner(*w16, o16, r16->outputs);
    }
};

QTEST_GUILESS_MAIN(TestHalfPrecision)
#include "tst_halfprecision.moc"
