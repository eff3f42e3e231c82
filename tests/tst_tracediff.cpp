// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// `memplan trace A B`: the aligned axis and the peak explanation of two sides (core/trace/tracediff.h).
// A snapshot replayed from a plan (scripts/make_snapshot.py --replay-plan) against that plan, a
// snapshot against itself, snapshots of other scales and seeds, the bounded diff's fallback on a large
// input, and the command line's refusals.
#include "clirun.h"

#include "io/workload.h"
#include "planners/metrics.h"
#include "planners/validate.h"
#include "trace/tracediff.h"
#include "trace/tracereport.h"

#include <QElapsedTimer>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <random>
#include <sstream>

using namespace core;

namespace {
const std::string kSource = MEMPLAN_SOURCE_DIR;
const std::string kSnapshots = kSource + "/tests/data/snapshots/";

std::string readText(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

const Planner& defaultPlanner() { return *plannerByName(std::string(kDefaultPlanner)); }

DiffSide sideOf(const std::string& spec)
{
    auto side = loadDiffSide(spec, std::nullopt, defaultPlanner());
    if (!side)
        qFatal("%s", side.error().message.c_str());
    return std::move(*side);
}

// A model's side, its plan made again here and checked by the validator (planValidated).
DiffSide plannedAndValidated(const std::string& spec)
{
    const auto workload = loadWorkload(spec, LoadOptions {});
    if (!workload)
        qFatal("%s", workload.error().message.c_str());
    const auto plan = planValidated(workload->problem, spec, defaultPlanner());
    if (!plan)
        qFatal("%s", plan.error().message.c_str());
    if (!validatePlan(workload->problem, plan->plan).ok())
        qFatal("invalid plan");
    auto side = plannedSide(*workload, defaultPlanner());
    if (!side)
        qFatal("%s", side.error().message.c_str());
    if (side->heldPeak != plan->plan.arenaSize || side->peak != plan->lowerBound)
        qFatal("the side's arena or peak is not its plan's");
    return std::move(*side);
}

// The axis is monotone, spans A's steps and is as long as B's; the curves are on it; the rows add up.
void checkDiff(const TraceDiff& d)
{
    const auto& at = d.alignment.aStepAt;
    QCOMPARE(at.size(), std::max<std::size_t>(d.b.live.size(), 1));
    QCOMPARE(at.front(), 0.0);
    if (at.size() > 1)
        QCOMPARE(at.back(), double(std::max<std::size_t>(d.a.live.size(), 1) - 1));
    for (std::size_t s = 1; s < at.size(); ++s)
        QVERIFY2(at[s] >= at[s - 1], qPrintable(QStringLiteral("step %1").arg(s)));
    for (std::size_t p = 1; p < d.alignment.pairs.size(); ++p) {
        QVERIFY(d.alignment.pairs[p].first > d.alignment.pairs[p - 1].first);
        QVERIFY(d.alignment.pairs[p].second > d.alignment.pairs[p - 1].second);
    }
    QCOMPARE(d.aLive.size(), at.size());
    QCOMPARE(d.bLive.size(), at.size());
    // Each B step shows the most A held over its A steps: A's peak shows whole.
    QCOMPARE(*std::max_element(d.aLive.begin(), d.aLive.end()), d.a.peak);
    QCOMPARE(*std::max_element(d.bLive.begin(), d.bLive.end()), d.b.peak);
    Bytes sum = 0;
    for (const auto& row : d.explanation) {
        QVERIFY(row.bytes != 0);
        sum += row.bytes;
    }
    QCOMPARE(sum, d.peakChange());
    QCOMPARE(d.unexplained(), Bytes(0));
    Bytes aSites = 0, bSites = 0, aCategories = 0, bCategories = 0;
    for (const auto& row : d.sites) {
        aSites += row.a;
        bSites += row.b;
    }
    for (const auto& row : d.categories) {
        aCategories += row.a;
        bCategories += row.b;
    }
    QCOMPARE(aSites, d.a.peak);
    QCOMPARE(bSites, d.b.peak);
    QCOMPARE(aCategories, d.a.peak);
    QCOMPARE(bCategories, d.b.peak);
}

Bytes explained(const TraceDiff& d, PeakCause cause)
{
    Bytes sum = 0;
    for (const auto& row : d.explanation)
        sum += row.cause == cause ? row.bytes : 0;
    return sum;
}

QString python() { return QStandardPaths::findExecutable(QStringLiteral("python3")); }
const QString kGenerator = QStringLiteral(MEMPLAN_SOURCE_DIR "/scripts/make_snapshot.py");

// A snapshot of `spec`'s plan, replayed through the allocator simulation; empty on failure.
QString replayedSnapshot(const QTemporaryDir& dir, const QString& spec)
{
    const auto plan = dir.filePath(QStringLiteral("plan.json")), out = dir.filePath(QStringLiteral("replay.pickle"));
    const auto planned = memplan({ QStringLiteral("plan"), spec, QStringLiteral("--json"), plan });
    if (planned.exitCode != 0) {
        qWarning("%s", qPrintable(planned.err));
        return {};
    }
    const auto run = runProgram(python(), { kGenerator, out, QStringLiteral("--replay-plan"), plan });
    if (run.exitCode != 0) {
        qWarning("%s", qPrintable(run.err));
        return {};
    }
    return out;
}
} // namespace

class TestTraceDiff : public QObject {
    Q_OBJECT
private slots:
    void replayedPlanAligns_data();
    void replayedPlanAligns();
    void snapshotAgainstItself();
    void planAgainstItself();
    void scaledAndReseeded_data();
    void scaledAndReseeded();
    void explanationRows();
    void boundedFallback();
    void proportionalWhenNothingMatches();
    void cliDiff();
    void cliRefusals();
};

void TestTraceDiff::replayedPlanAligns_data()
{
    QTest::addColumn<QString>("spec");
    QTest::newRow("captured_mlp") << QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/data/captured_mlp.json");
    QTest::newRow("unet") << QStringLiteral("example:unet");
}

// The plan replayed by the allocator simulation lines up with the plan: nearly every allocation
// matched, the peaks apart by no more than the 512-byte rounding of the buffers live at the plan's
// peak, the rounding row carrying that, and the aligned peaks at the same moment.
void TestTraceDiff::replayedPlanAligns()
{
    QFETCH(QString, spec);
    if (python().isEmpty())
        QSKIP("no python3: the snapshot cannot be replayed");
    QTemporaryDir dir;
    const auto snapshot = replayedSnapshot(dir, spec);
    QVERIFY(!snapshot.isEmpty());
    const auto diff = diffTraces(plannedAndValidated(spec.toStdString()), sideOf(snapshot.toStdString()));
    checkDiff(diff);
    QVERIFY(diff.alignment.keysCompared);
    QCOMPARE(diff.alignment.method, AlignMethod::Exact);
    QVERIFY2(diff.alignment.matchedFraction(diff.a.allocations.size(), diff.b.allocations.size()) >= 0.95, diff.alignment.summary.c_str());
    QCOMPARE(diff.a.allocations.size(), diff.b.allocations.size());
    const auto liveAtPeak = liveAt(loadWorkload(spec.toStdString(), {})->problem, diff.a.peakStep).size();
    QVERIFY(diff.peakChange() >= 0);
    QVERIFY2(diff.peakChange() <= Bytes(512 * liveAtPeak), qPrintable(QString::number(diff.peakChange())));
    QCOMPARE(explained(diff, PeakCause::OnlyInA), Bytes(0));
    QCOMPARE(explained(diff, PeakCause::OnlyInB), Bytes(0));
    QCOMPARE(explained(diff, PeakCause::Rounding), diff.peakChange());
    // B's peak is the snapshot's event after the plan's peak step's last allocation: on the axis A's
    // peak falls within the events of that step.
    QVERIFY2(std::abs(diff.aPeakOnAxis - diff.b.peakStep) <= 2 * Step(liveAtPeak) + 2,
        qPrintable(QStringLiteral("A's peak at %1, B's at %2").arg(diff.aPeakOnAxis).arg(diff.b.peakStep)));
    // Every category of the plan is there, with what the snapshot holds of it.
    for (const auto& row : diff.categories)
        QVERIFY2(row.aCount == row.bCount, row.name.c_str());
}

// A snapshot against itself: every allocation matched exactly, both curves the same, nothing to explain.
void TestTraceDiff::snapshotAgainstItself()
{
    const auto side = sideOf(kSnapshots + "generated.pickle");
    const auto diff = diffTraces(side, side);
    checkDiff(diff);
    QCOMPARE(diff.alignment.method, AlignMethod::Exact);
    QCOMPARE(diff.alignment.pairs.size(), side.allocations.size());
    QCOMPARE(diff.alignment.exactPairs, int(side.allocations.size()));
    QVERIFY(diff.explanation.empty());
    QCOMPARE(diff.peakChange(), Bytes(0));
    QVERIFY(diff.aLive == diff.bLive);
    QVERIFY(diff.aHeld == diff.bHeld);
    for (std::size_t s = 0; s < diff.alignment.aStepAt.size(); ++s)
        QCOMPARE(diff.alignment.aStepAt[s], double(s));
    for (const auto& row : diff.sites)
        QCOMPARE(row.change(), Bytes(0));
    for (const auto& row : diff.categories)
        QCOMPARE(row.change(), Bytes(0));
    QVERIFY(formatTraceDiff(diff).find("nothing: the same allocations are live at both peaks") != std::string::npos);
}

// A plan against itself: tensor names match, nothing differs; its categories are the captured ones.
void TestTraceDiff::planAgainstItself()
{
    const auto side = plannedAndValidated(kSource + "/tests/data/captured_mlp.json");
    const auto diff = diffTraces(side, side);
    checkDiff(diff);
    QVERIFY(diff.alignment.keysCompared);
    QCOMPARE(diff.alignment.exactPairs, int(side.allocations.size()));
    QVERIFY(diff.explanation.empty());
    QVERIFY(diff.aLive == diff.bLive);
    bool saved = false;
    for (const auto& row : diff.categories) {
        QCOMPARE(row.change(), Bytes(0));
        saved = saved || row.name == "saved";
    }
    QVERIFY(saved);
    QVERIFY(formatTraceDiff(diff).find("of the held change, 0 B is room held beyond the live peak") != std::string::npos);
}

void TestTraceDiff::scaledAndReseeded_data()
{
    QTest::addColumn<QStringList>("a");
    QTest::addColumn<QStringList>("b");
    QTest::newRow("scale 1 -> 1.5") << QStringList {} << QStringList { QStringLiteral("--scale"), QStringLiteral("1.5") };
    QTest::newRow("scale 1.5 -> 1") << QStringList { QStringLiteral("--scale"), QStringLiteral("1.5") } << QStringList {};
    QTest::newRow("seed 1 -> 2") << QStringList {} << QStringList { QStringLiteral("--seed"), QStringLiteral("2") };
    QTest::newRow("4 -> 6 layers") << QStringList { QStringLiteral("--layers"), QStringLiteral("4") }
                                  << QStringList { QStringLiteral("--layers"), QStringLiteral("6") };
}

// Two generated snapshots: the peak change has the sign and size the generator counted, the rows add
// up to it, and the allocations are matched by site (the same frames) whatever their sizes.
void TestTraceDiff::scaledAndReseeded()
{
    QFETCH(QStringList, a);
    QFETCH(QStringList, b);
    if (python().isEmpty())
        QSKIP("no python3: the snapshots cannot be generated");
    QTemporaryDir dir;
    const auto make = [&](const QString& name, QStringList args) {
        const auto out = dir.filePath(name);
        args.prepend(out);
        args.prepend(kGenerator);
        const auto run = runProgram(python(), args);
        if (run.exitCode != 0)
            qFatal("%s", qPrintable(run.err));
        return out.toStdString();
    };
    const auto fileA = make(QStringLiteral("a.pickle"), a), fileB = make(QStringLiteral("b.pickle"), b);
    const auto wantA = nlohmann::json::parse(readText(fileA + ".expected.json"))["peak_allocated_bytes"].get<Bytes>();
    const auto wantB = nlohmann::json::parse(readText(fileB + ".expected.json"))["peak_allocated_bytes"].get<Bytes>();
    const auto diff = diffTraces(sideOf(fileA), sideOf(fileB));
    checkDiff(diff);
    QCOMPARE(diff.a.peak, wantA);
    QCOMPARE(diff.b.peak, wantB);
    QCOMPARE(diff.peakChange(), wantB - wantA);
    QVERIFY(diff.peakChange() != 0);
    QVERIFY(diff.alignment.keysCompared);
    QVERIFY2(diff.alignment.matchedFraction(diff.a.allocations.size(), diff.b.allocations.size()) >= 0.6, diff.alignment.summary.c_str());
    // The largest row goes the way of the change.
    QVERIFY(!diff.explanation.empty());
    QVERIFY((diff.explanation.front().bytes > 0) == (diff.peakChange() > 0));
}

namespace {
struct Hand {
    Step start, end;
    Bytes size;
    const char* key;
};
// A measured side made by hand: its allocations (in order of birth) and the curve they make.
DiffSide handSide(const std::string& name, const std::vector<Hand>& list)
{
    DiffSide side;
    side.source = name;
    side.measured = true;
    PlanProblem problem;
    for (const auto& h : list) {
        problem.steps = std::max(problem.steps, h.end);
        problem.buffers.push_back(Buffer { h.key, { h.start, h.end }, h.size });
        side.allocations.push_back({ { h.start, h.end }, h.size, h.key, h.key, h.key, "", int(side.allocations.size()) });
    }
    side.live = liveBytesCurve(problem);
    side.held = side.live;
    side.peakStep = peakStep(problem);
    side.peak = lowerBound(problem);
    side.heldPeak = side.peak;
    return side;
}
} // namespace

// Each cause on a case made for it: the rows name it with the bytes it makes.
void TestTraceDiff::explanationRows()
{
    // A peaks at step 2 with y and z (6 KiB); in B, x lives two steps longer and w is new.
    const auto a = handSide("a", { { 0, 2, 1024, "x" }, { 1, 4, 2048, "y" }, { 2, 3, 4096, "z" } });
    const auto b = handSide("b", { { 0, 4, 1024, "x" }, { 1, 4, 2048, "y" }, { 2, 3, 4096, "z" }, { 2, 3, 512, "w" } });
    const auto diff = diffTraces(a, b);
    checkDiff(diff);
    QCOMPARE(diff.peakChange(), Bytes(1024 + 512));
    QCOMPARE(explained(diff, PeakCause::LongerInB), Bytes(1024));
    QCOMPARE(explained(diff, PeakCause::OnlyInB), Bytes(512));
    QCOMPARE(diff.explanation.front().cause, PeakCause::LongerInB); // largest first

    // z grows to 5 KiB in B (matched by name at another size) and y is gone.
    const auto c = handSide("c", { { 0, 2, 1024, "x" }, { 2, 3, 5120, "z" } });
    const auto resized = diffTraces(a, c);
    checkDiff(resized);
    QCOMPARE(explained(resized, PeakCause::Resized), Bytes(1024));
    QCOMPARE(explained(resized, PeakCause::OnlyInA), Bytes(-2048));

    // A peaks at step 1 (x and y), B at step 2 where its z is four times as large: y was live at B's
    // moment of A's peak, z at A's moment of B's: the peaks fall at other moments, -4 KiB + 8 KiB.
    const auto e = handSide("e", { { 0, 3, 1024, "x" }, { 1, 2, 4096, "y" }, { 2, 3, 2048, "z" } });
    const auto f = handSide("f", { { 0, 3, 1024, "x" }, { 1, 2, 4096, "y" }, { 2, 3, 8192, "z" } });
    const auto moved = diffTraces(e, f);
    checkDiff(moved);
    QCOMPARE(moved.a.peakStep, Step(1));
    QCOMPARE(moved.b.peakStep, Step(2));
    QCOMPARE(moved.alignment.pairs.size(), std::size_t(3));
    QCOMPARE(explained(moved, PeakCause::PeakMoment), Bytes(8192 - 4096));
    QCOMPARE(moved.explanation.size(), std::size_t(1));
}

// Two long sequences that differ almost everywhere: the exact diff gives up at its bound, the greedy
// scan matches instead, and the summary says so; the work stays bounded.
void TestTraceDiff::boundedFallback()
{
    std::mt19937 rng(7);
    const auto synthetic = [&](const std::string& name, int count) {
        DiffSide side;
        side.source = name;
        side.measured = true;
        PlanProblem problem;
        problem.steps = count + 1;
        for (int i = 0; i < count; ++i) {
            const Step start = i;
            const Step end = std::min<Step>(count + 1, start + 1 + Step(rng() % 50));
            const Bytes size = Bytes(512 * (1 + rng() % 64));
            problem.buffers.push_back(Buffer { "b" + std::to_string(i), { start, end }, size });
            const auto site = "site" + std::to_string(rng() % 16);
            side.allocations.push_back({ { start, end }, size, site, site, site, "", i });
        }
        side.live = liveBytesCurve(problem);
        side.held = side.live;
        side.peakStep = peakStep(problem);
        side.peak = lowerBound(problem);
        return side;
    };
    const auto a = synthetic("a", 40000), b = synthetic("b", 40000);
    QElapsedTimer timer;
    timer.start();
    const auto diff = diffTraces(a, b);
    const auto ms = timer.elapsed();
    qInfo("40000 x 40000 allocations: %s in %lld ms", diff.alignment.summary.c_str(), static_cast<long long>(ms));
    checkDiff(diff);
    QVERIFY(diff.alignment.method != AlignMethod::Exact);
    QVERIFY(diff.alignment.summary.find("passed its bound") != std::string::npos);
    QVERIFY(formatTraceDiff(diff).find("passed its bound") != std::string::npos);
    QVERIFY2(ms < 20000, qPrintable(QString::number(ms)));

    // The same bound, lowered, on a real snapshot against a rescaled one: still a monotone axis.
    AlignOptions tight;
    tight.maxEdits = 4;
    const auto small = diffTraces(sideOf(kSnapshots + "generated.pickle"), sideOf(kSnapshots + "window.pickle.gz"), tight);
    checkDiff(small);
    QVERIFY(small.alignment.method != AlignMethod::Exact);
}

// Sides with nothing in common: the axis is proportional, the report says so, and the rows are the
// unmatched allocations, adding up to the change.
void TestTraceDiff::proportionalWhenNothingMatches()
{
    const auto a = plannedAndValidated(kSource + "/tests/data/tiny_graph.json");
    const auto b = sideOf(kSnapshots + "generated.pickle");
    const auto diff = diffTraces(a, b);
    checkDiff(diff);
    QCOMPARE(diff.alignment.method, AlignMethod::Proportional);
    QVERIFY(diff.alignment.summary.find("purely proportional") != std::string::npos);
    QVERIFY(formatTraceDiff(diff).find("share almost no allocations") != std::string::npos);
    QCOMPARE(explained(diff, PeakCause::OnlyInB) + explained(diff, PeakCause::OnlyInA), diff.peakChange());

    // A snapshot without a trace is one step: on its axis it stands for all of A.
    const auto oneStep = diffTraces(a, sideOf(kSnapshots + "segments_only.pickle"));
    checkDiff(oneStep);
    QCOMPARE(oneStep.aLive.size(), std::size_t(1));
    QCOMPARE(oneStep.aLive[0], a.peak);
}

// `memplan trace MODEL SNAPSHOT --json`: the explanation, categories and aligned curves in the file.
void TestTraceDiff::cliDiff()
{
    if (python().isEmpty())
        QSKIP("no python3: the snapshot cannot be replayed");
    QTemporaryDir dir;
    const auto model = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/data/captured_mlp.json");
    const auto snapshot = replayedSnapshot(dir, model);
    QVERIFY(!snapshot.isEmpty());
    const auto json = dir.filePath(QStringLiteral("diff.json"));
    const auto run = memplan({ QStringLiteral("trace"), model, snapshot, QStringLiteral("--json"), json });
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.out.contains(QStringLiteral("planned (best-of-greedy, validated)")), qPrintable(run.out));
    QVERIFY(run.out.contains(QStringLiteral("alignment (exact)")));
    QVERIFY(run.out.contains(QStringLiteral("by category")));
    QVERIFY(run.out.contains(QStringLiteral("saved")));
    const auto d = nlohmann::json::parse(readText(json.toStdString()));
    QCOMPARE(d["a"]["kind"].get<std::string>(), std::string("plan"));
    QCOMPARE(d["b"]["kind"].get<std::string>(), std::string("snapshot"));
    Bytes sum = 0;
    for (const auto& row : d["explanation"])
        sum += row["bytes"].get<Bytes>();
    QCOMPARE(sum + d["unexplained_bytes"].get<Bytes>(), d["peak_change_bytes"].get<Bytes>());
    QCOMPARE(d["peak_change_bytes"].get<Bytes>(), d["b"]["peak_allocated_bytes"].get<Bytes>() - d["a"]["peak_allocated_bytes"].get<Bytes>());
    const auto steps = d["aligned"]["steps"].get<std::size_t>();
    QCOMPARE(steps, d["b"]["steps"].get<std::size_t>());
    for (const char* curve : { "a_step", "a_live_bytes", "b_live_bytes", "a_held_bytes", "b_held_bytes" })
        QCOMPARE(d["aligned"][curve].size(), steps);
    QVERIFY(!d["categories"].empty());
    QVERIFY(d["alignment"]["matched_fraction"].get<double>() >= 0.95);
    // The curves are written one line each.
    QVERIFY(readText(json.toStdString()).find("\"b_live_bytes\": [") != std::string::npos);
}

