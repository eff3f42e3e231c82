// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// PyTorch memory snapshots: the pickle reader on every opcode kind and its refusals, gzip, the
// snapshot model, the replayed trace against the numbers scripts/make_snapshot.py produced, the
// replan, the CSV round trip and `memplan trace`.
#include "clirun.h"

#include "io/gunzip.h"
#include "io/pickle.h"
#include "io/problemcsv.h"
#include "io/report.h"
#include "io/workload.h"
#include "planners/metrics.h"
#include "planners/validate.h"
#include "trace/tracephases.h"
#include "trace/tracereport.h"
#include "util/format.h"

#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

using namespace core;

namespace {
const std::string kSnapshots = MEMPLAN_SOURCE_DIR "/tests/data/snapshots/";

std::string readBytes(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

nlohmann::json expected(const std::string& snapshot) { return nlohmann::json::parse(readBytes(kSnapshots + snapshot + ".expected.json")); }

std::shared_ptr<const PickleDocument> parseOrFail(const std::string& bytes)
{
    auto document = parsePickle(bytes, "test");
    if (!document)
        qWarning("%s", document.error().message.c_str());
    return document ? *document : nullptr;
}

MeasuredTrace measure(const std::string& name)
{
    auto snapshot = loadSnapshot(kSnapshots + name);
    if (!snapshot)
        qFatal("%s", snapshot.error().message.c_str());
    auto trace = measureTrace(*snapshot, name);
    if (!trace)
        qFatal("%s", trace.error().message.c_str());
    return std::move(*trace);
}

// A hand-built snapshot: one 2 MiB segment at `base` and the given events on device 0.
MemorySnapshot handMade(std::vector<TraceEvent> events, std::int64_t base = 1 << 30)
{
    MemorySnapshot s;
    s.segments.push_back(SnapshotSegment { 0, base, 2 << 20, 0, false, {} });
    s.deviceTraces.push_back(std::move(events));
    return s;
}
TraceEvent traceEvent(TraceAction action, std::int64_t addr, std::int64_t size) { return TraceEvent { action, -1, addr, size, 0, -1, -1 }; }
} // namespace

class TestTrace : public QObject {
    Q_OBJECT
private slots:
    void pickleValuesEveryProtocol_data();
    void pickleValuesEveryProtocol();
    void pickleOpcodesByHand();
    void pickleRefusals_data();
    void pickleRefusals();
    void gzipRefusals();
    void generatedSnapshotPeaks_data();
    void generatedSnapshotPeaks();
    void everyPlannerReplans();
    void csvRoundTrip();
    void loadsAsWorkload_data();
    void loadsAsWorkload();
    void loadRefusals();
    void edgeCaseFiles();
    void replayRules();
    void annotationPhases();
    void generatorIsDeterministic();
    void largeSnapshotProgressAndCancel();
    void cliReport();
    void cliExitCodes();
};

void TestTrace::pickleValuesEveryProtocol_data()
{
    QTest::addColumn<QString>("file");
    for (const char* f : { "values_p2.pickle", "values_p4.pickle", "values_p5.pickle", "values_p4.pickle.gz" })
        QTest::newRow(f) << QString::fromLatin1(f);
}

// scripts/make_snapshot.py --edge-cases writes the same dict with Python's pickler at protocols 2, 4, 5.
void TestTrace::pickleValuesEveryProtocol()
{
    QFETCH(QString, file);
    auto document = readPickleFile(kSnapshots + file.toStdString());
    QVERIFY2(document, document ? "" : document.error().message.c_str());
    const auto root = (*document)->root();
    QVERIFY(root.isDict());
    const auto get = [&](const char* key) {
        const auto v = root.find(key);
        if (!v)
            qFatal("missing key %s", key);
        return *v;
    };
    QVERIFY(get("none").isNone());
    QCOMPARE(get("true").asBool(), true);
    QCOMPARE(get("false").kind(), PickleValue::Kind::Bool);
    QCOMPARE(get("false").asBool(), false);
    QCOMPARE(get("i1").asInt(), 5);
    QCOMPARE(get("i2").asInt(), 300);
    QCOMPARE(get("i4").asInt(), -70000);
    QCOMPARE(get("big").asInt(), std::int64_t(1) << 40);
    QCOMPARE(get("neg").asInt(), -(std::int64_t(1) << 40));
    QCOMPARE(get("max").asInt(), INT64_MAX);
    QCOMPARE(get("min").asInt(), INT64_MIN);
    QCOMPARE(get("float").asFloat(), 1.5);
    QCOMPARE(get("str").asString(), std::string_view("h\xc3\xa9llo"));
    if (!file.startsWith(QLatin1String("values_p2"))) { // protocol 2 writes bytes as a call to _codecs.encode
        QCOMPARE(get("bytes").kind(), PickleValue::Kind::Bytes);
        QCOMPARE(get("bytes").asString(), std::string_view("\x00\x01", 2));
        QCOMPARE(get("long_bytes").asString(), std::string_view(std::string(300, 'y')));
    }
    QCOMPARE(get("long_str").asString().size(), std::size_t(300));
    QCOMPARE(get("list").size(), std::size_t(3));
    QCOMPARE(get("list")[2].asInt(), 3);
    for (const char* key : { "tuple1", "tuple2", "tuple3", "tuple4", "empty" })
        QCOMPARE(get(key).kind(), PickleValue::Kind::Tuple);
    QCOMPARE(get("tuple4").size(), std::size_t(4));
    QCOMPARE(get("tuple3")[1].asInt(), 2);
    QCOMPARE(get("empty").size(), std::size_t(0));
    QCOMPARE(get("nested").find("a")->operator[](0).find("b")->size(), std::size_t(0));
    const auto many = get("many");
    QCOMPARE(many.size(), std::size_t(2500)); // APPENDS in batches of 1000
    for (std::size_t i = 0; i < many.size(); ++i)
        QCOMPARE(many[i].asInt(), std::int64_t(i));
    const auto shared = get("shared"); // the same list twice: BINGET shares it
    QCOMPARE(shared[0].size(), std::size_t(2));
    QCOMPARE(shared[1][1].asInt(), 2);
    bool intKey = false;
    for (std::size_t i = 0; i < root.entryCount(); ++i)
        if (root.entryKey(i).isInt() && root.entryKey(i).asInt() == 7)
            intKey = root.entryValue(i).asString() == "int key";
    QVERIFY(intKey);
}

void TestTrace::pickleOpcodesByHand()
{
    using namespace std::string_literals;
    // MARK, BININT (negative), LONG4, BINFLOAT, BINUNICODE8, BINBYTES8, SHORT_BINBYTES, BYTEARRAY8,
    // BINBYTES, NEWTRUE, NEWFALSE, TUPLE; LONG_BINPUT / LONG_BINGET; DUP and POP; POP_MARK; TUPLE1-3.
    const std::string bytes = "\x80\x02("s
        + "J\xfe\xff\xff\xff"s                               // -2
        + "\x8b\x02\x00\x00\x00\x00\x01"s                    // LONG4: 256
        + "G\x3f\xf8\x00\x00\x00\x00\x00\x00"s              // 1.5
        + "\x8d\x02\x00\x00\x00\x00\x00\x00\x00hi"s         // "hi"
        + "\x8e\x01\x00\x00\x00\x00\x00\x00\x00z"s          // b"z"
        + "C\x01q"s                                          // b"q"
        + "\x96\x00\x00\x00\x00\x00\x00\x00\x00"s           // bytearray()
        + "B\x03\x00\x00\x00" "abc"s                           // b"abc"
        + "\x88\x89"s                                        // True, False
        + "r\x00\x01\x00\x00"s                               // LONG_BINPUT 256 (False)
        + "j\x00\x01\x00\x00"s                               // LONG_BINGET 256
        + "2"s + "0"s                                        // DUP, POP
        + "(K\x01K\x02" + "1"s                               // a MARK and its values dropped
        + "K\x01\x85K\x01K\x02\x86K\x01K\x02K\x03\x87"s    // TUPLE1, TUPLE2, TUPLE3
        + "t."s;
    const auto document = parseOrFail(bytes);
    QVERIFY(document);
    const auto t = document->root();
    QCOMPARE(t.kind(), PickleValue::Kind::Tuple);
    QCOMPARE(t.size(), std::size_t(14));
    QCOMPARE(t[0].asInt(), -2);
    QCOMPARE(t[1].asInt(), 256);
    QCOMPARE(t[2].asFloat(), 1.5);
    QCOMPARE(t[3].asString(), std::string_view("hi"));
    QCOMPARE(t[4].asString(), std::string_view("z"));
    QCOMPARE(t[5].asString(), std::string_view("q"));
    QCOMPARE(t[6].kind(), PickleValue::Kind::Bytes);
    QCOMPARE(t[6].asString().size(), std::size_t(0));
    QCOMPARE(t[7].asString(), std::string_view("abc"));
    QCOMPARE(t[8].asBool(), true);
    QCOMPARE(t[9].asBool(), false);
    QCOMPARE(t[10].asBool(), false); // from the memo; DUP's copy went with POP
    QCOMPARE(t[11].size(), std::size_t(1));
    QCOMPARE(t[12][1].asInt(), 2);
    QCOMPARE(t[13][2].asInt(), 3);
    // SETITEM, SETITEMS, APPEND, EMPTY_DICT, EMPTY_LIST, MEMOIZE, BINPUT, BINGET, SHORT_BINUNICODE,
    // BINUNICODE, NONE, FRAME, a key stored twice (the last value wins), LONG1 of a negative int.
    const std::string dict = "\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01k]q\x01u"s
        + "\x8c\x01kK\x07s"s + "X\x01\x00\x00\x00nNs"s + "h\x01K\x09" "a0"s + "\x8c\x01l\x8a\x02\x00\xffs."s;
    const auto d = parseOrFail(dict);
    QVERIFY(d);
    QCOMPARE(d->root().find("k")->asInt(), 7);
    QVERIFY(d->root().find("n")->isNone());
    QCOMPARE(d->root().find("l")->asInt(), -256);
    QCOMPARE(d->root().entryCount(), std::size_t(4));
    QVERIFY(!d->root().find("missing"));
    // The list stored under "k" first went into the memo and was appended to afterwards.
    QCOMPARE(d->root().entryValue(0)[0].asInt(), 9);
}

void TestTrace::pickleRefusals_data()
{
    using namespace std::string_literals;
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");
    const auto row = [](const char* name, const std::string& bytes, const char* message) {
        QTest::newRow(name) << QByteArray(bytes.data(), qsizetype(bytes.size())) << QString::fromUtf8(message);
    };
    const char* notAllowed = " is not allowed: a memory snapshot holds only dicts, lists, strings and numbers";
    row("GLOBAL", "\x80\x02\x63os\nsystem\n."s, (std::string("test: byte 2: pickle opcode GLOBAL (0x63)") + notAllowed).c_str());
    row("STACK_GLOBAL", "\x80\x04\x8c\x02os\x8c\x06system\x93."s, "byte 14: pickle opcode STACK_GLOBAL (0x93) is not allowed");
    row("REDUCE", "\x80\x02N)R."s, "byte 4: pickle opcode REDUCE (0x52) is not allowed");
    row("BUILD", "\x80\x02}}b."s, "byte 4: pickle opcode BUILD (0x62) is not allowed");
    row("NEWOBJ", "\x80\x02N)\x81."s, "byte 4: pickle opcode NEWOBJ (0x81) is not allowed");
    row("INST", "\x80\x02(ios\nsystem\n."s, "byte 3: pickle opcode INST (0x69) is not allowed");
    row("OBJ", "\x80\x02(No."s, "byte 4: pickle opcode OBJ (0x6f) is not allowed");
    row("PERSID", "\x80\x02P1\n."s, "byte 2: pickle opcode PERSID (0x50) is not allowed");
    row("text INT", "\x80\x02I1\n."s, "byte 2: pickle opcode INT (0x49) is not supported");
    row("set", "\x80\x04\x8f."s, "byte 2: pickle opcode EMPTY_SET (0x8f) is not supported");
    row("not an opcode", "\x80\x02\xff"s, "byte 2: byte 0xff is not a pickle opcode");
    row("protocol 6", "\x80\x06N."s, "byte 0: pickle protocol 6 is newer than 5");
    row("truncated argument", "\x80\x02J\x01\x00"s, "byte 2: the pickle ends inside BININT (0x4a): it needs 4 more bytes, 2 remain");
    row("truncated string", "\x80\x02X\x05\x00\x00\x00" "ab"s, "byte 2: BINUNICODE (0x58) declares 5 bytes, but only 2 remain in the file");
    row("absurd length", "\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x7fx"s, "byte 2: BINUNICODE8 (0x8d) declares 9223372036854775807 bytes, but only 1 remain");
    row("absurd frame", "\x80\x04\x95\x00\x00\x00\x00\x01\x00\x00\x00N."s, "byte 2: FRAME declares 4294967296 bytes, but only 2 remain");
    row("no STOP", "\x80\x02N"s, "byte 3: the pickle ends without STOP");
    row("empty", ""s, "byte 0: the pickle ends without STOP (the file is empty)");
    row("stack underflow", "\x80\x02]a."s, "byte 3: APPEND (0x61) needs 1 value on the stack, finds 0");
    row("underflow past MARK", "\x80\x02](a."s, "byte 4: APPEND (0x61) needs 1 value on the stack, finds 0 above the last MARK");
    row("no MARK", "\x80\x02]e."s, "byte 3: APPENDS (0x65) needs a MARK before it, and there is none");
    row("bad memo index", "\x80\x02h\x05."s, "byte 2: BINGET (0x68) reads memo index 5, which was never stored");
    row("memo of nothing", "\x80\x04\x94."s, "byte 2: MEMOIZE (0x94) needs 1 value on the stack, finds 0");
    row("too big an int", "\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01."s,
        "byte 2: an integer of 9 bytes does not fit 64 bits");
    row("2^63", "\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00."s, "byte 2: an integer of 9 bytes does not fit 64 bits");
    row("odd SETITEMS", "\x80\x02}(K\x01u."s, "byte 6: SETITEMS (0x75) has an odd number of values (1)");
    row("list key", "\x80\x02}]K\x01s."s, "byte 6: a dict key is a list: a memory snapshot's keys are strings or integers");
    row("APPEND to a dict", "\x80\x02}K\x01" "a."s, "byte 5: APPEND (0x61) adds to a dict, not a list");
    row("two values at STOP", "\x80\x02NN."s, "byte 4: STOP with 2 values and 0 open MARKs");
    row("MARKs too deep", "\x80\x02"s + std::string(65, '('), "byte 66: MARKs nest deeper than 64 levels");
    row("lists too deep", "\x80\x02"s + std::string(70, ']') + std::string(69, 'a') + ".", "containers nest deeper than 64 levels");
    // A list that grows after it went into another: the insertion-time check cannot see the new
    // depth, the pass over the finished structure does. B = [A]; then A = [a chain 63 deep].
    row("deep through the memo", "\x80\x02]q\x00" "0"s + [] {
        std::string chain;
        for (int i = 0; i < 63; ++i)
            chain += "]h\x00" "aq\x00" "0"s;
        return chain;
    }() + "]q\x01" "0]h\x01" "ah\x01h\x00" "a0."s, "test: containers nest deeper than 64 levels (through memo references)");
    row("cycle", "\x80\x02]\x94h\x00" "a."s, "test: a container holds itself (through memo references)");
}

void TestTrace::pickleRefusals()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    const auto document = parsePickle(bytes.toStdString(), "test");
    QVERIFY(!document);
    QVERIFY2(QString::fromStdString(document.error().message).contains(message), document.error().message.c_str());
}

