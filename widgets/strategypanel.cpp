// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategypanel.h"

#include "strategycontroller.h"

#include "planners/metrics.h"
#include "strategies/training.h"
#include "util/format.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr int kMaxDetails = 200; // per strategy in the tree; the rest is summarised
// The recompute policy combo's items (their data): greedy, checkpoints every √n, every N forward ops.
constexpr int kGreedy = -1;
constexpr int kCheckpointSqrt = 0;
constexpr int kCheckpointEveryN = 1;

QString bytesText(core::Bytes bytes) { return QString::fromStdString(core::formatBytes(bytes)); }

QString flopsText(double flops)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", flops);
    return QString::fromLatin1(text);
}

// Short and signed ("-109 us", "0.044 ms"): fusion saves fractions of a microsecond.
QString msText(double seconds)
{
    if (seconds == 0)
        return QStringLiteral("0 s"); // no unit to pick: the others follow their size (us, ms)
    return (seconds < 0 ? QStringLiteral("-") : QString()) + QString::fromStdString(core::formatSeconds(std::abs(seconds)));
}

QString fromView(std::string_view text) { return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size())); }

} // namespace

StrategyPanel::StrategyPanel(QWidget* parent)
    : QWidget(parent)
    , m_controller(new StrategyController(this))
    , m_debounce(new QTimer(this))
    , m_device(core::defaultDevice())
{
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(150); // a burst of clicks or a slider drag runs once
    connect(m_debounce, &QTimer::timeout, this, &StrategyPanel::rerun);

    auto* strategiesBox = new QGroupBox(tr("Strategies (applied in this order)"), this);
    auto* strategiesLayout = new QVBoxLayout(strategiesBox);
    for (const auto& strategy : core::strategies()) {
        auto* check = new QCheckBox(fromView(strategy->name()), strategiesBox);
        check->setObjectName(fromView(strategy->name()));
        check->setToolTip(fromView(strategy->description()));
        strategiesLayout->addWidget(check);
        connect(check, &QCheckBox::toggled, this, [this] {
            m_point.reset(); // the user's own choice replaces a frontier point's
            scheduleRerun();
        });
        m_checks.push_back(check);
        if (strategy->name() != "recompute")
            continue;
        // Its policy, indented under it.
        auto* policyRow = new QHBoxLayout;
        policyRow->setContentsMargins(20, 0, 0, 0);
        m_policyCombo = new QComboBox(strategiesBox);
        m_policyCombo->setObjectName(QStringLiteral("recomputePolicy"));
        m_policyCombo->addItem(tr("greedy"), kGreedy);
        m_policyCombo->addItem(tr("checkpoints every √n ops"), kCheckpointSqrt);
        m_policyCombo->addItem(tr("checkpoints every N ops"), kCheckpointEveryN);
        m_everySpin = new QSpinBox(strategiesBox);
        m_everySpin->setObjectName(QStringLiteral("checkpointEvery"));
        m_everySpin->setRange(1, 1000000);
        m_everySpin->setValue(4);
        m_everySpin->setPrefix(tr("N = "));
        m_everySpin->setToolTip(tr("Keep the outputs of every N-th forward op (--checkpoint N)"));
        policyRow->addWidget(m_policyCombo, 1);
        policyRow->addWidget(m_everySpin);
        strategiesLayout->addLayout(policyRow);
        connect(m_policyCombo, &QComboBox::activated, this, &StrategyPanel::onPolicyChosen);
        connect(m_everySpin, &QSpinBox::valueChanged, this, [this] {
            if (m_policyCombo->currentData().toInt() == kCheckpointEveryN)
                scheduleRerun();
        });
    }

    auto* costBox = new QGroupBox(tr("Device and budget"), this);
    auto* grid = new QGridLayout(costBox);
    m_deviceCombo = new QComboBox(costBox);
    for (const auto& device : core::builtinDevices()) {
        m_deviceCombo->addItem(QString::fromStdString(device.name), QString::fromStdString(device.name));
        m_deviceCombo->setItemData(
            m_deviceCombo->count() - 1, QString::fromStdString(device.description), Qt::ToolTipRole);
    }
    m_deviceCombo->addItem(tr("Other file…"), QString());
    m_deviceIndex = std::max(0, m_deviceCombo->findData(QString::fromStdString(m_device.name)));
    m_deviceCombo->setCurrentIndex(m_deviceIndex);
    m_deviceCombo->setToolTip(tr("Device profile the costs are estimated on (FLOP/s, bandwidths, host link)"));
    connect(m_deviceCombo, &QComboBox::activated, this, &StrategyPanel::onDeviceChosen);
    grid->addWidget(new QLabel(tr("Device"), costBox), 0, 0);
    grid->addWidget(m_deviceCombo, 0, 1, 1, 2);

    m_budgetCheck = new QCheckBox(tr("Fit a memory budget"), costBox);
    m_budgetCheck->setToolTip(tr("Try every combination of strategies and keep the one that fits the budget with "
                                 "the least estimated time; the checkboxes above are then ignored"));
    grid->addWidget(m_budgetCheck, 1, 0, 1, 3);
    m_budgetSlider = new QSlider(Qt::Horizontal, costBox);
    m_budgetSlider->setRange(5, 100);
    m_budgetSlider->setValue(75);
    m_budgetSlider->setToolTip(tr("Budget as a percentage of the peak without strategies"));
    m_budgetSpin = new QDoubleSpinBox(costBox);
    m_budgetSpin->setDecimals(2);
    m_budgetSpin->setRange(0.01, 1024.0 * 1024.0);
    m_budgetSpin->setSuffix(tr(" MiB"));
    m_budgetSpin->setToolTip(tr("Budget for the activation arena"));
    grid->addWidget(new QLabel(tr("Budget"), costBox), 2, 0);
    grid->addWidget(m_budgetSlider, 2, 1);
    grid->addWidget(m_budgetSpin, 2, 2);
    grid->setColumnStretch(1, 1);
    connect(m_budgetCheck, &QCheckBox::toggled, this, [this](bool on) {
        if (on && m_budget <= 0 && m_original)
            m_budget = core::lowerBound(m_original->problem) * m_budgetSlider->value() / 100;
        // The boxes show what is applied: the budget search's choice while it is on (none until it
        // answers), the user's own choice again when it is turned off.
        if (on) {
            m_manualChecks = checkedStrategies();
            showChecked({});
        } else {
            showChecked(m_manualChecks);
        }
        syncBudgetControls();
        scheduleRerun();
    });
    connect(m_budgetSlider, &QSlider::valueChanged, this, [this](int percent) {
        if (!m_original)
            return;
        m_budget = std::max<core::Bytes>(1, core::lowerBound(m_original->problem) * percent / 100);
        syncBudgetControls();
        if (budgetEnabled())
            scheduleRerun();
    });
    connect(m_budgetSpin, &QDoubleSpinBox::valueChanged, this, [this](double mib) {
        m_budget = std::max<core::Bytes>(1, static_cast<core::Bytes>(std::llround(mib * kMiB)));
        syncBudgetControls();
        if (budgetEnabled())
            scheduleRerun();
    });

    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_reports = new QTreeWidget(this);
    m_reports->setColumnCount(5);
    // Short headers: the dock is narrow; the tooltips say what each column is.
    m_reports->setHeaderLabels({ tr("Strategy"), tr("Saved"), tr("FLOPs"), tr("Swapped"), tr("Time") });
    const QString headerTips[] = { tr("Strategy, in pipeline order; expand for its details"),
        tr("Bytes saved: lower bound before − after"), tr("Extra FLOPs (recomputed work)"),
        tr("Bytes sent to host and back"), tr("Estimated extra time on the device (negative: saves time)") };
    for (int c = 0; c < 5; ++c)
        m_reports->headerItem()->setToolTip(c, headerTips[c]);
    m_reports->setRootIsDecorated(true);
    m_reports->setUniformRowHeights(true);
    m_reports->setAlternatingRowColors(true);
    m_reports->header()->setStretchLastSection(false);
    m_reports->header()->setMinimumSectionSize(40);
    m_reports->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    for (int c = 1; c < 5; ++c)
        m_reports->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    m_reports->setToolTip(tr("What each strategy saved (lower bound before − after) and what it spent; expand a "
                             "row for its details"));
    m_totals = new QLabel(this);
    m_totals->setWordWrap(true);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(strategiesBox);
    layout->addWidget(costBox);
    layout->addWidget(m_status);
    layout->addWidget(m_reports, 1);
    layout->addWidget(m_totals);

    connect(m_controller, &StrategyController::finished, this, &StrategyPanel::onFinished);
    connect(m_controller, &StrategyController::failed, this, &StrategyPanel::onFailed);
    connect(m_controller, &StrategyController::busyChanged, this, [this](bool busy) {
        if (busy)
            setStatus(budgetEnabled() ? tr("Trying every combination for the budget…") : tr("Applying strategies…"));
    });
    syncBudgetControls();
    syncPolicyControls();
    setStatus(tr("Check a strategy to apply it to the model on display."));
}

