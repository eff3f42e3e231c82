// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/branch.h"

#include "exec/opcall.h"
#include "exec/runshape.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

namespace core::exec {

namespace {

// A value the branch computed: its own allocation (never empty, so a 0-element value is present).
struct Value {
    DType dtype = DType::Undefined;
    Shape shape;
    std::vector<std::byte> bytes;
    bool sequence = false;
    std::vector<Shape> items; // a sequence's element shapes (shape: { total elements })
    bool none = false;        // an optional holding nothing (shape { 0 }): its view has no data
    TensorView view()
    {
        TensorView v;
        v.dtype = dtype;
        v.shape = shape;
        v.count = elementCount(shape);
        v.data = none ? nullptr : bytes.data();
        v.sequence = sequence;
        v.items = items;
        return v;
    }
};

Value allocate(DType dtype, Shape shape, std::int64_t room)
{
    Value v;
    v.dtype = dtype;
    v.shape = std::move(shape);
    v.bytes.resize(std::size_t(std::max<Bytes>(room * dtypeBytes(dtype), 8)));
    return v;
}

// An optional holding nothing.
Value noneValue(DType dtype, bool sequence)
{
    Value v;
    v.dtype = dtype;
    v.shape = { 0 };
    v.sequence = sequence;
    v.none = true;
    return v;
}

// A copy of a view's elements as a value of its own; a view without data is an optional holding nothing.
Value copyOf(const TensorView& v)
{
    if (!v.present())
        return noneValue(v.dtype, v.sequence);
    Value c = allocate(v.dtype, v.shape, v.count);
    c.sequence = v.sequence;
    c.items = v.items;
    if (v.count > 0)
        std::memcpy(c.bytes.data(), v.data, std::size_t(v.bytes()));
    return c;
}

// The most elements a data-dependent op's output can hold, from its inputs; the call has input 0.
std::int64_t sizingRoom(const KernelCall& c)
{
    if (c.op->type == "NonZero")
        return c.in[0].rank() * c.in[0].count;
    if (c.op->type == "NonMaxSuppression")
        return c.has(1) ? 3 * c.in[1].count : 0; // every box of every class selected
    return c.in[0].count;                          // Compress, Unique
}

// Runs control-flow op call.op on its graphs: `outputs` values, each its own allocation.
bool evaluate(const Subgraphs& graphs, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel);

class BranchRun {
public:
    BranchRun(const Branch& branch, const OuterLookup& outer, Bytes& heldBytes, const CancelToken& cancel)
        : m_branch(branch), m_outer(outer), m_heldBytes(heldBytes), m_cancel(cancel)
    {
    }

    // A formal input's value for this run of the graph.
    void bind(const std::string& name, Value value) { m_values[name] = std::move(value); }
    // A formal input this run reads in place, from memory that outlives it (SequenceMap's tensor
    // inputs and list elements): kernels never write their inputs, and a result that names it is copied.
    void lend(const std::string& name, const TensorView& view) { m_lent[name] = view; }

    // Moves out the value `name` holds in this run (a formal's or an op's result); false when the
    // run holds none of that name (a constant, an outer value).
    bool take(const std::string& name, Value& value)
    {
        const auto it = m_values.find(name);
        if (it == m_values.end())
            return false;
        value = std::move(it->second);
        m_values.erase(it);
        return true;
    }

    // The bytes the values this run computed hold (the formals bound to it not counted).
    Bytes heldNow() const { return m_held; }

    bool find(const std::string& name, TensorView& view)
    {
        if (auto it = m_values.find(name); it != m_values.end()) {
            view = it->second.view();
            return true;
        }
        if (auto it = m_lent.find(name); it != m_lent.end()) {
            view = it->second;
            return true;
        }
        if (auto it = m_branch.constants.find(name); it != m_branch.constants.end()) {
            auto& h = const_cast<HostTensor&>(it->second); // read only: kernels never write inputs
            view.dtype = h.dtype;
            view.shape = h.shape;
            view.count = elementCount(h.shape);
            view.data = h.data.empty() ? reinterpret_cast<std::byte*>(&m_empty) : h.data.data();
            return true;
        }
        return m_outer(name, view);
    }

