// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// ChipTeachingView: the three modes and what each shows. The canvases are in chipcanvases.cpp, the
// measured series in chipteachingviewmeasure.cpp.
#include "chipteachingview.h"

#include "chipcanvases.h"
#include "cudadevice.h"
#include "stagesview.h"

#include "cost/opcost.h"
#include "scenarios/multichipreport.h"
#include "util/format.h"

#include <QButtonGroup>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace {

QString qs(const std::string& text) { return QString::fromStdString(text); }

} // namespace


ChipTeachingView::ChipTeachingView(QWidget* parent)
    : QWidget(parent)
    , m_cancel(std::make_shared<std::atomic<bool>>(false))
{
    auto* modes = new QHBoxLayout;
    m_modes = new QButtonGroup(this);
    const QString names[] = { tr("Architecture"), tr("Performance"), tr("Multi-chip") };
    for (int i = 0; i < 3; ++i) {
        auto* button = new QPushButton(names[i], this);
        button->setCheckable(true);
        m_modes->addButton(button, i);
        modes->addWidget(button);
    }
    m_modes->button(0)->setChecked(true);
    modes->addStretch(1);

    m_architecture = new ChipArchitectureCanvas(this);
    m_step = new QSlider(Qt::Horizontal, this);
    m_stepLabel = new QLabel(this);
    auto* architecture = new QWidget(this);
    auto* archLayout = new QVBoxLayout(architecture);
    auto* stepRow = new QHBoxLayout;
    stepRow->addWidget(new QLabel(tr("Step:"), architecture));
    stepRow->addWidget(m_step, 1);
    stepRow->addWidget(m_stepLabel);
    archLayout->addLayout(stepRow);
    archLayout->addWidget(m_architecture, 1);

    m_performance = new ChipPerformanceCanvas(this);
    m_measure = new QPushButton(tr("Measure on CPU"), this);
    m_measure->setObjectName(QStringLiteral("measureCpuButton"));
    m_measure->setToolTip(tr("Run the model 20 times on the CPU executor (a cached processor) and plot each run"));
    m_measureGpu = new QPushButton(tr("Measure on GPU"), this);
    m_measureGpu->setObjectName(QStringLiteral("measureGpuButton"));
    const CudaDeviceStatus& cuda = cudaDeviceStatus();
    m_measureGpu->setToolTip(cuda.available ? tr("Run the model 20 times on the CUDA executor (%1) and plot each run").arg(cuda.description)
                                            : tr("No CUDA device: %1").arg(cuda.reason));
    auto* performance = new QWidget(this);
    auto* perfLayout = new QVBoxLayout(performance);
    auto* perfRow = new QHBoxLayout;
    perfRow->addWidget(m_measure);
    perfRow->addWidget(m_measureGpu);
    perfRow->addStretch(1);
    perfLayout->addLayout(perfRow);
    perfLayout->addWidget(m_performance, 1);

    m_stages = new StagesView(this);
    m_pages = new QStackedWidget(this);
    m_pages->addWidget(architecture);
    m_pages->addWidget(performance);
    m_pages->addWidget(m_stages);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(modes);
    layout->addWidget(m_pages, 1);

    connect(m_modes, &QButtonGroup::idClicked, m_pages, &QStackedWidget::setCurrentIndex);
    connect(m_step, &QSlider::valueChanged, this, [this] { refresh(); });
    connect(m_stages, &StagesView::partitionReady, this, [this] { refresh(); });
    // While it measures, the same button cancels (its text says so, with the run it is on).
    connect(m_measure, &QPushButton::clicked, this, [this] { m_cpuBusy ? cancelMeasurement() : measure(RunDevice::Cpu, 20); });
    connect(m_measureGpu, &QPushButton::clicked, this, [this] { m_gpuBusy ? cancelMeasurement() : measure(RunDevice::Cuda, 20); });
    updateMeasureButtons();
}

ChipTeachingView::~ChipTeachingView() { m_cancel->store(true); }

