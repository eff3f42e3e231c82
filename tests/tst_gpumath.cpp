// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The CUDA executor's kernel math on the CPU, no GPU needed: every output of an ONNX backend node
// test (Debian libonnx-testdata) whose op has a device kernel is computed by calling the device
// kernels' element functions (gpu/elementmath.h) for each element or row, as a kernel thread would
// (gpumathdrivers.h), and compared with the CPU executor's kernel and with the ONNX reference output.
#include "gpumathdrivers.h"

#include "exec/kernels.h"
#include "exec/opcall.h"
#include "exec/tensordata.h"
#include "exec/tolerance.h"
#include "onnx/onnximport.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

namespace fs = std::filesystem;
namespace k = gpu::kernels;
using core::exec::KernelCall;
using core::exec::Shape;
using core::exec::TensorView;
using gpumath::drivers;

namespace {

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

// One single-op node test with test_data_set_0 loaded: inputs and weights in host memory.
struct NodeCase {
    core::Graph graph;
    core::ModelData data;
    std::map<core::TensorIndex, std::vector<std::byte>> storage;
    std::vector<core::HostTensor> expected; // by graph output

    // The op's call; outputs in fresh zeroed buffers of `outputs`.
    KernelCall call(std::vector<std::vector<std::byte>>& outputs)
    {
        const auto& op = graph.ops[0];
        KernelCall c;
        c.op = &op;
        for (std::size_t i = 0; i < op.inputs.size(); ++i) {
            const auto slot = std::size_t(core::inputSlot(op, i));
            if (c.in.size() <= slot)
                c.in.resize(slot + 1);
            auto& bytes = storage[op.inputs[i]];
            // A present input without elements still needs an address (present() means non-null).
            if (bytes.empty())
                bytes.resize(1);
            c.in[slot] = core::exec::tensorView(graph, op.inputs[i], bytes.data());
        }
        outputs.clear();
        c.outSlots = op.outputSlots; // LSTM(...) -> ("", Y_h)
        for (auto t : op.outputs) {
            outputs.emplace_back(std::size_t(std::max<core::Bytes>(graph.tensors[t].size, 1)));
            c.out.push_back(core::exec::tensorView(graph, t, outputs.back().data()));
        }
        return c;
    }
};

std::optional<NodeCase> loadCase(const fs::path& dir)
{
    const auto model = dir / "model.onnx";
    auto graph = core::importOnnx(model);
    if (!graph || graph->ops.size() != 1 || !graph->ops[0].domain.empty())
        return std::nullopt;
    auto data = core::loadTensorData(model, *graph);
    if (!data)
        return std::nullopt;
    NodeCase nc { std::move(*graph), std::move(*data), {}, {} };
    for (const auto& [t, w] : nc.data.weights)
        nc.storage[t] = w.data;
    const auto set = dir / "test_data_set_0";
    for (std::size_t i = 0; i < nc.graph.inputs.size(); ++i) {
        auto in = core::readTensorFile(set / ("input_" + std::to_string(i) + ".pb"));
        if (!in || in->second.dtype != nc.graph.tensors[nc.graph.inputs[i]].dtype)
            return std::nullopt;
        nc.storage[nc.graph.inputs[i]] = std::move(in->second.data);
    }
    for (std::size_t i = 0; i < nc.graph.outputs.size(); ++i) {
        auto out = core::readTensorFile(set / ("output_" + std::to_string(i) + ".pb"));
        if (!out)
            return std::nullopt;
        nc.expected.push_back(std::move(out->second));
    }
    for (auto t : nc.graph.ops[0].inputs)
        if (!nc.storage.count(t))
            return std::nullopt;
    return nc;
}

std::vector<core::HostTensor> asHost(const KernelCall& c)
{
    std::vector<core::HostTensor> out;
    for (const auto& v : c.out) {
        core::HostTensor t;
        t.dtype = v.dtype;
        t.shape = v.shape;
        t.data.assign(v.data, v.data + v.bytes());
        out.push_back(std::move(t));
    }
    return out;
}

// The ONNX backend tests' own tolerance (rtol 1e-3, atol 1e-4 as in tst_executor), element by element.
std::string closeToReference(const std::vector<core::HostTensor>& expected, const std::vector<core::HostTensor>& actual)
{
    for (std::size_t o = 0; o < expected.size() && o < actual.size(); ++o) {
        const auto &e = expected[o], &a = actual[o];
        if (e.dtype != a.dtype || e.data.size() != a.data.size())
            return "output " + std::to_string(o) + ": dtype or size differs";
        if (e.dtype != core::DType::Float32) {
            if (e.data != a.data)
                return "output " + std::to_string(o) + ": values differ";
            continue;
        }
        const auto* ev = reinterpret_cast<const float*>(e.data.data());
        const auto* av = reinterpret_cast<const float*>(a.data.data());
        for (std::size_t i = 0; i < e.data.size() / 4; ++i)
            if (!(std::fabs(ev[i] - av[i]) <= 1e-4f + 1e-3f * std::fabs(ev[i])) && !(std::isnan(ev[i]) && std::isnan(av[i])))
                return "output " + std::to_string(o) + " element " + std::to_string(i) + ": expected " + std::to_string(ev[i]) + ", got "
                    + std::to_string(av[i]);
    }
    return {};
}

// Every float element within kDefaultGpuTolerance · (|cpu| + max |cpu| of the output), as
// core::checkTolerance measures a GPU run against the CPU executor.
std::string closeWithin(const std::vector<core::HostTensor>& cpu, const std::vector<core::HostTensor>& math)
{
    for (std::size_t o = 0; o < cpu.size(); ++o) {
        if (o >= math.size() || cpu[o].dtype != math[o].dtype || cpu[o].data.size() != math[o].data.size())
            return "output " + std::to_string(o) + ": dtype or size differs";
        if (cpu[o].dtype != core::DType::Float32) {
            if (cpu[o].data != math[o].data)
                return "output " + std::to_string(o) + ": values differ";
            continue;
        }
        const auto* c = reinterpret_cast<const float*>(cpu[o].data.data());
        const auto* m = reinterpret_cast<const float*>(math[o].data.data());
        const std::size_t n = cpu[o].data.size() / 4;
        double scale = 0;
        for (std::size_t i = 0; i < n; ++i)
            scale = std::max(scale, double(std::fabs(c[i])));
        for (std::size_t i = 0; i < n; ++i)
            if (!(std::fabs(double(c[i]) - m[i]) <= core::kDefaultGpuTolerance * (std::fabs(c[i]) + scale)) && !(std::isnan(c[i]) && std::isnan(m[i])))
                return "output " + std::to_string(o) + " element " + std::to_string(i) + ": CPU kernel " + std::to_string(c[i])
                    + ", element math " + std::to_string(m[i]);
    }
    return {};
}

// Ops whose device math is exact: their outputs must equal the CPU kernel's bit for bit, floats too.
bool bitForBit(const std::string& type)
{
    return type == "QuantizeLinear" || type == "DequantizeLinear" || type == "DynamicQuantizeLinear" || type == "MatMulInteger" || type == "QLinearMatMul" || type == "ConvInteger"
        || type == "QLinearConv";
}

std::string identical(const std::vector<core::HostTensor>& cpu, const std::vector<core::HostTensor>& math)
{
    for (std::size_t o = 0; o < cpu.size(); ++o)
        if (o >= math.size() || cpu[o].dtype != math[o].dtype || cpu[o].data != math[o].data)
            return "output " + std::to_string(o) + ": not bit for bit the CPU kernel's";
    return {};
}

// An op call written by hand: float inputs with deterministic values, int64 shape arguments.
struct HandCall {
    core::Op op;
    std::vector<std::unique_ptr<std::vector<std::byte>>> memory;
    KernelCall call;