    // Runs op i; false with `why` set when it cannot run exactly.
    bool run(std::size_t i, std::string& why)
    {
        const Op& op = m_branch.ops[i];
        if (appendInPlace(i))
            return true;
        KernelCall call;
        call.op = &op;
        const auto& inNames = m_branch.inputs[i];
        call.in.resize(inNames.size());
        for (std::size_t k = 0; k < inNames.size(); ++k)
            if (!inNames[k].empty() && !find(inNames[k], call.in[k])) {
                why = op.type + " '" + op.name + "' reads '" + inNames[k] + "', which the branch cannot see";
                return false;
            }
        std::vector<std::string> outNames;
        for (std::size_t k = 0; k < m_branch.outputs[i].size(); ++k)
            if (!m_branch.outputs[i][k].empty()) {
                outNames.push_back(m_branch.outputs[i][k]);
                call.outSlots.push_back(int(k));
            }
        std::vector<DType> types; // of each output; a nested If, Loop or Scan's come from its results
        for (const auto& name : outNames) {
            if (m_branch.nested.count(i))
                break;
            const auto t = m_branch.types.find(name);
            if (t == m_branch.types.end() || dtypeBytes(t->second) <= 0) {
                why = op.type + " '" + op.name + "': no element type for '" + name + "'";
                return false;
            }
            types.push_back(t->second);
        }
        call.out.resize(outNames.size());
        std::vector<Value> results;
        std::vector<Shape> shapes;
        bool ok = false;
        if (const auto graphs = m_branch.nested.find(i); graphs != m_branch.nested.end()) {
            const OuterLookup here = [this](const std::string& name, TensorView& view) { return find(name, view); };
            Bytes inner = 0;
            if (!evaluate(*graphs->second, call, outNames.size(), here, results, inner, why, m_cancel)) {
                why = op.type + " '" + op.name + "': " + why;
                return false;
            }
            m_heldBytes = std::max(m_heldBytes, m_held + inner);
            ok = true;
        } else if (op.domain.empty() && isOptionalOp(op.type, touchesOptional(inNames, outNames))) {
            if (outNames.size() != 1) {
                why = op.type + " '" + op.name + "': not one output";
                return false;
            }
            const std::int64_t room = op.type == "OptionalHasElement" ? 1 : call.has(0) ? call.in[0].count : 0;
            results.push_back(allocate(types[0], { room }, room));
            results.back().sequence = m_branch.sequences.count(outNames[0]) > 0;
            call.out[0] = results.back().view();
            Shape shape;
            std::vector<Shape> items;
            std::string nothing;
            ok = runOptionalOp(call, shape, items, results.back().none, nothing);
            if (!ok && !nothing.empty()) {
                why = op.type + " '" + op.name + "': " + nothing;
                return false;
            }
            results.back().shape = results.back().none ? Shape { 0 } : shape;
            results.back().items = std::move(items);
        } else if (!call.has(0) && !call.in.empty()) {
            // As at the top level (prepareOp): kernels and shape rules read input 0; only a
            // sequence op (SequenceEmpty) may read nothing.
            why = op.type + " '" + op.name + "': its first input is missing";
            return false;
        } else if (const auto sequenceKernel = op.domain.empty() ? findSequenceKernel(op.type, touchesSequence(call, outNames)) : nullptr) {
            std::int64_t room = 0; // a sequence op holds at most what it reads
            for (const auto& x : call.in)
                room += x.present() ? x.count : 0;
            for (std::size_t k = 0; k < outNames.size(); ++k) {
                results.push_back(allocate(types[k], { room }, room));
                results.back().sequence = m_branch.sequences.count(outNames[k]) > 0;
                call.out[k] = results.back().view();
            }
            std::vector<std::vector<Shape>> items;
            ok = sequenceKernel(call, shapes, items) && shapes.size() == results.size() && items.size() == results.size();
            for (std::size_t k = 0; ok && k < results.size(); ++k) {
                results[k].shape = shapes[k];
                results[k].items = std::move(items[k]);
            }
        } else if (const auto sizing = call.has(0) ? findSizingKernel(op.type) : nullptr) {
            const std::int64_t room = sizingRoom(call);
            for (std::size_t k = 0; k < outNames.size(); ++k) {
                results.push_back(allocate(types[k], { room }, room));
                call.out[k] = results.back().view();
            }
            ok = sizing(call, shapes) && shapes.size() == results.size();
            for (std::size_t k = 0; ok && k < results.size(); ++k) {
                ok = elementCount(shapes[k]) >= 0 && elementCount(shapes[k]) <= room;
                results[k].shape = shapes[k];
            }
        } else if (call.has(0) && runtimeShapes(call, shapes)) {
            bool empty = true;
            for (std::size_t k = 0; k < outNames.size(); ++k) {
                results.push_back(allocate(types[k], shapes[k], elementCount(shapes[k])));
                call.out[k] = results.back().view();
                empty = empty && call.out[k].count == 0;
            }
            if (empty)
                ok = true;
            else if (op.type == "ConstantOfShape" && op.domain.empty()) {
                const auto fill = m_branch.fills.find(i);
                ok = fillConstant(call.out[0], fill == m_branch.fills.end() ? nullptr : &fill->second);
            } else if (const auto kernel = findKernel(op.domain, op.type))
                ok = runKernel(kernel, call);
        } else {
            why = op.type + " '" + op.name + "': no run-time shape rule";
            return false;
        }
        if (!ok) {
            why = op.type + " '" + op.name + "': no exact kernel for this call";
            return false;
        }
        for (std::size_t k = 0; k < outNames.size(); ++k) {
            m_held += Bytes(results[k].bytes.size());
            m_values[outNames[k]] = std::move(results[k]);
        }
        m_heldBytes = std::max(m_heldBytes, m_held);
        return true;
    }

