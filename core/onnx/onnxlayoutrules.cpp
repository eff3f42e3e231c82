// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Shape rules for ops that move, select or create data: their output shapes follow from
// constant inputs (folded shape arithmetic) rather than from arithmetic on the data.
#include "onnx/onnxshapemath.h"
#include "onnx/onnxshaperules.h"

#include <algorithm>
#include <cmath>

namespace core::onnxdetail {

using onnx::TensorProto;

namespace {

bool anyEstimated(const RuleInput& in)
{
    for (auto* f : in.inputs)
        if (f && f->estimated)
            return true;
    return false;
}

ValueFacts facts(const RuleInput& in, int type, Dims dims) { return tensorFacts(type, std::move(dims), anyEstimated(in)); }

std::optional<std::vector<std::int64_t>> intsInputOrAttr(const RuleInput& in, std::size_t index, const char* attr)
{
    if (auto a = attrInts(*in.node, attr))
        return a;
    return constInts(inputAt(in, index));
}

bool resizeRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto& node = *in.node;
    const auto* x = inputAt(in, 0);
    if (!rankKnown(x))
        return true;
    const auto rank = std::int64_t(x->dims.size());
    // Upsample-7 and Resize-10 take scales at input 1; Resize-11+ takes (X, roi, scales, sizes).
    const bool oldForm = node.op_type() == "Upsample" || in.opset < 11;
    std::optional<std::vector<double>> scales;
    std::optional<std::vector<std::int64_t>> sizes;
    if (auto s = attrFloats(node, "scales"))
        scales = std::vector<double>(s->begin(), s->end());
    else
        scales = constReals(inputAt(in, oldForm ? 1 : 2));
    if (!oldForm)
        sizes = constInts(inputAt(in, 3));
    if (scales && scales->empty())
        scales.reset();
    if (sizes && sizes->empty())
        sizes.reset();
    std::vector<std::int64_t> axes;
    if (auto a = attrInts(node, "axes"))
        axes = *a;
    else
        for (std::int64_t d = 0; d < rank; ++d)
            axes.push_back(d);
    Dims dims = x->dims;
    if (sizes) {
        if (sizes->size() != axes.size())
            return true;
        const std::string policy = attrString(node, "keep_aspect_ratio_policy", "stretch");
        if (policy == "stretch") {
            for (std::size_t i = 0; i < axes.size(); ++i) {
                auto a = normalizeAxis(axes[i], rank);
                if (!a)
                    return true;
                dims[*a] = (*sizes)[i];
            }
        } else {
            // One scale for all axes so the aspect ratio is kept (ONNX Resize-18).
            double scale = policy == "not_larger" ? 1e300 : 0.0;
            for (std::size_t i = 0; i < axes.size(); ++i) {
                auto a = normalizeAxis(axes[i], rank);
                if (!a || x->dims[*a] <= 0)
                    return true;
                const double s = double((*sizes)[i]) / double(x->dims[*a]);
                scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
            }
            for (auto axis : axes) {
                const auto a = *normalizeAxis(axis, rank); // checked in the loop above
                dims[a] = std::int64_t(std::floor(scale * double(x->dims[a]) + 0.5));
            }
        }
    } else if (scales) {
        if (scales->size() != axes.size())
            return true;
        for (std::size_t i = 0; i < axes.size(); ++i) {
            auto a = normalizeAxis(axes[i], rank);
            if (!a)
                return true;
            dims[*a] = x->dims[*a] < 0 ? -1 : std::int64_t(std::floor(double(x->dims[*a]) * (*scales)[i] + 1e-9));
        }
    } else {
        return true;
    }
    out[0] = facts(in, x->elemType, dims);
    return true;
}

bool padRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto* x = inputAt(in, 0);
    if (!rankKnown(x))
        return true;
    const auto rank = std::int64_t(x->dims.size());
    std::optional<std::vector<std::int64_t>> pads = attrInts(*in.node, "pads");
    if (!pads)
        pads = attrInts(*in.node, "paddings"); // opset 1
    if (!pads)
        pads = constInts(inputAt(in, 1));
    if (!pads)
        return true;
    std::vector<std::int64_t> axes;
    if (inputAt(in, 3)) {
        auto a = constInts(inputAt(in, 3));
        if (!a)
            return true;
        axes = *a;
    } else {
        for (std::int64_t d = 0; d < rank; ++d)
            axes.push_back(d);
    }
    if (pads->size() != 2 * axes.size())
        return true;
    Dims dims = x->dims;
    for (std::size_t i = 0; i < axes.size(); ++i) {
        auto a = normalizeAxis(axes[i], rank);
        if (!a)
            return true;
        if (dims[*a] >= 0)
            dims[*a] = std::max<std::int64_t>(dims[*a] + (*pads)[i] + (*pads)[i + axes.size()], 0);
    }
    out[0] = facts(in, x->elemType, dims);
    return true;
}

