// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "opsrecurrent.h"

#include "kernels.h"
#include "opparams.h"

namespace gpu {

using core::exec::Cell;
using core::exec::KernelCall;

namespace {

const Outcome kUnsupported { false, {} };

struct ScratchShape {
    std::int64_t seq = 0, batch = 0, gateWidth = 0, hidden = 0;
    std::int64_t floats() const { return seq * batch * gateWidth + batch * gateWidth + 4 * batch * hidden; }
};

// X's and R's shapes as the op states them: [seq, batch, input] ([batch, seq, input] with layout 1)
// and [dirs, gates·hidden, hidden]; views carry their shapes before they have an address.
bool scratchShape(const KernelCall& c, ScratchShape& s)
{
    if (c.in.size() < 3 || c.in[0].rank() != 3 || c.in[2].rank() != 3)
        return false;
    const bool batchFirst = c.attrInt("layout", 0) != 0;
    s.seq = c.in[0].shape[batchFirst ? 1 : 0];
    s.batch = c.in[0].shape[batchFirst ? 0 : 1];
    s.gateWidth = c.in[2].shape[1];
    s.hidden = c.in[2].shape[2];
    return s.seq > 0 && s.batch > 0 && s.hidden > 0 && s.gateWidth > 0;
}

// One direction d: the projections of every step, the state, then the steps in order.
Outcome runDirection(const DeviceCall& d, const core::exec::Recurrence& r, int dir, const ScratchShape& shape)
{
    const auto& c = d.call;
    const std::int64_t H = r.hidden, G = r.gates * H, B = r.batch;
    float* xw = d.scratch;
    float* hr = xw + shape.seq * B * shape.gateWidth;
    float* rh = hr + B * shape.gateWidth;
    float* masked = rh + B * H;
    float* hs = masked + B * H;
    float* cs = hs + B * H;
    const float* w = c.in[1].f32() + dir * G * r.input;
    const float* rw = c.in[2].f32() + dir * G * H;
    const float* bias = c.has(3) ? c.in[3].f32() + dir * 2 * G : nullptr;
    const float* peep = r.cell == Cell::Lstm && c.has(7) ? c.in[7].f32() + dir * 3 * H : nullptr;
    const auto* lengths = c.has(4) ? reinterpret_cast<const std::int32_t*>(c.in[4].data) : nullptr;

    auto s = recurrentStep(r, dir);

    if (auto o = blasLaunched(gemmRowMajor(d.blas, false, true, r.seq * B, G, r.input, 1.0f, c.in[0].f32(), r.input, w, r.input, 0.0f, xw, G),
            "cublasSgemm (input projections)");
        !o.failure.empty())
        return o;
    const float* initialH = c.has(5) ? c.in[5].f32() : nullptr;
    const float* initialC = r.cell == Cell::Lstm && c.has(6) ? c.in[6].f32() : nullptr;
    if (auto o = launched(kernels::recurrentStart(s, initialH, initialC, hs, cs, d.stream), "kernels::recurrentStart"); !o.failure.empty())
        return o;
    float* y = core::exec::recurrentOutput(c, 0);
    float* yh = core::exec::recurrentOutput(c, 1);
    float* yc = core::exec::recurrentOutput(c, 2);
    for (std::int64_t step = 0; step < r.seq; ++step) {
        s.step = step;
        if (auto o = blasLaunched(gemmRowMajor(d.blas, false, true, B, G, H, 1.0f, hs, H, rw, H, 0.0f, hr, G), "cublasSgemm (hidden projections)");
            !o.failure.empty())
            return o;
        if (r.cell == Cell::Gru && !r.linearBeforeReset) {
            if (auto o = launched(kernels::gruReset(s, masked, xw, hr, bias, lengths, hs, d.stream), "kernels::gruReset"); !o.failure.empty())
                return o;
            if (auto o = blasLaunched(gemmRowMajor(d.blas, false, true, B, H, H, 1.0f, masked, H, rw + 2 * H * H, H, 0.0f, rh, H),
                    "cublasSgemm (reset hidden projections)");
                !o.failure.empty())
                return o;
        }
        if (auto o = launched(kernels::recurrentCell(s, xw, hr, rh, bias, peep, lengths, hs, cs, y, yh, yc, d.stream), "kernels::recurrentCell");
            !o.failure.empty())
            return o;
    }
    return {};
}

Outcome recurrent(const DeviceCall& d)
{
    const auto& c = d.call;
    core::exec::Recurrence r;
    ScratchShape shape;
    if (!recurrentParams(c, r) || !scratchShape(c, shape) || !d.scratch)
        return kUnsupported;
    if (!fitsInt(r.seq * r.batch) || !fitsInt(r.gates * r.hidden) || !fitsInt(r.input) || shape.gateWidth != r.gates * r.hidden)
        return kUnsupported;
    for (int dir = 0; dir < r.dirs; ++dir)
        if (auto o = runDirection(d, r, dir, shape); !o.failure.empty())
            return o;
    return {};
}

} // namespace

bool isRecurrent(const std::string& opType) { return opType == "RNN" || opType == "GRU" || opType == "LSTM"; }

std::int64_t recurrentScratchFloats(const KernelCall& call)
{
    ScratchShape s;
    return scratchShape(call, s) ? s.floats() : 0;
}

void addRecurrentKernels(std::map<std::string, DeviceKernel>& t)
{
    for (const char* type : { "RNN", "GRU", "LSTM" })
        t[type] = recurrent;
}

} // namespace gpu