void StrategyPanel::resetForAnotherModel()
{
    for (QCheckBox* check : m_checks) {
        const QSignalBlocker block(check);
        check->setChecked(false);
    }
    {
        const QSignalBlocker block(m_budgetCheck);
        m_budgetCheck->setChecked(false);
    }
    m_manualChecks.clear();
    {
        const QSignalBlocker block(m_policyCombo);
        m_policyCombo->setCurrentIndex(m_policyCombo->findData(kGreedy));
    }
    m_budget = 0; // setOriginal takes it from the slider's share of the new lower bound
    m_outcome.reset();
}

void StrategyPanel::setFrontier(std::shared_ptr<const core::Frontier> frontier)
{
    m_frontier = std::move(frontier);
    if (budgetEnabled())
        scheduleRerun();
}

void StrategyPanel::applyFrontierPoint(std::shared_ptr<const core::FrontierPoint> point)
{
    if (!point || !m_original || !m_original->graph)
        return;
    m_point = std::move(point);
    if (budgetEnabled()) {
        const QSignalBlocker block(m_budgetCheck); // a point chosen by hand: the budget steps aside
        m_budgetCheck->setChecked(false);
        syncBudgetControls();
    }
    for (QCheckBox* check : m_checks)
        check->setEnabled(true);
    rerun();
}

