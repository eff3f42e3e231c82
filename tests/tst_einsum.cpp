// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Einsum: how an equation's labels are read (implicit output, ellipsis alignment, malformed
// equations), which equations are one batched GEMM on the operands as stored (the CUDA executor
// runs only those), and the CPU kernel against a plain sum over every label for equations that take
// each of its paths: GEMM without copies, transposed operands, diagonals, broadcasts, labels summed in
// one operand, three operands.
#include "graphbuilder.h"

#include "cost/opcost.h"
#include "exec/einsum.h"
#include "exec/kernels.h"
#include "kerneltest.h"

#include <QtTest>

#include <cmath>

using core::exec::EinsumGemm;
using core::exec::EinsumLabels;
using core::exec::Shape;

using kerneltest::countOf;

namespace {

// The Einsum by its definition: every combination of label values, the product of the operands'
// elements at it added into the output element it names. Independent of the kernel's paths.
std::vector<double> reference(const EinsumLabels& e, const std::vector<Shape>& shapes, const std::vector<std::vector<float>>& data)
{
    std::vector<int> used;
    for (const auto& labels : e.inputs)
        for (int l : labels)
            if (std::find(used.begin(), used.end(), l) == used.end())
                used.push_back(l);
    Shape outShape;
    for (int l : e.output)
        outShape.push_back(e.extent[std::size_t(l)]);
    std::vector<double> out(std::size_t(countOf(outShape)), 0.0);
    std::vector<std::int64_t> value(e.extent.size(), 0);
    std::int64_t combos = 1;
    for (int l : used)
        combos *= e.extent[std::size_t(l)];
    for (std::int64_t c = 0; c < combos; ++c) {
        std::int64_t rest = c;
        for (auto it = used.rbegin(); it != used.rend(); ++it) {
            value[std::size_t(*it)] = rest % e.extent[std::size_t(*it)];
            rest /= e.extent[std::size_t(*it)];
        }
        double product = 1;
        for (std::size_t i = 0; i < shapes.size(); ++i) {
            std::int64_t at = 0;
            for (std::size_t d = 0; d < shapes[i].size(); ++d)
                at = at * shapes[i][d] + (shapes[i][d] == 1 ? 0 : value[std::size_t(e.inputs[i][d])]);
            product *= data[i][std::size_t(at)];
        }
        std::int64_t o = 0;
        for (std::size_t d = 0; d < e.output.size(); ++d)
            o = o * outShape[d] + value[std::size_t(e.output[d])];
        out[std::size_t(o)] += product;
    }
    return out;
}

} // namespace

class TestEinsum : public QObject {
    Q_OBJECT
private slots:
    void labels();
    void malformedEquationsRefused_data();
    void malformedEquationsRefused();
    void gemmMapping_data();
    void gemmMapping();
    void kernelMatchesDefinition_data();
    void kernelMatchesDefinition();
    void float64();
    void costCountsEveryLabel();
};

void TestEinsum::labels()
{
    EinsumLabels e;
    std::string why;
    // Implicit output: the letters used once, in character order (upper case first).
    QVERIFY2(core::exec::einsumLabels("ib, Ai", { { 3, 4 }, { 5, 3 } }, { 5, 4 }, e, &why), why.c_str());
    QCOMPARE(e.output, (std::vector<int> { 0, 27 })); // 'A', 'b'
    // The ellipsis dimensions align from the right and broadcast; the implicit output starts with them.
    QVERIFY2(core::exec::einsumLabels("...ij,...jk", { { 2, 1, 3, 4 }, { 6, 4, 5 } }, { 2, 6, 3, 5 }, e, &why), why.c_str());
    QCOMPARE(e.inputs[0], (std::vector<int> { 52, 53, 34, 35 }));
    QCOMPARE(e.inputs[1], (std::vector<int> { 53, 35, 36 }));
    QCOMPARE(e.extent[53], std::int64_t(6));
    QVERIFY(e.broadcasts);
    QVERIFY(core::exec::einsumLabels("i,i", { { 5 }, { 5 } }, {}, e));
    QVERIFY(e.output.empty());
    QVERIFY(!e.broadcasts);
}

