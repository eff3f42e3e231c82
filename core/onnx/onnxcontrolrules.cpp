// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Shape rules for control flow (If, Loop, Scan), sequences and optionals. Sequence values have no
// shape, only a byte estimate: the sum of the tensors they hold where that is known.
#include "onnx/onnxshapemath.h"
#include "onnx/onnxshaperules.h"

#include <algorithm>
#include <limits>

namespace core::onnxdetail {

using onnx::TensorProto;

namespace {

// Trip counts above this are "run until cond is false" sentinels (exporters write INT64_MAX).
constexpr std::int64_t kMaxTripCount = std::int64_t(1) << 31;

ValueFacts sequenceFacts(int elemType, std::int64_t bytes, bool estimated)
{
    ValueFacts f;
    f.kind = ValueKind::Sequence;
    f.elemType = elemType;
    f.bytes = bytes;
    f.estimated = estimated;
    return f;
}

// The elementwise upper bound of two branch results: equal dims stay exact, differing ones take
// the larger and become an estimate.
ValueFacts unionFacts(const ValueFacts& a, const ValueFacts& b)
{
    if (a.kind == ValueKind::Unknown || b.kind == ValueKind::Unknown)
        return {};
    ValueFacts f = a;
    f.value = nullptr;
    f.estimated = a.estimated || b.estimated;
    f.optional = a.optional || b.optional;
    if (a.kind == ValueKind::Tensor && b.kind == ValueKind::Tensor && a.rankKnown && b.rankKnown
        && a.dims.size() == b.dims.size()) {
        for (std::size_t d = 0; d < f.dims.size(); ++d) {
            if (a.dims[d] < 0 || b.dims[d] < 0)
                f.dims[d] = -1;
            else if (a.dims[d] != b.dims[d]) {
                f.dims[d] = std::max(a.dims[d], b.dims[d]);
                f.estimated = true;
            }
        }
        return f;
    }
    const std::int64_t ba = factsBytes(a), bb = factsBytes(b);
    f.length = a.length == b.length ? a.length : -1;
    if (a.elementDims != b.elementDims)
        f.elementDims.clear();
    f.rankKnown = false;
    f.dims.clear();
    f.bytes = ba < 0 || bb < 0 ? -1 : std::max(ba, bb);
    f.estimated = true;
    if (a.kind != b.kind)
        f.kind = ValueKind::Tensor;
    return f;
}

void ifRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    if (in.subgraphOutputs.size() != 2)
        return;
    const auto& a = in.subgraphOutputs[0];
    const auto& b = in.subgraphOutputs[1];
    // A condition import knows (computed from static shapes, as torch exports a squeeze of a dim
    // that may be 1) picks its branch: the other never runs.
    if (const auto condition = constInts(inputAt(in, 0)); condition && condition->size() == 1) {
        const auto& taken = (*condition)[0] != 0 ? a : b;
        for (std::size_t i = 0; i < out.size() && i < taken.size(); ++i) {
            out[i] = taken[i];
            out[i].value = nullptr; // the run computes it
        }
        return;
    }
    for (std::size_t i = 0; i < out.size() && i < a.size() && i < b.size(); ++i)
        out[i] = unionFacts(a[i], b[i]);
}

// The one axis along which a Loop body's carried tensor result `after` is longer than what it
// entered with (`before`), every other dim equal; -1 when there is no such single axis.
int growthAxis(const ValueFacts* before, const ValueFacts& after)
{
    if (!before || before->kind != ValueKind::Tensor || after.kind != ValueKind::Tensor || !before->rankKnown || !after.rankKnown
        || before->dims.size() != after.dims.size())
        return -1;
    int axis = -1;
    for (std::size_t d = 0; d < after.dims.size(); ++d) {
        if (before->dims[d] < 0 || after.dims[d] < 0)
            return -1;
        if (after.dims[d] == before->dims[d])
            continue;
        if (after.dims[d] < before->dims[d] || axis >= 0)
            return -1;
        axis = int(d);
    }
    return axis;
}

// Whether a carried value's entry facts know a rank or dim its body result does not.
bool entryFillsShape(const ValueFacts& result, const ValueFacts& entry)
{
    if (!entry.rankKnown || entry.kind != ValueKind::Tensor)
        return false;
    if (!result.rankKnown)
        return true;
    if (result.dims.size() != entry.dims.size())
        return false;
    for (std::size_t d = 0; d < result.dims.size(); ++d)
        if (result.dims[d] < 0 && entry.dims[d] >= 0)
            return true;
    return false;
}

void loopRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    if (in.subgraphOutputs.size() != 1)
        return;
    if (in.unrolled.size() == out.size()) { // every iteration inferred: the outputs as they end
        out = in.unrolled;
        return;
    }
    const auto& body = in.subgraphOutputs[0];
    const std::size_t carried = in.inputs.size() >= 2 ? in.inputs.size() - 2 : 0;
    std::int64_t trips = -1;
    bool estimated = inputAt(in, 1) != nullptr; // a condition may stop the loop early: M is a bound
    if (auto m = constInts(inputAt(in, 0)); m && m->size() == 1 && (*m)[0] >= 0 && (*m)[0] <= kMaxTripCount)
        trips = (*m)[0];
    for (std::size_t i = 0; i < carried && i < out.size(); ++i) {
        if (1 + i < body.size() && body[1 + i].kind != ValueKind::Unknown)
            out[i] = body[1 + i];
        const auto* initial = inputAt(in, 2 + i);
        // A carried sequence whose body result holds bytes the body cannot tell (it inserts an element
        // of unknown size) holds neither its entry bytes nor any other known amount.
        if (out[i].kind == ValueKind::Sequence && out[i].bytes < 0) {
            out[i] = {};
            continue;
        }
        // A carried sequence that grows by the same bytes every iteration (a list built by
        // SequenceInsert): what it enters with plus M times that growth, a bound when a condition may stop early.
        if (out[i].kind == ValueKind::Sequence && initial && initial->kind == ValueKind::Sequence && initial->bytes >= 0
            && out[i].bytes > initial->bytes) {
            if (trips < 0 && !in.allowGuesses) {
                out[i] = {};
                continue;
            }
            const std::int64_t growth = out[i].bytes - initial->bytes;
            out[i].bytes = initial->bytes + std::max<std::int64_t>(trips, 1) * growth;
            out[i].estimated = out[i].estimated || estimated || trips < 0;
        }
        // A carried tensor that grows along one axis every iteration (`acc = Concat(acc, row)`, as
        // torch exports a tensor built in a loop): its entry length plus M times that growth.
        if (const auto axis = growthAxis(initial, out[i]); axis >= 0) {
            if (trips < 0 && !in.allowGuesses) {
                out[i] = {};
                continue;
            }
            // A data-dependent trip count keeps one iteration's growth, a guess the run checks.
            auto& dim = out[i].dims[std::size_t(axis)];
            dim = initial->dims[std::size_t(axis)] + std::max<std::int64_t>(trips, 1) * (dim - initial->dims[std::size_t(axis)]);
            out[i].estimated = out[i].estimated || estimated || trips < 0;
        }
        // The entry's type holds whatever the iterations do; a rank or dim the body's result does
        // not know, taken from the entry, is a guess that the value keeps its shape (the run
        // checks it): made only when guesses are allowed, and an estimate.
        if (initial && entryFillsShape(out[i], *initial) && !in.allowGuesses) {
            ValueFacts typeOnly;
            typeOnly.kind = initial->kind;
            typeOnly.elemType = initial->elemType;
            mergeFacts(out[i], typeOnly);
        } else if (initial) {
            out[i].estimated = out[i].estimated || entryFillsShape(out[i], *initial);
            mergeFacts(out[i], *initial);
        }
        if (out[i].kind == ValueKind::Sequence) { // kept only when no iteration changes it
            out[i].length = initial && 1 + i < body.size() && body[1 + i].length == initial->length ? initial->length : -1;
            if (!initial || 1 + i >= body.size() || body[1 + i].elementDims != initial->elementDims)
                out[i].elementDims.clear();
        }
        out[i].value = nullptr;
    }
    // Scan outputs stack one body output per iteration.
    if (trips < 0) {
        if (!in.allowGuesses)
            return;
        trips = 1;
        estimated = true;
    }
    for (std::size_t j = carried; j < out.size(); ++j) {
        const std::size_t b = 1 + j;
        if (b >= body.size() || body[b].kind != ValueKind::Tensor || !body[b].rankKnown)
            continue;
        Dims dims { trips };
        dims.insert(dims.end(), body[b].dims.begin(), body[b].dims.end());
        out[j] = tensorFacts(body[b].elemType, dims, estimated || body[b].estimated);
    }
}

void scanRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    // Scan-8 has a batch axis and sequence_lens; leave it to ONNX inference.
    if (in.subgraphOutputs.size() != 1 || in.opset < 9)
        return;
    const auto& body = in.subgraphOutputs[0];
    const std::int64_t scanInputs = attrInt(*in.node, "num_scan_inputs", 0);
    const std::int64_t states = std::int64_t(in.inputs.size()) - scanInputs;
    if (states < 0 || scanInputs <= 0)
        return;
    const auto* firstScan = inputAt(in, std::size_t(std::int64_t(in.inputs.size()) - scanInputs));
    if (!rankKnown(firstScan))
        return;
    std::int64_t axis = 0;
    if (auto axes = attrInts(*in.node, "scan_input_axes"); axes && !axes->empty())
        axis = (*axes)[0];
    auto a = normalizeAxis(axis, std::int64_t(firstScan->dims.size()));
    if (!a)
        return;
    const std::int64_t length = firstScan->dims[*a];
    const auto outputAxes = attrInts(*in.node, "scan_output_axes");
    for (std::size_t j = 0; j < out.size() && j < body.size(); ++j) {
        if (std::int64_t(j) < states) {
            out[j] = body[j];
            continue;
        }
        if (!body[j].rankKnown)
            continue;
        Dims dims = body[j].dims;
        const std::size_t k = j - std::size_t(states);
        std::int64_t at = outputAxes && k < outputAxes->size() ? (*outputAxes)[k] : 0;
        auto n = normalizeAxis(at, std::int64_t(dims.size()) + 1);
        if (!n)
            continue;
        dims.insert(dims.begin() + *n, length);
        out[j] = tensorFacts(body[j].elemType, dims, body[j].estimated);
    }
}

