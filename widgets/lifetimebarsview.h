// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "timelineview.h"

#include <QColor>

#include <vector>

// One row per buffer, a bar over its lifetime [start, end) on the shared time axis; row labels
// (buffer names) on the left, vertical scroll when the rows do not fit. Colored by kind, or by
// color: the plan's slot (Plan::colors), or an offset band when the plan assigns no slots, or by
// strategy. Buffers strategies touched are hatched and outlined in every mode, and a swapped value's
// host trip is a dashed line on its swap-in row (StrategyStyle).
// Painting visits only the rows in the viewport, so cost is independent of the buffer count.
class LifetimeBarsView : public TimelineView {
    Q_OBJECT
public:
    // Category and Module group a captured step's rows (buffercolors.h), by start within a group.
    enum class SortOrder { Start, Size, Offset, Category, Module };
    // Strategy: by what strategies did (StrategyStyle); Category and Module: by what a captured step's
    // tensor is and which module made it (buffercolors.h).
    enum class ColorMode { Kind, Color, Strategy, Category, Module };

    explicit LifetimeBarsView(PlanDocument* document, QWidget* parent = nullptr);

    SortOrder sortOrder() const { return m_sortOrder; }
    ColorMode colorMode() const { return m_colorMode; }
    void setSortOrder(SortOrder order);
    void setColorMode(ColorMode mode);

    // Row of a buffer in the current order, and its bar in widget pixels (for tests and tooltips);
    // an empty rect when the buffer is not laid out.
    int rowOf(int buffer) const;
    QRectF barRect(const Frame& frame, int buffer) const;
    int rowHeight(const Frame& frame) const;

    static constexpr int kOffsetBands = 12; // offset bands used for ColorMode::Color without slots

protected:
    void rebuild() override;
    QString caption() const override;
    int paintLegend(QPainter& painter, const QRect& area, const Frame& frame) const override;
    void paintPlot(QPainter& painter, const Frame& frame) const override;
    void paintLabels(QPainter& painter, const Frame& frame) const override;
    int bufferAt(const Frame& frame, QPointF pos) const override;
    int contentHeight(const Frame& frame) const override;
    int rowCount() const override;
    void revealBuffer(int buffer) override;

private:
    void sortRows();
    void computeColors();

    SortOrder m_sortOrder = SortOrder::Start;
    ColorMode m_colorMode = ColorMode::Kind;
    std::vector<int> m_rows; // row -> buffer
    std::vector<int> m_rowOf; // buffer -> row
    std::vector<QColor> m_colors; // per buffer
    std::vector<QString> m_names; // per buffer
    bool m_hasSlots = false;
};
