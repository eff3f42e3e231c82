// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv on the CPU kernels against their plain
// definitions, on what the ONNX backend data (uint8 only, per-tensor parameters, one group) leaves
// out: int8 operands and outputs, per-row/per-column and per-output-channel zero points and scales,
// broadcast batches, groups with strides, dilations and asymmetric pads (padding holds the input's
// zero point), 1-D and 3-D convolutions, the int32 bias, saturation at both ends, rounding ties to
// even; and configurations the kernels refuse, leaving the output untouched. QuantizeLinear and
// DequantizeLinear the same way: int8, per axis, ties, saturation, int32 input, refused blocks.
#include "exec/kernels.h"
#include "kerneltest.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>

using core::DType;
using core::exec::Shape;

using kerneltest::countOf;
using kerneltest::ints;

namespace {

core::Attribute text(const char* t)
{
    core::Attribute a;
    a.text = t;
    return a;
}

// A tensor the test owns: its bytes, read back as integers or floats.
struct Buf {
    DType dtype = DType::Undefined;
    Shape shape;
    std::vector<std::byte> bytes;

    core::exec::TensorView view() { return { dtype, shape, bytes.data(), countOf(shape) }; }
    std::int64_t at(std::int64_t i) const
    {
        switch (dtype) {
        case DType::UInt8: return std::int64_t(std::uint8_t(bytes[std::size_t(i)]));
        case DType::Int8: return std::int64_t(std::int8_t(bytes[std::size_t(i)]));
        case DType::Int32: {
            std::int32_t v;
            std::memcpy(&v, bytes.data() + 4 * i, 4);
            return v;
        }
        default: return 0;
        }
    }
    float f(std::int64_t i) const
    {
        float v;
        std::memcpy(&v, bytes.data() + 4 * i, 4);
        return v;
    }
    std::int64_t count() const { return countOf(shape); }
};

Buf ints8(DType dtype, const Shape& shape, const std::vector<int>& values)
{
    Buf b { dtype, shape, std::vector<std::byte>(std::size_t(countOf(shape))) };
    for (std::size_t i = 0; i < b.bytes.size(); ++i)
        b.bytes[i] = std::byte(std::uint8_t(values[i % values.size()]));
    return b;
}

Buf ints32(const Shape& shape, const std::vector<std::int32_t>& values)
{
    Buf b { DType::Int32, shape, std::vector<std::byte>(std::size_t(countOf(shape)) * 4) };
    std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
    return b;
}

Buf floats(const Shape& shape, const std::vector<float>& values)
{
    Buf b { DType::Float32, shape, std::vector<std::byte>(std::size_t(countOf(shape)) * 4) };
    std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
    return b;
}

// Deterministic values spread over the whole range of the dtype.
Buf random8(DType dtype, const Shape& shape, std::uint32_t seed)
{
    std::vector<int> v(std::size_t(countOf(shape)));
    for (auto& e : v) {
        seed = seed * 1664525u + 1013904223u;
        e = int(seed >> 24) - (dtype == DType::Int8 ? 128 : 0);
    }
    return ints8(dtype, shape, v);
}

// An output filled with a sentinel byte, so a refusal can be seen to leave it untouched.
Buf output(DType dtype, const Shape& shape)
{
    Buf b { dtype, shape, std::vector<std::byte>(std::size_t(countOf(shape)) * std::size_t(core::dtypeBytes(dtype)), std::byte(0xA5)) };
    return b;
}

bool untouched(const Buf& b)
{
    return std::all_of(b.bytes.begin(), b.bytes.end(), [](std::byte v) { return v == std::byte(0xA5); });
}

bool run(const char* type, const core::Op& op, std::vector<core::exec::TensorView> in, Buf& out)
{
    core::exec::KernelCall call;
    call.op = &op;
    call.in = std::move(in);
    call.out = { out.view() };
    const auto kernel = core::exec::findKernel(type);
    return kernel && kernel(call);
}

// Round half to even, written out (not the kernel's nearbyint), then saturation.
std::int64_t requantize(std::int64_t acc, float scale, std::int64_t zeroPoint, DType dtype)
{
    const double v = double(acc) * double(scale) + double(zeroPoint);
    double r = std::floor(v);
    const double frac = v - r;
    if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0))
        r += 1;
    const double lo = dtype == DType::Int8 ? -128 : 0, hi = dtype == DType::Int8 ? 127 : 255;
    return std::int64_t(std::clamp(r, lo, hi));
}

float combined(float a, float b, float y)
{
    const float ab = a * b; // float32, as the ONNX reference computes a_scale * b_scale / y_scale
    return ab / y;
}

// ---- matrix products by definition -----------------------------------------------------------------

// A per-row/per-column parameter of a matmul operand: index of row/column i of matrix `matrix`.
std::int64_t paramIndex(const Buf& p, std::int64_t matrix, std::int64_t extent, std::int64_t i)
{
    if (p.count() == 1)
        return 0;
    return p.count() == extent ? i : matrix * extent + i;
}