// Gives sequence `s` its element count and, when every element has them, the elements' dims.
void setElements(ValueFacts& s, std::int64_t length, const Dims* dims)
{
    s.length = length;
    if (dims) {
        s.rankKnown = true;
        s.dims = *dims;
    }
}

// The element a sequence op's position input (input `i`) names in a sequence of `length` elements,
// counting from the end when negative; absent, the end (SequenceInsert appends, SequenceErase drops
// the last). nullopt when it is not known at import or out of range.
std::optional<std::size_t> sequencePosition(const RuleInput& in, std::size_t i, std::int64_t length, bool insert)
{
    const std::int64_t last = insert ? length : length - 1;
    if (!inputAt(in, i))
        return last >= 0 ? std::optional<std::size_t>(std::size_t(last)) : std::nullopt;
    const auto p = constInts(inputAt(in, i));
    if (!p || p->size() != 1)
        return std::nullopt;
    const std::int64_t k = (*p)[0] < 0 ? (*p)[0] + length : (*p)[0];
    if (k < 0 || k > last)
        return std::nullopt;
    return std::size_t(k);
}

// Concatenating elements of these dims along `axis`: the axis dims summed, every other dim equal.
std::optional<Dims> concatenated(const std::vector<Dims>& elements, std::int64_t axis)
{
    if (elements.empty() || axis < 0 || axis >= std::int64_t(elements[0].size()))
        return std::nullopt;
    Dims dims = elements[0];
    for (std::size_t e = 1; e < elements.size(); ++e) {
        if (elements[e].size() != dims.size())
            return std::nullopt;
        for (std::size_t d = 0; d < dims.size(); ++d)
            if (d != std::size_t(axis) && elements[e][d] != dims[d])
                return std::nullopt;
        dims[std::size_t(axis)] += elements[e][std::size_t(axis)];
    }
    return dims;
}

