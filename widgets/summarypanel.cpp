// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "summarypanel.h"

#include "comparedtrace.h"
#include "nestedgraphs.h"
#include "peerprofile.h"
#include "plandocument.h"
#include "runmeasurement.h"
#include "strategymarks.h"
#include "timelineview.h"
#include "tolerancespinbox.h"
#include "util/format.h"
#include "graph/capture.h"
#include "io/breakdown.h"
#include "strategies/training.h"
#include "trace/ortreport.h"

#include <QApplication>
#include <QFileInfo>
#include <QFontMetrics>
#include <QCursor>
#include <QLabel>
#include <QToolTip>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>
#include <map>
#include <vector>

namespace {

// Long tensor and op names lose their beginning, as in the views ("…denselayer1/relu1/Relu"): exported
// names are paths whose distinctive part is at the end. Keeps the panel at two readable columns.
QString elided(const QString& text, int pixels = 150)
{
    return TimelineView::elideName(QFontMetrics(QApplication::font()), text, pixels);
}

// A file name in a value column (bold): both ends say what it is ("keypointrc…fpn.onnx").
QString elidedFileName(const QString& name, int pixels = 130)
{
    QFont bold = QApplication::font();
    bold.setBold(true);
    return QFontMetrics(bold).elidedText(name, Qt::ElideMiddle, pixels);
}

QString bytesText(core::Bytes bytes) { return QString::fromStdString(core::formatBytes(bytes)); }

// A comparison's explanation row, short: side A is the other file ("there"), side B the display ("here").
QString causeLabel(core::PeakCause cause)
{
    switch (cause) {
    case core::PeakCause::OnlyInB: return QObject::tr("only here");
    case core::PeakCause::OnlyInA: return QObject::tr("only there");
    case core::PeakCause::Rounding: return QObject::tr("512-byte rounding");
    case core::PeakCause::Resized: return QObject::tr("resized");
    case core::PeakCause::LongerInB: return QObject::tr("live longer here");
    case core::PeakCause::LongerInA: return QObject::tr("live longer there");
    case core::PeakCause::PeakMoment: return QObject::tr("peaks at other moments");
    }
    return {};
}

QString opNameAt(const core::Workload& workload, core::Step step)
{
    if (!workload.graph || step < 0 || step >= workload.schedule.steps())
        return {};
    const auto& op = workload.graph->ops[static_cast<std::size_t>(workload.schedule.order[step])];
    return QString::fromStdString(op.name.empty() ? op.type : op.name);
}

// Accumulates rows both as an HTML table (shown) and as plain text (summaryText()).
struct Rows {
    QString html;
    QString plain;
    void section(const QString& title)
    {
        html += QStringLiteral(
            "<tr><td colspan=2 style='padding-top:8px; color:#5a6b7d; white-space:nowrap'><b>%1</b></td></tr>")
                    .arg(title.toHtmlEscaped());
        plain += QLatin1Char('\n') + title + QLatin1Char('\n');
    }
    // One line across both columns, for sentences that do not split into label and value.
    void wide(const QString& label, const QString& value)
    {
        html += QStringLiteral("<tr><td colspan=2>%1: <b>%2</b></td></tr>")
                    .arg(label.toHtmlEscaped(), value.toHtmlEscaped());
        plain += label + QStringLiteral(": ") + value + QLatin1Char('\n');
    }
    // A buffer's row: its name, cut as the views cut it, is a link (buffer:N) whose hover shows the
    // whole name and whose click selects the buffer in every view.
    void buffer(int index, const QString& name, const QString& value, const QString& hint)
    {
        html += QStringLiteral("<tr><td style='padding-right:10px; white-space:nowrap'><a href='buffer:%1' "
                               "style='color:%2; text-decoration:none'>%3</a></td><td><b style='white-space:nowrap'>%4</b>"
                               " <span style='color:gray'>%5</span></td></tr>")
                    .arg(index)
                    .arg(QApplication::palette().color(QPalette::WindowText).name(),
                        elided(name, 150).toHtmlEscaped(), value.toHtmlEscaped(), hint.toHtmlEscaped());
        plain += name + QStringLiteral(": ") + value + (hint.isEmpty() ? QString() : QLatin1Char(' ') + hint) + QLatin1Char('\n');
    }
    // A gray line across both columns (details that need no label).
    void note(const QString& text)
    {
        html += QStringLiteral("<tr><td colspan=2 style='color:gray'>%1</td></tr>").arg(text.toHtmlEscaped());
        plain += text + QLatin1Char('\n');
    }
    void row(const QString& label, const QString& value, const QString& hint = {})
    {
        // The value never breaks (non-breaking spaces); the gray hint after it wraps in a narrow panel.
        QString unbroken = value.toHtmlEscaped();
        unbroken.replace(QLatin1Char(' '), QChar(0x00A0));
        // Nor at an elision mark ("efficien…_b0.onnx" broke after it): word joiners hold it in place.
        unbroken.replace(QChar(0x2026), QStringLiteral("\u2060\u2026\u2060"));
        html += QStringLiteral("<tr><td style='padding-right:10px; white-space:nowrap'>%1</td><td><b style='white-space:nowrap'>%2</b>%3</td></tr>")
                    .arg(label.toHtmlEscaped(), unbroken,
                        hint.isEmpty()
                            ? QString()
                            : QStringLiteral(" <span style='color:gray'>%1</span>").arg(hint.toHtmlEscaped()));
        plain += label + QStringLiteral(": ") + value + (hint.isEmpty() ? QString() : QLatin1Char(' ') + hint)
            + QLatin1Char('\n');
    }
};

// ---- measured run: predicted vs measured, labelled with the executor that ran.
int msDecimals(double ms) { return ms < 1 ? 3 : ms < 10 ? 2 : ms < 100 ? 1 : 0; }

QString msPair(double p50, double p99)
{
    const int decimals = msDecimals(p99);
    return QStringLiteral("%1 / %2 ms").arg(p50, 0, 'f', decimals).arg(p99, 0, 'f', decimals);
}

QString msText(double ms) { return QStringLiteral("%1 ms").arg(ms, 0, 'f', msDecimals(ms)); }

} // namespace