// numpy.matmul of rank >= 2 operands with broadcast batches; rowZero/colZero index (matrix, i).
struct MatMulRef {
    Shape batch;
    std::int64_t m, k, n;
    std::vector<std::int64_t> sums; // [batch.., m, n]
    std::vector<std::int64_t> matA, matB, rows, cols;
};

MatMulRef matmulRef(const Buf& a, const Buf& b, const Buf* az, const Buf* bz)
{
    MatMulRef r;
    const Shape aBatch(a.shape.begin(), a.shape.end() - 2), bBatch(b.shape.begin(), b.shape.end() - 2);
    r.m = a.shape[a.shape.size() - 2];
    r.k = a.shape.back();
    r.n = b.shape.back();
    const std::size_t rank = std::max(aBatch.size(), bBatch.size());
    r.batch.assign(rank, 1);
    for (std::size_t d = 0; d < rank; ++d) {
        const std::int64_t da = d + aBatch.size() >= rank ? aBatch[d + aBatch.size() - rank] : 1;
        const std::int64_t db = d + bBatch.size() >= rank ? bBatch[d + bBatch.size() - rank] : 1;
        r.batch[d] = std::max(da, db);
    }
    const std::int64_t total = countOf(r.batch);
    for (std::int64_t t = 0; t < total; ++t) {
        // Batch coordinates of t, then the matrix of each operand they select.
        Shape coord(rank);
        std::int64_t rest = t;
        for (std::size_t d = rank; d-- > 0;) {
            coord[d] = rest % r.batch[d];
            rest /= r.batch[d];
        }
        const auto matrixOf = [&](const Shape& own) {
            std::int64_t idx = 0;
            for (std::size_t d = 0; d < own.size(); ++d)
                idx = idx * own[d] + (own[d] == 1 ? 0 : coord[d + rank - own.size()]);
            return idx;
        };
        const std::int64_t ia = matrixOf(aBatch), ib = matrixOf(bBatch);
        for (std::int64_t i = 0; i < r.m; ++i)
            for (std::int64_t j = 0; j < r.n; ++j) {
                std::int64_t sum = 0;
                for (std::int64_t l = 0; l < r.k; ++l) {
                    const std::int64_t av = a.at((ia * r.m + i) * r.k + l) - (az ? az->at(paramIndex(*az, ia, r.m, i)) : 0);
                    const std::int64_t bv = b.at((ib * r.k + l) * r.n + j) - (bz ? bz->at(paramIndex(*bz, ib, r.n, j)) : 0);
                    sum += av * bv;
                }
                r.sums.push_back(sum);
                r.matA.push_back(ia);
                r.matB.push_back(ib);
                r.rows.push_back(i);
                r.cols.push_back(j);
            }
    }
    return r;
}

// ---- convolutions by definition --------------------------------------------------------------------

struct ConvCase {
    Shape xs, ws; // [N, C, spatial..], [M, C/group, kernel..]
    std::int64_t groups = 1;
    Shape strides, dilations, pads; // pads: begins, then ends
};

Shape convOutShape(const ConvCase& cc)
{
    const std::size_t s = cc.xs.size() - 2;
    Shape out { cc.xs[0], cc.ws[0] };
    for (std::size_t d = 0; d < s; ++d) {
        const std::int64_t span = (cc.ws[2 + d] - 1) * cc.dilations[d] + 1;
        out.push_back((cc.xs[2 + d] + cc.pads[d] + cc.pads[s + d] - span) / cc.strides[d] + 1);
    }
    return out;
}

core::Op convOp(const char* type, const ConvCase& cc)
{
    core::Op op;
    op.type = type;
    op.attributes["group"] = ints({ cc.groups });
    op.attributes["strides"] = ints(cc.strides);
    op.attributes["dilations"] = ints(cc.dilations);
    op.attributes["pads"] = ints(cc.pads);
    op.attributes["kernel_shape"] = ints(Shape(cc.ws.begin() + 2, cc.ws.end()));
    return op;
}

