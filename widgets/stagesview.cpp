// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "stagesview.h"

#include "palette.h"

#include "scenarios/multichipreport.h"
#include "util/format.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPainterPath>
#include <QScrollArea>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <map>
#include <optional>

namespace {

// Role colours: distinct hues, readable under dark text, the same in the bar and the miniature arena.
QColor weightsColor() { return QColor(0x4c, 0x72, 0xb0); }
QColor activationsColor() { return QColor(0xdd, 0x84, 0x52); }
QColor receivedColor() { return QColor(0x55, 0xa8, 0x68); }
QColor sentColor() { return QColor(0x81, 0x72, 0xb3); }
QColor freeColor() { return QColor(0xec, 0xec, 0xec); }

QColor roleColor(core::StageBufferRole role)
{
    switch (role) {
    case core::StageBufferRole::Received:
        return receivedColor();
    case core::StageBufferRole::Sent:
        return sentColor();
    case core::StageBufferRole::Local:
        break;
    }
    return activationsColor();
}

// Binary units (MiB), as the main window shows the same arenas; the CLI's chip report keeps the vendors' MB.
QString sizeText(core::Bytes bytes) { return QString::fromStdString(core::formatBytes(bytes)); }

QString percent(double fraction) { return QStringLiteral("%1 %").arg(fraction * 100, 0, 'f', 1); }

} // namespace

// Paints the chips side by side; sized to its content (the view scrolls it).
class StagesCanvas : public QWidget {
public:
    explicit StagesCanvas(QWidget* parent) : QWidget(parent) { setAutoFillBackground(false); }

    void setPartition(std::shared_ptr<const core::MultiChipPlan> partition, std::shared_ptr<const core::Workload> workload)
    {
        m_partition = std::move(partition);
        m_workload = std::move(workload);
        updateGeometry();
        resize(sizeHint().expandedTo(size()));
        update();
    }
    void setMessage(const QString& message)
    {
        m_message = message;
        update();
    }

    QSize sizeHint() const override
    {
        const int chips = m_partition ? m_partition->chips() : 1;
        return { kMargin * 2 + chips * kColumn + (chips - 1) * kGap, kHeight };
    }

protected:
    void paintEvent(QPaintEvent*) override
    {
        QPainter painter(this);
        painter.fillRect(rect(), ViewPalette::background());
        painter.setRenderHint(QPainter::Antialiasing);
        if (!m_message.isEmpty() || !m_partition) {
            painter.setPen(ViewPalette::axisText());
            painter.drawText(rect(), Qt::AlignCenter, m_message.isEmpty() ? tr("No partition yet") : m_message);
            return;
        }
        const auto& plan = *m_partition;
        // Bytes sent from chip i to chip j (j == i + 1 drawn as arrows, farther ones as arcs).
        std::map<std::pair<int, int>, std::pair<core::Bytes, int>> flows;
        for (const auto& t : plan.transfers)
            if (t.fromChip >= 0 && t.toChip >= 0) {
                auto& flow = flows[{ t.fromChip, t.toChip }];
                flow.first += t.bytes;
                ++flow.second;
            }
        for (int i = 0; i < plan.chips(); ++i)
            paintChip(painter, plan, i, columnLeft(i));
        for (const auto& [pair, flow] : flows)
            paintFlow(painter, pair.first, pair.second, flow.first, flow.second);
    }

private:
    static constexpr int kMargin = 12, kColumn = 250, kGap = 86, kHeight = 540;
    static constexpr int kBarTop = 58, kBarHeight = 240, kBarWidth = 46;
    static constexpr int kArenaTop = kBarTop + kBarHeight + 44, kArenaHeight = 110;
    static constexpr int kArcTop = kArenaTop + kArenaHeight + 34;

    int columnLeft(int chip) const { return kMargin + chip * (kColumn + kGap); }

