// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "scenariowindows.h"

#include "chipteachingview.h"
#include "kvcacheview.h"
#include "plandocument.h"

#include "planners/planner.h"
#include "scenarios/multichipreport.h"
#include "util/format.h"
#include "util/progresstext.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QScopedValueRollback>
#include <QVBoxLayout>

#include <algorithm>

namespace {

struct LlmPreset {
    const char* label;
    int layers;
    int hidden;
    int heads;
    int kvHeads;
    int batch;
    int promptMin, promptMax, outputMin, outputMax, maxLength;
    double capacityGiB;
};

// Shapes of well-known decoder-only model sizes, and a small one that runs instantly in a classroom.
constexpr LlmPreset kPresets[] = {
    { "Classroom: 4 layers, hidden 512, 8 heads", 4, 512, 8, 8, 8, 16, 128, 16, 128, 512, 0.25 },
    { "7B class: 32 layers, hidden 4096, 32 heads", 32, 4096, 32, 32, 16, 128, 1024, 64, 512, 4096, 80 },
    { "8B class, grouped-query: 32 layers, 4096, 8 KV heads", 32, 4096, 32, 8, 64, 128, 1024, 64, 512, 4096, 80 },
    { "70B class, grouped-query: 80 layers, 8192, 8 KV heads", 80, 8192, 64, 8, 32, 128, 1024, 64, 512, 4096, 80 },
};

QSpinBox* spin(int min, int max, int step = 1)
{
    auto* box = new QSpinBox;
    box->setRange(min, max);
    box->setSingleStep(step);
    box->setAccelerated(true);
    return box;
}

QString errorStyle()
{
    return QStringLiteral("color: #b00020;");
}

} // namespace

