// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// `memplan render`: the Studio's views of a plan drawn to image files, without a window.

#include "io/workload.h"
#include "planners/problem.h"
#include "strategies/strategy.h"

#include <filesystem>
#include <string>
#include <vector>

struct RenderOptions {
    std::filesystem::path outDir; // created when missing
    std::string format = "png";   // png or svg
    int width = 1400, height = 420;
    // The lifetime bars and coloring grow taller than `height` (up to 8000 pixels) to show every row.
    bool fitRows = true;
    // How the lifetime bars and arena color buffers: "kind", "category" or "module"; empty: category
    // for a captured step (core/graph/capture.h), kind otherwise, as the Studio opens it.
    std::string colorBy;
};

// Draws the memory curve, lifetime bars, arena layout and coloring of `plan` over `workload` to
// outDir/{memory-curve,lifetime-bars,arena-layout,coloring}.FORMAT, each width x height pixels,
// on Qt's offscreen platform (no display needed). `written` gets each file's path; false with
// `error` naming the file that could not be written.
// With `marking.original` set (strategies made `workload` from it, doing `marking.state`), the views
// mark what the strategies did and the memory curve shows the curve before them, as the Studio does.
struct StrategyMarking {
    const core::Workload* original = nullptr;
    const core::Transformed* state = nullptr;
};
bool renderViews(const core::Workload& workload, const core::Plan& plan, const RenderOptions& options,
    std::vector<std::filesystem::path>& written, std::string& error, const StrategyMarking& marking = {});