    explicit HandCall(const std::string& type) { op.type = type; }
    HandCall& ints(const std::string& name, std::vector<std::int64_t> v) { op.attributes[name].ints = std::move(v); return *this; }
    HandCall& real(const std::string& name, float v) { op.attributes[name].floats = { v }; return *this; }
    HandCall& text(const std::string& name, const std::string& v) { op.attributes[name].text = v; return *this; }
    TensorView& add(std::vector<TensorView>& views, core::DType dtype, Shape shape)
    {
        TensorView v;
        v.dtype = dtype;
        v.count = 1;
        for (auto d : shape)
            v.count *= d;
        v.shape = std::move(shape);
        memory.push_back(std::make_unique<std::vector<std::byte>>(std::size_t(std::max<core::Bytes>(v.bytes(), 1))));
        v.data = memory.back()->data();
        views.push_back(v);
        return views.back();
    }
    // Pseudo-random values: float32 in [-4, 4] (with `levels`, only that many values, multiples of
    // 0.5 around 0, so that comparisons meet equal elements and casts meet zeros); int64 and int32
    // in [-3, 3]; bool 0 or 1; uint8 and int8 any byte.
    HandCall& input(Shape shape, unsigned seed = 1, core::DType dtype = core::DType::Float32, int levels = 0)
    {
        auto& v = add(call.in, dtype, std::move(shape));
        std::uint32_t state = seed * 2654435761u + 1;
        for (std::int64_t i = 0; i < v.count; ++i) {
            state = state * 1664525u + 1013904223u;
            const int r = int(state >> 9);
            switch (dtype) {
            case core::DType::Int64: v.i64()[i] = r % 7 - 3; break;
            case core::DType::Int32: reinterpret_cast<std::int32_t*>(v.data)[i] = r % 7 - 3; break;
            case core::DType::Bool: v.data[i] = std::byte(r & 1); break;
            case core::DType::UInt8: case core::DType::Int8: v.data[i] = std::byte(r & 255); break;
            default: v.f32()[i] = levels > 0 ? float(r % levels - levels / 2) * 0.5f : float(r % 2001 - 1000) / 250.0f; break;
            }
        }
        return *this;
    }
    HandCall& floats(std::vector<float> values)
    {
        auto& v = add(call.in, core::DType::Float32, { std::int64_t(values.size()) });
        std::copy(values.begin(), values.end(), v.f32());
        return *this;
    }
    HandCall& int64s(std::vector<std::int64_t> values)
    {
        auto& v = add(call.in, core::DType::Int64, { std::int64_t(values.size()) });
        std::copy(values.begin(), values.end(), v.i64());
        return *this;
    }
    // A 1-D uint8, int8 or int32 input.
    HandCall& integers(core::DType dtype, std::vector<std::int64_t> values)
    {
        auto& v = add(call.in, dtype, { std::int64_t(values.size()) });
        for (std::size_t i = 0; i < values.size(); ++i)
            switch (dtype) {
            case core::DType::Int32: reinterpret_cast<std::int32_t*>(v.data)[i] = std::int32_t(values[i]); break;
            case core::DType::Int8: reinterpret_cast<std::int8_t*>(v.data)[i] = std::int8_t(values[i]); break;
            default: reinterpret_cast<std::uint8_t*>(v.data)[i] = std::uint8_t(values[i]); break;
            }
        return *this;
    }
    HandCall& absent() { call.in.emplace_back(); return *this; }
    HandCall& output(Shape shape, core::DType dtype = core::DType::Float32) { add(call.out, dtype, std::move(shape)); return *this; }
    // A copy of the call with fresh output buffers; op points at this object's op.
    KernelCall fresh(std::vector<std::vector<std::byte>>& outputs)
    {
        KernelCall c = call;
        c.op = &op;
        outputs.clear();
        for (auto& v : c.out) {
            outputs.emplace_back(std::size_t(std::max<core::Bytes>(v.bytes(), 1)));
            v.data = outputs.back().data();
        }
        return c;
    }
};

} // namespace