void TestEinsum::malformedEquationsRefused_data()
{
    QTest::addColumn<QString>("equation");
    QTest::addColumn<QString>("reason");
    QTest::newRow("terms") << "ij->i" << "2 inputs";
    QTest::newRow("rank") << "ijk,jk->i" << "names 3 dimensions";
    QTest::newRow("lengths") << "ij,ik->jk" << "lengths";
    QTest::newRow("symbol") << "i1,jk->ik" << "not a letter";
    QTest::newRow("output label") << "ij,jk->iz" << "in no input";
    QTest::newRow("repeated output") << "ij,jk->ii" << "twice";
    QTest::newRow("output shape") << "ij,jk->ki" << "the graph says";
}

void TestEinsum::malformedEquationsRefused()
{
    QFETCH(QString, equation);
    QFETCH(QString, reason);
    EinsumLabels e;
    std::string why;
    QVERIFY(!core::exec::einsumLabels(equation.toStdString(), { { 2, 3 }, { 3, 5 } }, { 2, 5 }, e, &why));
    QVERIFY2(QString::fromStdString(why).contains(reason), why.c_str());
}

void TestEinsum::gemmMapping_data()
{
    QTest::addColumn<QString>("equation");
    QTest::addColumn<QList<qint64>>("a");
    QTest::addColumn<QList<qint64>>("b");
    QTest::addColumn<QList<qint64>>("out");
    // expected: a, b, transA, transB, batch, m, n, k; empty: not one GEMM
    QTest::addColumn<QList<qint64>>("expected");
    using L = QList<qint64>;
    QTest::newRow("attention scores") << "bhid,bhjd->bhij" << L { 2, 3, 4, 8 } << L { 2, 3, 5, 8 } << L { 2, 3, 4, 5 } << L { 0, 1, 0, 1, 6, 4, 5, 8 };
    QTest::newRow("attention values") << "bhij,bhjd->bhid" << L { 2, 3, 4, 5 } << L { 2, 3, 5, 8 } << L { 2, 3, 4, 8 } << L { 0, 1, 0, 0, 6, 4, 8, 5 };
    QTest::newRow("output transposed") << "ij,jk->ki" << L { 2, 3 } << L { 3, 4 } << L { 4, 2 } << L { 1, 0, 1, 1, 1, 4, 2, 3 };
    QTest::newRow("A transposed") << "ji,jk->ik" << L { 3, 2 } << L { 3, 4 } << L { 2, 4 } << L { 0, 1, 1, 0, 1, 2, 4, 3 };
    QTest::newRow("rows merged") << "bid,jd->bij" << L { 2, 4, 8 } << L { 5, 8 } << L { 2, 4, 5 } << L { 0, 1, 0, 1, 1, 8, 5, 8 };
    QTest::newRow("inner product") << "i,i" << L { 5 } << L { 5 } << L {} << L { 0, 1, 0, 0, 1, 1, 1, 5 };
    QTest::newRow("diagonal") << "ii,ij->ij" << L { 3, 3 } << L { 3, 4 } << L { 3, 4 } << L {};
    QTest::newRow("summed in one") << "ij,jk->k" << L { 2, 3 } << L { 3, 4 } << L { 4 } << L {};
    QTest::newRow("interleaved") << "bij,bjk->ibk" << L { 2, 3, 4 } << L { 2, 4, 5 } << L { 3, 2, 5 } << L {};
    QTest::newRow("broadcast batch") << "...ij,...jk->...ik" << L { 1, 3, 4 } << L { 2, 4, 5 } << L { 2, 3, 5 } << L {};
}

void TestEinsum::gemmMapping()
{
    QFETCH(QString, equation);
    QFETCH(QList<qint64>, a);
    QFETCH(QList<qint64>, b);
    QFETCH(QList<qint64>, out);
    QFETCH(QList<qint64>, expected);
    EinsumLabels e;
    std::string why;
    QVERIFY2(core::exec::einsumLabels(equation.toStdString(), { Shape(a.begin(), a.end()), Shape(b.begin(), b.end()) },
                 Shape(out.begin(), out.end()), e, &why),
        why.c_str());
    EinsumGemm g;
    const bool asGemm = core::exec::einsumAsGemm(e, g);
    QCOMPARE(asGemm, !expected.isEmpty());
    if (asGemm) {
        const QList<qint64> got { g.a, g.b, g.transA, g.transB, g.batch, g.m, g.n, g.k };
        QCOMPARE(got, expected);
    }
}