void TestTrace::gzipRefusals()
{
    const auto gz = readBytes(kSnapshots + "values_p4.pickle.gz");
    QVERIFY(isGzip(gz));
    const auto plain = gunzip(gz, 1 << 20, "v.gz");
    QVERIFY(plain);
    QCOMPARE(*plain, readBytes(kSnapshots + "values_p4.pickle"));
    const auto twice = gunzip(gz + gz, 1 << 20, "v.gz"); // concatenated members
    QVERIFY(twice);
    QCOMPARE(twice->size(), 2 * plain->size());
    const auto truncated = gunzip(gz.substr(0, gz.size() / 2), 1 << 20, "v.gz");
    QVERIFY(!truncated);
    QVERIFY2(truncated.error().message.find("truncated") != std::string::npos, truncated.error().message.c_str());
    auto corrupt = gz;
    corrupt[gz.size() - 6] = char(corrupt[gz.size() - 6] ^ 0x55); // the CRC-32
    const auto crc = gunzip(corrupt, 1 << 20, "v.gz");
    QVERIFY(!crc);
    QVERIFY2(crc.error().message.find("corrupt gzip data") != std::string::npos, crc.error().message.c_str());
    const auto bomb = gunzip(gz, 1000, "v.gz");
    QVERIFY(!bomb);
    QVERIFY2(bomb.error().message.find("decompresses to more than") != std::string::npos, bomb.error().message.c_str());
    const auto trailing = gunzip(gz + "junk", 1 << 20, "v.gz");
    QVERIFY(!trailing);
    QVERIFY2(trailing.error().message.find("not another gzip member") != std::string::npos, trailing.error().message.c_str());
}

