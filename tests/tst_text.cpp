// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// TfIdfVectorizer on the CPU kernel against counts worked out by hand, on what the ONNX backend data
// (TF mode, int32 ids, an identity ngram_indexes) leaves out: IDF and TFIDF with weights, int64 ids,
// a permuted ngram_indexes, skips that find the same n-gram at several strides, min_gram_length
// above 1; and pools the kernel refuses, leaving the output untouched.
#include "exec/kernels.h"
#include "kerneltest.h"

#include <QtTest>

#include <cstring>
#include <vector>

using core::DType;
using core::exec::Shape;
using kerneltest::countOf;
using kerneltest::ints;

namespace {

struct Buf {
    DType dtype = DType::Undefined;
    Shape shape;
    std::vector<std::byte> bytes;
    core::exec::TensorView view() { return { dtype, shape, bytes.data(), countOf(shape) }; }
    std::vector<float> floats() const
    {
        std::vector<float> v(bytes.size() / 4);
        std::memcpy(v.data(), bytes.data(), bytes.size());
        return v;
    }
};

Buf ids(const Shape& shape, const std::vector<std::int64_t>& values)
{
    Buf b { DType::Int64, shape, std::vector<std::byte>(values.size() * 8) };
    std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
    return b;
}

Buf output(const Shape& shape, float fill = -7.0f)
{
    Buf b { DType::Float32, shape, std::vector<std::byte>(std::size_t(countOf(shape)) * 4) };
    const std::vector<float> v(std::size_t(countOf(shape)), fill);
    std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
    return b;
}

bool run(const core::Op& op, Buf& x, Buf& y)
{
    core::exec::KernelCall c;
    c.op = &op;
    c.in = { x.view() };
    c.out = { y.view() };
    const auto kernel = core::exec::findKernel(op.type);
    return kernel && kernel(c);
}

core::Attribute text(const char* t)
{
    core::Attribute a;
    a.text = t;
    return a;
}

// Unigrams 2 and 3, bigrams (3, 3) and (1, 3); pool entry k goes to output column {3, 0, 1, 2}[k].
core::Op vectorizer(const char* mode, std::int64_t minLength = 1, std::int64_t maxLength = 2, std::int64_t maxSkip = 1)
{
    core::Op op;
    op.type = "TfIdfVectorizer";
    op.attributes["mode"] = text(mode);
    op.attributes["min_gram_length"] = ints({ minLength });
    op.attributes["max_gram_length"] = ints({ maxLength });
    op.attributes["max_skip_count"] = ints({ maxSkip });
    op.attributes["pool_int64s"] = ints({ 2, 3, 3, 3, 1, 3 });
    op.attributes["ngram_counts"] = ints({ 0, 2 });
    op.attributes["ngram_indexes"] = ints({ 3, 0, 1, 2 });
    op.attributes["weights"].floats = { 0.5f, 2.0f, 4.0f, 8.0f };
    return op;
}

} // namespace

class TestText : public QObject {
    Q_OBJECT
private slots:
    // Row [1, 3, 3, 2, 3]: '2' once, '3' three times; (3, 3) at stride 1 (positions 1, 2) and stride 2
    // (2, 4); (1, 3) at stride 1 (0, 1) and stride 2 (0, 2). Row [2, 2, 1, 1, 1]: '2' twice, no bigram
    // of the pool at either stride. Lengths and skips of 2^62 count what the pool and the row allow:
    // every stride, (3, 3) and (1, 3) each three times in the first row.
    void countsWeightsAndSkips_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<int>("minLength");
        QTest::addColumn<qint64>("most");
        QTest::addColumn<std::vector<float>>("expected");
        QTest::newRow("TF") << "TF" << 1 << qint64(-1) << std::vector<float> { 3, 2, 2, 1, 0, 0, 0, 2 };
        QTest::newRow("IDF") << "IDF" << 1 << qint64(-1) << std::vector<float> { 2, 4, 8, 0.5f, 0, 0, 0, 0.5f };
        QTest::newRow("TFIDF") << "TFIDF" << 1 << qint64(-1) << std::vector<float> { 6, 8, 16, 0.5f, 0, 0, 0, 1 };
        QTest::newRow("TF, bigrams only") << "TF" << 2 << qint64(-1) << std::vector<float> { 0, 2, 2, 0, 0, 0, 0, 0 };
        QTest::newRow("TF, 2^62 lengths and skips") << "TF" << 1 << (qint64(1) << 62) << std::vector<float> { 3, 3, 3, 1, 0, 0, 0, 2 };
    }
    void countsWeightsAndSkips()
    {
        QFETCH(QString, mode);
        QFETCH(int, minLength);
        QFETCH(qint64, most);
        QFETCH(std::vector<float>, expected);
        const auto op = most < 0 ? vectorizer(mode.toLatin1().constData(), minLength) : vectorizer(mode.toLatin1().constData(), minLength, most, most);
        Buf x = ids({ 2, 5 }, { 1, 3, 3, 2, 3, 2, 2, 1, 1, 1 });
        Buf y = output({ 2, 4 });
        QVERIFY(run(op, x, y));
        QCOMPARE(y.floats(), expected);

        // One row of int32 ids: the same counts as the first row above.
        Buf row { DType::Int32, { 5 }, std::vector<std::byte>(20) };
        const std::int32_t values[5] = { 1, 3, 3, 2, 3 };
        std::memcpy(row.bytes.data(), values, sizeof values);
        Buf one = output({ 4 });
        QVERIFY(run(op, row, one));
        QCOMPARE(one.floats(), std::vector<float>(expected.begin(), expected.begin() + 4));
    }

    // A pool whose bigram level holds an odd number of ids, an ngram_indexes of another length than
    // the pool's n-grams, a column past the output, weights of the wrong length, an unknown mode and
    // a float input: each refused with the output as it was.
    void refusedPoolsLeaveOutputUntouched()
    {
        std::vector<core::Op> refused(6, vectorizer("TF"));
        refused[0].attributes["pool_int64s"] = ints({ 2, 3, 3, 3, 1 });
        refused[1].attributes["ngram_indexes"] = ints({ 3, 0, 1 });
        refused[2].attributes["ngram_indexes"] = ints({ 4, 0, 1, 2 });
        refused[3].attributes["weights"].floats = { 1.0f };
        refused[4].attributes["mode"] = text("BM25");
        refused[5].attributes["ngram_counts"] = ints({ 0, 7 });
        for (const auto& op : refused) {
            Buf x = ids({ 2, 5 }, { 1, 3, 3, 2, 3, 2, 2, 1, 1, 1 });
            Buf y = output({ 2, 4 });
            QVERIFY(!run(op, x, y));
            QCOMPARE(y.floats(), std::vector<float>(8, -7.0f));
        }
        Buf x { DType::Float32, { 5 }, std::vector<std::byte>(20) };
        Buf y = output({ 4 });
        QVERIFY(!run(vectorizer("TF"), x, y));
        QCOMPARE(y.floats(), std::vector<float>(4, -7.0f));
    }
};

QTEST_GUILESS_MAIN(TestText)
#include "tst_text.moc"