LlmScenarioWindow::LlmScenarioWindow(QWidget* parent)
    : QWidget(parent, Qt::Window)
{
    setWindowTitle(tr("LLM decode with a paged KV cache — MemPlan Studio"));

    m_preset = new QComboBox;
    m_preset->setObjectName(QStringLiteral("llmPreset"));
    for (const auto& preset : kPresets)
        m_preset->addItem(tr(preset.label));
    m_layers = spin(1, 1024);
    m_hidden = spin(8, 131072, 64);
    m_heads = spin(1, 1024);
    m_kvHeads = spin(0, 1024);
    m_kvHeads->setSpecialValueText(tr("same as heads"));
    m_batch = spin(1, 4096);
    m_promptMin = spin(1, 1 << 20, 16);
    m_promptMax = spin(1, 1 << 20, 16);
    m_outputMin = spin(1, 1 << 20, 16);
    m_outputMax = spin(1, 1 << 20, 16);
    m_maxLength = spin(1, 1 << 22, 256);
    m_blockTokens = spin(1, 65536);
    m_arrival = spin(0, 100000);
    m_arrival->setSpecialValueText(tr("all at step 0"));
    m_capacityGiB = new QDoubleSpinBox;
    m_capacityGiB->setRange(0.001, 1 << 20);
    m_capacityGiB->setDecimals(2);
    m_capacityGiB->setSuffix(tr(" GiB"));
    m_planner = new QComboBox;
    for (const auto& name : core::plannerNames())
        if (name != "exact") // one search per step shape would take minutes
            m_planner->addItem(QString::fromStdString(name));
    m_planner->setCurrentText(QString::fromUtf8(core::kDefaultPlanner.data(), qsizetype(core::kDefaultPlanner.size())));
    m_planner->setToolTip(tr("Planner for each decode step's activation arena"));

    auto* form = new QFormLayout;
    form->addRow(tr("Preset"), m_preset);
    form->addRow(tr("Layers"), m_layers);
    form->addRow(tr("Hidden size"), m_hidden);
    form->addRow(tr("Attention heads"), m_heads);
    form->addRow(tr("KV heads"), m_kvHeads);
    form->addRow(tr("Batch (sequences)"), m_batch);
    auto range = [](QSpinBox* low, QSpinBox* high) {
        auto* row = new QHBoxLayout;
        row->addWidget(low);
        row->addWidget(new QLabel(QStringLiteral("..")));
        row->addWidget(high);
        return row;
    };
    form->addRow(tr("Prompt tokens"), range(m_promptMin, m_promptMax));
    form->addRow(tr("Output tokens"), range(m_outputMin, m_outputMax));
    form->addRow(tr("Max length (tokens)"), m_maxLength);
    form->addRow(tr("Block (tokens)"), m_blockTokens);
    form->addRow(tr("Arrival interval (steps)"), m_arrival);
    form->addRow(tr("KV capacity"), m_capacityGiB);
    form->addRow(tr("Step planner"), m_planner);

    m_run = new QPushButton(tr("Run scenario"));
    m_run->setDefault(true);
    m_status = new QLabel;
    m_status->setWordWrap(true);
    m_status->setMinimumWidth(260);

    auto* side = new QVBoxLayout;
    side->addLayout(form);
    side->addWidget(m_run);
    side->addWidget(m_status);
    side->addStretch(1);

    m_view = new KvCacheView;
    auto* layout = new QHBoxLayout(this);
    layout->addLayout(side);
    layout->addWidget(m_view, 1);

    // A preset is a whole configuration: choosing one runs it. Editing a field afterwards marks the
    // chart stale until Run.
    connect(m_preset, &QComboBox::activated, this, [this](int index) {
        applyPreset(index);
        run();
    });
    for (QSpinBox* box : { m_layers, m_hidden, m_heads, m_kvHeads, m_batch, m_promptMin, m_promptMax, m_outputMin, m_outputMax,
             m_maxLength, m_blockTokens, m_arrival })
        connect(box, &QSpinBox::valueChanged, this, &LlmScenarioWindow::markStale);
    connect(m_capacityGiB, &QDoubleSpinBox::valueChanged, this, &LlmScenarioWindow::markStale);
    connect(m_planner, &QComboBox::currentIndexChanged, this, &LlmScenarioWindow::markStale);
    connect(m_run, &QPushButton::clicked, this, [this] {
        if (m_view->isBusy())
            m_view->cancelScenario();
        else
            run();
    });
    connect(m_view, &KvCacheView::scenarioProgress, this, [this](int done, int total) {
        m_status->setText(tr("Planning decode steps: %1")
                              .arg(QString::fromStdString(core::progressText(done, total, total, double(m_clock.elapsed()) / 1e3, "step"))));
    });
    connect(m_view, &KvCacheView::scenarioCancelled, this, [this] {
        setRunning(false);
        m_status->setStyleSheet({});
        m_status->setText(m_view->result() ? tr("Cancelled; the chart shows the previous run.") : tr("Cancelled."));
        m_view->setStale(m_view->result() != nullptr);
    });
    connect(m_view, &KvCacheView::scenarioReady, this, [this] {
        setRunning(false);
        m_status->setStyleSheet({});
        const auto* result = m_view->result();
        m_status->setText(result ? tr("%1 decode steps, %2 KiB of KV cache per token; weights %3 (outside the KV capacity).")
                                       .arg(result->steps)
                                       .arg(result->config.kvBytesPerToken() / 1024)
                                       .arg(QString::fromStdString(core::formatBytes(result->weightBytes)))
                                 : QString());
    });
    connect(m_view, &KvCacheView::scenarioFailed, this, [this](const QString& message) {
        setRunning(false);
        m_status->setStyleSheet(errorStyle());
        m_status->setText(message);
    });
    applyPreset(0);
    resize(1500, 860);
}

void LlmScenarioWindow::markStale()
{
    if (!m_applyingPreset && m_view->result())
        m_view->setStale(true);
}

void LlmScenarioWindow::setRunning(bool running)
{
    m_run->setText(running ? tr("Cancel") : tr("Run scenario"));
    m_run->setToolTip(running ? tr("Stop the scenario; the chart keeps the last finished run") : QString());
}

void LlmScenarioWindow::applyPreset(int index)
{
    if (index < 0 || index >= int(std::size(kPresets)))
        return;
    const QScopedValueRollback applying(m_applyingPreset, true);
    const auto& p = kPresets[index];
    m_layers->setValue(p.layers);
    m_hidden->setValue(p.hidden);
    m_heads->setValue(p.heads);
    m_kvHeads->setValue(p.kvHeads == p.heads ? 0 : p.kvHeads);
    m_batch->setValue(p.batch);
    m_promptMin->setValue(p.promptMin);
    m_promptMax->setValue(p.promptMax);
    m_outputMin->setValue(p.outputMin);
    m_outputMax->setValue(p.outputMax);
    m_maxLength->setValue(p.maxLength);
    m_blockTokens->setValue(16);
    m_arrival->setValue(0);
    m_capacityGiB->setValue(p.capacityGiB);
}

