// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The near-optimal planners (issue 6): `exact` against a brute-force optimum on small random
// problems, both planners on the public allocation benchmarks, time limits and cancellation.
#include "io/problemcsv.h"
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"

#include <QTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

using namespace core;

namespace {
const std::string kBenchmarks = MEMPLAN_BENCHMARK_DIR "/";

// Brute force: every order of the buffers, each placed at its lowest offset that clears the placed
// buffers it conflicts with. Placing an optimal packing's buffers in order of offset this way
// never raises one, so the best over all orders is optimal. Branch and bound on the arena only.
class BruteForce {
public:
    explicit BruteForce(const PlanProblem& problem)
        : m_problem(problem)
        , m_offsets(problem.buffers.size(), -1)
    {
        for (const auto& b : problem.buffers)
            m_best += alignUp(b.size, problem.alignment); // naive packing
        // Live bytes of the aligned sizes: once an order reaches it, nothing can do better.
        std::map<Step, Bytes> delta;
        for (const auto& b : problem.buffers) {
            delta[b.lifetime.start] += alignUp(b.size, problem.alignment);
            delta[b.lifetime.end] -= alignUp(b.size, problem.alignment);
        }
        Bytes live = 0;
        for (const auto& [step, d] : delta)
            m_floor = std::max(m_floor, live += d);
    }
    Bytes solve()
    {
        search(0, 0);
        return m_best;
    }

private:
    Bytes size(std::size_t i) const { return alignUp(m_problem.buffers[i].size, m_problem.alignment); }
    Bytes lowestOffset(std::size_t i) const
    {
        std::vector<std::pair<Bytes, Bytes>> busy;
        for (std::size_t j = 0; j < m_offsets.size(); ++j)
            if (m_offsets[j] >= 0 && size(j) > 0 && m_problem.buffers[j].lifetime.overlaps(m_problem.buffers[i].lifetime))
                busy.emplace_back(m_offsets[j], m_offsets[j] + size(j));
        std::sort(busy.begin(), busy.end());
        Bytes offset = 0;
        for (const auto& [lo, hi] : busy) {
            if (lo >= offset + size(i))
                break;
            offset = std::max(offset, hi);
        }
        return offset;
    }
    void search(std::size_t placed, Bytes top)
    {
        if (top >= m_best || m_best == m_floor)
            return;
        if (placed == m_offsets.size()) {
            m_best = top;
            return;
        }
        for (std::size_t i = 0; i < m_offsets.size(); ++i) {
            if (m_offsets[i] >= 0)
                continue;
            m_offsets[i] = lowestOffset(i);
            search(placed + 1, std::max(top, m_offsets[i] + size(i)));
            m_offsets[i] = -1;
        }
    }
    const PlanProblem& m_problem;
    std::vector<Bytes> m_offsets;
    Bytes m_best = 0;
    Bytes m_floor = 0;
};

PlanProblem randomSmallProblem(std::mt19937& rng, int maxBuffers)
{
    PlanProblem p;
    const int n = std::uniform_int_distribution<int>(1, maxBuffers)(rng);
    p.steps = std::uniform_int_distribution<int>(2, 12)(rng);
    p.alignment = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? 4 : 1;
    const int sizeKind = std::uniform_int_distribution<int>(0, 2)(rng);
    for (int i = 0; i < n; ++i) {
        const Step start = std::uniform_int_distribution<int>(0, p.steps - 1)(rng);
        const Step end = std::uniform_int_distribution<int>(start + 1, p.steps)(rng);
        Bytes size = sizeKind == 0 ? std::uniform_int_distribution<Bytes>(1, 10)(rng)
            : sizeKind == 1        ? Bytes(1) << std::uniform_int_distribution<int>(0, 4)(rng)
                                   : std::uniform_int_distribution<Bytes>(1, 100)(rng);
        p.buffers.push_back({ "b" + std::to_string(i), { start, end }, alignUp(size, p.alignment), TensorKind::Activation, {} });
    }
    return p;
}

std::vector<std::string> benchmarkFiles()
{
    std::vector<std::string> files;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(kBenchmarks, ec))
        if (entry.path().extension() == ".csv")
            files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

QString failure(const std::string& what, const PlanProblem& problem, const Plan& plan)
{
    return QString::fromStdString(what + "\n" + renderAsciiPlan(problem, plan));
}
} // namespace

