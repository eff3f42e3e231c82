// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "onnx/onnxloadfold.h"

#include <algorithm>

namespace core::onnxdetail {

LoadFolds foldAtLoad(Graph& g, const std::vector<bool>& alias, const std::vector<bool>& computed)
{
    const std::size_t tensors = g.tensors.size();
    std::vector<bool> captured(tensors, false);
    for (const auto& op : g.ops)
        for (const auto t : op.captured)
            captured[std::size_t(t)] = true;
    std::vector<TensorIndex> source(tensors);
    for (std::size_t t = 0; t < tensors; ++t)
        source[t] = TensorIndex(t);
    LoadFolds folds;
    std::vector<bool> dropOp(g.ops.size(), false), dropTensor(tensors, false), touched(tensors, false);
    for (std::size_t o = 0; o < g.ops.size(); ++o) {
        const auto& op = g.ops[o];
        if (o < alias.size() && alias[o] && op.inputs.size() == 1 && op.outputs.size() == 1
            && !captured[std::size_t(op.outputs[0])]) {
            dropOp[o] = true;
            dropTensor[std::size_t(op.outputs[0])] = true;
            source[std::size_t(op.outputs[0])] = op.inputs[0];
            ++folds.aliases;
        }
    }
    auto resolve = [&](TensorIndex t) {
        for (std::size_t hops = 0; source[std::size_t(t)] != t && hops < tensors; ++hops) // alias of an alias
            t = source[std::size_t(t)];
        return t;
    };
    for (std::size_t o = 0; o < g.ops.size(); ++o)
        if (!dropOp[o] && o < computed.size() && computed[o]) {
            dropOp[o] = true;
            // A Constant's weight stays even unread: only what removed ops read or wrote may go.
            const bool constant = g.ops[o].type == "Constant";
            for (const auto* list : { &g.ops[o].inputs, &g.ops[o].outputs })
                for (const auto t : *list)
                    touched[std::size_t(resolve(t))] = touched[std::size_t(resolve(t))] || !constant;
            ++(g.ops[o].type == "Constant" ? folds.constants : folds.computed);
        }

    // Readers left per tensor; then, latest op first (node order is topological), every op whose
    // outputs only removed ops read goes too, and so on up the chain (the Constants that fed shape
    // arithmetic, float steps whose integer result became a constant).
    std::vector<int> readers(tensors, 0);
    for (std::size_t o = 0; o < g.ops.size(); ++o)
        if (!dropOp[o])
            for (const auto* list : { &g.ops[o].inputs, &g.ops[o].captured })
                for (const auto t : *list)
                    ++readers[std::size_t(resolve(t))];
    for (const auto t : g.outputs)
        ++readers[std::size_t(resolve(t))];
    for (std::size_t o = g.ops.size(); o-- > 0;) {
        const auto& op = g.ops[o];
        if (dropOp[o] || op.outputs.empty()
            || !std::all_of(op.outputs.begin(), op.outputs.end(),
                            [&](TensorIndex t) { return touched[std::size_t(t)] && readers[std::size_t(t)] == 0; }))
            continue;
        dropOp[o] = true;
        ++folds.unread;
        for (const auto* list : { &op.inputs, &op.captured })
            for (const auto t : *list) {
                --readers[std::size_t(resolve(t))];
                touched[std::size_t(resolve(t))] = true;
            }
    }
    std::vector<bool> produced(tensors, false);
    for (std::size_t o = 0; o < g.ops.size(); ++o)
        if (!dropOp[o])
            for (const auto t : g.ops[o].outputs)
                produced[std::size_t(t)] = true;
    for (std::size_t t = 0; t < tensors; ++t)
        if (touched[t] && readers[t] == 0 && !produced[t]
            && (g.tensors[t].kind == TensorKind::Weight || g.tensors[t].kind == TensorKind::Activation))
            dropTensor[t] = true;

    std::vector<TensorIndex> renumber(tensors, -1);
    std::vector<Tensor> kept;
    for (std::size_t t = 0; t < tensors; ++t)
        if (!dropTensor[t]) {
            renumber[t] = TensorIndex(kept.size());
            kept.push_back(std::move(g.tensors[t]));
        }
    auto remap = [&](std::vector<TensorIndex>& list) {
        for (auto& t : list)
            t = renumber[std::size_t(resolve(t))];
    };
    std::vector<Op> ops;
    for (std::size_t o = 0; o < g.ops.size(); ++o) {
        if (dropOp[o])
            continue;
        auto& op = g.ops[o];
        remap(op.inputs);
        remap(op.outputs);
        remap(op.captured);
        ops.push_back(std::move(op));
    }
    remap(g.inputs);
    remap(g.outputs);
    g.tensors = std::move(kept);
    g.ops = std::move(ops);
    return folds;
}

} // namespace core::onnxdetail
