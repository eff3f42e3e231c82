// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// MainWindow's "run the plan" part: the Run toolbar (Run, device, repeat, progress, cancel), the
// RunController wiring and where a measurement goes. Kept apart from mainwindow.cpp so the window's
// other features and this one change independently.
#include "mainwindow.h"

#include "cudadevice.h"
#include "latencylane.h"
#include "plandocument.h"
#include "runcontroller.h"
#include "runmeasurement.h"
#include "strategypanel.h"
#include "summarypanel.h"
#include "tolerancespinbox.h"

#include "util/progresstext.h"

#include <QAction>
#include <QComboBox>
#include <QLabel>
#include <QProgressBar>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QToolBar>

void MainWindow::createRunControls()
{
    m_runController = new RunController(this);
    addToolBarBreak(); // its own row: the main toolbar is full
    QToolBar* bar = addToolBar(tr("Run"));
    bar->setObjectName(QStringLiteral("runToolBar"));
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);

    m_runAction = new QAction(tr("Run"), this);
    m_runAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_runAction->setToolTip(tr("Execute the plan: a no-reuse reference run, the planned arena and per-tensor malloc; "
                               "overlay the measured memory and latency (Ctrl+R)"));
    connect(m_runAction, &QAction::triggered, this, &MainWindow::runPlan);
    bar->addAction(m_runAction);

    auto* deviceLabel = new QLabel(tr("on"), bar);
    deviceLabel->setContentsMargins(4, 0, 4, 0);
    bar->addWidget(deviceLabel);
    m_deviceCombo = new QComboBox(bar);
    m_deviceCombo->addItem(QStringLiteral("cpu"));
    m_deviceCombo->setItemData(0, tr("CPU executor: float32 kernels, single-threaded"), Qt::ToolTipRole);
    m_deviceCombo->addItem(QStringLiteral("cuda"));
    // Without a usable device (or without the CUDA executor in this build) the entry stays, greyed, to say why.
    const CudaDeviceStatus& cuda = cudaDeviceStatus();
    if (!cuda.available)
        if (auto* model = qobject_cast<QStandardItemModel*>(m_deviceCombo->model()))
            if (QStandardItem* item = model->item(1))
                item->setEnabled(false);
    m_deviceCombo->setItemData(1,
        cuda.available ? tr("CUDA executor on %1").arg(cuda.description) : tr("no CUDA device: %1").arg(cuda.reason),
        Qt::ToolTipRole);
    m_deviceCombo->setToolTip(tr("Executor that runs the plan"));
    bar->addWidget(m_deviceCombo);

    auto* repeatLabel = new QLabel(tr("Repeat"), bar);
    repeatLabel->setContentsMargins(8, 0, 4, 0);
    bar->addWidget(repeatLabel);
    m_repeatSpin = new QSpinBox(bar);
    m_repeatSpin->setRange(1, 1000);
    m_repeatSpin->setValue(3);
    m_repeatSpin->setSuffix(tr(" ×"));
    m_repeatSpin->setToolTip(tr("Timed runs per allocation mode; latency is their median, p50 and p99"));
    bar->addWidget(m_repeatSpin);

    auto* toleranceLabel = new QLabel(tr("Tolerance"), bar);
    toleranceLabel->setContentsMargins(8, 0, 4, 0);
    bar->addWidget(toleranceLabel);
    m_toleranceSpin = new ToleranceSpinBox(bar);
    m_toleranceSpin->setValue(core::kDefaultGpuTolerance);
    m_toleranceSpin->setToolTip(tr("cuda runs: the GPU's outputs must match a CPU executor run of the same inputs within this "
                                   "relative tolerance, |gpu − cpu| ≤ R·(|cpu| + max |cpu| of that output)"));
    bar->addWidget(m_toleranceSpin);
    // Only a cuda run is compared with the CPU: the box is live with that device only.
    auto updateTolerance = [this, toleranceLabel] {
        const bool cuda = m_deviceCombo->currentText() == QLatin1String("cuda");
        m_toleranceSpin->setEnabled(cuda);
        toleranceLabel->setEnabled(cuda);
    };
    connect(m_deviceCombo, &QComboBox::currentIndexChanged, this, updateTolerance);
    updateTolerance();

    m_runProgress = new QProgressBar(bar);
    m_runProgress->setMaximumWidth(140);
    m_runProgress->setMaximumHeight(16);
    m_runProgress->setFormat(tr("%p% of ops"));
    m_runProgress->setVisible(false);
    bar->addWidget(m_runProgress);
    m_cancelRunAction = new QAction(tr("Cancel run"), this);
    m_cancelRunAction->setToolTip(tr("Stop the run at its next op; nothing is measured"));
    connect(m_cancelRunAction, &QAction::triggered, this, &MainWindow::cancelRun);
    bar->addAction(m_cancelRunAction);

    const auto runningText = [this] {
        return m_deviceCombo->currentText() == QLatin1String("cuda") ? tr("Running the plan on the GPU…") : tr("Running the plan on the CPU…");
    };
    connect(m_runController, &RunController::progress, this, [this, runningText](int done, int total) {
        m_runProgress->setRange(0, std::max(1, total));
        m_runProgress->setValue(done);
        // Ops of one pass, the reference's and the timed passes' alike: "op 37 of 122 · pass 3 of 11 · about 3 s left".
        const int steps = m_document->steps();
        statusBar()->showMessage(runningText() + QLatin1Char(' ')
            + QString::fromStdString(core::progressText(done, total, steps, double(m_runClock.elapsed()) / 1e3)));
    });
    connect(m_runController, &RunController::runningChanged, this, [this, runningText](bool running) {
        m_runProgress->setVisible(running);
        if (running) {
            m_runClock.start();
            m_runProgress->setRange(0, 0);
            statusBar()->showMessage(runningText());
        }
        updateRunEnabled();
    });
    connect(m_runController, &RunController::finished, this, &MainWindow::onRunFinished);
    connect(m_runController, &RunController::failed, this, [this](const QString& message) {
        statusBar()->clearMessage();
        onFailure(tr("The run failed: %1").arg(message));
    });
    connect(m_runController, &RunController::cancelled, this,
        [this] { statusBar()->showMessage(tr("Run cancelled."), 3000); });
    // A new model or plan makes a running measurement stale: stop it (the document drops an old one).
    connect(m_document, &PlanDocument::workloadChanged, this, [this] {
        m_runController->cancel();
        updateRunEnabled();
    });
    connect(m_document, &PlanDocument::planChanged, this, [this] {
        m_runController->cancel();
        updateRunEnabled();
    });
    updateRunEnabled();
}