core::LlmConfig LlmScenarioWindow::config() const
{
    core::LlmConfig config;
    config.layers = m_layers->value();
    config.hidden = m_hidden->value();
    config.heads = m_heads->value();
    config.kvHeads = m_kvHeads->value();
    config.batch = m_batch->value();
    config.promptRange = { m_promptMin->value(), m_promptMax->value() };
    config.outputRange = { m_outputMin->value(), m_outputMax->value() };
    config.maxLength = m_maxLength->value();
    config.blockTokens = m_blockTokens->value();
    config.arrivalInterval = m_arrival->value();
    config.capacity = static_cast<core::Bytes>(m_capacityGiB->value() * double(core::Bytes(1) << 30));
    return config;
}

void LlmScenarioWindow::setConfig(const core::LlmConfig& config)
{
    m_layers->setValue(config.layers);
    m_hidden->setValue(static_cast<int>(config.hidden));
    m_heads->setValue(config.heads);
    m_kvHeads->setValue(config.kvHeads);
    m_batch->setValue(config.batch);
    m_promptMin->setValue(static_cast<int>(config.promptRange.min));
    m_promptMax->setValue(static_cast<int>(config.promptRange.max));
    m_outputMin->setValue(static_cast<int>(config.outputRange.min));
    m_outputMax->setValue(static_cast<int>(config.outputRange.max));
    m_maxLength->setValue(static_cast<int>(config.maxLength));
    m_blockTokens->setValue(static_cast<int>(config.blockTokens));
    m_arrival->setValue(config.arrivalInterval);
    m_capacityGiB->setValue(double(config.capacity) / double(core::Bytes(1) << 30));
}

void LlmScenarioWindow::run()
{
    const auto config = this->config();
    if (const auto status = core::validateLlmConfig(config); !status) {
        m_status->setStyleSheet(errorStyle());
        m_status->setText(QString::fromStdString(status.error().message));
        return;
    }
    m_status->setStyleSheet({});
    m_status->setText(tr("Running %1 sequences over their decode steps…").arg(config.batch));
    m_clock.start();
    setRunning(true);
    m_view->requestScenario(config, m_planner->currentText());
}

AcceleratorWindow::AcceleratorWindow(PlanDocument* document, QWidget* parent)
    : QWidget(parent, Qt::Window)
    , m_document(document)
    , m_devices(core::builtinDevices())
{
    setWindowTitle(tr("Accelerator chips — MemPlan Studio"));
    m_device = new QComboBox;
    int initial = 0;
    for (std::size_t i = 0; i < m_devices.size(); ++i) {
        const auto& device = m_devices[i];
        // In MiB as every size in the Studio; the tooltip has the vendor's decimal figure.
        m_device->addItem(tr("%1 (%2)").arg(QString::fromStdString(device.name),
            QString::fromStdString(core::formatBytes(device.memoryCapacity))));
        m_device->setItemData(int(i),
            tr("%1\n%2 of memory per chip (%3 as quoted)")
                .arg(QString::fromStdString(device.description), QString::fromStdString(core::formatBytes(device.memoryCapacity)),
                    QString::fromStdString(core::formatDecimalBytes(device.memoryCapacity))),
            Qt::ToolTipRole);
        if (device.name == "groq-lpu")
            initial = int(i);
    }
    m_device->setCurrentIndex(initial);
    m_caption = new QLabel;
    m_caption->setWordWrap(true);
    m_view = new ChipTeachingView;

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Device:")));
    top->addWidget(m_device);
    top->addWidget(m_caption, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_view, 1);

    connect(m_device, &QComboBox::currentIndexChanged, this, &AcceleratorWindow::refresh);
    connect(m_document, &PlanDocument::workloadChanged, this, &AcceleratorWindow::refresh);
    refresh();
    resize(1450, 860);
}

void AcceleratorWindow::refresh()
{
    const int index = m_device->currentIndex();
    if (index < 0 || index >= int(m_devices.size())) {
        m_caption->setText(tr("No device profiles found (resources/devices)."));
        return;
    }
    const auto workload = m_document->sharedWorkload();
    if (!workload)
        m_caption->setText(tr("Open a model to see it on the chip."));
    else if (!workload->graph)
        m_caption->setText(tr("%1 is an allocation problem; the chip views need a model graph.")
                               .arg(QString::fromStdString(workload->source)));
    else
        m_caption->setText(tr("%1 on %2").arg(QString::fromStdString(workload->source),
            QString::fromStdString(m_devices[index].description)));
    m_view->setWorkload(workload, m_devices[index]);
}
