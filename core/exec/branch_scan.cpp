// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/branchrun.h"

#include <algorithm>
#include <cstring>

namespace core::exec::graphrun {

namespace {

// Shape without dimension `axis`, and the element counts before and after it.
struct AxisSplit {
    Shape rest;
    std::int64_t outer = 1, inner = 1;
};

AxisSplit splitAt(const Shape& shape, std::size_t axis)
{
    AxisSplit s;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if (d == axis)
            continue;
        s.rest.push_back(shape[d]);
        (d < axis ? s.outer : s.inner) *= shape[d];
    }
    return s;
}

// Writes `element` (of shape `shape`, elements of `w` bytes) as position p of `length` along
// axis `axis` of the stacked tensor at `out`.
void stackAt(std::byte* out, const std::byte* element, const Shape& shape, std::size_t axis, std::int64_t length, std::int64_t p, std::int64_t w)
{
    Shape stacked = shape;
    stacked.insert(stacked.begin() + std::ptrdiff_t(axis), length);
    const auto split = splitAt(stacked, axis);
    for (std::int64_t o = 0; o < split.outer; ++o)
        std::memcpy(out + ((o * length + p) * split.inner) * w, element + o * split.inner * w, std::size_t(split.inner * w));
}

} // namespace

bool evalScan(const Subgraphs& scan, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel, const BodyArena& arena)
{
    const Branch& body = scan.body;
    if (!body.unsupported.empty()) {
        why = body.unsupported;
        return false;
    }
    const std::int64_t scanInputs = call.attrInt("num_scan_inputs", 0);
    const std::size_t inputs = call.in.size();
    if (body.formals.size() != inputs) {
        why = "the body's inputs do not match the Scan's";
        return false;
    }
    if (scanInputs < 1 || std::size_t(scanInputs) > inputs || body.results.size() < inputs - std::size_t(scanInputs)
        || outputs != body.results.size()) {
        why = "the body's inputs and outputs do not match the Scan's";
        return false;
    }
    const std::size_t states = inputs - std::size_t(scanInputs), scanOutputs = body.results.size() - states;
    const auto inAxes = call.attrIntsOr("scan_input_axes", 0, std::size_t(scanInputs));
    const auto inReverse = call.attrIntsOr("scan_input_directions", 0, std::size_t(scanInputs));
    const auto outAxes = call.attrIntsOr("scan_output_axes", 0, scanOutputs);
    const auto outReverse = call.attrIntsOr("scan_output_directions", 0, scanOutputs);
    if (inAxes.size() != std::size_t(scanInputs) || inReverse.size() != std::size_t(scanInputs) || outAxes.size() != scanOutputs
        || outReverse.size() != scanOutputs) {
        why = "a scan axis or direction list has the wrong length";
        return false;
    }
    std::int64_t length = -1;
    std::vector<std::size_t> axis(static_cast<std::size_t>(scanInputs), 0);
    for (std::size_t j = 0; j < std::size_t(scanInputs); ++j) {
        const auto& x = call.in[states + j];
        const std::int64_t rank = x.rank(), a = inAxes[j] < 0 ? inAxes[j] + rank : inAxes[j];
        if (!x.present() || a < 0 || a >= rank || (length >= 0 && x.shape[std::size_t(a)] != length)) {
            why = "scan input " + std::to_string(j) + " has no scan axis " + std::to_string(inAxes[j]) + " of the common length";
            return false;
        }
        axis[j] = std::size_t(a);
        length = x.shape[std::size_t(a)];
    }
    std::vector<Value> carried;
    for (std::size_t k = 0; k < states; ++k) {
        if (!call.has(k)) {
            why = "a state value is left out";
            return false;
        }
        carried.push_back(copyOf(call.in[k]));
    }
    std::vector<std::vector<Value>> produced(scanOutputs); // per scan output, per iteration
    // A scan output the plan gives room (a Scan of the model's graph) that holds it takes each
    // iteration's slice straight into its place there; the others keep the slices in host copies
    // (kernel scratch) until they are stacked.
    std::vector<std::byte*> into(scanOutputs, nullptr);
    std::vector<Shape> elementShape(scanOutputs);
    std::vector<DType> elementType(scanOutputs, DType::Undefined);
    std::vector<std::size_t> outAxis(scanOutputs, 0);
    const GraphPlace place = placeOf(arena, "body"); // every iteration reuses the body's region: results are copied out
    for (std::int64_t t = 0; t < length; ++t) {
        Bytes held = 0;
        BranchRun run(body, outer, held, cancel, place);
        for (std::size_t k = 0; k < states; ++k)
            run.bind(body.formals[k], carried[k]);
        for (std::size_t j = 0; j < std::size_t(scanInputs); ++j) {
            const auto& x = call.in[states + j];
            const auto split = splitAt(x.shape, axis[j]);
            const std::int64_t at = inReverse[j] != 0 ? length - 1 - t : t, w = dtypeBytes(x.dtype);
            Value slice = allocate(x.dtype, split.rest, split.outer * split.inner);
            for (std::int64_t o = 0; o < split.outer; ++o)
                std::memcpy(slice.bytes.data() + o * split.inner * w, x.data + ((o * length + at) * split.inner) * w,
                    std::size_t(split.inner * w));
            run.bind(body.formals[states + j], std::move(slice));
        }
        if (!run.runAll(why))
            return false;
        TensorView v;
        for (std::size_t k = 0; k < body.results.size(); ++k) {
            if (!run.find(body.results[k], v)) {
                why = "the body's result '" + body.results[k] + "' was not computed";
                return false;
            }
            if (k < states) {
                carried[k] = copyOf(v);
                continue;
            }
            const std::size_t j = k - states;
            if (t > 0 && (v.shape != elementShape[j] || v.dtype != elementType[j])) {
                why = "scan output '" + body.results[k] + "' changes shape between iterations";
                return false;
            }
            if (t == 0) {
                elementShape[j] = v.shape;
                elementType[j] = v.dtype;
                const std::int64_t rank = std::int64_t(v.shape.size()) + 1, a = outAxes[j] < 0 ? outAxes[j] + rank : outAxes[j];
                if (a < 0 || a >= rank) {
                    why = "scan output " + std::to_string(j) + " has no axis " + std::to_string(outAxes[j]);
                    return false;
                }
                outAxis[j] = std::size_t(a);
                if (const auto* room = plannedOutput(call, k); room && room->dtype == v.dtype && !v.sequence && room->count >= length * v.count)
                    into[j] = room->data;
            }
            if (into[j])
                stackAt(into[j], v.data, v.shape, outAxis[j], length, outReverse[j] != 0 ? length - 1 - t : t, dtypeBytes(v.dtype));
            else
                produced[j].push_back(copyOf(v));
        }
        Bytes total = held;
        for (const auto& c : carried)
            total += Bytes(c.bytes.size());
        for (const auto& list : produced)
            for (const auto& e : list)
                total += Bytes(e.bytes.size());
        heldBytes = std::max(heldBytes, total);
    }
    // Scan outputs: the iterations' values stacked along their axis (from the end when reversed).
    results = std::move(carried);
    for (std::size_t j = 0; j < scanOutputs; ++j) {
        if (length == 0) {
            why = "a Scan of length 0 has no element shape for its scan outputs";
            return false;
        }
        Shape stacked = elementShape[j];
        stacked.insert(stacked.begin() + std::ptrdiff_t(outAxis[j]), length);
        if (into[j]) { // already in the op's output
            results.push_back(placedValue(elementType[j], std::move(stacked), into[j]));
            continue;
        }
        const auto& list = produced[j];
        Value out = allocate(elementType[j], stacked, elementCount(stacked));
        for (std::int64_t p = 0; p < length; ++p) {
            const Value& e = list[std::size_t(outReverse[j] != 0 ? length - 1 - p : p)];
            stackAt(out.bytes.data(), e.bytes.data(), e.shape, outAxis[j], length, p, dtypeBytes(elementType[j]));
        }
        results.push_back(std::move(out));
    }
    return true;
}