void StrategyPanel::showChecked(const QStringList& names)
{
    for (QCheckBox* check : m_checks) {
        const QSignalBlocker block(check);
        check->setChecked(names.contains(check->objectName()));
    }
}

bool StrategyPanel::setOriginal(std::shared_ptr<const core::Workload> original)
{
    if (original != m_original) { // a frontier and its points belong to the workload they were made for
        m_frontier.reset();
        m_point.reset();
    }
    m_original = std::move(original);
    m_outcome.reset();
    m_showingTransformed = m_owesWorkload = false;
    m_controller->cancel();
    const bool graph = m_original && m_original->graph;
    for (QCheckBox* check : m_checks)
        check->setEnabled(graph && !budgetEnabled());
    m_budgetCheck->setEnabled(graph);
    syncPolicyControls();
    if (graph && m_budget <= 0) // a starting point on the slider's scale
        m_budget = std::max<core::Bytes>(1, core::lowerBound(m_original->problem) * m_budgetSlider->value() / 100);
    if (m_original && !graph) {
        setStatus(tr("%1 is an allocation problem: strategies need a model graph.")
                      .arg(QString::fromStdString(m_original->source)));
        showReports();
        return false;
    }
    syncBudgetControls();
    showReports();
    if (!isActive())
        return false;
    m_owesWorkload = true;
    rerun();
    return true;
}

bool StrategyPanel::isActive() const
{
    return m_original && m_original->graph && (budgetEnabled() || m_point || !checkedStrategies().isEmpty());
}

QStringList StrategyPanel::checkedStrategies() const
{
    QStringList names;
    for (QCheckBox* check : m_checks)
        if (check->isChecked())
            names << check->objectName();
    return names;
}

QCheckBox* StrategyPanel::strategyCheckBox(const QString& name) const
{
    for (QCheckBox* check : m_checks)
        if (check->objectName() == name)
            return check;
    return nullptr;
}

void StrategyPanel::setStrategyChecked(const QString& name, bool checked)
{
    if (QCheckBox* check = strategyCheckBox(name))
        check->setChecked(checked);
}

bool StrategyPanel::checkpointApplies() const
{
    return m_original && m_original->graph
        && core::backwardStart(*m_original->graph, m_original->schedule) < m_original->schedule.steps();
}