void TestTrace::generatedSnapshotPeaks_data()
{
    QTest::addColumn<QString>("file");
    QTest::newRow("whole trace, an OOM") << QStringLiteral("generated.pickle");
    QTest::newRow("last 200 events, gzip, protocol 5") << QStringLiteral("window.pickle.gz");
}

// The replay against what the simulation counted on its own (scripts/make_snapshot.py).
void TestTrace::generatedSnapshotPeaks()
{
    QFETCH(QString, file);
    const auto name = file.toStdString();
    const auto want = expected(name);
    const auto trace = measure(name);
    QCOMPARE(trace.peakAllocated(), want["peak_allocated_bytes"].get<std::int64_t>());
    QCOMPARE(trace.peakReserved(), want["peak_reserved_bytes"].get<std::int64_t>());
    QCOMPARE(trace.allocations.size(), want["allocations"].get<std::size_t>());
    QCOMPARE(trace.eventCount, want["events"].get<int>());
    QCOMPARE(trace.ooms.size(), want["oom_events"].get<std::size_t>());
    QCOMPARE(trace.ranges.size() >= want["segments_at_end"].get<std::size_t>(), true);
    QCOMPARE(trace.problem.alignment, Bytes(512));
    // PyTorch's own placement passes the validator, and the curves bound each other.
    const auto measured = validatePlan(trace.problem, trace.measured);
    QVERIFY2(measured.ok(), measured.message.c_str());
    for (std::size_t s = 0; s < trace.allocated.size(); ++s)
        QVERIFY(trace.allocated[s] <= trace.reserved[s]);
    QVERIFY(trace.notes.empty() == (name == "generated.pickle")); // the window starts mid-run
    // As a workload for the views: the same problem, one region per segment range holding every allocation.
    const auto workload = traceWorkload(trace);
    QCOMPARE(workload.problem.buffers.size(), trace.allocations.size());
    QCOMPARE(workload.regions.size(), trace.ranges.size());
    int held = 0;
    for (const auto& region : workload.regions)
        held += region.tensorCount;
    QCOMPARE(std::size_t(held), trace.allocations.size());
    QVERIFY(validatePlan(workload.problem, trace.measured).ok());
    const auto replan = replanTrace(trace, *plannerByName(kDefaultPlanner));
    QVERIFY(replan);
    QCOMPARE(replan->lowerBound, trace.peakAllocated());
    QVERIFY(replan->plan.arenaSize >= replan->lowerBound);
    QVERIFY(replan->plan.arenaSize <= trace.peakReserved());
    QVERIFY(validatePlan(trace.problem, replan->plan).ok());
    // The largest live allocation at the peak is named by its Python frame, not the allocator's C++ one.
    const auto report = formatTraceReport(trace, *replan);
    QVERIFY2(report.find("model.py:") != std::string::npos, report.c_str());
    QVERIFY(report.find("CachingAllocator") == std::string::npos);
    const auto json = nlohmann::json::parse(traceReportJson(trace, *replan));
    QCOMPARE(json["peak_allocated_bytes"].get<std::int64_t>(), want["peak_allocated_bytes"].get<std::int64_t>());
    QCOMPARE(json["replanned_arena_bytes"].get<std::int64_t>(), replan->plan.arenaSize);

    // The annotated phases the simulation counted, nested train_step > forward, backward; the
    // allocated peak falls in a forward or backward phase (activations are freed in backward).
    QCOMPARE(trace.phases.size(), want["phases"].get<std::size_t>());
    QCOMPARE(json["phases"].size(), trace.phases.size());
    for (const auto& phase : json["phases"])
        QVERIFY(phase["duration_us"].get<std::int64_t>() > 0);
    bool peakInPhase = false;
    for (const auto& phase : trace.phases) {
        QVERIFY(phase.begin <= phase.end && phase.end <= Step(trace.eventCount));
        QCOMPARE(phase.depth, phase.name == "train_step" ? 0 : 1);
        if (phase.name != "train_step")
            peakInPhase = peakInPhase || (phase.begin <= trace.peakAllocatedStep && trace.peakAllocatedStep <= phase.end);
        if (phase.name != "train_step" && !phase.cut) // inside a train_step
            QVERIFY(std::any_of(trace.phases.begin(), trace.phases.end(), [&](const TracePhase& outer) {
                return outer.name == "train_step" && outer.begin <= phase.begin && phase.end <= outer.end;
            }));
    }
    QVERIFY(peakInPhase);
    QVERIFY2(report.find("phases (annotations") != std::string::npos, report.c_str());
    // Two streams (the simulation's main and side streams); the sites at the peak add up to it.
    QCOMPARE(json["streams"].size(), std::size_t(2));
    std::int64_t bySite = 0;
    for (const auto& site : json["sites_at_peak"])
        bySite += site["bytes"].get<std::int64_t>();
    QCOMPARE(bySite, trace.peakAllocated());
    QVERIFY2(report.find("streams:") != std::string::npos && report.find("by allocation site") != std::string::npos, report.c_str());
}

