// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The frontier of peak memory against extra time (strategies/frontier.h) and its checkpoint dynamic
// program (strategies/checkpointdp.h), and `memplan compare --frontier`.
#include "cost/opcost.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "strategies/checkpointdp.h"
#include "strategies/frontier.h"
#include "strategies/training.h"

#include "clirun.h"
#include "graphbuilder.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

using namespace core;

namespace {
// A chain of `n` ops, MatMul and Tanh alternated, widths varying along the chain; then its training step
// (weight gradients outside the arena).
Workload chainTraining(int n)
{
    GraphBuilder b;
    std::int64_t width = 256;
    auto x = b.tensor("x", { 4, width }, TensorKind::Input);
    for (int i = 0; i < n; ++i) {
        const auto kind = i + 1 == n ? TensorKind::Output : TensorKind::Activation;
        const auto name = std::to_string(i);
        if (i % 2 == 0) {
            const std::int64_t out = 256 + 64 * (i % 3);
            auto w = b.tensor("w" + name, { width, out }, TensorKind::Weight);
            auto y = b.tensor("y" + name, { 4, out }, kind);
            b.op("matmul" + name, "MatMul", { x, w }, { y });
            width = out;
            x = y;
        } else {
            auto y = b.tensor("y" + name, { 4, width }, kind);
            b.op("tanh" + name, "Tanh", { x }, { y });
            x = y;
        }
    }
    auto workload = b.workload("chain", 1);
    TrainingOptions options;
    options.weightGradientsInArena = false;
    auto training = appendBackwardPass(workload, options);
    if (!training)
        qFatal("%s", training.error().message.c_str());
    return std::move(*training);
}

Workload unetTraining()
{
    auto workload = loadWorkload("example:unet", {});
    if (!workload)
        qFatal("%s", workload.error().message.c_str());
    TrainingOptions options;
    options.weightGradientsInArena = false;
    auto training = appendBackwardPass(*workload, options);
    if (!training)
        qFatal("%s", training.error().message.c_str());
    return std::move(*training);
}

FrontierOptions smallOptions(const Workload& workload)
{
    FrontierOptions options;
    options.strategy.alignment = workload.problem.alignment;
    options.budgets = 12;
    options.greedyRewrites = { 2, 8 };
    options.milpBudgets = 5;
    options.milpTimeLimitSeconds = 1;
    return options;
}

// Some frontier point has at most `peak` and at most `extra` (+ tolerance).
bool covered(const Frontier& frontier, Bytes peak, double extra)
{
    return std::any_of(frontier.points.begin(), frontier.points.end(),
        [&](const FrontierPoint& p) { return p.peakBytes <= peak && p.extraSeconds <= extra + 1e-9 + 1e-6 * std::abs(extra); });
}

void verifySortedNonDominated(const Frontier& frontier)
{
    QVERIFY(!frontier.points.empty());
    for (std::size_t i = 1; i < frontier.points.size(); ++i) {
        QVERIFY2(frontier.points[i - 1].peakBytes < frontier.points[i].peakBytes, "peaks ascend strictly");
        QVERIFY2(frontier.points[i - 1].extraSeconds > frontier.points[i].extraSeconds, "extra times descend strictly");
    }
}
} // namespace

class TestFrontier : public QObject {
    Q_OBJECT
private slots:
    void explicitCheckpointsMatchEveryK();
    void dpMatchesModelBruteForce();
    void chainFrontierCoversEverySubset();
    void unetFrontierValidAndBelowHeuristics();
    void inferenceGraphUsesHeuristics();
    void capturedStep();
    void budgetPickAndCancel();
    void cliFrontier();
};

// The checkpoint policy with the steps k-1, 2k-1, ... named is the every-k policy: same graph, same costs.
void TestFrontier::explicitCheckpointsMatchEveryK()
{
    const auto workload = unetTraining();
    const Step forward = backwardStart(*workload.graph, workload.schedule);
    for (int k : { 3, 7 }) {
        StrategyOptions every;
        every.alignment = workload.problem.alignment;
        every.recomputePolicy = RecomputePolicy::Checkpoint;
        every.checkpointEvery = k;
        auto named = every;
        for (Step s = k - 1; s < (forward / k) * k; s += k)
            named.checkpointSteps.push_back(s);
        const auto a = applyStrategies(workload, { "recompute" }, every);
        const auto b = applyStrategies(workload, { "recompute" }, named);
        QVERIFY(a && b);
        QCOMPARE(b->workload.schedule.order, a->workload.schedule.order);
        QCOMPARE(lowerBound(b->workload.problem), lowerBound(a->workload.problem));
        QCOMPARE(extraSeconds(b->reports), extraSeconds(a->reports));
        QVERIFY(lowerBound(a->workload.problem) < lowerBound(workload.problem));
    }
}

