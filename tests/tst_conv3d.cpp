// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// 3-D (volumetric) Conv, MaxPool and AveragePool on the CPU kernels against their definitions, with
// groups, strides, dilations and asymmetric pads in every spatial dimension (the ONNX backend data has
// 3-D cases only for pooling with defaults and for ConvTranspose). A 2-D convolution is the 3-D one of
// depth 1, bit for bit, so the depth loop changes nothing for images.
#include "exec/kernels.h"
#include "kerneltest.h"

#include <QtTest>

#include <cmath>
#include <limits>

using core::exec::Shape;

using kerneltest::countOf;
using kerneltest::ints;

namespace {

std::vector<float> pattern(std::int64_t n, int seed)
{
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = float((i * 29 + std::size_t(seed) * 7) % 19) / 6.0f - 1.5f;
    return v;
}

core::exec::TensorView view(const Shape& shape, std::vector<float>& data)
{
    return { core::DType::Float32, shape, reinterpret_cast<std::byte*>(data.data()), countOf(shape) };
}

// The three spatial parameters of one window dimension.
struct Axis {
    std::int64_t in, out, kernel, stride, dilation, padBegin;
};

// Output position o, window element k -> input position, or -1 in the padding.
std::int64_t inputAt(const Axis& a, std::int64_t o, std::int64_t k)
{
    const std::int64_t i = o * a.stride - a.padBegin + k * a.dilation;
    return i >= 0 && i < a.in ? i : -1;
}

bool close(float got, double expected) { return std::fabs(got - expected) <= 1e-4 * (1 + std::fabs(expected)); }

} // namespace

class TestConv3d : public QObject {
    Q_OBJECT
private slots:
    void convMatchesDefinition();
    void poolsMatchDefinition();
    void depthOneIsTheImageConv();
};

void TestConv3d::convMatchesDefinition()
{
    const std::int64_t n = 2, c = 4, m = 6, groups = 2;
    // Depth: dilation 2, pads 1 and 1; height: stride 2, pads 1 and 1; width: stride 2, pads 0 and 1.
    const Axis ax[3] = { { 5, 3, 3, 1, 2, 1 }, { 7, 4, 3, 2, 1, 1 }, { 6, 3, 2, 2, 1, 0 } };
    core::Op op;
    op.type = "Conv";
    op.attributes["strides"] = ints({ 1, 2, 2 });
    op.attributes["dilations"] = ints({ 2, 1, 1 });
    op.attributes["pads"] = ints({ 1, 1, 0, 1, 1, 1 });
    op.attributes["group"] = ints({ groups });
    const Shape xs { n, c, 5, 7, 6 }, ws { m, c / groups, 3, 3, 2 }, ys { n, m, 3, 4, 3 };
    auto x = pattern(countOf(xs), 1), w = pattern(countOf(ws), 2), bias = pattern(m, 3);
    std::vector<float> y(std::size_t(countOf(ys)), std::nanf(""));
    core::exec::KernelCall call;
    call.op = &op;
    call.in = { view(xs, x), view(ws, w), view({ m }, bias) };
    call.out = { view(ys, y) };
    QVERIFY2(core::exec::findKernel("Conv")(call), "the Conv kernel takes a 3-D convolution");
    const std::int64_t cg = c / groups, mg = m / groups;
    std::size_t at = 0;
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t o = 0; o < m; ++o)
            for (std::int64_t od = 0; od < ax[0].out; ++od)
                for (std::int64_t oh = 0; oh < ax[1].out; ++oh)
                    for (std::int64_t ow = 0; ow < ax[2].out; ++ow, ++at) {
                        double sum = bias[std::size_t(o)];
                        for (std::int64_t ci = 0; ci < cg; ++ci)
                            for (std::int64_t a = 0; a < 3; ++a)
                                for (std::int64_t i = 0; i < 3; ++i)
                                    for (std::int64_t j = 0; j < 2; ++j) {
                                        const auto d = inputAt(ax[0], od, a), h = inputAt(ax[1], oh, i), v = inputAt(ax[2], ow, j);
                                        if (d < 0 || h < 0 || v < 0)
                                            continue;
                                        const std::int64_t channel = (o / mg) * cg + ci;
                                        sum += double(x[std::size_t((((b * c + channel) * 5 + d) * 7 + h) * 6 + v)])
                                            * w[std::size_t((((o * cg + ci) * 3 + a) * 3 + i) * 2 + j)];
                                    }
                        QVERIFY2(close(y[at], sum), qPrintable(QStringLiteral("element %1: %2, expected %3").arg(at).arg(y[at]).arg(sum)));
                    }
}

