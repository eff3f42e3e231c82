// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Activations, binary arithmetic, pooling, Softmax, LayerNormalization, Transpose and Slice on oneDNN
// (float32, row-major as the arena holds them): each op's own kernel stays behind it for every call
// oneDNN does not take.
#include "exec/onednn.h"
#include "exec/onednnprimitive.h"

#include "exec/executor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

namespace core::exec {

namespace {

using namespace onednn_detail;

// Set while planning asks for an op's workspace (onednnPointwiseWorkspaceBytes): the kinds below
// then make their primitive and report its workspace instead of running it, and a kind whose
// primitive depends on input values (Clip's bounds, Slice's starts) declines, reading nothing.
thread_local std::int64_t* probing = nullptr;

bool runOrProbe(const KernelCall& c, const std::shared_ptr<const Primitive>& p, const std::vector<void*>& data)
{
    if (!p)
        return false;
    if (probing) {
        *probing = p->workspaceBytes;
        return true;
    }
    return execute(c, *p, data);
}

// The data input and the output are float32 tensors of rank 1 to 6 (each kind checks its other inputs).
bool floats(const KernelCall& c)
{
    if (!c.op || c.out.empty() || c.in.empty() || !c.in[0].present())
        return false;
    const auto plainFloat = [](const TensorView& v) { return v.dtype == DType::Float32 && !v.sequence && v.rank() >= 1 && v.rank() <= 6; };
    return plainFloat(c.in[0]) && plainFloat(c.out[0]);
}

bool isFloat(const KernelCall& c, std::size_t slot)
{
    return c.has(slot) && c.in[slot].dtype == DType::Float32;
}

// One float32 scalar of input `slot`, or `fallback` when absent.
bool scalarInput(const KernelCall& c, std::size_t slot, float fallback, float& value)
{
    value = fallback;
    if (!c.has(slot))
        return true;
    if (c.in[slot].count != 1 || c.in[slot].dtype != DType::Float32)
        return false;
    value = c.in[slot].f32()[0];
    return true;
}

} // namespace

// Unary activations: algorithm, alpha and beta as oneDNN defines them for the ONNX op.
bool onednn_detail::eltwiseAlgorithm(const KernelCall& c, dnnl::algorithm& algorithm, float& alpha, float& beta)
{
    const auto& type = c.op->type;
    alpha = 0;
    beta = 0;
    if (type == "Relu")
        algorithm = dnnl::algorithm::eltwise_relu;
    else if (type == "LeakyRelu") {
        algorithm = dnnl::algorithm::eltwise_relu;
        alpha = c.attrFloat("alpha", 0.01f);
    } else if (type == "Sigmoid")
        algorithm = dnnl::algorithm::eltwise_logistic;
    else if (type == "Tanh")
        algorithm = dnnl::algorithm::eltwise_tanh;
    else if (type == "HardSwish") { // x * max(0, min(1, x / 6 + 1 / 2))
        algorithm = dnnl::algorithm::eltwise_hardswish;
        alpha = 1.0f / 6.0f;
        beta = 0.5f;
    } else if (type == "Clip") {
        algorithm = dnnl::algorithm::eltwise_clip_v2;
        if (c.has(1) || c.has(2)) { // opset 11+: bounds as inputs
            if (probing || !scalarInput(c, 1, -INFINITY, alpha) || !scalarInput(c, 2, INFINITY, beta))
                return false;
        } else {
            alpha = c.attrFloat("min", -INFINITY);
            beta = c.attrFloat("max", INFINITY);
        }
        if (std::isnan(alpha) || std::isnan(beta) || alpha > beta)
            return false;
    } else
        return false;
    return true;
}

namespace {

bool runEltwise(const KernelCall& c)
{
    dnnl::algorithm algorithm {};
    float alpha = 0, beta = 0;
    if (c.out.size() != 1 || c.in[0].shape != c.out[0].shape || c.in[0].channelsLast != c.out[0].channelsLast
        || !eltwiseAlgorithm(c, algorithm, alpha, beta))
        return false;
    const dims shape = shapeOf(c.out[0]);
    const auto bits = [](float v) {
        std::int32_t b;
        std::memcpy(&b, &v, sizeof b);
        return std::int64_t(b);
    };
    const auto p = cached(c, key("eltwise", { shape }, { std::int64_t(algorithm), bits(alpha), bits(beta), layoutBits(c) }),
        [&](const dnnl::primitive_attr& attr) -> std::shared_ptr<const Primitive> {
            const dnnl::memory::desc md = activationDesc(c.out[0], shape);
            const dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, algorithm, md, alpha, beta);
            return finish<dnnl::eltwise_forward::primitive_desc, dnnl::eltwise_forward>(
                dnnl::eltwise_forward::primitive_desc(d, attr, engine()), { { DNNL_ARG_SRC, md }, { DNNL_ARG_DST, md } });
        });
    return runOrProbe(c, p, { c.in[0].data, c.out[0].data });
}

// Add, Sub, Mul, Div with numpy broadcasting where oneDNN has it: the first operand has the result's
// shape and the second broadcasts into it (for Add and Mul the operands swap when only the first
// broadcasts: both are commutative bit for bit).
bool runBinary(const KernelCall& c)
{
    const auto& type = c.op->type;
    dnnl::algorithm algorithm {};
    bool commutative = false;
    if (type == "Add") {
        algorithm = dnnl::algorithm::binary_add;
        commutative = true;
    } else if (type == "Mul") {
        algorithm = dnnl::algorithm::binary_mul;
        commutative = true;
    } else if (type == "Sub")
        algorithm = dnnl::algorithm::binary_sub;
    else if (type == "Div")
        algorithm = dnnl::algorithm::binary_div;
    else
        return false;
    if (!isFloat(c, 0) || !isFloat(c, 1) || c.in.size() != 2 || c.out.size() != 1)
        return false;
    const dims y = shapeOf(c.out[0]);
    const auto padded = [&](const TensorView& v) {
        dims d = shapeOf(v);
        d.insert(d.begin(), y.size() >= d.size() ? y.size() - d.size() : 0, 1);
        return d;
    };
    dims a = padded(c.in[0]), b = padded(c.in[1]);
    int first = 0, second = 1;
    if (a != y && commutative) {
        std::swap(a, b);
        std::swap(first, second);
    }
    if (a != y || b.size() != y.size())
        return false;
    for (std::size_t i = 0; i < y.size(); ++i)
        if (b[i] != y[i] && b[i] != 1)
            return false;
    const auto p = cached(c, key("binary", { a, b }, { std::int64_t(algorithm), layoutBits(c), first }),
        [&](const dnnl::primitive_attr& attr) -> std::shared_ptr<const Primitive> {
            const dnnl::memory::desc src0 = activationDesc(c.in[std::size_t(first)], a), src1 = activationDesc(c.in[std::size_t(second)], b),
                                     dst = activationDesc(c.out[0], y);
            const dnnl::binary::desc d(algorithm, src0, src1, dst);
            return finish<dnnl::binary::primitive_desc, dnnl::binary>(dnnl::binary::primitive_desc(d, attr, engine()),
                { { DNNL_ARG_SRC_0, src0 }, { DNNL_ARG_SRC_1, src1 }, { DNNL_ARG_DST, dst } });
        });
    return runOrProbe(c, p, { c.in[std::size_t(first)].data, c.in[std::size_t(second)].data, c.out[0].data });
}

// MaxPool (no Indices output), AveragePool and GlobalAveragePool over 1-D and 2-D windows, ceil_mode 0.
bool runPool(const KernelCall& c)
{
    const auto& type = c.op->type;
    if (!c.has(0) || c.out.size() != 1 || c.in[0].rank() < 3 || c.in[0].rank() > 4 || c.out[0].rank() != c.in[0].rank())
        return false;
    const auto &x = c.in[0], &y = c.out[0];
    const std::size_t spatial = std::size_t(x.rank() - 2);
    dnnl::algorithm algorithm {};
    dims kernel, strides, padL, padR, dilation(spatial, 0);
    if (type == "GlobalAveragePool") {
        algorithm = dnnl::algorithm::pooling_avg_include_padding;
        kernel.assign(x.shape.begin() + 2, x.shape.end());
        strides.assign(spatial, 1);
        padL.assign(spatial, 0);
        padR.assign(spatial, 0);
    } else if (type == "MaxPool" || type == "AveragePool") {
        if (c.attrInt("ceil_mode", 0) != 0 || c.attrInt("storage_order", 0) != 0)
            return false;
        const auto* k = c.attrInts("kernel_shape");
        if (!k || k->size() != spatial)
            return false;
        kernel.assign(k->begin(), k->end());
        WindowAttrs w;
        const Shape in(x.shape.begin() + 2, x.shape.end()), out(y.shape.begin() + 2, y.shape.end());
        if (!windowAttrs(c, in, out, Shape(k->begin(), k->end()), w))
            return false;
        strides.assign(w.strides.begin(), w.strides.end());
        padL.assign(w.pads.begin(), w.pads.begin() + std::ptrdiff_t(spatial));
        padR.assign(w.pads.begin() + std::ptrdiff_t(spatial), w.pads.end());
        for (std::size_t i = 0; i < spatial; ++i) {
            dilation[i] = w.dilations[i] - 1;
            // oneDNN wants the end pads that give exactly this output: the stride may skip some.
            const std::int64_t span = (kernel[i] - 1) * w.dilations[i] + 1;
            const std::int64_t need = (out[i] - 1) * strides[i] + span - in[i] - padL[i];
            if (need > padR[i] || need < padR[i] - strides[i] + 1 || strides[i] < 1)
                return false;
            padR[i] = std::max<std::int64_t>(need, 0);
        }
        algorithm = type == "MaxPool" ? dnnl::algorithm::pooling_max
            : c.attrInt("count_include_pad", 0)   ? dnnl::algorithm::pooling_avg_include_padding
                                                  : dnnl::algorithm::pooling_avg_exclude_padding;
    } else
        return false;
    const dims src = shapeOf(x), dst = shapeOf(y);
    std::vector<std::int64_t> attrs { std::int64_t(algorithm), layoutBits(c) };
    for (const auto* v : { &kernel, &strides, &padL, &padR, &dilation })
        attrs.insert(attrs.end(), v->begin(), v->end());
    const auto p = cached(c, key("pool", { src, dst }, attrs), [&](const dnnl::primitive_attr& attr) -> std::shared_ptr<const Primitive> {
        // A pooled output of one element per channel (GlobalAveragePool's) is the same bytes in either
        // layout: described as the input's, so oneDNN's fast N,H,W,C pooling takes it.
        const bool single = dst.size() == 4 && dst[2] * dst[3] == 1;
        const dnnl::memory::desc s = activationDesc(x, src),
                                 d = x.channelsLast && single ? dnnl::memory::desc(dst, dt::f32, tag::acdb) : activationDesc(y, dst);
        const dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm, s, d, strides, kernel, dilation, padL, padR);
        return finish<dnnl::pooling_v2_forward::primitive_desc, dnnl::pooling_v2_forward>(
            dnnl::pooling_v2_forward::primitive_desc(desc, attr, engine()), { { DNNL_ARG_SRC, s }, { DNNL_ARG_DST, d } });
    });
    return runOrProbe(c, p, { x.data, y.data });
}

