// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Hostile input: files that are not files (/dev/zero, a FIFO), files past a reader's cap, sizes that
// would allocate more memory than there is, control characters in names, device profiles out of
// physical range and alignments that are not powers of two. Each ends in one message naming the
// file, field, op or tensor, through the core API and through the command line.
#include "clirun.h"

#include "cost/device.h"
#include "exec/executor.h"
#include "exec/tensordata.h"
#include "io/problemcsv.h"
#include "io/workload.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "util/alignment.h"
#include "util/printable.h"
#include "util/memory.h"
#include "util/readfile.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace core;

namespace {
const std::string kHostile = MEMPLAN_SOURCE_DIR "/tests/data/hostile/";

QString hostile(const char* name) { return QString::fromStdString(kHostile + name); }

bool mentions(const std::string& message, const std::string& part) { return message.find(part) != std::string::npos; }

#define VERIFY_MENTIONS(message, part) QVERIFY2(mentions((message), (part)), ((message) + "  [expected: " + (part) + "]").c_str())

// A sparse file of `bytes` bytes: no disk used, but its size is past every cap.
QString sparseFile(const QTemporaryDir& dir, const QString& name, qint64 bytes)
{
    const auto path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || !file.resize(bytes))
        qFatal("cannot make the sparse file %s", qPrintable(path));
    return path;
}

QString fifo(const QTemporaryDir& dir)
{
    const auto path = dir.filePath(QStringLiteral("pipe"));
    if (mkfifo(path.toLocal8Bit().constData(), 0600) != 0)
        qFatal("cannot make a FIFO");
    return path;
}

// The CLI's stderr holds no raw control character but the line end.
bool onlyPrintable(const QString& text)
{
    return std::all_of(text.begin(), text.end(), [](QChar c) { return c == QLatin1Char('\n') || c.unicode() >= 0x20; })
        && !text.contains(QChar(0x7f));
}
} // namespace

class TestLimits : public QObject {
    Q_OBJECT
private slots:
    void readFileRefusesWhatIsNotAFile();
    void readFileCapsTheSize();
    void readersUseTheCap();
    void loadRefusesDevicesAndFifos();
    void cliRefusesDeviceZero();
    void arenaBeyondMemoryIsRefused();
    void cliNamesTheOpWhenMemoryRunsOut();
    void printableEscapesControlCharacters();
    void cliEscapesNamesFromFiles();
    void guessedFormatSaysWhatItSaw();
    void deviceProfileRanges_data();
    void deviceProfileRanges();
    void alignmentIsAPowerOfTwo();
};

void TestLimits::readFileRefusesWhatIsNotAFile()
{
    auto zero = readFileCapped("/dev/zero", kMaxDeviceProfileBytes, "a device profile");
    QVERIFY(!zero);
    VERIFY_MENTIONS(zero.error().message, "/dev/zero: is a character device, not a device profile file");

    QTemporaryDir dir;
    auto pipe = readFileCapped(fifo(dir).toStdString(), kMaxDeviceProfileBytes, "a device profile"); // would block
    QVERIFY(!pipe);
    VERIFY_MENTIONS(pipe.error().message, "a FIFO");

    auto folder = readFileCapped(dir.path().toStdString(), kMaxDeviceProfileBytes, "a device profile");
    QVERIFY(!folder);
    VERIFY_MENTIONS(folder.error().message, "is a folder");

    auto absent = readFileCapped(dir.filePath(QStringLiteral("absent.json")).toStdString(), kMaxDeviceProfileBytes, "a device profile");
    QVERIFY(!absent);
    QCOMPARE(absent.error().code, ErrorCode::Io);
    VERIFY_MENTIONS(absent.error().message, "absent.json: no such file");
}