// The program against every subset of checkpoints under its own model, at several budgets.
void TestFrontier::dpMatchesModelBruteForce()
{
    CheckpointChain chain;
    const std::vector<Bytes> bytes { 40, 10, 70, 20, 30, 90, 15, 25, 60, 5 };
    const std::vector<double> seconds { 3, 1, 4, 1, 5, 9, 2, 6, 5, 3 };
    chain.bytes = bytes;
    chain.seconds = seconds;
    chain.forced.assign(bytes.size(), false);
    chain.forced[4] = true; // an op that cannot be re-run
    chain.candidate.assign(bytes.size(), true);
    const int n = chain.steps();
    for (int variant = 0; variant < 2; ++variant)
    for (Bytes budget = 40; budget <= 480; budget += 7) {
        if (variant == 1) { // checkpoints hold more than the backward reads of them; skip connections
            chain.keep = { 40, 30, 70, 20, 50, 90, 15, 40, 60, 5 };
            chain.inputs.assign(bytes.size(), {});
            chain.inputs[3] = { { 0, 40 } };
            chain.inputs[6] = { { 2, 70 }, { 5, 90 } };
            chain.inputs[8] = { { 2, 70 }, { 1, 10 } };
        }
        double best = std::numeric_limits<double>::infinity();
        for (unsigned mask = 0; mask < (1u << n); ++mask) {
            std::vector<Step> set;
            for (int s = 0; s < n; ++s)
                if (mask & (1u << s))
                    set.push_back(s);
            const auto model = checkpointModel(chain, set);
            if (model.modelPeak <= budget)
                best = std::min(best, model.modelSeconds);
        }
        const auto dp = bestCheckpoints(chain, budget);
        QCOMPARE(dp.has_value(), best < std::numeric_limits<double>::infinity());
        if (!dp)
            continue;
        QVERIFY2(dp->modelPeak <= budget, qPrintable(QString::number(budget)));
        QVERIFY2(std::abs(dp->modelSeconds - best) < 1e-12, qPrintable(QStringLiteral("budget %1: dp %2, brute force %3").arg(budget).arg(dp->modelSeconds).arg(best)));
        if (!dp->checkpoints.empty() && dp->checkpoints.back() > 4) // past the forced step: it is a checkpoint
            QVERIFY(std::binary_search(dp->checkpoints.begin(), dp->checkpoints.end(), Step(4)));
    }
    // The sweep: distinct sets, least memory first, none empty of recomputation.
    const auto sweep = checkpointSweep(chain, 16);
    QVERIFY(sweep.size() >= 3);
    for (std::size_t i = 1; i < sweep.size(); ++i)
        QVERIFY(sweep[i - 1].modelSeconds >= sweep[i].modelSeconds);
}

// On a real (tiny) training chain: every subset of checkpoints applied, planned and measured; the
// frontier has a point at or below each of them.
void TestFrontier::chainFrontierCoversEverySubset()
{
    const auto workload = chainTraining(8);
    const Step forward = backwardStart(*workload.graph, workload.schedule);
    QCOMPARE(forward, Step(8));
    auto options = smallOptions(workload);
    options.budgets = 32;
    const auto frontier = computeFrontier(workload, options);
    QVERIFY2(frontier, frontier ? "" : frontier.error().message.c_str());
    QVERIFY(frontier->training);
    verifySortedNonDominated(*frontier);
    const auto& planner = *plannerByName(kDefaultPlanner);
    int better = 0;
    for (unsigned mask = 1; mask < (1u << forward); ++mask) {
        FrontierPoint point;
        point.names = { "recompute" };
        point.options = options.strategy;
        point.options.recomputePolicy = RecomputePolicy::Checkpoint;
        for (Step s = 0; s < forward; ++s)
            if (mask & (1u << s))
                point.options.checkpointSteps.push_back(s);
        auto run = applyFrontierPoint(workload, point);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        auto plan = runPlanner(planner, run->workload.problem);
        QVERIFY(plan);
        QVERIFY(validatePlan(run->workload.problem, *plan).ok());
        const double extra = extraSeconds(run->reports);
        QVERIFY2(covered(*frontier, plan->arenaSize, extra),
            qPrintable(QStringLiteral("subset %1: peak %2, extra %3 s not covered").arg(mask).arg(plan->arenaSize).arg(extra)));
        better += plan->arenaSize < frontier->baseArena;
    }
    QVERIFY2(better > 0, "some checkpoint subset lowers the peak");
    QVERIFY(std::any_of(frontier->points.begin(), frontier->points.end(), [](const FrontierPoint& p) { return p.method.starts_with("dp"); }));
}