    void paintChip(QPainter& painter, const core::MultiChipPlan& plan, int chip, int left) const
    {
        const auto& stage = plan.stages[chip];
        const auto& s = stage.stage;
        QFont bold = font();
        bold.setBold(true);
        painter.setFont(bold);
        painter.setPen(ViewPalette::axisText());
        painter.drawText(QRect(left, 6, kColumn, 20), Qt::AlignLeft | Qt::AlignVCenter,
            tr("Chip %1 · %2 of %3").arg(chip).arg(sizeText(stage.usedBytes()), sizeText(stage.capacity)));
        painter.setFont(font());
        const int ops = s.end - s.begin;
        painter.drawText(QRect(left, 26, kColumn, 18), Qt::AlignLeft | Qt::AlignVCenter,
            tr("steps %1–%2 (%3 ops) · %4").arg(s.begin).arg(s.end - 1).arg(ops)
                .arg(QString::fromStdString(core::formatSeconds(stage.computeSeconds))));

        // Fill bar: capacity from bottom to top; weights, activations (arena less received), received.
        const QRectF bar(left + 4, kBarTop, kBarWidth, kBarHeight);
        painter.fillRect(bar, freeColor());
        const double capacity = static_cast<double>(std::max<core::Bytes>(stage.capacity, 1));
        const core::Bytes received = std::min(s.receivedBytes, stage.arenaBytes());
        struct Segment {
            QString label;
            core::Bytes bytes;
            QColor color;
        };
        const Segment segments[] = { { tr("weights"), s.weightBytes, weightsColor() },
            { tr("activations"), stage.arenaBytes() - received, activationsColor() }, { tr("received"), received, receivedColor() } };
        double y = bar.bottom();
        std::vector<double> labelY;
        for (const auto& segment : segments) {
            const double h = std::min(bar.height(), bar.height() * static_cast<double>(segment.bytes) / capacity);
            const QRectF piece(bar.left(), std::max(bar.top(), y - h), bar.width(), std::min(h, y - bar.top()));
            painter.fillRect(piece, segment.color);
            labelY.push_back(piece.center().y());
            y -= h;
        }
        painter.setPen(QPen(ViewPalette::axisText(), 1));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(bar);
        // Labels beside the bar, pushed apart so they never overlap, each tied to its segment by a line.
        constexpr double kLine = 17;
        std::vector<double> placed(labelY.size());
        double floor = bar.bottom() - kLine / 2;
        for (std::size_t i = 0; i < labelY.size(); ++i) {
            placed[i] = std::min(labelY[i], floor);
            floor = placed[i] - kLine;
        }
        for (std::size_t i = labelY.size(); i-- > 0;) // keep the top one inside the bar's height
            if (placed[i] < bar.top() + kLine * (static_cast<double>(labelY.size() - 1 - i) + 1.5))
                placed[i] = bar.top() + kLine * (static_cast<double>(labelY.size() - 1 - i) + 1.5);
        const double textLeft = bar.right() + 16;
        for (std::size_t i = 0; i < labelY.size(); ++i) {
            painter.setPen(QPen(segments[i].color.darker(130), 1));
            painter.drawLine(QPointF(bar.right(), labelY[i]), QPointF(textLeft - 3, placed[i]));
            painter.setPen(ViewPalette::axisText());
            painter.drawText(QRectF(textLeft, placed[i] - kLine / 2, kColumn - (textLeft - left), kLine),
                Qt::AlignLeft | Qt::AlignVCenter,
                tr("%1 %2 (%3)").arg(segments[i].label, sizeText(segments[i].bytes), percent(static_cast<double>(segments[i].bytes) / capacity)));
        }
        painter.drawText(QRectF(textLeft, bar.top() - 2, kColumn - (textLeft - left), kLine), Qt::AlignLeft | Qt::AlignVCenter,
            tr("fill %1 of %2").arg(percent(stage.fill()), sizeText(stage.capacity)));
        painter.drawText(QRectF(left, bar.bottom() + 4, kColumn, kLine), Qt::AlignLeft | Qt::AlignVCenter,
            tr("in %1 · out %2 transfers · %3 in")
                .arg(stage.transfersIn.size())
                .arg(stage.transfersOut.size())
                .arg(QString::fromStdString(core::formatSeconds(stage.transferInSeconds))));

        paintArena(painter, stage, QRectF(left + 4, kArenaTop, kColumn - 8, kArenaHeight));
    }