class TestGpuMath : public QObject {
    Q_OBJECT
private slots:
    void againstCpuKernelsAndReference();
    void configurationsBeyondTheNodeTests_data();
    void configurationsBeyondTheNodeTests();
    void quantizationRefusedAsOnTheCpu();
};

void TestGpuMath::againstCpuKernelsAndReference()
{
    if (!fs::exists(kNodeTests))
        QSKIP("libonnx-testdata is not installed");
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(kNodeTests))
        dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    std::map<std::string, std::vector<std::string>> checked, fallback; // by op type
    std::map<std::string, int> functionUses;
    std::vector<std::string> failures;
    for (const auto& dir : dirs) {
        const auto name = dir.filename().string();
        if (name.find("_expanded") != std::string::npos)
            continue;
        auto nc = loadCase(dir);
        if (!nc)
            continue;
        const auto& type = nc->graph.ops[0].type;
        const auto driver = drivers().find(type);
        if (driver == drivers().end())
            continue;
        std::vector<std::vector<std::byte>> cpuOut, mathOut;
        const auto cpuCall = nc->call(cpuOut);
        const auto kernel = core::exec::findKernel(type);
        if (!kernel || !kernel(cpuCall))
            continue; // the CPU kernel does not cover it: it runs synthetic on either executor
        const auto cpu = asHost(cpuCall);
        if (const auto why = closeToReference(nc->expected, cpu); !why.empty())
            continue; // the CPU kernel is the reference only where it matches ONNX (tst_executor checks which)
        const auto mathCall = nc->call(mathOut);
        const auto used = driver->second(mathCall);
        if (used.empty()) {
            fallback[type].push_back(name);
            continue;
        }
        for (const auto& f : QString::fromStdString(used).split(QLatin1Char(' ')))
            ++functionUses[f.toStdString()];
        auto math = asHost(mathCall);
        auto expected = nc->expected;
        auto reference = cpu;
        auto why = closeWithin(reference, math);
        if (why.empty() && bitForBit(type))
            why = identical(reference, math);
        if (why.empty())
            why = closeToReference(expected, math);
        if (!why.empty())
            failures.push_back(name + " (" + type + ", " + used + "): " + why);
        else
            checked[type].push_back(name);
    }
    int cases = 0;
    for (const auto& [type, names] : checked) {
        std::string list;
        for (const auto& n : names)
            list += " " + n;
        qInfo("%s: %zu cases checked:%s", type.c_str(), names.size(), list.c_str());
        cases += int(names.size());
    }
    qInfo("%d cases of %zu op types checked", cases, checked.size());
    for (const auto& [type, names] : fallback) {
        std::string list;
        for (const auto& n : names)
            list += " " + n;
        qInfo("%s: %zu cases the CPU kernel runs but the device op leaves to the host:%s", type.c_str(), names.size(), list.c_str());
    }
    for (const auto& f : failures)
        qWarning("FAILED %s", f.c_str());
    QVERIFY2(failures.empty(), (std::to_string(failures.size()) + " node tests differ between the element math and the CPU kernel").c_str());
    // Every element function was exercised by some case.
    for (const char* f : { "unaryElement", "binaryElement", "sourceIndex", "im2colElement", "poolElement", "rowMean", "batchNormElement",
             "softmaxRow", "layerNormRow", "gatherSource", "padElement", "resizeElement", "reduceElement", "col2imElement",
             "compareElement", "castElement", "whereParams", "notParams", "tileSource", "instanceNormRow", "logicalElement",
             "argExtremeElement", "cumSumRow", "triluKeeps", "gatherElementsSource", "quantizeElement", "dequantizeElement",
             "recurrentStartElement", "gruResetElement", "recurrentCellElement", "gatherNDSource", "scatterNDTarget", "scatterCombine",
             "topKRow", "scatterElementsIndex", "lrnElement",
             "specialElement", "hardmaxRow", "oneHotHit", "intMatMulElement", "intConvElement", "dynamicRange", "gridSampleElement" })
        QVERIFY2(functionUses[f] > 0, f);
    // The new device ops cover the configurations the CPU kernel supports in the ONNX tests.
    QVERIFY(checked["Resize"].size() >= 10);
    QVERIFY(checked["ConvTranspose"].size() >= 5);
    for (const char* type : { "MaxPool", "AveragePool", "ConvTranspose" }) // a 3-D (video) case each
        QVERIFY2(std::any_of(checked[type].begin(), checked[type].end(), [](const std::string& n) { return n.find("_3d") != std::string::npos; }), type);
    for (const char* type : { "Less", "Greater", "Where", "Cast", "Not", "Max", "Min", "HardSwish", "HardSigmoid", "Elu", "PRelu", "IsNaN" })
        QVERIFY2(!checked[type].empty(), type);
    QVERIFY(checked["ReduceMean"].size() >= 6);
    for (const char* type : { "RNN", "GRU", "LSTM" }) // defaults, biases, sequence lengths, peepholes, batch-first
        QVERIFY2(checked[type].size() >= 4, type);
    for (const char* type : { "GatherND", "ScatterND", "TopK", "ScatterElements", "Hardmax", "OneHot", "IsInf" }) // ScatterND: no reduction, add, mul (max, min: tst_cuda)
        QVERIFY2(checked[type].size() >= 3, type);
    for (const char* type : { "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "LogSoftmax",
             "GlobalMaxPool", "Expand", "Tile", "InstanceNormalization" })
        QVERIFY2(checked[type].size() >= 2, type);
    for (const char* type : { "And", "Or", "Xor", "ArgMax", "ArgMin", "CumSum", "Trilu", "GatherElements", "DepthToSpace", "SpaceToDepth",
             "QuantizeLinear", "DequantizeLinear" }) // QDQ: per tensor and per axis
        QVERIFY2(checked[type].size() >= 2, type);
    for (const char* type : { "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Sign", "Round", "Selu",
             "ThresholdedRelu", "Celu", "Shrink" })
        QVERIFY2(!checked[type].empty(), type);
    for (const char* type : { "QLinearMatMul", "ConvInteger" }) // QLinearMatMul: 2-D and 3-D; ConvInteger: padding or not
        QVERIFY2(checked[type].size() >= 2, type);
    QVERIFY(checked["GridSample"].size() >= 7); // every mode and padding mode, align_corners
    QVERIFY(checked["DynamicQuantizeLinear"].size() >= 3); // a range around 0, all positive, all negative
    for (const char* type : { "MatMulInteger", "QLinearConv" })
        QVERIFY2(!checked[type].empty(), type);
    QVERIFY(checked["Pad"].size() >= 1); // test_edge_pad and test_reflect_pad pad int32 data: host only
    QVERIFY(cases > 100);
}

