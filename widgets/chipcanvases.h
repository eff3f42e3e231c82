// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The two hand-painted canvases of ChipTeachingView (chipteachingview.h): the chip's units at a step
// (Architecture mode) and repeated-run latencies (Performance mode). Plain widgets the view fills
// with data and repaints; they compute nothing themselves beyond layout.

#include "io/workload.h"
#include "scenarios/multichip.h"

#include <QColor>
#include <QString>
#include <QWidget>

#include <memory>
#include <vector>

class QPainter;
class QPaintEvent;
class QRectF;

// Architecture mode: the units in a row, the op at the current step lit, its tensors in memory.
class ChipArchitectureCanvas : public QWidget {
public:
    explicit ChipArchitectureCanvas(QWidget* parent) : QWidget(parent) { setMinimumSize(900, 460); }

    std::shared_ptr<const core::Workload> workload;
    std::shared_ptr<const core::MultiChipPlan> partition;
    int step = 0;

protected:
    void paintEvent(QPaintEvent*) override;

private:
    // The chip's weights, packed in tensor order; the op's own weights outlined and labelled.
    void paintWeights(QPainter& painter, const QRectF& area, const core::ChipStage& stage, const core::Op& op, bool lit) const;

    // The arena at this step: every live buffer at its planned offset; the op's inputs and outputs stand out.
    void paintArena(QPainter& painter, const QRectF& area, const core::ChipStage& stage, const core::Op& op, int local, bool lit) const;

    // Where each tensor of the op lives: weights, arena offset, and where it came from or goes to.
    void paintTensorList(QPainter& painter, const QRectF& area, const core::ChipStage& stage, const core::Op& op) const;
};

// Performance mode: repeated-run latencies of the deterministic chip and of the measured series
// (CPU, GPU) on one ms axis, one row each, with a legend below the axis.
class ChipPerformanceCanvas : public QWidget {
public:
    explicit ChipPerformanceCanvas(QWidget* parent) : QWidget(parent) { setMinimumSize(900, 340); }

    struct Series {
        QString label;
        std::vector<double> runs; // ms per run
        QColor color;
        QString emptyText;        // shown in the row while `runs` is empty
    };
    QString chipLabel, throughputText;
    double chipMs = 0;            // the deterministic chip's latency estimate (one value, every run)
    std::vector<Series> measured;

protected:
    void paintEvent(QPaintEvent*) override;
};
