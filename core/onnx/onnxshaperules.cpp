// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "onnx/onnxshaperules.h"

#include "onnx/onnxshapemath.h"
#include "exec/einsum.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>

namespace core::onnxdetail {

using onnx::TensorProto;

ValueFacts tensorFacts(int elemType, Dims dims, bool estimated)
{
    ValueFacts f;
    f.kind = ValueKind::Tensor;
    f.elemType = elemType;
    f.rankKnown = true;
    f.dims = std::move(dims);
    f.estimated = estimated;
    return f;
}

const ValueFacts* inputAt(const RuleInput& in, std::size_t i) { return i < in.inputs.size() ? in.inputs[i] : nullptr; }
int elemTypeOf(const RuleInput& in, std::size_t i) { return inputAt(in, i) ? inputAt(in, i)->elemType : 0; }
bool rankKnown(const ValueFacts* f) { return f && f->rankKnown && f->kind != ValueKind::Sequence; }

namespace {

// Output 0 has the shape and type of input 0.
const std::unordered_set<std::string> kSameShape {
    "Relu", "Gelu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Log", "Sqrt", "Erf", "Softmax", "LogSoftmax", "Hardmax",
    "LeakyRelu", "Elu", "Selu", "Celu", "HardSigmoid", "HardSwish", "Mish", "Softplus", "Softsign", "Clip",
    "Identity", "Floor", "Ceil", "Round", "Reciprocal", "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh",
    "Cosh", "Asinh", "Acosh", "Atanh", "BitwiseNot", "Not", "Shrink", "ThresholdedRelu", "Trilu", "CumSum",
    "ReverseSequence", "Swish", "LRN", "LpNormalization", "MeanVarianceNormalization", "InstanceNormalization",
    "GroupNormalization", "RMSNormalization", "RotaryEmbedding", "ScatterElements", "ScatterND", "Scatter",
    "TensorScatter", "FastGelu", "QuickGelu", "BiasGelu",
    "PRelu", // slope broadcasts to X only (PyTorch exports per-channel slopes that numpy rules reject)
};
// Numpy broadcasting over all inputs; output type of input 0.
const std::unordered_set<std::string> kBroadcast {
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "BitShift", "BitwiseAnd", "BitwiseOr",
    "BitwiseXor",
};
const std::unordered_set<std::string> kCompare { "And", "Or", "Xor", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual" };
const std::unordered_set<std::string> kReduce {
    "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
    "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin",
};
// Ops whose signature changed in opset 18+ in a way that changes output shapes (see header).
const std::unordered_set<std::string> kChangedIn18 {
    "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
    "ReduceSumSquare", "Split", "Pad", "Resize", "LpPool",
};

bool isDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::optional<Dims> broadcastInputs(const RuleInput& in, std::size_t first, std::size_t last)
{
    std::vector<Dims> shapes;
    for (std::size_t i = first; i < last && i < in.inputs.size(); ++i) {
        const auto* f = in.inputs[i];
        if (!rankKnown(f))
            return std::nullopt;
        shapes.push_back(f->dims);
    }
    if (shapes.empty())
        return std::nullopt;
    return broadcastDims(shapes);
}

std::int64_t typeAttrOr(const RuleInput& in, const char* name, std::int64_t fallback)
{
    return attrInt(*in.node, name, fallback);
}

bool reduceRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto& node = *in.node;
    const auto* x = inputAt(in, 0);
    if (!rankKnown(x))
        return true;
    const auto rank = std::int64_t(x->dims.size());
    const bool arg = node.op_type() == "ArgMax" || node.op_type() == "ArgMin";
    const bool keep = attrInt(node, "keepdims", 1) != 0;
    std::vector<std::int64_t> axes;
    if (arg) {
        axes = { attrInt(node, "axis", 0) };
    } else if (auto a = attrInts(node, "axes")) {
        axes = *a;
    } else if (inputAt(in, 1)) {
        auto c = constInts(inputAt(in, 1));
        if (!c)
            return true; // axes computed at run time: unknown
        axes = *c;
    }
    const int type = arg ? int(TensorProto::INT64) : x->elemType;
    if (axes.empty()) {
        if (!arg && attrInt(node, "noop_with_empty_axes", 0) != 0) {
            out[0] = tensorFacts(type, x->dims, x->estimated);
            return true;
        }
        for (std::int64_t d = 0; d < rank; ++d)
            axes.push_back(d);
    }
    std::vector<bool> reduced(rank, false);
    for (auto a : axes) {
        auto n = normalizeAxis(a, rank);
        if (!n)
            return true;
        reduced[*n] = true;
    }
    Dims dims;
    for (std::int64_t d = 0; d < rank; ++d) {
        if (!reduced[d])
            dims.push_back(x->dims[d]);
        else if (keep)
            dims.push_back(1);
    }
    out[0] = tensorFacts(type, dims, x->estimated);
    return true;
}

// Conv, ConvTranspose, pools: output spatial dims from kernel, strides, pads, dilations.
bool convPoolRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto& node = *in.node;
    const std::string& op = node.op_type();
    const auto* x = inputAt(in, 0);
    if (!rankKnown(x) || x->dims.size() < 2)
        return true;
    const auto* w = inputAt(in, 1);
    const bool isConv = op == "Conv" || op == "ConvTranspose" || op == "DeformConv" || op == "ConvInteger"
        || op == "QLinearConv";
    const auto* weight = op == "QLinearConv" ? inputAt(in, 3) : w;
    const std::size_t spatial = x->dims.size() - 2;
    std::vector<std::int64_t> kernel(spatial, -1);
    if (auto k = attrInts(node, "kernel_shape"))
        kernel = *k;
    else if (isConv && rankKnown(weight) && weight->dims.size() == spatial + 2)
        kernel.assign(weight->dims.begin() + 2, weight->dims.end());
    if (kernel.size() != spatial)
        return true;
    auto strides = attrInts(node, "strides").value_or(std::vector<std::int64_t>(spatial, 1));
    auto dilations = attrInts(node, "dilations").value_or(std::vector<std::int64_t>(spatial, 1));
    auto pads = attrInts(node, "pads").value_or(std::vector<std::int64_t>(2 * spatial, 0));
    if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial)
        return true;
    const std::string autoPad = attrString(node, "auto_pad", "NOTSET");
    const bool ceilMode = attrInt(node, "ceil_mode", 0) != 0;
    Dims dims { x->dims[0], x->dims[1] };
    if (isConv) {
        dims[1] = -1;
        if (rankKnown(weight) && !weight->dims.empty()) {
            if (op == "ConvTranspose")
                dims[1] = weight->dims.size() > 1 && weight->dims[1] >= 0
                    ? weight->dims[1] * attrInt(node, "group", 1) : -1;
            else
                dims[1] = weight->dims[0];
        }
    }
    const auto outputShape = attrInts(node, "output_shape");
    const auto outputPadding = attrInts(node, "output_padding").value_or(std::vector<std::int64_t>(spatial, 0));
    for (std::size_t i = 0; i < spatial; ++i) {
        if (op == "ConvTranspose" && outputShape && outputShape->size() == spatial && x->dims[2 + i] >= 0) {
            dims.push_back((*outputShape)[i]);
            continue;
        }
        const WindowAxis axis { kernel[i], strides[i], dilations[i], pads[i], pads[i + spatial],
            i < outputPadding.size() ? outputPadding[i] : 0 };
        dims.push_back(windowOutputLength(x->dims[2 + i], axis, autoPad, ceilMode, op == "ConvTranspose"));
    }
    const int type = op == "ConvInteger" ? int(TensorProto::INT32)
        : op == "QLinearConv" ? elemTypeOf(in, 7) : x->elemType;
    out[0] = tensorFacts(type, dims, x->estimated);
    if (op == "MaxPool" && out.size() > 1)
        out[1] = tensorFacts(TensorProto::INT64, dims, x->estimated);
    return true;
}