void TestConv3d::poolsMatchDefinition()
{
    const Axis ax[3] = { { 4, 3, 2, 2, 1, 1 }, { 5, 3, 3, 2, 1, 1 }, { 6, 3, 2, 2, 1, 0 } };
    const Shape xs { 1, 3, 4, 5, 6 }, ys { 1, 3, 3, 3, 3 };
    auto x = pattern(countOf(xs), 4);
    for (const char* type : { "MaxPool", "AveragePool" })
        for (const bool includePad : { false, true }) {
            core::Op op;
            op.type = type;
            op.attributes["kernel_shape"] = ints({ 2, 3, 2 });
            op.attributes["strides"] = ints({ 2, 2, 2 });
            op.attributes["pads"] = ints({ 1, 1, 0, 1, 1, 0 });
            op.attributes["count_include_pad"] = ints({ includePad });
            std::vector<float> y(std::size_t(countOf(ys)), std::nanf(""));
            core::exec::KernelCall call;
            call.op = &op;
            call.in = { view(xs, x) };
            call.out = { view(ys, y) };
            QVERIFY2(core::exec::findKernel(type)(call), type);
            const bool max = std::string_view(type) == "MaxPool";
            std::size_t at = 0;
            for (std::int64_t ch = 0; ch < 3; ++ch)
                for (std::int64_t od = 0; od < 3; ++od)
                    for (std::int64_t oh = 0; oh < 3; ++oh)
                        for (std::int64_t ow = 0; ow < 3; ++ow, ++at) {
                            double best = -std::numeric_limits<double>::infinity(), sum = 0;
                            int inside = 0, padded = 0;
                            for (std::int64_t a = 0; a < 2; ++a)
                                for (std::int64_t i = 0; i < 3; ++i)
                                    for (std::int64_t j = 0; j < 2; ++j) {
                                        ++padded; // every window element lies in the padded input here
                                        const auto d = inputAt(ax[0], od, a), h = inputAt(ax[1], oh, i), v = inputAt(ax[2], ow, j);
                                        if (d < 0 || h < 0 || v < 0)
                                            continue;
                                        const double e = x[std::size_t(((ch * 4 + d) * 5 + h) * 6 + v)];
                                        best = std::max(best, e);
                                        sum += e;
                                        ++inside;
                                    }
                            const double expected = max ? best : sum / (includePad ? padded : inside);
                            QVERIFY2(close(y[at], expected),
                                qPrintable(QStringLiteral("%1 element %2: %3, expected %4").arg(type).arg(at).arg(y[at]).arg(expected)));
                        }
        }
}

void TestConv3d::depthOneIsTheImageConv()
{
    core::Op image, volume;
    image.type = volume.type = "Conv";
    image.attributes["pads"] = ints({ 1, 0, 1, 1 });
    image.attributes["strides"] = ints({ 2, 1 });
    volume.attributes["pads"] = ints({ 0, 1, 0, 0, 1, 1 });
    volume.attributes["strides"] = ints({ 1, 2, 1 });
    auto x = pattern(2 * 3 * 9 * 8, 5), w = pattern(4 * 3 * 3 * 3, 6);
    std::vector<float> y2(2 * 4 * 5 * 7), y3(y2.size());
    core::exec::KernelCall call2, call3;
    call2.op = &image;
    call2.in = { view({ 2, 3, 9, 8 }, x), view({ 4, 3, 3, 3 }, w) };
    call2.out = { view({ 2, 4, 5, 7 }, y2) };
    call3.op = &volume;
    call3.in = { view({ 2, 3, 1, 9, 8 }, x), view({ 4, 3, 1, 3, 3 }, w) };
    call3.out = { view({ 2, 4, 1, 5, 7 }, y3) };
    QVERIFY(core::exec::findKernel("Conv")(call2));
    QVERIFY(core::exec::findKernel("Conv")(call3));
    // The 2-D convolution runs N,H,W,C on oneDNN, the 3-D one N,C,D,H,W: the same sums in another order.
    for (std::size_t i = 0; i < y2.size(); ++i)
        QVERIFY2(std::abs(y2[i] - y3[i]) <= 1e-5f * (1.0f + std::abs(y2[i])),
            qPrintable(QStringLiteral("element %1: %2 vs %3").arg(i).arg(y2[i]).arg(y3[i])));
    QVERIFY(std::any_of(y2.begin(), y2.end(), [&](float v) { return v != y2[0]; }));
}

QTEST_GUILESS_MAIN(TestConv3d)
#include "tst_conv3d.moc"
