// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/workload.h"
#include "planners/planner.h"
#include "scenarios/llmscenario.h"

#include <map>
#include <string>

namespace core {

// The graph of one decode step, planned as a scoped arena that is reset after the step.
//
// Shapes, for T tokens processed in the step (sum over live sequences: the prompt at a sequence's
// prefill step, else 1), b live sequences and context L (the longest stored length, rounded up to
// whole KV blocks as a paged attention kernel reads them), per layer:
//   norm1 [T,hidden] → qkv [T,(heads+2·kvHeads)·headDim] → scores [heads,T,L] (q against the K cache)
//   → softmax [heads,T,L] → context [T,heads·headDim] (against the V cache) → out_proj [T,hidden]
//   → residual → norm2 → mlp.up [T,ffn] → mlp.act → mlp.down [T,hidden] → residual
// Scores are materialised (an unfused runtime; a fused attention kernel would not), every row
// padded to L. The K and V caches are persistent tensors [b,kvHeads,L,headDim] (a region outside
// the arena: the KV pools account for them); weights are a region too. Embedding and LM head are
// left out. Activations use the config's dtype.
struct LlmStepShape {
    std::int64_t tokens = 0;
    int sequences = 0;
    std::int64_t context = 0;
    auto operator<=>(const LlmStepShape&) const = default;
};

// The step's shape at `step`; sequences 0 when nothing is live.
LlmStepShape stepShape(const LlmConfig& config, const std::vector<KvSequence>& sequences, Step step);

// Fails when a tensor's byte size overflows. `config` must be valid and shape.sequences > 0.
Expected<Graph> buildDecodeStepGraph(const LlmConfig& config, const LlmStepShape& shape);

// The step graph as a workload (alignment 256, model order), ready to plan.
Expected<Workload> decodeStepWorkload(const LlmConfig& config, const LlmStepShape& shape);

// Plans step graphs with one planner, once per distinct shape; every plan passes validatePlan.
// Not thread safe (one instance per run).
class LlmArenaPlanner {
public:
    // `options`: the search planners' time limit (each distinct shape gets the full limit).
    LlmArenaPlanner(const LlmConfig& config, const Planner& planner, PlanOptions options = {});
    struct Arena {
        Bytes arena = 0;
        Bytes lowerBound = 0;
        Bytes weights = 0;
    };
    Expected<Arena> arenaFor(const LlmStepShape& shape, const CancelToken& cancel = {});
    int distinctPlans() const { return static_cast<int>(m_cache.size()); }

private:
    LlmConfig m_config;
    const Planner& m_planner;
    PlanOptions m_options;
    std::map<LlmStepShape, Arena> m_cache;
};

} // namespace core