bool splitRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto& node = *in.node;
    const auto* x = inputAt(in, 0);
    if (!rankKnown(x))
        return true;
    const auto rank = std::int64_t(x->dims.size());
    auto axis = normalizeAxis(attrInt(node, "axis", 0), rank);
    if (!axis)
        return true;
    const std::int64_t extent = x->dims[*axis];
    std::vector<std::int64_t> sizes;
    if (auto s = intsInputOrAttr(in, 1, "split")) {
        sizes = *s;
    } else if (inputAt(in, 1)) {
        return true; // split sizes computed at run time
    } else {
        if (extent < 0)
            return true;
        // Equal parts; with num_outputs (opset 18) the last part may be smaller.
        // ONNX requires one output per part; any other num_outputs (2^31, say) defines nothing.
        const std::int64_t parts = attrInt(node, "num_outputs", std::int64_t(out.size()));
        if (parts != std::int64_t(out.size()) || parts <= 0)
            return true;
        const std::int64_t each = (extent + parts - 1) / parts;
        for (std::int64_t p = 0, left = extent; p < parts; ++p, left -= each)
            sizes.push_back(std::clamp<std::int64_t>(left, 0, each));
    }
    for (std::size_t i = 0; i < out.size() && i < sizes.size(); ++i) {
        Dims dims = x->dims;
        dims[*axis] = sizes[i];
        out[i] = facts(in, x->elemType, dims);
    }
    return true;
}

bool sliceRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto* x = inputAt(in, 0);
    if (!rankKnown(x))
        return true;
    std::optional<std::vector<std::int64_t>> starts, ends, axes, steps;
    if (attrInts(*in.node, "starts")) {
        starts = attrInts(*in.node, "starts");
        ends = attrInts(*in.node, "ends");
        axes = attrInts(*in.node, "axes");
    } else {
        starts = constInts(inputAt(in, 1));
        ends = constInts(inputAt(in, 2));
        axes = inputAt(in, 3) ? constInts(inputAt(in, 3)) : std::vector<std::int64_t> {};
        steps = inputAt(in, 4) ? constInts(inputAt(in, 4)) : std::vector<std::int64_t> {};
        if (!axes || !steps)
            return true;
    }
    if (!starts || !ends)
        return true;
    // Unknown dims on untouched axes stay unknown; sliced axes need their dims.
    auto plan = sliceAxes(x->dims, *starts, *ends, axes.value_or(std::vector<std::int64_t> {}),
                          steps.value_or(std::vector<std::int64_t> {}));
    if (!plan)
        return true;
    Dims dims;
    for (const auto& a : *plan)
        dims.push_back(a.count);
    out[0] = facts(in, x->elemType, dims);
    return true;
}

