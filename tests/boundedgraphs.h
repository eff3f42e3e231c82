// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Graphs and inputs for the run-time shape tests of both executors: tensors sized by an upper
// bound (Tensor::estimated) filled by data-dependent ops, and the If/Loop fixtures' model data.

#include "graphbuilder.h"
#include "exec/executor.h"
#include "exec/tensordata.h"
#include "kerneltest.h"
#include "strategies/strategy.h"

#include "planners/planner.h"
#include "planners/validate.h"

#include <QtTest>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace boundedgraphs {

inline core::HostTensor floats(std::vector<std::int64_t> shape, std::vector<float> values)
{
    core::HostTensor h;
    h.dtype = core::DType::Float32;
    h.shape = std::move(shape);
    h.data.resize(values.size() * sizeof(float));
    std::memcpy(h.data.data(), values.data(), h.data.size());
    return h;
}

template <typename T>
std::vector<T> valuesOf(const core::HostTensor& h)
{
    std::vector<T> v(h.data.size() / sizeof(T));
    std::memcpy(v.data(), h.data.data(), v.size() * sizeof(T));
    return v;
}

// x [2,4] and a threshold; the elements above it (NonZero -> Transpose -> GatherND), how many there
// are (Shape), and the largest min(count, 3) of them (Min -> TopK). `nonZeroBound` is the room the
// NonZero output has: [2, nonZeroBound], marked as an upper bound as import marks it. `swapped`:
// the NonZero output goes to the host and back (SwapOut, SwapIn) before the Transpose reads it.
inline core::Workload aboveThreshold(std::int64_t nonZeroBound, bool swapped = false)
{
    using core::DType;
    using core::TensorKind;
    GraphBuilder b;
    const auto x = b.tensor("x", { 2, 4 }, TensorKind::Input);
    const auto thr = b.tensor("thr", { 1 }, TensorKind::Input);
    const auto mask = b.tensor("mask", { 2, 4 }, TensorKind::Activation, DType::Bool);
    const auto nz = b.tensor("nz", { 2, nonZeroBound }, TensorKind::Activation, DType::Int64);
    const auto idx = b.tensor("idx", { nonZeroBound, 2 }, TensorKind::Activation, DType::Int64);
    const auto picked = b.tensor("picked", { nonZeroBound });
    const auto count = b.tensor("count", { 1 }, TensorKind::Output, DType::Int64);
    const auto limit = b.tensor("limit", { 1 }, TensorKind::Weight, DType::Int64);
    const auto k = b.tensor("k", { 1 }, TensorKind::Activation, DType::Int64);
    const auto top = b.tensor("top", { nonZeroBound }, TensorKind::Output);
    const auto where = b.tensor("where", { nonZeroBound }, TensorKind::Output, DType::Int64);
    b.g.tensors[std::size_t(limit)].values = { 3 };
    for (auto t : { nz, idx, picked, top, where })
        b.g.tensors[std::size_t(t)].estimated = true;
    b.op("above", "Greater", { x, thr }, { mask });
    b.op("nonzero", "NonZero", { mask }, { nz });
    auto read = nz;
    core::TensorIndex onHost = -1;
    if (swapped) {
        onHost = b.tensor("nz_host", { 2, nonZeroBound }, TensorKind::Activation, DType::Int64);
        read = b.tensor("nz_back", { 2, nonZeroBound }, TensorKind::Activation, DType::Int64);
        b.g.tensors[std::size_t(onHost)].estimated = b.g.tensors[std::size_t(read)].estimated = true;
        b.op("nz_out", "SwapOut", { nz }, { onHost });
        b.op("nz_in", "SwapIn", { onHost }, { read });
    }
    b.op("pairs", "Transpose", { read }, { idx })->attributes["perm"] = kerneltest::ints({ 1, 0 });
    b.op("pick", "GatherND", { x, idx }, { picked });
    b.op("count", "Shape", { picked }, { count });
    b.op("k", "Min", { count, limit }, { k });
    b.op("best", "TopK", { picked, k }, { top, where });
    auto w = b.workload("above-threshold", 64);
    if (swapped) { // nz_host in host memory, as the swap strategy leaves a swapped tensor
        auto state = core::startTransform(*w.graph, w.schedule);
        state.onHost[std::size_t(onHost)] = true;
        auto built = core::buildProblem(state, core::ProblemOptions { 64, false });
        if (!built)
            qFatal("%s", built.error().message.c_str());
        w.problem = std::move(built->problem);
        w.regions = std::move(built->regions);
        w.bufferTensor = std::move(built->bufferTensor);
        w.bufferOp = std::move(built->bufferOp);
    }
    return w;
}

