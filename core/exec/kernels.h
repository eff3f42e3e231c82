// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to core/exec: CPU kernels. A kernel reads its inputs and writes its outputs through views
// into memory the executor owns (the arena, the weight region). Contracts every kernel keeps:
// - shapes come from the graph (import inferred them); kernels never resize anything;
// - the kernel returns false, before writing anything, when it has no exact implementation for the
//   configuration (dtype, rank, attribute); the executor then runs the synthetic kernel;
// - inputs are never written; outputs may not overlap inputs (a valid plan guarantees that);
// - single-threaded and deterministic, so two runs with the same inputs give the same bits;
// - robust to nonsense data (indices, shape arguments from synthetic kernels): the Gather and Scatter
//   families refuse indices out of range (refuseIndex: false, as the ONNX spec makes them an error),
//   other index arguments wrap, slices clamp; no read or write ever leaves a tensor.

#include "graph/graph.h"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace core::exec {

using Shape = std::vector<std::int64_t>;

struct TensorView {
    DType dtype = DType::Undefined;
    Shape shape;
    std::byte* data = nullptr; // nullptr: an optional input left out
    std::int64_t count = 0;    // elements
    // A sequence: its elements lie packed in order from `data` (each of `dtype`), with these shapes;
    // `shape` is then { total elements } and `count` that total.
    bool sequence = false;
    std::vector<Shape> items;
    // Rank 4 stored N,H,W,C (exec/channelslast.h); only oneDNN's kernels see such a view: runKernel
    // gives any other kernel N,C,H,W copies.
    bool channelsLast = false;
    // A weight: the same contents for the whole run (oneDNN may keep a copy in its own layout).
    bool constant = false;

    bool present() const { return data != nullptr; }
    int rank() const { return int(shape.size()); }
    float* f32() const { return reinterpret_cast<float*>(data); }
    std::int64_t* i64() const { return reinterpret_cast<std::int64_t*>(data); }
    Bytes bytes() const { return count * dtypeBytes(dtype); }
};

struct KernelCall {
    const Op* op = nullptr;
    std::vector<TensorView> in; // by ONNX input slot; absent optional inputs have data == nullptr
    std::vector<TensorView> out;
    // The op's planned workspace (ProblemOptions::workspaces): at least workspaceFloats(*this)
    // floats, in memory the executor placed for this step. Null: the kernel takes its columns or
    // oneDNN's scratchpad from scratch().
    float* workspace = nullptr;
    // The ONNX output slot of each entry of `out` when the op leaves an optional output out before a
    // present one (LSTM(...) -> ("", Y_h)); empty: out[k] is slot k.
    std::vector<int> outSlots;
    int outSlot(std::size_t k) const { return k < outSlots.size() ? outSlots[k] : int(k); }

    bool has(std::size_t slot) const { return slot < in.size() && in[slot].present(); }
    std::int64_t attrInt(const std::string& name, std::int64_t fallback) const;
    float attrFloat(const std::string& name, float fallback) const;
    std::string attrText(const std::string& name, const std::string& fallback = {}) const;
    const std::vector<std::int64_t>* attrInts(const std::string& name) const; // nullptr when absent
    // The integer list `name` when it has exactly n entries, else n copies of `fallback` (strides, pads, ...).
    std::vector<std::int64_t> attrIntsOr(const std::string& name, std::int64_t fallback, std::size_t n) const;
    bool allFloat() const; // every present input and every output is float32
};

// Returns true when it computed every output exactly; false (nothing written) when not supported.
using Kernel = bool (*)(const KernelCall&);

// The real kernel for an ONNX op type (default domain), or nullptr.
Kernel findKernel(const std::string& opType);
// The real kernel for an op type of `domain` ("" or "ai.onnx": the default domain;
// "ai.onnx.preview.training": the optimizers), or nullptr.
Kernel findKernel(const std::string& domain, const std::string& opType);