// The padded input holds xZero; sum over each window of (x - xZero) * (w - wZero[channel]).
std::vector<std::int64_t> convRef(const ConvCase& cc, const Buf& x, const Buf& w, std::int64_t xZero, const std::vector<std::int64_t>& wZero)
{
    const std::size_t s = cc.xs.size() - 2;
    const Shape ys = convOutShape(cc);
    const std::int64_t n = cc.xs[0], c = cc.xs[1], m = cc.ws[0], cg = c / cc.groups, mg = m / cc.groups;
    const Shape in(cc.xs.begin() + 2, cc.xs.end()), kernel(cc.ws.begin() + 2, cc.ws.end()), out(ys.begin() + 2, ys.end());
    std::vector<std::int64_t> sums;
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t o = 0; o < m; ++o)
            for (std::int64_t p = 0; p < countOf(out); ++p) {
                std::int64_t sum = 0;
                for (std::int64_t ci = 0; ci < cg; ++ci)
                    for (std::int64_t q = 0; q < countOf(kernel); ++q) {
                        std::int64_t pr = p, qr = q, xi = 0, wi = 0;
                        bool inside = true;
                        std::vector<std::int64_t> pos(s), win(s);
                        for (std::size_t d = s; d-- > 0;) {
                            pos[d] = pr % out[d];
                            pr /= out[d];
                            win[d] = qr % kernel[d];
                            qr /= kernel[d];
                        }
                        for (std::size_t d = 0; d < s; ++d) {
                            const std::int64_t at = pos[d] * cc.strides[d] - cc.pads[d] + win[d] * cc.dilations[d];
                            inside = inside && at >= 0 && at < in[d];
                            xi = xi * in[d] + at;
                            wi = wi * kernel[d] + win[d];
                        }
                        const std::int64_t channel = (o / mg) * cg + ci;
                        const std::int64_t xv = inside ? x.at((b * c + channel) * countOf(in) + xi) : xZero;
                        sum += (xv - xZero) * (w.at((o * cg + ci) * countOf(kernel) + wi) - wZero[std::size_t(o)]);
                    }
                sums.push_back(sum);
            }
    return sums;
}

std::vector<std::int64_t> channelValues(const Buf& p, std::int64_t m)
{
    std::vector<std::int64_t> v;
    for (std::int64_t o = 0; o < m; ++o)
        v.push_back(p.at(p.count() == 1 ? 0 : o));
    return v;
}

// Conv cases: groups, strides, dilations and asymmetric pads; 1-D, 2-D and 3-D.
std::vector<std::pair<const char*, ConvCase>> convCases()
{
    return {
        { "2-D groups 2, strides, dilations, asymmetric pads",
            { { 2, 4, 7, 8 }, { 6, 2, 3, 2 }, 2, { 2, 1 }, { 1, 2 }, { 1, 0, 2, 1 } } },
        { "1-D stride 2 pads 2/1", { { 1, 3, 11 }, { 4, 3, 3 }, 1, { 2 }, { 1 }, { 2, 1 } } },
        { "1-D depthwise dilation 3", { { 2, 3, 9 }, { 3, 1, 2 }, 3, { 1 }, { 3 }, { 1, 3 } } },
        { "3-D groups 2", { { 1, 2, 4, 5, 3 }, { 4, 1, 2, 3, 2 }, 2, { 1, 2, 1 }, { 2, 1, 1 }, { 1, 1, 0, 0, 1, 1 } } },
    };
}

} // namespace

class TestInteger : public QObject {
    Q_OBJECT
private slots:
    void matmulIntegerMatchesDefinition_data();
    void matmulIntegerMatchesDefinition();
    void qlinearMatMulMatchesDefinition_data();
    void qlinearMatMulMatchesDefinition();
    void convIntegerMatchesDefinition_data();
    void convIntegerMatchesDefinition();
    void qlinearConvMatchesDefinition_data();
    void qlinearConvMatchesDefinition();
    void tiesRoundToEven();
    void refusedConfigurationsLeaveOutputUntouched();
    void quantizeAndDequantizePerAxis();
    void bitShiftBroadcastsAndPastTheWidth();
};

void TestInteger::matmulIntegerMatchesDefinition_data()
{
    QTest::addColumn<int>("aType");
    QTest::addColumn<int>("bType");
    QTest::addColumn<Shape>("aShape");
    QTest::addColumn<Shape>("bShape");
    QTest::addColumn<Shape>("azShape"); // empty: no zero point
    QTest::addColumn<Shape>("bzShape");
    const int u = int(DType::UInt8), s = int(DType::Int8);
    QTest::newRow("uint8 scalar zero points") << u << u << Shape { 3, 5 } << Shape { 5, 4 } << Shape {} << Shape { 1 };
    QTest::newRow("int8 x uint8, per row and column, broadcast batch")
        << s << u << Shape { 2, 1, 3, 4 } << Shape { 3, 4, 5 } << Shape { 3 } << Shape { 5 };
    QTest::newRow("uint8 x int8, per row of each A matrix, B broadcast")
        << u << s << Shape { 2, 3, 4, 6 } << Shape { 6, 2 } << Shape { 2, 3, 4, 1 } << Shape { 1, 2 };
    QTest::newRow("int8 x int8, per column of each B matrix, A broadcast")
        << s << s << Shape { 1, 3, 5 } << Shape { 4, 5, 3 } << Shape { 1 } << Shape { 4, 1, 3 };
    QTest::newRow("no zero points") << s << u << Shape { 2, 4, 3 } << Shape { 2, 3, 2 } << Shape { -1 } << Shape { -1 };
}