// Softmax and LogSoftmax along one axis (the own kernels' opset-13 semantics).
bool runSoftmax(const KernelCall& c)
{
    const auto& type = c.op->type;
    if ((type != "Softmax" && type != "LogSoftmax") || !c.has(0) || c.out.size() != 1 || c.in[0].shape != c.out[0].shape)
        return false;
    const dims shape = shapeOf(c.out[0]);
    const int axis = normAxis(c.attrInt("axis", -1), int(shape.size()));
    const auto algorithm = type == "Softmax" ? dnnl::algorithm::softmax_accurate : dnnl::algorithm::softmax_log;
    const auto p = cached(c, key("softmax", { shape }, { axis, std::int64_t(algorithm) }),
        [&](const dnnl::primitive_attr& attr) -> std::shared_ptr<const Primitive> {
            const dnnl::memory::desc md(shape, dt::f32, plainStrides(shape));
            const dnnl::softmax_v2_forward::desc d(dnnl::prop_kind::forward_inference, algorithm, md, md, axis);
            return finish<dnnl::softmax_v2_forward::primitive_desc, dnnl::softmax_v2_forward>(
                dnnl::softmax_v2_forward::primitive_desc(d, attr, engine()), { { DNNL_ARG_SRC, md }, { DNNL_ARG_DST, md } });
        });
    return runOrProbe(c, p, { c.in[0].data, c.out[0].data });
}