// aboveThreshold's x (0.5, -1, 2, 0.1 / 3, -2, 0.7, -0.3) and the threshold.
inline core::RunOptions thresholdInputs(float threshold)
{
    core::RunOptions options;
    options.inputs["x"] = floats({ 2, 4 }, { 0.5f, -1.0f, 2.0f, 0.1f, 3.0f, -2.0f, 0.7f, -0.3f });
    options.inputs["thr"] = floats({ 1 }, { threshold });
    return options;
}

// tests/models/tricky/NAME.onnx (scripts/make_tricky_models.py).
inline std::string fixture(const std::string& name) { return MEMPLAN_SOURCE_DIR "/tests/models/tricky/" + name + ".onnx"; }

// Run options holding the model's data (weights, If and Loop graphs); none when it cannot be read.
inline core::RunOptions withModelData(const std::string& file, const core::Graph& graph)
{
    core::RunOptions options;
    auto data = core::loadTensorData(file, graph);
    if (!data)
        qWarning("%s", data.error().message.c_str());
    else
        options.modelData = std::make_shared<const core::ModelData>(std::move(*data));
    return options;
}

// Every planner's plan (validated) run in its arena: the no-reuse run's outputs, bit for bit.
inline void checkEveryPlanner(const core::Workload& w, const core::RunOptions& options, const std::vector<core::HostTensor>& reference)
{
    for (const auto& planner : core::planners()) {
        core::PlanOptions planOptions;
        planOptions.timeLimitSeconds = 0.2;
        const auto plan = core::runPlanner(*planner, w.problem, {}, planOptions);
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        QVERIFY(core::validatePlan(w.problem, *plan).ok());
        for (auto allocation : { core::Allocation::Arena, core::Allocation::PerTensor }) {
            auto o = options;
            o.allocation = allocation;
            o.repeat = 2; // the second pass must start from the inputs again, wherever the plan reused their room
            const auto run = core::runOnCpu(*w.graph, w.schedule, w.problem, *plan, w.bufferTensor, o);
            QVERIFY2(run, run ? "" : run.error().message.c_str());
            QVERIFY2(run->passesAgree, planner->name().data());
            const auto mismatch = core::compareOutputs(*w.graph, reference, run->outputs);
            QVERIFY2(mismatch.empty(), (std::string(planner->name()) + ": " + mismatch).c_str());
        }
    }
}

// tricky/if_nms.onnx's boxes and scores: box 1 overlaps box 0 and box 4 overlaps box 5 (IoU > 0.5);
// box 3 scores under 0.1. By falling score: 5, 0, (1 suppressed), 2, (4 suppressed): three kept,
// the most the model allows. `keep` false: every score under 0.5, the else-branch's empty list.
inline void ifNmsInputs(core::RunOptions& options, bool keep)
{
    options.inputs["boxes"] = floats({ 1, 6, 4 }, { 0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 5, 1, 6, 0, 10, 1, 11, 0, 20, 1, 21, 0, 20.05f, 1, 21.05f });
    options.inputs["scores"] = keep ? floats({ 1, 1, 6 }, { 0.9f, 0.8f, 0.7f, 0.05f, 0.6f, 0.95f })
                                    : floats({ 1, 1, 6 }, { 0.4f, 0.3f, 0.2f, 0.05f, 0.1f, 0.45f });
}

} // namespace boundedgraphs