bool gatherRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto& op = in.node->op_type();
    const auto* data = inputAt(in, 0);
    const auto* indices = inputAt(in, 1);
    if (!rankKnown(data) || !rankKnown(indices))
        return true;
    const auto rank = std::int64_t(data->dims.size());
    if (op == "GatherElements") {
        out[0] = facts(in, data->elemType, indices->dims);
        return true;
    }
    if (op == "GatherND") {
        const std::int64_t batch = attrInt(*in.node, "batch_dims", 0);
        if (indices->dims.empty() || indices->dims.back() < 0)
            return true;
        const std::int64_t k = indices->dims.back();
        if (batch + k > rank)
            return true;
        Dims dims(indices->dims.begin(), indices->dims.end() - 1);
        dims.insert(dims.end(), data->dims.begin() + batch + k, data->dims.end());
        out[0] = facts(in, data->elemType, dims);
        return true;
    }
    auto axis = normalizeAxis(attrInt(*in.node, "axis", 0), rank);
    if (!axis)
        return true;
    Dims dims(data->dims.begin(), data->dims.begin() + *axis);
    dims.insert(dims.end(), indices->dims.begin(), indices->dims.end());
    dims.insert(dims.end(), data->dims.begin() + *axis + 1, data->dims.end());
    out[0] = facts(in, data->elemType, dims);
    return true;
}

bool squeezeRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto* x = inputAt(in, 0);
    if (!rankKnown(x))
        return true;
    const bool unsqueeze = in.node->op_type() == "Unsqueeze";
    std::vector<std::int64_t> axes;
    if (auto a = intsInputOrAttr(in, 1, "axes"))
        axes = *a;
    else if (inputAt(in, 1) || unsqueeze)
        return true;
    Dims dims;
    if (unsqueeze) {
        const auto rank = std::int64_t(x->dims.size() + axes.size());
        std::vector<bool> inserted(rank, false);
        for (auto a : axes) {
            auto n = normalizeAxis(a, rank);
            if (!n)
                return true;
            inserted[*n] = true;
        }
        for (std::int64_t d = 0, k = 0; d < rank; ++d)
            dims.push_back(inserted[d] ? 1 : (k < std::int64_t(x->dims.size()) ? x->dims[k++] : -1));
    } else {
        const auto rank = std::int64_t(x->dims.size());
        std::vector<bool> removed(rank, false);
        for (auto a : axes) {
            auto n = normalizeAxis(a, rank);
            if (!n)
                return true;
            removed[*n] = true;
        }
        for (std::int64_t d = 0; d < rank; ++d) {
            if (axes.empty() && x->dims[d] < 0)
                return true; // which dims are 1 is unknown
            if (axes.empty() ? x->dims[d] != 1 : !removed[d])
                dims.push_back(x->dims[d]);
        }
    }
    out[0] = facts(in, x->elemType, dims);
    return true;
}

bool dataDependentRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto& op = in.node->op_type();
    const auto* x = inputAt(in, 0);
    if (op == "NonZero") {
        if (rankKnown(x))
            out[0] = tensorFacts(TensorProto::INT64, { std::int64_t(x->dims.size()), elementCount(x->dims) }, true);
        return true;
    }
    if (op == "NonMaxSuppression") {
        const auto* boxes = x;
        const auto* scores = inputAt(in, 1);
        if (!rankKnown(boxes) || !rankKnown(scores) || boxes->dims.size() != 3 || scores->dims.size() != 3)
            return true;
        std::int64_t perClass = 0; // absent max_output_boxes_per_class means no output (ONNX spec)
        if (inputAt(in, 2)) {
            auto m = constInts(inputAt(in, 2));
            perClass = m && m->size() == 1 ? (*m)[0] : boxes->dims[1];
        }
        const std::int64_t n = boxes->dims[1] < 0 ? -1 : std::min(std::max<std::int64_t>(perClass, 0), boxes->dims[1]);
        const std::int64_t rows = n < 0 || scores->dims[0] < 0 || scores->dims[1] < 0 ? -1 : n * scores->dims[0] * scores->dims[1];
        out[0] = tensorFacts(TensorProto::INT64, { rows, 3 }, true);
        return true;
    }
    if (op == "Unique") {
        if (!rankKnown(x))
            return true;
        const auto* axisAttr = findAttr(*in.node, "axis");
        std::int64_t n = elementCount(x->dims);
        Dims y { n };
        if (axisAttr) {
            auto axis = normalizeAxis(axisAttr->i(), std::int64_t(x->dims.size()));
            if (!axis)
                return true;
            y = x->dims;
            n = x->dims[*axis];
        }
        out[0] = tensorFacts(x->elemType, y, true);
        for (std::size_t i = 1; i < out.size(); ++i)
            out[i] = tensorFacts(TensorProto::INT64, { n }, i != 2);
        return true;
    }
    if (op == "Compress") {
        if (!rankKnown(x))
            return true;
        std::int64_t selected = -1;
        if (auto c = constInts(inputAt(in, 1)))
            selected = std::count_if(c->begin(), c->end(), [](std::int64_t v) { return v != 0; });
        const auto* axisAttr = findAttr(*in.node, "axis");
        Dims dims { selected >= 0 ? selected : elementCount(x->dims) };
        if (axisAttr) {
            auto axis = normalizeAxis(axisAttr->i(), std::int64_t(x->dims.size()));
            if (!axis)
                return true;
            dims = x->dims;
            if (selected >= 0)
                dims[*axis] = selected;
        }
        if (selected < 0 && !in.allowGuesses)
            return true;
        out[0] = tensorFacts(x->elemType, dims, selected < 0 || anyEstimated(in));
        return true;
    }
    if (op == "TopK") {
        if (!rankKnown(x))
            return true;
        auto axis = normalizeAxis(attrInt(*in.node, "axis", -1), std::int64_t(x->dims.size()));
        if (!axis)
            return true;
        std::int64_t k = attrInt(*in.node, "k", -1);
        if (auto c = constInts(inputAt(in, 1)); c && c->size() == 1)
            k = (*c)[0];
        const bool guess = k < 0;
        if (guess && !in.allowGuesses)
            return true;
        Dims dims = x->dims;
        dims[*axis] = guess ? x->dims[*axis] : k;
        out[0] = tensorFacts(x->elemType, dims, guess || anyEstimated(in));
        if (out.size() > 1)
            out[1] = tensorFacts(TensorProto::INT64, dims, guess || anyEstimated(in));
        return true;
    }
    return false;
}

