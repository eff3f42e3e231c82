// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// LLM decode scenario: KV pools against brute-force recounts, the largest-batch search, the
// per-step activation arena, config errors and the `memplan scenario llm` command.
#include "planners/metrics.h"
#include "planners/planner.h"
#include "planners/validate.h"
#include "scenarios/kvpools.h"
#include "scenarios/llmreport.h"
#include "scenarios/llmscenario.h"
#include "scenarios/llmstepgraph.h"

#include "clirun.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <map>
#include <set>
#include <tuple>

using core::Bytes;
using core::KvPolicy;

namespace {

// 16 bytes per token (1 layer × 2 KV heads × head dim 4 × 1 byte × K and V): small enough for a
// byte-by-byte recount of the whole pool.
core::LlmConfig tinyConfig()
{
    core::LlmConfig c;
    c.layers = 1;
    c.hidden = 8;
    c.heads = 2;
    c.dtypeBytes = 1;
    c.batch = 6;
    c.promptRange = { 1, 20 };
    c.outputRange = { 1, 30 };
    c.maxLength = 64;
    c.blockTokens = 4;
    c.chunkTokens = 16;
    c.capacity = 8192 + 40; // a tail smaller than any unit
    return c;
}

QString policyName(KvPolicy policy) { return QString::fromLatin1(core::kvPolicyName(policy).data()); }

struct Recount {
    Bytes inUse = 0, reserved = 0, internal = 0, external = 0;
    std::int64_t allocations = 0;
};

using Run = CliRun;

const QStringList kSmallModel { QStringLiteral("scenario"), QStringLiteral("llm"), QStringLiteral("--layers"), QStringLiteral("2"),
    QStringLiteral("--hidden"), QStringLiteral("64"), QStringLiteral("--heads"), QStringLiteral("4"), QStringLiteral("--batch"),
    QStringLiteral("4"), QStringLiteral("--prompt-len"), QStringLiteral("8..40"), QStringLiteral("--output-len"),
    QStringLiteral("4..24"), QStringLiteral("--max-len"), QStringLiteral("128"), QStringLiteral("--block-tokens"),
    QStringLiteral("8") };

} // namespace

class TestLlmScenario : public QObject {
    Q_OBJECT
private slots:
    void bytesPerToken();
    void sequencesArePrefixesOfLargerBatches();
    void pagedNeverSharesBlocks_data();
    void pagedNeverSharesBlocks();
    void wasteMatchesBruteForce_data();
    void wasteMatchesBruteForce();
    void contiguousReservesBatchTimesMaxLength();
    void pagedReservesWholeBlocks();
    void twoLevelThresholdRule();
    void refusalNeverOvercommits();
    void largestBatchOnTinyCapacity_data();
    void largestBatchOnTinyCapacity();
    void stepArenaPlansAreValid();
    void scenarioArenaGrowsWithContext();
    void badConfig_data();
    void badConfig();
    void listsPairInStep();
    void blockMap();
    void cliReportAndJson();
    void cliErrors_data();
    void cliErrors();
};

void TestLlmScenario::bytesPerToken()
{
    core::LlmConfig c; // 32 layers, hidden 4096, 32 heads, float16
    QCOMPARE(c.headDim(), std::int64_t(128));
    QCOMPARE(c.kvBytesPerToken(), Bytes(2) * 32 * 32 * 128 * 2); // 512 KiB
    c.kvHeads = 8; // grouped-query attention: a quarter of the cache
    QCOMPARE(c.kvBytesPerToken(), Bytes(128) << 10);
    QCOMPARE(tinyConfig().kvBytesPerToken(), Bytes(16));
}

void TestLlmScenario::sequencesArePrefixesOfLargerBatches()
{
    auto c = tinyConfig();
    const auto small = core::makeSequences(c, 5), large = core::makeSequences(c, 50);
    std::set<std::int64_t> prompts;
    for (int i = 0; i < 5; ++i) {
        QCOMPARE(small[i].prompt, large[i].prompt);
        QCOMPARE(small[i].output, large[i].output);
    }
    for (const auto& s : large) {
        QVERIFY(s.prompt >= 1 && s.prompt <= 20);
        QVERIFY(s.output >= 1 && s.output <= 30);
        QCOMPARE(s.arrival, 0);
        prompts.insert(s.prompt);
    }
    QVERIFY2(prompts.size() > 5, "lengths are drawn, not constant");
    c.seed = 2;
    const auto other = core::makeSequences(c, 50);
    bool differs = false;
    for (int i = 0; i < 50; ++i)
        differs |= other[i].prompt != large[i].prompt;
    QVERIFY(differs);
    c.promptLengths = { 3, 5 };
    c.arrivalInterval = 7;
    const auto listed = core::makeSequences(c, 5);
    QCOMPARE(listed[4].prompt, std::int64_t(3));
    QCOMPARE(listed[3].prompt, std::int64_t(5));
    QCOMPARE(listed[3].arrival, core::Step(21));
}