void TestInteger::matmulIntegerMatchesDefinition()
{
    QFETCH(int, aType);
    QFETCH(int, bType);
    QFETCH(Shape, aShape);
    QFETCH(Shape, bShape);
    QFETCH(Shape, azShape);
    QFETCH(Shape, bzShape);
    auto a = random8(DType(aType), aShape, 1), b = random8(DType(bType), bShape, 2);
    const bool zeros = azShape != Shape { -1 };
    auto az = random8(DType(aType), zeros ? azShape : Shape {}, 3), bz = random8(DType(bType), zeros ? bzShape : Shape {}, 4);
    const auto ref = matmulRef(a, b, zeros ? &az : nullptr, zeros ? &bz : nullptr);
    Shape ys = ref.batch;
    ys.push_back(ref.m);
    ys.push_back(ref.n);
    auto y = output(DType::Int32, ys);
    core::Op op;
    op.type = "MatMulInteger";
    std::vector<core::exec::TensorView> in { a.view(), b.view() };
    if (zeros)
        in.insert(in.end(), { az.view(), bz.view() });
    QVERIFY(run("MatMulInteger", op, in, y));
    bool perRowMatters = false;
    for (std::size_t i = 0; i < ref.sums.size(); ++i) {
        QVERIFY2(y.at(std::int64_t(i)) == ref.sums[i],
            qPrintable(QStringLiteral("element %1: %2, expected %3").arg(i).arg(y.at(std::int64_t(i))).arg(ref.sums[i])));
        perRowMatters = perRowMatters || ref.sums[i] != ref.sums[0];
    }
    QVERIFY(perRowMatters);
}

void TestInteger::qlinearMatMulMatchesDefinition_data()
{
    QTest::addColumn<int>("aType");
    QTest::addColumn<int>("bType");
    QTest::addColumn<int>("yType");
    QTest::addColumn<Shape>("aShape");
    QTest::addColumn<Shape>("bShape");
    QTest::addColumn<Shape>("aParam");
    QTest::addColumn<Shape>("bParam");
    QTest::addColumn<float>("yScale");
    const int u = int(DType::UInt8), s = int(DType::Int8);
    QTest::newRow("int8 out, per row and column") << s << s << s << Shape { 4, 6 } << Shape { 6, 5 } << Shape { 4 } << Shape { 5 } << 0.05f;
    QTest::newRow("uint8 out, broadcast batch, per row of each matrix")
        << u << s << u << Shape { 2, 3, 7 } << Shape { 7, 4 } << Shape { 2, 3, 1 } << Shape { 1, 4 } << 0.004f;
    QTest::newRow("int8 out, uint8 in, scalar") << u << u << s << Shape { 3, 1, 2, 8 } << Shape { 2, 8, 3 } << Shape {} << Shape {} << 0.003f;
}

void TestInteger::qlinearMatMulMatchesDefinition()
{
    QFETCH(int, aType);
    QFETCH(int, bType);
    QFETCH(int, yType);
    QFETCH(Shape, aShape);
    QFETCH(Shape, bShape);
    QFETCH(Shape, aParam);
    QFETCH(Shape, bParam);
    QFETCH(float, yScale);
    auto a = random8(DType(aType), aShape, 5), b = random8(DType(bType), bShape, 6);
    auto az = random8(DType(aType), aParam, 7), bz = random8(DType(bType), bParam, 8);
    std::vector<float> aScales, bScales;
    for (std::int64_t i = 0; i < countOf(aParam); ++i)
        aScales.push_back(0.01f + 0.003f * float(i));
    for (std::int64_t i = 0; i < countOf(bParam); ++i)
        bScales.push_back(0.02f - 0.002f * float(i));
    auto as = floats(aParam, aScales), bs = floats(bParam, bScales), ys = floats({}, { yScale });
    auto yz = ints8(DType(yType), {}, { DType(yType) == DType::Int8 ? -3 : 120 });
    const auto ref = matmulRef(a, b, &az, &bz);
    Shape yShape = ref.batch;
    yShape.push_back(ref.m);
    yShape.push_back(ref.n);
    auto y = output(DType(yType), yShape);
    core::Op op;
    op.type = "QLinearMatMul";
    QVERIFY(run("QLinearMatMul", op, { a.view(), as.view(), az.view(), b.view(), bs.view(), bz.view(), ys.view(), yz.view() }, y));
    const std::int64_t lo = DType(yType) == DType::Int8 ? -128 : 0, hi = lo + 255;
    int low = 0, high = 0, inside = 0;
    for (std::size_t i = 0; i < ref.sums.size(); ++i) {
        const float scale = combined(as.f(paramIndex(as, ref.matA[i], ref.m, ref.rows[i])), bs.f(paramIndex(bs, ref.matB[i], ref.n, ref.cols[i])), yScale);
        const auto expected = requantize(ref.sums[i], scale, yz.at(0), DType(yType));
        QVERIFY2(y.at(std::int64_t(i)) == expected,
            qPrintable(QStringLiteral("element %1: %2, expected %3 (sum %4)").arg(i).arg(y.at(std::int64_t(i))).arg(expected).arg(ref.sums[i])));
        low += expected == lo;
        high += expected == hi;
        inside += expected > lo && expected < hi;
    }
    // The data saturates at both ends and keeps values in between.
    QVERIFY2(low > 0 && high > 0 && inside > 0, qPrintable(QStringLiteral("%1 low, %2 high, %3 inside").arg(low).arg(high).arg(inside)));
}

