// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The call from `memplan` into the render module (render.cpp, libmemplan-render.so): one C entry
// point, memplan_render_views(kRenderAbi, &call), false with *call.error set when drawing fails,
// false with the error empty when the module was built from other sources than the program.

#include "render.h"

#include "exec/backend.h"

#include <cstdint>

struct RenderCall {
    const core::Workload* workload;
    const core::Plan* plan;
    const RenderOptions* options;
    std::vector<std::filesystem::path>* written;
    std::string* error;
    const StrategyMarking* marking;
};

inline constexpr std::uint64_t kRenderAbi = core::kExecutorPluginAbi ^ (std::uint64_t(sizeof(core::Workload)) << 40)
    ^ (std::uint64_t(sizeof(RenderOptions)) << 24) ^ (std::uint64_t(sizeof(core::Transformed)) << 4);

inline constexpr const char* kRenderModule = "libmemplan-render.so";
inline constexpr const char* kRenderEntry = "memplan_render_views";
using RenderEntry = bool (*)(std::uint64_t abi, const RenderCall* call);
