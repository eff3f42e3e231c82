// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Small graphs written by hand for the executor tests: float tensors with known shapes (sizes
// computed), inputs and outputs registered by kind, ops in order; then a workload from them.

#include "graph/graph.h"
#include "io/workload.h"

#include <QtGlobal>

#include <string>
#include <utility>
#include <vector>

struct GraphBuilder {
    core::Graph g;

    core::TensorIndex tensor(const std::string& name, std::vector<std::int64_t> shape,
        core::TensorKind kind = core::TensorKind::Activation, core::DType dtype = core::DType::Float32)
    {
        core::Tensor t;
        t.name = name;
        t.dtype = dtype;
        t.shape = std::move(shape);
        t.rankKnown = true;
        t.size = core::tensorBytes(t.dtype, t.shape);
        t.kind = kind;
        g.tensors.push_back(std::move(t));
        const auto index = core::TensorIndex(g.tensors.size() - 1);
        if (kind == core::TensorKind::Input)
            g.inputs.push_back(index);
        if (kind == core::TensorKind::Output)
            g.outputs.push_back(index);
        return index;
    }

    core::Op* op(const std::string& name, const std::string& type, std::vector<core::TensorIndex> in,
        std::vector<core::TensorIndex> out)
    {
        core::Op o;
        o.name = name;
        o.type = type;
        o.inputs = std::move(in);
        o.outputs = std::move(out);
        g.ops.push_back(std::move(o));
        return &g.ops.back();
    }

    // The workload of the graph built so far (the builder is left empty); a bad graph ends the test.
    core::Workload workload(const std::string& name, core::Bytes alignment, bool workspaces = false)
    {
        core::LoadOptions options;
        options.alignment = alignment;
        options.workspaces = workspaces;
        auto w = core::workloadFromGraph(std::move(g), name, options);
        if (!w)
            qFatal("%s", w.error().message.c_str());
        return std::move(*w);
    }
};

// Two Convs joined by a channel Concat (`batch` × 16 × 8 × 8 floats), then a Sigmoid of the first
// Conv's output after the Concat and a Relu of the Concat: the in-place Concat tests' graph. With
// batch 1 the inplace strategy writes a and c into their slices of y; a's Sigmoid must not then run
// in place over a's slice, which y's Relu still reads.
inline core::Workload concatAndLaterRead(std::int64_t batch, core::Bytes alignment)
{
    using core::TensorKind;
    GraphBuilder b;
    const auto x = b.tensor("x", { batch, 4, 8, 8 }, TensorKind::Input);
    const auto a = b.tensor("a", { batch, 8, 8, 8 }), c = b.tensor("c", { batch, 8, 8, 8 });
    const auto y = b.tensor("y", { batch, 16, 8, 8 });
    const auto s = b.tensor("s", { batch, 8, 8, 8 }, TensorKind::Output);
    const auto z = b.tensor("z", { batch, 16, 8, 8 }, TensorKind::Output);
    b.op("conv_a", "Conv", { x, b.tensor("wa", { 8, 4, 1, 1 }, TensorKind::Weight) }, { a });
    b.op("conv_c", "Conv", { x, b.tensor("wc", { 8, 4, 1, 1 }, TensorKind::Weight) }, { c });
    b.op("cat", "Concat", { a, c }, { y })->attributes["axis"].ints = { 1 };
    b.op("squash", "Sigmoid", { a }, { s });
    b.op("relu", "Relu", { y }, { z });
    return b.workload("concat", alignment);
}

// A dense block as torchvision's DenseNet builds it: f0 from the input, then each layer k = 1..4
// joins every earlier feature map again (cat_k = Concat(f0, ..., f(k-1)) along channels), squashes
// the join (Sigmoid, standing in for BatchNorm+ReLU) and makes f_k with a 1×1 Conv; the block's
// output is Concat(f0, ..., f4). `mid` = Concat(f2, f3) joins a run that does not start at f0.
// Every feature map is 1 × 8 × 8 × 8 floats (2 KiB). With `detour`, a 32 KiB Conv output (reduced
// to the graph output "n") runs between f0 and the block's first Concat: the peak, which holding
// the whole block from f0's birth would raise.
inline core::Workload denseBlock(core::Bytes alignment, bool detour = false)
{
    using core::TensorKind;
    GraphBuilder b;
    const auto x = b.tensor("x", { 1, 4, 8, 8 }, TensorKind::Input);
    std::vector<core::TensorIndex> features { b.tensor("f0", { 1, 8, 8, 8 }) };
    b.op("stem", "Conv", { x, b.tensor("w0", { 8, 4, 1, 1 }, TensorKind::Weight) }, { features[0] });
    if (detour) {
        const auto wide = b.tensor("wide", { 1, 128, 8, 8 });
        b.op("widen", "Conv", { x, b.tensor("wd", { 128, 4, 1, 1 }, TensorKind::Weight) }, { wide });
        b.op("narrow", "ReduceMean", { wide }, { b.tensor("n", { 1, 1, 8, 8 }, TensorKind::Output) })->attributes["axes"].ints = { 1 };
    }
    for (std::int64_t k = 1; k <= 4; ++k) {
        const auto n = std::to_string(k);
        const auto joined = b.tensor("cat" + n + ".out", { 1, 8 * k, 8, 8 });
        const auto squashed = b.tensor("squash" + n + ".out", { 1, 8 * k, 8, 8 });
        b.op("cat" + n, "Concat", features, { joined })->attributes["axis"].ints = { 1 };
        b.op("squash" + n, "Sigmoid", { joined }, { squashed });
        features.push_back(b.tensor("f" + n, { 1, 8, 8, 8 }));
        b.op("conv" + n, "Conv", { squashed, b.tensor("w" + n, { 8, 8 * k, 1, 1 }, TensorKind::Weight) }, { features.back() });
        if (k == 3) {
            const auto mid = b.tensor("mid.out", { 1, 16, 8, 8 });
            b.op("mid", "Concat", { features[2], features[3] }, { mid })->attributes["axis"].ints = { 1 };
            b.op("mid_squash", "Sigmoid", { mid }, { b.tensor("m", { 1, 16, 8, 8 }, TensorKind::Output) });
        }
    }
    const auto block = b.tensor("block.out", { 1, 40, 8, 8 });
    b.op("block", "Concat", features, { block })->attributes["axis"].ints = { 1 };
    b.op("relu", "Relu", { block }, { b.tensor("z", { 1, 40, 8, 8 }, TensorKind::Output) });
    return b.workload("dense-block", alignment);
}