bool matmulRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto& op = in.node->op_type();
    const bool quant = op == "QLinearMatMul";
    const auto* a = inputAt(in, 0);
    const auto* b = inputAt(in, quant ? 3 : 1);
    if (!rankKnown(a) || !rankKnown(b) || a->dims.empty() || b->dims.empty())
        return true;
    const int type = op == "MatMulInteger" ? int(TensorProto::INT32) : quant ? elemTypeOf(in, 7) : a->elemType;
    if (op == "Gemm") {
        if (a->dims.size() != 2 || b->dims.size() != 2)
            return true;
        const bool ta = attrInt(*in.node, "transA", 0) != 0, tb = attrInt(*in.node, "transB", 0) != 0;
        out[0] = tensorFacts(type, { a->dims[ta ? 1 : 0], b->dims[tb ? 0 : 1] }, a->estimated || b->estimated);
        return true;
    }
    Dims da = a->dims, db = b->dims;
    const bool vecA = da.size() == 1, vecB = db.size() == 1;
    if (vecA)
        da.insert(da.begin(), 1);
    if (vecB)
        db.push_back(1);
    auto batch = broadcastDims({ Dims(da.begin(), da.end() - 2), Dims(db.begin(), db.end() - 2) });
    if (!batch)
        return true;
    Dims dims = *batch;
    if (!vecA)
        dims.push_back(da[da.size() - 2]);
    if (!vecB)
        dims.push_back(db.back());
    out[0] = tensorFacts(type, dims, a->estimated || b->estimated);
    return true;
}

