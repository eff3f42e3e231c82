// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <QString>

#include <vector>

// Pixel <-> value mappings shared by the Studio views; plain values, no painting, tested on their own.

// The shared time axis: steps [first, last] (fractional while zooming) over pixels [left, right].
// Step s covers [s, s+1) on the axis, so a lifetime [start, end) spans stepToX(start)..stepToX(end).
struct TimeAxis {
    double first = 0;
    double last = 1;
    int left = 0;
    int right = 1;

    double span() const { return last > first ? last - first : 1.0; }
    double pixelsPerStep() const { return (right - left) / span(); }
    double stepToX(double step) const { return left + (step - first) * pixelsPerStep(); }
    double xToStep(double x) const { return first + (x - left) / pixelsPerStep(); }
};

// Step labels sit at the centre of their step (step s covers [s, s+1)) when steps are this wide, at
// the step's left edge otherwise; every view on the time axis follows the same rule.
inline bool centreStepLabels(double pixelsPerStep) { return pixelsPerStep >= 24; }

// A byte axis drawn upwards: bytes [low, high] over pixels bottom (low) .. top (high); bottom > top.
struct OffsetAxis {
    double low = 0;
    double high = 1;
    int top = 0;
    int bottom = 1;

    double span() const { return high > low ? high - low : 1.0; }
    double pixelsPerByte() const { return (bottom - top) / span(); }
    double valueToY(double bytes) const { return bottom - (bytes - low) * pixelsPerByte(); }
    double yToValue(double y) const { return low + (bottom - y) / pixelsPerByte(); }
};

// The smallest step of the 1-2-5 grid (..., 0.5, 1, 2, 5, 10, ...) at least `rough` (> 0; else 1).
double niceStep(double rough);

// Tick positions in [first, last] on a 1-2-5 grid with at most `maxTicks` ticks, each a multiple of
// `minStep` (1 for steps: no tick between two steps). Empty when the range is empty.
std::vector<double> niceTicks(double first, double last, int maxTicks, double minStep = 0);

// Byte ticks on a 1-2-5 grid in the unit of `high` (byteUnitFor), so labels read "0.5 MiB", "1 MiB", "1.5 MiB";
// never finer than one byte.
std::vector<double> byteTicks(double low, double high, int maxTicks);

// formatBytes without trailing zeros: "2 MiB", "1.5 KiB", "812 B".
QString shortBytes(double bytes);

// Unit for a byte quantity of this magnitude: {divisor, "MiB"}.
struct ByteUnit {
    double divisor = 1;
    QString name;
};
ByteUnit byteUnitFor(double maxBytes);
// A tick label in a fixed unit: "1.5 MiB", "0 MiB"; at most two decimals, trailing zeros dropped.
QString formatInUnit(double bytes, const ByteUnit& unit);
