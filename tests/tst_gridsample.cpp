// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// GridSample (and RoiAlign) on the CPU kernels against hand-worked values, for the combinations the ONNX backend data
// leaves out (bicubic with border and reflection padding, reflection far outside, nearest ties,
// half a pixel outside with zeros padding) and for the configurations it must refuse.
#include "exec/kernels.h"
#include "kerneltest.h"

#include <QtTest>

#include <cmath>

using core::exec::Shape;
using kerneltest::countOf;

namespace {

// X [1, 1, 3, 4]: value 10 * row + column, so every pixel is distinct and easy to read back.
std::vector<float> image()
{
    std::vector<float> v;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 4; ++c)
            v.push_back(float(10 * r + c));
    return v;
}

core::exec::TensorView view(const Shape& shape, std::vector<float>& data)
{
    return { core::DType::Float32, shape, reinterpret_cast<std::byte*>(data.data()), countOf(shape) };
}

// Samples `image()` at the normalised (x, y) points; false when the kernel refuses.
bool sample(const std::vector<std::pair<float, float>>& points, const std::string& mode, const std::string& padding,
    bool alignCorners, std::vector<float>& out)
{
    core::Op op;
    op.type = "GridSample";
    op.attributes["mode"].text = mode;
    op.attributes["padding_mode"].text = padding;
    op.attributes["align_corners"] = kerneltest::ints({ alignCorners ? 1 : 0 });
    auto x = image();
    std::vector<float> grid;
    for (const auto& [px, py] : points) {
        grid.push_back(px);
        grid.push_back(py);
    }
    const auto n = std::int64_t(points.size());
    out.assign(std::size_t(n), std::nanf(""));
    core::exec::KernelCall call;
    call.op = &op;
    call.in = { view({ 1, 1, 3, 4 }, x), view({ 1, 1, n, 2 }, grid) };
    call.out = { view({ 1, 1, 1, n }, out) };
    return core::exec::findKernel("GridSample")(call);
}

// RoiAlign over `image()` (value 10 * y + x, so bilinear samples are exact): one region (x1, y1, x2, y2)
// in batch `batchIndex`, pooled to outH x outW; false when the kernel refuses.
bool roiAlign(std::vector<float> box, std::int64_t outH, std::int64_t outW, const std::string& mode, std::int64_t ratio,
    std::vector<float>& out, std::int64_t batchIndex = 0)
{
    core::Op op;
    op.type = "RoiAlign";
    op.attributes["mode"].text = mode;
    op.attributes["output_height"] = kerneltest::ints({ outH });
    op.attributes["output_width"] = kerneltest::ints({ outW });
    op.attributes["sampling_ratio"] = kerneltest::ints({ ratio });
    auto x = image();
    std::vector<std::int64_t> batch { batchIndex };
    out.assign(std::size_t(outH * outW), std::nanf(""));
    core::exec::KernelCall call;
    call.op = &op;
    call.in = { view({ 1, 1, 3, 4 }, x), view({ 1, 4 }, box),
        { core::DType::Int64, { 1 }, reinterpret_cast<std::byte*>(batch.data()), 1 } };
    call.out = { view({ 1, 1, outH, outW }, out) };
    return core::exec::findKernel("RoiAlign")(call);
}

// Normalised coordinate of pixel position p on an axis of `size` pixels.
float normalised(double p, int size, bool alignCorners)
{
    return float(alignCorners ? 2.0 * p / (size - 1) - 1.0 : (2.0 * p + 1.0) / size - 1.0);
}

} // namespace

class TestGridSample : public QObject {
    Q_OBJECT
private slots:
    void pixelCentresGiveThePixels();
    void bicubicTaps();
    void paddingOutside();
    void nearestTiesToEven();
    void refusals();
    void roiAlignHandWorked();
};

// At pixel centres every mode and padding gives the pixel itself (cubic weights are 0, 1, 0, 0).
void TestGridSample::pixelCentresGiveThePixels()
{
    for (const bool align : { false, true })
        for (const char* mode : { "nearest", "bilinear", "bicubic" })
            for (const char* padding : { "zeros", "border", "reflection" }) {
                std::vector<std::pair<float, float>> points;
                for (int r = 0; r < 3; ++r)
                    for (int c = 0; c < 4; ++c)
                        points.emplace_back(normalised(c, 4, align), normalised(r, 3, align));
                std::vector<float> out;
                QVERIFY(sample(points, mode, padding, align, out));
                const auto expected = image();
                for (std::size_t i = 0; i < out.size(); ++i)
                    QVERIFY2(std::fabs(out[i] - expected[i]) < 1e-4f,
                        qPrintable(QStringLiteral("%1 %2 align %3: pixel %4 gave %5").arg(mode, padding).arg(align).arg(i).arg(out[i])));
            }
}

// Halfway between columns 1 and 2 of row 1, the cubic weights are -3/32, 19/32, 19/32, -3/32 over
// columns 0..3. Halfway between columns 0 and 1 the left tap (column -1) is padding: 0 with zeros,
// column 0 with border, and with reflection around -0.5 also column 0.
void TestGridSample::bicubicTaps()
{
    const double w0 = -3.0 / 32, w1 = 19.0 / 32;
    auto row = [](double c) { return 10.0 + c; };
    const float y = normalised(1, 3, false);
    std::vector<float> out;
    QVERIFY(sample({ { normalised(1.5, 4, false), y }, { normalised(0.5, 4, false), y } }, "bicubic", "zeros", false, out));
    QCOMPARE(out[0], float(w0 * row(0) + w1 * row(1) + w1 * row(2) + w0 * row(3)));
    QCOMPARE(out[1], float(w0 * 0.0 + w1 * row(0) + w1 * row(1) + w0 * row(2)));
    for (const char* padding : { "border", "reflection" }) {
        QVERIFY(sample({ { normalised(0.5, 4, false), y } }, "bicubic", padding, false, out));
        QVERIFY2(std::fabs(out[0] - float(w0 * row(0) + w1 * row(0) + w1 * row(1) + w0 * row(2))) < 1e-4f, padding);
    }
}

