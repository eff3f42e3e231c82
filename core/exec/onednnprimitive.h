// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to exec/onednn*.cpp: the cached oneDNN primitives and how they run over the executor's
// memory (the contract is exec/onednn.h).

#include "exec/kernels.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace core::exec::onednn_detail {

using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

// An argument the primitive takes in another layout than the arena's row-major one (a depthwise
// convolution's NHWC): a copy in the workspace after the scratchpad, reordered in before the
// primitive runs (an input) or out after it (the output).
struct Staged {
    std::size_t index = 0; // into Primitive::args and execute's data
    bool output = false;
    dnnl::memory::desc plain;
    dnnl::reorder reorder; // plain -> args' layout (input), args' layout -> plain (output)
    std::int64_t offset = 0; // bytes into the workspace
};

// A primitive ready to run, with the descriptions of its arguments in the order execute() binds them.
struct Primitive {
    dnnl::primitive primitive;
    std::vector<std::pair<int, dnnl::memory::desc>> args; // DNNL_ARG_* -> desc (scratchpad last)
    std::int64_t scratchpadBytes = 0;
    std::vector<Staged> staged;
    std::int64_t workspaceBytes = 0; // the scratchpad and the staged copies: the op's workspace
    std::string implementation;
    // Constant weights the primitive wants in its own layout: argument `index`, call input `input`.
    // Packed once per run (WeightPacks), else reordered into kernel scratch per call; never in the
    // workspace (weights computed in the run are staged instead). A reorder with nothing to do leaves it unset.
    struct Packing {
        std::size_t index = 0;
        std::size_t input = 0;
        dnnl::memory::desc plain;
        dnnl::reorder reorder;
    };
    std::optional<Packing> packing;

    // Stages argument `index` (given in `plain` layout) when the primitive wants another; throws
    // dnnl::error when no reorder exists.
    void stage(std::size_t index, const dnnl::memory::desc& plain, bool output);
    // Packs weights argument `index` (call input `input`, given in `plain` layout) when the
    // primitive wants another layout; throws dnnl::error when no reorder exists.
    void pack(std::size_t index, std::size_t input, const dnnl::memory::desc& plain);
};
using MakePrimitive = std::function<std::shared_ptr<const Primitive>(const dnnl::primitive_attr& attr)>;

// A unary activation's oneDNN algorithm, alpha and beta (Relu, LeakyRelu, Sigmoid, Tanh, HardSwish,
// Clip with its bounds known); false for any other op.
bool eltwiseAlgorithm(const KernelCall& c, dnnl::algorithm& algorithm, float& alpha, float& beta);

// Operations oneDNN applies to a convolution's result before it is stored (a fused group's
// activations), and their part of the cache key.
struct PostOps {
    dnnl::post_ops ops;
    std::vector<std::int64_t> key;
};

dnnl::engine& engine();
// The cache key of a configuration: its kind, shapes and numbers, and the thread count.
std::string key(const char* kind, const std::vector<dims>& shapes, const std::vector<std::int64_t>& attrs);
// The cached primitive for key `k`, made by `make` (with user scratchpad mode) on first use; null when
// oneDNN refuses the configuration (remembered, and noted for the op of `c`).
// `noteRefusal` false: a refusal leaves no note (the caller has another way to run the call).
std::shared_ptr<const Primitive> cached(const KernelCall& c, const std::string& k, const MakePrimitive& make, bool noteRefusal = true);
// Runs `p` over `data` (one pointer per argument but the scratchpad, in p.args' order); false, with
// a note, when oneDNN fails inside.
bool execute(const KernelCall& c, const Primitive& p, const std::vector<void*>& data);

dims shapeOf(const TensorView& t);
// The memory of activation `v` with dims `d` (v's shape, or it padded with leading ones): N,H,W,C when
// v is stored channels-last (TensorView::channelsLast), else row-major.
dnnl::memory::desc activationDesc(const TensorView& v, const dims& d);
// The channels-last flags of a call's views, as a number for cache keys (bit i: view i, inputs first).
std::int64_t layoutBits(const KernelCall& c);
bool anyChannelsLast(const KernelCall& c);
tag plainTag(std::size_t rank); // row-major tag of rank 1 to 6; undef otherwise
dims plainStrides(const dims& shape);

template <typename PrimitiveDesc, typename PrimitiveType>
std::shared_ptr<Primitive> finish(const PrimitiveDesc& pd, std::vector<std::pair<int, dnnl::memory::desc>> args)
{
    auto p = std::make_shared<Primitive>();
    p->primitive = PrimitiveType(pd);
    p->scratchpadBytes = std::int64_t(pd.scratchpad_desc().get_size());
    p->workspaceBytes = p->scratchpadBytes;
    args.emplace_back(DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc());
    p->args = std::move(args);
    p->implementation = pd.impl_info_str();
    return p;
}

} // namespace core::exec::onednn_detail
