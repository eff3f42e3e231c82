// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "scenarios/llmstepgraph.h"

#include "planners/metrics.h"
#include "planners/validate.h"

#include <algorithm>

namespace core {

namespace {
using Shape = std::vector<std::int64_t>;

DType activationType(int dtypeBytes)
{
    switch (dtypeBytes) {
    case 1:
        return DType::Float8;
    case 4:
        return DType::Float32;
    default:
        return DType::Float16;
    }
}

// Appends tensors and ops in execution order (the schedule is the model order).
class StepBuilder {
public:
    StepBuilder(std::string name, DType dtype) : m_dtype(dtype) { m_graph.name = std::move(name); }

    TensorIndex tensor(const std::string& name, Shape shape, TensorKind kind)
    {
        Tensor t;
        t.name = name;
        t.dtype = m_dtype;
        t.shape = std::move(shape);
        t.rankKnown = true;
        t.kind = kind;
        m_graph.tensors.push_back(std::move(t));
        const auto index = static_cast<TensorIndex>(m_graph.tensors.size() - 1);
        if (kind == TensorKind::Input)
            m_graph.inputs.push_back(index);
        return index;
    }

    TensorIndex op(const std::string& type, const std::string& name, std::vector<TensorIndex> inputs, Shape outShape)
    {
        const auto out = tensor(name + ".out", std::move(outShape), TensorKind::Activation);
        Op op;
        op.name = name;
        op.type = type;
        op.inputs = std::move(inputs);
        op.outputs = { out };
        m_graph.ops.push_back(std::move(op));
        return out;
    }

    Expected<Graph> finish(TensorIndex output)
    {
        m_graph.tensors[output].kind = TensorKind::Output;
        m_graph.tensors[output].name = "hidden_out";
        m_graph.outputs.push_back(output);
        computeSizes(m_graph);
        for (const auto& t : m_graph.tensors)
            if (t.size == kUnknownSize)
                return makeError(ErrorCode::InvalidArgument,
                    "llm step graph '" + m_graph.name + "': tensor '" + t.name + "' is too large to size in bytes");
        return std::move(m_graph);
    }

private:
    DType m_dtype;
    Graph m_graph;
};
} // namespace

LlmStepShape stepShape(const LlmConfig& config, const std::vector<KvSequence>& sequences, Step step)
{
    LlmStepShape shape;
    std::int64_t longest = 0;
    for (const auto& s : sequences) {
        if (!s.liveAt(step))
            continue;
        ++shape.sequences;
        shape.tokens += s.newTokensAt(step);
        longest = std::max(longest, s.tokensAt(step));
    }
    shape.context = (longest + config.blockTokens - 1) / config.blockTokens * config.blockTokens;
    return shape;
}

Expected<Graph> buildDecodeStepGraph(const LlmConfig& config, const LlmStepShape& shape)
{
    const std::int64_t t = shape.tokens, b = shape.sequences, l = shape.context, hidden = config.hidden;
    const std::int64_t heads = config.heads, kvHeads = config.effectiveKvHeads(), d = config.headDim();
    const std::int64_t ffn = config.effectiveFfn();
    StepBuilder g("llm-step-t" + std::to_string(t) + "-b" + std::to_string(b) + "-l" + std::to_string(l),
        activationType(config.dtypeBytes));
    auto x = g.tensor("hidden_in", { t, hidden }, TensorKind::Input);
    for (int layer = 0; layer < config.layers; ++layer) {
        const auto p = "layers." + std::to_string(layer) + ".";
        auto weight = [&](const std::string& name, Shape s) { return g.tensor(p + name, std::move(s), TensorKind::Weight); };
        const auto h = g.op("LayerNormalization", p + "norm1", { x, weight("norm1.weight", { hidden }) }, { t, hidden });
        const auto qkv = g.op("MatMul", p + "attn.qkv", { h, weight("attn.qkv.weight", { hidden, (heads + 2 * kvHeads) * d }) },
            { t, (heads + 2 * kvHeads) * d });
        const auto kCache = g.tensor(p + "attn.k_cache", { b, kvHeads, l, d }, TensorKind::Persistent);
        const auto vCache = g.tensor(p + "attn.v_cache", { b, kvHeads, l, d }, TensorKind::Persistent);
        const auto scores = g.op("MatMul", p + "attn.scores", { qkv, kCache }, { heads, t, l });
        const auto probs = g.op("Softmax", p + "attn.softmax", { scores }, { heads, t, l });
        const auto context = g.op("MatMul", p + "attn.context", { probs, vCache }, { t, heads * d });
        const auto attn = g.op("MatMul", p + "attn.out_proj", { context, weight("attn.out_proj.weight", { heads * d, hidden }) },
            { t, hidden });
        const auto x1 = g.op("Add", p + "residual1", { x, attn }, { t, hidden });
        const auto h2 = g.op("LayerNormalization", p + "norm2", { x1, weight("norm2.weight", { hidden }) }, { t, hidden });
        const auto up = g.op("MatMul", p + "mlp.up", { h2, weight("mlp.up.weight", { hidden, ffn }) }, { t, ffn });
        const auto act = g.op("Gelu", p + "mlp.act", { up }, { t, ffn });
        const auto down = g.op("MatMul", p + "mlp.down", { act, weight("mlp.down.weight", { ffn, hidden }) }, { t, hidden });
        x = g.op("Add", p + "residual2", { x1, down }, { t, hidden });
    }
    x = g.op("LayerNormalization", "final_norm", { x, g.tensor("final_norm.weight", { hidden }, TensorKind::Weight) },
        { t, hidden });
    return g.finish(x);
}

Expected<Workload> decodeStepWorkload(const LlmConfig& config, const LlmStepShape& shape)
{
    auto graph = buildDecodeStepGraph(config, shape);
    if (!graph)
        return graph.error();
    const std::string source = graph->name;
    return workloadFromGraph(std::move(*graph), source, LoadOptions {});
}

LlmArenaPlanner::LlmArenaPlanner(const LlmConfig& config, const Planner& planner, PlanOptions options)
    : m_config(config)
    , m_planner(planner)
    , m_options(std::move(options))
{
}

Expected<LlmArenaPlanner::Arena> LlmArenaPlanner::arenaFor(const LlmStepShape& shape, const CancelToken& cancel)
{
    if (shape.sequences == 0)
        return Arena {};
    if (const auto it = m_cache.find(shape); it != m_cache.end())
        return it->second;
    const auto workload = decodeStepWorkload(m_config, shape);
    if (!workload)
        return workload.error();
    const auto plan = runPlanner(m_planner, workload->problem, cancel, m_options);
    if (!plan)
        return makeError(plan.error().code, workload->source + ": " + plan.error().message);
    const auto check = validatePlan(workload->problem, *plan);
    if (!check.ok())
        return makeError(ErrorCode::Infeasible,
            workload->source + ": planner '" + std::string(m_planner.name()) + "' produced an invalid plan: " + check.message);
    Arena arena { plan->arenaSize, lowerBound(workload->problem), 0 };
    for (const auto& region : workload->regions)
        if (region.name == "weights")
            arena.weights = region.size;
    m_cache.emplace(shape, arena);
    return arena;
}

} // namespace core
