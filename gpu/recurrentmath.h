// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Per-element math of the RNN, GRU and LSTM device kernels, with the CPU kernel's rules
// (core/exec/kernels_recurrent.cpp). Host and device code, as elementmath.h.
// One direction runs as: xw = X·Wᵀ for every step at once (cuBLAS), the state from initial_h and
// initial_c (recurrentStartElement), then per step hr = H·Rᵀ (cuBLAS), for a GRU without
// linear_before_reset also (r ⊙ H)·Rhᵀ (gruResetElement, then cuBLAS), and the gates
// (recurrentCellElement), which update the state in place and write Y, Y_h and Y_c.

#include "elementmath.h"

namespace gpu::kernels {

enum class RecurrentCell { Rnn, Gru, Lstm };

// One step of one direction; pointers are the kernels' own arguments.
struct RecurrentStep {
    RecurrentCell cell = RecurrentCell::Lstm;
    Unary f = Unary::Sigmoid, g = Unary::Tanh, h = Unary::Tanh; // this direction's activations
    bool linearBeforeReset = false, batchFirst = false, reverse = false;
    int dirs = 1, direction = 0;
    std::int64_t seq = 0, batch = 0, hidden = 0;
    std::int64_t step = 0; // 0 .. seq-1; the time it computes is step, or length - 1 - step in reverse
    float clip = 0;        // 0: none

    MEMPLAN_HD std::int64_t gateWidth() const { return (cell == RecurrentCell::Lstm ? 4 : cell == RecurrentCell::Gru ? 3 : 1) * hidden; }
    // Row of X (and of xw) for time t of batch entry b.
    MEMPLAN_HD std::int64_t row(std::int64_t t, std::int64_t b) const { return batchFirst ? b * seq + t : t * batch + b; }
    // Offset of (t, b) in Y and of b in Y_h, Y_c, initial_h, initial_c, for this direction.
    MEMPLAN_HD std::int64_t yAt(std::int64_t t, std::int64_t b) const
    {
        return batchFirst ? ((b * seq + t) * dirs + direction) * hidden : ((t * dirs + direction) * batch + b) * hidden;
    }
    MEMPLAN_HD std::int64_t stateAt(std::int64_t b) const { return batchFirst ? (b * dirs + direction) * hidden : (direction * batch + b) * hidden; }
    // Batch entry b's length: sequence_lens clamped to [0, seq], seq without them.
    MEMPLAN_HD std::int64_t length(const std::int32_t* lengths, std::int64_t b) const
    {
        if (!lengths)
            return seq;
        const std::int64_t n = lengths[b];
        return n < 0 ? 0 : n > seq ? seq : n;
    }
    MEMPLAN_HD float clipped(float v) const { return clip > 0 ? (v < -clip ? -clip : v > clip ? clip : v) : v; }
};

MEMPLAN_HD inline float activation(Unary op, float v) { return unaryElement(op, v, 0.0f, 0.0f); }

// The state of entry b, unit k before the first step: initial_h (initial_c) or 0; each may be null.
MEMPLAN_HD inline void recurrentStartElement(const RecurrentStep& s, const float* initialH, const float* initialC, float* hs, float* cs,
    std::int64_t b, std::int64_t k)
{
    hs[b * s.hidden + k] = initialH ? initialH[s.stateAt(b) + k] : 0.0f;
    cs[b * s.hidden + k] = initialC ? initialC[s.stateAt(b) + k] : 0.0f;
}

// GRU without linear_before_reset: r ⊙ H for entry b, unit k (r is gate 1 of z, r, h); bias
// ([Wb, Rb] of this direction) may be null.
MEMPLAN_HD inline float gruResetElement(const RecurrentStep& s, const float* xw, const float* hr, const float* bias,
    const std::int32_t* lengths, const float* hs, std::int64_t b, std::int64_t k)
{
    const std::int64_t H = s.hidden, G = s.gateWidth(), n = s.length(lengths, b);
    const std::int64_t t = s.reverse ? n - 1 - s.step : s.step;
    float pre = 0.0f;
    if (t >= 0 && t < n)
        pre = xw[s.row(t, b) * G + H + k] + hr[b * G + H + k] + (bias ? bias[H + k] : 0.0f) + (bias ? bias[G + H + k] : 0.0f);
    return activation(s.f, s.clipped(pre)) * hs[b * H + k];
}

// Step s.step for entry b, unit k: the gates from xw (X·Wᵀ), hr (H·Rᵀ), rh ((r ⊙ H)·Rhᵀ, GRU
// without linear_before_reset only), bias and peep (LSTM peepholes i, o, f) of this direction (each
// may be null); updates hs, cs and writes y. Past the entry's length the state stays and Y gets 0 at
// time s.step. After the last step Y_h and Y_c (each may be null) get the state.
MEMPLAN_HD inline void recurrentCellElement(const RecurrentStep& s, const float* xw, const float* hr, const float* rh, const float* bias,
    const float* peep, const std::int32_t* lengths, float* hs, float* cs, float* y, float* yh, float* yc, std::int64_t b, std::int64_t k)
{
    const std::int64_t H = s.hidden, G = s.gateWidth(), n = s.length(lengths, b);
    const std::int64_t t = s.reverse ? n - 1 - s.step : s.step;
    float& h = hs[b * H + k];
    float& c = cs[b * H + k];
    if (t >= 0 && t < n) {
        const float* xg = xw + s.row(t, b) * G;
        const float* hg = hr + b * G;
        const auto wb = [&](int gate) { return bias ? bias[gate * H + k] : 0.0f; };
        const auto rb = [&](int gate) { return bias ? bias[G + gate * H + k] : 0.0f; };
        const auto raw = [&](int gate) { return xg[gate * H + k] + hg[gate * H + k] + wb(gate) + rb(gate); };
        if (s.cell == RecurrentCell::Rnn) {
            h = activation(s.f, s.clipped(raw(0)));
        } else if (s.cell == RecurrentCell::Gru) {
            const float z = activation(s.f, s.clipped(raw(0)));
            float candidate;
            if (s.linearBeforeReset) {
                const float reset = activation(s.f, s.clipped(raw(1)));
                candidate = activation(s.g, s.clipped(xg[2 * H + k] + wb(2) + reset * (hg[2 * H + k] + rb(2))));
            } else
                candidate = activation(s.g, s.clipped(xg[2 * H + k] + rh[b * H + k] + rb(2) + wb(2)));
            h = (1.0f - z) * candidate + z * h;
        } else { // LSTM: gates i, o, f, c; peepholes i, o, f
            const float cPrev = c;
            const float i = activation(s.f, s.clipped(raw(0) + (peep ? peep[k] * cPrev : 0.0f)));
            const float f = activation(s.f, s.clipped(raw(2) + (peep ? peep[2 * H + k] * cPrev : 0.0f)));
            const float cNew = f * cPrev + i * activation(s.g, s.clipped(raw(3)));
            const float o = activation(s.f, s.clipped(raw(1) + (peep ? peep[H + k] * cNew : 0.0f)));
            c = cNew;
            h = o * activation(s.h, cNew);
        }
        if (y)
            y[s.yAt(t, b) + k] = h;
    } else if (y) {
        y[s.yAt(s.step, b) + k] = 0.0f; // steps n .. seq-1 are the times past the length, in either direction
    }
    if (s.step == s.seq - 1) {
        if (yh)
            yh[s.stateAt(b) + k] = h;
        if (yc)
            yc[s.stateAt(b) + k] = c;
    }
}

} // namespace gpu::kernels
