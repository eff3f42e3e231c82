// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/randomproblem.h"
#include "planners/validate.h"

#include <QTest>

#include <atomic>
#include <cmath>
#include <random>

using namespace core;

namespace {
PlanProblem makeProblem(std::vector<std::tuple<const char*, Bytes, Step, Step>> rows, Bytes alignment = 1)
{
    PlanProblem p;
    p.alignment = alignment;
    for (const auto& [name, size, start, end] : rows) {
        p.buffers.push_back({ name, { start, end }, size, TensorKind::Activation, { name } });
        p.steps = std::max(p.steps, end);
    }
    return p;
}

PlanProblem fiveTensors()
{
    return makeProblem({ { "w1", 512, 0, 3 }, { "a1", 128, 0, 1 }, { "w2", 256, 1, 4 }, { "a2", 128, 2, 3 }, { "out", 64, 3, 4 } });
}

// The seed's first-fit with a plain list scan: the reference the fast FirstFitPlanner must match.
Plan referenceFirstFit(const PlanProblem& p)
{
    struct Block { Bytes offset, size; };
    std::vector<Block> freeList;
    std::vector<int> order(p.buffers.size()), placed;
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p.buffers[a].lifetime.start < p.buffers[b].lifetime.start; });
    Plan plan;
    plan.offsets.assign(p.buffers.size(), 0);
    for (int i : order) {
        std::vector<int> ended;
        for (int j : placed)
            if (p.buffers[j].lifetime.end <= p.buffers[i].lifetime.start)
                ended.push_back(j);
        std::stable_sort(ended.begin(), ended.end(), [&](int a, int b) {
            return p.buffers[a].lifetime.end != p.buffers[b].lifetime.end ? p.buffers[a].lifetime.end < p.buffers[b].lifetime.end : a < b;
        });
        for (int j : ended) {
            freeList.push_back({ plan.offsets[j], alignUp(p.buffers[j].size, p.alignment) });
            placed.erase(std::find(placed.begin(), placed.end(), j));
        }
        const Bytes size = alignUp(p.buffers[i].size, p.alignment);
        bool done = size == 0;
        for (std::size_t k = 0; k < freeList.size() && !done; ++k)
            if (freeList[k].size >= size) {
                const Block block = freeList[k];
                freeList.erase(freeList.begin() + static_cast<std::ptrdiff_t>(k));
                plan.offsets[i] = block.offset;
                if (block.size > size)
                    freeList.push_back({ block.offset + size, block.size - size });
                done = true;
            }
        if (!done) {
            plan.offsets[i] = plan.arenaSize;
            plan.arenaSize += size;
        }
        placed.push_back(i);
    }
    return plan;
}

// Greedy-by-size by its definition, with plain scans: largest first (ties: earlier start, then
// input order), each at the offset that wastes least among the gaps between placed buffers whose
// lifetimes conflict with it, else on top of them. The planner's gap finder has two query paths (an
// interval tree, and a walk in offset order for dense conflicts); both must give these offsets.
Plan referenceGreedyBySize(const PlanProblem& p)
{
    std::vector<int> order(p.buffers.size()), placed;
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const auto &x = p.buffers[a], &y = p.buffers[b];
        return x.size != y.size ? x.size > y.size : x.lifetime.start < y.lifetime.start;
    });
    Plan plan;
    plan.offsets.assign(p.buffers.size(), 0);
    for (const int i : order) {
        const auto& life = p.buffers[i].lifetime;
        std::vector<int> conflicts;
        for (const int j : placed)
            if (life.start < life.end && p.buffers[j].lifetime.start < p.buffers[j].lifetime.end && life.overlaps(p.buffers[j].lifetime))
                conflicts.push_back(j);
        std::stable_sort(conflicts.begin(), conflicts.end(), [&](int a, int b) { return plan.offsets[a] < plan.offsets[b]; });
        const Bytes need = alignUp(p.buffers[i].size, p.alignment);
        Bytes best = -1, bestWaste = 0, cursor = 0;
        for (const int j : conflicts) {
            const Bytes gap = plan.offsets[j] - cursor;
            if (gap >= need && (best < 0 || gap - need < bestWaste)) {
                best = cursor;
                bestWaste = gap - need;
            }
            cursor = std::max(cursor, plan.offsets[j] + alignUp(p.buffers[j].size, p.alignment));
        }
        plan.offsets[i] = best >= 0 ? best : cursor;
        plan.arenaSize = std::max(plan.arenaSize, plan.offsets[i] + need);
        placed.push_back(i);
    }
    return plan;
}

