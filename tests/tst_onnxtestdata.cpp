// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Sweep over the ONNX operator test models (Debian package libonnx-testdata): every model imports
// and plans, except a known list whose shapes are genuinely dynamic, which must fail cleanly.

#include "liveness/lifetimes.h"
#include "onnx/onnximport.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "schedule/schedule.h"

#include <QDirIterator>
#include <QElapsedTimer>
#include <QSet>
#include <QtTest>

namespace {

const QString kRoot = QStringLiteral("/usr/share/libonnx-testdata/data/");

// Models whose graph inputs (or their sequence elements) have symbolic or missing dims, listed
// with python3-onnx, so sizes cannot be known without --dim/--input-shape. They may load but need not.
const QSet<QString> kDynamic {
    QStringLiteral("node/test_identity_sequence"),
    QStringLiteral("node/test_sequence_insert_at_back"),
    QStringLiteral("node/test_sequence_insert_at_front"),
    QStringLiteral("node/test_sequence_map_add_1_sequence_1_tensor"),
    QStringLiteral("node/test_sequence_map_add_1_sequence_1_tensor_expanded"),
    QStringLiteral("node/test_sequence_map_add_2_sequences"),
    QStringLiteral("node/test_sequence_map_add_2_sequences_expanded"),
    QStringLiteral("node/test_sequence_map_extract_shapes"),
    QStringLiteral("node/test_sequence_map_extract_shapes_expanded"),
    QStringLiteral("node/test_sequence_map_identity_1_sequence"),
    QStringLiteral("node/test_sequence_map_identity_1_sequence_1_tensor"),
    QStringLiteral("node/test_sequence_map_identity_1_sequence_1_tensor_expanded"),
    QStringLiteral("node/test_sequence_map_identity_1_sequence_expanded"),
    QStringLiteral("node/test_sequence_map_identity_2_sequences"),
    QStringLiteral("node/test_sequence_map_identity_2_sequences_expanded"),
    QStringLiteral("simple/test_sequence_model8"),
};
// Static input shapes, but the window length is the *value* of the scalar input (Range over it).
const QSet<QString> kValueDependent {
    QStringLiteral("node/test_blackmanwindow_expanded"),
    QStringLiteral("node/test_blackmanwindow_symmetric_expanded"),
    QStringLiteral("node/test_hammingwindow_expanded"),
    QStringLiteral("node/test_hammingwindow_symmetric_expanded"),
    QStringLiteral("node/test_hannwindow_expanded"),
    QStringLiteral("node/test_hannwindow_symmetric_expanded"),
};

// dims and data_type of a serialized onnx.TensorProto (fields 1 and 2), read without libonnx.
struct ReferenceTensor {
    std::vector<std::int64_t> dims;
    int dataType = 0;
    bool ok = false;
};

ReferenceTensor readReference(const QString& path)
{
    QFile file(path);
    ReferenceTensor t;
    if (!file.open(QIODevice::ReadOnly))
        return t;
    const QByteArray bytes = file.readAll();
    qsizetype pos = 0;
    auto varint = [&](qsizetype end, bool& ok) {
        std::uint64_t v = 0;
        for (int shift = 0; pos < end && shift < 64; shift += 7) {
            const auto b = std::uint8_t(bytes[pos++]);
            v |= std::uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80))
                return v;
        }
        ok = false;
        return v;
    };
    bool ok = true;
    while (ok && pos < bytes.size()) {
        const auto key = varint(bytes.size(), ok);
        const int field = int(key >> 3);
        switch (key & 7) {
        case 0: {
            const auto v = varint(bytes.size(), ok);
            if (field == 1)
                t.dims.push_back(std::int64_t(v));
            else if (field == 2)
                t.dataType = int(v);
            break;
        }
        case 2: {
            const auto len = qsizetype(varint(bytes.size(), ok));
            const qsizetype end = pos + len;
            if (len < 0 || end > bytes.size())
                return t;
            if (field == 1) // packed dims
                while (ok && pos < end)
                    t.dims.push_back(std::int64_t(varint(end, ok)));
            pos = end;
            break;
        }
        case 1: pos += 8; break;
        case 5: pos += 4; break;
        default: return t;
        }
    }
    t.ok = ok && pos == bytes.size();
    return t;
}

std::int64_t onnxElementBytes(int dataType)
{
    switch (dataType) {
    case 1: case 6: case 12: return 4;
    case 2: case 3: case 9: return 1;
    case 4: case 5: case 10: case 16: return 2;
    case 7: case 11: case 13: case 14: return 8;
    case 15: return 16;
    default: return 0;
    }
}

