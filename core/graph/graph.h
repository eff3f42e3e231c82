// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "util/expected.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace core {

using Bytes = std::int64_t; // sizes and offsets, always bytes
using Step = std::int32_t;  // position of an op in the schedule (0-based)
using TensorIndex = std::int32_t;
using OpIndex = std::int32_t;

enum class DType {
    Undefined, Float32, Float16, BFloat16, Float64, Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64,
    Bool, Complex64, Complex128, String, Float8
};

// Bytes per element; 0 for Undefined. String counts as a pointer-sized handle (8 bytes).
Bytes dtypeBytes(DType dtype);
std::string_view dtypeName(DType dtype);           // "float32", "int64", ...
std::optional<DType> parseDType(std::string_view); // accepts dtypeName() spellings and ONNX names ("FLOAT")

// Workspace: temporary memory an op needs only while it runs (a Conv's im2col columns); never a
// tensor's kind, only a planned buffer's (ProblemOptions::workspaces).
enum class TensorKind { Input, Output, Weight, Activation, Persistent, Workspace };
constexpr int kKindCount = 6;
std::string_view kindName(TensorKind kind); // "input", "output", "weight", "activation", "persistent", "workspace"
std::optional<TensorKind> parseKind(std::string_view);

constexpr Bytes kUnknownSize = -1;

struct Tensor {
    std::string name;
    DType dtype = DType::Undefined;
    std::vector<std::int64_t> shape; // -1 marks an unknown dimension
    bool rankKnown = false;          // false: even the rank is unknown
    Bytes size = kUnknownSize;       // element count × dtypeBytes, or kUnknownSize
    TensorKind kind = TensorKind::Activation;
    bool estimated = false; // size is an upper bound (data-dependent shape)
    // An ONNX sequence of tensors of `dtype` (shape unknown): `size` is an estimate of its elements'
    // bytes, so it is estimated too. An executor packs the elements in order from the start of its
    // room and keeps their shapes beside it.
    bool sequence = false;
    // A sequence whose every element's shape import knew (a list built by an unrolled Loop, a split
    // into known pieces): its size is exact, not a bound. It stays `estimated`, which for a sequence
    // also says that its shapes are known only at run time; see sizeIsBound.
    bool listExact = false;
    // An ONNX optional: it holds its element (a tensor, or a sequence when `sequence`) or nothing.
    // Planned as its element's room, which is then an upper bound, so it is estimated too; a run
    // knows whether it holds anything only once its producer has run.
    bool optional = false;
    // Contents of a small integer constant (a shape argument such as Reshape's), when known; empty otherwise.
    // Lets an exporter write a model whose shape inference gives the same shapes. On a graph input:
    // the values given by file that sized the plan (ShapeBindings::inputValues); a run needs them.
    std::vector<std::int64_t> values;
    // A sequence graph input given by file: its elements' shapes, which sized the plan; a run needs them.
    std::vector<std::vector<std::int64_t>> items;
    // A captured training step's role of the tensor (graph/capture.h: "parameter", "gradient", ...)
    // and the module path that made it ("layer1.0.conv1", "" at top level); empty when not captured.
    std::string category;
    std::string module;
};

// An op attribute as a model file states it: integers, floats or strings (one of them in use).
struct Attribute {
    std::vector<std::int64_t> ints;
    std::vector<float> floats;
    std::string text; // ONNX STRING
    bool list = false; // the file states a list (INTS, FLOATS, STRINGS), even of one element
    std::vector<std::string> strings; // ONNX STRINGS, each element as it is (it may hold ',' or be empty)
    bool operator==(const Attribute&) const = default;
};

struct Graph;

// One graph of a control-flow op (an If's branch, a Loop's, Scan's or SequenceMap's body) as a graph
// of its own, for planning the memory the op uses inside (liveness/lifetimes.h: NestedPlan). Its
// tensors are the values it defines: its formal inputs (kind Input: a Loop's iteration number,
// condition and carried values, a Scan's states and slices), its initializers and Constant outputs
// (Weight), what its ops compute, and its results (Output); the outer values it reads are not among
// them, so its ops list only the inputs it defines (inputSlots keep their ONNX slots). Sizes are one
// iteration's.
struct OpBody {
    std::string attribute;              // "then_branch", "else_branch", "body"
    std::shared_ptr<const Graph> graph; // never null
};

struct Op {
    std::string name;
    std::string type;   // ONNX op type ("Conv", "MatMul", ...)
    std::string domain; // empty: the default ONNX domain
    std::map<std::string, Attribute> attributes; // scalar and list attributes (kernel_shape, strides, axis, ...)
    std::vector<TensorIndex> inputs;  // optional inputs left out
    std::vector<TensorIndex> outputs;
    // The ONNX slot of each of `inputs` (`outputs`) when an optional one before a given one is left
    // out: Clip(x, "", max) has inputs {x, max} and inputSlots {0, 2}; LSTM -> ("", Y_h) has
    // outputSlots {1}. Empty when they fill slots 0..n-1. Strictly increasing, one per input (output).
    std::vector<int> inputSlots;
    std::vector<int> outputSlots;
    // Outer tensors read by a subgraph (If/Loop/Scan body): they live as long as the op runs.
    std::vector<TensorIndex> captured;
    // A fused op (type "Fused", made by the fuse strategy): the ops it runs, in order, each with its own
    // type and attributes. Body ops read the fused op's inputs and earlier body ops' outputs; the last
    // body op writes the fused op's outputs. Every other body output is internal (fusedInternals): no op
    // of the graph reads or writes it, it has no buffer, and an executor keeps it in kernel scratch.
    // Empty for every other op. Exporters write the fused op alone (its body is not part of ONNX).
    std::vector<Op> body;
    // A captured training step's module path and phase ("forward", "backward", "optimizer";
    // graph/capture.h); empty when not captured.
    std::string module;
    std::string phase;
    // A control-flow op's graphs (If: then, else; Loop, Scan, SequenceMap: body), each sized by import;
    // empty for other ops and for a control-flow op some value of whose graphs import could not size.
    std::vector<OpBody> bodies;
};