    // SequenceInsert at the end of a list that only this op reads (the list a Loop body builds, one
    // item per iteration): the list grows in place, so a loop appending n items copies O(n) bytes
    // instead of O(n^2), and counts as written only what it adds. False when the call is not such an
    // append (a later op or nested graph may read the list, the op names a position, the types
    // differ, the list is full): the sequence kernel then writes a new list, or refuses.
    // Decided before the list is viewed: a view copies its item shapes.
    bool appendInPlace(std::size_t i)
    {
        const Op& op = m_branch.ops[i];
        const auto& inNames = m_branch.inputs[i];
        const auto& outNames = m_branch.outputs[i];
        if (!op.domain.empty() || op.type != "SequenceInsert" || inNames.size() != 2 || outNames.size() != 1 || inNames[0] == inNames[1]
            || inNames[1].empty() || !m_branch.sequences.count(outNames[0]))
            return false;
        const auto it = m_values.find(inNames[0]);
        if (it == m_values.end() || !it->second.sequence || it->second.none || it->second.items.size() >= kMostListItems)
            return false;
        TensorView x;
        if (!find(inNames[1], x) || !x.present() || x.sequence || x.dtype != it->second.dtype || dtypeBytes(x.dtype) <= 0)
            return false;
        if (std::find(m_branch.results.begin(), m_branch.results.end(), inNames[0]) != m_branch.results.end())
            return false;
        for (std::size_t j = i + 1; j < m_branch.ops.size(); ++j)
            if (m_branch.nested.count(j) || std::find(m_branch.inputs[j].begin(), m_branch.inputs[j].end(), inNames[0]) != m_branch.inputs[j].end())
                return false; // read later (a nested graph reads outer values by name)
        Value list = std::move(it->second);
        m_values.erase(it);
        const Bytes w = dtypeBytes(x.dtype), used = elementCount(list.shape) * w, added = x.count * w;
        list.bytes.resize(std::size_t(std::max<Bytes>(used + added, 8))); // never empty: a value with no data holds nothing
        if (added > 0)
            std::memcpy(list.bytes.data() + used, x.data, std::size_t(added));
        list.items.push_back(x.shape);
        list.shape = { elementCount(list.shape) + x.count };
        m_held += added;
        m_heldBytes = std::max(m_heldBytes, m_held);
        m_values[outNames[0]] = std::move(list);
        return true;
    }