void TestLlmScenario::pagedNeverSharesBlocks_data()
{
    QTest::addColumn<int>("blockTokens");
    QTest::addColumn<int>("interval");
    QTest::addColumn<int>("batch");
    QTest::newRow("block 4, all at once") << 4 << 0 << 6;
    QTest::newRow("block 1, staggered") << 1 << 3 << 30;
    QTest::newRow("block 16, staggered") << 16 << 2 << 40;
    QTest::newRow("block 4, staggered, reuse") << 4 << 5 << 60;
}

void TestLlmScenario::pagedNeverSharesBlocks()
{
    QFETCH(int, blockTokens);
    QFETCH(int, interval);
    QFETCH(int, batch);
    auto c = tinyConfig();
    c.blockTokens = blockTokens;
    c.chunkTokens = 16 * blockTokens;
    c.arrivalInterval = interval;
    c.batch = batch;
    const auto sequences = core::makeSequences(c, batch);
    int stepsChecked = 0;
    std::int64_t reused = 0;
    std::map<std::int64_t, int> lastOwner; // block -> the sequence that held it last
    const auto run = core::simulateKvPool(KvPolicy::Paged, c.poolConfig(), sequences, [&](core::Step step, const core::KvPool& kv) {
        const auto& pool = static_cast<const core::PagedKvPool&>(kv);
        std::map<std::int64_t, int> owner;
        for (const auto& s : sequences) {
            const auto& table = pool.blockTable(s.id);
            if (!s.liveAt(step)) {
                QVERIFY2(table.empty(), qPrintable(QStringLiteral("step %1: ended sequence %2 holds blocks").arg(step).arg(s.id)));
                continue;
            }
            QCOMPARE(static_cast<std::int64_t>(table.size()), (s.tokensAt(step) + blockTokens - 1) / blockTokens);
            for (const auto block : table) {
                QVERIFY(block >= 0 && block < pool.blockCount());
                const auto [it, fresh] = owner.emplace(block, s.id);
                QVERIFY2(fresh,
                    qPrintable(QStringLiteral("step %1: block %2 given to sequences %3 and %4").arg(step).arg(block).arg(it->second).arg(s.id)));
                const auto [last, first] = lastOwner.emplace(block, s.id);
                if (!first && last->second != s.id) {
                    ++reused;
                    last->second = s.id;
                }
            }
        }
        const auto owners = pool.blockOwners();
        for (std::size_t b = 0; b < owners.size(); ++b) {
            const auto it = owner.find(static_cast<std::int64_t>(b));
            QCOMPARE(owners[b], it == owner.end() ? -1 : it->second);
        }
        ++stepsChecked;
    });
    QVERIFY(!run.refusal);
    QCOMPARE(stepsChecked, core::timelineSteps(sequences));
    if (interval > 0)
        QVERIFY2(reused > 0, "freed blocks are handed out again");
}

void TestLlmScenario::wasteMatchesBruteForce_data()
{
    QTest::addColumn<int>("policy");
    QTest::addColumn<int>("interval");
    QTest::addColumn<int>("batch");
    for (const auto policy : core::kvPolicies())
        for (const auto& [interval, batch] : { std::pair { 0, 6 }, std::pair { 2, 25 }, std::pair { 4, 12 } })
            QTest::addRow("%s/interval %d/batch %d", core::kvPolicyName(policy).data(), interval, batch)
                << static_cast<int>(policy) << interval << batch;
}

