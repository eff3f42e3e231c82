// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "examples/examplenets.h"

#include <cassert>
#include <initializer_list>
#include <utility>

namespace core {

namespace {
using Shape = std::vector<std::int64_t>;
using Attributes = std::map<std::string, Attribute>;

Attribute ints(std::initializer_list<std::int64_t> values)
{
    Attribute a;
    a.ints = values;
    a.list = true;
    return a;
}

Attribute integer(std::int64_t value)
{
    Attribute a;
    a.ints = { value };
    return a;
}

Attribute real(float value)
{
    Attribute a;
    a.floats = { value };
    return a;
}

// Appends tensors and ops in execution order. Shapes are worked out by the helpers below, the way
// ONNX shape inference would, so that an exported model re-infers to the same shapes.
class NetBuilder {
public:
    explicit NetBuilder(std::string name) { m_graph.name = std::move(name); }

    TensorIndex input(const std::string& name, Shape shape, DType dtype = DType::Float32)
    {
        const auto t = addTensor(name, dtype, std::move(shape), TensorKind::Input);
        m_graph.inputs.push_back(t);
        return t;
    }

    TensorIndex weight(const std::string& name, Shape shape, DType dtype = DType::Float32)
    {
        return addTensor(name, dtype, std::move(shape), TensorKind::Weight);
    }

    // A 1-D int64 constant with known contents (shape arguments).
    TensorIndex constant(const std::string& name, std::vector<std::int64_t> values)
    {
        const auto t = weight(name, { static_cast<std::int64_t>(values.size()) }, DType::Int64);
        m_graph.tensors[t].values = std::move(values);
        return t;
    }

    // One op with one new activation output named `name` + ".out".
    TensorIndex op(const std::string& type, const std::string& name, std::vector<TensorIndex> inputs, Shape outShape,
        Attributes attributes = {})
    {
        const auto out = addTensor(name + ".out", DType::Float32, std::move(outShape), TensorKind::Activation);
        Op op;
        op.name = name;
        op.type = type;
        op.inputs = std::move(inputs);
        op.outputs = { out };
        op.attributes = std::move(attributes);
        m_graph.ops.push_back(std::move(op));
        return out;
    }

    Shape shape(TensorIndex t) const { return m_graph.tensors[t].shape; } // a copy: adding tensors reallocates

    // Marks the graph outputs (renamed to `names`) and sizes every tensor.
    Graph finish(std::vector<std::pair<TensorIndex, std::string>> outputs)
    {
        for (auto& [t, name] : outputs) {
            m_graph.tensors[t].kind = TensorKind::Output;
            m_graph.tensors[t].name = std::move(name);
            m_graph.outputs.push_back(t);
        }
        computeSizes(m_graph);
        return std::move(m_graph);
    }

    // Building blocks shared by the examples (NCHW, float32).

    TensorIndex conv(const std::string& name, TensorIndex x, std::int64_t outChannels, std::int64_t kernel, std::int64_t stride,
        std::int64_t pad)
    {
        const auto s = shape(x);
        const auto w = weight(name + ".weight", { outChannels, s[1], kernel, kernel });
        const auto b = weight(name + ".bias", { outChannels });
        const auto h = (s[2] + 2 * pad - kernel) / stride + 1;
        const auto wd = (s[3] + 2 * pad - kernel) / stride + 1;
        return op("Conv", name, { x, w, b }, { s[0], outChannels, h, wd },
            { { "dilations", ints({ 1, 1 }) }, { "group", integer(1) }, { "kernel_shape", ints({ kernel, kernel }) },
                { "pads", ints({ pad, pad, pad, pad }) }, { "strides", ints({ stride, stride }) } });
    }

    // Doubles height and width: kernel 2, stride 2.
    TensorIndex upConv(const std::string& name, TensorIndex x, std::int64_t outChannels)
    {
        const auto s = shape(x);
        const auto w = weight(name + ".weight", { s[1], outChannels, 2, 2 }); // ConvTranspose: [C_in, C_out/group, kH, kW]
        const auto b = weight(name + ".bias", { outChannels });
        return op("ConvTranspose", name, { x, w, b }, { s[0], outChannels, s[2] * 2, s[3] * 2 },
            { { "dilations", ints({ 1, 1 }) }, { "group", integer(1) }, { "kernel_shape", ints({ 2, 2 }) },
                { "pads", ints({ 0, 0, 0, 0 }) }, { "strides", ints({ 2, 2 }) } });
    }

    TensorIndex maxPool(const std::string& name, TensorIndex x, std::int64_t kernel, std::int64_t stride, std::int64_t pad)
    {
        const auto s = shape(x);
        const auto h = (s[2] + 2 * pad - kernel) / stride + 1;
        const auto wd = (s[3] + 2 * pad - kernel) / stride + 1;
        return op("MaxPool", name, { x }, { s[0], s[1], h, wd },
            { { "kernel_shape", ints({ kernel, kernel }) }, { "pads", ints({ pad, pad, pad, pad }) },
                { "strides", ints({ stride, stride }) } });
    }