// Scan-8: input 0 the optional sequence_lens, then states and scan inputs with a leading batch
// axis (scan inputs: [batch, sequence, ...]). Each batch entry runs as a Scan-9 over its slices
// (evalScan on views into the batch entry), and its results are stacked along a new batch axis.
// Sequence lengths shorter than the scan axis, and reversed scan directions, are refused.
bool evalScan8(const Subgraphs& scan, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel, const BodyArena& arena)
{
    if (call.in.size() < 2) {
        why = "the Scan has no state or scan input";
        return false;
    }
    const auto directions = call.attrIntsOr("directions", 0, std::size_t(std::max<std::int64_t>(call.attrInt("num_scan_inputs", 0), 0)));
    if (std::any_of(directions.begin(), directions.end(), [](std::int64_t d) { return d != 0; })) {
        why = "a Scan-8 scanning in reverse is not run";
        return false;
    }
    std::int64_t batch = -1;
    for (std::size_t k = 1; k < call.in.size(); ++k) {
        const auto& x = call.in[k];
        if (!x.present() || x.rank() < 1 || (batch >= 0 && x.shape[0] != batch)) {
            why = "input " + std::to_string(k) + " has no batch axis of the common size";
            return false;
        }
        batch = x.shape[0];
    }
    if (call.has(0)) {
        const auto& lens = call.in[0];
        const std::int64_t scanInputs = call.attrInt("num_scan_inputs", 0);
        const auto& first = call.in[call.in.size() - std::size_t(std::max<std::int64_t>(scanInputs, 1))];
        for (std::int64_t b = 0; b < lens.count; ++b)
            if (first.rank() < 2 || intAt(lens, b) != first.shape[1]) {
                why = "a Scan-8 with sequence_lens shorter than its scan axis is not run";
                return false;
            }
    }
    KernelCall entry = call; // one batch entry: views past the batch axis, no sequence_lens
    entry.in.erase(entry.in.begin());
    entry.out.clear();
    entry.outSlots.clear();
    std::vector<std::vector<Value>> perEntry;
    for (std::int64_t b = 0; b < batch; ++b) {
        for (std::size_t k = 1; k < call.in.size(); ++k) {
            const auto& x = call.in[k];
            auto& v = entry.in[k - 1];
            v.shape.assign(x.shape.begin() + 1, x.shape.end());
            v.count = elementCount(v.shape);
            v.data = x.data + b * v.count * dtypeBytes(x.dtype);
        }
        std::vector<Value> one;
        if (!evalScan(scan, entry, outputs, outer, one, heldBytes, why, cancel, arena))
            return false;
        if (!perEntry.empty())
            for (std::size_t j = 0; j < one.size(); ++j)
                if (one[j].shape != perEntry.front()[j].shape || one[j].dtype != perEntry.front()[j].dtype) {
                    why = "output " + std::to_string(j) + " changes shape between batch entries";
                    return false;
                }
        perEntry.push_back(std::move(one));
    }
    if (perEntry.empty()) {
        why = "a Scan-8 with a batch of 0 has no element shape for its outputs";
        return false;
    }
    for (std::size_t j = 0; j < outputs; ++j) {
        const auto& first = perEntry.front()[j];
        Shape stacked { batch };
        stacked.insert(stacked.end(), first.shape.begin(), first.shape.end());
        Value out = allocate(first.dtype, stacked, elementCount(stacked));
        const std::size_t each = std::size_t(elementCount(first.shape) * dtypeBytes(first.dtype));
        for (std::int64_t b = 0; b < batch; ++b)
            std::memcpy(out.bytes.data() + std::size_t(b) * each, perEntry[std::size_t(b)][j].bytes.data(), each);
        results.push_back(std::move(out));
    }
    return true;
}

} // namespace core::exec::graphrun