bool recurrentRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto& node = *in.node;
    const auto* x = inputAt(in, 0);
    const auto* r = inputAt(in, 2);
    if (!rankKnown(x) || x->dims.size() != 3)
        return true;
    std::int64_t hidden = attrInt(node, "hidden_size", -1);
    if (hidden < 0 && rankKnown(r) && r->dims.size() == 3)
        hidden = r->dims[2];
    const std::int64_t dirs = attrString(node, "direction", "forward") == "bidirectional" ? 2 : 1;
    const bool batchFirst = attrInt(node, "layout", 0) != 0;
    const std::int64_t seq = x->dims[batchFirst ? 1 : 0], batch = x->dims[batchFirst ? 0 : 1];
    out[0] = tensorFacts(x->elemType, batchFirst ? Dims { batch, seq, dirs, hidden } : Dims { seq, dirs, batch, hidden });
    for (std::size_t i = 1; i < out.size(); ++i)
        out[i] = tensorFacts(x->elemType, batchFirst ? Dims { batch, dirs, hidden } : Dims { dirs, batch, hidden });
    return true;
}

bool einsumRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto split = core::exec::splitEinsum(attrString(*in.node, "equation"));
    const auto& terms = split.inputs;
    if (terms.size() != in.inputs.size())
        return true;
    std::map<char, std::int64_t> sizes;
    std::map<char, int> uses;
    std::vector<Dims> ellipses;
    for (std::size_t i = 0; i < terms.size(); ++i) {
        const auto* f = inputAt(in, i);
        if (!rankKnown(f))
            return true;
        std::string term = terms[i];
        const auto dots = term.find("...");
        if (dots != std::string::npos && term.find("...", dots + 3) != std::string::npos)
            return true; // one ellipsis per term
        const std::int64_t letters = std::int64_t(term.size()) - (dots == std::string::npos ? 0 : 3);
        const std::int64_t extra = std::int64_t(f->dims.size()) - letters;
        if (extra < 0 || (dots == std::string::npos && extra != 0))
            return true;
        std::size_t d = 0;
        for (std::size_t k = 0; k < term.size(); ++k) {
            if (term.compare(k, 3, "...") == 0) {
                ellipses.emplace_back(f->dims.begin() + std::ptrdiff_t(d), f->dims.begin() + std::ptrdiff_t(d + extra));
                d += std::size_t(extra);
                k += 2;
                continue;
            }
            if (d >= f->dims.size())
                return true;
            auto& size = sizes[term[k]];
            if (size <= 0 || f->dims[d] > 1)
                size = f->dims[d] < 0 && size > 0 ? size : f->dims[d];
            ++uses[term[k]];
            ++d;
        }
    }
    auto ellipsis = broadcastDims(ellipses);
    if (!ellipsis)
        return true;
    Dims dims;
    if (!split.explicitOutput) {
        dims = *ellipsis;
        for (const auto& [c, n] : uses) // implicit output: letters used once, alphabetically
            if (n == 1)
                dims.push_back(sizes[c]);
    } else {
        const std::string& rhs = split.output;
        for (std::size_t k = 0; k < rhs.size(); ++k) {
            if (rhs.compare(k, 3, "...") == 0) {
                dims.insert(dims.end(), ellipsis->begin(), ellipsis->end());
                k += 2;
            } else if (sizes.count(rhs[k])) {
                dims.push_back(sizes[rhs[k]]);
            } else {
                return true;
            }
        }
    }
    out[0] = tensorFacts(elemTypeOf(in, 0), dims);
    return true;
}

bool lossRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto* scores = inputAt(in, 0);
    const auto* target = inputAt(in, 1);
    if (!scores)
        return true;
    if (attrString(*in.node, "reduction", "mean") != "none")
        out[0] = tensorFacts(scores->elemType, {});
    else if (rankKnown(target))
        out[0] = tensorFacts(scores->elemType, target->dims);
    if (out.size() > 1 && rankKnown(scores))
        out[1] = tensorFacts(scores->elemType, scores->dims);
    return true;
}

