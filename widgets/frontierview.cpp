// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "qcp.h" // first: see qcp.h

#include "frontierview.h"

#include "util/format.h"

#include <QCoreApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QThreadPool>
#include <QToolTip>
#include <QVBoxLayout>

#include <cmath>

namespace {
QString pointText(const core::FrontierPoint& p, double baseSeconds)
{
    QString text = QStringLiteral("<b>%1</b><br/>peak %2 · extra time %3")
                       .arg(QString::fromStdString(p.label).toHtmlEscaped(),
                           QString::fromStdString(core::formatBytes(p.peakBytes)),
                           QString::fromStdString(core::formatSeconds(p.extraSeconds)));
    if (baseSeconds > 0)
        text += QStringLiteral(" (%1 %)").arg(100.0 * p.extraSeconds / baseSeconds, 0, 'f', 1);
    text += QStringLiteral("<br/>%1").arg(QString::fromStdString(p.method));
    const auto list = [](const std::vector<std::string>& names) {
        QStringList out;
        for (std::size_t i = 0; i < names.size() && i < 4; ++i)
            out << QString::fromStdString(names[i]).toHtmlEscaped();
        if (names.size() > 4)
            out << QStringLiteral("… %1 more").arg(names.size() - 4);
        return out.join(QStringLiteral(", "));
    };
    if (!p.recomputed.empty())
        text += QStringLiteral("<br/>recomputed %1: %2").arg(p.recomputed.size()).arg(list(p.recomputed));
    if (!p.swapped.empty())
        text += QStringLiteral("<br/>swapped %1: %2").arg(p.swapped.size()).arg(list(p.swapped));
    return text;
}
} // namespace

FrontierView::FrontierView(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    auto* row = new QHBoxLayout;
    m_compute = new QPushButton(tr("Compute frontier"), this);
    m_compute->setToolTip(tr("The plans no other beats in both peak memory and estimated extra time, over recompute, "
                             "checkpoint and swap decisions (as memplan compare --frontier)"));
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setVisible(false);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setVisible(false);
    m_progress->setMaximumWidth(220);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    row->addWidget(m_compute);
    row->addWidget(m_progress);
    row->addWidget(m_cancel);
    row->addWidget(m_status, 1);
    layout->addLayout(row);
    connect(m_compute, &QPushButton::clicked, this, &FrontierView::compute);
    connect(m_cancel, &QPushButton::clicked, this, &FrontierView::cancel);

    m_plot = new QCustomPlot(this);
    layout->addWidget(m_plot, 1);
    QFont f = font();
    m_plot->setBackground(ViewPalette::background());
    m_plot->axisRect()->setBackground(ViewPalette::plotBackground());
    for (QCPAxis* axis : { m_plot->xAxis, m_plot->yAxis })
        styleAxis(axis, f);
    m_plot->yAxis->setLabel(tr("peak memory"));
    m_plot->xAxis->setLabel(tr("estimated extra time"));
    m_heuristics = m_plot->addGraph();
    m_heuristics->setLineStyle(QCPGraph::lsNone);
    m_heuristics->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(QColor(0x9AA0A6), 1.2), QColor(0xDADCE0), 7));
    m_heuristics->setName(tr("on/off combinations, √n checkpoints"));
    m_line = m_plot->addGraph();
    m_line->setLineStyle(QCPGraph::lsLine);
    m_line->setPen(QPen(QColor(0x1565C0), 1.5));
    m_line->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(QColor(0x0D47A1), 1.5), QColor(0x42A5F5), 9));
    m_line->setName(tr("frontier (click a point to apply it)"));
    m_base = m_plot->addGraph();
    m_base->setLineStyle(QCPGraph::lsNone);
    m_base->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(QColor(0x202124), 1.5), QColor(0x202124), 10));
    m_base->setName(tr("no strategy"));
    m_current = m_plot->addGraph();
    m_current->setLineStyle(QCPGraph::lsNone);
    m_current->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(QColor(0xE69F00), 2.5), Qt::NoBrush, 16));
    m_current->setName(tr("plan on display"));
    // The legend in a row above the plot, so it never covers a point.
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(f);
    m_plot->legend->setBrush(Qt::NoBrush);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->axisRect()->insetLayout()->simplify();
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(0, 0.001);
    m_plot->legend->setMargins(QMargins(8, 4, 8, 0));
    connect(m_plot, &QCustomPlot::mousePress, this, &FrontierView::onPlotClick);
    connect(m_plot, &QCustomPlot::mouseMove, this, &FrontierView::onPlotMove);
    redraw();
}

FrontierView::~FrontierView() { cancel(); }