// Runs `kernel` on `call`. A call with float16 or bfloat16 inputs or outputs (other than a Cast's)
// runs on float32 copies of them, its float outputs rounded back to nearest even; the copies count
// as kernel scratch, in one staging buffer reused from call to call. A pointwise op (Add, Clip,
// Sigmoid, ...) on large tensors runs a slice at a time, so its copies hold a slice. The float32
// kernels thereby serve half-precision models, more precisely than arithmetic in half precision
// would.
bool runKernel(Kernel kernel, const KernelCall& call);

// Reads every byte of every input and writes every output with a deterministic function of them
// (float outputs in [-1, 1), integer outputs in [0, 4)). Used for ops without a real kernel.
void syntheticKernel(const KernelCall& call);

// A kernel that refuses its input data (an index out of range), not its configuration, says why
// here and returns false. The executor takes the fault after the op (takeDataFault): an op whose
// inputs were all computed by real kernels then fails the run, naming the op, while one fed by a
// synthetic kernel's values only runs synthetic. One fault per thread: the first since the last take.
struct DataFault {
    const Op* op = nullptr; // the op whose kernel refused (set by the op call, exec/opcall.cpp)
    std::string why;        // "index 7 at element 1 is outside [-3, 2]"
    int indicesSlot = -1;   // the input slot holding the bad index, -1 when none
    int dataSlot = -1, axis = -1; // the input and axis the index addresses, -1 when none
};
bool refuseData(DataFault fault);
// The fault of index `i`, element `n` of input `indicesSlot`, outside [-dim, dim-1] on `axis` of
// input `dataSlot` (false, for `return refuseIndex(...)`).
bool refuseIndex(std::int64_t i, std::int64_t n, std::int64_t dim, int indicesSlot, int dataSlot, int axis);
// The fault since the last take (why empty when none); clears it.
DataFault takeDataFault();
// Sets the op of a pending fault that has none yet (the op call that ran the refusing kernel).
void claimDataFault(const Op& op);

// Integer value i of an int32/int64 tensor (shape arguments, indices), 0 for other dtypes.
std::int64_t intAt(const TensorView& t, std::int64_t i);
// Element i of a float32 or float64 tensor as double; storeReal writes one (rounded to nearest for
// float32). For kernels that compute in double precision whatever the tensors hold.
double realAt(const TensorView& t, std::int64_t i);
void storeReal(const TensorView& t, std::int64_t i, double value);
// Strides, dilations and pads (begins, then ends) of a 1-D or 2-D pooling or Conv window over
// spatial sizes `in` -> `out`, auto_pad resolved as ONNX does for forward windows. False for an
// unknown auto_pad. The CPU pooling kernels and the CUDA executor's windows share it.
struct WindowAttrs {
    std::vector<std::int64_t> strides, dilations, pads;
};
bool windowAttrs(const KernelCall& c, const Shape& in, const Shape& out, const Shape& kernel, WindowAttrs& w);

// MatMul's operands under numpy rules: a 1-D A promoted to [1, K], a 1-D B to [K, 1], both padded
// with leading 1s to one rank; `y` the result's dims at that rank. The CPU kernels and oneDNN's
// primitive share it. False when the inner dimensions differ or a batch dimension is neither equal
// nor 1 (sizes of 0 pass: the caller decides).
struct MatMulDims {
    Shape a, b, y;
    std::int64_t m = 0, k = 0, n = 0;
    std::int64_t batches = 1; // product of y's batch dimensions
    // B is one matrix for every batch and A has every batch of its own (x @ W with x [..., M, K]):
    // the product is one GEMM over batches·M rows, which keeps M large when it is 1 itself.
    bool oneGemm = false;
};
bool matmulDims(Shape a, Shape b, MatMulDims& dims);

// Slice's first index and step on every axis of its input (starts clamped as ONNX clamps them;
// untouched axes 0 and 1), from its inputs (opset 10+) or attributes. False without starts.
bool sliceStarts(const KernelCall& c, Shape& first, Shape& step);