QString gpuVsCpuText(const RunMeasurement& run)
{
    if (!run.cpuCheck)
        return run.cpuCheckNote.empty() ? QObject::tr("not compared") : QString::fromStdString(run.cpuCheckNote);
    const QString error = ToleranceSpinBox::format(run.cpuCheck->maxRelativeError);
    const QString tolerance = ToleranceSpinBox::format(run.tolerance);
    if (run.cpuCheck->within())
        return QObject::tr("max relative error %1 within %2").arg(error, tolerance);
    auto text = QObject::tr("OFF by more than %1 (max relative error %2): %3")
                    .arg(tolerance, error, QString::fromStdString(run.cpuCheck->firstOff));
    if (!run.cpuCheck->cause.empty())
        text += QObject::tr(" (%1; the Tolerance box sets the bound)").arg(QString::fromStdString(run.cpuCheck->cause));
    return text;
}

namespace {

void addMeasuredRows(Rows& rows, const PlanDocument& document)
{
    const RunMeasurement* run = document.measurement();
    if (!run)
        return;
    const auto& arena = run->arena;
    const auto& perTensor = run->perTensor;
    rows.section(QObject::tr("Measured on %1").arg(QString::fromStdString(run->device)));
    rows.row(QObject::tr("Predicted peak"), bytesText(document.metrics().lowerBound), QObject::tr("live"));
    rows.row(QObject::tr("Measured peak"), bytesText(arena.stepPeakBytes), QObject::tr("live, arena"));
    const bool cuda = run->device == "cuda";
    rows.row(cuda ? QObject::tr("Per-tensor cudaMalloc") : QObject::tr("Per-tensor malloc"), bytesText(perTensor.stepPeakBytes),
        QObject::tr("peak"));
    if (run->pool)
        rows.row(QObject::tr("Pool in use"), bytesText(run->pool->stepPeakBytes), QObject::tr("peak, cudaMallocAsync"));
    rows.row(QObject::tr("Arena allocated"), bytesText(arena.arenaBytes));
    if (arena.scratchBytes > 0) {
        // The ops' temporary memory is outside the plan unless the workload plans workspaces; large
        // next to the arena, it is why the run held more than the prediction.
        const auto* workload = document.workload();
        const bool suggest = workload && !workload->workspaces && arena.scratchBytes * 4 >= arena.arenaBytes;
        rows.row(QObject::tr("Kernel scratch"), bytesText(arena.scratchBytes),
            suggest ? QObject::tr("outside the plan; Workspaces plans it") : QObject::tr("outside the plan"));
    }
    rows.row(QObject::tr("Latency p50 / p99"), msPair(arena.latencyMs.p50, arena.latencyMs.p99));
    rows.row(QObject::tr("Per-tensor p50 / p99"), msPair(perTensor.latencyMs.p50, perTensor.latencyMs.p99));
    if (run->pool)
        rows.row(QObject::tr("Pool p50 / p99"), msPair(run->pool->latencyMs.p50, run->pool->latencyMs.p99));
    if (run->rooflineMs > 0)
        rows.row(QObject::tr("Roofline (%1)").arg(QString::fromStdString(run->costProfile)), msText(run->rooflineMs),
            QObject::tr("p50 at %1×").arg(arena.latencyMs.p50 / run->rooflineMs, 0, 'f', 1));
    if (cuda)
        rows.wide(QObject::tr("Kernels"), QObject::tr("%1 real, %2 synthetic; %3 on the host (%4 waited for the device), %5 precomputed")
                                              .arg(arena.opsReal)
                                              .arg(arena.opsSynthetic)
                                              .arg(arena.opsHost)
                                              .arg(arena.opsHostWaited)
                                              .arg(arena.opsPrecomputed));
    else
        rows.wide(QObject::tr("Kernels"), QObject::tr("%1 real, %2 synthetic").arg(arena.opsReal).arg(arena.opsSynthetic));
    if (arena.opsRuntimeShaped > 0)
        rows.row(QObject::tr("Run-time shapes"),
            arena.opsRuntimeShaped == 1 ? QObject::tr("1 op") : QObject::tr("%1 ops").arg(arena.opsRuntimeShaped));
    if (arena.boundedTensors > 0)
        rows.wide(QObject::tr("Upper bounds filled"),
            QObject::tr("%1 of %2").arg(bytesText(arena.boundedUsedBytes), bytesText(arena.boundedBytes)));
    if (cuda)
        rows.wide(QObject::tr("GPU vs CPU"), gpuVsCpuText(*run));
    rows.wide(QObject::tr("Outputs vs no-reuse run"),
        run->arenaMatches && run->perTensorMatches && (!run->pool || run->poolMatches) ? QObject::tr("bit-identical")
                                                   : QObject::tr("DIFFER: %1").arg(QString::fromStdString(run->mismatch)));
    rows.note(QObject::tr("median of %1 runs each; measured on %2, not on the planned device")
                  .arg(run->repeat)
                  .arg(QString::fromStdString(run->deviceName.empty() ? run->device : run->device + " (" + run->deviceName + ")")));
}

} // namespace