// Shapes and byte sizes of the graph outputs against the reference outputs of test_data_set_0.
QString compareWithReference(const core::Graph& graph, const QString& modelDir, int& checked)
{
    if (modelDir.contains(QStringLiteral("optional")))
        return {}; // OptionalProto files are not TensorProtos
    for (std::size_t k = 0; k < graph.outputs.size(); ++k) {
        const auto& t = graph.tensors[graph.outputs[k]];
        const QString path = modelDir + QStringLiteral("/test_data_set_0/output_%1.pb").arg(k);
        if (!t.rankKnown || !QFileInfo::exists(path))
            continue; // sequences and maps have no shape to compare
        const auto ref = readReference(path);
        if (!ref.ok || onnxElementBytes(ref.dataType) == 0)
            continue;
        std::int64_t bytes = onnxElementBytes(ref.dataType);
        for (auto d : ref.dims)
            bytes *= d;
        // A shape with unknown dims may still carry an exact size (ConcatFromSequence).
        const bool shapeKnown = std::none_of(t.shape.begin(), t.shape.end(), [](std::int64_t d) { return d < 0; });
        const bool shapeOk = !shapeKnown || t.shape == ref.dims;
        ++checked;
        if (t.estimated ? t.size < bytes : (!shapeOk || t.size != bytes))
            return QStringLiteral("output '%1': imported %2 bytes, shape rank %3%4; reference %5 bytes, rank %6")
                .arg(QString::fromStdString(t.name)).arg(t.size).arg(t.shape.size())
                .arg(t.estimated ? QStringLiteral(" (estimate)") : QString()).arg(bytes).arg(ref.dims.size());
    }
    return {};
}

struct SweepResult {
    int loaded = 0;
    int planned = 0;
    int skippedDynamic = 0;
    int outputsChecked = 0;
    QStringList failures;
};

QString planOne(const core::Graph& graph)
{
    const auto schedule = core::modelOrder(graph);
    if (!schedule)
        return QStringLiteral("schedule: ") + QString::fromStdString(schedule.error().message);
    const auto problem = core::makeProblem(graph, *schedule, core::ProblemOptions { 256 });
    if (!problem)
        return QStringLiteral("problem: ") + QString::fromStdString(problem.error().message);
    for (const char* name : { "greedy-by-size", "first-fit" }) {
        const auto* planner = core::plannerByName(name);
        if (!planner)
            return QStringLiteral("no planner ") + QLatin1String(name);
        const auto plan = planner->plan(problem->problem, {});
        if (!plan)
            return QLatin1String(name) + QStringLiteral(": ") + QString::fromStdString(plan.error().message);
        const auto check = core::validatePlan(problem->problem, *plan);
        if (!check.ok())
            return QLatin1String(name) + QStringLiteral(" invalid plan: ") + QString::fromStdString(check.message);
    }
    return {};
}

SweepResult sweep(const QString& folder)
{
    SweepResult result;
    QStringList models;
    QDirIterator it(kRoot + folder, { QStringLiteral("model.onnx") }, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext())
        models << it.next();
    models.sort();
    for (const auto& path : models) {
        const QString id = folder + QLatin1Char('/') + QFileInfo(path).dir().dirName();
        const auto graph = core::importOnnx(path.toStdString());
        if (!graph) {
            const QString message = QString::fromStdString(graph.error().message);
            if (!message.contains(path))
                result.failures << id + QStringLiteral(": error does not name the file: ") + message;
            else if ((kDynamic.contains(id) || kValueDependent.contains(id)) && message.contains(QStringLiteral("no known size")))
                ++result.skippedDynamic;
            else
                result.failures << id + QStringLiteral(": import: ") + message;
            continue;
        }
        ++result.loaded;
        if (const QString wrong = compareWithReference(*graph, QFileInfo(path).path(), result.outputsChecked); !wrong.isEmpty())
            result.failures << id + QStringLiteral(": ") + wrong;
        const QString problem = planOne(*graph);
        if (problem.isEmpty())
            ++result.planned;
        else
            result.failures << id + QStringLiteral(": ") + problem;
    }
    return result;
}

} // namespace

class TestOnnxTestData : public QObject {
    Q_OBJECT

private slots:
    void sweepFolder_data();
    void sweepFolder();
};

void TestOnnxTestData::sweepFolder_data()
{
    QTest::addColumn<QString>("folder");
    for (const char* folder : { "node", "pytorch-converted", "pytorch-operator", "simple" })
        QTest::newRow(folder) << QString::fromLatin1(folder);
}

void TestOnnxTestData::sweepFolder()
{
    QFETCH(QString, folder);
    if (!QFileInfo(kRoot + folder).isDir())
        QSKIP(qPrintable(QStringLiteral("%1%2 not found: install the Debian package libonnx-testdata").arg(kRoot, folder)));
    QElapsedTimer timer;
    timer.start();
    const auto result = sweep(folder);
    const auto ms = timer.elapsed();
    qInfo("%s: %d loaded (%d planned, %d outputs match the reference data), %d skipped: dynamic, "
          "%d failed, %lld ms",
          qPrintable(folder), result.loaded, result.planned, result.outputsChecked, result.skippedDynamic,
          int(result.failures.size()), qint64(ms));
    for (const auto& f : result.failures)
        qWarning("%s", qPrintable(f));
    QVERIFY(result.loaded > 0);
    QVERIFY2(result.failures.isEmpty(), qPrintable(result.failures.join(QLatin1Char('\n'))));
    // Its time is printed above, not asserted: speed is measured in benchmarks, this machine is shared.
}

QTEST_GUILESS_MAIN(TestOnnxTestData)
#include "tst_onnxtestdata.moc"
