// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// RNN, GRU and LSTM (float32): forward, reverse and bidirectional, both layouts, biases, initial
// states, per-batch sequence lengths, LSTM peepholes, the cell clip, GRU's linear_before_reset.
// Activations Sigmoid, Tanh and Relu (the defaults and what exporters write); others are refused.
// Per direction, the input projections of every step come from one GEMM; each step then adds the
// hidden-state projection (one GEMM over the batch) and applies the gates.
#include "exec/recurrence.h"

#include <algorithm>
#include <cmath>

namespace core::exec {

namespace {

float activate(RecurrentActivation a, float x)
{
    switch (a) {
    case RecurrentActivation::Sigmoid: return 1.0f / (1.0f + std::exp(-x));
    case RecurrentActivation::Tanh: return std::tanh(x);
    case RecurrentActivation::Relu: return std::max(x, 0.0f);
    }
    return x;
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
    float* y = recurrentOutput(c, 0);
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
                    masked[b * H + k] = activate(r.f[d], clipped(pre)) * hs[b * H + k];
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
                    hb[k] = activate(r.f[d], pre(0));
                } else if (r.cell == Cell::Gru) {
                    const float z = activate(r.f[d], pre(0));
                    float candidate;
                    if (r.linearBeforeReset) {
                        const float reset = activate(r.f[d], pre(1));
                        candidate = activate(r.g[d], clipped(xg[2 * H + k] + wb(2, k) + reset * (hg[2 * H + k] + rb(2, k))));
                    } else
                        candidate = activate(r.g[d], clipped(xg[2 * H + k] + resetHidden[b * H + k] + rb(2, k) + wb(2, k)));
                    hb[k] = (1.0f - z) * candidate + z * hb[k];
                } else { // LSTM: gates i, o, f, c; peepholes i, o, f
                    const float cPrev = cb[k];
                    const float i = activate(r.f[d], clipped(raw(0) + (peep ? peep[k] * cPrev : 0.0f)));
                    const float f = activate(r.f[d], clipped(raw(2) + (peep ? peep[2 * H + k] * cPrev : 0.0f)));
                    const float candidate = activate(r.g[d], pre(3));
                    const float cNew = f * cPrev + i * candidate;
                    const float o = activate(r.f[d], clipped(raw(1) + (peep ? peep[H + k] * cNew : 0.0f)));
                    cb[k] = cNew;
                    hb[k] = o * activate(r.h[d], cNew);
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
        if (float* out = recurrentOutput(c, slot))
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
