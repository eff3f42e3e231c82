// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to core/onnx: what the importer knows about one ONNX value while it infers shapes.

#include "graph/graph.h"
#include "graph/shapemath.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace core::onnxdetail {

// Largest tensor the importer evaluates at import time (elements). Shape arithmetic is far smaller;
// the limit keeps folding cheap and bounds the memory a hostile model can make us allocate.
constexpr std::int64_t kFoldLimit = 1 << 16;

// A small tensor whose value is known at import time. Integer and bool element types keep their
// values in `ints` (exact for int64 sentinels such as INT64_MAX in Slice ends), floating types in `reals`.
struct ConstValue {
    int elemType = 0; // onnx::TensorProto_DataType
    Dims dims;
    std::vector<std::int64_t> ints;
    std::vector<double> reals;
    // Read from, or computed from, a graph input's given value (ShapeBindings::inputValues): it
    // sizes what is computed from it, but the ops computing it still run.
    bool given = false;

    bool isReal() const;
    std::int64_t count() const { return isReal() ? std::int64_t(reals.size()) : std::int64_t(ints.size()); }
    double real(std::int64_t i) const { return isReal() ? reals[i] : double(ints[i]); }
    std::int64_t integer(std::int64_t i) const;
};

enum class ValueKind { Unknown, Tensor, Sequence, Map };

// Best knowledge about one value. For a sequence `dims` describe one element and `bytes` the whole.
struct ValueFacts {
    ValueKind kind = ValueKind::Unknown;
    int elemType = 0;
    bool rankKnown = false;
    Dims dims;
    std::int64_t bytes = -1;  // total size when the dims cannot tell it (sequences, maps, shapeless estimates)
    std::int64_t length = -1; // a sequence's element count when known; `dims` then fit every element
    // A sequence's elements' dims in order, each known exactly, when they differ (a torch list of a
    // class token and the patch tokens); meaningful only when elementsKnown().
    std::vector<Dims> elementDims;
    bool estimated = false;   // an upper bound, not the exact size
    bool optional = false;    // an optional-typed value (sized as its element)
    std::shared_ptr<const ConstValue> value; // folded value

    bool dimsKnown() const;  // known rank and every dim known (a tensor's, or a sequence's elements')
    bool fullyKnown() const; // a tensor whose dims are known
    bool elementsKnown() const; // a sequence of known length whose every element's dims elementDims holds
    int knownCount() const;  // how much is known; grows monotonically as inference progresses
};

// ONNX element type -> DType; nullopt for types MemPlan does not know.
std::optional<DType> dtypeFromOnnx(int elemType);
int onnxFromDType(DType dtype);
bool isIntegerType(int elemType); // integer and bool types (folded in ConstValue::ints)
bool isRealType(int elemType);    // float16/bfloat16/float/double
std::string dimsText(const Dims& dims); // "[1,3,224,224]", "?" for unknown dims

// Bytes of the value (tensor from dims, sequence/map from `bytes`), -1 when unknown.
std::int64_t factsBytes(const ValueFacts& facts);

// Gives `facts` element type `elemType`, keeping its element count: a value known only by its bytes
// (unknown rank) has them scaled by the new element size, or unknown when either size is.
void retypeFacts(ValueFacts& facts, int elemType);

// Fills what `into` does not know from `from`. Returns true when `into` learnt something.
bool mergeFacts(ValueFacts& into, const ValueFacts& from);

// Facts from a declared or inferred ONNX type (tensor, sparse tensor, sequence, optional, map).
ValueFacts factsFromType(const onnx::TypeProto& type);
// Writes tensor facts into a TypeProto (elem type + shape; unknown dims left without a value).
void factsToType(const ValueFacts& facts, onnx::TypeProto& type);

// Shape and type of an initializer or Constant tensor, without reading its data.
ValueFacts factsFromTensor(const onnx::TensorProto& tensor);
// The value of a small tensor with inline data; nullopt for external data, strings, sizes above
// `limit` elements or data that does not match the dims.
std::optional<ConstValue> readConst(const onnx::TensorProto& tensor, std::int64_t limit = kFoldLimit);
void writeConst(const ConstValue& value, onnx::TensorProto& tensor);

// Attribute access on a node; defaults when absent.
const onnx::AttributeProto* findAttr(const onnx::NodeProto& node, const std::string& name);
std::int64_t attrInt(const onnx::NodeProto& node, const std::string& name, std::int64_t fallback);
float attrFloat(const onnx::NodeProto& node, const std::string& name, float fallback);
std::string attrString(const onnx::NodeProto& node, const std::string& name, const std::string& fallback = {});
std::optional<std::vector<std::int64_t>> attrInts(const onnx::NodeProto& node, const std::string& name);
std::optional<std::vector<float>> attrFloats(const onnx::NodeProto& node, const std::string& name);

} // namespace core::onnxdetail