bool spatialRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto& node = *in.node;
    const auto& op = node.op_type();
    const auto* x = inputAt(in, 0);
    if (op == "DepthToSpace" || op == "SpaceToDepth") {
        if (!rankKnown(x) || x->dims.size() != 4)
            return true;
        const std::int64_t b = attrInt(node, "blocksize", 1);
        Dims d = x->dims;
        auto mul = [](std::int64_t v, std::int64_t f) { return v < 0 ? v : v * f; };
        auto div = [](std::int64_t v, std::int64_t f) { return v < 0 || f <= 0 ? std::int64_t(-1) : v / f; };
        if (op == "DepthToSpace")
            d = { d[0], div(d[1], b * b), mul(d[2], b), mul(d[3], b) };
        else
            d = { d[0], mul(d[1], b * b), div(d[2], b), div(d[3], b) };
        out[0] = facts(in, x->elemType, d);
        return true;
    }
    if (op == "Col2Im") {
        auto image = constInts(inputAt(in, 1));
        auto block = constInts(inputAt(in, 2));
        if (!rankKnown(x) || x->dims.size() != 3 || !image || !block)
            return true;
        std::int64_t blockSize = 1;
        for (auto v : *block)
            blockSize *= v;
        Dims d { x->dims[0], x->dims[1] < 0 || blockSize <= 0 ? -1 : x->dims[1] / blockSize };
        d.insert(d.end(), image->begin(), image->end());
        out[0] = facts(in, x->elemType, d);
        return true;
    }
    if (op == "CenterCropPad") {
        auto shape = constInts(inputAt(in, 1));
        if (!rankKnown(x) || !shape)
            return true;
        const auto rank = std::int64_t(x->dims.size());
        std::vector<std::int64_t> axes;
        if (auto a = attrInts(node, "axes"))
            axes = *a;
        else
            for (std::int64_t d = 0; d < rank; ++d)
                axes.push_back(d);
        if (axes.size() != shape->size())
            return true;
        Dims d = x->dims;
        for (std::size_t i = 0; i < axes.size(); ++i) {
            auto a = normalizeAxis(axes[i], rank);
            if (!a)
                return true;
            d[*a] = (*shape)[i];
        }
        out[0] = facts(in, x->elemType, d);
        return true;
    }
    if (op == "GridSample") {
        const auto* grid = inputAt(in, 1);
        if (!rankKnown(x) || !rankKnown(grid) || x->dims.size() < 3 || grid->dims.size() != x->dims.size())
            return true;
        Dims d { x->dims[0], x->dims[1] };
        d.insert(d.end(), grid->dims.begin() + 1, grid->dims.end() - 1);
        out[0] = facts(in, x->elemType, d);
        return true;
    }
    if (op == "AffineGrid") {
        auto size = constInts(inputAt(in, 1));
        if (!size || size->size() < 4)
            return true;
        Dims d { (*size)[0] };
        d.insert(d.end(), size->begin() + 2, size->end());
        d.push_back(std::int64_t(size->size() - 2));
        out[0] = facts(in, elemTypeOf(in, 0), d);
        return true;
    }
    return false;
}

} // namespace