// LayerNormalization over the trailing axes from `axis`, with a scale and an optional bias of that
// size (no Mean / InvStdDev outputs): the tensor as [outer, inner].
bool runLayerNorm(const KernelCall& c)
{
    if (c.op->type != "LayerNormalization" || !isFloat(c, 1) || (c.has(2) && !isFloat(c, 2)) || c.out.size() != 1
        || c.in[0].shape != c.out[0].shape)
        return false;
    const auto& x = c.in[0];
    const int axis = normAxis(c.attrInt("axis", -1), x.rank());
    std::int64_t inner = 1;
    for (int d = axis; d < x.rank(); ++d)
        inner *= x.shape[std::size_t(d)];
    if (inner <= 0 || x.count % inner || c.in[1].count != inner || (c.has(2) && c.in[2].count != inner))
        return false;
    const dims shape { x.count / inner, inner };
    const float eps = c.attrFloat("epsilon", 1e-5f);
    std::int32_t epsBits;
    std::memcpy(&epsBits, &eps, sizeof epsBits);
    const bool shift = c.has(2);
    const auto p = cached(c, key("layernorm", { shape }, { epsBits, shift }), [&](const dnnl::primitive_attr& attr) -> std::shared_ptr<const Primitive> {
        const dnnl::memory::desc md(shape, dt::f32, tag::ab), vector({ inner }, dt::f32, tag::a);
        auto flags = dnnl::normalization_flags::use_scale;
        if (shift)
            flags |= dnnl::normalization_flags::use_shift;
        const dnnl::layer_normalization_forward::desc d(dnnl::prop_kind::forward_inference, md, eps, flags);
        std::vector<std::pair<int, dnnl::memory::desc>> args { { DNNL_ARG_SRC, md }, { DNNL_ARG_DST, md }, { DNNL_ARG_SCALE, vector } };
        if (shift)
            args.emplace_back(DNNL_ARG_SHIFT, vector);
        return finish<dnnl::layer_normalization_forward::primitive_desc, dnnl::layer_normalization_forward>(
            dnnl::layer_normalization_forward::primitive_desc(d, attr, engine()), std::move(args));
    });
    std::vector<void*> data { c.in[0].data, c.out[0].data, c.in[1].data };
    if (shift)
        data.push_back(c.in[2].data);
    return runOrProbe(c, p, data);
}