void TestFrontier::unetFrontierValidAndBelowHeuristics()
{
    const auto workload = unetTraining();
    auto options = smallOptions(workload);
    options.milpTimeLimitSeconds = 5; // time to prove most sets optimal on a loaded machine: the points do not vary
    const auto frontier = computeFrontier(workload, options);
    QVERIFY2(frontier, frontier ? "" : frontier.error().message.c_str());
    verifySortedNonDominated(*frontier);
    QCOMPARE(frontier->dropped, 0);
    // The heuristics: every on/off combination and sqrt(n) checkpointing, each covered.
    QCOMPARE(frontier->heuristics.size(), (std::size_t(1) << strategyNames().size()) + 1);
    for (const auto& h : frontier->heuristics)
        QVERIFY2(covered(*frontier, h.peakBytes, h.extraSeconds), qPrintable(QString::fromStdString(h.label)));
    // Every point rebuilds to the same arena, and the plan is valid.
    const auto& planner = *plannerByName(kDefaultPlanner);
    for (const auto& p : frontier->points) {
        auto run = applyFrontierPoint(workload, p);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        auto plan = runPlanner(planner, run->workload.problem);
        QVERIFY(plan);
        QVERIFY(validatePlan(run->workload.problem, *plan).ok());
        QCOMPARE(plan->arenaSize, p.peakBytes);
        QCOMPARE(p.seconds, frontier->baseSeconds + p.extraSeconds);
        if (p.method.starts_with("dp") || p.method.starts_with("milp")) {
            QVERIFY(!p.checkpoints.empty());
            QVERIFY(!p.recomputed.empty());
        }
        if (p.method == "dp+swap" && p.swappedBytes > 0)
            QVERIFY(!p.swapped.empty());
    }
    // The DP beats sqrt(n) checkpointing: a point at most as large at less extra time.
    const auto sqrtPoint = std::find_if(frontier->heuristics.begin(), frontier->heuristics.end(), [](const FrontierPoint& p) { return p.method == "checkpoint"; });
    QVERIFY(sqrtPoint != frontier->heuristics.end());
    QVERIFY(std::any_of(frontier->points.begin(), frontier->points.end(), [&](const FrontierPoint& p) {
        return p.method.starts_with("dp") && p.peakBytes <= sqrtPoint->peakBytes && p.extraSeconds < sqrtPoint->extraSeconds;
    }));
    // The MILP's sets: on the frontier, and a note per graph says how its solves ended.
    QVERIFY(std::any_of(frontier->points.begin(), frontier->points.end(), [](const FrontierPoint& p) { return p.method.starts_with("milp"); }));
    QCOMPARE(std::count_if(frontier->notes.begin(), frontier->notes.end(), [](const std::string& n) { return n.starts_with("milp"); }), 2);
    auto noMilp = options;
    noMilp.milp = false;
    const auto without = computeFrontier(workload, noMilp);
    QVERIFY(without);
    QVERIFY(std::none_of(without->points.begin(), without->points.end(), [](const FrontierPoint& p) { return p.method.starts_with("milp"); }));
    QVERIFY(without->candidates < frontier->candidates);
    qInfo("example:unet training: %zu points of %d candidates; no strategy %.1f MiB; smallest %.1f MiB (%s) at +%.3f ms", frontier->points.size(),
        frontier->candidates, frontier->baseArena / 1048576.0, frontier->points.front().peakBytes / 1048576.0,
        frontier->points.front().label.c_str(), frontier->points.front().extraSeconds * 1e3);
}