bool applyLayoutRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto& node = *in.node;
    const std::string& op = node.op_type();
    const auto* x = inputAt(in, 0);
    if (op == "Constant") {
        for (const auto& a : node.attribute()) {
            if (a.name() == "value" && a.has_t())
                out[0] = factsFromTensor(a.t());
            else if (a.name() == "sparse_value" && a.has_sparse_tensor())
                out[0] = tensorFacts(a.sparse_tensor().values().data_type(),
                                     Dims(a.sparse_tensor().dims().begin(), a.sparse_tensor().dims().end()));
            else if (a.name() == "value_float" || a.name() == "value_int")
                out[0] = tensorFacts(a.name() == "value_float" ? TensorProto::FLOAT : TensorProto::INT64, {});
            else if (a.name() == "value_floats")
                out[0] = tensorFacts(TensorProto::FLOAT, { a.floats_size() });
            else if (a.name() == "value_ints")
                out[0] = tensorFacts(TensorProto::INT64, { a.ints_size() });
            else if (a.name() == "value_string")
                out[0] = tensorFacts(TensorProto::STRING, {});
            else if (a.name() == "value_strings")
                out[0] = tensorFacts(TensorProto::STRING, { a.strings_size() });
        }
        return true;
    }
    if (op == "Shape") {
        if (rankKnown(x)) {
            const auto rank = std::int64_t(x->dims.size());
            std::int64_t start = attrInt(node, "start", 0), end = attrInt(node, "end", rank);
            start = std::clamp<std::int64_t>(start < 0 ? start + rank : start, 0, rank);
            end = std::clamp<std::int64_t>(end < 0 ? end + rank : end, 0, rank);
            out[0] = tensorFacts(TensorProto::INT64, { std::max<std::int64_t>(end - start, 0) });
        }
        return true;
    }
    if (op == "Size") {
        out[0] = tensorFacts(TensorProto::INT64, {});
        return true;
    }
    if (op == "Reshape") {
        auto shape = intsInputOrAttr(in, 1, "shape");
        if (!x || !shape)
            return true;
        const Dims input = rankKnown(x) ? x->dims : Dims {};
        std::optional<Dims> dims;
        if (rankKnown(x))
            dims = reshapeDims(input, *shape, attrInt(node, "allowzero", 0) != 0);
        else if (std::none_of(shape->begin(), shape->end(), [](std::int64_t d) { return d <= 0; }))
            dims = Dims(shape->begin(), shape->end()); // no 0/-1: the input shape does not matter
        if (dims)
            out[0] = facts(in, x->elemType, *dims);
        return true;
    }
    if (op == "Flatten") {
        if (!rankKnown(x))
            return true;
        const auto rank = std::int64_t(x->dims.size());
        // Flatten's axis lies in [-rank, rank]; negative counts from the end.
        std::int64_t flat = attrInt(node, "axis", 1);
        flat = flat < 0 ? flat + rank : flat;
        const auto axis = flat >= 0 && flat <= rank ? std::optional<std::int64_t>(flat) : std::nullopt;
        if (!axis)
            return true;
        const std::int64_t a = elementCount(Dims(x->dims.begin(), x->dims.begin() + *axis));
        const std::int64_t b = elementCount(Dims(x->dims.begin() + *axis, x->dims.end()));
        out[0] = facts(in, x->elemType, { a, b });
        return true;
    }
    if (op == "Expand") {
        auto shape = constInts(inputAt(in, 1));
        if (!rankKnown(x) || !shape)
            return true;
        if (auto dims = broadcastDims({ x->dims, Dims(shape->begin(), shape->end()) }))
            out[0] = facts(in, x->elemType, *dims);
        return true;
    }
    if (op == "Tile") {
        auto repeats = constInts(inputAt(in, 1));
        if (!rankKnown(x) || !repeats || repeats->size() != x->dims.size())
            return true;
        Dims dims = x->dims;
        for (std::size_t d = 0; d < dims.size(); ++d)
            dims[d] = dims[d] < 0 ? -1 : dims[d] * (*repeats)[d];
        out[0] = facts(in, x->elemType, dims);
        return true;
    }
    if (op == "Pad")
        return padRule(in, out);
    if (op == "Resize" || op == "Upsample")
        return resizeRule(in, out);
    if (op == "Split")
        return splitRule(in, out);
    if (op == "Slice")
        return sliceRule(in, out);
    if (op == "Gather" || op == "GatherElements" || op == "GatherND")
        return gatherRule(in, out);
    if (op == "Squeeze" || op == "Unsqueeze")
        return squeezeRule(in, out);
    if (op == "ConstantOfShape") {
        auto shape = constInts(x);
        int type = TensorProto::FLOAT;
        if (const auto* a = findAttr(node, "value"); a && a->has_t())
            type = a->t().data_type();
        if (shape)
            out[0] = facts(in, type, Dims(shape->begin(), shape->end()));
        return true;
    }
    if (op == "Range") {
        auto start = constReals(x), limit = constReals(inputAt(in, 1)), delta = constReals(inputAt(in, 2));
        if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 || delta->size() != 1
            || (*delta)[0] == 0.0)
            return true;
        const double n = std::max(std::ceil(((*limit)[0] - (*start)[0]) / (*delta)[0]), 0.0);
        if (n < 9e18)
            out[0] = facts(in, x->elemType, { std::int64_t(n) });
        return true;
    }
    if (op == "OneHot") {
        const auto* indices = x;
        auto depth = constReals(inputAt(in, 1));
        if (!rankKnown(indices) || !depth || depth->size() != 1)
            return true;
        const auto rank = std::int64_t(indices->dims.size());
        auto axis = normalizeAxis(attrInt(node, "axis", -1), rank + 1);
        if (!axis)
            return true;
        Dims dims = indices->dims;
        dims.insert(dims.begin() + *axis, std::int64_t((*depth)[0]));
        out[0] = facts(in, elemTypeOf(in, 2), dims);
        return true;
    }
    if (op == "Concat") {
        const auto* first = x;
        if (!rankKnown(first))
            return true;
        const auto rank = std::int64_t(first->dims.size());
        auto axis = normalizeAxis(attrInt(node, "axis", 0), rank);
        if (!axis)
            return true;
        Dims dims(rank, -1);
        std::int64_t total = 0;
        for (auto* f : in.inputs) {
            if (!f)
                continue;
            if (!rankKnown(f) || std::int64_t(f->dims.size()) != rank) {
                total = -1;
                continue;
            }
            for (std::int64_t d = 0; d < rank; ++d)
                if (d != *axis && dims[d] < 0)
                    dims[d] = f->dims[d];
            total = total < 0 || f->dims[*axis] < 0 ? -1 : total + f->dims[*axis];
        }
        dims[*axis] = total;
        out[0] = facts(in, first->elemType, dims);
        return true;
    }
    if (op == "Transpose") {
        if (!rankKnown(x))
            return true;
        const auto stated = attrInts(node, "perm");
        const auto perm = transposeOrder(stated ? &*stated : nullptr, x->dims.size());
        if (!perm)
            return true;
        Dims dims;
        for (auto p : *perm)
            dims.push_back(x->dims[std::size_t(p)]);
        out[0] = facts(in, x->elemType, dims);
        return true;
    }
    return dataDependentRule(in, out) || spatialRule(in, out);
}

} // namespace core::onnxdetail