// Recounts every figure from the pool's extents byte by byte: which byte belongs to whom, which
// bytes are free, which free bytes lie in a whole free unit.
void TestLlmScenario::wasteMatchesBruteForce()
{
    QFETCH(int, policy);
    QFETCH(int, interval);
    QFETCH(int, batch);
    auto c = tinyConfig();
    c.arrivalInterval = interval;
    c.batch = batch;
    c.capacity = 16 * 1024 + 40;
    const auto config = c.poolConfig();
    const auto sequences = core::makeSequences(c, batch);
    std::vector<Recount> recounts;
    std::set<std::tuple<int, Bytes, Bytes>> previous;
    const auto run = core::simulateKvPool(static_cast<KvPolicy>(policy), config, sequences, [&](core::Step step, const core::KvPool& pool) {
        std::vector<int> owner(static_cast<std::size_t>(config.capacity), -1);
        std::set<std::tuple<int, Bytes, Bytes>> current;
        Recount r;
        for (const auto& e : pool.extents()) {
            QVERIFY(e.offset >= 0 && e.offset + e.size <= config.capacity);
            QCOMPARE(e.offset % e.size, Bytes(0)); // units sit at multiples of their size
            for (Bytes b = e.offset; b < e.offset + e.size; ++b) {
                QVERIFY2(owner[b] == -1, qPrintable(QStringLiteral("step %1: byte %2 owned twice").arg(step).arg(b)));
                owner[b] = e.sequence;
            }
            QVERIFY(sequences[e.sequence].liveAt(step));
            r.reserved += e.size;
            current.insert({ e.sequence, e.offset, e.size });
            r.allocations += previous.count({ e.sequence, e.offset, e.size }) ? 0 : 1;
        }
        for (const auto& s : sequences)
            if (s.liveAt(step))
                r.inUse += s.tokensAt(step) * config.bytesPerToken;
        r.internal = r.reserved - r.inUse;
        const Bytes unit = pool.unitBytes();
        Bytes freeBytes = 0, usable = 0;
        for (Bytes b = 0; b < config.capacity; ++b)
            freeBytes += owner[b] == -1;
        for (Bytes start = 0; start + unit <= config.capacity; start += unit)
            if (std::all_of(owner.begin() + start, owner.begin() + start + unit, [](int o) { return o == -1; }))
                usable += unit;
        r.external = freeBytes - usable;
        previous = std::move(current);
        recounts.push_back(r);
    });
    QVERIFY2(!run.refusal, "the capacity fits this case");
    QCOMPARE(run.steps.size(), recounts.size());
    Bytes peakExternal = 0;
    double internalSum = 0, reservedSum = 0;
    for (std::size_t s = 0; s < recounts.size(); ++s) {
        const auto& got = run.steps[s];
        const auto& want = recounts[s];
        const auto where = QStringLiteral("step %1").arg(s);
        QVERIFY2(got.inUse == want.inUse, qPrintable(where));
        QVERIFY2(got.reserved == want.reserved, qPrintable(where));
        QVERIFY2(got.internal == want.internal, qPrintable(where));
        QVERIFY2(got.external == want.external,
            qPrintable(where + QStringLiteral(": external %1, recount %2").arg(got.external).arg(want.external)));
        QVERIFY2(got.allocations == want.allocations, qPrintable(where));
        QVERIFY(got.internal >= 0);
        peakExternal = std::max(peakExternal, want.external);
        internalSum += static_cast<double>(want.internal);
        reservedSum += static_cast<double>(want.reserved);
    }
    QCOMPARE(run.peakExternal, peakExternal);
    QVERIFY(std::abs(run.wasteFraction - internalSum / reservedSum) < 1e-12);
    if (static_cast<KvPolicy>(policy) == KvPolicy::TwoLevel && interval > 0)
        QVERIFY2(peakExternal > 40, "partly used slabs leave free blocks no chunk can use");
}

void TestLlmScenario::contiguousReservesBatchTimesMaxLength()
{
    auto c = core::LlmConfig {}; // the 32-layer default: 512 KiB per token
    const auto sequences = core::makeSequences(c, c.batch);
    const auto run = core::simulateKvPool(KvPolicy::Contiguous, c.poolConfig(), sequences);
    QVERIFY(!run.refusal);
    QCOMPARE(run.steps.front().reserved, Bytes(c.batch) * c.maxLength * c.kvBytesPerToken());
    QCOMPARE(run.peakReserved, Bytes(32) << 30);
    QCOMPARE(run.allocations, std::int64_t(c.batch));
    for (std::size_t s = 0; s < run.steps.size(); ++s)
        QCOMPARE(run.steps[s].reserved, Bytes(run.steps[s].live) * c.maxLength * c.kvBytesPerToken());
    QVERIFY(run.wasteFraction > 0.5); // average sequence is far below 4096 tokens
}