std::optional<int> StrategyPanel::checkpointEvery() const
{
    switch (m_policyCombo->currentData().toInt()) {
    case kCheckpointSqrt:
        return 0;
    case kCheckpointEveryN:
        return m_everySpin->value();
    default:
        return std::nullopt;
    }
}

void StrategyPanel::setCheckpointEvery(std::optional<int> every)
{
    if (every && *every > 0)
        m_everySpin->setValue(*every);
    m_policyCombo->setCurrentIndex(m_policyCombo->findData(!every ? kGreedy : *every == 0 ? kCheckpointSqrt : kCheckpointEveryN));
    onPolicyChosen();
}

void StrategyPanel::onPolicyChosen()
{
    syncPolicyControls();
    // Checkpoints are a recompute policy: choosing them turns recompute on (--checkpoint implies --recompute).
    if (checkpointEvery() && checkpointApplies())
        if (QCheckBox* recompute = strategyCheckBox(QStringLiteral("recompute")); recompute && !recompute->isChecked()) {
            recompute->setChecked(true); // toggled() re-runs
            return;
        }
    scheduleRerun();
}

void StrategyPanel::syncPolicyControls()
{
    const bool applies = checkpointApplies();
    m_policyCombo->setEnabled(applies);
    m_everySpin->setEnabled(applies && m_policyCombo->currentData().toInt() == kCheckpointEveryN);
    m_policyCombo->setToolTip(applies
            ? tr("How recompute chooses what to drop: greedy (the long-lived tensors that lower the peak most), or "
                 "checkpoints: keep the outputs of every N-th forward op (√n: N = round(sqrt(forward ops))) and "
                 "recompute the segments between them just before the backward pass reads them")
            : tr("Recompute is greedy here: checkpoints need a backward pass (Model > Training Step, or a captured "
                 "training step)"));
}

bool StrategyPanel::budgetEnabled() const { return m_budgetCheck->isChecked(); }

void StrategyPanel::setBudgetEnabled(bool enabled) { m_budgetCheck->setChecked(enabled); }

void StrategyPanel::setBudget(core::Bytes bytes)
{
    m_budget = std::max<core::Bytes>(1, bytes);
    syncBudgetControls();
    if (budgetEnabled())
        scheduleRerun();
}

void StrategyPanel::syncBudgetControls()
{
    const bool on = budgetEnabled();
    m_budgetSlider->setEnabled(on);
    m_budgetSpin->setEnabled(on);
    const bool graph = m_original && m_original->graph;
    for (QCheckBox* check : m_checks) {
        check->setEnabled(graph && !on);
        check->setStatusTip(on ? tr("Chosen by the budget search; turn the budget off to choose yourself") : QString());
    }
    const QSignalBlocker blockSpin(m_budgetSpin), blockSlider(m_budgetSlider);
    if (m_budget > 0)
        m_budgetSpin->setValue(static_cast<double>(m_budget) / kMiB);
    if (m_original && m_budget > 0) {
        const core::Bytes bound = std::max<core::Bytes>(1, core::lowerBound(m_original->problem));
        m_budgetSlider->setValue(static_cast<int>(std::clamp<core::Bytes>(m_budget * 100 / bound, 5, 100)));
    }
}

bool StrategyPanel::setDeviceFile(const QString& path, QString* error)
{
    auto device = core::loadDeviceProfile(path.toStdString());
    if (!device) {
        if (error)
            *error = QString::fromStdString(device.error().message);
        m_deviceCombo->setCurrentIndex(m_deviceIndex);
        return false;
    }
    int index = m_deviceCombo->findData(path);
    if (index < 0) {
        index = m_deviceCombo->count() - 1; // before "Other file…"
        m_deviceCombo->insertItem(index, QStringLiteral("%1 (file)").arg(QString::fromStdString(device->name)), path);
        m_deviceCombo->setItemData(index, path, Qt::ToolTipRole);
    }
    m_deviceCombo->setCurrentIndex(index);
    m_deviceIndex = index;
    m_device = std::move(*device);
    scheduleRerun();
    return true;
}