void TestTrace::everyPlannerReplans()
{
    const auto trace = measure("generated.pickle");
    for (const auto& planner : planners()) {
        const auto replan = replanTrace(trace, *planner);
        QVERIFY2(replan, replan ? "" : replan.error().message.c_str());
        QVERIFY(replan->plan.arenaSize >= replan->lowerBound);
        const auto check = validatePlan(trace.problem, replan->plan);
        QVERIFY2(check.ok(), (std::string(planner->name()) + ": " + check.message).c_str());
    }
}

void TestTrace::loadsAsWorkload_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("copyAs"); // the same bytes under another name: found by content
    QTest::newRow("pickle") << QStringLiteral("generated.pickle") << QString();
    QTest::newRow("pickle.gz") << QStringLiteral("window.pickle.gz") << QString();
    QTest::newRow("no extension") << QStringLiteral("generated.pickle") << QStringLiteral("snapshot");
    QTest::newRow("gzip, .dat") << QStringLiteral("window.pickle.gz") << QStringLiteral("snapshot.dat");
}

// loadWorkload reads a snapshot as `plan`, `render` and the Studio take it: the allocations as the
// problem, PyTorch's placement and reserved curve as Workload::recorded, the segments not as regions
// beside the arena (they are the recorded plan's arena).
void TestTrace::loadsAsWorkload()
{
    QFETCH(QString, file);
    QFETCH(QString, copyAs);
    std::string path = kSnapshots + file.toStdString();
    QTemporaryDir dir;
    if (!copyAs.isEmpty()) {
        const QString copy = dir.filePath(copyAs);
        QVERIFY(QFile::copy(QString::fromStdString(path), copy));
        path = copy.toStdString();
    }
    const auto want = expected(file.toStdString());
    auto workload = loadWorkload(path, {});
    QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
    QVERIFY(workload->recorded);
    QVERIFY(!workload->graph);
    QVERIFY(workload->regions.empty());
    QCOMPARE(lowerBound(workload->problem), want["peak_allocated_bytes"].get<std::int64_t>());
    const auto& reserved = workload->recorded->reserved;
    QCOMPARE(*std::max_element(reserved.begin(), reserved.end()), want["peak_reserved_bytes"].get<std::int64_t>());
    QCOMPARE(reserved.size(), std::size_t(workload->problem.steps));
    const auto check = validatePlan(workload->problem, workload->recorded->plan);
    QVERIFY2(check.ok(), check.message.c_str());
    QCOMPARE(workload->recorded->plan.offsets.size(), workload->problem.buffers.size());
    QCOMPARE(workload->recorded->marks.size(), want["oom_events"].get<std::size_t>());
    for (const auto& [step, what] : workload->recorded->marks) {
        QVERIFY(step > 0 && step < workload->problem.steps);
        QVERIFY2(what.starts_with("OOM: "), what.c_str());
    }
    const auto report = formatReport(*workload, workload->recorded->plan, 3);
    const auto reservedText = "reserved peak " + formatBytes(want["peak_reserved_bytes"].get<std::int64_t>());
    QVERIFY2(report.find("recorded by      PyTorch's caching allocator: " + reservedText) != std::string::npos, report.c_str());
}

