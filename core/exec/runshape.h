// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Run-time shapes: what the CPU executor needs to run a model whose sizes depend on its data
// (NonZero, NonMaxSuppression, Compress, and everything computed from them). Import sizes such
// tensors by an upper bound (Tensor::estimated) and the plan reserves that bound; at run time each
// of them holds a shape that is only known once its producer has run.
// - Ops whose output shapes follow from their inputs' shapes and the values of their shape
//   arguments (Reshape's shape, TopK's k, Slice's starts, ConstantOfShape's input, ...) get them
//   from runtimeShapes() before their kernel runs.
// - Data-dependent ops have a sizing kernel: it writes its outputs packed from the start of the
//   planned room (row-major for the shape it reports) and says which shapes it wrote.
// Both work on views whose inputs already carry run-time shapes; neither ever writes past the
// planned room (the caller checks each shape against it).

#include "exec/kernels.h"
#include "graph/shapemath.h"

namespace core::exec {

// Output shapes of `call` (one per entry of call.out) from its inputs' shapes and the values of its
// integer shape arguments. False when the op is not covered or its inputs contradict each other.
bool runtimeShapes(const KernelCall& call, std::vector<Shape>& shapes);

// A data-dependent op's kernel: call.out views hold the planned room (count = the bound's elements);
// on success it has written every output packed from the start and set shapes[k] for each of them.
// Returns false, shapes unspecified, when the configuration is not supported or an output would not
// fit its room.
using SizingKernel = bool (*)(const KernelCall& call, std::vector<Shape>& shapes);

// The sizing kernel of an ONNX op type (NonZero, Compress, NonMaxSuppression, Unique), or nullptr.
SizingKernel findSizingKernel(const std::string& opType);

// A sequence op's kernel (ONNX sequences: exec/kernels_sequence.cpp). Sequence inputs arrive as
// views with their items; each output is either a tensor (shapes[k] set, items[k] empty) or a
// sequence (items[k] its elements' shapes, shapes[k] = { total elements }), written packed from the
// start of its room. False, nothing specified, when the call is not supported or does not fit.
using SequenceKernel = bool (*)(const KernelCall& call, std::vector<Shape>& shapes, std::vector<std::vector<Shape>>& items);

// The most items a list a sequence op writes may hold. Every sequence op writes a new list (only a
// Loop body's append to a list nothing else reads grows it in place: exec/branch.h), so a loop that
// appends n items copies O(n^2) bytes and item shapes: a loop of 27 000 iterations appending 64-byte
// rows took minutes (and items of no elements never outgrow the room at all).
constexpr std::size_t kMostListItems = 4096;

// The kernel of SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase, SequenceAt,
// SequenceLength, SplitToSequence, ConcatFromSequence, and of Identity, SwapOut and SwapIn when the
// call reads or writes a sequence (`touchesSequence`: they copy tensors with their own kernels);
// nullptr for any other op.
SequenceKernel findSequenceKernel(const std::string& opType, bool touchesSequence);

// An optional op's kernel (ONNX optionals, exec/kernels_optional.cpp): Optional,
// OptionalGetElement, OptionalHasElement, and Identity when it reads or writes an optional
// (`touchesOptional`). An input view without data is an optional holding nothing (Optional's input
// left out is the same). On success out[0] holds the value packed from the start of its room,
// `shape` and `items` as a sequence kernel gives them, and `none` says the output is an optional
// holding nothing (shape { 0 }, nothing written). False, nothing specified, when the call is not
// supported or does not fit; `why` is then set when the input holds nothing to get.
bool isOptionalOp(const std::string& opType, bool touchesOptional);
bool runOptionalOp(const KernelCall& call, Shape& shape, std::vector<Shape>& items, bool& none, std::string& why);

// Byte offset of every item of sequence view s, in one pass (a list may hold many items).
std::vector<std::int64_t> itemOffsets(const TensorView& s);

} // namespace core::exec