void StrategyPanel::onDeviceChosen(int index)
{
    const QString spec = m_deviceCombo->itemData(index).toString();
    if (spec.isEmpty()) { // "Other file…"
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open Device Profile"), QString(), tr("Device profiles (*.json);;All files (*)"));
        QString error;
        if (path.isEmpty())
            m_deviceCombo->setCurrentIndex(m_deviceIndex);
        else if (!setDeviceFile(path, &error))
            emit failed(tr("Could not read the device profile: %1").arg(error));
        return;
    }
    auto device = core::findDevice(spec.toStdString());
    if (!device) {
        m_deviceCombo->setCurrentIndex(m_deviceIndex);
        emit failed(tr("Could not read the device profile: %1").arg(QString::fromStdString(device.error().message)));
        return;
    }
    m_deviceIndex = index;
    m_device = std::move(*device);
    scheduleRerun();
}

void StrategyPanel::setPlannerName(const QString& name)
{
    m_planner = name.toStdString();
    if (budgetEnabled())
        scheduleRerun();
}

void StrategyPanel::scheduleRerun() { m_debounce->start(); }

void StrategyPanel::rerun()
{
    m_debounce->stop();
    if (!m_original || !m_original->graph)
        return;
    if (!isActive()) {
        // Nothing to apply: back to the original model (once).
        m_controller->cancel();
        m_outcome.reset();
        showReports();
        setStatus(tr("Check a strategy to apply it to the model on display."));
        // Unchecked before the first result after a load: the window still waits for a workload too.
        if (m_showingTransformed || m_owesWorkload) {
            m_showingTransformed = m_owesWorkload = false;
            emit workloadReady(m_original, nullptr, 0);
        }
        return;
    }
    StrategyRequest request;
    for (const QString& name : checkedStrategies())
        request.names.push_back(name.toStdString());
    request.device = m_device;
    request.planner = m_planner;
    request.budget = budgetEnabled() ? std::max<core::Bytes>(1, m_budget) : 0;
    if (const auto every = checkpointEvery(); every && checkpointApplies()) {
        request.recomputePolicy = core::RecomputePolicy::Checkpoint;
        request.checkpointEvery = *every;
    }
    // With a frontier, the budget moves along it: its fastest point that fits (else its smallest).
    if (request.budget > 0 && m_frontier && !m_frontier->points.empty()) {
        const core::FrontierPoint* pick = core::pickForBudget(*m_frontier, request.budget);
        request.point = std::make_shared<const core::FrontierPoint>(pick ? *pick : m_frontier->points.front());
    } else if (request.budget == 0 && m_point) {
        request.point = m_point;
    }
    m_controller->request(m_original, request);
}

void StrategyPanel::onFinished(std::shared_ptr<const StrategyOutcome> outcome)
{
    m_outcome = std::move(outcome);
    const StrategyOutcome& o = *m_outcome;
    QString label = QString::fromStdString(strategyLabel(o.applied));
    if (o.checkpointEvery)
        label.replace(QStringLiteral("recompute"),
            *o.checkpointEvery == 0 ? tr("recompute (checkpoints every √n ops)")
                                    : tr("recompute (checkpoints every %1 ops)").arg(*o.checkpointEvery));
    if (o.point)
        label = QString::fromStdString(o.point->label);
    if (o.point || o.budgetMode) { // the boxes show what the point or the budget chose
        QStringList chosen;
        for (const auto& name : o.applied)
            chosen << QString::fromStdString(name);
        showChecked(chosen);
    }
    if (o.point && !o.budgetMode) {
        setStatus(tr("Applied the frontier point %1: arena %2, estimated extra time %3.")
                      .arg(label, bytesText(o.point->peakBytes), QString::fromStdString(core::formatSeconds(o.point->extraSeconds))));
    } else if (o.point) {
        if (o.fits)
            setStatus(tr("Budget %1 met on the frontier with %2: arena %3, estimated extra time %4 (its fastest point that fits).")
                          .arg(bytesText(o.budget), label, bytesText(o.budgetArena), QString::fromStdString(core::formatSeconds(o.point->extraSeconds))));
        else
            setStatus(tr("Budget %1: no frontier point fits: smallest peak %2 (with %3).").arg(bytesText(o.budget), bytesText(o.budgetArena), label), true);
    } else if (o.budgetMode) {
        if (o.fits)
            setStatus(tr("Budget %1 met with %2: arena %3 (least estimated time of %4 combinations).")
                          .arg(bytesText(o.budget), label, bytesText(o.budgetArena))
                          .arg(o.combinationsTried));
        else
            setStatus(tr("Budget %1: cannot fit: smallest peak %2 (with %3).")
                          .arg(bytesText(o.budget), bytesText(o.budgetArena), label),
                true);
    } else {
        QString text = tr("Applied %1 on %2.").arg(label, QString::fromStdString(m_device.name));
        if (!o.leftOut.empty())
            text += QLatin1Char(' ')
                + (o.leftOut.size() == 1 ? tr("Left out %1: inplace does as well without it.") : tr("Left out %1: inplace does as well without them."))
                      .arg(QString::fromStdString(strategyLabel(o.leftOut)));
        setStatus(text);
    }
    showReports();
    m_showingTransformed = true;
    m_owesWorkload = false;
    emit workloadReady(o.workload, o.facts, o.budgetMode ? o.budget : 0);
}

