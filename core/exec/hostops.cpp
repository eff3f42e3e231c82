// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/hostops.h"

#include "exec/opcall.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace core::exec {

namespace {

std::int64_t elementsOf(const Tensor& t)
{
    const Bytes w = dtypeBytes(t.dtype);
    return w > 0 && t.size > 0 ? t.size / w : 0;
}

// A fused op on host views: its body on the CPU executor's kernels (opcall.h), the internal tensors
// in a scratch of their own, the outer tensors where `call` has them. A body op naming an outer
// tensor the call does not hold (a malformed fused op) makes the whole op synthetic.
bool runFusedOnHost(const Graph& g, const KernelCall& call, OpIndex opIndex, const RunOptions& options)
{
    const auto& op = *call.op;
    auto scratch = makeFusedScratch(g, { &op }, 64);
    if (!scratch) {
        syntheticKernel(call);
        return false;
    }
    std::vector<std::byte*> outer(g.tensors.size(), nullptr);
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
        const auto slot = std::size_t(inputSlot(op, k));
        if (slot < call.in.size() && op.inputs[k] >= 0 && op.inputs[k] < TensorIndex(g.tensors.size()))
            outer[std::size_t(op.inputs[k])] = call.in[slot].data;
    }
    for (std::size_t k = 0; k < op.outputs.size() && k < call.out.size(); ++k)
        if (op.outputs[k] >= 0 && op.outputs[k] < TensorIndex(g.tensors.size()))
            outer[std::size_t(op.outputs[k])] = call.out[k].data;
    const auto& internal = scratch->internal;
    for (const auto& part : op.body)
        for (const auto* list : { &part.inputs, &part.outputs })
            for (auto t : *list)
                if (!internal[std::size_t(t)] && !outer[std::size_t(t)] && g.tensors[std::size_t(t)].size > 0) {
                    syntheticKernel(call);
                    return false;
                }
    TensorAccess access;
    access.address = [&](TensorIndex t) { return internal[std::size_t(t)] ? scratch->address(t) : outer[std::size_t(t)]; };
    access.stored = [&](TensorIndex t) { return g.tensors[std::size_t(t)].size > 0 && (internal[std::size_t(t)] || outer[std::size_t(t)]); };
    return runPrepared(g, prepareOp(g, op, opIndex, options, access), options);
}

} // namespace

// Deterministic contents for a tensor nobody gave: per tensor its own stream (seed ^ hash(name)),
// so adding a tensor does not change the others.
void fillRandom(const Tensor& t, std::byte* p, std::uint64_t seed, bool isWeight)
{
    std::mt19937_64 rng(seed ^ std::hash<std::string> {}(t.name));
    const auto n = elementsOf(t);
    if (t.dtype == DType::Float32) {
        float scale = 1.0f, shift = 0.0f;
        if (isWeight && t.shape.size() >= 2 && t.shape[0] > 0)
            scale = 1.0f / std::sqrt(float(std::max<std::int64_t>(1, n / t.shape[0])));
        else if (isWeight) { // 1-D weights (scales, variances, biases): positive, near 1
            scale = 0.5f;
            shift = 1.0f;
        }
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        auto* f = reinterpret_cast<float*>(p);
        for (std::int64_t i = 0; i < n; ++i)
            f[i] = dist(rng) * scale + shift;
        return;
    }
    const Bytes w = dtypeBytes(t.dtype);
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t v = isWeight ? 0 : std::int64_t(rng() % 4);
        if (t.dtype == DType::Int64)
            std::memcpy(p + i * w, &v, 8);
        else if (t.dtype == DType::Int32) {
            const auto v32 = std::int32_t(v);
            std::memcpy(p + i * w, &v32, 4);
        } else if (t.dtype == DType::Bool)
            p[i] = std::byte(v & 1);
        else
            std::memset(p + i * w, 0, std::size_t(w));
    }
}

void inputContents(const Tensor& t, std::byte* p, std::uint64_t seed)
{
    if (!writeFoldedValues(t, p, elementsOf(t)))
        fillRandom(t, p, seed, false);
}

void weightContents(const Graph& g, TensorIndex t, std::byte* p, const RunOptions& options)
{
    const auto& tensor = g.tensors[t];
    if (options.modelData) {
        const auto it = options.modelData->weights.find(t);
        if (it != options.modelData->weights.end() && Bytes(it->second.data.size()) == tensor.size) {
            std::memcpy(p, it->second.data.data(), it->second.data.size());
            return;
        }
    }
    if (writeFoldedValues(tensor, p, elementsOf(tensor)))
        return;
    fillRandom(tensor, p, options.seed, true);
}

bool runHostOp(const Graph& g, const KernelCall& call, OpIndex opIndex, Kernel kernel, const RunOptions& options)
{
    if (!call.op->body.empty())
        return runFusedOnHost(g, call, opIndex, options);
    return runCall(g, call, opIndex, kernel, options);
}

} // namespace core::exec