PlanProblem randomProblem(std::mt19937& rng, int shape)
{
    std::uniform_int_distribution<int> count(1, 60);
    const int n = count(rng);
    const int steps = std::uniform_int_distribution<int>(1, 40)(rng);
    const Bytes alignments[] = { 1, 1, 8, 64, 256 };
    PlanProblem p;
    p.alignment = alignments[std::uniform_int_distribution<int>(0, 4)(rng)];
    p.steps = steps;
    for (int i = 0; i < n; ++i) {
        Step start = std::uniform_int_distribution<int>(0, steps - 1)(rng);
        Step end = std::uniform_int_distribution<int>(start + 1, steps)(rng);
        Bytes size = std::uniform_int_distribution<Bytes>(1, 4096)(rng);
        switch (shape % 6) {
        case 1: // everything overlaps
            start = 0;
            end = steps;
            break;
        case 2: // short lifetimes (a chain)
            end = std::min<Step>(start + 2, steps);
            break;
        case 3: // sizes spanning orders of magnitude, some empty
            size = Bytes(1) << std::uniform_int_distribution<int>(0, 20)(rng);
            if (i % 7 == 0)
                size = 0;
            break;
        case 4: // many identical lifetimes and sizes
            start = i % 3;
            end = std::min<Step>(start + 5, std::max<Step>(steps, start + 1));
            p.steps = std::max(p.steps, end);
            size = 256;
            break;
        default:
            break;
        }
        p.buffers.push_back({ "b" + std::to_string(i), { start, end }, alignUp(size, p.alignment), TensorKind::Activation, {} });
    }
    return p;
}
} // namespace

class TestPlanners : public QObject {
    Q_OBJECT
private slots:
    void registryListsEveryPlanner()
    {
        const auto names = plannerNames();
        for (const char* expected : { "naive", "first-fit", "best-fit", "greedy-by-size", "greedy-by-breadth", "coloring" })
            QVERIFY2(std::find(names.begin(), names.end(), expected) != names.end(), expected);
        QVERIFY(plannerByName("no-such-planner") == nullptr);
    }

    void fiveTensorsFirstFit()
    {
        const auto problem = fiveTensors();
        const auto plan = runPlanner(*plannerByName("first-fit"), problem);
        QVERIFY(plan);
        QCOMPARE(plan->offsets, (std::vector<Bytes> { 0, 512, 640, 512, 0 }));
        QCOMPARE(plan->arenaSize, Bytes(896));
        QCOMPARE(lowerBound(problem), Bytes(896));
        QVERIFY2(validatePlan(problem, *plan).ok(), validatePlan(problem, *plan).message.c_str());
    }

    void hotelSixGuestsThreeRooms()
    {
        // Six guests, never more than three in at once: three rooms.
        const auto problem = makeProblem({ { "Ada", 100, 0, 2 }, { "Ben", 100, 0, 3 }, { "Cy", 100, 1, 4 },
            { "Di", 100, 2, 5 }, { "Ed", 100, 3, 6 }, { "Flo", 100, 4, 6 } });
        QCOMPARE(maxOverlapDepth(problem), 3);
        QCOMPARE(lowerBound(problem), Bytes(300));
        const auto plan = runPlanner(*plannerByName("coloring"), problem);
        QVERIFY(plan);
        QCOMPARE(computeMetrics(problem, *plan).colors, 3);
        QCOMPARE(plan->arenaSize, Bytes(300));
        QVERIFY(validatePlan(problem, *plan).ok());
    }

