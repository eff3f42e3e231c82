// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/branchrun.h"

#include "exec/opcall.h"
#include "exec/runshape.h"

#include <algorithm>
#include <cstring>

namespace core::exec::graphrun {

namespace {

// The most elements a data-dependent op's output can hold, from its inputs; the call has input 0.
std::int64_t sizingRoom(const KernelCall& c)
{
    if (c.op->type == "NonZero")
        return c.in[0].rank() * c.in[0].count;
    if (c.op->type == "NonMaxSuppression")
        return c.has(1) ? 3 * c.in[1].count : 0; // every box of every class selected
    return c.in[0].count;                          // Compress, Unique
}

} // namespace

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

Value placedValue(DType dtype, Shape shape, std::byte* at)
{
    Value v;
    v.dtype = dtype;
    v.shape = std::move(shape);
    v.at = at;
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

const TensorView* plannedOutput(const KernelCall& call, std::size_t slot)
{
    for (std::size_t k = 0; k < call.out.size(); ++k)
        if ((call.outSlots.empty() ? k : std::size_t(call.outSlots[k])) == slot) {
            const auto& room = call.out[k];
            return room.dtype != DType::Undefined && room.data && room.count > 0 ? &room : nullptr;
        }
    return nullptr;
}

GraphPlace placeOf(const BodyArena& arena, const std::string& attribute)
{
    if (!arena.placed())
        return {};
    const auto it = arena.layout->graphs.find(attribute);
    if (it == arena.layout->graphs.end())
        return {};
    return GraphPlace { arena.region, &it->second, arena.notes };
}

std::byte* BranchRun::slotFor(const std::string& name, Bytes need, const char* kind)
{
    if (!m_place.layout || need <= 0)
        return nullptr;
    const auto note = [&](const std::string& why) {
        const std::string key = m_place.layout->where + ": value '" + name + "' ";
        addBodyNote(BodyArena { m_place.region, nullptr, m_place.notes }, key, key + why);
        return nullptr;
    };
    if (*kind)
        return note(std::string("is ") + kind + ": lists and optionals keep allocations of their own (kernel scratch)");
    if (const auto result = m_place.layout->outputs.find(name); result != m_place.layout->outputs.end()) {
        const TensorView* room = m_place.outputs && result->second < m_place.outputs->size() ? &(*m_place.outputs)[result->second] : nullptr;
        const bool fits = room && room->data && !room->sequence && room->count >= 0 && need <= room->count * Bytes(dtypeBytes(room->dtype));
        return fits ? room->data : nullptr;
    }
    const auto it = m_place.layout->values.find(name);
    if (it == m_place.layout->values.end() && m_place.layout->unread.count(name))
        return nullptr;
    if (it == m_place.layout->values.end())
        return note("(" + std::to_string(need) + " bytes at run time) has no buffer in the plan: an allocation of its own (kernel scratch)");
    if (need > it->second.bytes)
        return note("needs " + std::to_string(need) + " bytes at run time, its planned buffer holds " + std::to_string(it->second.bytes)
            + ": an allocation of its own (kernel scratch)");
    return m_place.region + it->second.offset;
}

Value BranchRun::hold(const std::string& name, DType dtype, Shape shape)
{
    const std::int64_t count = elementCount(shape);
    if (!isList(name) && !isOptional(name))
        if (auto* at = slotFor(name, count * dtypeBytes(dtype))) {
            Value v;
            v.dtype = dtype;
            v.shape = std::move(shape);
            v.at = at;
            return v;
        }
    return allocate(dtype, std::move(shape), count);
}

void BranchRun::settle(const std::string& name, Value& value)
{
    if (value.at || value.none || !m_place.layout)
        return;
    const Bytes need = elementCount(value.shape) * dtypeBytes(value.dtype);
    auto* at = slotFor(name, need, value.sequence || isList(name) ? "a list" : isOptional(name) ? "an optional" : "");
    if (!at)
        return;
    std::memcpy(at, value.bytes.data(), std::size_t(need));
    value.at = at;
    value.bytes = {};
}

Bytes BranchRun::bind(const std::string& name, Value value)
{
    settle(name, value);
    const Bytes own = value.ownBytes();
    m_values[name] = std::move(value);
    return own;
}

bool BranchRun::take(const std::string& name, Value& value, bool* copied)
{
    const auto it = m_values.find(name);
    if (it == m_values.end())
        return false;
    if (copied)
        *copied = it->second.at != nullptr;
    value = it->second.at ? copyOf(it->second.view()) : std::move(it->second);
    m_values.erase(it);
    return true;
}

bool BranchRun::find(const std::string& name, TensorView& view)
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

bool BranchRun::run(std::size_t i, std::string& why)
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
        BodyArena arena;
        if (m_place.layout)
            if (const auto inner = m_place.layout->ops.find(i); inner != m_place.layout->ops.end())
                arena = BodyArena { m_place.region + inner->second->offset, inner->second.get(), m_place.notes };
        if (!evaluate(*graphs->second, call, outNames.size(), here, results, inner, why, m_cancel, arena)) {
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
        results.back().sequence = isList(outNames[0]);
        call.out[0] = results.back().view();
        Shape shape;
        std::vector<Shape> items;
        std::string nothing;
        ok = runOptionalOp(call, shape, items, results.back().none, nothing);
        if (!ok && !nothing.empty()) {
            why = op.type + " '" + op.name + "': " + nothing;
            return false;
        }
        results.back().shape = shape; // { 0 } when it holds nothing
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
            results.back().sequence = isList(outNames[k]);
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
            results.push_back(hold(outNames[k], types[k], shapes[k]));
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
        // A refused index is reported, not raised: a graph's values may come from synthetic kernels.
        const auto fault = takeDataFault();
        why = op.type + " '" + op.name + "': " + (fault.why.empty() ? "no exact kernel for this call" : fault.why);
        return false;
    }
    // What the op wrote into allocations of its own was held while it ran; what fits its slot moves there.
    Bytes written = 0;
    for (const auto& r : results)
        written += r.ownBytes();
    m_heldBytes = std::max(m_heldBytes, m_held + written);
    for (std::size_t k = 0; k < outNames.size(); ++k) {
        settle(outNames[k], results[k]);
        m_held += results[k].ownBytes();
        m_written += results[k].ownBytes() + (results[k].at ? elementCount(results[k].shape) * dtypeBytes(results[k].dtype) : 0);
        m_values[outNames[k]] = std::move(results[k]);
    }
    return true;
}

bool BranchRun::appendInPlace(std::size_t i)
{
    const Op& op = m_branch.ops[i];
    const auto& inNames = m_branch.inputs[i];
    const auto& outNames = m_branch.outputs[i];
    if (!op.domain.empty() || op.type != "SequenceInsert" || inNames.size() != 2 || outNames.size() != 1 || inNames[0] == inNames[1]
        || inNames[1].empty() || !m_branch.sequences.count(outNames[0]))
        return false;
    const auto it = m_values.find(inNames[0]);
    if (it == m_values.end() || !it->second.sequence || it->second.none || it->second.at || it->second.items.size() >= kMostListItems)
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
    m_written += added;
    m_heldBytes = std::max(m_heldBytes, m_held);
    m_values[outNames[0]] = std::move(list);
    return true;
}

bool BranchRun::touchesOptional(const std::vector<std::string>& inNames, const std::vector<std::string>& outNames) const
{
    const auto optional = [&](const std::string& n) { return m_branch.optionals.count(n) > 0; };
    return std::any_of(inNames.begin(), inNames.end(), optional) || std::any_of(outNames.begin(), outNames.end(), optional);
}

bool BranchRun::touchesSequence(const KernelCall& call, const std::vector<std::string>& outNames) const
{
    return std::any_of(call.in.begin(), call.in.end(), [](const TensorView& v) { return v.sequence; })
        || std::any_of(outNames.begin(), outNames.end(), [&](const std::string& n) { return m_branch.sequences.count(n) > 0; });
}

bool BranchRun::runAll(std::string& why)
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

} // namespace core::exec::graphrun
