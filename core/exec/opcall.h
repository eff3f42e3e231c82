// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// One op call with the executor's rules, shared by the CPU executor and every host-op path of
// another executor (exec/hostops.h), so that an op runs the same kernels with the same bits wherever
// it runs on the host:
// - Constant: a weight output was loaded before the run; any other output is copied from the model's data.
// - ConstantOfShape: the `value` attribute (from the model's data), float 0 without one.
// - Otherwise the real kernel; failing that, the integer values import folded; failing that, the
//   synthetic kernel (the call then counts as synthetic).
// - A fused op (Op::body) runs its body's ops in order on those rules; the tensors between them
//   (fusedInternals) live in fused scratch, never in the arena. It counts as real when every body
//   op ran a real kernel, so a fused op computes the unfused ops' outputs bit for bit.

#include "exec/executor.h"
#include "exec/branch.h"
#include "exec/kernels.h"
#include "exec/runshape.h"

#include <functional>
#include <memory>

namespace core::exec {

// The view of tensor t at `data`: the graph's shape when fully known (and not estimated), else one dimension.
TensorView tensorView(const Graph& g, TensorIndex t, std::byte* data);

// How a prepared call finds its tensors: where each one is now (may be null), and whether it has
// memory of its own bytes in this run (kernels run only when every output and the first input do).
struct TensorAccess {
    std::function<std::byte*(TensorIndex)> address;
    std::function<bool(TensorIndex)> stored;
    std::function<bool(TensorIndex)> channelsLast; // stored N,H,W,C (exec/channelslast.h); empty: none is
};

// One kernel call as prepared for a run: an op of the schedule, or one op of a fused op's body.
struct PreparedCall {
    KernelCall call;
    std::vector<TensorIndex> inTensor, outTensor; // per slot; -1 for an absent optional input
    Kernel kernel = nullptr;
    bool constant = false; // Constant op: its output is a preloaded weight
    bool fill = false;     // ConstantOfShape
    OpIndex opIndex = -1;  // -1 for a body op
    std::vector<PreparedCall> body; // a fused op: its body's calls, in order
    // An output is estimated (sized by an upper bound), or the op is data-dependent: `kernel` is
    // null, and a run with run-time shapes (runWithShapes) uses `shapedKernel` or `sizing` instead.
    bool dynamic = false;
    Kernel shapedKernel = nullptr;
    SizingKernel sizing = nullptr;
    SequenceKernel sequence = nullptr; // a sequence op (runshape.h): dynamic, run by runWithShapes
    bool optional = false;             // an optional op (runOptionalOp): dynamic, run by runWithShapes
    // An If, Loop or Scan with its graphs from the model's data (runWithShapes runs them: exec/branch.h),
    // and the outer tensors they read (Op::captured) as views.
    std::shared_ptr<const Subgraphs> subgraphs;
    std::vector<TensorIndex> capturedTensor;
    std::vector<TensorView> captured;
    std::string refusal; // set by runWithShapes when an If, Loop or Scan could not run its graph: why
    // Where its graphs place their values (exec/bodyslots.h), in the region `call.workspace` points
    // at (its "<op> body" buffer); null: each value its own allocation. `bodyNotes` gathers, over the
    // run, each value that fell back to an allocation of its own (once).
    std::shared_ptr<const OpSlots> bodySlots;
    std::vector<std::string> bodyNotes;
};

// Run-time shapes (runshape.h) of the estimated tensors a run has produced so far.
struct RuntimeShapes {
    std::vector<Shape> shape; // per tensor
    std::vector<bool> known;  // per tensor: false until a producer set it (or after it ran synthetic)
    std::vector<std::vector<Shape>> items; // per tensor: a sequence's element shapes (TensorView::items)
    std::vector<bool> none; // per tensor (when known): an optional holding nothing (shape { 0 })
    void reset(std::size_t tensors)
    {
        shape.assign(tensors, {});
        known.assign(tensors, false);
        items.assign(tensors, {});
        none.assign(tensors, false);
    }
    // Tensor `to` holds what `from` holds (a copy: a swap transfer).
    void copy(std::size_t from, std::size_t to)
    {
        known[to] = known[from];
        shape[to] = shape[from];
        items[to] = items[from];
        none[to] = none[from];
    }
};

// Sets the run-time shapes of the graph inputs that are sequences (their items) or optionals: those
// of the given input (RunOptions::inputs; an optional given as holding nothing is so), else those a
// file gave at import (Tensor::items), else one element filling the planned room, as fillRandom
// fills it (an optional tensor not given: present, of its planned shape).
void seedInputShapes(const Graph& g, const RunOptions& options, RuntimeShapes& shapes);

// Checks a given graph input against its tensor: the element type, the size (a sequence's at most
// the planned room), and the contents that sized the plan (Tensor::values, Tensor::items). Errors
// name the input.
Status checkGivenInput(const Tensor& tensor, const HostTensor& given);
// Every given input (name -> contents) against its graph input by checkGivenInput; a name that is
// not a graph input of g is an error too.
Status checkGivenInputs(const Graph& g, const std::map<std::string, HostTensor>& inputs);

// Tensor t at `data` as a run knows it: its run-time shape when `shapes` has one, else the graph's
// (tensorView); no data for an optional holding nothing. A graph output is read back over this view.
TensorView runtimeView(const Graph& g, TensorIndex t, std::byte* data, const RuntimeShapes& shapes);

// Graph output t as a run left it, all but its bytes (dtype, shape, sequence items, optional, none),
// and how many bytes of its room to read back into it (0 for an optional holding nothing).
HostTensor outputHeader(const Graph& g, TensorIndex t, const RuntimeShapes& shapes, Bytes& bytes);

// Adds the run's tensors sized by an upper bound that have memory (`stored`) to m's boundedTensors,
// boundedBytes and boundedUsedBytes (the bytes of their run-time shapes; the whole bound when unknown).
void countBounds(const Graph& g, const std::function<bool(TensorIndex)>& stored, const RuntimeShapes& shapes, Measurement& m);

// ConstantOfShape's output: every element of y the one element `value` holds (its `value`
// attribute), float 0 when null. False, writing nothing, when `value` is not one element of y's type.
bool fillConstant(const TensorView& y, const HostTensor* value);

// Writes the `count` values import folded into t (Tensor::values) at p in t's integer or bool element
// type; false, writing nothing, when they do not cover `count` elements or t is not of such a type.
bool writeFoldedValues(const Tensor& t, std::byte* p, std::int64_t count);

// Prepares `op` (op `opIndex` of the graph) and, for a fused op, its body; input slots from the model's data.
PreparedCall prepareOp(const Graph& g, const Op& op, OpIndex opIndex, const RunOptions& options, const TensorAccess& access);

// Points the call's views (and its body's) at the tensors' current addresses.
void repoint(PreparedCall& p, const TensorAccess& access);

// A kernel's refusal of its data (kernels.h DataFault) in words, with the tensors of `g` it names:
// "op 'g' (Gather): index 7 at element 1 of 'I' is outside [-3, 2], the size of axis 0 of 'X' [3,2]".
// `step` is the op of the schedule that ran it; a body op (fused, If, Loop) is named after it.
std::string describeFault(const Graph& g, const Op& step, const DataFault& fault);

// Runs a prepared op (a fused op: its body); true when real (no synthetic kernel ran).
bool runPrepared(const Graph& g, const PreparedCall& p, const RunOptions& options);

// runPrepared with run-time shapes: inputs whose run-time shape is known are viewed with it; an op
// with an estimated output gets its output shapes from its sizing kernel or from runtimeShapes(),
// checked against the planned room, runs its kernel on them and records them in `shapes`. When that
// fails it runs the synthetic kernel over the planned room and its estimated outputs stay unknown,
// so the ops that read them run synthetic too. The views of `p` are changed in place. True when real.
bool runWithShapes(const Graph& g, PreparedCall& p, const RunOptions& options, RuntimeShapes& shapes);

// One op that is not fused, on the rules above. `kernel` may be null; Constant and ConstantOfShape
// are recognised from call.op. True when real.
bool runCall(const Graph& g, const KernelCall& call, OpIndex opIndex, Kernel kernel, const RunOptions& options);

// Fused scratch: one allocation holding the internal tensors of the fused op that needs most; every
// fused op's internals lie from offset 0, since fused ops run one at a time, packed by their
// lifetimes inside the body (an internal's room is reused once its last body reader has run).
struct FusedScratch {
    std::vector<bool> internal; // per tensor
    std::vector<Bytes> offset;  // per tensor: offset in the scratch, -1 when not internal
    std::shared_ptr<std::byte> memory;
    Bytes bytes = 0;
    std::byte* address(TensorIndex t) const { return memory.get() + offset[std::size_t(t)]; }
};

// The layout of the scratch for the fused ops among `ops` (internal, offset, bytes; no memory), each
// internal at a multiple of `alignment` (at least 64); errors name a body op whose tensor index is
// out of range. An executor that keeps the scratch elsewhere (the device) needs only this.
Expected<FusedScratch> fusedScratchLayout(const Graph& g, const std::vector<const Op*>& ops, Bytes alignment);

// fusedScratchLayout with zeroed host memory of that size.
Expected<FusedScratch> makeFusedScratch(const Graph& g, const std::vector<const Op*>& ops, Bytes alignment);

} // namespace core::exec