void TestLlmScenario::pagedReservesWholeBlocks()
{
    auto c = tinyConfig();
    c.arrivalInterval = 3;
    c.batch = 20;
    c.capacity = Bytes(1) << 20;
    const auto sequences = core::makeSequences(c, c.batch);
    const auto run = core::simulateKvPool(KvPolicy::Paged, c.poolConfig(), sequences);
    QVERIFY(!run.refusal);
    std::int64_t totalBlocks = 0;
    for (std::size_t step = 0; step < run.steps.size(); ++step) {
        Bytes want = 0;
        for (const auto& s : sequences)
            if (s.liveAt(static_cast<core::Step>(step)))
                want += (s.tokensAt(static_cast<core::Step>(step)) + c.blockTokens - 1) / c.blockTokens * c.blockTokens
                    * c.kvBytesPerToken();
        QCOMPARE(run.steps[step].reserved, want);
        QVERIFY(run.steps[step].internal < Bytes(run.steps[step].live) * c.blockTokens * c.kvBytesPerToken());
        QCOMPARE(run.steps[step].external, Bytes(0)); // 1 MiB is a whole number of 64-byte blocks
    }
    for (const auto& s : sequences)
        totalBlocks += (s.prompt + s.output - 1 + c.blockTokens - 1) / c.blockTokens;
    QCOMPARE(run.allocations, totalBlocks);
}

void TestLlmScenario::twoLevelThresholdRule()
{
    core::KvPoolConfig config { 4096, 16, 64, 4, 16 }; // blocks 64 B, chunks 256 B
    auto pool = core::makeKvPool(KvPolicy::TwoLevel, config);
    QVERIFY(pool->grow(0, 10).granted); // short: 3 small blocks
    QCOMPARE(pool->reservedBytes(), Bytes(3 * 64));
    QCOMPARE(pool->allocations(), std::int64_t(3));
    QVERIFY(pool->grow(1, 40).granted); // long: 4 small blocks (16 tokens) + 2 chunks (32 tokens)
    QCOMPARE(pool->reservedBytes(), Bytes(3 * 64 + 4 * 64 + 2 * 256));
    QCOMPARE(pool->allocations(), std::int64_t(3 + 6));
    // 7 small blocks fill one slab page (4 blocks) and 3 of a second; its free block is external
    // fragmentation (no chunk fits there).
    QCOMPARE(pool->externalBytes(), Bytes(64));
    pool->release(0);
    pool->release(1);
    QCOMPARE(pool->reservedBytes(), Bytes(0));
    QCOMPARE(pool->externalBytes(), Bytes(0));
    const auto growth = pool->grow(2, 16 + 15 * 16 + 1); // needs 16 chunks + 1 slab page: 17 of 16 pages
    QVERIFY(!growth.granted);
    QCOMPARE(pool->reservedBytes(), Bytes(0)); // all or nothing
    QVERIFY(pool->grow(2, 16 + 15 * 16).granted); // 1 slab + 15 chunks: every page
    QCOMPARE(pool->reservedBytes(), Bytes(4096));
}

void TestLlmScenario::refusalNeverOvercommits()
{
    auto c = tinyConfig();
    c.capacity = 4096 + 40; // four contiguous regions of 1 KiB for six sequences
    const auto sequences = core::makeSequences(c, c.batch);
    const auto contiguous = core::simulateKvPool(KvPolicy::Contiguous, c.poolConfig(), sequences);
    QVERIFY(contiguous.refusal);
    QCOMPARE(contiguous.refusal->step, core::Step(0));
    QCOMPARE(contiguous.refusal->sequence, 4);
    QCOMPARE(contiguous.refusal->requested, Bytes(1024));
    QCOMPARE(contiguous.refusal->freeBytes, Bytes(40));
    QVERIFY(contiguous.steps.empty()); // nothing ran: the run stops before the refused step
    for (const auto policy : core::kvPolicies()) {
        c.capacity = 900;
        c.batch = 12;
        const auto run = core::simulateKvPool(policy, c.poolConfig(), core::makeSequences(c, c.batch));
        QVERIFY2(run.refusal, qPrintable(policyName(policy)));
        QVERIFY(run.peakReserved <= c.capacity);
        QVERIFY(run.refusal->requested > run.refusal->freeBytes || policy == KvPolicy::TwoLevel);
        QCOMPARE(static_cast<core::Step>(run.steps.size()), run.refusal->step);
    }
}

void TestLlmScenario::largestBatchOnTinyCapacity_data()
{
    QTest::addColumn<int>("policy");
    QTest::addColumn<int>("interval");
    for (const auto policy : core::kvPolicies())
        for (const int interval : { 0, 3 })
            QTest::addRow("%s/interval %d", core::kvPolicyName(policy).data(), interval) << static_cast<int>(policy) << interval;
}