void MainWindow::updateRunEnabled()
{
    const core::Workload* workload = m_document->workload();
    const bool runnable = m_document->hasPlan() && workload && workload->graph;
    const bool running = m_runController->isRunning();
    m_runAction->setEnabled(runnable && !running);
    m_cancelRunAction->setEnabled(running);
    m_cancelRunAction->setVisible(running);
    if (!runnable && workload && !workload->graph)
        m_runAction->setToolTip(tr("An allocation problem has no ops to run; open a model or a graph example"));
}

void MainWindow::runPlan()
{
    const core::Plan* plan = m_document->plan();
    const core::Workload* workload = m_document->workload();
    if (!plan || !workload || !workload->graph)
        return;
    const bool cuda = m_deviceCombo->currentText() == QLatin1String("cuda");
    if (cuda && !cudaDeviceStatus().available)
        return; // the entry is greyed; nothing to run on
    m_runController->start(m_document->sharedWorkload(), *plan, m_repeatSpin->value(), cuda ? RunDevice::Cuda : RunDevice::Cpu,
        m_toleranceSpin->value(), cuda ? std::optional(m_strategyPanel->device()) : std::nullopt);
}

void MainWindow::cancelRun() { m_runController->cancel(); }

void MainWindow::onRunFinished(std::shared_ptr<const RunMeasurement> measurement)
{
    const core::Plan* plan = m_document->plan();
    // The document may have moved on while the run was queued: keep only a run of what is shown.
    if (!plan || measurement->workload != m_document->sharedWorkload() || measurement->plan.offsets != plan->offsets)
        return;
    const bool match = measurement->arenaMatches && measurement->perTensorMatches && (!measurement->pool || measurement->poolMatches);
    m_document->setMeasurement(measurement);
    if (measurement->cpuCheck && !measurement->cpuCheck->within())
        onFailure(tr("The GPU's outputs are off the CPU executor's: %1").arg(gpuVsCpuText(*measurement)));
    else if (match)
        statusBar()->showMessage(tr("Measured on %1: outputs bit-identical to the no-reuse run.")
                                     .arg(measurement->deviceName.empty()
                                             ? QString::fromStdString(measurement->device)
                                             : QString::fromStdString(measurement->device + " (" + measurement->deviceName + ")")),
            8000);
    else
        onFailure(tr("The planned run's outputs differ from the no-reuse run: %1")
                      .arg(QString::fromStdString(measurement->mismatch)));
    emit runFinished();
}