// More list elements than this are not tracked one by one: a dimension of 2^40 in a hostile file
// would otherwise ask for 2^40 element shapes before any size check.
constexpr std::int64_t kMaxTrackedPieces = std::int64_t(1) << 20;

// The dims of each piece SplitToSequence makes of x, in order; false when the split is not known
// (or has more than kMaxTrackedPieces pieces).
bool splitPieces(const RuleInput& in, const ValueFacts& x, std::vector<Dims>& pieces)
{
    if (!x.dimsKnown() || x.dims.empty())
        return false;
    const auto axis = normalizeAxis(attrInt(*in.node, "axis", 0), std::int64_t(x.dims.size()));
    if (!axis)
        return false;
    const std::int64_t dim = x.dims[std::size_t(*axis)];
    auto piece = [&](std::int64_t along) {
        Dims d = x.dims;
        d[std::size_t(*axis)] = along;
        return d;
    };
    const auto* split = inputAt(in, 1);
    if (!split) {
        Dims d = piece(1);
        if (attrInt(*in.node, "keepdims", 1) == 0)
            d.erase(d.begin() + *axis);
        if (dim > kMaxTrackedPieces)
            return false;
        pieces.assign(std::size_t(dim), d);
        return true;
    }
    const auto values = constInts(split);
    if (!values || values->empty())
        return false;
    if (split->rankKnown && split->dims.empty()) { // one chunk length; the last piece may be shorter
        const std::int64_t chunk = (*values)[0];
        if (chunk <= 0 || dim / chunk > kMaxTrackedPieces)
            return false;
        pieces.assign(std::size_t(dim / chunk), piece(chunk));
        if (dim % chunk != 0)
            pieces.push_back(piece(dim % chunk));
        return true;
    }
    std::int64_t total = 0;
    for (const auto v : *values) {
        if (v < 0 || v > dim - total)
            return false;
        total += v;
        pieces.push_back(piece(v));
    }
    return total == dim; // else the split the run refuses
}

