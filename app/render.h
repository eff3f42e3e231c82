// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// `memplan render`: the Studio's views of a plan drawn to image files, without a window.

#include "io/workload.h"
#include "planners/problem.h"

#include <filesystem>
#include <string>
#include <vector>

struct RenderOptions {
    std::filesystem::path outDir; // created when missing
    std::string format = "png";   // png or svg
    int width = 1400, height = 420;
};

// Draws the memory curve, lifetime bars, arena layout and coloring of `plan` over `workload` to
// outDir/{memory-curve,lifetime-bars,arena-layout,coloring}.FORMAT, each width x height pixels,
// on Qt's offscreen platform (no display needed). `written` gets each file's path; false with
// `error` naming the file that could not be written.
bool renderViews(const core::Workload& workload, const core::Plan& plan, const RenderOptions& options,
    std::vector<std::filesystem::path>& written, std::string& error);
