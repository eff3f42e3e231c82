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
// Centred (setCentred), a tick sits at the centre of the step it labels, as the timeline views put
// their labels when steps are wide (centreStepLabels).
class StepTicker : public QCPAxisTicker {
public:
    void setCentred(bool centred) { m_centred = centred; }
    bool centred() const { return m_centred; }

protected:
    double getTickStep(const QCPRange& range) override { return std::max(1.0, niceStep(range.size() / (tickCount() + 1e-10))); }
    QVector<double> createTickVector(double tickStep, const QCPRange& range) override
    {
        QVector<double> ticks = QCPAxisTicker::createTickVector(tickStep, range);
        if (m_centred)
            for (double& tick : ticks)
                tick += 0.5;
        return ticks;
    }
    QString getTickLabel(double tick, const QLocale&, QChar, int) override
    {
        return QString::number(static_cast<long long>(std::floor(tick + 1e-6))); // the step a tick is in
    }

private:
    bool m_centred = false;
};

// Centres a StepTicker axis's labels when its steps are wide over `plotPixels` (the axis rect's width,
// passed because an export lays the plot out at another size than the widget's).
inline void fitStepTicks(QCPAxis* axis, int plotPixels)
{
    if (auto ticker = axis->ticker().dynamicCast<StepTicker>())
        ticker->setCentred(centreStepLabels(plotPixels / std::max(axis->range().size(), 1e-9)));
}