void TestInteger::convIntegerMatchesDefinition_data()
{
    QTest::addColumn<int>("xType");
    QTest::addColumn<int>("wType");
    QTest::addColumn<int>("caseIndex");
    QTest::addColumn<bool>("perChannel");
    const int u = int(DType::UInt8), s = int(DType::Int8);
    const auto cases = convCases();
    for (int i = 0; i < int(cases.size()); ++i) {
        QTest::addRow("%s, int8 x, uint8 w, per channel", cases[std::size_t(i)].first) << s << u << i << true;
        QTest::addRow("%s, uint8 x, int8 w, scalar", cases[std::size_t(i)].first) << u << s << i << false;
    }
}

void TestInteger::convIntegerMatchesDefinition()
{
    QFETCH(int, xType);
    QFETCH(int, wType);
    QFETCH(int, caseIndex);
    QFETCH(bool, perChannel);
    const auto cc = convCases()[std::size_t(caseIndex)].second;
    const std::int64_t m = cc.ws[0];
    auto x = random8(DType(xType), cc.xs, 11), w = random8(DType(wType), cc.ws, 12);
    // A zero point far from 0, so that padding counted as 0 instead of the zero point would show.
    auto xz = ints8(DType(xType), {}, { DType(xType) == DType::Int8 ? -90 : 200 });
    auto wz = random8(DType(wType), perChannel ? Shape { m } : Shape {}, 13);
    const auto ref = convRef(cc, x, w, xz.at(0), channelValues(wz, m));
    auto y = output(DType::Int32, convOutShape(cc));
    const auto op = convOp("ConvInteger", cc);
    QVERIFY(run("ConvInteger", op, { x.view(), w.view(), xz.view(), wz.view() }, y));
    QCOMPARE(std::size_t(y.count()), ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i)
        QVERIFY2(y.at(std::int64_t(i)) == ref[i], qPrintable(QStringLiteral("element %1: %2, expected %3").arg(i).arg(y.at(std::int64_t(i))).arg(ref[i])));
}

void TestInteger::qlinearConvMatchesDefinition_data()
{
    QTest::addColumn<int>("xType");
    QTest::addColumn<int>("wType");
    QTest::addColumn<int>("yType");
    QTest::addColumn<int>("caseIndex");
    QTest::addColumn<bool>("bias");
    const int u = int(DType::UInt8), s = int(DType::Int8);
    const auto cases = convCases();
    for (int i = 0; i < int(cases.size()); ++i) {
        QTest::addRow("%s, int8 in and out, bias", cases[std::size_t(i)].first) << s << s << s << i << true;
        QTest::addRow("%s, uint8 x, int8 w, uint8 out", cases[std::size_t(i)].first) << u << s << u << i << false;
        QTest::addRow("%s, int8 x, uint8 w, uint8 out, bias", cases[std::size_t(i)].first) << s << u << u << i << true;
    }
}

void TestInteger::qlinearConvMatchesDefinition()
{
    QFETCH(int, xType);
    QFETCH(int, wType);
    QFETCH(int, yType);
    QFETCH(int, caseIndex);
    QFETCH(bool, bias);
    const auto cc = convCases()[std::size_t(caseIndex)].second;
    const std::int64_t m = cc.ws[0];
    auto x = random8(DType(xType), cc.xs, 21), w = random8(DType(wType), cc.ws, 22);
    auto xz = ints8(DType(xType), {}, { DType(xType) == DType::Int8 ? 70 : 30 });
    auto wz = random8(DType(wType), { m }, 23);
    std::vector<float> wScales;
    std::vector<std::int32_t> biases;
    for (std::int64_t o = 0; o < m; ++o) {
        wScales.push_back(0.004f + 0.0015f * float(o));
        biases.push_back(std::int32_t((o % 2 ? 1 : -1) * 3000 * o));
    }
    auto xs = floats({}, { 0.05f }), ws = floats({ m }, wScales), ysc = floats({}, { 0.02f });
    auto yz = ints8(DType(yType), {}, { DType(yType) == DType::Int8 ? 5 : 128 });
    auto b = ints32({ m }, biases);
    auto sums = convRef(cc, x, w, xz.at(0), channelValues(wz, m));
    const Shape yShape = convOutShape(cc);
    auto y = output(DType(yType), yShape);
    const auto op = convOp("QLinearConv", cc);
    std::vector<core::exec::TensorView> in { x.view(), xs.view(), xz.view(), w.view(), ws.view(), wz.view(), ysc.view(), yz.view() };
    if (bias)
        in.push_back(b.view());
    QVERIFY(run("QLinearConv", op, in, y));
    const std::int64_t plane = countOf(yShape) / (yShape[0] * m), lo = DType(yType) == DType::Int8 ? -128 : 0, hi = lo + 255;
    int low = 0, high = 0, inside = 0;
    for (std::size_t i = 0; i < sums.size(); ++i) {
        const std::int64_t o = std::int64_t(i) / plane % m;
        const auto expected = requantize(sums[i] + (bias ? biases[std::size_t(o)] : 0), combined(0.05f, wScales[std::size_t(o)], 0.02f), yz.at(0), DType(yType));
        QVERIFY2(y.at(std::int64_t(i)) == expected,
            qPrintable(QStringLiteral("element %1: %2, expected %3 (sum %4)").arg(i).arg(y.at(std::int64_t(i))).arg(expected).arg(sums[i])));
        low += expected == lo;
        high += expected == hi;
        inside += expected > lo && expected < hi;
    }
    QVERIFY2(low > 0 && high > 0 && inside > 0, qPrintable(QStringLiteral("%1 low, %2 high, %3 inside").arg(low).arg(high).arg(inside)));
}