bool sequenceRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto& op = in.node->op_type();
    const auto* x = inputAt(in, 0);
    auto bytesOf = [&](std::size_t i) { return inputAt(in, i) ? factsBytes(*inputAt(in, i)) : std::int64_t(-1); };
    auto estimatedAt = [&](std::size_t i) { return inputAt(in, i) && inputAt(in, i)->estimated; };
    // Every element of sequence x has the dims `x->dims`, and x knows how many it holds.
    const bool uniform = x && x->kind == ValueKind::Sequence && x->length >= 0 && x->dimsKnown();
    if (op == "SequenceEmpty") {
        out[0] = sequenceFacts(int(attrInt(*in.node, "dtype", TensorProto::FLOAT)), 0, false);
        out[0].length = 0;
        return true;
    }
    if (op == "SequenceConstruct") {
        std::int64_t total = 0;
        bool estimated = false;
        for (std::size_t i = 0; i < in.inputs.size(); ++i) {
            const std::int64_t b = bytesOf(i);
            if (b < 0)
                return true;
            total += b;
            estimated = estimated || estimatedAt(i);
        }
        out[0] = sequenceFacts(x ? x->elemType : 0, total, estimated);
        const bool same = x && x->dimsKnown() && std::all_of(in.inputs.begin(), in.inputs.end(), [&](const ValueFacts* f) {
            return f && f->dimsKnown() && f->dims == x->dims;
        });
        setElements(out[0], std::int64_t(in.inputs.size()), same ? &x->dims : nullptr);
        if (std::all_of(in.inputs.begin(), in.inputs.end(), [](const ValueFacts* f) { return f && f->dimsKnown() && !f->estimated; }))
            for (const auto* f : in.inputs)
                out[0].elementDims.push_back(f->dims);
        return true;
    }
    if (op == "SequenceInsert") {
        const std::int64_t s = bytesOf(0), t = bytesOf(1);
        if (s >= 0 && t >= 0) {
            out[0] = sequenceFacts(x->elemType, s + t, estimatedAt(0) || estimatedAt(1));
            const auto* tensor = inputAt(in, 1);
            if (x->length >= 0 && tensor && tensor->dimsKnown() && !tensor->estimated)
                setElements(out[0], x->length + 1, x->length == 0 || (uniform && x->dims == tensor->dims) ? &tensor->dims : nullptr);
            const auto k = x->elementsKnown() ? sequencePosition(in, 2, x->length, true) : std::nullopt;
            if (k && tensor && tensor->dimsKnown() && !tensor->estimated) {
                out[0].elementDims = x->elementDims;
                out[0].elementDims.insert(out[0].elementDims.begin() + std::ptrdiff_t(*k), tensor->dims);
            }
        }
        return true;
    }
    if (op == "SequenceErase") {
        if (bytesOf(0) >= 0)
            out[0] = sequenceFacts(x->elemType, bytesOf(0), true); // at most what it held
        if (bytesOf(0) >= 0 && x->length > 0) {
            setElements(out[0], x->length - 1, uniform ? &x->dims : nullptr);
            if (const auto k = x->elementsKnown() ? sequencePosition(in, 1, x->length, false) : std::nullopt) {
                out[0].elementDims = x->elementDims;
                out[0].elementDims.erase(out[0].elementDims.begin() + std::ptrdiff_t(*k));
                // The elements left tell the bytes exactly, where the one erased is known.
                const auto erased = factsBytes(tensorFacts(x->elemType, x->elementDims[*k]));
                if (erased >= 0 && !x->estimated) {
                    out[0].bytes = bytesOf(0) - erased;
                    out[0].estimated = false;
                }
            }
        }
        return true;
    }
    if (op == "SplitToSequence") {
        if (bytesOf(0) >= 0) {
            out[0] = sequenceFacts(x->elemType, bytesOf(0), estimatedAt(0));
            std::vector<Dims> pieces;
            if (!x->estimated && splitPieces(in, *x, pieces)) {
                const bool same = std::all_of(pieces.begin(), pieces.end(), [&](const Dims& d) { return d == pieces.front(); });
                setElements(out[0], std::int64_t(pieces.size()), same && !pieces.empty() ? &pieces.front() : nullptr);
                out[0].elementDims = std::move(pieces);
            }
        }
        return true;
    }
    if (op == "SequenceAt" && x && x->elementsKnown() && x->length > 0) { // the named element's dims
        if (const auto k = sequencePosition(in, 1, x->length, false); k && inputAt(in, 1)) {
            out[0] = tensorFacts(x->elemType, x->elementDims[*k], x->estimated);
            return true;
        }
    }
    if (op == "ConcatFromSequence" && x && x->elementsKnown() && x->length > 0 && !uniform && attrInt(*in.node, "new_axis", 0) == 0) {
        const auto rank = std::int64_t(x->elementDims[0].size());
        if (const auto axis = normalizeAxis(attrInt(*in.node, "axis", 0), rank))
            if (const auto dims = concatenated(x->elementDims, *axis)) {
                out[0] = tensorFacts(x->elemType, *dims, x->estimated);
                return true;
            }
    }
    if (op == "SequenceAt" && uniform && x->length > 0) { // exactly one element's dims
        out[0] = tensorFacts(x->elemType, x->dims, x->estimated);
        return true;
    }
    if (op == "ConcatFromSequence" && uniform && x->length > 0) {
        const bool stack = attrInt(*in.node, "new_axis", 0) != 0;
        Dims dims = x->dims;
        if (const auto axis = normalizeAxis(attrInt(*in.node, "axis", 0), std::int64_t(dims.size()) + (stack ? 1 : 0))) {
            if (stack)
                dims.insert(dims.begin() + *axis, x->length);
            else if (*axis < std::int64_t(dims.size()))
                dims[std::size_t(*axis)] *= x->length;
            out[0] = tensorFacts(x->elemType, dims, x->estimated);
            return true;
        }
    }
    if (op == "SequenceAt" || op == "ConcatFromSequence") {
        // Concatenating holds exactly the sequence's bytes; one element holds at most all of them.
        if (bytesOf(0) >= 0) {
            out[0].kind = ValueKind::Tensor;
            out[0].elemType = x->elemType;
            out[0].bytes = bytesOf(0);
            out[0].estimated = op == "SequenceAt" || estimatedAt(0);
        }
        return true;
    }
    if (op == "SequenceLength") {
        out[0] = tensorFacts(TensorProto::INT64, {});
        return true;
    }
    if (op == "SequenceMap") {
        // The body runs once per element of input 0: output k holds one body result k per element.
        // With the length known and a body result of known dims, that is exact (or a bound when
        // the result is); otherwise a guess the run checks: what all the inputs hold.
        const auto* body = in.subgraphOutputs.size() == 1 ? &in.subgraphOutputs[0] : nullptr;
        const std::int64_t length = x && x->kind == ValueKind::Sequence ? x->length : -1;
        std::int64_t total = 0;
        for (std::size_t i = 0; i < in.inputs.size(); ++i)
            total += std::max<std::int64_t>(bytesOf(i), 0);
        for (std::size_t k = 0; k < out.size(); ++k) {
            const ValueFacts* result = body && k < body->size() ? &(*body)[k] : nullptr;
            const int elemType = result && result->elemType != 0 ? result->elemType : x ? x->elemType : 0;
            const std::int64_t each = result && result->kind == ValueKind::Tensor ? factsBytes(*result) : -1;
            if (length >= 0 && each >= 0) {
                out[k] = sequenceFacts(elemType, length * each, result->estimated || x->estimated);
                setElements(out[k], length, result->dimsKnown() && !result->estimated ? &result->dims : nullptr);
            } else if (in.allowGuesses) {
                out[k] = sequenceFacts(elemType, total, true);
            }
        }
        return true;
    }
    if (op == "Optional") {
        // Without an input it holds nothing: no bytes, of the element its `type` attribute names.
        if (x) {
            out[0] = *x;
        } else {
            const auto* type = findAttr(*in.node, "type");
            const ValueFacts declared = type && type->has_tp() ? factsFromType(type->tp()) : ValueFacts {};
            out[0] = sequenceFacts(declared.elemType, 0, false);
            out[0].kind = declared.kind == ValueKind::Sequence ? ValueKind::Sequence : ValueKind::Tensor;
        }
        out[0].optional = true;
        out[0].value = nullptr;
        return true;
    }
    if (op == "OptionalGetElement") {
        if (x)
            out[0] = *x, out[0].optional = false, out[0].value = nullptr;
        return true;
    }
    if (op == "OptionalHasElement") {
        out[0] = tensorFacts(TensorProto::BOOL, {});
        return true;
    }
    return false;
}

} // namespace

bool applyControlRule(const RuleInput& in, std::vector<ValueFacts>& out)
{
    const auto& op = in.node->op_type();
    if (op == "If")
        ifRule(in, out);
    else if (op == "Loop")
        loopRule(in, out);
    else if (op == "Scan")
        scanRule(in, out);
    else
        return sequenceRule(in, out);
    return true;
}

} // namespace core::onnxdetail
