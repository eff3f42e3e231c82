// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The one place that includes QCustomPlot: it still uses `foreach`, which QT_NO_FOREACH forbids.
// Qt defines `foreach` (or not) in the first Qt header a file includes, so include this header
// before any other Qt header (first line of the .cpp), and only from .cpp files.
#ifdef QT_NO_FOREACH
#undef QT_NO_FOREACH
#endif
#include <qcustomplot.h>

#include "palette.h"
#include "timeaxis.h"

// The Studio's look for a QCustomPlot axis: muted lines, no sub-grid, the views' axis text colour.
inline void styleAxis(QCPAxis* axis, const QFont& font)
{
    axis->setTickLabelFont(font);
    axis->setLabelFont(font);
    axis->setTickLabelColor(ViewPalette::axisText());
    axis->setLabelColor(ViewPalette::axisText());
    axis->setBasePen(QPen(QColor(0xC4C8CE)));
    axis->setTickPen(QPen(QColor(0x9AA0A6)));
    axis->setSubTickPen(QPen(QColor(0xC4C8CE)));
    axis->grid()->setPen(QPen(ViewPalette::gridLine()));
    axis->grid()->setSubGridVisible(false);
}

// Ticks only on whole steps, on the 1-2-5 grid: QCustomPlot's default ticker would put ticks at
// 10.5 when zoomed in, and every 2.5 steps (labelled 3, 5, 8, ...) at some ranges.
class StepTicker : public QCPAxisTicker {
protected:
    double getTickStep(const QCPRange& range) override { return std::max(1.0, niceStep(range.size() / (tickCount() + 1e-10))); }
};
