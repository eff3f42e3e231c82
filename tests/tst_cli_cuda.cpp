// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// `memplan run --device cuda` as a user runs it: the arena, per-tensor and pool runs side by side
// in the table and the JSON, swaps on the copy stream, fused ops on the host, and one clear line
// when a CUDA call fails. tst_cli_cuda runs the memplan command line and skips without a CUDA
// device; tst_cli_cuda_emulated runs it (MEMPLAN_CLI_CUDA) with the executor plugin
// built on the test emulation of CUDA (tests/cudaemu, MEMPLAN_CUDA_PLUGIN), which can also take the device away, shrink its
// memory or fail any call.
#include "clirun.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace {
const QString kNoDevice = QStringLiteral("no CUDA device: running on the CPU executor instead");

bool emulated() { return qEnvironmentVariableIsSet("MEMPLAN_CLI_CUDA"); }

CliRun run(const QStringList& arguments, const QMap<QString, QString>& settings = {})
{
    auto environment = QProcessEnvironment::systemEnvironment();
    for (auto it = settings.begin(); it != settings.end(); ++it)
        environment.insert(it.key(), it.value());
    const auto program = emulated() ? qEnvironmentVariable("MEMPLAN_CLI_CUDA") : QStringLiteral(MEMPLAN_CLI);
    return runProgram(program, arguments, environment);
}

QJsonObject readJson(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

} // namespace

