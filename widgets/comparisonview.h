// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "strategyjob.h"

#include <QSharedPointer>
#include <QStringList>
#include <QWidget>

#include <array>
#include <memory>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QTableWidget;
class QTimer;
class StrategyController;

// A/B comparison of two configurations of the same model, each a strategy set, a planner and a device
// profile. Both are computed in the background (one StrategyController each: strategies, plan,
// validatePlan) and shown side by side: a table of numbers with a B − A column, and both memory curves
// on one plot (each on its own schedule's steps). Reads the original workload it is given; changing a
// configuration recomputes that side only.
class ComparisonView : public QWidget {
    Q_OBJECT
public:
    enum Side { A = 0, B = 1 };
    // Table rows, in order.
    enum Row { LowerBound, Arena, Saved, ExtraFlops, Swapped, EstimatedTime, Steps, RowCount };

    explicit ComparisonView(QWidget* parent = nullptr);

    void setOriginal(std::shared_ptr<const core::Workload> original); // recomputes both sides
    // Sets one side's configuration (unknown names are ignored) and recomputes it.
    void setConfiguration(Side side, const QStringList& strategies, const QString& planner, const QString& device);
    QStringList strategies(Side side) const;
    QString plannerName(Side side) const;

    bool isBusy() const;
    std::shared_ptr<const StrategyOutcome> outcome(Side side) const { return m_sides[side].outcome; }
    QString cellText(Row row, int column) const; // column 0: A, 1: B, 2: B − A
    QTableWidget* table() const { return m_table; }
    QCustomPlot* plot() const { return m_plot; }

    QSize sizeHint() const override { return { 1100, 760 }; }

signals:
    void updated(); // a side got a new result (or failed)
    void failed(const QString& message);

private:
    struct SideWidgets {
        std::vector<QCheckBox*> checks;
        QComboBox* planner = nullptr;
        QComboBox* device = nullptr;
        QLabel* status = nullptr;
        StrategyController* controller = nullptr;
        QTimer* debounce = nullptr;
        std::shared_ptr<const StrategyOutcome> outcome;
    };
    QWidget* createSide(Side side);
    void recompute(Side side);
    void refresh();

    std::array<SideWidgets, 2> m_sides;
    std::shared_ptr<const core::Workload> m_original;
    QLabel* m_header = nullptr;
    QTableWidget* m_table = nullptr;
    QCustomPlot* m_plot = nullptr;
};