    // Whether the call reads an optional (`inNames`) or writes one (`outNames`).
    bool touchesOptional(const std::vector<std::string>& inNames, const std::vector<std::string>& outNames) const
    {
        const auto optional = [&](const std::string& n) { return m_branch.optionals.count(n) > 0; };
        return std::any_of(inNames.begin(), inNames.end(), optional) || std::any_of(outNames.begin(), outNames.end(), optional);
    }

    // Whether the call reads a sequence or writes one (`outNames`).
    bool touchesSequence(const KernelCall& call, const std::vector<std::string>& outNames) const
    {
        return std::any_of(call.in.begin(), call.in.end(), [](const TensorView& v) { return v.sequence; })
            || std::any_of(outNames.begin(), outNames.end(), [&](const std::string& n) { return m_branch.sequences.count(n) > 0; });
    }

    bool runAll(std::string& why)
    {
        for (std::size_t i = 0; i < m_branch.ops.size(); ++i) {
            if (m_cancel.isCancelled()) {
                why = "the run was cancelled";
                return false;
            }
            if (m_branch.ops[i].type != "Constant" && !run(i, why))
                return false;
        }
        return true;
    }

private:
    const Branch& m_branch;
    const OuterLookup& m_outer;
    Bytes& m_heldBytes;
    const CancelToken& m_cancel;
    Bytes m_held = 0;
    std::map<std::string, Value> m_values;
    std::map<std::string, TensorView> m_lent;
    std::int64_t m_empty = 0;
};

bool evalIf(const Subgraphs& branches, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel)
{
    if (!call.has(0) || call.in[0].count != 1 || call.in[0].dtype != DType::Bool) {
        why = "the condition is not one bool";
        return false;
    }
    const Branch& branch = call.in[0].data[0] != std::byte { 0 } ? branches.then : branches.otherwise;
    if (!branch.unsupported.empty()) {
        why = branch.unsupported;
        return false;
    }
    if (branch.results.size() != outputs) {
        why = "the branch returns " + std::to_string(branch.results.size()) + " values for " + std::to_string(outputs) + " outputs";
        return false;
    }
    BranchRun run(branch, outer, heldBytes, cancel);
    if (!run.runAll(why))
        return false;
    for (const auto& name : branch.results) {
        TensorView r;
        if (!run.find(name, r)) {
            why = "the branch result '" + name + "' was not computed";
            return false;
        }
        results.push_back(copyOf(r));
    }
    return true;
}

// The bytes the plan gives output `slot` of `call` (a sequence's: its elements'), or -1 when the
// call holds no room for it (a nested op's outputs are allocated once it has run: their views are
// blank). A planned output with no bytes (nothing in the arena: the plan expects it empty) has a
// room of 0.
Bytes plannedRoom(const KernelCall& call, std::size_t slot)
{
    for (std::size_t k = 0; k < call.out.size(); ++k)
        if ((call.outSlots.empty() ? k : std::size_t(call.outSlots[k])) == slot) {
            const auto& room = call.out[k];
            return room.dtype == DType::Undefined ? -1 : std::max<std::int64_t>(room.count, 0) * dtypeBytes(room.dtype);
        }
    return -1;
}

bool evalLoop(const Subgraphs& loop, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel)
{
    const Branch& body = loop.body;
    if (!body.unsupported.empty()) {
        why = body.unsupported;
        return false;
    }
    const std::size_t carriedCount = call.in.size() > 2 ? call.in.size() - 2 : 0;
    if (body.formals.size() != 2 + carriedCount || body.results.size() < 1 + carriedCount || outputs != body.results.size() - 1) {
        why = "the body's inputs and outputs do not match the Loop's";
        return false;
    }
    const std::size_t scans = body.results.size() - 1 - carriedCount;
    std::int64_t trips = kMaxLoopIterations;
    if (call.has(0)) {
        if (call.in[0].count != 1) {
            why = "the trip count is not one integer";
            return false;
        }
        trips = intAt(call.in[0], 0);
    }
    bool keepGoing = true;
    if (call.has(1)) {
        if (call.in[1].count != 1 || call.in[1].dtype != DType::Bool) {
            why = "the condition is not one bool";
            return false;
        }
        keepGoing = call.in[1].data[0] != std::byte { 0 };
    }
    std::vector<Value> carried;
    for (std::size_t k = 0; k < carriedCount; ++k) {
        // Without data: an optional holding nothing, which only an optional formal may take.
        if (!call.has(2 + k) && !body.optionals.count(body.formals[2 + k])) {
            why = "a carried value is left out";
            return false;
        }
        carried.push_back(copyOf(call.in[2 + k]));
    }
    std::vector<std::vector<std::byte>> scanBytes(scans);
    std::vector<Shape> scanShape(scans);
    std::vector<DType> scanType(scans, DType::Undefined);
    for (std::size_t k = 0; k < scans; ++k)
        if (const auto t = body.types.find(body.results[1 + carriedCount + k]); t != body.types.end())
            scanType[k] = t->second; // the type of a scan output no iteration produced
    std::int64_t done = 0;
    Bytes written = 0; // by the body, over all iterations
    for (; done < trips && keepGoing; ++done) {
        if (done == kMaxLoopIterations) {
            why = "more than " + std::to_string(kMaxLoopIterations) + " iterations";
            return false;
        }
        Bytes held = 0;
        BranchRun run(body, outer, held, cancel);
        Value iteration = allocate(DType::Int64, {}, 1);
        std::memcpy(iteration.bytes.data(), &done, sizeof done);
        Value condition = allocate(DType::Bool, {}, 1);
        condition.bytes[0] = std::byte { 1 };
        run.bind(body.formals[0], std::move(iteration));
        run.bind(body.formals[1], std::move(condition));
        Bytes entering = 0; // the carried values, held by the run while it runs
        for (std::size_t k = 0; k < carriedCount; ++k) {
            entering += Bytes(carried[k].bytes.size());
            run.bind(body.formals[2 + k], std::move(carried[k]));
        }
        if (!run.runAll(why))
            return false;
        TensorView v;
        if (!run.find(body.results[0], v) || v.count != 1 || v.dtype != DType::Bool) {
            why = "the body's condition is not one bool";
            return false;
        }
        keepGoing = v.data[0] != std::byte { 0 };
        // Scan slices are read first: carried results are then moved out of the run (a result
        // named twice, or read from outside the body, is copied).
        for (std::size_t k = 0; k < scans; ++k) {
            if (!run.find(body.results[1 + carriedCount + k], v)) {
                why = "the body's result '" + body.results[1 + carriedCount + k] + "' was not computed";
                return false;
            }
            if (done > 0 && (v.shape != scanShape[k] || v.dtype != scanType[k])) {
                why = "scan output '" + body.results[1 + carriedCount + k] + "' changes shape between iterations";
                return false;
            }
            scanShape[k] = v.shape;
            scanType[k] = v.dtype;
            scanBytes[k].insert(scanBytes[k].end(), v.data, v.data + v.bytes());
        }
        for (std::size_t k = 0; k < carriedCount; ++k) {
            const auto& name = body.results[1 + k];
            const bool namedAgain = std::find(body.results.begin() + 2 + std::ptrdiff_t(k), body.results.begin() + 1 + std::ptrdiff_t(carriedCount), name)
                != body.results.begin() + 1 + std::ptrdiff_t(carriedCount);
            if (!namedAgain && run.take(name, carried[k]))
                continue;
            if (!run.find(name, v)) {
                why = "the body's result '" + name + "' was not computed";
                return false;
            }
            carried[k] = copyOf(v);
        }
        Bytes total = held + entering; // the carried results are among the values the run held
        for (const auto& b : scanBytes)
            total += Bytes(b.size());
        heldBytes = std::max(heldBytes, total);
        // A result that outgrew its planned room cannot fit it at the end: a scan output only grows,
        // and so, in practice, does a carried one (a tensor a Loop with no trip count concatenates
        // to would otherwise grow for kMaxLoopIterations iterations, quadratic in time).
        for (std::size_t j = 0; j < outputs; ++j) {
            const Bytes room = plannedRoom(call, j);
            const bool isCarried = j < carriedCount;
            if (room < 0)
                continue;
            // A sequence's shape is { its elements }, so it is measured as a tensor is.
            const Bytes size = isCarried ? elementCount(carried[j].shape) * dtypeBytes(carried[j].dtype) : Bytes(scanBytes[j - carriedCount].size());
            if (size > room) {
                why = "output " + std::to_string(j) + " ('" + body.results[1 + j] + "') outgrew the room the plan gives it ("
                    + std::to_string(room) + " bytes) in iteration " + std::to_string(done + 1);
                return false;
            }
        }
        written += run.heldNow();
        if (written > kMostLoopBytes) {
            why = "its body wrote more than " + std::to_string(kMostLoopBytes >> 30) + " GiB in all by iteration " + std::to_string(done + 1)
                + " (the most a Loop's iterations may write)";
            return false;
        }
    }
    results = std::move(carried);
    for (std::size_t k = 0; k < scans; ++k) {
        Shape stacked { done };
        stacked.insert(stacked.end(), scanShape[k].begin(), scanShape[k].end());
        Value v = allocate(scanType[k], std::move(stacked), 0);
        if (scanBytes[k].size() > v.bytes.size())
            v.bytes = std::move(scanBytes[k]);
        else
            std::copy(scanBytes[k].begin(), scanBytes[k].end(), v.bytes.begin());
        results.push_back(std::move(v));
    }
    return true;
}

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

bool evalScan(const Subgraphs& scan, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel)
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
    for (std::int64_t t = 0; t < length; ++t) {
        Bytes held = 0;
        BranchRun run(body, outer, held, cancel);
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
            auto& list = produced[k - states];
            if (!list.empty() && (v.shape != list.front().shape || v.dtype != list.front().dtype)) {
                why = "scan output '" + body.results[k] + "' changes shape between iterations";
                return false;
            }
            list.push_back(copyOf(v));
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
        const auto& list = produced[j];
        if (list.empty()) {
            why = "a Scan of length 0 has no element shape for its scan outputs";
            return false;
        }
        const Shape& element = list.front().shape;
        const std::int64_t rank = std::int64_t(element.size()) + 1, a = outAxes[j] < 0 ? outAxes[j] + rank : outAxes[j];
        if (a < 0 || a >= rank) {
            why = "scan output " + std::to_string(j) + " has no axis " + std::to_string(outAxes[j]);
            return false;
        }
        Shape stacked = element;
        stacked.insert(stacked.begin() + a, length);
        const auto split = splitAt(stacked, std::size_t(a));
        const DType dtype = list.front().dtype;
        const std::int64_t w = dtypeBytes(dtype);
        Value out = allocate(dtype, stacked, elementCount(stacked));
        for (std::int64_t p = 0; p < length; ++p) {
            const Value& e = list[std::size_t(outReverse[j] != 0 ? length - 1 - p : p)];
            for (std::int64_t o = 0; o < split.outer; ++o)
                std::memcpy(out.bytes.data() + ((o * length + p) * split.inner) * w, e.bytes.data() + o * split.inner * w,
                    std::size_t(split.inner * w));
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
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel)
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
        if (!evalScan(scan, entry, outputs, outer, one, heldBytes, why, cancel))
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

bool evalSequenceMap(const Subgraphs& map, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel)
{
    const Branch& body = map.body;
    if (!body.unsupported.empty()) {
        why = body.unsupported;
        return false;
    }
    if (body.formals.size() != call.in.size() || body.results.size() != outputs) {
        why = "the body's inputs and outputs do not match the SequenceMap's";
        return false;
    }
    if (call.in.empty() || !call.has(0) || !call.in[0].sequence) {
        why = "input 0 is not a sequence";
        return false;
    }
    const auto length = std::int64_t(call.in[0].items.size());
    // Where each element of each sequence input starts, in bytes (elements lie packed in order).
    std::vector<std::vector<std::int64_t>> starts(call.in.size());
    for (std::size_t k = 0; k < call.in.size(); ++k) {
        const auto& x = call.in[k];
        if (!call.has(k)) {
            why = "input " + std::to_string(k) + " is left out";
            return false;
        }
        if (!x.sequence)
            continue;
        if (std::int64_t(x.items.size()) != length) {
            why = "input " + std::to_string(k) + " holds " + std::to_string(x.items.size()) + " elements, input 0 "
                + std::to_string(length);
            return false;
        }
        starts[k] = itemOffsets(x);
        std::int64_t elements = 0;
        for (const auto& item : x.items)
            elements += elementCount(item);
        if (elements != x.count) {
            why = "input " + std::to_string(k) + "'s element shapes do not add up to its elements";
            return false;
        }
    }
    std::vector<Value> lists(outputs);
    for (std::size_t j = 0; j < outputs; ++j) {
        lists[j].sequence = true;
        if (const auto t = body.types.find(body.results[j]); t != body.types.end())
            lists[j].dtype = t->second; // the type of a list no iteration added to
    }
    for (std::int64_t i = 0; i < length; ++i) {
        Bytes held = 0;
        BranchRun run(body, outer, held, cancel);
        for (std::size_t k = 0; k < call.in.size(); ++k) {
            const auto& x = call.in[k];
            if (!x.sequence) {
                run.lend(body.formals[k], x); // a tensor input, whole
                continue;
            }
            TensorView element; // element i of the list, read where the list holds it
            element.dtype = x.dtype;
            element.shape = x.items[std::size_t(i)];
            element.count = elementCount(element.shape);
            element.data = x.data + starts[k][std::size_t(i)];
            run.lend(body.formals[k], element);
        }
        if (!run.runAll(why))
            return false;
        Bytes total = held;
        for (std::size_t j = 0; j < outputs; ++j) {
            TensorView v;
            if (!run.find(body.results[j], v)) {
                why = "the body's result '" + body.results[j] + "' was not computed";
                return false;
            }
            if (v.sequence) {
                why = "the body's result '" + body.results[j] + "' is a sequence, not one element";
                return false;
            }
            auto& list = lists[j];
            if (i > 0 && v.dtype != list.dtype) {
                why = "the body's result '" + body.results[j] + "' changes type between elements";
                return false;
            }
            list.dtype = v.dtype;
            list.items.push_back(v.shape);
            list.bytes.insert(list.bytes.end(), v.data, v.data + v.bytes());
            total += Bytes(list.bytes.size());
            const Bytes room = plannedRoom(call, j);
            if (room >= 0 && Bytes(list.bytes.size()) > room) {
                why = "output " + std::to_string(j) + " ('" + body.results[j] + "') outgrew the room the plan gives it ("
                    + std::to_string(room) + " bytes) at element " + std::to_string(i);
                return false;
            }
        }
        heldBytes = std::max(heldBytes, total);
    }
    for (auto& list : lists) {
        std::int64_t count = 0;
        for (const auto& item : list.items)
            count += elementCount(item);
        list.shape = { count };
        if (list.bytes.empty())
            list.bytes.resize(8); // never empty: an empty list is present
    }
    results = std::move(lists);
    return true;
}

bool evaluate(const Subgraphs& graphs, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel)
{
    results.clear();
    const std::string& type = call.op->type;
    if (type == "If")
        return evalIf(graphs, call, outputs, outer, results, heldBytes, why, cancel);
    if (type == "Loop")
        return evalLoop(graphs, call, outputs, outer, results, heldBytes, why, cancel);
    if (type == "Scan" && graphs.body.formals.size() + 1 == call.in.size())
        return evalScan8(graphs, call, outputs, outer, results, heldBytes, why, cancel);
    if (type == "Scan")
        return evalScan(graphs, call, outputs, outer, results, heldBytes, why, cancel);
    if (type == "SequenceMap")
        return evalSequenceMap(graphs, call, outputs, outer, results, heldBytes, why, cancel);
    why = type + " has no graphs to run";
    return false;
}

} // namespace

bool runsGraphs(const std::string& type)
{
    return type == "If" || type == "Loop" || type == "Scan" || type == "SequenceMap";
}

bool runControlFlow(const Subgraphs& graphs, const KernelCall& call, const std::vector<bool>& bounded, const OuterLookup& outer,
    std::vector<Shape>& shapes, std::vector<std::vector<Shape>>& items, std::vector<bool>& none, Bytes& heldBytes, std::string& why,
    const CancelToken& cancel)
{
    std::vector<Value> results;
    // The values inside are host allocations of run-time sizes, which a shape argument can make as
    // large as it likes (a Resize to 2^40 pixels).
    const auto tooLarge = [&] {
        why = "a value inside the " + call.op->type + "'s graph is larger than the host can allocate";
        return false;
    };
    try {
        if (bounded.size() != call.out.size() || !evaluate(graphs, call, call.out.size(), outer, results, heldBytes, why, cancel))
            return false;
    } catch (const std::bad_alloc&) {
        return tooLarge();
    } catch (const std::length_error&) {
        return tooLarge();
    }
    // Every result must fit its planned room before any is written.
    for (std::size_t k = 0; k < call.out.size(); ++k) {
        if (results[k].none)
            continue; // nothing to write (whether its output may hold nothing is the caller's to check)
        const auto r = results[k].view();
        const auto& room = call.out[k];
        if (r.sequence != room.sequence) {
            why = "the " + call.op->type + "'s output " + std::to_string(k) + (r.sequence ? " is a sequence, its room a tensor" : " is a tensor, its room a sequence");
            return false;
        }
        if (r.dtype != room.dtype || (bounded[k] ? r.count > room.count : r.count != room.count)) {
            why = "the " + call.op->type + "'s output " + std::to_string(k) + " (" + std::string(dtypeName(r.dtype)) + ", "
                + std::to_string(r.count) + " elements) does not fit the planned room of " + std::to_string(room.count);
            return false;
        }
    }
    shapes.clear();
    items.clear();
    none.clear();
    for (std::size_t k = 0; k < call.out.size(); ++k) {
        const auto r = results[k].view();
        if (r.count > 0 && !results[k].none)
            std::memcpy(call.out[k].data, r.data, std::size_t(r.bytes()));
        shapes.push_back(r.shape);
        items.push_back(r.items);
        none.push_back(results[k].none);
    }
    return true;
}

} // namespace core::exec
