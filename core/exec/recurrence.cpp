// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/recurrence.h"

namespace core::exec {

namespace {

bool activationByName(const std::string& name, RecurrentActivation& a)
{
    if (name == "Sigmoid")
        a = RecurrentActivation::Sigmoid;
    else if (name == "Tanh")
        a = RecurrentActivation::Tanh;
    else if (name == "Relu")
        a = RecurrentActivation::Relu;
    else
        return false;
    return true;
}

} // namespace

bool recurrence(const KernelCall& c, Cell cell, Recurrence& r)
{
    r.cell = cell;
    r.gates = cell == Cell::Lstm ? 4 : cell == Cell::Gru ? 3 : 1;
    const auto direction = c.attrText("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
        return false;
    r.dirs = direction == "bidirectional" ? 2 : 1;
    r.reverseOnly = direction == "reverse";
    r.batchFirst = c.attrInt("layout", 0) != 0;
    r.linearBeforeReset = c.attrInt("linear_before_reset", 0) != 0;
    r.clip = c.attrFloat("clip", 0.0f);
    if (c.attrInt("input_forget", 0) != 0 || r.clip < 0)
        return false;
    for (const char* scale : { "activation_alpha", "activation_beta" }) // only the activations without parameters
        if (const auto it = c.op->attributes.find(scale); it != c.op->attributes.end() && !it->second.floats.empty())
            return false;
    // Every input float32 except sequence_lens (int32); every output float32.
    for (std::size_t i = 0; i < c.in.size(); ++i)
        if (c.has(i) && c.in[i].dtype != (i == 4 ? DType::Int32 : DType::Float32))
            return false;
    for (const auto& o : c.out)
        if (o.present() && o.dtype != DType::Float32)
            return false;
    if (!c.has(0) || !c.has(1) || !c.has(2) || c.in[0].rank() != 3 || c.in[1].rank() != 3 || c.in[2].rank() != 3)
        return false;
    const auto &x = c.in[0], &w = c.in[1], &rw = c.in[2];
    r.seq = x.shape[r.batchFirst ? 1 : 0];
    r.batch = x.shape[r.batchFirst ? 0 : 1];
    r.input = x.shape[2];
    r.hidden = rw.shape[2];
    if (c.attrInt("hidden_size", r.hidden) != r.hidden || w.shape != Shape { r.dirs, r.gates * r.hidden, r.input }
        || rw.shape != Shape { r.dirs, r.gates * r.hidden, r.hidden })
        return false;
    if (c.has(3) && c.in[3].shape != Shape { r.dirs, 2 * r.gates * r.hidden })
        return false;
    if (c.has(4) && c.in[4].count != r.batch)
        return false;
    const Shape state = r.batchFirst ? Shape { r.batch, r.dirs, r.hidden } : Shape { r.dirs, r.batch, r.hidden };
    if ((c.has(5) && c.in[5].shape != state) || (cell == Cell::Lstm && c.has(6) && c.in[6].shape != state))
        return false;
    if (cell == Cell::Lstm && c.has(7) && c.in[7].shape != Shape { r.dirs, 3 * r.hidden })
        return false;
    const Shape y = r.batchFirst ? Shape { r.batch, r.seq, r.dirs, r.hidden } : Shape { r.seq, r.dirs, r.batch, r.hidden };
    const int slots = cell == Cell::Lstm ? 3 : 2;
    for (std::size_t k = 0; k < c.out.size(); ++k) {
        const int slot = c.outSlot(k);
        if (slot < 0 || slot >= slots || (c.out[k].present() && c.out[k].shape != (slot == 0 ? y : state)))
            return false;
    }
    // activations: per direction f, g, h (LSTM), f, g (GRU), f (RNN).
    const int perDirection = cell == Cell::Lstm ? 3 : cell == Cell::Gru ? 2 : 1;
    if (cell == Cell::Rnn)
        r.f[0] = r.f[1] = RecurrentActivation::Tanh;
    if (const auto it = c.op->attributes.find("activations"); it != c.op->attributes.end()) {
        const auto names = attributeStrings(it->second);
        if (int(names.size()) != perDirection * r.dirs)
            return false;
        for (int d = 0; d < r.dirs; ++d) {
            RecurrentActivation* slots[3] = { &r.f[d], &r.g[d], &r.h[d] };
            for (int k = 0; k < perDirection; ++k)
                if (!activationByName(names[std::size_t(d * perDirection + k)], *slots[k]))
                    return false;
        }
    }
    return true;
}


float* recurrentOutput(const KernelCall& c, int slot)
{
    for (std::size_t k = 0; k < c.out.size(); ++k)
        if (c.outSlot(k) == slot && c.out[k].present())
            return c.out[k].f32();
    return nullptr;
}

} // namespace core::exec
