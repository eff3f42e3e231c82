// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The checkpoint MILP (strategies/checkpointmilp.h): exact for its model against every subset on small
// DAGs, never worse than the DP, a time-limited solve's best set, cancel, threads and bad input.
#include "planners/planner.h"
#include "planners/validate.h"
#include "strategies/checkpointdp.h"
#include "strategies/checkpointmilp.h"
#include "strategies/training.h"

#include <QTest>

#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <thread>

using namespace core;

namespace {
// `n` forward steps with random sizes and times; with `skips`, random skip connections (each step reads
// its predecessor and sometimes an earlier step's output, some read by several later steps); step
// `forced` (if >= 0) cannot be re-run.
CheckpointChain randomChain(int n, unsigned seed, bool skips, int forced = -1)
{
    std::mt19937 random(seed);
    CheckpointChain chain;
    for (int s = 0; s < n; ++s) {
        const Bytes bytes = 5 + Bytes(random() % 90);
        chain.bytes.push_back(bytes);
        chain.keep.push_back(bytes + Bytes(random() % 3 == 0 ? random() % 40 : 0));
        chain.seconds.push_back(1.0 + static_cast<double>(random() % 9));
        chain.inputs.emplace_back();
        if (s > 0)
            chain.inputs.back().push_back({ s - 1, chain.bytes[std::size_t(s) - 1] });
        if (skips && s > 2 && random() % 2 == 0) {
            const Step from = Step(random() % unsigned(s - 1));
            chain.inputs.back().push_back({ from, chain.keep[std::size_t(from)] });
        }
    }
    chain.forced.assign(std::size_t(n), false);
    if (forced >= 0)
        chain.forced[std::size_t(forced)] = true;
    chain.candidate.assign(std::size_t(n), true);
    return chain;
}

// The least model seconds over every subset that fits `budget` (infinity: none fits).
double bruteForce(const CheckpointChain& chain, Bytes budget)
{
    double best = std::numeric_limits<double>::infinity();
    for (unsigned mask = 0; mask < (1u << chain.steps()); ++mask) {
        std::vector<Step> set;
        for (int s = 0; s < chain.steps(); ++s)
            if (mask & (1u << s))
                set.push_back(s);
        const auto model = milpModel(chain, set);
        if (model.modelPeak <= budget)
            best = std::min(best, model.modelSeconds);
    }
    return best;
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
} // namespace

class TestCheckpointMilp : public QObject {
    Q_OBJECT
private slots:
    void modelCountsSkipsOnce();
    void exactAgainstEverySubset();
    void neverWorseThanDp();
    void unetChoicesPlanAndValidate();
    void timeLimitGivesBestFound();
    void cancelAndBadInput();
    void threads();
};

// The model by hand on a DAG; at most the DP's peak for every set, equal on a chain without skips.
void TestCheckpointMilp::modelCountsSkipsOnce()
{
    CheckpointChain chain;
    chain.bytes = { 10, 20, 30, 40, 50, 60, 70 };
    chain.seconds = { 1, 1, 1, 1, 1, 1, 1 };
    chain.forced.assign(7, false);
    chain.candidate.assign(7, true);
    chain.inputs.assign(7, {});
    chain.inputs[3] = { { 0, 10 } }; // step 0's output read at 3 and 5: one tensor
    chain.inputs[5] = { { 0, 10 } };
    // Checkpoints 1, 4, 6: segments {0}, {2, 3}, {5}. Step 0's output is held from the re-run of the segment
    // closing at 4 (the first later one that reads it) on, once: into 6, checkpoints 1, 4 (70) + step 0
    // (10) + step 5 (60) + checkpoint 6 (70) = 210. The DP counts it again for the segment into 6: 220.
    auto model = milpModel(chain, { 1, 4, 6 });
    QCOMPARE(model.modelSeconds, 4.0);
    QCOMPARE(model.modelPeak, Bytes(210));
    QCOMPARE(checkpointModel(chain, { 1, 4, 6 }).modelPeak, Bytes(220));
    // Step 0 a checkpoint: its output is kept, not held again: the segment into 6 holds checkpoints 0, 2, 4 (90), step 5 (60) and 6 (70): 220; the DP adds step 0's
    // output for each of the segments into 4 and 6: 240.
    model = milpModel(chain, { 0, 2, 4, 6 });
    QCOMPARE(model.modelPeak, Bytes(220));
    QCOMPARE(checkpointModel(chain, { 0, 2, 4, 6 }).modelPeak, Bytes(240));
    // A reader in the tail re-runs nothing: with checkpoints 1, 2 the tail {3, ..., 6} holds no skip.
    QCOMPARE(milpModel(chain, { 1, 2 }).modelPeak, Bytes(20 + 30 + 40 + 50 + 60 + 70));
    for (unsigned seed = 1; seed <= 4; ++seed) {
        const auto dag = randomChain(9, seed, true);
        const auto plain = randomChain(9, seed, false);
        for (unsigned mask = 0; mask < (1u << 9); ++mask) {
            std::vector<Step> set;
            for (int s = 0; s < 9; ++s)
                if (mask & (1u << s))
                    set.push_back(s);
            QVERIFY(milpModel(dag, set).modelPeak <= checkpointModel(dag, set).modelPeak);
            QCOMPARE(milpModel(dag, set).modelSeconds, checkpointModel(dag, set).modelSeconds);
            QCOMPARE(milpModel(plain, set).modelPeak, checkpointModel(plain, set).modelPeak);
        }
    }
}

// The MILP (no warm start, then with it) against every subset, on DAGs with skip connections and a
// forced step, over budgets from infeasible to everything stored.
void TestCheckpointMilp::exactAgainstEverySubset()
{
    int solved = 0, infeasible = 0;
    for (unsigned seed = 1; seed <= 6; ++seed) {
        const auto chain = randomChain(10, seed, true, seed % 2 ? 4 : -1);
        Bytes high = 0;
        for (int s = 0; s < chain.steps(); ++s)
            high += chain.kept(s);
        for (Bytes budget = 60; budget <= high; budget += high / 11) {
            const double best = bruteForce(chain, budget);
            for (bool warm : { false, true }) {
                MilpOptions options;
                options.warmStart = warm;
                options.timeLimitSeconds = 30;
                const auto r = milpCheckpoints(chain, budget, options);
                const auto context = QStringLiteral("seed %1, budget %2, warm %3: milp %4, brute force %5")
                                         .arg(seed).arg(budget).arg(warm).arg(r.choice ? r.choice->modelSeconds : -1).arg(best);
                QVERIFY2(!r.timedOut && !r.cancelled, qPrintable(context));
                if (std::isinf(best)) {
                    QVERIFY2(r.infeasible && !r.choice, qPrintable(context));
                    ++infeasible;
                    continue;
                }
                QVERIFY2(r.choice && r.optimal, qPrintable(context + " " + QString::fromStdString(r.message)));
                QCOMPARE(r.gap, 0.0);
                QVERIFY2(r.choice->modelPeak <= budget, qPrintable(context));
                QVERIFY2(std::abs(r.choice->modelSeconds - best) < 1e-9, qPrintable(context));
                QCOMPARE(milpModel(chain, r.choice->checkpoints).modelSeconds, r.choice->modelSeconds);
                if (chain.forced[4] && !r.choice->checkpoints.empty() && r.choice->checkpoints.back() > 4)
                    QVERIFY(std::binary_search(r.choice->checkpoints.begin(), r.choice->checkpoints.end(), Step(4)));
                ++solved;
            }
        }
        // The least peak: no subset has a smaller one.
        const auto least = milpLeastPeak(chain);
        QVERIFY(least.choice && least.optimal);
        QVERIFY(std::isinf(bruteForce(chain, least.choice->modelPeak - 1)));
    }
    QVERIFY(solved > 50);
    QVERIFY(infeasible > 0);
}

// On chains (no skips: the models agree) too long for brute force, and on a DAG, the MILP's set costs
// no more than the DP's at the same budget, in the MILP's model; proven optimal without a warm start.
void TestCheckpointMilp::neverWorseThanDp()
{
    for (bool skips : { false, true }) {
        const auto chain = randomChain(40, 7, skips, 17);
        MilpOptions options;
        options.warmStart = false;
        options.timeLimitSeconds = 60;
        const auto sweep = checkpointSweep(chain, 10);
        QVERIFY(sweep.size() >= 4);
        int strictlyBetter = 0;
        for (const auto& dp : sweep) {
            const auto r = milpCheckpoints(chain, dp.modelPeak, options);
            QVERIFY2(r.choice && r.optimal, r.message.c_str());
            QVERIFY(r.choice->modelPeak <= dp.modelPeak);
            const double dpSeconds = milpModel(chain, dp.checkpoints).modelSeconds;
            QVERIFY2(r.choice->modelSeconds <= dpSeconds + 1e-9,
                qPrintable(QStringLiteral("skips %1: milp %2 s, dp %3 s").arg(skips).arg(r.choice->modelSeconds).arg(dpSeconds)));
            strictlyBetter += r.choice->modelSeconds < dpSeconds - 1e-9;
        }
        if (!skips)
            QCOMPARE(strictlyBetter, 0); // same model, both exact
        // The least peak, seeded with the DP's least feasible set and cut short: never above it.
        MilpOptions quick;
        quick.timeLimitSeconds = 0.2;
        const auto least = milpLeastPeak(chain, quick);
        QVERIFY(least.choice);
        QVERIFY(least.choice->modelPeak <= milpModel(chain, sweep.front().checkpoints).modelPeak);
        qInfo("40 steps, skips %d: the MILP cheaper than the DP at %d of %zu budgets", skips, strictlyBetter, sweep.size());
    }
}

// On a real training graph's chain: the sweep's sets are applied with the checkpoint policy, planned and
// validated, and lower the lower bound.
void TestCheckpointMilp::unetChoicesPlanAndValidate()
{
    const auto workload = unetTraining();
    const auto chain = checkpointChain(startTransform(*workload.graph, workload.schedule), defaultDevice(), 120);
    QVERIFY(chain.steps() > 10);
    MilpOptions options;
    options.timeLimitSeconds = 5;
    const auto sweep = milpSweep(chain, 6, options, 60);
    qInfo("example:unet training: %d forward steps, %zu sets, %d of %d programs proven optimal", chain.steps(), sweep.choices.size(),
        sweep.optimal, sweep.solves);
    QVERIFY(sweep.choices.size() >= 3);
    QCOMPARE(sweep.solves, 7); // the least peak, then 6 budgets
    QVERIFY(!sweep.capped && !sweep.cancelled);
    const auto& planner = *plannerByName(kDefaultPlanner);
    for (const auto& choice : sweep.choices) {
        QVERIFY(choice.modelSeconds > 0);
        StrategyOptions strategy;
        strategy.alignment = workload.problem.alignment;
        strategy.recomputePolicy = RecomputePolicy::Checkpoint;
        strategy.checkpointSteps = choice.checkpoints;
        auto run = applyStrategies(workload, { "recompute" }, strategy);
        QVERIFY2(run, run ? "" : run.error().message.c_str());
        auto plan = runPlanner(planner, run->workload.problem);
        QVERIFY(plan);
        QVERIFY(validatePlan(run->workload.problem, *plan).ok());
        QVERIFY(plan->arenaSize < runPlanner(planner, workload.problem)->arenaSize);
    }
    // Least memory first.
    for (std::size_t i = 1; i < sweep.choices.size(); ++i)
        QVERIFY(sweep.choices[i - 1].modelPeak <= sweep.choices[i].modelPeak);
}

// A program too big for its time limit: it stops, says so, and returns a set that fits (at least the DP's).
void TestCheckpointMilp::timeLimitGivesBestFound()
{
    const auto chain = randomChain(260, 11, true);
    const auto dp = checkpointSweep(chain, 5);
    QVERIFY(dp.size() >= 2);
    const Bytes budget = dp[1].modelPeak;
    MilpOptions options;
    options.timeLimitSeconds = 0.05;
    const auto r = milpCheckpoints(chain, budget, options);
    QVERIFY(r.timedOut);
    QVERIFY(!r.optimal);
    QVERIFY(r.choice);
    QVERIFY(r.choice->modelPeak <= budget);
    QVERIFY(r.choice->modelSeconds <= milpModel(chain, dp[1].checkpoints).modelSeconds + 1e-9);
    QVERIFY(r.binaries > 10000);
    // The sweep under a total cap says it was capped.
    const auto sweep = milpSweep(chain, 8, options, 0.2);
    QVERIFY(sweep.capped);
    QVERIFY(sweep.solves < 9);
}

void TestCheckpointMilp::cancelAndBadInput()
{
    const auto chain = randomChain(30, 3, true);
    MilpOptions options;
    options.cancel = CancelToken(std::make_shared<std::atomic<bool>>(true));
    const auto cancelled = milpCheckpoints(chain, 1000, options);
    QVERIFY(cancelled.cancelled);
    QVERIFY(!cancelled.choice);
    const auto sweep = milpSweep(chain, 4, options, 10);
    QVERIFY(sweep.cancelled);
    QVERIFY(sweep.choices.empty());
    // No forward steps; a budget nothing fits.
    const auto empty = milpCheckpoints(CheckpointChain {}, 1000);
    QVERIFY(!empty.choice && !empty.infeasible);
    QVERIFY(!empty.message.empty());
    auto broken = chain;
    broken.candidate.pop_back();
    const auto mismatched = milpCheckpoints(broken, 1000);
    QVERIFY(!mismatched.choice);
    QVERIFY2(mismatched.message.find("differ in length") != std::string::npos, mismatched.message.c_str());
    broken = chain;
    broken.inputs[3].push_back({ 7, 10 });
    QVERIFY(milpCheckpoints(broken, 1000).message.find("step 3 reads") != std::string::npos);
    QCOMPARE(milpModel(chain, { -1, 5, 99 }).checkpoints, std::vector<Step> { 5 });
    const auto none = milpCheckpoints(chain, 1);
    QVERIFY(none.infeasible && !none.choice);
    QVERIFY(milpSweep(CheckpointChain {}, 4, {}, 10).choices.empty());
}

// GLPK's environment is per thread: solves on four threads at once give the serial answers.
void TestCheckpointMilp::threads()
{
    const auto chain = randomChain(30, 5, true, 9);
    MilpOptions options;
    options.timeLimitSeconds = 30;
    const Bytes budgets[] = { 700, 900, 1100, 1400 };
    std::vector<double> serial;
    for (auto b : budgets) {
        const auto r = milpCheckpoints(chain, b, options);
        serial.push_back(r.choice ? r.choice->modelSeconds : -1);
    }
    std::vector<double> parallel(4, -2);
    std::vector<std::thread> workers;
    for (std::size_t i = 0; i < 4; ++i)
        workers.emplace_back([&, i] {
            const auto r = milpCheckpoints(chain, budgets[i], options);
            parallel[i] = r.choice ? r.choice->modelSeconds : -1;
        });
    for (auto& w : workers)
        w.join();
    QCOMPARE(parallel, serial);
    QVERIFY(std::count(serial.begin(), serial.end(), -1.0) < 4);
}

QTEST_GUILESS_MAIN(TestCheckpointMilp)
#include "tst_checkpointmilp.moc"
