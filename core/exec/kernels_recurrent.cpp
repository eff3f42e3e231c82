// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// RNN, GRU and LSTM (float32): forward, reverse and bidirectional, both layouts, biases, initial
// states, per-batch sequence lengths, LSTM peepholes, the cell clip, GRU's linear_before_reset.
// Activations Sigmoid, Tanh and Relu (the defaults and what exporters write); others are refused.
// Per direction, the input projections of every step come from one GEMM; each step then adds the
// hidden-state projection (one GEMM over the batch) and applies the gates.
#include "exec/kernels.h"

#include <algorithm>
#include <cmath>

namespace core::exec {

namespace {

enum class Cell { Rnn, Gru, Lstm };

using Activation = float (*)(float);
float sigmoidFn(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float tanhFn(float x) { return std::tanh(x); }
float reluFn(float x) { return std::max(x, 0.0f); }

bool activationByName(const std::string& name, Activation& f)
{
    if (name == "Sigmoid")
        f = sigmoidFn;
    else if (name == "Tanh")
        f = tanhFn;
    else if (name == "Relu")
        f = reluFn;
    else
        return false;
    return true;
}

struct Recurrence {
    Cell cell = Cell::Lstm;
    int gates = 4, dirs = 1;
    bool reverseOnly = false, batchFirst = false, linearBeforeReset = false;
    std::int64_t seq = 0, batch = 0, input = 0, hidden = 0;
    float clip = 0; // 0: none
    Activation f[2] = { sigmoidFn, sigmoidFn }, g[2] = { tanhFn, tanhFn }, h[2] = { tanhFn, tanhFn };
};

// Shapes and attributes; false when the kernel does not take this configuration.
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
        r.f[0] = r.f[1] = tanhFn;
    if (const auto it = c.op->attributes.find("activations"); it != c.op->attributes.end()) {
        std::vector<std::string> names;
        std::string text = it->second.text;
        // Stored as one text with the names separated by commas (a string list attribute).
        for (std::size_t start = 0; start <= text.size();) {
            const auto comma = text.find(',', start);
            names.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
            if (comma == std::string::npos)
                break;
            start = comma + 1;
        }
        if (int(names.size()) != perDirection * r.dirs)
            return false;
        for (int d = 0; d < r.dirs; ++d) {
            Activation* slots[3] = { &r.f[d], &r.g[d], &r.h[d] };
            for (int k = 0; k < perDirection; ++k)
                if (!activationByName(names[std::size_t(d * perDirection + k)], *slots[k]))
                    return false;
        }
    }
    return true;
}

// The output in ONNX slot `slot` (0 Y, 1 Y_h, 2 Y_c), or null when the op leaves it out.
float* outputAt(const KernelCall& c, int slot)
{
    for (std::size_t k = 0; k < c.out.size(); ++k)
        if (c.outSlot(k) == slot && c.out[k].present())
            return c.out[k].f32();
    return nullptr;
}

// One direction d of the recurrence over every batch entry.
void runDirection(const KernelCall& c, const Recurrence& r, int d, bool reverse)
{
    const std::int64_t G = r.gates * r.hidden, H = r.hidden, B = r.batch;
    const float* w = c.in[1].f32() + d * G * r.input;
    const float* rw = c.in[2].f32() + d * G * H;
    const float* bias = c.has(3) ? c.in[3].f32() + d * 2 * G : nullptr;
    const float* peep = r.cell == Cell::Lstm && c.has(7) ? c.in[7].f32() + d * 3 * H : nullptr;
    // Input projections of every (row of x) at once: x is [seq, batch, input] or [batch, seq, input].
    float* xw = scratch(0, r.seq * B * G);
    gemm(r.seq * B, G, r.input, c.in[0].f32(), r.input, w, r.input, xw, G, false, true);
    float* hr = scratch(1, B * G + B * H);
    float* resetHidden = hr + B * G; // GRU without linear_before_reset: (r ⊙ H)·Rhᵀ
    float* state = scratch(2, 2 * B * H); // H, then C
    float* hs = state;
    float* cs = state + B * H;
    const auto stateAt = [&](std::int64_t b) { return r.batchFirst ? b * r.dirs * H + d * H : (d * B + b) * H; };
    for (std::int64_t b = 0; b < B; ++b) {
        for (std::int64_t k = 0; k < H; ++k) {
            hs[b * H + k] = c.has(5) ? c.in[5].f32()[stateAt(b) + k] : 0.0f;
            cs[b * H + k] = r.cell == Cell::Lstm && c.has(6) ? c.in[6].f32()[stateAt(b) + k] : 0.0f;
        }
    }
    const auto length = [&](std::int64_t b) {
        const std::int64_t n = c.has(4) ? intAt(c.in[4], b) : r.seq;
        return std::clamp<std::int64_t>(n, 0, r.seq);
    };
    const auto clipped = [&](float v) { return r.clip > 0 ? std::clamp(v, -r.clip, r.clip) : v; };
    float* y = outputAt(c, 0);
    const auto yAt = [&](std::int64_t t, std::int64_t b) { return r.batchFirst ? ((b * r.seq + t) * r.dirs + d) * H : ((t * r.dirs + d) * B + b) * H; };
    const auto wb = [&](int gate, std::int64_t k) { return bias ? bias[gate * H + k] : 0.0f; };
    const auto rb = [&](int gate, std::int64_t k) { return bias ? bias[G + gate * H + k] : 0.0f; };
    for (std::int64_t step = 0; step < r.seq; ++step) {
        gemm(B, G, H, hs, H, rw, H, hr, G, false, true);
        if (r.cell == Cell::Gru && !r.linearBeforeReset) {
            // r = f(x·Wrᵀ + H·Rrᵀ + biases), then (r ⊙ H)·Rhᵀ; r is gate 1 (z, r, h order).
            float* masked = scratch(3, B * H);
            for (std::int64_t b = 0; b < B; ++b) {
                const std::int64_t n = length(b), t = reverse ? n - 1 - step : step;
                for (std::int64_t k = 0; k < H; ++k) {
                    const float pre = t >= 0 && t < n ? xw[(r.batchFirst ? b * r.seq + t : t * B + b) * G + H + k] + hr[b * G + H + k] + wb(1, k) + rb(1, k) : 0.0f;
                    masked[b * H + k] = r.f[d](clipped(pre)) * hs[b * H + k];
                }
            }
            gemm(B, H, H, masked, H, rw + 2 * H * H, H, resetHidden, H, false, true);
        }
        for (std::int64_t b = 0; b < B; ++b) {
            const std::int64_t n = length(b), t = reverse ? n - 1 - step : step;
            if (t < 0 || t >= n)
                continue;
            const float* xg = xw + (r.batchFirst ? b * r.seq + t : t * B + b) * G;
            const float* hg = hr + b * G;
            float* hb = hs + b * H;
            float* cb = cs + b * H;
            for (std::int64_t k = 0; k < H; ++k) {
                const auto raw = [&](int gate) { return xg[gate * H + k] + hg[gate * H + k] + wb(gate, k) + rb(gate, k); };
                const auto pre = [&](int gate) { return clipped(raw(gate)); };
                if (r.cell == Cell::Rnn) {
                    hb[k] = r.f[d](pre(0));
                } else if (r.cell == Cell::Gru) {
                    const float z = r.f[d](pre(0));
                    float candidate;
                    if (r.linearBeforeReset) {
                        const float reset = r.f[d](pre(1));
                        candidate = r.g[d](clipped(xg[2 * H + k] + wb(2, k) + reset * (hg[2 * H + k] + rb(2, k))));
                    } else
                        candidate = r.g[d](clipped(xg[2 * H + k] + resetHidden[b * H + k] + rb(2, k) + wb(2, k)));
                    hb[k] = (1.0f - z) * candidate + z * hb[k];
                } else { // LSTM: gates i, o, f, c; peepholes i, o, f
                    const float cPrev = cb[k];
                    const float i = r.f[d](clipped(raw(0) + (peep ? peep[k] * cPrev : 0.0f)));
                    const float f = r.f[d](clipped(raw(2) + (peep ? peep[2 * H + k] * cPrev : 0.0f)));
                    const float candidate = r.g[d](pre(3));
                    const float cNew = f * cPrev + i * candidate;
                    const float o = r.f[d](clipped(raw(1) + (peep ? peep[H + k] * cNew : 0.0f)));
                    cb[k] = cNew;
                    hb[k] = o * r.h[d](cNew);
                }
            }
            if (y)
                std::copy(hb, hb + H, y + yAt(t, b));
        }
    }
    // Steps past a batch entry's length hold zeros in Y.
    if (y)
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t t = length(b); t < r.seq; ++t)
                std::fill(y + yAt(t, b), y + yAt(t, b) + H, 0.0f);
    for (int slot = 1; slot <= 2; ++slot)
        if (float* out = outputAt(c, slot))
            for (std::int64_t b = 0; b < B; ++b)
                std::copy_n(slot == 1 ? hs + b * H : cs + b * H, H, out + stateAt(b));
}

template <Cell C>
bool recurrent(const KernelCall& c)
{
    Recurrence r;
    if (!recurrence(c, C, r))
        return false;
    for (int d = 0; d < r.dirs; ++d)
        runDirection(c, r, d, r.reverseOnly || d == 1);
    return true;
}

} // namespace

void addRecurrentKernels(std::map<std::string, Kernel>& t)
{
    t["RNN"] = recurrent<Cell::Rnn>;
    t["GRU"] = recurrent<Cell::Gru>;
    t["LSTM"] = recurrent<Cell::Lstm>;
}

} // namespace core::exec