// Row-major strides of `shape`.
Shape stridesOf(const Shape& shape);
// Normalises a possibly negative axis; clamps into [0, rank).
int normAxis(std::int64_t axis, int rank);

// C[M,N] = A[M,K] · B[K,N] (+= when accumulate), row-major with leading dimensions lda, ldb, ldc.
// bTransposed: `b` holds B transposed ([N,K], leading dimension ldb), read in place: the same sums
// in the same order as on a transposed copy, without the copy (Gemm's transB weights).
void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
    float* c, std::int64_t ldc, bool accumulate, bool bTransposed = false);

// Floats of im2col columns the Conv kernel needs for this call: the input channels of one group ×
// kernel window × output plane. 0 for a direct convolution (1x1, stride 1, no padding: the GEMM reads
// the input itself) and for a call the Conv kernel would not run (not float32, not 1-D/2-D/3-D, shapes that
// do not fit). Reads shapes, dtypes and attributes only, never data; the CUDA executor's Conv needs the
// same columns, so one planned workspace serves both executors.
std::int64_t convColumnFloats(const KernelCall& call);
// Floats of workspace the CPU executor uses for this call: the workspace of oneDNN's primitive
// when oneDNN takes the call (exec/onednn.h: Conv, ConvTranspose, MatMul, Gemm, and the pointwise,
// pooling and normalization ops it runs), else what the own kernel uses (ownWorkspaceFloats).
std::int64_t workspaceFloats(const KernelCall& call);
// Floats of workspace the own kernels use: a Conv's columns (convColumnFloats); a ConvTranspose's
// transposed weights of one group followed by its columns; 0 for every other op. (The CUDA
// ConvTranspose sums each output directly and leaves its workspace unused.)
std::int64_t ownWorkspaceFloats(const KernelCall& call);

// Scratch memory for kernels (im2col columns, transposed operands): at least `floats` elements,
// reused between calls (slots 0 to 3, so one kernel can hold up to four). scratchHighWater() is the most
// bytes ever held, counted in the run's peak.
float* scratch(int slot, std::int64_t floats);
Bytes scratchHighWater();
// Raises the high-water mark to `bytes` held outside the scratch slots (an If branch's values).
void noteScratchBytes(Bytes bytes);
// Raises the high-water mark to `bytes` a kernel holds in its own buffers (widened half-precision
// copies, a Fourier transform's tables) on top of what the scratch slots hold now.
void noteKernelBuffers(Bytes bytes);
// Frees the scratch and restarts its high-water mark: each run measures its own.
void releaseScratch();

// Family tables, merged by findKernel.
void addElementwiseKernels(std::map<std::string, Kernel>& table);
void addLinearKernels(std::map<std::string, Kernel>& table);
void addPoolNormKernels(std::map<std::string, Kernel>& table);
void addPoolKernels(std::map<std::string, Kernel>& table);
void addShapeKernels(std::map<std::string, Kernel>& table);
void addIndexKernels(std::map<std::string, Kernel>& table);
void addEinsumKernels(std::map<std::string, Kernel>& table);
void addRecurrentKernels(std::map<std::string, Kernel>& table);
void addSelectKernels(std::map<std::string, Kernel>& table);
void addNormalizeKernels(std::map<std::string, Kernel>& table);
void addQuantizeKernels(std::map<std::string, Kernel>& table);
void addIntegerKernels(std::map<std::string, Kernel>& table);
void addSampleKernels(std::map<std::string, Kernel>& table);
void addLossKernels(std::map<std::string, Kernel>& table);
void addSignalKernels(std::map<std::string, Kernel>& table);
void addTextKernels(std::map<std::string, Kernel>& table);
void addOptimizerKernels(std::map<std::string, Kernel>& table); // domain ai.onnx.preview.training

} // namespace core::exec