void FrontierView::setOriginal(std::shared_ptr<const core::Workload> original)
{
    if (original == m_original)
        return;
    cancel();
    m_original = std::move(original);
    const bool had = m_frontier != nullptr;
    m_frontier.reset();
    m_hasCurrent = false;
    const bool graph = m_original && m_original->graph;
    m_compute->setEnabled(graph);
    m_status->setText(graph ? tr("Compute the frontier of this model's strategies.")
                            : tr("The frontier needs a model graph (an allocation problem has nothing to rewrite)."));
    redraw();
    if (had)
        emit frontierReady(nullptr);
}

void FrontierView::setPlannerName(const QString& name) { m_planner = name.toStdString(); }

void FrontierView::setDevice(const core::DeviceProfile& device) { m_device = device; }

void FrontierView::setBusy(bool busy)
{
    if (busy == m_busy)
        return;
    m_busy = busy;
    m_compute->setEnabled(!busy && m_original && m_original->graph);
    m_cancel->setVisible(busy);
    m_progress->setVisible(busy);
    emit busyChanged(busy);
}

void FrontierView::compute()
{
    if (!m_original || !m_original->graph || m_busy)
        return;
    const quint64 generation = ++m_generation;
    m_cancelFlag = std::make_shared<std::atomic<bool>>(false);
    core::FrontierOptions options;
    options.planner = m_planner;
    options.strategy.device = m_device;
    options.strategy.alignment = m_original->problem.alignment;
    m_progress->setValue(0);
    m_status->setText(tr("Computing the frontier…"));
    setBusy(true);
    QThreadPool::globalInstance()->start([self = QPointer(this), generation, original = m_original, options,
                                             flag = m_cancelFlag] {
        int reported = -1;
        const auto progress = [&](double fraction, std::string_view what) {
            const int permille = static_cast<int>(fraction * 1000);
            if (permille == reported)
                return;
            reported = permille;
            QMetaObject::invokeMethod(QCoreApplication::instance(), [self, generation, fraction, text = QString::fromUtf8(what.data(), static_cast<int>(what.size()))] {
                if (self)
                    self->onProgress(generation, fraction, text);
            });
        };
        auto result = core::computeFrontier(*original, options, progress, core::CancelToken(flag));
        std::shared_ptr<const core::Frontier> frontier;
        QString error;
        if (result)
            frontier = std::make_shared<const core::Frontier>(std::move(*result));
        else
            error = QString::fromStdString(result.error().message);
        QMetaObject::invokeMethod(QCoreApplication::instance(), [self, generation, frontier = std::move(frontier), error] {
            if (self)
                self->onFinished(generation, frontier, error);
        });
    });
}

void FrontierView::cancel()
{
    if (m_cancelFlag)
        m_cancelFlag->store(true);
    if (m_busy) {
        ++m_generation; // its result is dropped
        setBusy(false);
        m_status->setText(tr("Cancelled."));
    }
}

void FrontierView::onProgress(quint64 generation, double fraction, const QString& what)
{
    if (generation != m_generation)
        return;
    m_progress->setValue(static_cast<int>(fraction * 1000));
    m_status->setText(tr("Computing the frontier: %1").arg(what));
}

void FrontierView::onFinished(quint64 generation, std::shared_ptr<const core::Frontier> frontier, const QString& error)
{
    if (generation != m_generation)
        return;
    setBusy(false);
    if (!frontier) {
        m_status->setText(tr("The frontier failed: %1").arg(error));
        return;
    }
    m_frontier = std::move(frontier);
    QString text = tr("%n frontier point(s) of %1 plans tried", nullptr, static_cast<int>(m_frontier->points.size()))
                       .arg(m_frontier->candidates);
    if (m_frontier->dropped > 0)
        text += tr(" (%1 dropped: failed or invalid)").arg(m_frontier->dropped);
    text += tr("; no strategy: %1.").arg(QString::fromStdString(core::formatBytes(m_frontier->baseArena)));
    for (const auto& note : m_frontier->notes)
        text += QLatin1Char(' ') + QString::fromStdString(note) + QLatin1Char('.');
    m_status->setText(text);
    redraw();
    emit frontierReady(m_frontier);
}

double FrontierView::xOf(double extraSeconds) const
{
    const double base = m_frontier ? m_frontier->baseSeconds : 0;
    return base > 0 ? 100.0 * extraSeconds / base : extraSeconds * 1e3;
}

void FrontierView::setCurrent(core::Bytes peak, double extraSeconds)
{
    m_hasCurrent = true;
    m_currentPeak = peak;
    m_currentExtra = extraSeconds;
    redraw();
}

void FrontierView::clearCurrent()
{
    m_hasCurrent = false;
    redraw();
}