void TestLimits::readFileCapsTheSize()
{
    QTemporaryDir dir;
    const auto big = sparseFile(dir, QStringLiteral("big.json"), kMaxDeviceProfileBytes + 1);
    auto over = readFileCapped(big.toStdString(), kMaxDeviceProfileBytes, "a device profile");
    QVERIFY(!over);
    VERIFY_MENTIONS(over.error().message, big.toStdString());
    VERIFY_MENTIONS(over.error().message, "larger than a device profile may be (1.00 MiB (1048576 bytes))");

    const auto exact = sparseFile(dir, QStringLiteral("exact.json"), kMaxDeviceProfileBytes);
    auto atCap = readFileCapped(exact.toStdString(), kMaxDeviceProfileBytes, "a device profile");
    QVERIFY2(atCap, atCap ? "" : atCap.error().message.c_str());
    QCOMPARE(std::int64_t(atCap->size()), kMaxDeviceProfileBytes);
}

// Each reader applies its cap before reading: a sparse file past it is refused at once.
void TestLimits::readersUseTheCap()
{
    QTemporaryDir dir;
    auto device = loadDeviceProfile(sparseFile(dir, QStringLiteral("device.json"), 2 * kMiB).toStdString());
    QVERIFY(!device);
    VERIFY_MENTIONS(device.error().message, "larger than a device profile may be");

    auto csv = importProblemCsv(sparseFile(dir, QStringLiteral("problem.csv"), kMaxProblemCsvBytes + 1).toStdString());
    QVERIFY(!csv);
    VERIFY_MENTIONS(csv.error().message, "problem.csv: 2.00 GiB, larger than an allocation-problem CSV may be");
    QVERIFY(!importProblemCsv("/dev/zero"));

    auto tensor = readTensorFile(sparseFile(dir, QStringLiteral("input.pb"), kMaxProtobufBytes + 1).toStdString());
    QVERIFY(!tensor);
    VERIFY_MENTIONS(tensor.error().message, "input.pb");
    VERIFY_MENTIONS(tensor.error().message, "larger than");
    auto zeroTensor = readTensorFile("/dev/zero");
    QVERIFY(!zeroTensor);
    VERIFY_MENTIONS(zeroTensor.error().message, "character device");
}

void TestLimits::loadRefusesDevicesAndFifos()
{
    QTemporaryDir dir;
    for (const auto& path : { std::string("/dev/zero"), fifo(dir).toStdString() }) {
        auto workload = loadWorkload(path, {});
        QVERIFY(!workload);
        QCOMPARE(workload.error().code, ErrorCode::Io);
        VERIFY_MENTIONS(workload.error().message, path + ": is a ");
        VERIFY_MENTIONS(workload.error().message, "not a model file");
    }
}

void TestLimits::cliRefusesDeviceZero()
{
    const auto run = memplan({ QStringLiteral("plan"), QStringLiteral("example:cnn"), QStringLiteral("--fuse"), QStringLiteral("--device"),
                                 QStringLiteral("/dev/zero") },
        60000);
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(QStringLiteral("/dev/zero: is a character device, not a device profile file")), qPrintable(run.err));
    QCOMPARE(run.err.count(QLatin1Char('\n')), 1);
}

// ConstantOfShape filling 10^12 floats plans (sizes are only numbers), but its run is refused before
// the 3.6 TiB arena is allocated, naming the op and the tensor.
void TestLimits::arenaBeyondMemoryIsRefused()
{
    QVERIFY(availableMemory().has_value());
    QVERIFY(*availableMemory() > 0);
    QVERIFY(checkAllocation(1024, "a kibibyte"));
    auto huge = checkAllocation(std::int64_t(1) << 60, "an exbibyte");
    QVERIFY(!huge);
    VERIFY_MENTIONS(huge.error().message, "an exbibyte needs 1024 PiB");

    auto workload = loadWorkload(kHostile + "limits_constantofshape_1e12.onnx", {});
    QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
    const auto* planner = plannerByName("greedy-by-size");
    QVERIFY(planner);
    auto plan = runPlanner(*planner, workload->problem);
    QVERIFY(plan);
    const auto valid = validatePlan(workload->problem, *plan);
    QVERIFY2(valid.ok(), valid.message.c_str());
    auto run = runOnCpu(*workload->graph, workload->schedule, workload->problem, *plan, workload->bufferTensor, RunOptions {});
    QVERIFY(!run);
    VERIFY_MENTIONS(run.error().message, "the arena of the greedy-by-size plan needs 3.64 TiB");
    VERIFY_MENTIONS(run.error().message, "its largest buffer is 'filled' (3.64 TiB)");
    VERIFY_MENTIONS(run.error().message, "output of ConstantOfShape 'fill'");
    VERIFY_MENTIONS(run.error().message, "of memory available");
}

