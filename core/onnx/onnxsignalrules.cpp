// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Shape rules for the signal ops of audio front ends: DFT, STFT, the window generators and
// MelWeightMatrix. MemPlan owns DFT and STFT: the ONNX library (1.12) reads STFT's onesided as 0
// when the attribute is absent (its default is 1) and knows no opset-20 DFT (axis as input 2).
#include "onnx/onnxshapemath.h"
#include "onnx/onnxshaperules.h"

namespace core::onnxdetail {

using onnx::TensorProto;

namespace {

bool estimated(const ValueFacts* f) { return f && f->estimated; }

// One constant integer of a scalar or one-element input, or -1.
std::int64_t constScalar(const ValueFacts* f)
{
    const auto values = constInts(f);
    return values && values->size() == 1 ? (*values)[0] : -1;
}

// X [batch, signal..., 1|2] -> [..., 2] with the transformed axis holding dft_length (input 1) or
// the axis' length, n/2 + 1 of them when onesided. The axis: input 2 (opset 20), the attribute
// (opset 17), else the opset's default (1 before 20, -2 from 20 on).
void dftRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto* x = inputAt(in, 0);
    if (!rankKnown(x) || x->dims.size() < 3)
        return;
    const auto rank = std::int64_t(x->dims.size());
    std::int64_t axis = in.opset >= 20 ? -2 : 1;
    if (const auto* given = inputAt(in, 2)) {
        const auto values = constInts(given);
        if (!values || values->size() != 1)
            return;
        axis = (*values)[0];
    } else
        axis = attrInt(*in.node, "axis", axis);
    if (axis < 0)
        axis += rank;
    if (axis < 1 || axis > rank - 2)
        return;
    std::int64_t n = x->dims[std::size_t(axis)];
    if (inputAt(in, 1))
        n = constScalar(inputAt(in, 1));
    Dims dims = x->dims;
    dims.back() = 2;
    dims[std::size_t(axis)] = n < 0 ? -1 : attrInt(*in.node, "onesided", 0) != 0 ? n / 2 + 1 : n;
    out[0] = tensorFacts(x->elemType, dims, x->estimated || estimated(inputAt(in, 1)));
}

// signal [batch, length, 1|2], frame_step, window [frame_length], frame_length ->
// [batch, 1 + (length - frame_length) / frame_step, bins, 2], bins frame_length/2 + 1 when onesided
// (the default).
void stftRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto* x = inputAt(in, 0);
    if (!rankKnown(x) || x->dims.size() != 3)
        return;
    const std::int64_t step = constScalar(inputAt(in, 1));
    std::int64_t frame = inputAt(in, 3) ? constScalar(inputAt(in, 3)) : -1;
    if (frame < 0 && rankKnown(inputAt(in, 2)) && inputAt(in, 2)->dims.size() == 1)
        frame = inputAt(in, 2)->dims[0];
    const std::int64_t length = x->dims[1];
    const std::int64_t frames = step > 0 && frame > 0 && length >= frame ? 1 + (length - frame) / step : -1;
    const std::int64_t bins = frame > 0 ? (attrInt(*in.node, "onesided", 1) != 0 ? frame / 2 + 1 : frame) : -1;
    out[0] = tensorFacts(x->elemType, { x->dims[0], frames, bins, 2 }, x->estimated);
}

} // namespace

bool applySignalRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto& op = in.node->op_type();
    if (op == "DFT")
        dftRule(in, out);
    else if (op == "STFT")
        stftRule(in, out);
    else if (op == "HannWindow" || op == "HammingWindow" || op == "BlackmanWindow") {
        const std::int64_t size = constScalar(inputAt(in, 0));
        if (size >= 0)
            out[0] = tensorFacts(int(attrInt(*in.node, "output_datatype", TensorProto::FLOAT)), { size });
    } else if (op == "MelWeightMatrix") {
        const std::int64_t bins = constScalar(inputAt(in, 0)), length = constScalar(inputAt(in, 1));
        if (bins >= 0 && length >= 0)
            out[0] = tensorFacts(int(attrInt(*in.node, "output_datatype", TensorProto::FLOAT)), { length / 2 + 1, bins });
    } else
        return false;
    return true;
}

} // namespace core::onnxdetail