void TestEinsum::kernelMatchesDefinition_data()
{
    QTest::addColumn<QString>("equation");
    QTest::addColumn<QList<QList<qint64>>>("shapes");
    QTest::addColumn<QList<qint64>>("out");
    using L = QList<qint64>;
    using LL = QList<L>;
    QTest::newRow("attention scores") << "B G H I D, B G H J D -> B G H I J" << LL { { 1, 2, 3, 7, 8 }, { 1, 2, 3, 6, 8 } } << L { 1, 2, 3, 7, 6 };
    QTest::newRow("attention values") << "bhij,bhjd->bhid" << LL { { 2, 3, 4, 5 }, { 2, 3, 5, 8 } } << L { 2, 3, 4, 8 };
    QTest::newRow("output transposed") << "ij,jk->ki" << LL { { 2, 3 }, { 3, 4 } } << L { 4, 2 };
    QTest::newRow("A transposed") << "ji,jk->ik" << LL { { 3, 2 }, { 3, 4 } } << L { 2, 4 };
    QTest::newRow("inner product") << "i,i" << LL { { 5 }, { 5 } } << L {};
    QTest::newRow("elementwise") << "ij,ij->ij" << LL { { 3, 4 }, { 3, 4 } } << L { 3, 4 };
    QTest::newRow("outer") << "i,j->ij" << LL { { 3 }, { 4 } } << L { 3, 4 };
    QTest::newRow("diagonal") << "ii->i" << LL { { 4, 4 } } << L { 4 };
    QTest::newRow("trace") << "ii" << LL { { 4, 4 } } << L {};
    QTest::newRow("diagonal times") << "ii,ij->ij" << LL { { 3, 3 }, { 3, 4 } } << L { 3, 4 };
    QTest::newRow("summed in one") << "ij,jk->k" << LL { { 2, 3 }, { 3, 4 } } << L { 4 };
    QTest::newRow("interleaved") << "bij,bjk->ibk" << LL { { 2, 3, 4 }, { 2, 4, 5 } } << L { 3, 2, 5 };
    QTest::newRow("broadcast batch") << "...ij,...jk->...ik" << LL { { 2, 1, 3, 4 }, { 6, 4, 5 } } << L { 2, 6, 3, 5 };
    QTest::newRow("three operands") << "ij,jk,kl->il" << LL { { 2, 3 }, { 3, 4 }, { 4, 5 } } << L { 2, 5 };
    QTest::newRow("three, shared label") << "bi,bj,bk->bijk" << LL { { 2, 3 }, { 2, 2 }, { 2, 4 } } << L { 2, 3, 2, 4 };
    QTest::newRow("sum all") << "abc->" << LL { { 2, 3, 4 } } << L {};
    QTest::newRow("permute") << "abc->cab" << LL { { 2, 3, 4 } } << L { 4, 2, 3 };
}