// 10^9 floats (3.73 GiB) under a 3 GiB address-space limit: the check sees the limit and refuses,
// where the run used to end in "internal error: std::bad_alloc".
void TestLimits::cliNamesTheOpWhenMemoryRunsOut()
{
#if defined(__SANITIZE_ADDRESS__)
    QSKIP("AddressSanitizer reserves terabytes of address space for its shadow memory: the CLI cannot start under ulimit -v");
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    QSKIP("AddressSanitizer reserves terabytes of address space for its shadow memory: the CLI cannot start under ulimit -v");
#endif
#endif
    const auto command = QStringLiteral("ulimit -v 3000000 && exec \"$0\" run \"$1\" --planner greedy-by-size");
    const auto run = runProgram(QStringLiteral("/bin/sh"),
        { QStringLiteral("-c"), command, QStringLiteral(MEMPLAN_CLI), hostile("limits_constantofshape_1e9.onnx") },
        QProcessEnvironment::systemEnvironment(), 120000);
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(!run.err.contains(QStringLiteral("internal error")), qPrintable(run.err));
    QVERIFY2(run.err.contains(QStringLiteral("'filled' (3.73 GiB), output of ConstantOfShape 'fill'")), qPrintable(run.err));
    QVERIFY2(run.err.contains(QStringLiteral("of memory available")), qPrintable(run.err));
}

void TestLimits::printableEscapesControlCharacters()
{
    QCOMPARE(printable("red\x1b[31m\r\n\ttab\x7f"), std::string("red\\x1b[31m\\r\\n\\ttab\\x7f"));
    QCOMPARE(printable("caf\xc3\xa9 \\ ok"), std::string("caf\xc3\xa9 \\ ok")); // UTF-8 and backslashes stay
    QCOMPARE(printable(std::string_view("\0x", 2)), std::string("\\x00x"));
}

// An id with ESC and CR: the duplicate-id error and the plan report show escapes, not raw bytes.
void TestLimits::cliEscapesNamesFromFiles()
{
    const auto duplicate = memplan({ QStringLiteral("plan"), hostile("limits_control_chars_duplicate.csv") }, 60000);
    QCOMPARE(duplicate.exitCode, 1);
    QVERIFY2(duplicate.err.contains(QStringLiteral("duplicate id 're\\rd\\x1b[31m'")), qPrintable(duplicate.err));
    QVERIFY2(onlyPrintable(duplicate.err), qPrintable(duplicate.err));
    QCOMPARE(duplicate.err.count(QLatin1Char('\n')), 1);

    const auto report = memplan({ QStringLiteral("plan"), hostile("limits_control_chars.csv") }, 60000);
    QVERIFY2(report.exitCode == 0, qPrintable(report.err));
    QVERIFY2(report.out.contains(QStringLiteral("bell\\x07\\x1b[2Jclear")), qPrintable(report.out));
    QVERIFY2(onlyPrintable(report.out), qPrintable(report.out));

    // The core keeps the name as the file has it: escaping is for printing.
    auto csv = importProblemCsv(kHostile + "limits_control_chars.csv");
    QVERIFY(csv);
    QCOMPARE(csv->problem.buffers[0].name, std::string("bell\x07\x1b[2Jclear"));
}

// A file with no known extension whose content is none of the formats: the message says so and
// what the file starts with, rather than calling a binary file text.
void TestLimits::guessedFormatSaysWhatItSaw()
{
    QTemporaryDir dir;
    QFile model(hostile("limits_constantofshape_1e9.onnx"));
    QVERIFY(model.open(QIODevice::ReadOnly));
    auto bytes = model.readAll();
    bytes[0] = char(0xff);
    const auto path = dir.filePath(QStringLiteral("model.bin"));
    QFile out(path);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(bytes);
    out.close();

    auto workload = loadWorkload(path.toStdString(), {});
    QVERIFY(!workload);
    VERIFY_MENTIONS(workload.error().message, "not an ONNX model, a JSON graph or an allocation-problem CSV");
    VERIFY_MENTIONS(workload.error().message, "it starts with bytes ff ");
    QVERIFY2(!mentions(workload.error().message, "text file"), workload.error().message.c_str());

    const auto run = memplan({ QStringLiteral("plan"), path }, 60000);
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(QStringLiteral("not an ONNX model, a JSON graph or an allocation-problem CSV")), qPrintable(run.err));
}