void TestGridSample::paddingOutside()
{
    const float y = normalised(2, 3, false);
    std::vector<float> out;
    // Half a pixel left of column 0 (the image's edge): bilinear reads half of column 0, half zero.
    QVERIFY(sample({ { -1.0f, y } }, "bilinear", "zeros", false, out));
    QCOMPARE(out[0], 0.5f * 20.0f);
    // Far to the right: border clamps to the last column.
    QVERIFY(sample({ { 9.0f, y } }, "bilinear", "border", false, out));
    QCOMPARE(out[0], 23.0f);
    // Aligned corners, borders [0, 3]: x = 7 reflects off 3 (to -1), then off 0, to 1.
    QVERIFY(sample({ { normalised(7, 4, true), normalised(2, 3, true) } }, "bilinear", "reflection", true, out));
    QVERIFY2(std::fabs(out[0] - 21.0f) < 1e-4f, qPrintable(QString::number(out[0])));
    // Not aligned, borders [-0.5, 3.5]: x = -1.5 reflects off -0.5 to 0.5, halfway between columns 0 and 1.
    QVERIFY(sample({ { normalised(-1.5, 4, false), y } }, "bilinear", "reflection", false, out));
    QVERIFY2(std::fabs(out[0] - 20.5f) < 1e-4f, qPrintable(QString::number(out[0])));
    // x = -5.5 reflects off -0.5 (to 4.5), then off 3.5, to 2.5.
    QVERIFY(sample({ { normalised(-5.5, 4, false), y } }, "bilinear", "reflection", false, out));
    QVERIFY2(std::fabs(out[0] - 22.5f) < 1e-4f, qPrintable(QString::number(out[0])));
}

// Nearest rounds half to even, as std::nearbyint: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2.
void TestGridSample::nearestTiesToEven()
{
    const float y = normalised(1, 3, false);
    std::vector<float> out;
    QVERIFY(sample({ { normalised(0.5, 4, false), y }, { normalised(1.5, 4, false), y }, { normalised(2.5, 4, false), y } },
        "nearest", "zeros", false, out));
    QCOMPARE(out, (std::vector<float> { 10.0f, 12.0f, 12.0f }));
}

void TestGridSample::refusals()
{
    std::vector<float> out;
    QVERIFY(!sample({ { 0.0f, 0.0f } }, "area", "zeros", false, out));
    QVERIFY(!sample({ { 0.0f, 0.0f } }, "bilinear", "mirror", false, out));
    QVERIFY(std::isnan(out[0])); // nothing written
    // A volumetric input (5-D) is refused.
    core::Op op;
    op.type = "GridSample";
    std::vector<float> x(8, 1.0f), grid(3, 0.0f), y(1, std::nanf(""));
    core::exec::KernelCall call;
    call.op = &op;
    call.in = { view({ 1, 1, 2, 2, 2 }, x), view({ 1, 1, 1, 1, 3 }, grid) };
    call.out = { view({ 1, 1, 1, 1, 1 }, y) };
    QVERIFY(!core::exec::findKernel("GridSample")(call));
}

// RoiAlign (half_pixel: the box shifted by half a pixel) on hand-worked values; the ONNX backend
// cases cover avg mode only.
void TestGridSample::roiAlignHandWorked()
{
    std::vector<float> out;
    // Box (0.5, 0.5)-(2.5, 1.5) is pixels x 0..2, y 0..1: two 1x1 cells sampled at their centres.
    QVERIFY(roiAlign({ 0.5f, 0.5f, 2.5f, 1.5f }, 1, 2, "avg", 1, out));
    QCOMPARE(out, (std::vector<float> { 5.5f, 6.5f }));
    // Adaptive sampling (ratio 0): a 2x2 cell gets 2x2 samples; their mean is the cell's centre value.
    QVERIFY(roiAlign({ 0.5f, 0.5f, 2.5f, 2.5f }, 1, 1, "avg", 0, out));
    QCOMPARE(out, (std::vector<float> { 11.0f }));
    // max: the largest weighted tap of any sample. Samples at x, y in {0.5, 1.5}, each tap weighted
    // 1/4: the sample at (1.5, 1.5) reads 11, 12, 21, 22; 22 / 4 = 5.5.
    QVERIFY(roiAlign({ 0.5f, 0.5f, 2.5f, 2.5f }, 1, 1, "max", 2, out));
    QCOMPARE(out, (std::vector<float> { 5.5f }));
    // A region more than a pixel below the image: every sample reads 0.
    QVERIFY(roiAlign({ 0.5f, 10.5f, 2.5f, 12.5f }, 1, 1, "avg", 2, out));
    QCOMPARE(out, (std::vector<float> { 0.0f }));
    // A batch index outside the batch, or an unknown mode: refused, nothing written.
    QVERIFY(!roiAlign({ 0.5f, 0.5f, 2.5f, 1.5f }, 1, 1, "avg", 1, out, 1));
    QVERIFY(!roiAlign({ 0.5f, 0.5f, 2.5f, 1.5f }, 1, 1, "median", 1, out));
    QVERIFY(std::isnan(out[0]));
}

QTEST_APPLESS_MAIN(TestGridSample)
#include "tst_gridsample.moc"