class TestCliCuda : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        // `skip` is read at the second op and again at the last: the swap strategy sends it to host
        // memory in between, prefetched back on the profile's fast host link. Every op has a real kernel.
        m_graph = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/data/swap_skip.json");
        m_profile = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/data/fast_link_profile.json");
        const auto probe = run({ QStringLiteral("run"), m_graph, QStringLiteral("--device"), QStringLiteral("cuda"), QStringLiteral("--repeat"),
            QStringLiteral("1") });
        QVERIFY2(probe.exitCode == 0, qPrintable(probe.err));
        if (probe.err.contains(kNoDevice)) {
            QVERIFY2(!emulated(), qPrintable(probe.err));
            QSKIP(qPrintable(probe.err.trimmed()));
        }
        qInfo("%s", qPrintable(probe.out.section(QLatin1Char('\n'), 1, 1)));
    }

    // example:cnn: every op on the device; the three allocation modes give the no-reuse run's bits and
    // the CPU executor's values; the arena and per-tensor runs hold exactly the predicted live bytes.
    void threeModesSideBySide()
    {
        QTemporaryDir dir;
        const auto json = dir.filePath(QStringLiteral("run.json"));
        const auto r = run({ QStringLiteral("run"), QStringLiteral("example:cnn"), QStringLiteral("--device"), QStringLiteral("cuda"),
            QStringLiteral("--repeat"), QStringLiteral("3"), QStringLiteral("--json"), json });
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(!r.err.contains(kNoDevice), qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("pool run")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("arena bit-identical, per-tensor bit-identical, pool bit-identical")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("outputs vs the CPU executor: within tolerance")), qPrintable(r.out));
        // On the GPU the predicted latency is the roofline bound on the cost profile (default h200).
        QVERIFY2(r.out.contains(QStringLiteral("+ roofline bound on the h200 cost profile")), qPrintable(r.out));
        const auto j = readJson(json);
        QCOMPARE(j.value(QStringLiteral("cost_profile")).toString(), QStringLiteral("h200"));
        QVERIFY(j.value(QStringLiteral("roofline_latency_ms")).toDouble() > 0);
        QCOMPARE(j.value(QStringLiteral("device")).toString(), QStringLiteral("cuda"));
        QVERIFY(!j.value(QStringLiteral("device_name")).toString().isEmpty());
        QCOMPARE(j.value(QStringLiteral("repeat")).toInt(), 3);
        QVERIFY(j.value(QStringLiteral("outputs_match_reference")).toBool());
        QVERIFY(j.value(QStringLiteral("outputs_match_cpu")).toBool());
        // The largest relative error found, in the JSON and in the table's words.
        const double maxError = j.value(QStringLiteral("cpu_max_relative_error")).toDouble(-1);
        QVERIFY2(maxError >= 0 && maxError <= 1e-3, qPrintable(QString::number(maxError)));
        QVERIFY2(r.out.contains(QStringLiteral("(max relative error ")), qPrintable(r.out));
        QCOMPARE(j.value(QStringLiteral("ops_synthetic")).toInt(), 0);
        QCOMPARE(j.value(QStringLiteral("ops_on_host")).toInt(), 0);
        QVERIFY(j.value(QStringLiteral("scratch_bytes")).toInteger() > 0); // the Convs' columns
        const auto predicted = j.value(QStringLiteral("predicted_step_bytes")).toArray();
        const auto lowerBound = j.value(QStringLiteral("lower_bound_bytes")).toInteger();
        QVERIFY(!predicted.isEmpty());
        QCOMPARE(j.value(QStringLiteral("step_bytes")).toArray(), predicted);
        const auto perTensor = j.value(QStringLiteral("per_tensor")).toObject();
        const auto pool = j.value(QStringLiteral("pool")).toObject();
        QVERIFY(perTensor.value(QStringLiteral("outputs_match_reference")).toBool());
        QVERIFY(pool.value(QStringLiteral("outputs_match_reference")).toBool());
        QCOMPARE(perTensor.value(QStringLiteral("step_bytes")).toArray(), predicted);
        QCOMPARE(perTensor.value(QStringLiteral("activation_peak_bytes")).toInteger(), lowerBound);
        QCOMPARE(pool.value(QStringLiteral("step_bytes")).toArray().size(), predicted.size());
        QVERIFY(pool.value(QStringLiteral("activation_peak_bytes")).toInteger() >= lowerBound); // the pool rounds up
        // peak_bytes: everything the mode held at its peak, as the table's last memory row.
        const auto sideBytes = j.value(QStringLiteral("weights_bytes")).toInteger() + j.value(QStringLiteral("scratch_bytes")).toInteger();
        QCOMPARE(j.value(QStringLiteral("peak_bytes")).toInteger(), j.value(QStringLiteral("arena_bytes")).toInteger() + sideBytes);
        QCOMPARE(perTensor.value(QStringLiteral("peak_bytes")).toInteger(), lowerBound + sideBytes);
        QCOMPARE(pool.value(QStringLiteral("peak_bytes")).toInteger(), pool.value(QStringLiteral("activation_peak_bytes")).toInteger() + sideBytes);
        for (const auto& mode : { j, perTensor, pool }) {
            const auto latency = mode.value(QStringLiteral("latency_ms")).toObject();
            QVERIFY(latency.value(QStringLiteral("median")).toDouble() > 0);
            QVERIFY(latency.value(QStringLiteral("p99")).toDouble() >= latency.value(QStringLiteral("p50")).toDouble());
        }
        const auto ops = j.value(QStringLiteral("ops")).toArray();
        QCOMPARE(qsizetype(ops.size()), predicted.size());
        for (const auto& value : ops) {
            const auto op = value.toObject();
            QCOMPARE(op.value(QStringLiteral("on")).toString(), QStringLiteral("device"));
            QCOMPARE(op.value(QStringLiteral("kernel")).toString(), QStringLiteral("real"));
            for (const char* field : { "median_ms", "p99_ms", "per_tensor_median_ms", "pool_median_ms" })
                QVERIFY2(op.value(QLatin1String(field)).toDouble(-1) >= 0, field);
        }
    }

    // The swap strategy's copies go over the copy stream (device ops, not host ops) and are timed;
    // fused ops run on the host and still give the unfused model's outputs.
    void swapAndFusion()
    {
        QTemporaryDir dir;
        const auto &graph = m_graph, &profile = m_profile;
        const auto json = dir.filePath(QStringLiteral("swap.json"));
        const auto swap = run({ QStringLiteral("run"), graph, QStringLiteral("--device"), QStringLiteral("cuda"), QStringLiteral("--swap"),
            QStringLiteral("--profile"), profile, QStringLiteral("--repeat"), QStringLiteral("2"), QStringLiteral("--json"), json });
        QVERIFY2(swap.exitCode == 0, qPrintable(swap.err));
        QVERIFY2(swap.out.contains(QStringLiteral("measured")) && swap.out.contains(QStringLiteral("pinned-host copies on the copy stream")),
            qPrintable(swap.out));
        const auto j = readJson(json);
        QVERIFY(j.value(QStringLiteral("outputs_match_reference")).toBool());
        QVERIFY(j.value(QStringLiteral("outputs_match_original")).toBool());
        QVERIFY(j.value(QStringLiteral("outputs_match_cpu")).toBool());
        QVERIFY(j.value(QStringLiteral("pool")).toObject().value(QStringLiteral("outputs_match_reference")).toBool());
        const auto strategy = j.value(QStringLiteral("strategies")).toArray().at(0).toObject();
        QCOMPARE(strategy.value(QStringLiteral("name")).toString(), QStringLiteral("swap"));
        QCOMPARE(strategy.value(QStringLiteral("swapped_bytes")).toInteger(), 4096 * 4);
        QVERIFY(strategy.value(QStringLiteral("estimated_transfer_ms")).toDouble() > 0);
        QVERIFY(j.value(QStringLiteral("measured_swap_ms")).toDouble() > 0);
        int copies = 0;
        for (const auto& value : j.value(QStringLiteral("ops")).toArray()) {
            const auto op = value.toObject();
            const auto type = op.value(QStringLiteral("type")).toString();
            QCOMPARE(op.value(QStringLiteral("on")).toString(), QStringLiteral("device"));
            copies += type == QStringLiteral("SwapOut") || type == QStringLiteral("SwapIn");
        }
        QCOMPARE(copies, 2);

        const auto fusedJson = dir.filePath(QStringLiteral("fused.json"));
        const auto fused = run({ QStringLiteral("run"), QStringLiteral("example:cnn"), QStringLiteral("--device"), QStringLiteral("cuda"),
            QStringLiteral("--fuse"), QStringLiteral("--repeat"), QStringLiteral("1"), QStringLiteral("--json"), fusedJson });
        QVERIFY2(fused.exitCode == 0, qPrintable(fused.err));
        QVERIFY2(fused.out.contains(QStringLiteral("outputs vs the model without strategies: bit-identical")), qPrintable(fused.out));
        const auto f = readJson(fusedJson);
        QCOMPARE(f.value(QStringLiteral("ops_on_host")).toInt(), 0); // fused bodies run on the device
        int fusedOps = 0;
        for (const auto& value : f.value(QStringLiteral("ops")).toArray())
            if (value.toObject().value(QStringLiteral("type")).toString() == QStringLiteral("Fused")) {
                ++fusedOps;
                QCOMPARE(value.toObject().value(QStringLiteral("on")).toString(), QStringLiteral("device"));
            }
        QVERIFY(fusedOps > 0);
        QVERIFY(f.value(QStringLiteral("outputs_match_cpu")).toBool());
        QCOMPARE(f.value(QStringLiteral("ops_synthetic")).toInt(), 0);
    }

    // A data-dependent model (NMS inside an If, a Gather on its result): the bounded ops run on the
    // host on run-time shapes, the report says which of them waited for the device, and nothing is
    // synthetic, so the outputs are compared with the CPU executor's.
    void runTimeShapes()
    {
        const auto model = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/models/tricky/if_nms.onnx");
        if (!QFile::exists(model))
            QSKIP("tests/models/tricky/if_nms.onnx is missing: run scripts/make_models.sh to make the test models");
        QTemporaryDir dir;
        const auto json = dir.filePath(QStringLiteral("nms.json"));
        const auto r = run({ QStringLiteral("run"), model, QStringLiteral("--device"), QStringLiteral("cuda"), QStringLiteral("--repeat"),
            QStringLiteral("1"), QStringLiteral("--json"), json });
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("tensors sized by an upper bound")) && r.out.contains(QStringLiteral("waited for the device")),
            qPrintable(r.out));
        const auto j = readJson(json);
        QCOMPARE(j.value(QStringLiteral("ops_synthetic")).toInt(), 0);
        QVERIFY(j.value(QStringLiteral("outputs_match_cpu")).toBool());
        QVERIFY(j.value(QStringLiteral("ops_runtime_shapes")).toInt() >= 2); // the If and the Gather
        const int onHost = j.value(QStringLiteral("ops_on_host")).toInt();
        int listed = 0, waited = 0;
        for (const auto& value : j.value(QStringLiteral("ops")).toArray()) {
            const auto op = value.toObject();
            if (op.value(QStringLiteral("on")).toString() != QStringLiteral("host"))
                continue;
            ++listed;
            QVERIFY(op.contains(QStringLiteral("waited_for_device")));
            waited += op.value(QStringLiteral("waited_for_device")).toBool() ? 1 : 0;
        }
        QVERIFY(onHost >= 2);
        QCOMPARE(listed, onHost);
        QCOMPARE(j.value(QStringLiteral("ops_on_host_waited")).toInt(), waited);
    }

    // No device: the CPU executor, with the reason.
    void noDevice()
    {
        if (!emulated())
            QSKIP("needs the emulation to take the device away");
        const auto r = run({ QStringLiteral("run"), m_graph, QStringLiteral("--device"), QStringLiteral("cuda"), QStringLiteral("--repeat"),
                               QStringLiteral("1") },
            { { QStringLiteral("MEMPLAN_CUDAEMU_DEVICES"), QStringLiteral("0") } });
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.err.trimmed(),
            QStringLiteral("memplan: run: ") + kNoDevice + QStringLiteral(" (the CUDA driver sees no device (cudaErrorNoDevice))"));
        QVERIFY(!r.out.contains(QStringLiteral("pool run")));
    }

    // A device too small for the weights: one line naming the allocation, exit status 1.
    void outOfMemory()
    {
        if (!emulated())
            QSKIP("needs the emulation to shrink the device");
        const auto r = run({ QStringLiteral("run"), QStringLiteral("example:cnn"), QStringLiteral("--device"), QStringLiteral("cuda"),
                               QStringLiteral("--repeat"), QStringLiteral("1") },
            { { QStringLiteral("MEMPLAN_CUDAEMU_MEMORY"), QStringLiteral("1048576") } });
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(!r.err.trimmed().contains(QLatin1Char('\n')), qPrintable(r.err));
        QVERIFY2(r.err.startsWith(QStringLiteral("memplan: run: example:cnn: ")) && r.err.contains(QStringLiteral("cudaMalloc failed: cudaErrorMemoryAllocation")),
            qPrintable(r.err));
    }

    // The n-th CUDA call fails, for n = 1, 2, 4, ... until a run gets through: each is one line on
    // stderr naming the call, exit status 1 (or the CPU fallback when the device query fails), and the
    // emulation's exit check finds nothing leaked (it would exit with 70).
    void everyFailureReported()
    {
        if (!emulated())
            QSKIP("needs the emulation to fail calls");
        const auto &graph = m_graph, &profile = m_profile;
        int failures = 0;
        for (long n = 1;; n *= 2) {
            const auto r = run({ QStringLiteral("run"), graph, QStringLiteral("--device"), QStringLiteral("cuda"), QStringLiteral("--swap"),
                                   QStringLiteral("--profile"), profile, QStringLiteral("--repeat"), QStringLiteral("1") },
                { { QStringLiteral("MEMPLAN_CUDAEMU_FAIL_CALL"), QString::number(n) } });
            const auto context = QStringLiteral("call %1: exit %2: %3").arg(n).arg(r.exitCode).arg(r.err);
            QVERIFY2(r.exitCode == 0 || r.exitCode == 1, qPrintable(context));
            QVERIFY2(!r.err.trimmed().contains(QLatin1Char('\n')), qPrintable(context));
            if (r.exitCode == 0 && !r.err.contains(kNoDevice))
                break; // past the last call
            if (r.exitCode == 1) {
                QVERIFY2(r.err.startsWith(QStringLiteral("memplan: run: ") + graph + QStringLiteral(": ")), qPrintable(context));
                static const QRegularExpression namesTheCall(QStringLiteral("\\b(cuda|cublas|kernels::)[A-Za-z0-9]+ failed: "));
                QVERIFY2(r.err.contains(namesTheCall), qPrintable(context));
                ++failures;
            }
            QVERIFY2(n < 1000000, "the run never got through");
        }
        QVERIFY(failures >= 5);
    }

private:
    QString m_graph, m_profile; // tests/data: the skip graph and a profile with a fast host link
};

QTEST_GUILESS_MAIN(TestCliCuda)
#include "tst_cli_cuda.moc"