bool maxUnpoolRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto* x = inputAt(in, 0);
    if (!rankKnown(x) || x->dims.size() < 3)
        return true;
    if (auto shape = constInts(inputAt(in, 2))) {
        out[0] = tensorFacts(x->elemType, Dims(shape->begin(), shape->end()));
        return true;
    }
    const std::size_t spatial = x->dims.size() - 2;
    if (in.node->input_size() > 2 && !in.node->input(2).empty()) {
        // output_shape known only at run time: it picks the spatial sizes, not the pooling attributes.
        Dims dims(x->dims.size(), -1);
        dims[0] = x->dims[0];
        dims[1] = x->dims[1];
        out[0] = tensorFacts(x->elemType, dims, x->estimated);
        return true;
    }
    const auto kernel = attrInts(*in.node, "kernel_shape").value_or(std::vector<std::int64_t> {});
    const auto strides = attrInts(*in.node, "strides").value_or(std::vector<std::int64_t>(spatial, 1));
    const auto pads = attrInts(*in.node, "pads").value_or(std::vector<std::int64_t>(2 * spatial, 0));
    if (kernel.size() != spatial || strides.size() != spatial || pads.size() != 2 * spatial)
        return true;
    Dims dims { x->dims[0], x->dims[1] };
    for (std::size_t i = 0; i < spatial; ++i) {
        const std::int64_t d = x->dims[2 + i];
        dims.push_back(d < 0 ? -1 : (d - 1) * strides[i] - pads[i] - pads[i + spatial] + kernel[i]);
    }
    out[0] = tensorFacts(x->elemType, dims, x->estimated);
    return true;
}

} // namespace

bool ruleOwnsOp(const std::string& domain, const std::string& opType, int opset, bool libraryHasSchema)
{
    if (!libraryHasSchema)
        return true;
    if (!isDefaultDomain(domain))
        return false;
    if (opset >= 18 && kChangedIn18.count(opType))
        return true;
    if (opset >= 19 && opType == "AveragePool") // dilations added
        return true;
    if (opType == "DFT" || opType == "STFT") // see onnxsignalrules.cpp
        return true;
    return opset >= 20 && opType == "GridSample"; // N-d grids
}

