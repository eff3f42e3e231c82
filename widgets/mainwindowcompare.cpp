// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// MainWindow's comparisons: another snapshot or model diffed in the background against the workload
// on display (widgets/comparedtrace.h), shown by the memory curve and the summary.
#include "mainwindow.h"

#include "comparedtrace.h"
#include "plandocument.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QStatusBar>

void MainWindow::openCompareDialog()
{
    const QString dir = m_currentSpec.startsWith(QLatin1String("example:")) ? QString() : QFileInfo(m_currentSpec).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Compare With Snapshot or Plan"), dir,
        tr("Snapshots and models (*.pickle *.pkl *.gz *.onnx *.json *.csv);;All files (*)"));
    if (!path.isEmpty())
        compareWith(path);
}

void MainWindow::compareWith(const QString& file)
{
    auto workload = m_document->sharedWorkload();
    if (!workload) {
        onFailure(tr("Open a snapshot or a model first (File > Open), then compare %1 with it").arg(QFileInfo(file).fileName()));
        return;
    }
    // The plan on display's planner, for both sides; "as recorded" is a snapshot's own placement, not a planner.
    const core::Plan* plan = m_document->plan();
    const core::Planner* planner = plan ? core::plannerByName(plan->planner) : nullptr;
    if (!planner)
        planner = core::plannerByName(core::kDefaultPlanner);
    statusBar()->showMessage(tr("Comparing %1 with %2…").arg(QFileInfo(file).fileName(), QFileInfo(m_currentSpec).fileName()));
    struct Made {
        std::shared_ptr<const ComparedTrace> compared; // null: failed with `error`
        QString error;
    };
    m_compareJob.start(
        this,
        [file, workload, planner] {
            Made made;
            if (auto compared = compareTraces(file, workload, *planner)) // worker thread: core code and plain values
                made.compared = std::move(*compared);
            else
                made.error = QString::fromStdString(compared.error().message);
            return made;
        },
        [this](const Made& made) {
            statusBar()->clearMessage();
            if (!made.compared) {
                onFailure(made.error);
                return;
            }
            m_document->setComparison(made.compared);
            if (!m_document->comparison()) { // the workload changed while it was made
                statusBar()->showMessage(tr("Comparison dropped: the workload on display changed; compare again"), 8000);
                return;
            }
            const auto& alignment = made.compared->diff.alignment;
            statusBar()->showMessage(QString::fromStdString(alignment.summary), 8000);
            emit comparisonShown();
        });
}