void TestLlmScenario::largestBatchOnTinyCapacity()
{
    QFETCH(int, policy);
    QFETCH(int, interval);
    auto c = tinyConfig();
    c.capacity = 3000;
    c.arrivalInterval = interval;
    auto fits = [&](int batch) {
        return !core::simulateKvPool(static_cast<KvPolicy>(policy), c.poolConfig(), core::makeSequences(c, batch), {}, false)
                    .refusal.has_value();
    };
    int firstFailure = 0;
    std::vector<bool> table;
    for (int b = 1; b <= 80; ++b) {
        table.push_back(fits(b));
        if (!table.back() && firstFailure == 0)
            firstFailure = b;
    }
    QVERIFY2(firstFailure > 1, "one sequence fits");
    for (int b = firstFailure; b <= 80; ++b)
        QVERIFY2(!table[b - 1], qPrintable(QStringLiteral("batch %1 fits after %2 did not").arg(b).arg(firstFailure)));
    const auto largest = core::largestBatchThatFits(c, static_cast<KvPolicy>(policy), 4096);
    QCOMPARE(largest.batch, firstFailure - 1);
    QVERIFY(!largest.atLimit);
    const auto capped = core::largestBatchThatFits(c, static_cast<KvPolicy>(policy), firstFailure - 1);
    QCOMPARE(capped.batch, firstFailure - 1);
    QVERIFY(capped.atLimit);
    if (static_cast<KvPolicy>(policy) == KvPolicy::Contiguous && interval == 0)
        QCOMPARE(largest.batch, 2); // 3000 / (64 tokens × 16 bytes)
    c.capacity = 10;
    QCOMPARE(core::largestBatchThatFits(c, static_cast<KvPolicy>(policy)).batch, 0);
}

void TestLlmScenario::stepArenaPlansAreValid()
{
    core::LlmConfig c;
    c.layers = 2;
    c.hidden = 256;
    c.heads = 8;
    c.kvHeads = 2;
    for (const auto& shape : { core::LlmStepShape { 16, 16, 1024 }, core::LlmStepShape { 700, 3, 512 }, core::LlmStepShape { 1, 1, 16 } }) {
        const auto workload = core::decodeStepWorkload(c, shape);
        QVERIFY2(workload, workload ? "" : workload.error().message.c_str());
        QCOMPARE(workload->graph->ops.size(), std::size_t(2 * 12 + 1));
        // The scores of one layer: heads × tokens × context values, padded to 256-byte alignment.
        const auto scores = workload->graph->findTensor("layers.0.attn.scores.out");
        QVERIFY(scores);
        QCOMPARE(workload->graph->tensors[*scores].size, Bytes(8) * shape.tokens * shape.context * 2);
        QCOMPARE(workload->regions.size(), std::size_t(2)); // weights, persistent (KV cache)
        for (const auto& planner : core::planners()) {
            if (planner->name() == "exact")
                continue; // a search with a time limit; covered by its own tests
            const auto plan = core::runPlanner(*planner, workload->problem);
            QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
            const auto check = core::validatePlan(workload->problem, *plan);
            QVERIFY2(check.ok(), check.message.c_str());
            QVERIFY(plan->arenaSize >= core::lowerBound(workload->problem));
        }
    }
}

void TestLlmScenario::scenarioArenaGrowsWithContext()
{
    core::LlmConfig c; // small enough that the attention scores dominate the decode step
    c.layers = 2;
    c.hidden = 64;
    c.heads = 4;
    c.batch = 4;
    c.promptLengths = { 300 };
    c.outputLengths = { 100, 200 };
    c.maxLength = 512;
    c.blockTokens = 16;
    c.capacity = Bytes(1) << 20;
    const auto result = core::runLlmScenario(c);
    QVERIFY2(result, result ? "" : result.error().message.c_str());
    QCOMPARE(result->steps, core::Step(200));
    QCOMPARE(result->arenas.size(), std::size_t(200));
    QCOMPARE(result->arenas[0].tokens, std::int64_t(4 * 300)); // prefill
    QCOMPARE(result->arenas[1].tokens, std::int64_t(4));
    QCOMPARE(result->arenas[1].context, std::int64_t(304)); // 301 tokens in whole blocks of 16
    for (int s = 2; s < 100; ++s) // same batch, growing context
        QVERIFY(result->arenas[s].lowerBound >= result->arenas[s - 1].lowerBound);
    QVERIFY(result->arenas[99].arena > result->arenas[1].arena);
    QVERIFY(result->arenas[0].arena > 10 * result->arenas[1].arena); // the prefill step dwarfs a decode step
    QCOMPARE(result->arenas[150].sequences, 2); // two sequences ended at step 100
    QVERIFY(result->distinctPlans < result->steps / 4); // equal shapes share a plan
    QVERIFY(result->weightBytes > 0);
    QCOMPARE(result->policies.size(), std::size_t(3));
    for (const auto& p : result->policies) {
        QVERIFY(!p.run.refusal);
        QVERIFY(p.largest.batch >= c.batch);
    }
    const auto report = core::formatLlmReport(*result);
    QVERIFY2(report.find("two-level") != std::string::npos, report.c_str());
    QVERIFY2(report.find("200 steps") != std::string::npos, report.c_str());

    auto unknown = core::LlmRunOptions {};
    unknown.planner = "no-such-planner";
    const auto failed = core::runLlmScenario(c, unknown);
    QVERIFY(!failed);
    QVERIFY(failed.error().message.find("no-such-planner") != std::string::npos);
}