// Configurations the ONNX node tests leave out (float edge/reflect Pad, ConvTranspose groups with a
// bias, every nearest rounding, ReduceMean axes from an input, quantization's ties, NaN, infinities,
// saturation, int8 per axis, int32): element math against the CPU kernel.
void TestGpuMath::configurationsBeyondTheNodeTests_data()
{
    QTest::addColumn<int>("index");
    const char* names[] = { "pad edge", "pad reflect", "pad constant from inputs", "pad negative (crop)", "resize linear pytorch_half_pixel",
        "resize linear asymmetric scales", "resize nearest floor", "resize nearest ceil", "resize nearest round_prefer_ceil",
        "resize nearest round_prefer_floor half_pixel down", "resize linear 3 axes", "reducemean axes 1 3 no keepdims",
        "reducemean axes input", "reducemean noop", "convtranspose groups bias", "convtranspose strides dilations output_padding",
        "convtranspose 1d same_lower", "equal float broadcast", "equal int64 broadcast", "less float scalar", "where three-way broadcast",
        "where int64", "cast float to int64", "cast int64 to float", "cast bool to float", "cast float to bool", "cast int64 to int32", "not",
        "max broadcast", "min broadcast", "clip bounds as inputs", "pow square", "quantize ties nan inf saturation",
        "quantize int8 per last axis no zero point", "quantize uint8 per axis zero points", "dequantize int8 per axis 0",
        "dequantize int32 no zero point", "dequantize uint8 per axis 1", "matmulinteger broadcast batch per-row and per-column zero points",
        "matmulinteger zero points per matrix", "qlinearmatmul int8 per-column scales saturation", "qlinearconv groups strides dilations per-channel bias",
        "convinteger 3-D int8", "conv depthwise channel multiplier strides pads dilations bias", "conv 1-D groups no bias",
        "conv 3-D depthwise" };
    for (int i = 0; i < int(std::size(names)); ++i)
        QTest::newRow(names[i]) << i;
}