void TestTrace::loadRefusals()
{
    // A refused snapshot names the file and the byte, as `memplan trace` does.
    const auto truncated = loadWorkload(kSnapshots + "truncated.pickle", {});
    QVERIFY(!truncated);
    QVERIFY2(truncated.error().message.find("truncated.pickle") != std::string::npos, truncated.error().message.c_str());
    QVERIFY2(truncated.error().message.find("byte") != std::string::npos, truncated.error().message.c_str());
    const auto outside = loadWorkload(kSnapshots + "outside_segment.pickle", {});
    QVERIFY(!outside);
    // Sizes are the allocator's own: --dim and --input-shape do not apply.
    LoadOptions sized;
    sized.bindings.dims["batch"] = 4;
    const auto withDims = loadWorkload(kSnapshots + "generated.pickle", sized);
    QVERIFY(!withDims);
    QVERIFY2(withDims.error().message.find("a memory snapshot has fixed sizes") != std::string::npos, withDims.error().message.c_str());
}

void TestTrace::csvRoundTrip()
{
    const auto trace = measure("window.pickle.gz");
    const auto csv = parseProblemCsv(exportProblemCsv(trace.problem, &trace.measured), "trace.csv");
    QVERIFY2(csv, csv ? "" : csv.error().message.c_str());
    QCOMPARE(csv->problem.buffers.size(), trace.problem.buffers.size());
    for (std::size_t i = 0; i < trace.problem.buffers.size(); ++i) {
        QCOMPARE(csv->problem.buffers[i].name, trace.problem.buffers[i].name);
        QVERIFY(csv->problem.buffers[i].lifetime == trace.problem.buffers[i].lifetime);
        QCOMPARE(csv->problem.buffers[i].size, trace.problem.buffers[i].size);
    }
    QCOMPARE(*csv->offsets, trace.measured.offsets);
    QCOMPARE(lowerBound(csv->problem), trace.peakAllocated());
    Plan given;
    given.offsets = *csv->offsets;
    given.arenaSize = trace.measured.arenaSize;
    QVERIFY(validatePlan(csv->problem, given).ok());
}

void TestTrace::edgeCaseFiles()
{
    const auto old = measure("segments_only.pickle");
    QVERIFY(!old.hasTrace);
    QCOMPARE(old.allocations.size(), std::size_t(3));
    QCOMPARE(old.peakAllocated(), Bytes(3.5 * (1 << 20)));
    QCOMPARE(old.peakReserved(), Bytes(4 << 20));
    QCOMPARE(old.fragmentationAtPeak(), Bytes(512 << 10));
    QCOMPARE(old.measured.offsets[2], Bytes(2 << 20)); // the second segment starts right after the first: gaps take no room

    const auto oom = measure("oom.pickle");
    QCOMPARE(oom.ooms.size(), std::size_t(1));
    QCOMPARE(oom.ooms[0].event, 2);
    QCOMPARE(oom.ooms[0].size, Bytes(6 << 20));
    QCOMPARE(oom.ooms[0].deviceFree, Bytes(512 << 10));
    QCOMPARE(oom.peakAllocated(), Bytes(1 << 20));

    const std::vector<std::pair<const char*, const char*>> refused {
        { "free_without_alloc.pickle", "free_without_alloc.pickle: device 0, event 3 (free_completed): frees 512 bytes at 0x7f0000000000, where no allocation is live: a free without an alloc" },
        { "outside_segment.pickle", "device 0, event 1 (alloc): 512 bytes at 0x7f0004000000 lie outside every segment" },
        { "block_without_size.pickle", "block_without_size.pickle: segment 0, block 1: 'size' is missing" },
        { "global_reduce.pickle", "global_reduce.pickle: byte 2: pickle opcode GLOBAL (0x63) is not allowed" },
        { "stack_global.pickle", "pickle opcode STACK_GLOBAL (0x93) is not allowed" },
        { "truncated.pickle", "truncated.pickle: byte 2: FRAME declares" },
        { "int_too_big.pickle", "does not fit 64 bits" },
        { "values_p4.pickle", "not a PyTorch memory snapshot" },
    };
    for (const auto& [file, message] : refused) {
        auto snapshot = loadSnapshot(kSnapshots + file);
        std::string error = snapshot ? "" : snapshot.error().message;
        if (snapshot) {
            const auto trace = measureTrace(*snapshot, file);
            error = trace ? "" : trace.error().message;
        }
        QVERIFY2(error.find(message) != std::string::npos, (std::string(file) + ": " + error).c_str());
    }
    const auto folder = loadSnapshot(kSnapshots);
    QVERIFY(!folder);
    QVERIFY(folder.error().message.find("not a memory snapshot file") != std::string::npos);
}