void StrategyPanel::onFailed(const QString& message)
{
    setStatus(tr("Strategies failed: %1").arg(message), true);
    emit failed(tr("Applying strategies failed: %1").arg(message));
    // A transformed workload on display stays (last good result); right after a load nothing is, so
    // show the model as loaded rather than waiting forever.
    if (!m_showingTransformed && m_original) {
        m_owesWorkload = false;
        emit workloadReady(m_original, nullptr, 0);
    }
}

void StrategyPanel::showReports()
{
    m_reports->clear();
    m_totals->clear();
    if (!m_outcome)
        return;
    for (const auto& r : m_outcome->reports) {
        auto* item = new QTreeWidgetItem(m_reports,
            { QString::fromStdString(r.name), bytesText(r.savedBytes()), flopsText(r.extraFlops), bytesText(r.swappedBytes),
                msText(r.extraSeconds) });
        item->setToolTip(0,
            tr("lower bound %1 → %2").arg(bytesText(r.lowerBoundBefore), bytesText(r.lowerBoundAfter)));
        if (r.swappedBytes > 0)
            item->setToolTip(3, tr("copies to host and back: %1 on the device profile, of which %2 stall compute (the rest overlaps it)")
                                    .arg(msText(r.transferSeconds), msText(r.extraSeconds)));
        for (int c = 1; c < 5; ++c)
            item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
        for (std::size_t i = 0; i < r.details.size() && i < static_cast<std::size_t>(kMaxDetails); ++i) {
            auto* detail = new QTreeWidgetItem(item, { QString::fromStdString(r.details[i]) });
            detail->setFirstColumnSpanned(true);
            detail->setToolTip(0, QString::fromStdString(r.details[i]));
        }
        if (r.details.size() > static_cast<std::size_t>(kMaxDetails))
            new QTreeWidgetItem(item, { tr("… and %1 more").arg(r.details.size() - kMaxDetails) });
        for (int i = 0; i < item->childCount(); ++i)
            item->child(i)->setFirstColumnSpanned(true);
    }
    m_reports->expandAll();
    const core::Bytes before = core::lowerBound(m_original->problem);
    const core::Bytes after = core::lowerBound(m_outcome->workload->problem);
    m_totals->setText(tr("Lower bound %1 → %2 · estimated time %3 (without strategies %4)")
                          .arg(bytesText(before), bytesText(after), msText(m_outcome->estimatedSeconds),
                              msText(m_outcome->baseSeconds)));
}

void StrategyPanel::setStatus(const QString& text, bool error)
{
    m_status->setText(text);
    m_status->setStyleSheet(error ? QStringLiteral("color: #B3261E;") : QString());
}

QString StrategyPanel::statusText() const { return m_status->text(); }

QString StrategyPanel::reportText() const
{
    QString text;
    for (int i = 0; i < m_reports->topLevelItemCount(); ++i) {
        const QTreeWidgetItem* item = m_reports->topLevelItem(i);
        text += QStringLiteral("%1: saved %2, extra FLOPs %3, swapped %4, extra time %5\n")
                    .arg(item->text(0), item->text(1), item->text(2), item->text(3), item->text(4));
        for (int c = 0; c < item->childCount(); ++c)
            text += QStringLiteral("  ") + item->child(c)->text(0) + QLatin1Char('\n');
    }
    return text + m_totals->text();
}