void TestFrontier::inferenceGraphUsesHeuristics()
{
    auto workload = loadWorkload("example:cnn", {});
    QVERIFY(workload);
    auto options = smallOptions(*workload);
    const auto frontier = computeFrontier(*workload, options);
    QVERIFY2(frontier, frontier ? "" : frontier.error().message.c_str());
    QVERIFY(!frontier->training);
    verifySortedNonDominated(*frontier);
    QVERIFY(std::none_of(frontier->points.begin(), frontier->points.end(), [](const FrontierPoint& p) { return p.method.starts_with("dp"); }));
    QVERIFY(std::any_of(frontier->notes.begin(), frontier->notes.end(), [](const std::string& n) { return n.find("no backward pass") != std::string::npos; }));
    QCOMPARE(frontier->heuristics.size(), std::size_t(1) << strategyNames().size()); // the on/off combinations
    // An allocation problem has no graph.
    auto csv = loadWorkload(MEMPLAN_SOURCE_DIR "/tests/data/small_problem.csv", {});
    QVERIFY(csv);
    const auto none = computeFrontier(*csv, options);
    QVERIFY(!none);
    QCOMPARE(none.error().code, ErrorCode::InvalidArgument);
}

// A captured training step (its own backward phase, no --training): the DP applies, every point rebuilds.
void TestFrontier::capturedStep()
{
    auto workload = loadWorkload(MEMPLAN_SOURCE_DIR "/tests/data/captured_mlp.json", {});
    QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
    const auto frontier = computeFrontier(*workload, smallOptions(*workload));
    QVERIFY2(frontier, frontier ? "" : frontier.error().message.c_str());
    QVERIFY(frontier->training);
    verifySortedNonDominated(*frontier);
    QCOMPARE(frontier->dropped, 0);
    QVERIFY(frontier->points.front().peakBytes < frontier->baseArena);
    const auto& planner = *plannerByName(kDefaultPlanner);
    for (const auto& p : frontier->points) {
        auto run = applyFrontierPoint(*workload, p);
        QVERIFY(run);
        auto plan = runPlanner(planner, run->workload.problem);
        QVERIFY(plan);
        QVERIFY(validatePlan(run->workload.problem, *plan).ok());
        QCOMPARE(plan->arenaSize, p.peakBytes);
    }
}

void TestFrontier::budgetPickAndCancel()
{
    const auto workload = chainTraining(6);
    const auto options = smallOptions(workload);
    std::vector<double> fractions;
    const auto frontier = computeFrontier(workload, options, [&](double f, std::string_view) { fractions.push_back(f); });
    QVERIFY(frontier);
    QVERIFY(!fractions.empty());
    QVERIFY(std::is_sorted(fractions.begin(), fractions.end()));
    QCOMPARE(fractions.back(), 1.0);
    const auto& points = frontier->points;
    QVERIFY(pickForBudget(*frontier, points.front().peakBytes - 1) == nullptr);
    QCOMPARE(pickForBudget(*frontier, points.front().peakBytes), &points.front());
    QCOMPARE(pickForBudget(*frontier, points.back().peakBytes), &points.back());
    // Over the size limit: the fast approximation, said in a note.
    auto fast = options;
    fast.largeGraphOps = 1;
    const auto approximate = computeFrontier(workload, fast);
    QVERIFY(approximate);
    verifySortedNonDominated(*approximate);
    QVERIFY(std::any_of(approximate->notes.begin(), approximate->notes.end(),
        [](const std::string& n) { return n.find("fast approximation") != std::string::npos; }));
    QVERIFY(approximate->candidates < frontier->candidates);
    QVERIFY(std::none_of(approximate->points.begin(), approximate->points.end(),
        [](const FrontierPoint& p) { return p.label.starts_with("fuse+recompute("); }));
    auto flag = std::make_shared<std::atomic<bool>>(true);
    const auto cancelled = computeFrontier(workload, options, {}, CancelToken(flag));
    QVERIFY(!cancelled);
    QCOMPARE(cancelled.error().code, ErrorCode::Cancelled);
    // Cancelled while the MILP solves: it stops there.
    flag->store(false);
    bool afterMilp = false;
    const auto duringMilp = computeFrontier(workload, options, [&](double, std::string_view what) {
        afterMilp = afterMilp || flag->load();
        if (what.starts_with("milp"))
            flag->store(true);
    }, CancelToken(flag));
    QVERIFY(!duringMilp);
    QCOMPARE(duringMilp.error().code, ErrorCode::Cancelled);
    QVERIFY(flag->load());
}