    void greedyBySizeExact()
    {
        // Largest first: big [0,4) at 0; mid [0,2) above it; two small ones reuse mid's gap after step 2.
        const auto problem = makeProblem({ { "small1", 100, 2, 3 }, { "big", 1000, 0, 4 }, { "mid", 300, 0, 2 }, { "small2", 200, 3, 4 } });
        const auto plan = runPlanner(*plannerByName("greedy-by-size"), problem);
        QVERIFY(plan);
        QCOMPARE(plan->offsets, (std::vector<Bytes> { 1000, 0, 1000, 1000 }));
        QCOMPARE(plan->arenaSize, Bytes(1300));
        QVERIFY(validatePlan(problem, *plan).ok());
    }

    void validatorCatchesBadPlans_data()
    {
        QTest::addColumn<std::vector<Bytes>>("offsets");
        QTest::addColumn<Bytes>("arena");
        QTest::addColumn<int>("check");
        QTest::addRow("overlap w1/a1") << std::vector<Bytes> { 0, 256, 640, 512, 0 } << Bytes(896) << int(PlanCheck::Overlap);
        QTest::addRow("outside arena") << std::vector<Bytes> { 0, 512, 640, 512, 0 } << Bytes(800) << int(PlanCheck::OutsideArena);
        QTest::addRow("wrong count") << std::vector<Bytes> { 0, 512 } << Bytes(896) << int(PlanCheck::WrongCount);
        QTest::addRow("negative") << std::vector<Bytes> { -64, 512, 640, 512, 0 } << Bytes(896) << int(PlanCheck::Negative);
        QTest::addRow("misaligned") << std::vector<Bytes> { 0, 512, 640, 512, 3 } << Bytes(896) << int(PlanCheck::Misaligned);
    }
    void validatorCatchesBadPlans()
    {
        QFETCH(std::vector<Bytes>, offsets);
        QFETCH(Bytes, arena);
        QFETCH(int, check);
        auto problem = fiveTensors();
        if (check == int(PlanCheck::Misaligned))
            problem.alignment = 64;
        Plan plan;
        plan.offsets = offsets;
        plan.arenaSize = arena;
        const auto result = validatePlan(problem, plan);
        QCOMPARE(int(result.check), check);
        QVERIFY(!result.message.empty());
    }
    void validatorCatchesBelowLowerBoundAndCapacity()
    {
        // Two buffers that never meet share offset 0, but the arena claims less than the lower bound.
        auto problem = makeProblem({ { "a", 100, 0, 1 }, { "b", 100, 1, 2 } });
        Plan plan { "", { 0, 0 }, 50, {}, 0 };
        QCOMPARE(validatePlan(problem, plan).check, PlanCheck::OutsideArena);
        plan.arenaSize = 100;
        QVERIFY(validatePlan(problem, plan).ok());
        problem.capacity = 99;
        QCOMPARE(validatePlan(problem, plan).check, PlanCheck::OverCapacity);
    }