void TestTrace::replayRules()
{
    const std::int64_t base = 1 << 30;
    // A free_requested that never completes ends the allocation; one alloc stays live to the end.
    auto t = measureTrace(handMade({ traceEvent(TraceAction::Alloc, base, 512), traceEvent(TraceAction::Alloc, base + 512, 1024),
                                         traceEvent(TraceAction::FreeRequested, base, 512) }),
        "hand");
    QVERIFY(t);
    QCOMPARE(t->allocations[0].freeEvent, 2);
    QCOMPARE(t->allocations[1].freeEvent, -1);
    QVERIFY(t->problem.buffers[1].lifetime == (Lifetime { 2, 4 }));
    QCOMPARE(t->allocated, (std::vector<std::int64_t> { 0, 512, 1536, 1024 }));
    // The first event at an address is a free: the allocation was made before the trace.
    t = measureTrace(handMade({ traceEvent(TraceAction::FreeCompleted, base, 4096) }), "hand");
    QVERIFY(t);
    QCOMPARE(t->allocations[0].allocEvent, -1);
    QCOMPARE(t->allocated, (std::vector<std::int64_t> { 4096, 0 }));
    QCOMPARE(t->notes.size(), std::size_t(1));
    // Refusals, each naming its event.
    const auto refusal = [&](std::vector<TraceEvent> events) {
        const auto r = measureTrace(handMade(std::move(events)), "hand");
        return r ? std::string("accepted") : r.error().message;
    };
    const auto has = [](const std::string& text, const char* part) {
        if (text.find(part) == std::string::npos)
            qWarning("%s", text.c_str());
        return text.find(part) != std::string::npos;
    };
    QVERIFY(has(refusal({ traceEvent(TraceAction::Alloc, base, 512), traceEvent(TraceAction::Alloc, base, 512) }),
        "hand: device 0, event 1 (alloc): alloc at 0x40000000 while the allocation of event 0 there is still live"));
    QVERIFY(has(refusal({ traceEvent(TraceAction::Alloc, base, 512), traceEvent(TraceAction::FreeCompleted, base, 1024) }),
        "event 1 (free_completed): frees 1024 bytes at 0x40000000, but the allocation there (event 0) has 512"));
    QVERIFY(has(refusal({ traceEvent(TraceAction::Alloc, base, 1024), traceEvent(TraceAction::Alloc, base + 512, 512) }),
        "hand: device 0: the snapshot places allocations live at the same time at overlapping addresses"));
    QVERIFY(has(refusal({ traceEvent(TraceAction::Alloc, base + (2 << 20) - 512, 1024) }), "event 0 (alloc): 1024 bytes at 0x401ffe00 lie outside every segment"));
    // A segment freed in the trace counts from step 0; an OOM is listed, not refused.
    t = measureTrace(handMade({ traceEvent(TraceAction::SegmentFree, base + (4 << 20), 2 << 20), traceEvent(TraceAction::Oom, 0, 1 << 30) }), "hand");
    QVERIFY(t);
    QCOMPARE(t->reserved, (std::vector<std::int64_t> { 4 << 20, 2 << 20, 2 << 20 }));
    QCOMPARE(t->peakReservedStep, Step(0));
    QCOMPARE(t->ooms.size(), std::size_t(1));
    // --device for a device the snapshot does not have.
    const auto missing = measureTrace(handMade({}), "hand", 3);
    QVERIFY(!missing);
    QVERIFY(has(missing.error().message, "hand: no device 3"));
}