void TestGpuMath::configurationsBeyondTheNodeTests()
{
    QFETCH(int, index);
    constexpr auto F32 = core::DType::Float32, I64 = core::DType::Int64, Bool = core::DType::Bool;
    constexpr auto I32 = core::DType::Int32, I8 = core::DType::Int8, U8 = core::DType::UInt8;
    std::unique_ptr<HandCall> h;
    switch (index) {
    case 0: h = std::make_unique<HandCall>("Pad"); h->text("mode", "edge").input({ 2, 3, 4, 5 }).int64s({ 0, 1, 3, 2, 1, 0, 2, 4 }).output({ 3, 4, 9, 11 }); break;
    case 1: h = std::make_unique<HandCall>("Pad"); h->text("mode", "reflect").input({ 2, 3, 4, 5 }).int64s({ 1, 2, 3, 4, 1, 1, 3, 4 }).output({ 4, 6, 10, 13 }); break;
    case 2: h = std::make_unique<HandCall>("Pad"); h->input({ 3, 4 }).int64s({ 1, 2, 2, 0 }).floats({ 2.5f }).output({ 6, 6 }); break;
    case 3: h = std::make_unique<HandCall>("Pad"); h->ints("pads", { -1, 1, 0, -2 }).real("value", -1.0f).input({ 4, 6 }).output({ 3, 5 }); break;
    case 4: h = std::make_unique<HandCall>("Resize"); h->text("mode", "linear").text("coordinate_transformation_mode", "pytorch_half_pixel")
                .input({ 1, 2, 3, 4 }).absent().absent().int64s({ 1, 2, 7, 1 }).output({ 1, 2, 7, 1 }); break;
    case 5: h = std::make_unique<HandCall>("Resize"); h->text("mode", "linear").text("coordinate_transformation_mode", "asymmetric")
                .input({ 1, 1, 3, 5 }).absent().floats({ 1, 1, 2.5f, 0.6f }).output({ 1, 1, 7, 3 }); break;
    case 6: case 7: case 8:
        h = std::make_unique<HandCall>("Resize");
        h->text("nearest_mode", index == 6 ? "floor" : index == 7 ? "ceil" : "round_prefer_ceil")
            .input({ 2, 1, 3, 3 }).absent().floats({ 1, 1, 2.5f, 1.5f }).output({ 2, 1, 7, 4 });
        break;
    case 9: h = std::make_unique<HandCall>("Resize"); h->input({ 1, 1, 8, 8 }).absent().floats({ 1, 1, 0.5f, 0.375f }).output({ 1, 1, 4, 3 }); break;
    case 10: h = std::make_unique<HandCall>("Resize"); h->text("mode", "linear").text("coordinate_transformation_mode", "align_corners")
                .input({ 2, 3, 4 }).absent().floats({ 1.5f, 2, 0.75f }).output({ 3, 6, 3 }); break;
    case 11: h = std::make_unique<HandCall>("ReduceMean"); h->ints("axes", { 1, 3 }).ints("keepdims", { 0 }).input({ 2, 3, 4, 5 }).output({ 2, 4 }); break;
    case 12: h = std::make_unique<HandCall>("ReduceMean"); h->input({ 3, 4, 5 }).int64s({ -1, 0 }).output({ 1, 4, 1 }); break;
    case 13: h = std::make_unique<HandCall>("ReduceMean"); h->ints("noop_with_empty_axes", { 1 }).input({ 3, 4 }).output({ 3, 4 }); break;
    case 14: h = std::make_unique<HandCall>("ConvTranspose"); h->ints("group", { 2 }).ints("pads", { 1, 0, 0, 1 })
                .input({ 2, 4, 3, 3 }).input({ 4, 3, 3, 2 }, 2).input({ 6 }, 3).output({ 2, 6, 4, 3 }); break;
    case 15: h = std::make_unique<HandCall>("ConvTranspose"); h->ints("strides", { 2, 3 }).ints("dilations", { 2, 1 }).ints("output_padding", { 1, 2 })
                .ints("pads", { 1, 1, 0, 2 }).input({ 1, 2, 3, 4 }).input({ 2, 3, 3, 2 }, 2).output({ 1, 3, 9, 10 }); break;
    case 16: h = std::make_unique<HandCall>("ConvTranspose"); h->text("auto_pad", "SAME_LOWER").ints("strides", { 2 })
                .input({ 1, 2, 5 }).input({ 2, 2, 4 }, 2).output({ 1, 2, 10 }); break;
    case 17: h = std::make_unique<HandCall>("Equal"); h->input({ 2, 3, 4 }, 1, F32, 5).input({ 3, 1 }, 2, F32, 5).output({ 2, 3, 4 }, Bool); break;
    case 18: h = std::make_unique<HandCall>("Equal"); h->input({ 4, 1 }, 1, I64).input({ 1, 5 }, 2, I64).output({ 4, 5 }, Bool); break;
    case 19: h = std::make_unique<HandCall>("Less"); h->input({ 3, 4 }, 1, F32, 5).input({}, 2, F32, 5).output({ 3, 4 }, Bool); break;
    case 20: h = std::make_unique<HandCall>("Where"); h->input({ 1, 4, 1 }, 1, Bool).input({ 3, 1, 5 }, 2).input({ 5 }, 3).output({ 3, 4, 5 }); break;
    case 21: h = std::make_unique<HandCall>("Where"); h->input({ 2, 3 }, 1, Bool).input({ 2, 3 }, 2, I64).input({ 1 }, 3, I64).output({ 2, 3 }, I64); break;
    case 22: h = std::make_unique<HandCall>("Cast"); h->input({ 4, 5 }).output({ 4, 5 }, I64); break;
    case 23: h = std::make_unique<HandCall>("Cast"); h->input({ 4, 5 }, 1, I64).output({ 4, 5 }); break;
    case 24: h = std::make_unique<HandCall>("Cast"); h->input({ 4, 5 }, 1, Bool).output({ 4, 5 }); break;
    case 25: h = std::make_unique<HandCall>("Cast"); h->input({ 4, 5 }, 1, F32, 3).output({ 4, 5 }, Bool); break;
    case 26: h = std::make_unique<HandCall>("Cast"); h->input({ 4, 5 }, 1, I64).output({ 4, 5 }, core::DType::Int32); break;
    case 27: h = std::make_unique<HandCall>("Not"); h->input({ 3, 4 }, 1, Bool).output({ 3, 4 }, Bool); break;
    case 28: h = std::make_unique<HandCall>("Max"); h->input({ 2, 3 }, 1, F32, 5).input({ 3 }, 2, F32, 5).output({ 2, 3 }); break;
    case 29: h = std::make_unique<HandCall>("Min"); h->input({ 2, 1, 3 }).input({ 4, 1 }, 2).output({ 2, 4, 3 }); break;
    case 30: h = std::make_unique<HandCall>("Clip"); h->input({ 3, 4 }).floats({ -1.5f }).floats({ 2.0f }).output({ 3, 4 }); break;
    case 31: h = std::make_unique<HandCall>("Pow"); h->input({ 3, 4 }).floats({ 2.0f }).output({ 3, 4 }); break;
    case 32: h = std::make_unique<HandCall>("QuantizeLinear"); h->floats({ 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, NAN, INFINITY, -INFINITY,
                1000.0f, -1000.0f, 1e10f, -1e10f, 126.5f, 127.5f, -128.5f, 0.49999997f }).floats({ 1.0f }).integers(core::DType::UInt8, { 128 })
                .output({ 17 }, core::DType::UInt8); break;
    case 33: h = std::make_unique<HandCall>("QuantizeLinear"); h->ints("axis", { -1 }).input({ 2, 3, 4 }, 1, F32, 41)
                .floats({ 1.0f, 0.5f, 0.25f, 2.0f }).output({ 2, 3, 4 }, core::DType::Int8); break;
    case 34: h = std::make_unique<HandCall>("QuantizeLinear"); h->input({ 2, 3, 5 }, 2).floats({ 0.0625f, 0.3f, 1.0f })
                .integers(core::DType::UInt8, { 0, 128, 255 }).output({ 2, 3, 5 }, core::DType::UInt8); break;
    case 35: h = std::make_unique<HandCall>("DequantizeLinear"); h->ints("axis", { 0 }).input({ 3, 4 }, 1, core::DType::Int8)
                .floats({ 0.1f, 0.5f, 3.0f }).integers(core::DType::Int8, { -128, 0, 127 }).output({ 3, 4 }); break;
    case 36: h = std::make_unique<HandCall>("DequantizeLinear"); h->integers(core::DType::Int32, { 2147483647, -2147483647 - 1, 16777217, -3, 0 })
                .floats({ 0.37f }).output({ 5 }); break;
    case 37: h = std::make_unique<HandCall>("DequantizeLinear"); h->input({ 2, 3, 2, 2 }, 3, core::DType::UInt8).floats({ 0.02f, 1.5f, 0.7f })
                .integers(core::DType::UInt8, { 3, 128, 250 }).output({ 2, 3, 2, 2 }); break;
    case 38: h = std::make_unique<HandCall>("MatMulInteger"); h->input({ 2, 3, 4, 5 }, 1, I8).input({ 3, 5, 6 }, 2, U8)
                .integers(I8, { -3, 0, 5, 127 }).integers(U8, { 0, 1, 128, 200, 255, 7 }).output({ 2, 3, 4, 6 }, I32); break;
    case 39: h = std::make_unique<HandCall>("MatMulInteger"); h->input({ 3, 4, 5 }, 1, U8).input({ 5, 2 }, 2, I8).input({ 3, 4, 1 }, 3, U8)
                .input({ 1, 2 }, 4, I8).output({ 3, 4, 2 }, I32); break;
    case 40: h = std::make_unique<HandCall>("QLinearMatMul"); h->input({ 4, 8 }, 1, I8).floats({ 0.05f }).integers(I8, { 3 }).input({ 8, 3 }, 2, U8)
                .floats({ 0.01f, 0.2f, 3.0f }).integers(U8, { 0, 128, 250 }).floats({ 0.7f }).integers(I8, { -5 }).output({ 4, 3 }, I8); break;
    case 41: h = std::make_unique<HandCall>("QLinearConv"); h->ints("group", { 2 }).ints("strides", { 2, 1 }).ints("pads", { 1, 0, 1, 2 })
                .ints("dilations", { 1, 2 }).input({ 1, 4, 7, 6 }, 1, U8).floats({ 0.02f }).integers(U8, { 128 }).input({ 6, 2, 3, 3 }, 2, I8)
                .floats({ 0.01f, 0.02f, 0.05f, 0.1f, 0.003f, 1.0f }).integers(I8, { 0, 1, -1, 2, 0, -3 }).floats({ 0.3f }).integers(U8, { 100 })
                .integers(I32, { -500, 0, 1000, 70000, -3, 12 }).output({ 1, 6, 4, 4 }, U8); break;
    case 42: h = std::make_unique<HandCall>("ConvInteger"); h->ints("pads", { 0, 1, 1, 1, 0, 1 }).input({ 1, 2, 4, 5, 5 }, 1, I8)
                .input({ 3, 2, 2, 3, 3 }, 2, I8).integers(I8, { -2 }).integers(I8, { 1 }).output({ 1, 3, 4, 4, 5 }, I32); break;
    case 43: h = std::make_unique<HandCall>("Conv"); h->ints("group", { 4 }).ints("strides", { 2, 1 }).ints("pads", { 1, 2, 0, 1 })
                .ints("dilations", { 1, 2 }).input({ 2, 4, 7, 6 }).input({ 8, 1, 3, 3 }, 2).input({ 8 }, 3).output({ 2, 8, 3, 5 }); break;
    case 44: h = std::make_unique<HandCall>("Conv"); h->ints("group", { 3 }).input({ 1, 6, 9 }).input({ 3, 2, 4 }, 2).output({ 1, 3, 6 }); break;
    case 45: h = std::make_unique<HandCall>("Conv"); h->ints("group", { 2 }).ints("pads", { 1, 1, 1, 1, 1, 1 }).input({ 1, 2, 3, 4, 5 })
                .input({ 2, 1, 3, 3, 3 }, 2).output({ 1, 2, 3, 4, 5 }); break;
    }
    std::vector<std::vector<std::byte>> cpuOut, mathOut;
    const auto cpuCall = h->fresh(cpuOut);
    const auto mathCall = h->fresh(mathOut);
    QVERIFY2(core::exec::findKernel(h->op.type)(cpuCall), "the CPU kernel takes the call");
    QVERIFY2(!drivers().at(h->op.type)(mathCall).empty(), "the device op takes the call");
    auto why = closeWithin(asHost(cpuCall), asHost(mathCall));
    if (why.empty() && bitForBit(h->op.type))
        why = identical(asHost(cpuCall), asHost(mathCall));
    QVERIFY2(why.empty(), why.c_str());
}