void FrontierView::redraw()
{
    for (QCPGraph* g : { m_line, m_heuristics, m_base, m_current })
        g->data()->clear();
    const core::Frontier* f = m_frontier.get();
    core::Bytes top = 1;
    if (f) {
        top = std::max(top, f->baseArena);
        for (const auto* list : { &f->points, &f->heuristics })
            for (const auto& p : *list)
                top = std::max(top, p.peakBytes);
    }
    const ByteUnit unit = byteUnitFor(static_cast<double>(top));
    m_divisor = unit.divisor;
    const auto y = [&](core::Bytes b) { return static_cast<double>(b) / unit.divisor; };
    double low = 0, high = 1;
    const auto widen = [&](double x) {
        low = std::min(low, x);
        high = std::max(high, x);
    };
    if (f) {
        QVector<double> xs, ys;
        for (const auto& p : f->points) {
            xs << xOf(p.extraSeconds);
            ys << y(p.peakBytes);
            widen(xs.back());
        }
        // Joined in order of extra time (the points come peak ascending, so time descending).
        m_line->setData(xs, ys, false);
        xs.clear();
        ys.clear();
        for (const auto& p : f->heuristics) {
            xs << xOf(p.extraSeconds);
            ys << y(p.peakBytes);
            widen(xs.back());
        }
        m_heuristics->setData(xs, ys, false);
        m_base->setData(QVector<double> { 0 }, QVector<double> { y(f->baseArena) });
    }
    if (m_hasCurrent && f) {
        m_current->setData(QVector<double> { xOf(m_currentExtra) }, QVector<double> { y(m_currentPeak) });
        widen(xOf(m_currentExtra));
    }
    const double pad = (high - low) * 0.08;
    m_plot->xAxis->setRange(low - pad, high + pad);
    m_plot->yAxis->setRange(0, static_cast<double>(top) / unit.divisor * 1.12);
    m_plot->yAxis->setLabel(tr("peak memory (%1)").arg(unit.name));
    m_plot->xAxis->setLabel(f && f->baseSeconds > 0
            ? tr("estimated extra time (%) of a %1 step").arg(QString::fromStdString(core::formatSeconds(f->baseSeconds)))
            : tr("estimated extra time (ms)"));
    m_current->setVisible(m_hasCurrent && f);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QPointF FrontierView::pointPosition(int index) const
{
    if (!m_frontier || index < 0 || index >= static_cast<int>(m_frontier->points.size()))
        return {};
    const auto& p = m_frontier->points[static_cast<std::size_t>(index)];
    const double x = m_plot->xAxis->coordToPixel(xOf(p.extraSeconds));
    const double y = m_plot->yAxis->coordToPixel(static_cast<double>(p.peakBytes) / m_divisor);
    return { x, y };
}

int FrontierView::pointAt(const QPointF& pos) const
{
    if (!m_frontier)
        return -1;
    int best = -1;
    double bestDistance = 12 * 12;
    for (int i = 0; i < static_cast<int>(m_frontier->points.size()); ++i) {
        const QPointF p = pointPosition(i);
        const double d = (p.x() - pos.x()) * (p.x() - pos.x()) + (p.y() - pos.y()) * (p.y() - pos.y());
        if (d < bestDistance) {
            bestDistance = d;
            best = i;
        }
    }
    return best;
}

void FrontierView::choosePoint(int index)
{
    if (!m_frontier || index < 0 || index >= static_cast<int>(m_frontier->points.size()))
        return;
    emit pointChosen(std::make_shared<const core::FrontierPoint>(m_frontier->points[static_cast<std::size_t>(index)]));
}

void FrontierView::onPlotClick(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton)
        choosePoint(pointAt(event->position()));
}

void FrontierView::onPlotMove(QMouseEvent* event)
{
    if (!m_frontier) {
        QToolTip::hideText();
        return;
    }
    // The nearest point of any kind within 12 pixels.
    const core::FrontierPoint* best = nullptr;
    double bestDistance = 12 * 12;
    for (const auto* list : { &m_frontier->points, &m_frontier->heuristics })
        for (const auto& p : *list) {
            const QPointF at(m_plot->xAxis->coordToPixel(xOf(p.extraSeconds)),
                m_plot->yAxis->coordToPixel(static_cast<double>(p.peakBytes) / m_divisor));
            const double d = std::pow(at.x() - event->position().x(), 2) + std::pow(at.y() - event->position().y(), 2);
            if (d < bestDistance) {
                bestDistance = d;
                best = &p;
            }
        }
    if (best)
        QToolTip::showText(event->globalPosition().toPoint(), pointText(*best, m_frontier->baseSeconds), m_plot);
    else
        QToolTip::hideText();
}

QString FrontierView::statusText() const { return m_status->text(); }