void TestFrontier::cliFrontier()
{
    QTemporaryDir dir;
    const auto json = dir.filePath(QStringLiteral("frontier.json"));
    auto run = memplan({ QStringLiteral("compare"), QStringLiteral("example:unet"), QStringLiteral("--training"), QStringLiteral("--persistent-grads"),
        QStringLiteral("--frontier"), QStringLiteral("--json"), json, QStringLiteral("--budget"), QStringLiteral("60MiB"),
        QStringLiteral("--milp-time-limit"), QStringLiteral("5") });
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY(run.out.contains(QStringLiteral("frontier on h200")));
    QVERIFY(run.out.contains(QStringLiteral("budget 60.0 MiB")));
    QFile file(json);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto doc = QJsonDocument::fromJson(file.readAll()).object();
    const auto frontier = doc.value(QStringLiteral("frontier")).toArray();
    QVERIFY(frontier.size() >= 3);
    double previousPeak = -1;
    for (const auto& value : frontier) {
        const auto p = value.toObject();
        for (const char* key : { "peak_bytes", "extra_time_s", "time_s", "recomputed", "swapped", "method", "strategies" })
            QVERIFY2(p.contains(QLatin1String(key)), key);
        QVERIFY(p.value(QStringLiteral("peak_bytes")).toDouble() > previousPeak);
        previousPeak = p.value(QStringLiteral("peak_bytes")).toDouble();
        QVERIFY(p.value(QStringLiteral("recomputed")).isArray());
    }
    QVERIFY2(std::any_of(frontier.begin(), frontier.end(), [](const QJsonValue& p) {
        return p.toObject().value(QStringLiteral("method")).toString().startsWith(QLatin1String("milp"));
    }), "a MILP point on the U-Net's frontier");
    QVERIFY(run.out.contains(QStringLiteral("note: milp:")));
    QCOMPARE(doc.value(QStringLiteral("heuristics")).toArray().size(), (1 << core::strategyNames().size()) + 1);
    QVERIFY(doc.value(QStringLiteral("budget")).toObject().contains(QStringLiteral("fits")));

    // Bad input: an allocation problem, a bad budget, a strategy flag beside --frontier.
    run = memplan({ QStringLiteral("compare"), QStringLiteral(MEMPLAN_SOURCE_DIR "/tests/data/small_problem.csv"), QStringLiteral("--frontier") });
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(QStringLiteral("--frontier needs a model")), qPrintable(run.err));
    QCOMPARE(run.err.count(QLatin1Char('\n')), 1);
    run = memplan({ QStringLiteral("compare"), QStringLiteral("example:unet"), QStringLiteral("--frontier"), QStringLiteral("--budget"), QStringLiteral("lots") });
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains(QStringLiteral("--budget 'lots'")), qPrintable(run.err));
    QCOMPARE(run.err.count(QLatin1Char('\n')), 1);
    run = memplan({ QStringLiteral("compare"), QStringLiteral("example:unet"), QStringLiteral("--frontier"), QStringLiteral("--swap") });
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains(QStringLiteral("drop --swap")), qPrintable(run.err));
    // --milp-time-limit: seconds per solve, 0 turns the MILP off; only with --frontier.
    for (const char* bad : { "soon", "-1", "1e9", "" }) {
        run = memplan({ QStringLiteral("compare"), QStringLiteral("example:unet"), QStringLiteral("--training"), QStringLiteral("--frontier"),
            QStringLiteral("--milp-time-limit"), QLatin1String(bad) });
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(QStringLiteral("--milp-time-limit")), qPrintable(run.err));
    }
    run = memplan({ QStringLiteral("compare"), QStringLiteral("example:unet"), QStringLiteral("--milp-time-limit"), QStringLiteral("1") });
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains(QStringLiteral("add --frontier")), qPrintable(run.err));
    run = memplan({ QStringLiteral("compare"), QStringLiteral("example:unet"), QStringLiteral("--training"), QStringLiteral("--persistent-grads"),
        QStringLiteral("--frontier"), QStringLiteral("--milp-time-limit"), QStringLiteral("0") });
    QCOMPARE(run.exitCode, 0);
    QVERIFY(!run.out.contains(QStringLiteral("milp")));
    // An inference graph: the table says so, no DP points.
    run = memplan({ QStringLiteral("compare"), QStringLiteral("example:cnn"), QStringLiteral("--frontier"), QStringLiteral("--budget"), QStringLiteral("1KiB") });
    QCOMPARE(run.exitCode, 0);
    QVERIFY(run.out.contains(QStringLiteral("no backward pass")));
    QVERIFY2(run.out.contains(QStringLiteral("no frontier point fits")), qPrintable(run.out));
}

QTEST_GUILESS_MAIN(TestFrontier)
#include "tst_frontier.moc"