    // Miniature arena: x = local step, y = offset (0 at the bottom), one rectangle per buffer.
    void paintArena(QPainter& painter, const core::ChipStage& stage, const QRectF& area) const
    {
        const auto& problem = stage.stage.problem;
        painter.setPen(ViewPalette::axisText());
        painter.drawText(QRectF(area.left(), area.top() - 20, area.width(), 18), Qt::AlignLeft | Qt::AlignVCenter,
            tr("arena %1: offset ↑ by local step →").arg(sizeText(stage.arenaBytes())));
        painter.fillRect(area, ViewPalette::plotBackground());
        const double steps = std::max(1, problem.steps);
        const double top = static_cast<double>(std::max<core::Bytes>(stage.arenaBytes(), 1));
        painter.setPen(Qt::NoPen);
        for (std::size_t b = 0; b < problem.buffers.size(); ++b) {
            const auto& buffer = problem.buffers[b];
            const double x0 = area.left() + area.width() * buffer.lifetime.start / steps;
            const double x1 = area.left() + area.width() * buffer.lifetime.end / steps;
            const double y0 = area.bottom() - area.height() * static_cast<double>(stage.plan.offsets[b]) / top;
            const double y1 = area.bottom() - area.height() * static_cast<double>(stage.plan.offsets[b] + buffer.size) / top;
            painter.setBrush(roleColor(stage.stage.roles[b]));
            painter.drawRect(QRectF(QPointF(x0, y1), QPointF(std::max(x1, x0 + 1), std::max(y0, y1 + 1))));
        }
        painter.setBrush(Qt::NoBrush);
        painter.setPen(QPen(ViewPalette::gridLine(), 1));
        painter.drawRect(area);
        painter.setPen(ViewPalette::axisText());
        painter.drawText(QRectF(area.left(), area.bottom() + 2, area.width(), 16), Qt::AlignLeft | Qt::AlignTop, QStringLiteral("0"));
        painter.drawText(QRectF(area.left(), area.bottom() + 2, area.width(), 16), Qt::AlignRight | Qt::AlignTop,
            tr("%1 steps").arg(problem.steps));
    }

    void paintFlow(QPainter& painter, int from, int to, core::Bytes bytes, int count) const
    {
        painter.setPen(QPen(sentColor().darker(120), 2));
        painter.setBrush(sentColor().darker(120));
        const QString text = tr("%1\n%2 tensor(s)").arg(sizeText(bytes)).arg(count);
        if (to == from + 1) {
            const double x0 = columnLeft(from) + kColumn - 2, x1 = columnLeft(to) + 2, y = kBarTop + kBarHeight * 0.5;
            painter.drawLine(QPointF(x0, y), QPointF(x1 - 8, y));
            painter.drawPolygon(QPolygonF({ QPointF(x1, y), QPointF(x1 - 9, y - 5), QPointF(x1 - 9, y + 5) }));
            painter.setPen(ViewPalette::axisText());
            painter.drawText(QRectF(x0 - 4, y - 40, x1 - x0 + 8, 36), Qt::AlignHCenter | Qt::AlignBottom, text);
            return;
        }
        // A tensor skipping chips: an arc under the arenas.
        const double x0 = columnLeft(from) + kColumn * 0.5, x1 = columnLeft(to) + kColumn * 0.5;
        QPainterPath path(QPointF(x0, kArcTop - 14));
        path.cubicTo(QPointF(x0, kArcTop + 30), QPointF(x1, kArcTop + 30), QPointF(x1, kArcTop - 12));
        painter.setBrush(Qt::NoBrush);
        painter.setPen(QPen(sentColor().darker(120), 1.5, Qt::DashLine));
        painter.drawPath(path);
        painter.setBrush(sentColor().darker(120));
        painter.setPen(Qt::NoPen);
        painter.drawPolygon(QPolygonF({ QPointF(x1, kArcTop - 14), QPointF(x1 - 5, kArcTop - 4), QPointF(x1 + 5, kArcTop - 4) }));
        painter.setPen(ViewPalette::axisText());
        painter.drawText(QRectF((x0 + x1) / 2 - 120, kArcTop + 22, 240, 18), Qt::AlignCenter,
            tr("chip %1 → chip %2: %3, %4 tensor(s)").arg(from).arg(to).arg(sizeText(bytes)).arg(count));
    }