// Annotations on the event axis: by time, END closing the latest START of its name, cut at the
// trace's ends, other devices and untimed ones left out with a note; a non-dict one is refused.
void TestTrace::annotationPhases()
{
    std::vector<TraceEvent> events;
    for (std::int64_t t : { 10, 20, 30, 40 }) {
        events.push_back(traceEvent(TraceAction::Alloc, t << 10, 512));
        events.back().timeUs = t;
    }
    const auto at = [](const char* name, const char* stage, std::int64_t time, int device = 0) {
        return SnapshotAnnotation { device, time, name, stage, "" };
    };
    const auto placed = placeAnnotations({ at("outer", "START", 15), at("inner", "START", 25), at("inner", "END", 35), at("outer", "END", 45),
                                             at("gone", "START", 1), at("gone", "END", 5), at("late", "END", 22), at("open", "START", 30),
                                             at("mark", "", 20), at("elsewhere", "START", 12, 1), at("untimed", "START", -1) },
        events, 0);
    const auto find = [&](const std::string& name) -> const TracePhase* {
        for (const auto& p : placed.phases)
            if (p.name == name)
                return &p;
        return nullptr;
    };
    QCOMPARE(placed.phases.size(), std::size_t(5)); // outer, inner, late, open, mark
    QVERIFY(find("outer") && find("outer")->begin == 1 && find("outer")->end == 4 && find("outer")->depth == 0 && !find("outer")->cut);
    QVERIFY(find("inner") && find("inner")->begin == 2 && find("inner")->end == 3 && find("inner")->depth == 1);
    QVERIFY(find("late") && find("late")->begin == 0 && find("late")->end == 2 && find("late")->cut); // its START is not in the trace
    QVERIFY(find("open") && find("open")->begin == 3 && find("open")->end == 4 && find("open")->cut); // never ended
    QVERIFY(find("mark") && find("mark")->begin == 2 && find("mark")->end == 2); // at the event's time: after it
    QVERIFY(!find("gone") && !find("elsewhere") && !find("untimed"));
    QCOMPARE(placed.notes.size(), std::size_t(2));
    QCOMPARE(placed.phases.front().name, std::string("late")); // by begin
    QVERIFY(find("outer")->startUs == 15 && find("outer")->endUs == 45);
    QVERIFY(find("late")->startUs == 10 && find("late")->endUs == 22);  // from the first event
    QVERIFY(find("open")->startUs == 30 && find("open")->endUs == 40);  // to the last
    QCOMPARE(stepSeconds(events), (std::vector<float> { 0.0f, 0.0f, 10e-6f, 20e-6f, 30e-6f }));
    QCOMPARE(phasePeak(*find("inner"), { 0, 5, 9, 7, 1 }), std::int64_t(9));
    QCOMPARE(phasePeak(*find("mark"), { 0, 5, 9, 7, 1 }), std::int64_t(9));
    // Events without times: nothing can be placed.
    for (auto& e : events)
        e.timeUs = -1;
    const auto untimed = placeAnnotations({ at("outer", "START", 15) }, events, 0);
    QVERIFY(untimed.phases.empty());
    QVERIFY(untimed.notes.size() == 1 && untimed.notes[0].find("no times") != std::string::npos);
    QVERIFY(stepSeconds(events).empty());
    // {'external_annotations': [1], 'segments': []} at protocol 2: the annotation is refused by index.
    const std::string bytes = std::string("\x80\x02}(X\x14\x00\x00\x00" "external_annotations]K\x01" "aX\x08\x00\x00\x00" "segments]u.", 49);
    const auto document = parseOrFail(bytes);
    QVERIFY(document);
    const auto refused = snapshotFromPickle(document->root(), "annotated.pickle");
    QVERIFY(!refused);
    QCOMPARE(QString::fromStdString(refused.error().message), QStringLiteral("annotated.pickle: annotation 0: is a int, not a dict"));
}

// The committed snapshots are what the generator writes: the same bytes again, from its fixed seed.
void TestTrace::generatorIsDeterministic()
{
    const auto python = QStandardPaths::findExecutable(QStringLiteral("python3"));
    if (python.isEmpty())
        QSKIP("no python3: the generator's determinism is not checked");
    QTemporaryDir dir;
    const auto script = QStringLiteral(MEMPLAN_SOURCE_DIR "/scripts/make_snapshot.py");
    const auto out = dir.filePath(QStringLiteral("generated.pickle"));
    const auto run = runProgram(python, { script, out, QStringLiteral("--oom-at"), QStringLiteral("1"), QStringLiteral("--capacity-mib"), QStringLiteral("600") });
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QCOMPARE(readBytes(out.toStdString()), readBytes(kSnapshots + "generated.pickle"));
    QCOMPARE(readBytes(out.toStdString() + ".expected.json"), readBytes(kSnapshots + "generated.pickle.expected.json"));
    const auto edges = runProgram(python, { script, QStringLiteral("--edge-cases"), dir.path() });
    QVERIFY2(edges.exitCode == 0, qPrintable(edges.err));
    for (const char* file : { "oom.pickle", "segments_only.pickle", "values_p5.pickle", "values_p4.pickle.gz" })
        QCOMPARE(readBytes(dir.filePath(QLatin1String(file)).toStdString()), readBytes(kSnapshots + file));
}

// A large snapshot (scripts/make_large_snapshot.py, which streams its opcodes): read whole, its
// numbers are the generator's; loading reports each stage with fractions in [0, 1] that never fall;
// a cancel during the load ends it with ErrorCode::Cancelled and a message that says so.
void TestTrace::largeSnapshotProgressAndCancel()
{
    const auto python = QStandardPaths::findExecutable(QStringLiteral("python3"));
    if (python.isEmpty())
        QSKIP("no python3: the large-snapshot generator cannot run");
    QTemporaryDir dir;
    const auto out = dir.filePath(QStringLiteral("large.pickle.gz"));
    const auto run = runProgram(python, { QStringLiteral(MEMPLAN_SOURCE_DIR "/scripts/make_large_snapshot.py"), out,
                                            QStringLiteral("--events"), QStringLiteral("150000"), QStringLiteral("--gzip") });
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const auto numbers = nlohmann::json::parse(readBytes(out.toStdString() + ".expected.json"));

    std::map<std::string, std::vector<double>> heard;
    core::LoadOptions options;
    options.progress.report = [&heard](std::string_view stage, double fraction) { heard[std::string(stage)].push_back(fraction); };
    const auto w = core::loadWorkload(out.toStdString(), options);
    QVERIFY2(w, w ? "" : w.error().message.c_str());
    QVERIFY(w->recorded);
    QCOMPARE(std::int64_t(w->problem.buffers.size()), numbers["allocations"].get<std::int64_t>());
    QCOMPARE(std::int64_t(w->problem.steps), numbers["events"].get<std::int64_t>() + 1);
    QCOMPARE(core::lowerBound(w->problem), numbers["peak_allocated_bytes"].get<std::int64_t>());
    QVERIFY(core::validatePlan(w->problem, w->recorded->plan).ok());
    for (const char* stage : { "reading the file", "decompressing", "parsing the pickle", "reading the events", "replaying the events" }) {
        QVERIFY2(heard.count(stage), stage);
        const auto& fractions = heard[stage];
        for (std::size_t i = 0; i < fractions.size(); ++i) {
            QVERIFY(fractions[i] >= 0 && fractions[i] <= 1);
            QVERIFY(i == 0 || fractions[i] >= fractions[i - 1]);
        }
    }
    QVERIFY(heard["parsing the pickle"].size() >= 3); // a report every 65536 opcodes
    QVERIFY(heard["replaying the events"].size() >= 2);

    // Cancelled in each stage that checks: the load stops there, saying so.
    for (const char* stage : { "parsing the pickle", "reading the events", "replaying the events" }) {
        auto flag = std::make_shared<std::atomic<bool>>(false);
        core::LoadOptions cancelled;
        cancelled.progress.cancel = core::CancelToken(flag);
        cancelled.progress.report = [&flag, stage](std::string_view now, double) {
            if (now == stage)
                flag->store(true);
        };
        const auto stopped = core::loadWorkload(out.toStdString(), cancelled);
        QVERIFY2(!stopped, stage);
        QCOMPARE(stopped.error().code, core::ErrorCode::Cancelled);
        QVERIFY2(stopped.error().message.find("cancelled") != std::string::npos, stopped.error().message.c_str());
    }
}

