// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The pieces the control-flow files share (branch.cpp: If, Loop and the entry point;
// branch_scan.cpp: Scan; branch_sequencemap.cpp: SequenceMap): a graph's values and the run of
// one graph, op by op. Not part of the executor's interface: exec/branch.h is.

#include "exec/bodyslots.h"
#include "exec/branch.h"
#include "graph/shapemath.h"

#include <map>
#include <string>
#include <vector>

namespace core::exec::graphrun {

// A value the branch computed: at its planned offset in the op's region (`at`), or its own
// allocation (`bytes`, never empty, so a 0-element value is present).
struct Value {
    DType dtype = DType::Undefined;
    Shape shape;
    std::vector<std::byte> bytes; // empty when placed
    std::byte* at = nullptr;      // placed: its planned offset in the op's region, which the graph's next run (iteration) reuses
    bool sequence = false;
    std::vector<Shape> items; // a sequence's element shapes (shape: { total elements })
    bool none = false;        // an optional holding nothing (shape { 0 }): its view has no data
    TensorView view()
    {
        TensorView v;
        v.dtype = dtype;
        v.shape = shape;
        v.count = elementCount(shape);
        v.data = none ? nullptr : data();
        v.sequence = sequence;
        v.items = items;
        return v;
    }
    std::byte* data() { return at ? at : bytes.data(); }
    Bytes ownBytes() const { return Bytes(bytes.size()); } // 0 when placed
};

Value allocate(DType dtype, Shape shape, std::int64_t room);
// An optional holding nothing.
Value noneValue(DType dtype, bool sequence);
// A value the run already wrote at `at` (scan slices in their place in the op's output).
Value placedValue(DType dtype, Shape shape, std::byte* at);
// A copy of a view's elements as a value of its own; a view without data is an optional holding nothing.
Value copyOf(const TensorView& v);

// The bytes the plan gives output `slot` of `call` (a sequence's: its elements'), or -1 when the
// call holds no room for it (a nested op's outputs are allocated once it has run: their views are
// blank). A planned output with no bytes (nothing in the arena: the plan expects it empty) has a
// room of 0.
Bytes plannedRoom(const KernelCall& call, std::size_t slot);
// Output `slot`'s room itself when the plan gives it bytes at an address, else null.
const TensorView* plannedOutput(const KernelCall& call, std::size_t slot);

// Where one run of a graph places its values: its op's region and the graph's slots in it (none:
// every value its own allocation), and the run's notes.
struct GraphPlace {
    std::byte* region = nullptr;
    const GraphSlots* layout = nullptr;
    std::vector<std::string>* notes = nullptr;
    const std::vector<TensorView>* outputs = nullptr; // the op's outputs, where an If branch's results go (GraphSlots::outputs)
};
// The place of the op's graph `attribute` ("then_branch", "else_branch", "body").
GraphPlace placeOf(const BodyArena& arena, const std::string& attribute);

// Runs control-flow op call.op on its graphs: `outputs` values, each its own allocation.
bool evaluate(const Subgraphs& graphs, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel, const BodyArena& arena);

// Each control-flow op's run: `results` its `outputs` values, each its own allocation; heldBytes
// grows to the most its graphs held at once in allocations of their own. The graphs' values live
// at their planned offsets where `arena` has slots for them.
bool evalIf(const Subgraphs& graphs, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel, const BodyArena& arena);
bool evalLoop(const Subgraphs& graphs, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel, const BodyArena& arena);
bool evalScan(const Subgraphs& graphs, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel, const BodyArena& arena);
// Scan-8: input 0 the optional sequence_lens, then states and scan inputs with a leading batch axis.
bool evalScan8(const Subgraphs& graphs, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel, const BodyArena& arena);
bool evalSequenceMap(const Subgraphs& graphs, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel, const BodyArena& arena);

// One run of a graph: its formals bound, its ops run in order, its values held until it ends.
class BranchRun {
public:
    BranchRun(const Branch& branch, const OuterLookup& outer, Bytes& heldBytes, const CancelToken& cancel, const GraphPlace& place = {})
        : m_branch(branch), m_outer(outer), m_heldBytes(heldBytes), m_cancel(cancel), m_place(place)
    {
    }

    // A formal input's value for this run of the graph: copied to its planned offset when it has
    // one (a value of its own is then released). Returns the bytes it keeps in an allocation of its own.
    Bytes bind(const std::string& name, Value value);
    // A formal input this run reads in place, from memory that outlives it (SequenceMap's tensor
    // inputs and list elements): kernels never write their inputs, and a result that names it is copied.
    void lend(const std::string& name, const TensorView& view) { m_lent[name] = view; }

    // Moves out the value `name` holds in this run (a formal's or an op's result; a copy of one at
    // its planned offset, which the next run of the graph overwrites); false when the run holds
    // none of that name (a constant, an outer value).
    // `copied` (when given) tells which.
    bool take(const std::string& name, Value& value, bool* copied = nullptr);

    // The bytes the values this run computed hold in allocations of their own (the formals bound
    // to it not counted), and the bytes they hold wherever they are.
    Bytes heldNow() const { return m_held; }
    Bytes writtenNow() const { return m_written; }

    // The view of value `name` as this run sees it: its own, a lent one, a constant, or an outer value.
    bool find(const std::string& name, TensorView& view);

    // Runs op i; false with `why` set when it cannot run exactly.
    bool run(std::size_t i, std::string& why);

    // Runs every op in order (Constants are among the branch's constants); false with `why` set
    // when one cannot run or the run is cancelled.
    bool runAll(std::string& why);

private:
    // Where value `name` of `need` bytes goes: its planned offset, or null (an allocation of its
    // own: no plan, a value of 0 bytes, or a fallback, noted). `kind`: "a list", "an optional" (never placed), or "".
    std::byte* slotFor(const std::string& name, Bytes need, const char* kind = "");
    // Output `name` of run-time shape `shape`: at its slot when it fits, else its own allocation.
    Value hold(const std::string& name, DType dtype, Shape shape);
    // Moves a value of its own that an op wrote (a data-dependent op into its bound, a nested
    // graph's result) to its slot when it fits.
    void settle(const std::string& name, Value& value);
    bool isList(const std::string& name) const { return m_branch.sequences.count(name) > 0; }
    bool isOptional(const std::string& name) const { return m_branch.optionals.count(name) > 0; }

    // SequenceInsert at the end of a list that only this op reads (the list a Loop body builds, one
    // item per iteration): the list grows in place, so a loop appending n items copies O(n) bytes
    // instead of O(n^2), and counts as written only what it adds. False when the call is not such an
    // append (a later op or nested graph may read the list, the op names a position, the types
    // differ, the list is full): the sequence kernel then writes a new list, or refuses.
    // Decided before the list is viewed: a view copies its item shapes.
    bool appendInPlace(std::size_t i);

    // Whether the call reads an optional (`inNames`) or writes one (`outNames`).
    bool touchesOptional(const std::vector<std::string>& inNames, const std::vector<std::string>& outNames) const;

    // Whether the call reads a sequence or writes one (`outNames`).
    bool touchesSequence(const KernelCall& call, const std::vector<std::string>& outNames) const;

    const Branch& m_branch;
    const OuterLookup& m_outer;
    Bytes& m_heldBytes;
    const CancelToken& m_cancel;
    GraphPlace m_place;
    Bytes m_held = 0;
    Bytes m_written = 0;
    std::map<std::string, Value> m_values;
    std::map<std::string, TensorView> m_lent;
    std::int64_t m_empty = 0;
};

} // namespace core::exec::graphrun