void TestInteger::tiesRoundToEven()
{
    // Sums 1, 3, 5, -1, -3, -5, 7 times 0.5 (exact in float32) plus 10: ties at 10.5, 11.5, 12.5, 9.5,
    // 8.5, 7.5, 13.5 go to the even neighbour; half away from zero would give 11, 12, 13, 10, 9, 8, 14.
    const std::vector<int> values { 1, 3, 5, -1, -3, -5, 7 };
    const std::vector<std::int64_t> expected { 10, 12, 12, 10, 8, 8, 14 };
    const auto n = std::int64_t(values.size());
    auto one = ints8(DType::Int8, { 1, 1 }, { 1 });
    auto as = floats({}, { 0.5f }), unit = floats({}, { 1.0f });
    auto zero = ints8(DType::Int8, {}, { 0 }), yz = ints8(DType::UInt8, {}, { 10 });
    {
        auto a = ints8(DType::Int8, { n, 1 }, values);
        auto y = output(DType::UInt8, { n, 1 });
        core::Op op;
        op.type = "QLinearMatMul";
        QVERIFY(run("QLinearMatMul", op, { a.view(), as.view(), zero.view(), one.view(), unit.view(), zero.view(), unit.view(), yz.view() }, y));
        for (std::int64_t i = 0; i < n; ++i)
            QCOMPARE(y.at(i), expected[std::size_t(i)]);
    }
    {
        // The same ties through a 1x1 QLinearConv over a row of n pixels.
        auto x = ints8(DType::Int8, { 1, 1, n }, values);
        auto w = ints8(DType::Int8, { 1, 1, 1 }, { 1 });
        auto y = output(DType::UInt8, { 1, 1, n });
        core::Op op;
        op.type = "QLinearConv";
        QVERIFY(run("QLinearConv", op, { x.view(), as.view(), zero.view(), w.view(), unit.view(), zero.view(), unit.view(), yz.view() }, y));
        for (std::int64_t i = 0; i < n; ++i)
            QCOMPARE(y.at(i), expected[std::size_t(i)]);
    }
}