class TestExact : public QObject {
    Q_OBJECT
private slots:
    void registered()
    {
        QVERIFY(plannerByName("exact") != nullptr);
        QVERIFY(plannerByName("best-of-greedy") != nullptr);
    }

    void exactMatchesBruteForce()
    {
        std::mt19937 rng(6);
        const Planner& exact = *plannerByName("exact");
        PlanOptions options;
        options.timeLimitSeconds = 10; // never reached: these prove optimality in milliseconds
        for (int round = 0; round < 5000; ++round) {
            const auto problem = randomSmallProblem(rng, round < 2000 ? 7 : round < 4500 ? 10 : 12);
            const auto plan = runPlanner(exact, problem, {}, options);
            QVERIFY(plan);
            const auto check = validatePlan(problem, *plan);
            QVERIFY2(check.ok(), qPrintable(failure("round " + std::to_string(round) + ": " + check.message, problem, *plan)));
            const Bytes optimum = BruteForce(problem).solve();
            if (plan->arenaSize != optimum || !plan->provenOptimal)
                QFAIL(qPrintable(failure("round " + std::to_string(round) + ": exact " + std::to_string(plan->arenaSize)
                        + (plan->provenOptimal ? " (proven)" : " (not proven)") + ", brute force " + std::to_string(optimum),
                    problem, *plan)));
            QCOMPARE(plan->provenLowerBound, optimum);
        }
    }

    // Every planner on every public benchmark: valid plans; a claimed optimum equals the proven bound
    // and is at least the lower bound; best-of-greedy within 10 % of the lower bound (issue 6 target).
    void benchmarks_data()
    {
        QTest::addColumn<QString>("file");
        const auto files = benchmarkFiles();
        QCOMPARE(files.size(), std::size_t(11)); // the repository ships all eleven
        for (const auto& file : files)
            QTest::newRow(std::filesystem::path(file).stem().string().c_str()) << QString::fromStdString(file);
    }
    void benchmarks()
    {
        QFETCH(QString, file);
        const auto csv = importProblemCsv(file.toStdString());
        QVERIFY2(csv, csv ? "" : csv.error().message.c_str());
        const auto& problem = csv->problem;
        const Bytes bound = lowerBound(problem);
        PlanOptions options;
        options.timeLimitSeconds = 1; // a short search; docs/BENCHMARKS.md has the long runs
        for (const auto& planner : planners()) {
            const auto plan = runPlanner(*planner, problem, {}, options);
            QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
            const auto check = validatePlan(problem, *plan);
            QVERIFY2(check.ok(), (std::string(planner->name()) + ": " + check.message).c_str());
            QVERIFY(plan->arenaSize >= bound);
            if (plan->provenOptimal) {
                QCOMPARE(plan->provenLowerBound, plan->arenaSize);
                QVERIFY(plan->arenaSize == bound || plan->provenLowerBound > bound);
            }
            QVERIFY(plan->provenLowerBound <= plan->arenaSize);
            QVERIFY(plan->provenLowerBound == 0 || plan->provenLowerBound >= bound);
            if (planner->name() == "exact")
                QVERIFY2(plan->seconds < 1.5, qPrintable(QString::number(plan->seconds)));
            if (planner->name() == "best-of-greedy") {
                const double over = fragmentation(plan->arenaSize, bound);
                QVERIFY2(over <= 0.10, qPrintable(QString::number(100 * over) + QStringLiteral(" % over the lower bound")));
            }
        }
    }