    TensorIndex relu(const std::string& name, TensorIndex x) { return op("Relu", name, { x }, shape(x)); }

    // Elementwise with numpy broadcasting where `b` is no larger than `a` (bias, residual, scalar).
    TensorIndex binary(const std::string& type, const std::string& name, TensorIndex a, TensorIndex b)
    {
        return op(type, name, { a, b }, shape(a));
    }

    TensorIndex matMul(const std::string& name, TensorIndex a, TensorIndex b)
    {
        auto s = shape(a);
        s.back() = shape(b).back();
        return op("MatMul", name, { a, b }, s);
    }

    TensorIndex transpose(const std::string& name, TensorIndex x, std::initializer_list<std::int64_t> perm)
    {
        const auto s = shape(x);
        Shape out;
        for (auto axis : perm)
            out.push_back(s[axis]);
        return op("Transpose", name, { x }, out, { { "perm", ints(perm) } });
    }

    TensorIndex reshape(const std::string& name, TensorIndex x, TensorIndex shapeTensor, Shape out)
    {
        return op("Reshape", name, { x, shapeTensor }, std::move(out), { { "allowzero", integer(0) } });
    }

private:
    TensorIndex addTensor(const std::string& name, DType dtype, Shape shape, TensorKind kind)
    {
        assert(!m_graph.findTensor(name) && "tensor names are unique");
        Tensor tensor;
        tensor.name = name;
        tensor.dtype = dtype;
        tensor.shape = std::move(shape);
        tensor.rankKnown = true;
        tensor.kind = kind;
        m_graph.tensors.push_back(std::move(tensor));
        return static_cast<TensorIndex>(m_graph.tensors.size() - 1);
    }