bool applyComputeRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto& node = *in.node;
    const std::string& op = node.op_type();
    const auto* x = inputAt(in, 0);
    if (kSameShape.count(op)) {
        if (x)
            out[0] = *x, out[0].value = nullptr;
        return true;
    }
    if (kBroadcast.count(op) || kCompare.count(op) || op == "Where") {
        const std::size_t first = op == "Where" ? 1 : 0;
        auto dims = broadcastInputs(in, 0, in.inputs.size());
        const int type = kCompare.count(op) ? int(TensorProto::BOOL) : elemTypeOf(in, first);
        bool estimated = false;
        for (auto* f : in.inputs)
            estimated = estimated || (f && f->estimated);
        if (dims)
            out[0] = tensorFacts(type, *dims, estimated);
        else if (type)
            out[0].kind = ValueKind::Tensor, out[0].elemType = type;
        return true;
    }
    if (kReduce.count(op))
        return reduceRule(in, out);
    if (op == "Conv" || op == "ConvTranspose" || op == "DeformConv" || op == "ConvInteger" || op == "QLinearConv"
        || op == "AveragePool" || op == "MaxPool" || op == "LpPool")
        return convPoolRule(in, out);
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "GlobalLpPool") {
        if (rankKnown(x) && x->dims.size() >= 2) {
            Dims dims(x->dims.size(), 1);
            dims[0] = x->dims[0];
            dims[1] = x->dims[1];
            out[0] = tensorFacts(x->elemType, dims, x->estimated);
        }
        return true;
    }
    if (op == "MatMul" || op == "Gemm" || op == "MatMulInteger" || op == "QLinearMatMul")
        return matmulRule(in, out);
    if (op == "LayerNormalization") {
        if (!rankKnown(x))
            return true;
        out[0] = tensorFacts(x->elemType, x->dims, x->estimated);
        const auto rank = std::int64_t(x->dims.size());
        auto axis = normalizeAxis(attrInt(node, "axis", -1), rank);
        if (!axis)
            return true;
        Dims stats(x->dims.begin(), x->dims.begin() + *axis);
        stats.resize(rank, 1);
        const int stash = int(attrInt(node, "stash_type", TensorProto::FLOAT));
        for (std::size_t i = 1; i < out.size(); ++i)
            out[i] = tensorFacts(stash, stats, x->estimated);
        return true;
    }
    if (op == "BatchNormalization") {
        if (!x)
            return true;
        out[0] = *x, out[0].value = nullptr;
        if (rankKnown(x) && x->dims.size() >= 2)
            for (std::size_t i = 1; i < out.size(); ++i)
                out[i] = tensorFacts(elemTypeOf(in, 3) ? elemTypeOf(in, 3) : x->elemType, { x->dims[1] });
        return true;
    }
    if (op == "Dropout") {
        if (!x)
            return true;
        out[0] = *x, out[0].value = nullptr;
        if (out.size() > 1 && rankKnown(x))
            out[1] = tensorFacts(TensorProto::BOOL, x->dims, x->estimated);
        return true;
    }
    if (op == "Cast" || op == "CastLike" || op == "IsNaN" || op == "IsInf" || op == "QuantizeLinear"
        || op == "DequantizeLinear" || op == "Bernoulli" || op == "RandomNormalLike" || op == "RandomUniformLike"
        || op == "EyeLike") {
        if (!x)
            return true;
        int type = x->elemType;
        if (op == "Cast")
            type = int(attrInt(node, "to", 0));
        else if (op == "CastLike")
            type = elemTypeOf(in, 1);
        else if (op == "IsNaN" || op == "IsInf")
            type = TensorProto::BOOL;
        else if (op == "QuantizeLinear")
            type = int(typeAttrOr(in, "output_dtype", elemTypeOf(in, 2) ? elemTypeOf(in, 2) : int(TensorProto::UINT8)));
        else if (op == "DequantizeLinear")
            type = int(typeAttrOr(in, "output_dtype", elemTypeOf(in, 1) ? elemTypeOf(in, 1) : int(TensorProto::FLOAT)));
        else
            type = int(typeAttrOr(in, "dtype", x->elemType));
        if (type == 0)
            type = x->elemType;
        out[0] = *x, out[0].value = nullptr;
        retypeFacts(out[0], type);
        return true;
    }
    if (op == "DynamicQuantizeLinear") {
        if (rankKnown(x)) {
            out[0] = tensorFacts(TensorProto::UINT8, x->dims, x->estimated);
            if (out.size() > 2) {
                out[1] = tensorFacts(TensorProto::FLOAT, {});
                out[2] = tensorFacts(TensorProto::UINT8, {});
            }
        }
        return true;
    }
    if (op == "RandomNormal" || op == "RandomUniform") {
        if (auto shape = attrInts(node, "shape"))
            out[0] = tensorFacts(int(attrInt(node, "dtype", TensorProto::FLOAT)), *shape);
        return true;
    }
    if (op == "LSTM" || op == "GRU" || op == "RNN")
        return recurrentRule(in, out);
    if (op == "Einsum")
        return einsumRule(in, out);
    if (op == "NegativeLogLikelihoodLoss" || op == "SoftmaxCrossEntropyLoss")
        return lossRule(in, out);
    if (op == "MaxUnpool")
        return maxUnpoolRule(in, out);
    if (op == "Det") {
        if (rankKnown(x) && x->dims.size() >= 2)
            out[0] = tensorFacts(x->elemType, Dims(x->dims.begin(), x->dims.end() - 2), x->estimated);
        return true;
    }
    if (op == "RoiAlign" || op == "MaxRoiPool") {
        const auto* rois = inputAt(in, 1);
        if (rankKnown(x) && rankKnown(rois) && x->dims.size() == 4 && !rois->dims.empty()) {
            std::int64_t h = attrInt(node, "output_height", 1), w = attrInt(node, "output_width", 1);
            if (auto pooled = attrInts(node, "pooled_shape"); pooled && pooled->size() == 2)
                h = (*pooled)[0], w = (*pooled)[1];
            out[0] = tensorFacts(x->elemType, { rois->dims[0], x->dims[1], h, w });
        }
        return true;
    }
    return false;
}

std::vector<ValueFacts> applyShapeRule(const RuleInput& in)
{
    std::vector<ValueFacts> out(std::size_t(std::max(in.node->output_size(), 0)));
    if (out.empty())
        return out;
    const std::string& domain = in.node->domain();
    // Foreign domains: only a few Gelu variants that behave like their ONNX namesakes.
    if (!isDefaultDomain(domain) && !(domain == "com.microsoft" && kSameShape.count(in.node->op_type())))
        return out;
    try {
        if (!applyControlRule(in, out) && !applyLayoutRule(in, out) && !applySignalRule(in, out))
            applyComputeRule(in, out);
    } catch (...) {
        // A malformed node (attribute of the wrong kind, absurd sizes): no facts rather than a crash.
        out.assign(out.size(), ValueFacts {});
    }
    return out;
}

} // namespace core::onnxdetail