void TestEinsum::kernelMatchesDefinition()
{
    QFETCH(QString, equation);
    QFETCH(QList<QList<qint64>>, shapes);
    QFETCH(QList<qint64>, out);
    core::Op op;
    op.type = "Einsum";
    op.attributes["equation"].text = equation.toStdString();
    std::vector<Shape> inShapes;
    std::vector<std::vector<float>> data;
    core::exec::KernelCall call;
    call.op = &op;
    for (const auto& s : shapes) {
        inShapes.emplace_back(s.begin(), s.end());
        auto& d = data.emplace_back(std::size_t(countOf(inShapes.back())));
        for (std::size_t i = 0; i < d.size(); ++i)
            d[i] = float((i * 37 + data.size() * 11) % 23) / 8.0f - 1.3f;
    }
    for (std::size_t i = 0; i < data.size(); ++i)
        call.in.push_back({ core::DType::Float32, inShapes[i], reinterpret_cast<std::byte*>(data[i].data()), countOf(inShapes[i]) });
    const Shape outShape(out.begin(), out.end());
    std::vector<float> result(std::size_t(countOf(outShape)), std::nanf(""));
    call.out.push_back({ core::DType::Float32, outShape, reinterpret_cast<std::byte*>(result.data()), countOf(outShape) });
    const auto kernel = core::exec::findKernel("Einsum");
    QVERIFY(kernel);
    QVERIFY2(kernel(call), "the kernel takes the equation");
    EinsumLabels e;
    QVERIFY(core::exec::einsumLabels(op.attributes["equation"].text, inShapes, outShape, e));
    const auto expected = reference(e, inShapes, data);
    QCOMPARE(result.size(), expected.size());
    for (std::size_t i = 0; i < result.size(); ++i)
        QVERIFY2(std::fabs(result[i] - expected[i]) <= 1e-4 * (1 + std::fabs(expected[i])),
            qPrintable(QStringLiteral("element %1: %2, expected %3").arg(i).arg(result[i]).arg(expected[i])));
    // A shape the equation does not give is refused, before anything is written.
    std::fill(result.begin(), result.end(), -7.0f);
    call.out[0].shape.push_back(1);
    QVERIFY(!kernel(call));
    QVERIFY(std::all_of(result.begin(), result.end(), [](float v) { return v == -7.0f; }));
}

void TestEinsum::float64()
{
    core::Op op;
    op.type = "Einsum";
    op.attributes["equation"].text = "ij,jk->ik";
    std::vector<double> a { 1, 2, 3, 4, 5, 6 }, b { 1e-9, 1, 0, 1, 1, 0 }, y(4, 0);
    core::exec::KernelCall call;
    call.op = &op;
    call.in.push_back({ core::DType::Float64, { 2, 3 }, reinterpret_cast<std::byte*>(a.data()), 6 });
    call.in.push_back({ core::DType::Float64, { 3, 2 }, reinterpret_cast<std::byte*>(b.data()), 6 });
    call.out.push_back({ core::DType::Float64, { 2, 2 }, reinterpret_cast<std::byte*>(y.data()), 4 });
    QVERIFY(core::exec::findKernel("Einsum")(call));
    // 1e-9 survives: the sums are taken in double precision.
    QCOMPARE(y, (std::vector<double> { 3 + 1e-9, 3, 6 + 4e-9, 9 }));
    // Operands of different float types are refused.
    std::vector<float> f(6, 1.0f);
    call.in[1] = { core::DType::Float32, { 3, 2 }, reinterpret_cast<std::byte*>(f.data()), 6 };
    QVERIFY(!core::exec::findKernel("Einsum")(call));
}

// The roofline's FLOPs: a multiply-add per combination of label values, so attention scores cost
// what the equivalent batched MatMul costs, and a one-operand sum one add per input element.
void TestEinsum::costCountsEveryLabel()
{
    GraphBuilder b;
    const auto q = b.tensor("q", { 2, 3, 4, 8 }, core::TensorKind::Input), k = b.tensor("k", { 2, 3, 5, 8 }, core::TensorKind::Input);
    const auto scores = b.tensor("scores", { 2, 3, 4, 5 }), summed = b.tensor("summed", { 2, 3, 5 }, core::TensorKind::Output);
    b.op("scores", "Einsum", { q, k }, { scores })->attributes["equation"].text = "bhid,bhjd->bhij";
    b.op("summed", "Einsum", { scores }, { summed })->attributes["equation"].text = "bhij->bhj";
    const auto w = b.workload("einsum", 64);
    QCOMPARE(core::opCost(*w.graph, w.graph->ops[0]).flops, 2.0 * 2 * 3 * 4 * 5 * 8);
    QCOMPARE(core::opCost(*w.graph, w.graph->ops[1]).flops, 2.0 * 3 * 4 * 5);
}

QTEST_GUILESS_MAIN(TestEinsum)
#include "tst_einsum.moc"
