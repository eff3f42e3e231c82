// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Models whose graphs reach past the usual CNN ops: an audio model computing its log-mel
// spectrogram in the graph (HannWindow, STFT, MelWeightMatrix) and a SegNet-style decoder that
// unpools to the positions MaxPool's Indices output recorded. Both are sized at import, run on real
// kernels only, and run bit-identically in every planner's arena. And the Fourier transform the
// DFT and STFT kernels share, against its definition.
#include "boundedgraphs.h"
#include "cost/opcost.h"
#include "exec/fft.h"
#include "io/workload.h"

#include <QtTest>

#include <algorithm>
#include <complex>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <random>

namespace {

std::vector<std::int64_t> shapeOf(const core::Graph& g, const std::string& name)
{
    for (const auto& t : g.tensors)
        if (t.name == name)
            return t.shape;
    return {};
}

} // namespace

class TestFrontends : public QObject {
    Q_OBJECT

private slots:
    // Radix-2 and Bluestein lengths, forward and inverse, against the definition summed in long
    // double: within 1e-12 of the line's magnitude.
    void fourierTransformMatchesTheDefinition()
    {
        std::mt19937 rng(5);
        std::normal_distribution<double> normal;
        for (std::int64_t n : { 1, 2, 3, 5, 8, 10, 12, 16, 17, 31, 64, 100, 256, 400, 512, 1000 })
            for (bool inverse : { false, true }) {
                std::vector<std::complex<double>> line(static_cast<std::size_t>(n));
                double magnitude = 0;
                for (auto& v : line) {
                    v = { normal(rng), normal(rng) };
                    magnitude += std::abs(v);
                }
                const auto input = line;
                core::exec::FourierTransform(n, inverse).apply(line);
                double worst = 0;
                for (std::int64_t k = 0; k < n; ++k) {
                    std::complex<long double> sum;
                    for (std::int64_t t = 0; t < n; ++t) {
                        const long double angle = (inverse ? 2 : -2) * std::numbers::pi_v<long double> * ((k * t) % n) / n;
                        sum += std::complex<long double>(input[std::size_t(t)]) * std::polar(1.0L, angle);
                    }
                    if (inverse)
                        sum /= (long double)n;
                    worst = std::max(worst, double(std::abs(sum - std::complex<long double>(line[std::size_t(k)]))));
                }
                QVERIFY2(worst <= 1e-12 * magnitude, qPrintable(QStringLiteral("n %1 %2: off by %3 (line magnitude %4)")
                                                                  .arg(n).arg(inverse ? "inverse" : "forward").arg(worst).arg(magnitude)));
            }
    }