void TestLlmScenario::badConfig_data()
{
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("expected");
    const QStringList expected { QStringLiteral("layers (0) must be between"), QStringLiteral("hidden (100) must be a multiple of heads (32)"),
        QStringLiteral("kv heads (5) must divide heads (32)"), QStringLiteral("dtype bytes (3) must be 1, 2 or 4"),
        QStringLiteral("batch (0) must be between"), QStringLiteral("prompt length range 10..5"),
        QStringLiteral("exceeds max length (1000)"), QStringLiteral("chunk tokens (20) must be a multiple of block tokens (16)"),
        QStringLiteral("capacity (0 bytes)"), QStringLiteral("output lengths: 3 given but the batch has 2"),
        QStringLiteral("output length of sequence 1 is 0"), QStringLiteral("block tokens (0) must be between"),
        QStringLiteral("the timeline is too long"), QStringLiteral("holds no block of KV cache: one block of 16 tokens needs") };
    for (int i = 0; i < expected.size(); ++i)
        QTest::addRow("%d", i) << i << expected[i];
}

void TestLlmScenario::badConfig()
{
    QFETCH(int, which);
    QFETCH(QString, expected);
    core::LlmConfig c;
    QVERIFY(core::validateLlmConfig(c));
    switch (which) {
    case 0: c.layers = 0; break;
    case 1: c.hidden = 100; break;
    case 2: c.kvHeads = 5; break;
    case 3: c.dtypeBytes = 3; break;
    case 4: c.batch = 0; break;
    case 5: c.promptRange = { 10, 5 }; break;
    case 6: c.maxLength = 1000; break;
    case 7: c.chunkTokens = 20; break;
    case 8: c.capacity = 0; break;
    case 9: c.batch = 2; c.outputLengths = { 1, 2, 3 }; break;
    case 10: c.outputLengths = { 5, 0 }; break;
    case 11: c.blockTokens = 0; break;
    case 12: c.arrivalInterval = 100000; break; // 1.5 million steps
    case 13: c.capacity = c.kvBytesPerToken() * c.blockTokens - 1; break; // one byte short of a block
    }
    const auto status = core::validateLlmConfig(c);
    QVERIFY(!status);
    QCOMPARE(status.error().code, core::ErrorCode::InvalidArgument);
    QVERIFY2(QString::fromStdString(status.error().message).contains(expected), status.error().message.c_str());
    QVERIFY(!core::runLlmScenario(c)); // the run checks too, and does not crash
}

// Length lists repeat over the batch in step: only the pairs that meet must fit max length.
void TestLlmScenario::listsPairInStep()
{
    core::LlmConfig c;
    c.batch = 2;
    c.maxLength = 4096;
    c.promptLengths = { 100, 3000 };
    c.outputLengths = { 2000, 10 }; // 2100 and 3010 tokens
    QVERIFY2(core::validateLlmConfig(c), "in-step pairs that fit were refused");
    QVERIFY(core::runLlmScenario(c));
    c.outputLengths = { 10, 2000 }; // 110 and 5000
    auto status = core::validateLlmConfig(c);
    QVERIFY(!status);
    QVERIFY2(QString::fromStdString(status.error().message).contains(QStringLiteral("prompt 3000 plus output 2000 tokens exceeds max length (4096)")),
        status.error().message.c_str());
    c.batch = 6;
    c.outputLengths = { 2000, 10, 10 }; // lengths 2 and 3: sequence 3 pairs prompt 3000 with output 2000
    QVERIFY(!core::validateLlmConfig(c));
    c.promptLengths = { 100, 3000, 100, 3000 };
    c.outputLengths = { 2000, 10 }; // lengths 4 and 2: 3000 always meets 10
    QVERIFY(core::validateLlmConfig(c));
    c.promptRange = { 1, 3000 };
    c.promptLengths.clear(); // drawn: its longest may meet any output
    QVERIFY(!core::validateLlmConfig(c));
}