void TestLimits::deviceProfileRanges_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("expected");
    QTest::newRow("no float32") << QStringLiteral("limits_device_no_float32.json") << QStringLiteral("field 'flops.float32' is missing");
    QTest::newRow("bandwidth 1e-308") << QStringLiteral("limits_device_tiny_bandwidth.json")
                                      << QStringLiteral("field 'memory_bandwidth_gb_s' is 1e-308; expected 1e-06 to 1e+09 GB/s");
    QTest::newRow("flops 1e30") << QStringLiteral("limits_device_huge_flops.json")
                                << QStringLiteral("field 'flops.float32' is 1e+30; expected 1000 to 1e+18 FLOP/s");
    QTest::newRow("alignment 3") << QStringLiteral("limits_device_alignment3.json")
                                 << QStringLiteral("field 'alignment' is 3; expected a power of two");
    QTest::newRow("rate as a string") << QStringLiteral("limits_device_string_rate.json")
                                      << QStringLiteral("field 'memory_bandwidth_gb_s' is not a number");
}

void TestLimits::deviceProfileRanges()
{
    QFETCH(QString, file);
    QFETCH(QString, expected);
    const auto path = kHostile + file.toStdString();
    auto profile = findDevice(path);
    QVERIFY(!profile);
    VERIFY_MENTIONS(profile.error().message, path + ": ");
    VERIFY_MENTIONS(profile.error().message, expected.toStdString());

    const auto run = memplan({ QStringLiteral("plan"), QStringLiteral("example:cnn"), QStringLiteral("--fuse"), QStringLiteral("--device"),
                                 QString::fromStdString(path) },
        60000);
    QVERIFY(run.exitCode != 0);
    QVERIFY2(run.err.contains(expected), qPrintable(run.err));

    // Every built-in profile is within the ranges.
    QVERIFY(builtinDevices().size() >= 5);
}

void TestLimits::alignmentIsAPowerOfTwo()
{
    for (Bytes good : { Bytes(1), Bytes(2), Bytes(64), Bytes(4096), kMaxAlignment })
        QVERIFY2(checkAlignment(good), std::to_string(good).c_str());
    for (Bytes bad : { Bytes(0), Bytes(-4), Bytes(3), Bytes(96), kMaxAlignment * 2 }) {
        const auto s = checkAlignment(bad);
        QVERIFY2(!s, std::to_string(bad).c_str());
        VERIFY_MENTIONS(s.error().message, "power of two");
    }

    LoadOptions options;
    options.alignment = 3;
    for (const char* spec : { "example:cnn", "example:five-tensors" }) {
        auto workload = loadWorkload(spec, options);
        QVERIFY(!workload);
        VERIFY_MENTIONS(workload.error().message, "alignment 3: expected a power of two");
    }
    options.alignment = 512;
    auto aligned = loadWorkload("example:cnn", options);
    QVERIFY(aligned);
    QCOMPARE(aligned->problem.alignment, Bytes(512));
    auto plan = runPlanner(*plannerByName("best-fit"), aligned->problem);
    QVERIFY(plan);
    const auto valid = validatePlan(aligned->problem, *plan);
    QVERIFY2(valid.ok(), valid.message.c_str());

    const auto run = memplan({ QStringLiteral("plan"), QStringLiteral("example:cnn"), QStringLiteral("--alignment"), QStringLiteral("3") }, 60000);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains(QStringLiteral("--alignment '3': expected a power of two from 1 to 2^30 bytes")), qPrintable(run.err));
}

QTEST_GUILESS_MAIN(TestLimits)
#include "tst_limits.moc"