void TestInteger::refusedConfigurationsLeaveOutputUntouched()
{
    auto a8 = random8(DType::UInt8, { 2, 3 }, 31), b8 = random8(DType::UInt8, { 3, 2 }, 32);
    auto s8 = ints8(DType::Int8, {}, { 1 }), u8 = ints8(DType::UInt8, {}, { 1 });
    auto a16 = Buf { DType::Int16, { 2, 3 }, std::vector<std::byte>(12) };
    auto scale = floats({}, { 0.1f }), twoScales = floats({ 2 }, { 0.1f, 0.2f });
    core::Op matmul;
    matmul.type = "MatMulInteger";
    {
        auto y = output(DType::Int32, { 2, 2 });
        QVERIFY(!run("MatMulInteger", matmul, { a16.view(), b8.view() }, y)); // int16 operand
        QVERIFY(untouched(y));
        QVERIFY(!run("MatMulInteger", matmul, { a8.view(), b8.view(), s8.view() }, y)); // zero point dtype differs from A's
        QVERIFY(untouched(y));
        auto wrongRows = ints8(DType::UInt8, { 3 }, { 1 });
        QVERIFY(!run("MatMulInteger", matmul, { a8.view(), b8.view(), wrongRows.view() }, y)); // 3 zero points for 2 rows
        QVERIFY(untouched(y));
        auto y16 = output(DType::Int64, { 2, 2 });
        QVERIFY(!run("MatMulInteger", matmul, { a8.view(), b8.view() }, y16)); // int64 output
        QVERIFY(untouched(y16));
    }
    {
        core::Op q;
        q.type = "QLinearMatMul";
        auto y = output(DType::UInt8, { 2, 2 });
        // y_scale per column: only a per-tensor output scale is defined.
        QVERIFY(!run("QLinearMatMul", q, { a8.view(), scale.view(), u8.view(), b8.view(), scale.view(), u8.view(), twoScales.view(), u8.view() }, y));
        QVERIFY(untouched(y));
        // Output int8 but y_zero_point uint8.
        auto yS = output(DType::Int8, { 2, 2 });
        QVERIFY(!run("QLinearMatMul", q, { a8.view(), scale.view(), u8.view(), b8.view(), scale.view(), u8.view(), scale.view(), u8.view() }, yS));
        QVERIFY(untouched(yS));
    }
    auto x = random8(DType::UInt8, { 1, 2, 5, 5 }, 33), w = random8(DType::Int8, { 2, 2, 3, 3 }, 34);
    {
        core::Op op;
        op.type = "ConvInteger";
        auto y = output(DType::Int32, { 1, 2, 3, 3 });
        QVERIFY(!run("ConvInteger", op, { x.view(), w.view(), s8.view() }, y)); // x_zero_point int8 for uint8 x
        QVERIFY(untouched(y));
        op.attributes["auto_pad"] = text("SOMETIMES");
        QVERIFY(!run("ConvInteger", op, { x.view(), w.view() }, y)); // unknown auto_pad
        QVERIFY(untouched(y));
        op.attributes.erase("auto_pad");
        op.attributes["group"] = ints({ 2 });
        QVERIFY(!run("ConvInteger", op, { x.view(), w.view() }, y)); // w has 2 input channels, group 2 needs 1
        QVERIFY(untouched(y));
    }
    {
        core::Op op;
        op.type = "QLinearConv";
        auto y = output(DType::UInt8, { 1, 2, 3, 3 });
        auto half = Buf { DType::Float16, {}, std::vector<std::byte>(2) };
        // float16 x_scale.
        QVERIFY(!run("QLinearConv", op, { x.view(), half.view(), u8.view(), w.view(), scale.view(), s8.view(), scale.view(), u8.view() }, y));
        QVERIFY(untouched(y));
        // Bias of int8 instead of int32.
        auto b = ints8(DType::Int8, { 2 }, { 1 });
        QVERIFY(!run("QLinearConv", op,
            { x.view(), scale.view(), u8.view(), w.view(), scale.view(), s8.view(), scale.view(), u8.view(), b.view() }, y));
        QVERIFY(untouched(y));
        // Three weight scales for two output channels.
        auto three = floats({ 3 }, { 0.1f, 0.1f, 0.1f });
        QVERIFY(!run("QLinearConv", op, { x.view(), scale.view(), u8.view(), w.view(), three.view(), s8.view(), scale.view(), u8.view() }, y));
        QVERIFY(untouched(y));
        // And the same call with valid parameters runs, so the refusals above are about them.
        QVERIFY(run("QLinearConv", op, { x.view(), scale.view(), u8.view(), w.view(), twoScales.view(), s8.view(), scale.view(), u8.view() }, y));
        QVERIFY(!untouched(y));
    }
}