    std::shared_ptr<const core::MultiChipPlan> m_partition;
    std::shared_ptr<const core::Workload> m_workload;
    QString m_message;
};

StagesView::StagesView(QWidget* parent)
    : QWidget(parent)
    , m_cancel(std::make_shared<std::atomic<bool>>(false))
{
    auto* controls = new QHBoxLayout;
    auto* label = new QLabel(tr("Chips:"), this);
    m_chips = new QSpinBox(this);
    m_chips->setRange(0, 4096);
    m_chips->setSpecialValueText(tr("auto"));
    m_chips->setToolTip(tr("auto: the fewest chips that hold the model; a number spreads the load over that many"));
    label->setBuddy(m_chips);
    m_summary = new QLabel(this);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    controls->addWidget(label);
    controls->addWidget(m_chips);
    controls->addSpacing(12);
    controls->addWidget(m_summary, 1);
    auto swatch = [](const QColor& color, const QString& text) {
        return QStringLiteral("<span style='color:%1'>&#9632;</span>&nbsp;%2").arg(color.name(), text.toHtmlEscaped());
    };
    auto* legend = new QLabel(this);
    legend->setText(swatch(weightsColor(), tr("weights")) + QStringLiteral(" &nbsp; ") + swatch(activationsColor(), tr("activations"))
        + QStringLiteral(" &nbsp; ") + swatch(receivedColor(), tr("received from another chip or the host"))
        + QStringLiteral(" &nbsp; ") + swatch(sentColor(), tr("held to send on")));
    // Its own row: beside the summary line it was cut at the window's default width.
    legend->setWordWrap(true);
    m_summary->setWordWrap(true);

    m_change = new QLabel(this);
    m_change->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_change->setWordWrap(true);

    m_canvas = new StagesCanvas(this);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_canvas);
    scroll->setWidgetResizable(false);
    scroll->setMinimumHeight(m_canvas->sizeHint().height() + 20);

    m_transfers = new QTableWidget(0, 7, this);
    m_transfers->setHorizontalHeaderLabels({ tr("Tensor"), tr("From"), tr("To"), tr("Size"), tr("Produced at step"),
        tr("First use at step"), tr("Transfer time") });
    m_transfers->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_transfers->verticalHeader()->hide();
    m_transfers->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_transfers->setSelectionBehavior(QAbstractItemView::SelectRows);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(legend);
    layout->addWidget(m_change);
    layout->addWidget(scroll, 3);
    layout->addWidget(m_transfers, 1);

    connect(m_chips, &QSpinBox::valueChanged, this, [this] { repartition(); });
}

StagesView::~StagesView() { m_cancel->store(true); }

void StagesView::setWorkload(std::shared_ptr<const core::Workload> workload, const core::DeviceProfile& device)
{
    m_workload = std::move(workload);
    m_device = device;
    repartition();
}

void StagesView::setChipCount(int chips)
{
    if (chips == m_chips->value())
        repartition();
    else
        m_chips->setValue(chips); // valueChanged re-partitions
}

int StagesView::chipCount() const { return m_chips->value(); }

void StagesView::repartition()
{
    m_cancel->store(true); // the older job stops at its next stage plan
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    if (!m_workload || !m_workload->graph) {
        m_job.drop(); // a partition still running belongs to the old request
        m_busy = false;
        m_partition.reset();
        m_error = m_workload ? tr("%1 is an allocation problem; stages need a model graph").arg(QString::fromStdString(m_workload->source))
                             : QString();
        m_canvas->setMessage(m_error);
        return;
    }
    m_busy = true;
    m_summary->setText(tr("Partitioning over %1 chips…").arg(m_chips->value() == 0 ? tr("the fewest") : QString::number(m_chips->value())));
    core::MultiChipOptions options;
    options.chips = m_chips->value();
    options.cancel = core::CancelToken(m_cancel);
    struct Outcome {
        std::shared_ptr<const core::MultiChipPlan> partition; // null: failed with `error`
        QString error;
    };
    m_job.start(
        this,
        [workload = m_workload, device = m_device, options]() -> std::optional<Outcome> {
            auto result = core::planMultiChip(*workload->graph, workload->schedule, device, options); // worker thread
            if (result)
                return Outcome { std::make_shared<const core::MultiChipPlan>(std::move(*result)), {} };
            if (result.error().code == core::ErrorCode::Cancelled)
                return std::nullopt; // a newer request took over: nothing to show
            return Outcome { nullptr, QString::fromStdString(result.error().message) };
        },
        [this, workload = m_workload](std::optional<Outcome> outcome) {
            if (!outcome)
                return;
            m_busy = false;
            m_error = outcome->error;
            const auto& partition = outcome->partition;
            if (partition) {
                m_previous = m_partitioned == workload ? m_partition : nullptr;
                m_partition = partition;
                m_partitioned = workload;
            }
            showPartition();
            if (partition)
                emit partitionReady();
            else
                emit partitionFailed(m_error);
        });
}