void TestLlmScenario::blockMap()
{
    auto c = tinyConfig();
    c.capacity = 16 * 1024;
    const auto sequences = core::makeSequences(c, c.batch);
    const auto map = core::pagedBlockMap(c, 3);
    QCOMPARE(map.step, core::Step(3));
    QCOMPARE(map.blockBytes, Bytes(64));
    QCOMPARE(map.blockCount, std::int64_t(256));
    std::map<int, std::int64_t> blocks;
    for (const int owner : map.owners)
        if (owner >= 0)
            ++blocks[owner];
    for (const auto& s : sequences)
        QCOMPARE(blocks[s.id], s.liveAt(3) ? (s.tokensAt(3) + 3) / 4 : std::int64_t(0));
    const auto late = core::pagedBlockMap(c, 100000); // past the end: the last step
    QCOMPARE(late.step, core::timelineSteps(sequences) - 1);
}

void TestLlmScenario::cliReportAndJson()
{
    QTemporaryDir dir;
    const auto json = dir.filePath(QStringLiteral("llm.json"));
    auto arguments = kSmallModel;
    arguments << QStringLiteral("--capacity") << QStringLiteral("64KiB") << QStringLiteral("--json") << json;
    const auto run = memplan(arguments);
    QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
    for (const char* text : { "contiguous", "paged", "two-level", "largest batch", "activation arena (best-of-greedy" })
        QVERIFY2(run.out.contains(QLatin1String(text)), qPrintable(run.out));
    QFile file(json);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto root = QJsonDocument::fromJson(file.readAll()).object();
    QCOMPARE(root.value(QStringLiteral("scenario")).toString(), QStringLiteral("llm"));
    QCOMPARE(root.value(QStringLiteral("kv_bytes_per_token")).toInteger(), 2 * 2 * 4 * 16 * 2);
    const auto config = root.value(QStringLiteral("config")).toObject();
    QCOMPARE(config.value(QStringLiteral("block_tokens")).toInt(), 8);
    QCOMPARE(config.value(QStringLiteral("capacity_bytes")).toInteger(), 64 * 1024);
    QCOMPARE(config.value(QStringLiteral("prompt_lengths")).toObject().value(QStringLiteral("max")).toInt(), 40);
    QCOMPARE(root.value(QStringLiteral("sequences")).toArray().size(), 4);
    const auto steps = root.value(QStringLiteral("steps")).toInt();
    QVERIFY(steps >= 4 && steps <= 24);
    const auto policies = root.value(QStringLiteral("policies")).toArray();
    QCOMPARE(policies.size(), 3);
    for (const auto& p : policies) {
        const auto o = p.toObject();
        const auto series = o.value(QStringLiteral("series")).toObject();
        const auto reserved = series.value(QStringLiteral("reserved")).toArray();
        const auto refused = !o.value(QStringLiteral("refusal")).isNull();
        QVERIFY(refused ? reserved.size() < steps : reserved.size() == steps);
        qint64 peak = 0;
        for (const auto& v : reserved)
            peak = std::max(peak, v.toInteger());
        QCOMPARE(o.value(QStringLiteral("peak_reserved_bytes")).toInteger(), peak);
        QVERIFY(o.value(QStringLiteral("largest_batch")).toInt() > 0);
    }
    const auto arena = root.value(QStringLiteral("activation")).toObject().value(QStringLiteral("series")).toObject().value(
        QStringLiteral("arena")).toArray();
    QCOMPARE(arena.size(), steps);

    QCOMPARE(config.value(QStringLiteral("prompt_lengths")).toObject().value(QStringLiteral("list")).toArray().size(), 0);

    // A capacity too small for four contiguous regions: the refusal is reported, not an error. A
    // size takes a decimal fraction, as the report prints sizes. Refused in the first step, no step
    // ran: the table shows "-" and the JSON null for the peaks.
    arguments = kSmallModel;
    arguments << QStringLiteral("--capacity") << QStringLiteral("1.00MiB") << QStringLiteral("--max-len") << QStringLiteral("1024")
              << QStringLiteral("--json") << json;
    const auto tight = memplan(arguments);
    QVERIFY2(tight.exitCode == 0, qPrintable(tight.err));
    QVERIFY2(tight.out.contains(QStringLiteral("capacity 1.00 MiB")), qPrintable(tight.out));
    QVERIFY2(tight.out.contains(QStringLiteral("step 0, sequence 2")), qPrintable(tight.out));
    QFile tightFile(json);
    QVERIFY(tightFile.open(QIODevice::ReadOnly));
    const auto contiguous = QJsonDocument::fromJson(tightFile.readAll()).object().value(QStringLiteral("policies")).toArray()[0].toObject();
    QCOMPARE(contiguous.value(QStringLiteral("name")).toString(), QStringLiteral("contiguous"));
    QCOMPARE(contiguous.value(QStringLiteral("steps_run")).toInt(), 0);
    QVERIFY(contiguous.value(QStringLiteral("peak_in_use_bytes")).isNull());
    QVERIFY(contiguous.value(QStringLiteral("waste_fraction")).isNull());

    const auto help = memplan({ QStringLiteral("scenario"), QStringLiteral("llm"), QStringLiteral("--help") });
    QCOMPARE(help.exitCode, 0);
    QVERIFY(help.out.contains(QStringLiteral("--block-tokens")));
    const auto main = memplan({ QStringLiteral("--help") });
    QVERIFY(main.out.contains(QStringLiteral("scenario llm")));
}

