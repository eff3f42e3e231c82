// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// If, Loop, Scan and SequenceMap on the CPU executor: the branch the condition picks (a Loop,
// Scan or SequenceMap: its body, once per iteration or element) runs op by op, on the same kernels and run-time shape rules as the top level
// (exec/runshape.h), and its results become the op's outputs.
// - With the graph's plan (BodyArena: NestedPlan, exec/bodyslots.h) each value the graph computes,
//   and each formal input (copied in), lives at its planned offset in the op's region of the arena.
//   A value the plan does not hold or whose run-time bytes exceed its planned buffer, and every list
//   and optional, is its own host allocation of its run-time size instead, held until the graph
//   ends, with a note; so is every value without a plan (the no-reuse reference run). The most such
//   allocations held at once is reported (kernel scratch). Data-dependent ops get the room their
//   inputs allow at most (NonZero: rank × elements, NonMaxSuppression: every box of every class, ...).
// - Outer values are read in place, with their run-time shapes.
// - Element types come from ONNX type inference over the branch (loadTensorData).
// - An If, Loop or Scan inside a branch runs the same way, its graphs reading the enclosing
//   branch's values (and the outer graph's) by name.
// - A branch that holds an op without a kernel, shape rule or type, or whose result does not fit
//   the If's planned room, does not run: the If then runs synthetic.

#include "exec/kernels.h"
#include "exec/tensordata.h"
#include "util/cancel.h"

#include <functional>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

namespace core::exec {

struct Subgraphs;
struct OpSlots; // exec/bodyslots.h

// Where a control-flow op's graphs place their values in this run (exec/bodyslots.h): the op's
// region (its "<op> body" buffer: in the arena, or its own allocation in a per-tensor run), the
// planned slots in it, and the run's notes (each fallback once). Without slots every value is its
// own allocation, as in the no-reuse reference run.
struct BodyArena {
    std::byte* region = nullptr;
    const OpSlots* layout = nullptr;
    std::vector<std::string>* notes = nullptr;
    bool placed() const { return region && layout; }
};

struct Branch {
    std::vector<Op> ops; // the branch's nodes: type, domain, scalar and list attributes (no tensor indices)
    std::vector<std::vector<std::string>> inputs, outputs; // per op, value names by ONNX slot ("": left out)
    std::map<std::string, DType> types;          // every value the branch computes (a sequence: its elements')
    std::set<std::string> sequences;             // the values among them that are sequences
    std::set<std::string> optionals;             // ... and that are optionals (of a tensor or a sequence)
    std::map<std::string, HostTensor> constants; // initializers and Constant outputs
    std::map<std::size_t, HostTensor> fills;     // ConstantOfShape `value` by op position
    std::map<std::size_t, std::shared_ptr<const Subgraphs>> nested; // an If/Loop/Scan's graphs by op position
    std::vector<std::string> formals;            // the graph's own inputs (a Loop body's iteration, condition, carried values)
    std::vector<std::string> results;            // the branch's outputs, in order
    std::string unsupported;                     // non-empty: why this branch cannot run
};

// The graphs of one control-flow op: an If's two branches, or a Loop's or Scan's body.
struct Subgraphs {
    Branch then, otherwise; // If
    Branch body;            // Loop, Scan, SequenceMap
};

// The ops whose graphs runControlFlow runs (default domain): If, Loop, Scan and SequenceMap.
bool runsGraphs(const std::string& type);

// Finds an outer value by name: its view (run-time shape) or false when the branch may not read it.
using OuterLookup = std::function<bool(const std::string& name, TensorView& view)>;

// Runs control-flow op `call.op` (If, Loop or Scan) on `graphs` and writes its results into call.out
// (each the op's planned room), setting shapes[k] to each result's run-time shape (a sequence: items[k]
// to its elements'; an optional holding nothing: none[k], shape { 0 }). A view without data read
// by the graphs (an outer value, a carried one) is an optional holding nothing. `bounded[k]`:
// output k is sized by an upper bound (the result may be smaller), else it must fill its room
// exactly. `heldBytes` grows to the most the graphs held at once in allocations of their own (not
// in `arena`'s region). False, writing nothing past any room, when the op cannot run; `why` says why.
// - If: the branch its condition (in[0], one bool) picks.
// - Loop (inputs: trip count M, condition, initial carried values; both optional): the body runs
//   while i < M and its condition holds, at most kMaxLoopIterations times; outputs are the final
//   carried values, then each scan output stacked over the iterations (every iteration's slice must
//   have one shape). Each iteration reuses the body's region: before the next one runs, the carried
//   values are copied out of it (host allocations, kernel scratch) and the scan slices into their
//   place in the op's output (a Loop inside a graph, whose outputs have no room: host allocations).
//   A Scan's iterations likewise.
// - Scan (opset 9 on: N state values, then num_scan_inputs scan inputs): the body runs once per
//   slice along each scan input's axis (scan_input_axes, scan_input_directions); outputs are the
//   final states, then each scan output's values stacked along scan_output_axes (from the end for
//   scan_output_directions 1). A Scan-8 (input 0 sequence_lens, then states and scan inputs with a
//   batch axis first) runs each batch entry so and stacks the results along the batch axis; a
//   sequence_lens shorter than the scan axis, or a reversed direction, is refused.
// - SequenceMap (input 0 a sequence, then sequences of its length or tensors): the body runs once
//   per element, reading element i of each sequence and each tensor whole; output k is the list of
//   the body's result k, one element per iteration.
constexpr std::int64_t kMaxLoopIterations = 1 << 20;
// The most bytes a Loop's body may write over all its iterations (each iteration's values summed):
// a carried tensor that grows every iteration costs time quadratic in the iterations, and one in a
// nested Loop (whose results have no planned room to outgrow) would otherwise grow for
// kMaxLoopIterations iterations.
constexpr Bytes kMostLoopBytes = Bytes(4) << 30;
// `cancel` is checked before every op of every iteration: a cancelled run stops inside a long Loop
// or Scan too (false, why "the run was cancelled").
bool runControlFlow(const Subgraphs& graphs, const KernelCall& call, const std::vector<bool>& bounded, const OuterLookup& outer,
    std::vector<Shape>& shapes, std::vector<std::vector<Shape>>& items, std::vector<bool>& none, Bytes& heldBytes, std::string& why,
    const CancelToken& cancel = {}, const BodyArena& arena = {});

} // namespace core::exec