void StagesView::showPartition()
{
    if (!m_error.isEmpty()) {
        // Keep the last good partition on screen; say why the new count failed.
        m_summary->setText(tr("Cannot partition: %1").arg(m_error));
        return;
    }
    const auto& plan = *m_partition;
    QString count = plan.requestedChips ? tr("load spread over %1 chips (fewest possible: %2)").arg(plan.chips()).arg(plan.provenMinChips)
        : plan.optimal                  ? tr("fewest that fit")
                                        : tr("fewest the planner allows (no plan fits fewer than %1)").arg(plan.provenMinChips);
    m_summary->setText(tr("%1 × %2 = %3 pooled · %4 · pipeline latency %5 · about %6 inputs/s")
                           .arg(plan.chips())
                           .arg(QString::fromStdString(plan.device.name), sizeText(plan.pooledCapacity()), count,
                               QString::fromStdString(core::formatSeconds(plan.latencySeconds())))
                           .arg(plan.throughputPerSecond(), 0, 'f', 0));
    m_change->setText(changeText());
    m_canvas->setMessage({});
    m_canvas->setPartition(m_partition, m_workload);

    m_transfers->setRowCount(static_cast<int>(plan.transfers.size()));
    auto chipText = [this](int chip) { return chip < 0 ? tr("host") : tr("chip %1").arg(chip); };
    for (int row = 0; row < static_cast<int>(plan.transfers.size()); ++row) {
        const auto& t = plan.transfers[row];
        const QStringList cells { QString::fromStdString(t.name), chipText(t.fromChip), chipText(t.toChip), sizeText(t.bytes),
            t.producedAt < 0 ? tr("(input)") : QString::number(t.producedAt),
            t.toChip < 0 ? tr("(output)") : QString::number(t.firstUse), QString::fromStdString(core::formatSeconds(t.seconds)) };
        for (int column = 0; column < cells.size(); ++column)
            m_transfers->setItem(row, column, new QTableWidgetItem(cells[column]));
    }
    m_transfers->resizeColumnsToContents();
    m_transfers->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
}

QString StagesView::changeText() const
{
    if (!m_previous || !m_partition)
        return {};
    auto fullest = [](const core::MultiChipPlan& plan) {
        double fill = 0;
        for (const auto& s : plan.stages)
            fill = std::max(fill, s.fill());
        return fill;
    };
    auto hops = [](const core::MultiChipPlan& plan) {
        int count = 0;
        for (const auto& t : plan.transfers)
            count += t.fromChip >= 0 && t.toChip >= 0;
        return count;
    };
    auto seconds = [](double s) { return QString::fromStdString(core::formatSeconds(s)); };
    const auto& a = *m_previous;
    const auto& b = *m_partition;
    return tr("From %1 to %2 chips: pooled %3 → %4 · fullest chip %5 → %6 · chip-to-chip %7 transfers (%8) → %9 (%10) · "
              "latency %11 → %12 · %13 → %14 inputs/s")
        .arg(a.chips())
        .arg(b.chips())
        .arg(sizeText(a.pooledCapacity()), sizeText(b.pooledCapacity()), percent(fullest(a)), percent(fullest(b)))
        .arg(hops(a))
        .arg(sizeText(a.transferBytes()))
        .arg(hops(b))
        .arg(sizeText(b.transferBytes()), seconds(a.latencySeconds()), seconds(b.latencySeconds()))
        .arg(a.throughputPerSecond(), 0, 'f', 0)
        .arg(b.throughputPerSecond(), 0, 'f', 0);
}
