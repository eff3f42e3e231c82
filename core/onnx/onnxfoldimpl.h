// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to the folding sources (onnxfold.cpp, onnxfoldlayout.cpp): helpers on ConstValue and the
// per-family fold functions. Each fold function returns nullopt when it cannot evaluate the node.

#include "onnx/onnxfold.h"
#include "onnx/onnxshapemath.h"

#include <optional>
#include <string>
#include <vector>

namespace core::onnxdetail::fold {

using Values = std::vector<ConstValue>;

const ConstValue* valueOf(const std::vector<const ValueFacts*>& inputs, std::size_t i);
ConstValue emptyLike(int elemType, Dims dims);
void push(ConstValue& v, double real, std::int64_t integer);
void pushFrom(ConstValue& out, const ConstValue& in, std::int64_t i); // appends element i of `in`
std::int64_t wrapTo(int elemType, std::int64_t v);                     // C-style narrowing
std::optional<ConstValue> castTo(const ConstValue& in, int to);
std::optional<Values> asValues(std::optional<ConstValue> v);
ConstValue reshaped(ConstValue v, Dims dims);
// Axes from the "axes" attribute or from input `inputIndex`; empty when neither is given;
// nullopt when the input is present but not constant.
std::optional<std::vector<std::int64_t>> axesFrom(const onnx::NodeProto& node, const std::vector<const ValueFacts*>& inputs,
                                                  std::size_t inputIndex, bool& present);

// Row-major strides of `dims` aligned to the last `rank` dims of an output; broadcast dims get 0.
inline std::vector<std::int64_t> broadcastStrides(const Dims& dims, std::size_t rank)
{
    std::vector<std::int64_t> strides(rank, 0);
    std::int64_t stride = 1;
    for (std::size_t k = 0; k < dims.size(); ++k) {
        const std::size_t in = dims.size() - 1 - k;
        const std::size_t out = rank - 1 - k;
        strides[out] = dims[in] == 1 ? 0 : stride;
        stride *= dims[in];
    }
    return strides;
}

// Calls f(outputIndex, inputIndices) for every element of the broadcast output.
template <class F>
bool forEachBroadcast(const std::vector<const ConstValue*>& ins, Dims& outDims, F f)
{
    std::vector<Dims> shapes;
    for (auto* v : ins)
        shapes.push_back(v->dims);
    auto dims = broadcastDims(shapes);
    if (!dims)
        return false;
    outDims = *dims;
    const std::int64_t n = elementCount(outDims);
    if (n < 0 || n > kFoldLimit)
        return false;
    const std::size_t rank = outDims.size();
    std::vector<std::vector<std::int64_t>> strides;
    for (auto* v : ins)
        strides.push_back(broadcastStrides(v->dims, rank));
    std::vector<std::int64_t> index(rank, 0), offsets(ins.size(), 0);
    for (std::int64_t k = 0; k < n; ++k) {
        f(k, offsets);
        for (std::size_t d = rank; d-- > 0;) {
            ++index[d];
            for (std::size_t i = 0; i < ins.size(); ++i)
                offsets[i] += strides[i][d];
            if (index[d] < outDims[d])
                break;
            for (std::size_t i = 0; i < ins.size(); ++i)
                offsets[i] -= strides[i][d] * index[d];
            index[d] = 0;
        }
    }
    return true;
}


std::optional<Values> foldGather(const onnx::NodeProto& node, const ConstValue& data, const ConstValue& indices);
std::optional<Values> foldSlice(const onnx::NodeProto& node, const std::vector<const ValueFacts*>& inputs, const ConstValue& data);
std::optional<Values> foldConcat(const onnx::NodeProto& node, const std::vector<const ConstValue*>& ins);
std::optional<Values> foldTranspose(const onnx::NodeProto& node, const ConstValue& in);
std::optional<Values> foldReduce(const std::string& op, const onnx::NodeProto& node,
                                 const std::vector<const ValueFacts*>& inputs, const ConstValue& in);
std::optional<Values> foldSplit(const onnx::NodeProto& node, const std::vector<const ValueFacts*>& inputs, const ConstValue& in);
// Reshape, Squeeze, Unsqueeze, Flatten, Expand, Tile.
std::optional<Values> foldReshaping(const std::string& op, const onnx::NodeProto& node,
                                    const std::vector<const ValueFacts*>& inputs, const ConstValue& x);

} // namespace core::onnxdetail::fold