// Transpose and Slice as oneDNN reorders: the source read through strides (permuted, or a window
// with positive steps), the result written row-major.
bool runReorder(const KernelCall& c)
{
    const auto& type = c.op->type;
    if ((type != "Transpose" && type != "Slice") || !c.has(0) || c.out.size() != 1 || c.in[0].rank() != c.out[0].rank()
        || c.out[0].count == 0)
        return false;
    const auto &x = c.in[0], &y = c.out[0];
    const std::size_t rank = std::size_t(x.rank());
    const dims xs = plainStrides(shapeOf(x));
    dims logical = shapeOf(y), strides(rank);
    std::int64_t offset = 0;
    if (type == "Transpose") {
        dims perm(rank);
        const auto* given = c.attrInts("perm");
        for (std::size_t i = 0; i < rank; ++i)
            perm[i] = given && given->size() == rank ? (*given)[i] : std::int64_t(rank - 1 - i);
        for (std::size_t i = 0; i < rank; ++i) {
            if (perm[i] < 0 || perm[i] >= std::int64_t(rank) || y.shape[i] != x.shape[std::size_t(perm[i])])
                return false;
            strides[i] = xs[std::size_t(perm[i])];
        }
    } else {
        Shape first, step;
        if (probing || !sliceStarts(c, first, step))
            return false;
        for (std::size_t i = 0; i < rank; ++i) {
            if (step[i] < 1 || (y.shape[i] > 0 && first[i] + (y.shape[i] - 1) * step[i] >= x.shape[i]))
                return false;
            strides[i] = xs[i] * step[i];
            offset += first[i] * xs[i];
        }
    }
    dims attrs(strides);
    const auto p = cached(c, key("reorder", { logical }, attrs), [&](const dnnl::primitive_attr& attr) -> std::shared_ptr<const Primitive> {
        const dnnl::memory::desc from(logical, dt::f32, strides), to(logical, dt::f32, plainStrides(logical));
        return finish<dnnl::reorder::primitive_desc, dnnl::reorder>(dnnl::reorder::primitive_desc(engine(), from, engine(), to, attr),
            { { DNNL_ARG_FROM, from }, { DNNL_ARG_TO, to } });
    });
    return runOrProbe(c, p, { x.f32() + offset, y.data });
}

