// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "strategymarks.h"

#include <QColor>
#include <QPointF>
#include <QRect>
#include <QRectF>

#include <vector>

class PlanDocument;
class QPainter;

// How the lifetime bars and the arena layout mark what strategies did, so both look alike:
// each mark has a color and a hatch; a marked buffer gets the hatch over its fill and a 2 px
// outline in the mark's color; a host trip is a dashed line in the swap color.
namespace StrategyStyle {

// The first mark of `marks` in drawing priority (swap-in, swap-out, recomputed, in-place, fused); MarkNone when none.
StrategyMark primaryMark(unsigned marks);
QColor markColor(StrategyMark mark); // MarkNone: the neutral gray of untouched buffers in "color by strategy"
Qt::BrushStyle markPattern(StrategyMark mark);
QColor hostTripColor();

// Hatch and outline over an already filled `rect`.
void paintMarked(QPainter& painter, const QRectF& rect, unsigned marks);
// A dashed line from `from` to `to` with a small "host" label when there is room.
// `labels`, when given, holds the "host" labels already drawn: one that would overlap them is left out.
void paintHostTrip(QPainter& painter, QPointF from, QPointF to, std::vector<QRectF>* labels = nullptr);

// Right-aligned legend of the marks in `present` (plus the host trip when `trips`), in `area`;
// returns the width used (0 when nothing is present or nothing fits).
int paintLegend(QPainter& painter, const QRect& area, unsigned present, bool trips);

// Facts of the document's current workload, or null.
const StrategyFacts* factsOf(const PlanDocument* document);

} // namespace StrategyStyle