// Whether t's planned size is an upper bound the data may not fill (what views hatch and reports
// count as bounds): an estimated tensor, except a list whose every element's shape is known.
inline bool sizeIsBound(const Tensor& t) { return t.estimated && !t.listExact; }

// The strings of a string attribute: a STRINGS list as it is, a single STRING as a list of one.
std::vector<std::string> attributeStrings(const Attribute& a);

// The ONNX slot of op.inputs[k] (op.outputs[k]): Op::inputSlots (outputSlots), else k.
int inputSlot(const Op& op, std::size_t k);
int outputSlot(const Op& op, std::size_t k);
// Clears slots that are just 0..n-1, the form Op keeps when nothing before a given one is left out.
void trimSlots(std::vector<int>& slots);

// Body outputs of a fused op that the op itself does not write, in body order; empty for other ops.
std::vector<TensorIndex> fusedInternals(const Op& op);

// Replaces tensor `from` by `to` wherever `op` names it: inputs, outputs, captured tensors and the
// body of a fused op (strategies that redirect reads or clone ops keep the body consistent this way).
void replaceTensor(Op& op, TensorIndex from, TensorIndex to);

struct Graph {
    std::string name;
    std::vector<Tensor> tensors;
    std::vector<Op> ops; // in model order
    std::vector<TensorIndex> inputs;
    std::vector<TensorIndex> outputs;
    std::vector<std::string> notes; // facts the report should mention (folded ops, subgraphs, estimates)
    // The operator set of each domain ("" for ONNX's own) the model file imports, so an export
    // keeps the ops' versions (Unsqueeze's axes attribute before opset 13); empty when not from ONNX.
    std::map<std::string, std::int64_t> opsets;
    // Where a captured graph came from (framework, torch_version, model, batch, optimizer, ...):
    // numbers kept as their JSON text. Empty when not captured.
    std::map<std::string, std::string> capture;
    // Ifs whose condition import knew, replaced by the branch they take (its ops named "<If>/<node>"),
    // in the order import inlined them: whoever reads the model file again (the executor's weights)
    // inlines the same. Empty when not from ONNX or no If was inlined.
    struct InlinedIf {
        std::string op;
        bool thenBranch = true;
        bool operator==(const InlinedIf&) const = default;
    };
    std::vector<InlinedIf> inlinedIfs;

    std::optional<TensorIndex> findTensor(std::string_view name) const;
};

// The contents of a small graph input given by file: raw little-endian elements of `dtype`.
struct InputValue {
    DType dtype = DType::Undefined;
    std::vector<std::int64_t> shape;
    std::vector<std::byte> data;
    bool operator==(const InputValue&) const = default;
};

// Values the user gives for what the model leaves open (--dim, --input-shape, --input files).
struct ShapeBindings {
    std::map<std::string, std::int64_t> dims;                      // symbolic dimension name -> value
    std::map<std::string, std::vector<std::int64_t>> inputShapes; // graph input name -> full shape
    std::map<std::string, Bytes> sequenceBytes; // graph input that is a sequence -> the bytes of its elements
    std::map<std::string, std::vector<std::vector<std::int64_t>>> sequenceElements; // ... -> its elements' shapes
    // Graph input -> its values, for the shapes computed from them (a window's size, a loop's trip
    // count). Ops that read them still run: the plan holds for these values only.
    std::map<std::string, InputValue> inputValues;
    bool operator==(const ShapeBindings&) const = default; // the same sizes and values: the same import
};

// Element count × element size, or kUnknownSize when a dimension is unknown, negative or the product overflows.
Bytes tensorBytes(DType dtype, const std::vector<std::int64_t>& shape);

// "uint8 1x96x112x112": element type and shape with `times` between dimensions; ? for a dimension
// import could not infer, "float32 ?" when even the rank is unknown, "int64 scalar" for rank 0,
// "float32 sequence" for a sequence; "optional " before either for an optional.
std::string tensorTypeText(const Tensor& t, std::string_view times = "x");

// Sets Tensor::size from dtype and shape for every tensor whose size is still unknown.
void computeSizes(Graph& graph);

// Tensors the planner needs a size for (not weights) that have none. Empty when all are sized.
std::vector<TensorIndex> unsizedTensors(const Graph& graph);

// ONNX's spelling of an op's input (output) list: tensor names in slot order, "" where one is left out.
std::vector<std::string> slotNames(const Graph& graph, const std::vector<TensorIndex>& list, const std::vector<int>& slots);

// For each tensor, the op that produces it, or -1 (graph input, weight).
std::vector<OpIndex> producers(const Graph& graph);

} // namespace core