void ChipTeachingView::setWorkload(std::shared_ptr<const core::Workload> workload, const core::DeviceProfile& device)
{
    m_workload = std::move(workload);
    m_device = device;
    m_runs.clear();
    m_runsLabel.clear();
    m_gpuRuns.clear();
    m_gpuRunsLabel.clear();
    m_cancel->store(true); // a measurement of the old model is no longer wanted
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    ++m_generation;
    ++m_gpuGeneration;
    // Only the results are dropped: a job still running keeps the executors busy until it sees the
    // cancel flag, so the buttons wait for it (the busy flags are cleared when it reports).
    m_step->setRange(0, m_workload ? std::max(0, m_workload->schedule.steps() - 1) : 0);
    m_stages->setWorkload(m_workload, device);
    refresh();
}

void ChipTeachingView::setMode(Mode mode)
{
    m_modes->button(static_cast<int>(mode))->setChecked(true);
    m_pages->setCurrentIndex(static_cast<int>(mode));
}

ChipTeachingView::Mode ChipTeachingView::mode() const { return static_cast<Mode>(m_pages->currentIndex()); }

void ChipTeachingView::setStep(int step) { m_step->setValue(step); }

int ChipTeachingView::step() const { return m_step->value(); }

void ChipTeachingView::refresh()
{
    // A partition of the previous model may still be on show until the new one lands: not this one's.
    const auto partition = m_stages->partitionedWorkload() == m_workload ? m_stages->partition() : nullptr;
    m_architecture->workload = m_workload;
    m_architecture->partition = partition;
    m_architecture->step = m_step->value();
    if (m_workload && m_workload->graph && m_step->value() < m_workload->schedule.steps()) {
        const auto& op = m_workload->graph->ops[m_workload->schedule.order[m_step->value()]];
        m_stepLabel->setText(tr("%1 / %2 · %3").arg(m_step->value()).arg(m_workload->schedule.steps() - 1).arg(qs(op.type)));
    }
    m_performance->measured.clear();
    m_performance->measured.push_back({ m_runsLabel.isEmpty() ? tr("cached processor") : m_runsLabel, m_runs, QColor(0xdd, 0x84, 0x52),
        m_cpuBusy ? tr("measuring: the first run is on its way…") : tr("no runs measured yet: press Measure on CPU") });
    const CudaDeviceStatus& cuda = cudaDeviceStatus();
    m_performance->measured.push_back({ !m_gpuRunsLabel.isEmpty() ? m_gpuRunsLabel
                                            : cuda.available      ? tr("cuda: %1").arg(cuda.description)
                                                                  : tr("GPU (CUDA executor)"),
        m_gpuRuns, QColor(0x3a, 0x9a, 0x5b),
        m_gpuBusy            ? tr("measuring: the first run is on its way…")
            : cuda.available ? tr("no runs measured yet: press Measure on GPU")
                             : tr("no GPU: %1").arg(cuda.reason) });
    m_performance->chipLabel = tr("%1 (deterministic, estimate)").arg(qs(m_device.name));
    if (partition) {
        m_performance->chipMs = partition->latencySeconds() * 1e3;
        m_performance->throughputText = tr("%1 × %2: one input takes %3 end to end; pipelined over the chips, about %4 inputs/s "
                                           "(the slowest chip takes %5). Roofline estimates: no cache, so no run-to-run variation.")
                                            .arg(partition->chips())
                                            .arg(qs(m_device.name), qs(core::formatSeconds(partition->latencySeconds())))
                                            .arg(partition->throughputPerSecond(), 0, 'f', 0)
                                            .arg(qs(core::formatSeconds(partition->bottleneckSeconds())));
    } else if (m_workload && m_workload->graph) {
        m_performance->chipMs = core::scheduleCost(*m_workload->graph, m_workload->schedule, m_device).seconds * 1e3;
        m_performance->throughputText = tr("Partitioning…");
    }
    m_architecture->update();
    m_performance->update();
}