    // The capability behind the benchmark: nine of the eleven public problems pack at exactly their
    // lower bound, proven. Each takes well under a second on a 2-core machine (docs/BENCHMARKS.md);
    // the generous limit only keeps a shared, loaded machine from failing the test.
    void exactPacksNinePublicProblemsAtTheBound()
    {
        const auto files = benchmarkFiles();
        QCOMPARE(files.size(), std::size_t(11)); // the repository ships all eleven
        const Planner& exact = *plannerByName("exact");
        PlanOptions options;
        options.timeLimitSeconds = 30;
        int solved = 0;
        for (const auto& file : files) {
            const auto name = std::filesystem::path(file).stem().string();
            if (name[0] == 'D' || name[0] == 'J')
                continue; // open problems: no packing at their lower bound is known
            const auto csv = importProblemCsv(file);
            QVERIFY2(csv, csv ? "" : csv.error().message.c_str());
            const auto plan = runPlanner(exact, csv->problem, {}, options);
            QVERIFY(plan);
            const auto check = validatePlan(csv->problem, *plan);
            QVERIFY2(check.ok(), (name + ": " + check.message).c_str());
            QVERIFY2(plan->provenOptimal && plan->arenaSize == lowerBound(csv->problem),
                (name + ": " + std::to_string(plan->arenaSize) + " bytes, " + plan->details).c_str());
            ++solved;
        }
        QCOMPARE(solved, 9);
    }

    // best-of-greedy is deterministic: node budgets and a fixed seed, no clock. Same problem, same
    // offsets, also on a copy with the buffers listed in reverse (a different problem to it).
    void bestOfGreedyIsDeterministic()
    {
        const Planner& planner = *plannerByName("best-of-greedy");
        for (const char* name : { "D.1048576.csv", "J.1048576.csv" }) {
            const auto csv = importProblemCsv(kBenchmarks + name);
            QVERIFY2(csv, csv ? "" : csv.error().message.c_str());
            const auto& problem = csv->problem;
            const auto first = runPlanner(planner, problem);
            QVERIFY(first);
            QVERIFY(validatePlan(problem, *first).ok());
            for (int run = 0; run < 3; ++run) {
                const auto again = runPlanner(planner, problem);
                QVERIFY(again);
                QCOMPARE(again->arenaSize, first->arenaSize);
                QVERIFY(again->offsets == first->offsets);
            }
            PlanProblem reversed = problem;
            std::reverse(reversed.buffers.begin(), reversed.buffers.end());
            const auto a = runPlanner(planner, reversed);
            const auto b = runPlanner(planner, reversed);
            QVERIFY(a && b);
            QVERIFY(validatePlan(reversed, *a).ok());
            QVERIFY(a->offsets == b->offsets);
        }
    }

    // Cancelled before it starts: an error, not a plan; the exact planner reports the same.
    void bestOfGreedyCancels()
    {
        const auto csv = importProblemCsv(kBenchmarks + "K.1048576.csv");
        QVERIFY2(csv, csv ? "" : csv.error().message.c_str());
        auto flag = std::make_shared<std::atomic<bool>>(true);
        const auto plan = runPlanner(*plannerByName("best-of-greedy"), csv->problem, CancelToken(flag));
        QVERIFY(!plan);
        QCOMPARE(plan.error().code, ErrorCode::Cancelled);
    }

    void capacityMode()
    {
        const auto csv = importProblemCsv(kBenchmarks + "C.1048576.csv");
        QVERIFY2(csv, csv ? "" : csv.error().message.c_str());
        const auto& problem = csv->problem;
        const Planner& exact = *plannerByName("exact");
        PlanOptions options;
        options.timeLimitSeconds = 5;
        options.capacity = 1048576; // the capacity the problem was posed with
        const auto fits = runPlanner(exact, problem, {}, options);
        QVERIFY2(fits, fits ? "" : fits.error().message.c_str());
        QVERIFY(fits->arenaSize <= options.capacity);
        QVERIFY(validatePlan(problem, *fits).ok());
        options.capacity = lowerBound(problem) - 1;
        const auto none = runPlanner(exact, problem, {}, options);
        QVERIFY(!none);
        QCOMPARE(none.error().code, ErrorCode::Infeasible);
        QVERIFY(none.error().message.find("lower bound") != std::string::npos);
    }