// QuantizeLinear per axis 1 of [2, 3, 2] into int8: ties to even, saturation at both ends; then
// DequantizeLinear of the result and of an int32 tensor per axis; blocked quantization is refused.
void TestInteger::quantizeAndDequantizePerAxis()
{
    const Shape shape { 2, 3, 2 };
    // Channel c has scale 0.5 * (c + 1) and zero point c - 1.
    auto scale = floats({ 3 }, { 0.5f, 1.0f, 1.5f });
    auto zero = ints8(DType::Int8, { 3 }, { -1, 0, 1 });
    const std::vector<float> x { 0.25f, -0.25f, 2.5f, -2.5f, 1000.0f, -1000.0f, 0.75f, 1.25f, 3.5f, 4.5f, 200.0f, -200.0f };
    auto in = floats(shape, x);
    core::Op q;
    q.type = "QuantizeLinear";
    q.attributes["axis"] = ints({ 1 });
    auto y = output(DType::Int8, shape);
    QVERIFY(run("QuantizeLinear", q, { in.view(), scale.view(), zero.view() }, y));
    // x / scale: 0.5, -0.5 | 2.5, -2.5 | 666.7, -666.7 | 1.5, 2.5 | 3.5, 4.5 | 133.3, -133.3; ties to even
    // (half away from zero would give -1+1, -1-1, 3, -3, ..., 2, 3, 4, 5), plus the zero point, saturated.
    const std::vector<std::int64_t> expected { -1, -1, 2, -2, 127, -128, 1, 1, 4, 4, 127, -128 };
    for (std::int64_t i = 0; i < y.count(); ++i)
        QCOMPARE(y.at(i), expected[std::size_t(i)]);

    core::Op dq;
    dq.type = "DequantizeLinear";
    dq.attributes["axis"] = ints({ 1 });
    auto back = output(DType::Float32, shape);
    QVERIFY(run("DequantizeLinear", dq, { y.view(), scale.view(), zero.view() }, back));
    for (std::int64_t i = 0; i < back.count(); ++i) {
        const auto c = (i / 2) % 3;
        QCOMPARE(back.f(i), float(expected[std::size_t(i)] - (c - 1)) * 0.5f * float(c + 1));
    }
    // An int32 tensor (a quantized bias) has no zero point: x * scale.
    auto bias = ints32(shape, { 7, -7, 100000, -3, 0, 1, 2, 3, 4, 5, 6, 8 });
    auto biasOut = output(DType::Float32, shape);
    QVERIFY(run("DequantizeLinear", dq, { bias.view(), scale.view(), {} }, biasOut));
    for (std::int64_t i = 0; i < biasOut.count(); ++i)
        QCOMPARE(biasOut.f(i), float(bias.at(i)) * 0.5f * float((i / 2) % 3 + 1));

    core::Op blocked = q;
    blocked.attributes["block_size"] = ints({ 2 });
    auto refused = output(DType::Int8, shape);
    QVERIFY(!run("QuantizeLinear", blocked, { in.view(), scale.view(), zero.view() }, refused));
    QVERIFY(untouched(refused));
    auto wrongZero = ints8(DType::UInt8, { 3 }, { 0, 0, 0 }); // uint8 zero point for an int8 output
    QVERIFY(!run("QuantizeLinear", q, { in.view(), scale.view(), wrongZero.view() }, refused));
    QVERIFY(untouched(refused));
}

// BitShift: a [2, 3] uint8 tensor shifted by a broadcast row of amounts, 0 to 9 bits; shifts of 8
// bits or more give 0 in both directions; signed types and an unknown direction are refused.
void TestInteger::bitShiftBroadcastsAndPastTheWidth()
{
    core::Op left, right, sideways;
    left.attributes["direction"] = text("LEFT");
    right.attributes["direction"] = text("RIGHT");
    sideways.attributes["direction"] = text("UP");
    Buf x = ints8(DType::UInt8, { 2, 3 }, { 1, 3, 255, 128, 16, 7 });
    Buf by = ints8(DType::UInt8, { 3 }, { 0, 7, 9 });
    Buf y = output(DType::UInt8, { 2, 3 });
    QVERIFY(run("BitShift", left, { x.view(), by.view() }, y));
    const std::vector<int> shiftedLeft { 1, 128, 0, 128, 0, 0 }; // 3 << 7 = 384 wraps to 128; 16 << 7 = 2048 to 0
    for (std::int64_t i = 0; i < 6; ++i)
        QCOMPARE(y.at(i), std::int64_t(shiftedLeft[std::size_t(i)]));
    QVERIFY(run("BitShift", right, { x.view(), by.view() }, y));
    const std::vector<int> shiftedRight { 1, 0, 0, 128, 0, 0 };
    for (std::int64_t i = 0; i < 6; ++i)
        QCOMPARE(y.at(i), std::int64_t(shiftedRight[std::size_t(i)]));

    // uint64 by 64 and 65 bits (C would shift by the amount mod 64 on x86).
    auto u64 = [](std::vector<std::uint64_t> v) {
        Buf b { DType::UInt64, { std::int64_t(v.size()) }, std::vector<std::byte>(v.size() * 8) };
        std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
        return b;
    };
    Buf wide = u64({ 1, 5, 6 }), wideBy = u64({ 64, 65, 2 });
    for (const core::Op* op : { &left, &right }) {
        Buf wideOut = output(DType::UInt64, { 3 });
        QVERIFY(run("BitShift", *op, { wide.view(), wideBy.view() }, wideOut));
        std::uint64_t got[3];
        std::memcpy(got, wideOut.bytes.data(), sizeof got);
        QCOMPARE(got[0], std::uint64_t(0));
        QCOMPARE(got[1], std::uint64_t(0));
        QCOMPARE(got[2], op == &left ? std::uint64_t(24) : std::uint64_t(1));
    }

    Buf refused = output(DType::UInt8, { 2, 3 });
    QVERIFY(!run("BitShift", sideways, { x.view(), by.view() }, refused));
    Buf sx = ints8(DType::Int8, { 2, 3 }, { 1 }), sby = ints8(DType::Int8, { 3 }, { 1 });
    Buf signedOut = output(DType::Int8, { 2, 3 });
    QVERIFY(!run("BitShift", left, { sx.view(), sby.view() }, signedOut));
    QVERIFY(untouched(refused) && untouched(signedOut));
}

QTEST_GUILESS_MAIN(TestInteger)
#include "tst_integer.moc"