    Graph m_graph;
};
} // namespace

Graph buildCnnExample()
{
    NetBuilder b("cnn");
    auto x = b.input("input", { 1, 3, 224, 224 });
    x = b.conv("conv1", x, 64, 7, 2, 3);
    x = b.relu("relu", x);
    x = b.maxPool("maxpool", x, 3, 2, 1);
    // Four stages of two basic blocks; the first block of stages 2-4 halves the resolution and
    // projects the shortcut with a 1x1 convolution.
    const std::pair<std::int64_t, std::int64_t> stages[] = { { 64, 1 }, { 128, 2 }, { 256, 2 }, { 512, 2 } };
    for (int stage = 0; stage < 4; ++stage) {
        const auto [channels, firstStride] = stages[stage];
        for (int block = 0; block < 2; ++block) {
            const auto prefix = "layer" + std::to_string(stage + 1) + "." + std::to_string(block) + ".";
            const auto stride = block == 0 ? firstStride : 1;
            auto shortcut = x;
            auto y = b.conv(prefix + "conv1", x, channels, 3, stride, 1);
            y = b.relu(prefix + "relu1", y);
            y = b.conv(prefix + "conv2", y, channels, 3, 1, 1);
            if (stride != 1 || b.shape(x)[1] != channels)
                shortcut = b.conv(prefix + "downsample", x, channels, 1, stride, 0);
            y = b.binary("Add", prefix + "add", y, shortcut);
            x = b.relu(prefix + "relu2", y);
        }
    }
    const auto s = b.shape(x);
    x = b.op("GlobalAveragePool", "avgpool", { x }, { s[0], s[1], 1, 1 });
    x = b.op("Flatten", "flatten", { x }, { s[0], s[1] }, { { "axis", integer(1) } });
    const auto fcWeight = b.weight("fc.weight", { 1000, s[1] });
    const auto fcBias = b.weight("fc.bias", { 1000 });
    x = b.op("Gemm", "fc", { x, fcWeight, fcBias }, { s[0], 1000 },
        { { "alpha", real(1.0f) }, { "beta", real(1.0f) }, { "transB", integer(1) } });
    return b.finish({ { x, "logits" } });
}

Graph buildUnetExample()
{
    NetBuilder b("unet");
    auto twoConvs = [&](const std::string& prefix, TensorIndex x, std::int64_t channels) {
        x = b.relu(prefix + ".relu1", b.conv(prefix + ".conv1", x, channels, 3, 1, 1));
        return b.relu(prefix + ".relu2", b.conv(prefix + ".conv2", x, channels, 3, 1, 1));
    };
    auto x = b.input("image", { 1, 3, 256, 256 });
    // Encoder: each level's output is kept (skips[level]) until the decoder level of the same
    // resolution concatenates it: these long skips dominate the memory curve.
    std::vector<TensorIndex> skips;
    std::int64_t channels = 64;
    for (int level = 1; level <= 4; ++level, channels *= 2) {
        x = twoConvs("enc" + std::to_string(level), x, channels);
        skips.push_back(x);
        x = b.maxPool("pool" + std::to_string(level), x, 2, 2, 0);
    }
    x = twoConvs("bottleneck", x, channels); // 1024 channels at 16x16
    for (int level = 4; level >= 1; --level) {
        channels /= 2;
        const auto up = b.upConv("up" + std::to_string(level), x, channels);
        const auto skip = skips[level - 1];
        auto s = b.shape(up);
        s[1] += b.shape(skip)[1];
        x = b.op("Concat", "cat" + std::to_string(level), { skip, up }, s, { { "axis", integer(1) } });
        x = twoConvs("dec" + std::to_string(level), x, channels);
    }
    x = b.conv("head", x, 2, 1, 1, 0); // two classes, logits per pixel
    return b.finish({ { x, "mask" } });
}

Graph buildTransformerExample()
{
    constexpr std::int64_t kSeq = 128, kHidden = 512, kHeads = 8, kHeadDim = kHidden / kHeads, kFfn = 2048, kVocab = 8192;
    constexpr int kLayers = 4;
    NetBuilder b("transformer");
    const auto ids = b.input("input_ids", { 1, kSeq }, DType::Int64);
    const auto embedding = b.weight("embedding.weight", { kVocab, kHidden });
    const auto positions = b.weight("position.weight", { 1, kSeq, kHidden });
    // Constants shared by every layer, as exporters deduplicate them.
    const auto headsShape = b.constant("heads_shape", { 1, kSeq, kHeads, kHeadDim });
    const auto hiddenShape = b.constant("hidden_shape", { 1, kSeq, kHidden });
    const auto scale = b.weight("attn_scale", {});                         // 1 / sqrt(64)

    auto x = b.op("Gather", "embed", { embedding, ids }, { 1, kSeq, kHidden }, { { "axis", integer(0) } });
    x = b.binary("Add", "embed.add_position", x, positions);
    const Shape heads { 1, kSeq, kHeads, kHeadDim };

    for (int layer = 0; layer < kLayers; ++layer) {
        const auto p = "layers." + std::to_string(layer) + ".";
        auto linear = [&](const std::string& name, TensorIndex in, std::int64_t outFeatures) {
            const auto w = b.weight(p + name + ".weight", { b.shape(in).back(), outFeatures });
            const auto bias = b.weight(p + name + ".bias", { outFeatures });
            return b.binary("Add", p + name + ".add_bias", b.matMul(p + name, in, w), bias);
        };
        auto layerNorm = [&](const std::string& name, TensorIndex in) {
            const auto gamma = b.weight(p + name + ".weight", { kHidden });
            const auto beta = b.weight(p + name + ".bias", { kHidden });
            return b.op("LayerNormalization", p + name, { in, gamma, beta }, b.shape(in),
                { { "axis", integer(-1) }, { "epsilon", real(1e-5f) } });
        };

        // Self-attention: project, split into heads, scaled dot product, merge heads, project.
        const auto q = b.transpose(p + "attn.q_transpose", b.reshape(p + "attn.q_reshape", linear("attn.q_proj", x, kHidden), headsShape, heads),
            { 0, 2, 1, 3 });
        const auto k = b.transpose(p + "attn.k_transpose", b.reshape(p + "attn.k_reshape", linear("attn.k_proj", x, kHidden), headsShape, heads),
            { 0, 2, 3, 1 });
        const auto v = b.transpose(p + "attn.v_transpose", b.reshape(p + "attn.v_reshape", linear("attn.v_proj", x, kHidden), headsShape, heads),
            { 0, 2, 1, 3 });
        auto scores = b.binary("Mul", p + "attn.scale", b.matMul(p + "attn.scores", q, k), scale);
        scores = b.op("Softmax", p + "attn.softmax", { scores }, b.shape(scores), { { "axis", integer(-1) } });
        auto context = b.transpose(p + "attn.context_transpose", b.matMul(p + "attn.context", scores, v), { 0, 2, 1, 3 });
        context = b.reshape(p + "attn.merge_heads", context, hiddenShape, { 1, kSeq, kHidden });
        const auto attention = linear("attn.out_proj", context, kHidden);
        x = layerNorm("norm1", b.binary("Add", p + "residual1", x, attention));

        // Feed-forward: up to 2048, ReLU, back down to 512.
        auto ffn = b.relu(p + "ffn.act", linear("ffn.up", x, kFfn));
        ffn = linear("ffn.down", ffn, kHidden);
        x = layerNorm("norm2", b.binary("Add", p + "residual2", x, ffn));
    }
    return b.finish({ { x, "hidden_states" } });
}

} // namespace core