    // A 1 kHz tone through tricky/log_mel_frontend: in every frame the loudest mel band is the one
    // centred on the tone's DFT bin, 1000 Hz · 256 / 16 kHz = 16 (bands spaced evenly in mel between
    // 20 Hz and 8 kHz as the ONNX definition places them: 42 points, band m centred on point m + 1,
    // a point of f Hz on bin floor(257 · f / 16000)).
    void logMelFrontEndHearsATone()
    {
        const auto file = boundedgraphs::fixture("log_mel_frontend");
        if (!std::filesystem::exists(file))
            QSKIP("tests/models/tricky/log_mel_frontend.onnx is missing: run scripts/make_models.sh to make the test models");
        const auto w = core::loadWorkload(file, {});
        QVERIFY2(w, w ? "" : w.error().message.c_str());
        QCOMPARE(shapeOf(*w->graph, "spectrum"), (std::vector<std::int64_t> { 1, 30, 129, 2 })); // onesided by default
        QCOMPARE(shapeOf(*w->graph, "mel_matrix"), (std::vector<std::int64_t> { 129, 40 }));
        const auto stft = std::find_if(w->graph->ops.begin(), w->graph->ops.end(), [](const core::Op& op) { return op.type == "STFT"; });
        QVERIFY(stft != w->graph->ops.end());
        QCOMPARE(core::opCost(*w->graph, *stft).flops, 30 * 5.0 * 256 * 8); // 30 transforms of 256 points, 5·n·log2(n) each
        auto options = boundedgraphs::withModelData(file, *w->graph);
        QVERIFY(options.modelData);
        std::vector<float> wave(4000);
        for (std::size_t i = 0; i < wave.size(); ++i)
            wave[i] = float(0.5 * std::sin(2 * std::numbers::pi * 1000.0 * double(i) / 16000.0));
        options.inputs["wave"] = boundedgraphs::floats({ 1, 4000 }, wave);
        const auto run = core::runOnCpu(*w->graph, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        QCOMPARE(run->opsSynthetic, 0);
        QCOMPARE(run->outputs.size(), std::size_t(2));
        const auto logMel = boundedgraphs::valuesOf<float>(run->outputs[1]);
        QCOMPARE(logMel.size(), std::size_t(30 * 40));
        const auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
        const double low = mel(20.0), step = (mel(8000.0) - low) / 42.0;
        const auto centre = [&](int band) { return 700.0 * (std::pow(10.0, (low + (band + 1) * step) / 2595.0) - 1.0); };
        const auto centreBin = [&](int band) { return int(std::floor(257.0 * centre(band) / 16000.0)); };
        int nearest = 0;
        for (int band = 1; band < 40; ++band)
            if (std::abs(centreBin(band) - 16) < std::abs(centreBin(nearest) - 16))
                nearest = band;
        QCOMPARE(centreBin(nearest), 16);
        for (int frame = 0; frame < 30; ++frame) {
            const auto first = logMel.begin() + frame * 40;
            const int loudest = int(std::max_element(first, first + 40) - first);
            QVERIFY2(loudest == nearest, qPrintable(QStringLiteral("frame %1: loudest band %2 (centre %3 Hz), expected %4 (%5 Hz)")
                                                        .arg(frame).arg(loudest).arg(centre(loudest)).arg(nearest).arg(centre(nearest))));
            QVERIFY(first[loudest] > first[(loudest + 20) % 40] + 5); // far louder than a distant band
        }
        boundedgraphs::checkEveryPlanner(*w, options, run->outputs);
    }

    // tricky/pool_unpool: MaxUnpool puts each of r2's values at the position MaxPool's Indices
    // recorded in its 2x2 window, zeros elsewhere; so each window of the unpooled map holds at most one
    // non-zero, and max-pooling the unpooled map gives r2 back (r2 >= 0 after its Relu).
    void unpoolingInvertsPooling()
    {
        const auto file = boundedgraphs::fixture("pool_unpool");
        if (!std::filesystem::exists(file))
            QSKIP("tests/models/tricky/pool_unpool.onnx is missing: run scripts/make_models.sh to make the test models");
        const auto w = core::loadWorkload(file, {});
        QVERIFY2(w, w ? "" : w.error().message.c_str());
        QCOMPARE(shapeOf(*w->graph, "argmax"), (std::vector<std::int64_t> { 1, 8, 12, 12 }));
        auto options = boundedgraphs::withModelData(file, *w->graph);
        QVERIFY(options.modelData);
        std::mt19937 rng(11);
        std::normal_distribution<float> normal;
        std::vector<float> x(3 * 24 * 24);
        for (auto& v : x)
            v = normal(rng);
        options.inputs["X"] = boundedgraphs::floats({ 1, 3, 24, 24 }, x);
        const auto run = core::runOnCpu(*w->graph, w->schedule, w->problem, core::noReusePlan(w->problem), w->bufferTensor, options);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        QCOMPARE(run->opsSynthetic, 0);
        QCOMPARE(run->outputs.size(), std::size_t(3));
        const auto pooled = boundedgraphs::valuesOf<float>(run->outputs[1]), unpooled = boundedgraphs::valuesOf<float>(run->outputs[2]);
        QCOMPARE(pooled.size(), std::size_t(8 * 12 * 12));
        QCOMPARE(unpooled.size(), std::size_t(8 * 24 * 24));
        int positive = 0;
        for (int c = 0; c < 8; ++c)
            for (int i = 0; i < 12; ++i)
                for (int j = 0; j < 12; ++j) {
                    float best = 0;
                    int nonZero = 0;
                    for (int a = 0; a < 2; ++a)
                        for (int b = 0; b < 2; ++b) {
                            const float v = unpooled[std::size_t((c * 24 + 2 * i + a) * 24 + 2 * j + b)];
                            best = std::max(best, v);
                            nonZero += v != 0;
                        }
                    const float expected = pooled[std::size_t((c * 12 + i) * 12 + j)];
                    QVERIFY2(nonZero <= 1 && best == expected,
                        qPrintable(QStringLiteral("channel %1 window (%2, %3): %4 non-zeros, max %5, pooled %6")
                                       .arg(c).arg(i).arg(j).arg(nonZero).arg(best).arg(expected)));
                    positive += expected > 0;
                }
        QVERIFY(positive > 100); // the check saw real values, not a map of zeros
        boundedgraphs::checkEveryPlanner(*w, options, run->outputs);
    }
};

QTEST_GUILESS_MAIN(TestFrontends)
#include "tst_frontends.moc"
