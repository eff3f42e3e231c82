// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "scenarios/llmscenario.h"

#include <QWidget>

// The paged KV pool at one decode step: one cell per block, in block-id order, coloured by the
// sequence that owns it (ViewPalette::indexColor of the sequence id), free blocks pale. Shows the
// blocks up to the pool's high-water mark at that step (the rest were never used), wrapped into
// rows of square cells. Hovering a cell names its block and owner.
class KvBlockMapView : public QWidget {
    Q_OBJECT
public:
    explicit KvBlockMapView(QWidget* parent = nullptr);

    void setBlockMap(const core::KvBlockMap& map, int sequences);
    const core::KvBlockMap& blockMap() const { return m_map; }
    // Block under a widget position, or -1.
    std::int64_t blockAt(QPoint position) const;

    QSize sizeHint() const override { return { 1000, 190 }; }
    QSize minimumSizeHint() const override { return { 300, 120 }; }

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    struct Grid {
        QRect area;  // where the cells go
        int columns = 1;
        int cell = 1; // pixels, including a 1-pixel gap when cells are large enough
        std::int64_t shown = 0;
    };
    Grid grid() const;

    core::KvBlockMap m_map;
    int m_sequences = 0;
};
