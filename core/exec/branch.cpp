// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/branch.h"

#include "exec/runshape.h"

#include <algorithm>
#include <cstring>

namespace core::exec {

namespace {

// A value the branch computed: its own allocation (never empty, so a 0-element value is present).
struct Value {
    DType dtype = DType::Undefined;
    Shape shape;
    std::vector<std::byte> bytes;
    TensorView view()
    {
        TensorView v;
        v.dtype = dtype;
        v.shape = shape;
        v.count = elementCount(shape);
        v.data = bytes.data();
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

// The most elements a data-dependent op's output can hold, from its inputs.
std::int64_t sizingRoom(const KernelCall& c)
{
    if (c.op->type == "NonZero")
        return c.in[0].rank() * c.in[0].count;
    if (c.op->type == "NonMaxSuppression")
        return c.has(1) ? 3 * c.in[1].count : 0; // every box of every class selected
    return c.in[0].count;                          // Compress, Unique
}

// ConstantOfShape: `fill` (one element) everywhere, float 0 without one.
bool fillConstant(const TensorView& y, const HostTensor* fill)
{
    const Bytes w = dtypeBytes(y.dtype);
    if (!fill) {
        if (y.dtype != DType::Float32)
            return false;
        std::fill(y.f32(), y.f32() + y.count, 0.0f);
        return true;
    }
    if (fill->dtype != y.dtype || Bytes(fill->data.size()) != w)
        return false;
    for (std::int64_t i = 0; i < y.count; ++i)
        std::memcpy(y.data + i * w, fill->data.data(), std::size_t(w));
    return true;
}

class BranchRun {
public:
    BranchRun(const Branch& branch, const OuterLookup& outer, Bytes& heldBytes)
        : m_branch(branch), m_outer(outer), m_heldBytes(heldBytes)
    {
    }

    bool find(const std::string& name, TensorView& view)
    {
        if (auto it = m_values.find(name); it != m_values.end()) {
            view = it->second.view();
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
        std::vector<DType> types;
        for (const auto& name : outNames) {
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
        if (const auto sizing = findSizingKernel(op.type)) {
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
        } else if (runtimeShapes(call, shapes)) {
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
            } else if (const auto kernel = op.domain.empty() ? findKernel(op.type) : nullptr)
                ok = kernel(call);
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

private:
    const Branch& m_branch;
    const OuterLookup& m_outer;
    Bytes& m_heldBytes;
    Bytes m_held = 0;
    std::map<std::string, Value> m_values;
    std::int64_t m_empty = 0;
};

} // namespace

bool runIf(const IfBranches& branches, const KernelCall& call, const std::vector<bool>& bounded, const OuterLookup& outer,
    std::vector<Shape>& shapes, Bytes& heldBytes, std::string& why)
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
    if (branch.results.size() != call.out.size() || bounded.size() != call.out.size()) {
        why = "the branch returns " + std::to_string(branch.results.size()) + " values for " + std::to_string(call.out.size()) + " outputs";
        return false;
    }
    BranchRun run(branch, outer, heldBytes);
    for (std::size_t i = 0; i < branch.ops.size(); ++i)
        if (branch.ops[i].type != "Constant" && !run.run(i, why))
            return false;
    std::vector<TensorView> results(call.out.size());
    for (std::size_t k = 0; k < call.out.size(); ++k) {
        auto& r = results[k];
        if (!run.find(branch.results[k], r)) {
            why = "the branch result '" + branch.results[k] + "' was not computed";
            return false;
        }
        const auto& room = call.out[k];
        if (r.dtype != room.dtype || (bounded[k] ? r.count > room.count : r.count != room.count)) {
            why = "the branch result '" + branch.results[k] + "' (" + std::string(dtypeName(r.dtype)) + ", "
                + std::to_string(r.count) + " elements) does not fit the planned room of " + std::to_string(room.count);
            return false;
        }
    }
    shapes.clear();
    for (std::size_t k = 0; k < call.out.size(); ++k) {
        if (results[k].count > 0)
            std::memcpy(call.out[k].data, results[k].data, std::size_t(results[k].bytes()));
        shapes.push_back(results[k].shape);
    }
    return true;
}

} // namespace core::exec