    // A hard problem: the search is still running when the flag is set; the best plan comes back
    // (a Plan, not an error) within ~50 ms, and progress was reported on the way.
    void cancelReturnsBestSoFar()
    {
        const auto csv = importProblemCsv(kBenchmarks + "D.1048576.csv");
        QVERIFY2(csv, csv ? "" : csv.error().message.c_str());
        const auto& problem = csv->problem;
        auto flag = std::make_shared<std::atomic<bool>>(false);
        std::atomic<int> reports { 0 };
        std::atomic<long long> lastArena { 0 };
        PlanOptions options;
        options.timeLimitSeconds = 60;
        options.progress = [&](const PlanProgress& p) {
            ++reports;
            lastArena = p.bestArena;
        };
        using Clock = std::chrono::steady_clock;
        Clock::time_point cancelledAt;
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(400));
            cancelledAt = Clock::now();
            flag->store(true);
        });
        const auto plan = runPlanner(*plannerByName("exact"), problem, CancelToken(flag), options);
        const auto returnedAt = Clock::now();
        canceller.join();
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        QVERIFY(validatePlan(problem, *plan).ok());
        const double lag = std::chrono::duration<double>(returnedAt - cancelledAt).count();
        QVERIFY2(lag < 0.1, qPrintable(QStringLiteral("returned %1 s after cancel").arg(lag)));
        QVERIFY(!plan->provenOptimal);
        QVERIFY(plan->details.find("cancelled") != std::string::npos);
        QVERIFY(reports > 0);
        QCOMPARE(lastArena.load(), static_cast<long long>(plan->arenaSize));
    }

    void timeLimitIsKept()
    {
        const auto csv = importProblemCsv(kBenchmarks + "J.1048576.csv");
        QVERIFY2(csv, csv ? "" : csv.error().message.c_str());
        PlanOptions options;
        options.timeLimitSeconds = 0.3;
        const auto plan = runPlanner(*plannerByName("exact"), csv->problem, {}, options);
        QVERIFY(plan);
        // Kept means stopped soon after it, not within a benchmark's margin: this machine is shared and
        // noisy, and a search that ignored the limit would run on for minutes.
        QVERIFY2(plan->seconds < options.timeLimitSeconds + 0.5, qPrintable(QString::number(plan->seconds)));
        QVERIFY(plan->provenLowerBound >= lowerBound(csv->problem));
        QVERIFY(validatePlan(csv->problem, *plan).ok());
    }

    void emptyAndTrivialProblems()
    {
        PlanProblem empty;
        const auto plan = runPlanner(*plannerByName("exact"), empty);
        QVERIFY(plan);
        QCOMPARE(plan->arenaSize, Bytes(0));
        QVERIFY(plan->provenOptimal);
        PlanProblem zeros;
        zeros.steps = 3;
        zeros.buffers.push_back({ "z", { 0, 3 }, 0, TensorKind::Activation, {} });
        zeros.buffers.push_back({ "a", { 1, 2 }, 64, TensorKind::Activation, {} });
        for (const char* name : { "exact", "best-of-greedy" }) {
            const auto p = runPlanner(*plannerByName(name), zeros);
            QVERIFY(p);
            QCOMPARE(p->arenaSize, Bytes(64));
            QVERIFY(validatePlan(zeros, *p).ok());
        }
    }
};

QTEST_GUILESS_MAIN(TestExact)
#include "tst_exact.moc"