// The quantization configurations the CPU kernel refuses, the device op refuses too (so the op runs
// on the host, where it fails as it does on the CPU): blocked quantization, a zero point of another
// type than the quantized data, a per-axis scale of the wrong extent or rank, a zero point of
// another element count than the scale, a float output of QuantizeLinear, a float input of
// DequantizeLinear.
void TestGpuMath::quantizationRefusedAsOnTheCpu()
{
    constexpr auto F32 = core::DType::Float32, U8 = core::DType::UInt8, I8 = core::DType::Int8;
    std::vector<std::unique_ptr<HandCall>> calls;
    const auto call = [&](const char* type) { return calls.emplace_back(std::make_unique<HandCall>(type)).get(); };
    call("QuantizeLinear")->ints("block_size", { 2 }).input({ 2, 4 }).input({ 2, 2 }).output({ 2, 4 }, U8);
    call("QuantizeLinear")->input({ 2, 4 }).floats({ 0.5f }).integers(I8, { 3 }).output({ 2, 4 }, U8);
    call("QuantizeLinear")->input({ 2, 4 }).floats({ 0.5f, 1.0f, 2.0f }).output({ 2, 4 }, U8); // axis 1 has 4
    call("QuantizeLinear")->input({ 2, 4 }).input({ 2, 4 }).output({ 2, 4 }, I8);
    call("QuantizeLinear")->input({ 2, 4 }).floats({ 0.5f, 1.0f }).integers(U8, { 1 }).ints("axis", { 0 }).output({ 2, 4 }, U8);
    call("QuantizeLinear")->input({ 2, 4 }).floats({ 0.5f }).output({ 2, 4 }, F32);
    call("DequantizeLinear")->input({ 2, 4 }, 1, U8).floats({ 0.5f }).integers(I8, { 3 }).output({ 2, 4 });
    call("DequantizeLinear")->input({ 2, 4 }, 1, I8).floats({ 0.5f, 1.0f }).output({ 2, 4 }); // axis 1 has 4
    call("DequantizeLinear")->ints("block_size", { 4 }).input({ 2, 4 }, 1, I8).floats({ 0.5f, 1.0f }).ints("axis", { 0 }).output({ 2, 4 });
    call("DequantizeLinear")->input({ 2, 4 }).floats({ 0.5f }).output({ 2, 4 });
    for (const auto& h : calls) {
        std::vector<std::vector<std::byte>> cpuOut, mathOut;
        QVERIFY2(!core::exec::findKernel(h->op.type)(h->fresh(cpuOut)), "the CPU kernel refuses the call");
        QVERIFY2(drivers().at(h->op.type)(h->fresh(mathOut)).empty(), "the device op refuses the call");
    }
}

QTEST_GUILESS_MAIN(TestGpuMath)
#include "tst_gpumath.moc"