    void randomProblems()
    {
        std::mt19937 rng(20261130);
        int checked = 0;
        PlanOptions quick; // the exact planner: a short search per problem keeps this test fast
        quick.timeLimitSeconds = 0.02;
        for (int round = 0; round < 3000; ++round) {
            const auto problem = randomProblem(rng, round);
            const Bytes bound = lowerBound(problem);
            for (const auto& planner : planners()) {
                const auto plan = runPlanner(*planner, problem, {}, quick);
                QVERIFY(plan);
                const auto check = validatePlan(problem, *plan);
                if (!check.ok())
                    QFAIL(qPrintable(QString::fromStdString(std::string(planner->name()) + " round " + std::to_string(round) + ": "
                        + check.message + "\n" + renderAsciiPlan(problem, *plan))));
                QVERIFY(plan->arenaSize >= bound);
                QVERIFY(plan->arenaSize <= sumOfSizes(problem));
                if (planner->name() == "coloring")
                    QCOMPARE(computeMetrics(problem, *plan).colors, maxOverlapDepth(problem));
                if (planner->name() == "first-fit") {
                    const auto reference = referenceFirstFit(problem);
                    QCOMPARE(plan->offsets, reference.offsets);
                    QCOMPARE(plan->arenaSize, reference.arenaSize);
                }
                if (planner->name() == "greedy-by-size") {
                    // Empty buffers go last and take no room; among equal offsets their place is arbitrary.
                    const auto reference = referenceGreedyBySize(problem);
                    for (std::size_t b = 0; b < problem.buffers.size(); ++b)
                        if (problem.buffers[b].size > 0)
                            QCOMPARE(plan->offsets[b], reference.offsets[b]);
                    QCOMPARE(plan->arenaSize, reference.arenaSize);
                }
                ++checked;
            }
        }
        QVERIFY(checked >= 3000 * 8);
    }

    // Thousands of buffers over long and short lifetimes: the greedy offsets equal the quadratic
    // reference's (the tree and the start-ordered scan miss or double no conflict).
    void greedyBySizeMatchesReferenceOnNetworkShapes()
    {
        for (const unsigned seed : { 1u, 2u, 3u }) {
            const auto problem = core::networkShapedProblem(3000, seed);
            const auto plan = runPlanner(*plannerByName("greedy-by-size"), problem);
            QVERIFY(plan);
            QVERIFY2(validatePlan(problem, *plan).ok(), validatePlan(problem, *plan).message.c_str());
            const auto reference = referenceGreedyBySize(problem);
            QCOMPARE(plan->offsets, reference.offsets);
            QCOMPARE(plan->arenaSize, reference.arenaSize);
        }
    }

    // The default planner at scale: 300k buffers plan to a valid arena between the lower bound and
    // greedy-by-size's (no timing asserted: `memplan bench --sizes` measures speed).
    void defaultPlannerAtThreeHundredThousandBuffers()
    {
        const auto problem = core::networkShapedProblem(300000, 1);
        const auto greedy = runPlanner(*plannerByName("greedy-by-size"), problem);
        QVERIFY(greedy);
        QVERIFY2(validatePlan(problem, *greedy).ok(), validatePlan(problem, *greedy).message.c_str());
        const auto plan = runPlanner(*plannerByName(kDefaultPlanner), problem);
        QVERIFY(plan);
        const auto check = validatePlan(problem, *plan);
        QVERIFY2(check.ok(), check.message.c_str());
        QVERIFY(plan->arenaSize >= lowerBound(problem));
        QVERIFY(plan->arenaSize <= greedy->arenaSize);
        QVERIFY(plan->arenaSize < sumOfSizes(problem) / 100); // it reuses memory: ~15 buffers live per step
    }

    void cancelledPlanningStops()
    {
        PlanProblem problem;
        problem.steps = 100000;
        for (int i = 0; i < 20000; ++i)
            problem.buffers.push_back({ "b", { i, i + 10 }, 64, TensorKind::Activation, {} });
        auto flag = std::make_shared<std::atomic<bool>>(true);
        const CancelToken cancelled(flag);
        for (const auto& planner : planners()) {
            if (planner->name() == "naive")
                continue; // O(n) and instant: nothing to cancel
            const auto plan = planner->plan(problem, cancelled);
            QVERIFY2(!plan, std::string(planner->name()).c_str());
            QCOMPARE(plan.error().code, ErrorCode::Cancelled);
        }
    }
};

QTEST_GUILESS_MAIN(TestPlanners)
#include "tst_planners.moc"
