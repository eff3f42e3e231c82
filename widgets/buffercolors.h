// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/workload.h"

#include <QColor>
#include <QString>

#include <vector>

// How the lifetime bars and the arena color a buffer by what it holds: its kind, its captured
// category (parameter, gradient, saved, ...: core/graph/capture.h) or the module that made it.
enum class BufferColoring { Kind, Category, Module };

// The category slot of `buffer` (core/io/breakdown.h: a TensorCategory, or kOtherSlot for a buffer
// whose tensor has no category, a workspace, or a workload without a graph).
int bufferCategorySlot(const core::Workload& workload, int buffer);
// The module path of `buffer`'s tensor (a workspace: its op's module); in a memory snapshot the
// allocation site ("model.py:213 forward"); "" when there is none.
QString bufferModule(const core::Workload& workload, int buffer);
// The color of `buffer` under `how` (ViewPalette::kindColor, categoryColor or moduleColor).
QColor bufferColor(const core::Workload& workload, int buffer, BufferColoring how);

// One swatch of a view legend: a color, its label, and how many buffers it covers (the entries with
// the fewest drop out first when room runs short).
struct LegendSwatch {
    QColor color;
    QString text;
    int count = 0;
};
// The swatches for `how` over every buffer of `workload`: kinds, categories or top-level modules
// (a memory snapshot: allocation sites) present, in a fixed order (kinds and categories) or by
// buffer count (modules, sites).
std::vector<LegendSwatch> bufferLegend(const core::Workload& workload, BufferColoring how);