std::map<std::string, Kernel>& ownKernels()
{
    static std::map<std::string, Kernel> own;
    return own;
}

bool runOnednn(const KernelCall& c)
{
    if (cpuKernels() != CpuKernels::OneDnn || !floats(c) || !(c.op->domain.empty() || c.op->domain == "ai.onnx"))
        return false;
    if (runEltwise(c) || runBinary(c) || runPool(c))
        return true;
    // The rest read and write row-major only: runKernel gives them N,C,H,W copies of channels-last views.
    return !anyChannelsLast(c) && (runSoftmax(c) || runLayerNorm(c) || runReorder(c));
}

// The oneDNN primitive when it takes the call, else the op's own kernel.
bool onednnFirst(const KernelCall& c)
{
    if (runOnednn(c))
        return true;
    const auto& own = ownKernels();
    const auto it = own.find(c.op->type);
    return it != own.end() && it->second(c);
}

} // namespace

bool onednnChannelsLast(const KernelCall& call)
{
    if (call.op && call.op->type == "Conv")
        return onednnConv(call);
    return call.op && runOnednn(call);
}

std::int64_t onednnPointwiseWorkspaceBytes(const KernelCall& call)
{
    std::int64_t bytes = -1;
    probing = &bytes;
    const bool taken = runOnednn(call);
    probing = nullptr;
    return taken ? bytes : -1;
}

void addOnednnKernels(std::map<std::string, Kernel>& table)
{
    for (const char* type : { "Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSwish", "Clip", "Add", "Sub", "Mul", "Div",
             "MaxPool", "AveragePool", "GlobalAveragePool", "Softmax", "LogSoftmax", "LayerNormalization", "Transpose", "Slice" }) {
        const auto it = table.find(type);
        if (it == table.end() || it->second == onednnFirst)
            continue;
        ownKernels()[type] = it->second;
        it->second = onednnFirst;
    }
}

} // namespace core::exec