void TestLlmScenario::cliErrors_data()
{
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");
    QTest::newRow("kv heads") << QStringList { QStringLiteral("--kv-heads"), QStringLiteral("3") } << 2
                              << QStringLiteral("kv heads (3) must divide heads (4)");
    QTest::newRow("not a number") << QStringList { QStringLiteral("--batch"), QStringLiteral("many") } << 2
                                  << QStringLiteral("--batch 'many'");
    QTest::newRow("bad range") << QStringList { QStringLiteral("--prompt-len"), QStringLiteral("10..x") } << 2
                               << QStringLiteral("--prompt-len '10..x'");
    QTest::newRow("capacity") << QStringList { QStringLiteral("--capacity"), QStringLiteral("lots") } << 2
                              << QStringLiteral("--capacity 'lots'");
    QTest::newRow("capacity under one block") << QStringList { QStringLiteral("--capacity"), QStringLiteral("1") } << 2
                                              << QStringLiteral("capacity (1 bytes) holds no block of KV cache: one block of 8 tokens needs 4096 bytes");
    QTest::newRow("layers past the limit") << QStringList { QStringLiteral("--layers"), QStringLiteral("1000000") } << 2
                                           << QStringLiteral("--layers '1000000': expected a whole number from 1 to 10000");
    QTest::newRow("dtype bytes") << QStringList { QStringLiteral("--dtype-bytes"), QStringLiteral("3") } << 2
                                 << QStringLiteral("--dtype-bytes '3': expected 1, 2 or 4");
    QTest::newRow("capacity in bytes with a fraction") << QStringList { QStringLiteral("--capacity"), QStringLiteral("1.5") } << 2
                                                       << QStringLiteral("--capacity '1.5'");
    QTest::newRow("planner") << QStringList { QStringLiteral("--planner"), QStringLiteral("nope") } << 2
                             << QStringLiteral("unknown planner 'nope'");
    QTest::newRow("option") << QStringList { QStringLiteral("--colour") } << 2 << QStringLiteral("unknown option '--colour'");
    QTest::newRow("json") << QStringList { QStringLiteral("--json"), QStringLiteral("/no/such/dir/x.json") } << 1
                          << QStringLiteral("/no/such/dir/x.json: cannot write the file");
}

void TestLlmScenario::cliErrors()
{
    QFETCH(QStringList, extra);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    const auto run = memplan(kSmallModel + extra);
    QCOMPARE(run.exitCode, exitCode);
    QVERIFY2(run.err.startsWith(QStringLiteral("memplan: ")) && run.err.count(QLatin1Char('\n')) == 1, qPrintable(run.err));
    QVERIFY2(run.err.contains(message), qPrintable(run.err));
    const auto unknown = memplan({ QStringLiteral("scenario"), QStringLiteral("chess") });
    QCOMPARE(unknown.exitCode, 2);
    QVERIFY(unknown.err.contains(QStringLiteral("unknown scenario 'chess'")));
}

QTEST_GUILESS_MAIN(TestLlmScenario)
#include "tst_llmscenario.moc"
