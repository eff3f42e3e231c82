// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "graph/graph.h"

#include <QColor>

// Colors shared by every Studio view, so one buffer looks the same everywhere.
namespace ViewPalette {

QColor kindColor(core::TensorKind kind);
// Color of a captured step's category slot (core/io/breakdown.h: a TensorCategory in enum order, then
// kOtherSlot): fixed, well-separated hues, so a stacked curve, the bars and the arena agree.
QColor categoryColor(int slot);
// Color of a module path: one hue per top-level module ("layer3" for "layer3.1.conv2"), so the
// buffers of one stage of a network share a color; "" (top level) is a neutral gray.
QColor moduleColor(const std::string& module);
// A stable color for any name (a memory snapshot's allocation site): indexColor of its hash.
QColor nameColor(const std::string& name);
// Qualitative palette for slot/color `index` (>= 0): ten well-separated hues, then the same hues
// darker, then lighter, and so on. Negative index: a neutral gray.
QColor indexColor(int index);
// Readable text color (near-black or white) on `background`.
QColor textColorOn(const QColor& background);
// `color` mixed towards white by `amount` in [0, 1] (for dimming what is not highlighted).
QColor faded(const QColor& color, double amount);
// CIE76 distance between two colors in L*a*b* (≈ 2.3 is just noticeable); for tests and palette checks.
double colorDistance(const QColor& a, const QColor& b);

// Fixed chrome colors (light theme, like hotspot/heaptrack).
QColor background(); // widget background
QColor plotBackground(); // plot area
QColor gridLine();
QColor axisText();
QColor outline(); // outline of the selected buffer
QColor cursorLine(); // the step cursor
QColor denseFill(); // aggregated sub-pixel buffers

} // namespace ViewPalette