SummaryPanel::SummaryPanel(PlanDocument* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
    , m_label(new QLabel(this))
{
    m_label->setTextFormat(Qt::RichText);
    m_label->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_label->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
    connect(m_label, &QLabel::linkActivated, this, [this](const QString& link) {
        if (const int buffer = bufferOfLink(link); buffer >= 0)
            m_document->selectBuffer(buffer);
    });
    connect(m_label, &QLabel::linkHovered, this, [this](const QString& link) {
        const int buffer = bufferOfLink(link);
        const core::Workload* workload = m_document->workload();
        if (buffer < 0 || !workload) {
            QToolTip::hideText();
            return;
        }
        QToolTip::showText(QCursor::pos(),
            tr("%1\nclick to select it in every view").arg(QString::fromStdString(workload->problem.buffers[std::size_t(buffer)].name)),
            m_label);
    });
    m_label->setWordWrap(true);
    m_label->setMargin(8);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_label);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(scroll);

    connect(document, &PlanDocument::workloadChanged, this, &SummaryPanel::refresh);
    connect(document, &PlanDocument::planChanged, this, &SummaryPanel::refresh);
    connect(document, &PlanDocument::cursorChanged, this, &SummaryPanel::refresh);
    connect(document, &PlanDocument::measurementChanged, this, &SummaryPanel::refresh);
    connect(document, &PlanDocument::overlayChanged, this, &SummaryPanel::refresh);
    refresh();
}

QString SummaryPanel::summaryText() const { return m_plain; }

int SummaryPanel::bufferOfLink(const QString& link) const
{
    const core::Workload* workload = m_document->workload();
    if (!workload || !link.startsWith(QLatin1String("buffer:")))
        return -1;
    bool ok = false;
    const int buffer = link.mid(7).toInt(&ok);
    return ok && buffer >= 0 && buffer < static_cast<int>(workload->problem.buffers.size()) ? buffer : -1;
}