// Bad input: one message naming the file, exit 1; usage errors exit 2.
void TestTraceDiff::cliRefusals()
{
    const auto snapshot = QString::fromStdString(kSnapshots + "generated.pickle");
    const auto missing = memplan({ QStringLiteral("trace"), snapshot, QStringLiteral("/nonexistent/model.onnx") });
    QCOMPARE(missing.exitCode, 1);
    QVERIFY2(missing.err.contains(QStringLiteral("/nonexistent/model.onnx")), qPrintable(missing.err));
    QCOMPARE(missing.err.count(QLatin1Char('\n')), 1);
    const auto bad = QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/data/bad_syntax.json");
    const auto syntax = memplan({ QStringLiteral("trace"), bad, snapshot });
    QCOMPARE(syntax.exitCode, 1);
    QVERIFY2(syntax.err.contains(bad), qPrintable(syntax.err));
    // A graph whose sizes are unknown cannot be planned.
    QTemporaryDir dir;
    const auto open = dir.filePath(QStringLiteral("open.json"));
    {
        std::ofstream out(open.toStdString());
        out << R"({"tensors": [{"name": "x", "dtype": "float32", "shape": ["N", 3], "kind": "input"},
                    {"name": "y", "dtype": "float32", "shape": ["N", 3], "kind": "output"}],
                   "ops": [{"name": "relu", "type": "Relu", "inputs": ["x"], "outputs": ["y"]}]})";
    }
    const auto unplanned = memplan({ QStringLiteral("trace"), snapshot, open });
    QCOMPARE(unplanned.exitCode, 1);
    QVERIFY2(unplanned.err.contains(open) && unplanned.err.contains(QStringLiteral("has no value")), qPrintable(unplanned.err));
    const auto truncated = memplan({ QStringLiteral("trace"), QString::fromStdString(kSnapshots + "truncated.pickle"), snapshot });
    QCOMPARE(truncated.exitCode, 1);
    QVERIFY2(truncated.err.contains(QStringLiteral("truncated.pickle")), qPrintable(truncated.err));
    QCOMPARE(memplan({ QStringLiteral("trace"), snapshot, snapshot, QStringLiteral("--csv"), QStringLiteral("x.csv") }).exitCode, 2);
    QCOMPARE(memplan({ QStringLiteral("trace"), snapshot, snapshot, QStringLiteral("--replan"), QStringLiteral("nope") }).exitCode, 2);
    const auto help = memplan({ QStringLiteral("trace"), QStringLiteral("--help") });
    QVERIFY(help.out.contains(QStringLiteral("memplan trace A B")) && help.out.contains(QStringLiteral("proportional")));
}

QTEST_GUILESS_MAIN(TestTraceDiff)
#include "tst_tracediff.moc"