void TestTrace::cliReport()
{
    QTemporaryDir dir;
    const auto json = dir.filePath(QStringLiteral("t.json")), csv = dir.filePath(QStringLiteral("t.csv"));
    const auto file = QString::fromStdString(kSnapshots + "generated.pickle");
    const auto run = memplan({ QStringLiteral("trace"), file, QStringLiteral("--json"), json, QStringLiteral("--csv"), csv,
        QStringLiteral("--replan"), QStringLiteral("greedy-by-size") });
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.out.contains(QStringLiteral("PyTorch reserved 240 MiB; allocations live at once never exceeded 189 MiB")), qPrintable(run.out));
    QVERIFY(run.out.contains(QStringLiteral("event 182: a request of 600 MiB failed")));
    QVERIFY(run.out.contains(QStringLiteral("greedy-by-size")));
    const auto report = nlohmann::json::parse(readBytes(json.toStdString()));
    const auto want = expected("generated.pickle");
    QCOMPARE(report["peak_allocated_bytes"].get<std::int64_t>(), want["peak_allocated_bytes"].get<std::int64_t>());
    QCOMPARE(report["peak_reserved_bytes"].get<std::int64_t>(), want["peak_reserved_bytes"].get<std::int64_t>());
    QCOMPARE(report["lower_bound_bytes"].get<std::int64_t>(), want["peak_allocated_bytes"].get<std::int64_t>());
    QVERIFY(report["replanned_arena_bytes"].get<std::int64_t>() >= report["lower_bound_bytes"].get<std::int64_t>());
    QCOMPARE(report["allocations"].get<std::int64_t>(), want["allocations"].get<std::int64_t>());
    QCOMPARE(report["events"].get<std::int64_t>(), want["events"].get<std::int64_t>());
    const auto problem = importProblemCsv(csv.toStdString());
    QVERIFY2(problem, problem ? "" : problem.error().message.c_str());
    QCOMPARE(lowerBound(problem->problem), want["peak_allocated_bytes"].get<std::int64_t>());
    // The CSV plans as any allocation problem.
    const auto plan = memplan({ QStringLiteral("plan"), csv });
    QVERIFY2(plan.exitCode == 0, qPrintable(plan.err));

    const auto diff = memplan({ QStringLiteral("trace"), file, QString::fromStdString(kSnapshots + "window.pickle.gz"), QStringLiteral("--json"), json });
    QVERIFY2(diff.exitCode == 0, qPrintable(diff.err));
    QVERIFY(diff.out.contains(QStringLiteral("B - A: peak allocated +")));
    QVERIFY(diff.out.contains(QStringLiteral("model.py:170 block7.forward")));
    const auto delta = nlohmann::json::parse(readBytes(json.toStdString()));
    QCOMPARE(delta["b"]["peak_allocated_bytes"].get<std::int64_t>(), expected("window.pickle.gz")["peak_allocated_bytes"].get<std::int64_t>());
    std::int64_t previous = INT64_MAX;
    for (const auto& site : delta["sites"]) { // largest change first
        const auto change = std::llabs(site["change_bytes"].get<std::int64_t>());
        QVERIFY(change <= previous);
        previous = change;
    }
}

void TestTrace::cliExitCodes()
{
    const auto file = QString::fromStdString(kSnapshots + "generated.pickle");
    const auto trace = [](QStringList args) {
        args.prepend(QStringLiteral("trace"));
        return memplan(args);
    };
    QCOMPARE(trace({ QStringLiteral("--help") }).exitCode, 0);
    QVERIFY(trace({ QStringLiteral("--help") }).out.contains(QStringLiteral("_dump_snapshot")));
    QCOMPARE(trace({}).exitCode, 2);
    QCOMPARE(trace({ file, file, file }).exitCode, 2);
    QCOMPARE(trace({ file, QStringLiteral("--replan"), QStringLiteral("nope") }).exitCode, 2);
    QCOMPARE(trace({ file, file, QStringLiteral("--csv"), QStringLiteral("x.csv") }).exitCode, 2);
    QCOMPARE(trace({ file, QStringLiteral("--device"), QStringLiteral("x") }).exitCode, 2);
    QCOMPARE(trace({ file, QStringLiteral("--bogus") }).exitCode, 2);
    const auto missing = trace({ QStringLiteral("/nonexistent.pickle") });
    QCOMPARE(missing.exitCode, 1);
    QVERIFY(missing.err.contains(QStringLiteral("no such file")));
    const auto hostile = trace({ QString::fromStdString(kSnapshots + "global_reduce.pickle") });
    QCOMPARE(hostile.exitCode, 1);
    QVERIFY2(hostile.err.contains(QStringLiteral("byte 2: pickle opcode GLOBAL (0x63) is not allowed")), qPrintable(hostile.err));
    const auto device = trace({ file, QStringLiteral("--device"), QStringLiteral("5") });
    QCOMPARE(device.exitCode, 1);
    QVERIFY(device.err.contains(QStringLiteral("no device 5")));
    const auto devNull = trace({ QStringLiteral("/dev/zero") });
    QCOMPARE(devNull.exitCode, 1);
}

QTEST_GUILESS_MAIN(TestTrace)
#include "tst_trace.moc"