void SummaryPanel::refresh()
{
    const core::Workload* workload = m_document->workload();
    if (!workload) {
        m_plain = tr("No model loaded.");
        m_label->setText(m_plain);
        return;
    }
    const auto& problem = workload->problem;
    const auto plural = [](std::size_t count, const QString& one, const QString& many) {
        return QStringLiteral("%1 %2").arg(count).arg(count == 1 ? one : many);
    };
    Rows rows;
    const QString source = QString::fromStdString(workload->source);
    rows.section(tr("Model"));
    rows.row(
        tr("Source"), elidedFileName(source.startsWith(QLatin1String("example:")) ? source : QFileInfo(source).fileName()));
    rows.row(tr("Tensors"), QString::number(problem.buffers.size()), tr("buffers"));
    rows.row(tr("Steps"), QString::number(problem.steps));
    // A training step (Model > Training Step, or a captured one): where its backward pass starts.
    if (workload->graph) {
        const core::Step backward = core::backwardStart(*workload->graph, workload->schedule);
        if (backward < workload->schedule.steps())
            rows.row(tr("Mode"), core::hasCategories(*workload->graph) ? tr("captured training step") : tr("training step"),
                tr("forward + backward, backward from step %1").arg(backward));
    }
    rows.row(tr("Alignment"), QStringLiteral("%1 B").arg(problem.alignment));
    if (workload->workspaces) {
        std::size_t count = 0;
        core::Bytes bytes = 0;
        for (const auto& b : problem.buffers)
            if (b.kind == core::TensorKind::Workspace) {
                ++count;
                bytes += b.size;
            }
        rows.row(tr("Workspaces"), bytesText(bytes), plural(count, tr("buffer"), tr("buffers")));
    }
    // The control-flow graphs' weights count with the model's (core::nestedRegions).
    auto inBodies = core::nestedRegions(workload->nested);
    auto regionRow = [&](const core::Region& region) {
        QString name = QString::fromStdString(region.name);
        if (!name.isEmpty())
            name[0] = name[0].toUpper();
        auto body = std::find_if(inBodies.begin(), inBodies.end(), [&](const core::Region& b) { return b.name == region.name; });
        if (body == inBodies.end() || body->tensorCount == 0) {
            rows.row(name, bytesText(region.size), plural(region.tensorCount, tr("tensor"), tr("tensors")));
            return;
        }
        rows.row(name, bytesText(region.size + body->size),
            tr("%1, %2 in control-flow graphs").arg(plural(region.tensorCount + body->tensorCount, tr("tensor"), tr("tensors")),
                bytesText(body->size)));
        inBodies.erase(body);
    };
    for (const auto& region : workload->regions)
        regionRow(region);
    for (const auto& region : std::vector(inBodies))
        regionRow(core::Region { region.name, 0, 0 });

    const core::Plan* plan = m_document->plan();
    const auto& metrics = m_document->metrics();
    rows.section(plan ? tr("Plan: %1").arg(QString::fromStdString(plan->planner)) : tr("Plan"));
    if (!plan) {
        rows.row(tr("Status"), tr("planning…"));
    } else {
        rows.row(tr("Lower bound"), bytesText(metrics.lowerBound));
        rows.row(tr("Arena"), bytesText(metrics.arena));
        // What the percentage is, in the row: 435 % on naive reads as a defect without it.
        rows.row(tr("Fragmentation"), QStringLiteral("%1 %").arg(metrics.fragmentation * 100.0, 0, 'f', 1),
            metrics.fragmentation > 0 ? tr("arena beyond the lower bound") : tr("arena = lower bound"));
        if (metrics.colors >= 0)
            rows.row(tr("Slots"), QString::number(metrics.colors), tr("rows of buffers sharing memory"));
        else
            rows.row(tr("Slots"), QStringLiteral("—"), tr("by offset"));
        rows.row(
            tr("Max overlap"), plural(static_cast<std::size_t>(metrics.maxOverlapDepth), tr("buffer"), tr("buffers")));
        rows.row(tr("Planning time"), QString::fromStdString(core::formatSeconds(metrics.seconds)));
        // Search planners (exact) say how far they got.
        if (plan->provenOptimal)
            rows.wide(tr("Search"), tr("proven optimal"));
        else if (plan->provenLowerBound > 0)
            rows.wide(tr("Search"), tr("best found; proven lower bound %1").arg(bytesText(plan->provenLowerBound)));
        if (!plan->provenOptimal && !plan->details.empty())
            rows.note(QString::fromStdString(plan->details));
    }
    // The control-flow ops' graphs planned inside them: steps and arena each, and, where an op has
    // several (an If), the one whose arena its reservation is.
    if (!workload->nested.empty()) {
        rows.section(tr("Control flow"));
        const auto graphs = nestedGraphs(*workload);
        constexpr std::size_t kShown = 8;
        for (std::size_t g = 0; g < graphs.size() && g < kShown; ++g) {
            const core::NestedPlan& nested = *graphs[g].plan;
            const auto siblings = std::count_if(graphs.begin(), graphs.end(), [&](const NestedGraph& other) {
                return other.parent == graphs[g].parent && other.plan->op == nested.op;
            });
            // A graph inside another graph indented under it, named by its own op and attribute.
            const QString label = graphs[g].depth == 0
                ? graphs[g].path
                : QString(2 * (graphs[g].depth - 1), QChar(0x00A0)) + QStringLiteral("\u21B3 ")
                    + graphs[g].path.section(QStringLiteral(" / "), -2);
            rows.row(elided(label, 170),
                tr("%1 steps · %2").arg(nested.built.problem.steps).arg(bytesText(nested.plan.arenaSize)),
                siblings > 1 ? (nested.decides ? tr("decides") : tr("does not decide")) : QString());
        }
        if (graphs.size() > kShown)
            rows.note(tr("… %1 more graphs (the tensor table's Subgraph column lists them all)").arg(graphs.size() - kShown));
    }
    addMeasuredRows(rows, *m_document);
    // A memory snapshot: what the allocator did, beside what an offline plan of the same allocations needs.
    if (const auto& recorded = workload->recorded) {
        rows.section(tr("Recorded by %1").arg(QString::fromStdString(recorded->allocator)));
        const auto& live = m_document->liveCurve();
        const core::Bytes allocated = live.empty() ? 0 : *std::max_element(live.begin(), live.end());
        rows.row(tr("Allocated peak"), bytesText(allocated), tr("live at once"));
        if (!recorded->reserved.empty())
            rows.row(tr("Reserved peak"), bytesText(*std::max_element(recorded->reserved.begin(), recorded->reserved.end())), tr("segments"));
        rows.row(tr("Address span"), bytesText(recorded->plan.arenaSize), tr("segments stacked"));
        if (plan && plan->offsets != recorded->plan.offsets)
            rows.row(tr("Re-planned"), bytesText(plan->arenaSize), QString::fromStdString(plan->planner));
        const std::shared_ptr<const void> shown = m_document->sharedWorkload();
        if (m_recordedTotals.of.lock() != shown) {
            m_recordedTotals = { shown, {}, core::phaseNames(recorded->phases, live) };
            for (const std::int64_t stream : recorded->stream)
                ++m_recordedTotals.streams[stream];
        }
        const auto& streams = m_recordedTotals.streams;
        if (streams.size() > 1) {
            QStringList parts;
            for (const auto& [stream, count] : streams)
                parts << tr("%1 on stream %2").arg(count).arg(stream);
            rows.row(tr("Streams"), QString::number(streams.size()), parts.join(QStringLiteral(", ")));
        }
        // Annotated phases by name, the one holding the highest peak first.
        if (!recorded->phases.empty()) {
            rows.section(tr("Phases (annotated)"));
            const auto& names = m_recordedTotals.phases;
            for (std::size_t i = 0; i < names.size() && i < 6; ++i)
                rows.row(elided(QString::fromStdString(names[i].name), 150), bytesText(names[i].peakAllocated),
                    (names[i].times > 1 ? tr("peak of %1").arg(names[i].times) : tr("peak"))
                        + tr(" · %1 each").arg(QString::fromStdString(core::formatSeconds(double(names[i].totalUs) * 1e-6 / names[i].times))));
            if (names.size() > 6)
                rows.row(tr("… %1 more").arg(names.size() - 6), QString());
        }
    }

    // A peer runtime's profile of the same model: what its arena held beside this plan.
    if (const PeerProfile* peer = m_document->peerProfile()) {
        const auto& profile = *peer->profile;
        rows.section(tr("ONNX Runtime (profile)"));
        if (profile.hasMemory) {
            rows.row(tr("Peak in use"), bytesText(peer->peakInUse),
                plan && plan->arenaSize > 0 ? tr("%1× this arena").arg(double(peer->peakInUse) / double(plan->arenaSize), 0, 'f', 2) : QString());
            rows.row(tr("Arena held"), bytesText(peer->peakHeld), tr("peak"));
        } else {
            rows.note(tr("This profile has no memory numbers (ONNX Runtime 1.17 or later with its CPU arena records them)."));
        }
        rows.row(tr("Kernel time"), msText(double(profile.kernelUs()) / 1e3),
            profile.runs > 1 ? tr("run %1 of %2").arg(profile.pass + 1).arg(profile.runs) : QString());
        rows.row(tr("Steps mapped"), tr("%1 of %2").arg(peer->overlay.mapped).arg(peer->overlay.steps.size()),
            peer->overlay.fused > 0 ? tr("%1 by fused nodes").arg(peer->overlay.fused) : QString());
        if (!peer->overlay.unmappedNodes.empty())
            rows.row(tr("Nodes unmapped"), QString::number(peer->overlay.unmappedNodes.size()), tr("ORT's own or folded"));
        for (const auto& note : core::ortProfileNotes(profile, " (a profile of one run shows how the first run allocates tensor by tensor)"))
            rows.note(QString::fromStdString(note));
        rows.note(QFileInfo(peer->file).fileName());
    }

    // Another snapshot or model set beside this one: its peak, the change, and what makes the peaks differ.
    if (const ComparedTrace* compared = m_document->comparison()) {
        const auto& diff = compared->diff;
        const QString other = QFileInfo(compared->file).fileName();
        rows.section(tr("Compared with %1").arg(elided(other, 180)));
        const auto peakOf = [&](const core::DiffSide& side) {
            return side.measured ? tr("allocated peak") : tr("planned live peak, %1").arg(QString::fromStdString(side.planner));
        };
        rows.row(tr("There"), bytesText(diff.a.peak), peakOf(diff.a));
        rows.row(tr("Here"), bytesText(diff.b.peak), peakOf(diff.b));
        const core::Bytes change = diff.peakChange();
        rows.row(tr("Change"), (change > 0 ? QStringLiteral("+") : change < 0 ? QStringLiteral("−") : QString()) + bytesText(std::llabs(change)),
            change == 0 ? tr("same peak") : tr("here minus there"));
        for (std::size_t i = 0; i < diff.explanation.size() && i < 4; ++i) {
            const auto& row = diff.explanation[i];
            rows.row(causeLabel(row.cause),
                (row.bytes > 0 ? QStringLiteral("+") : row.bytes < 0 ? QStringLiteral("−") : QString()) + bytesText(std::llabs(row.bytes)),
                plural(static_cast<std::size_t>(row.allocations), tr("allocation"), tr("allocations")));
        }
        if (!diff.explanation.empty())
            rows.note(tr("There: %1; here: what is on display. %2").arg(other, QString::fromStdString(core::peakCauseText(diff, diff.explanation.front().cause))));
        rows.note(QString::fromStdString(diff.alignment.summary));
    }

    // Strategies (strategy panel): what they changed, when the workload on display is transformed.
    if (const StrategyFacts* facts = m_document->strategyFacts()) {
        rows.section(tr("Strategies"));
        rows.row(tr("Lower bound before"), bytesText(facts->beforeLowerBound));
        for (StrategyMark mark : { MarkRecomputed, MarkSwapOut, MarkSwapIn, MarkInPlace, MarkFused })
            if (const int count = facts->countWith(mark))
                rows.row(QString::fromLatin1(strategyMarkName(mark)), plural(count, tr("buffer"), tr("buffers")));
        if (!facts->trips.empty())
            rows.row(tr("Host trips"), QString::number(facts->trips.size()));
    }

    // Live set at a step: the total, then the largest buffers.
    const auto liveRows = [&](core::Step step, std::size_t top) {
        const auto live = core::liveAt(problem, step);
        core::Bytes total = 0;
        for (int b : live)
            total += problem.buffers[static_cast<std::size_t>(b)].size;
        rows.wide(tr("at step %1").arg(step),
            tr("%1 live, %2").arg(bytesText(total), plural(live.size(), tr("buffer"), tr("buffers"))));
        for (std::size_t i = 0; i < live.size() && i < top; ++i) {
            const auto& buffer = problem.buffers[static_cast<std::size_t>(live[i])];
            rows.buffer(live[i], QString::fromStdString(buffer.name), bytesText(buffer.size),
                QString::fromUtf8(core::kindName(buffer.kind).data()));
        }
        if (live.size() > top)
            rows.row(tr("… %1 more").arg(live.size() - top), QString());
    };

    // A captured step: what holds the memory at a step, by category and by module, regions included
    // (core/io/breakdown.h), the question a user debugging an out-of-memory error asks first.
    const bool captured = workload->graph && core::hasCategories(*workload->graph);
    const auto heldRows = [&](core::Step step, std::size_t topModules) {
        const core::PeakBreakdown held = core::peakBreakdown(*workload, step);
        const double total = std::max<double>(static_cast<double>(held.total()), 1);
        rows.wide(tr("held at step %1").arg(step), tr("%1, regions included").arg(bytesText(held.total())));
        std::vector<int> present; // category slots holding bytes, largest first
        for (int slot = 0; slot < core::kBreakdownSlots; ++slot)
            if (held.categories[static_cast<std::size_t>(slot)] > 0)
                present.push_back(slot);
        std::stable_sort(present.begin(), present.end(), [&](int a, int b) {
            return held.categories[static_cast<std::size_t>(a)] > held.categories[static_cast<std::size_t>(b)];
        });
        for (int slot : present) {
            const core::Bytes bytes = held.categories[static_cast<std::size_t>(slot)];
            rows.row(QString::fromUtf8(core::breakdownSlotName(slot).data()), bytesText(bytes),
                QStringLiteral("%1 %").arg(100.0 * static_cast<double>(bytes) / total, 0, 'f', 1));
        }
        for (std::size_t i = 0; i < held.modules.size() && i < topModules; ++i) {
            const auto& m = held.modules[i];
            rows.row(elided(m.module.empty() ? tr("(top level)") : QString::fromStdString(m.module), 150), bytesText(m.bytes),
                i == 0 ? tr("module") : QString());
        }
    };

    // A memory snapshot: what is live at a step by allocation site, the code to look at first.
    const auto siteRows = [&](core::Step step, std::size_t top) {
        const auto& recorded = *workload->recorded;
        std::map<int, std::pair<core::Bytes, int>> bySite; // site -> bytes, allocations
        for (int b : core::liveAt(problem, step)) {
            auto& entry = bySite[recorded.site[static_cast<std::size_t>(b)]];
            entry.first += problem.buffers[static_cast<std::size_t>(b)].size;
            ++entry.second;
        }
        std::vector<std::pair<int, std::pair<core::Bytes, int>>> sorted(bySite.begin(), bySite.end());
        std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
        rows.wide(tr("by allocation site"), plural(sorted.size(), tr("site"), tr("sites")));
        for (std::size_t i = 0; i < sorted.size() && i < top; ++i) {
            const int site = sorted[i].first;
            const QString name = site >= 0 && static_cast<std::size_t>(site) < recorded.siteNames.size()
                ? QString::fromStdString(recorded.siteNames[static_cast<std::size_t>(site)])
                : tr("(no frames)");
            rows.row(elided(name, 150), bytesText(sorted[i].second.first), plural(static_cast<std::size_t>(sorted[i].second.second), tr("allocation"), tr("allocations")));
        }
    };
    const bool sites = workload->recorded && workload->recorded->site.size() == problem.buffers.size();

    const core::Step peak = core::peakStep(problem);
    if (peak >= 0) {
        const QString op = opNameAt(*workload, peak);
        rows.section(tr("Peak") + (op.isEmpty() ? QString() : QStringLiteral(" · %1").arg(elided(op, 210))));
        if (captured)
            heldRows(peak, 5);
        if (sites)
            siteRows(peak, 5);
        liveRows(peak, 5);
    }
    const core::Step cursor = m_document->cursorStep();
    if (cursor >= 0) {
        const QString op = opNameAt(*workload, cursor);
        rows.section(tr("Cursor") + (op.isEmpty() ? QString() : QStringLiteral(" · %1").arg(elided(op, 210))));
        liveRows(cursor, 3);
    }

    // What import had to say (folded ops, estimated sizes, subgraphs): the status bar shows it only
    // briefly and cut to its width.
    if (!workload->notes.empty()) {
        rows.section(tr("Notes"));
        for (const auto& note : workload->notes)
            rows.note(QString::fromStdString(note));
    }

    m_plain = rows.plain;
    m_label->setText(
        QStringLiteral("<table cellspacing=0 cellpadding=1 width='100%'>") + rows.html + QStringLiteral("</table>"));
}
