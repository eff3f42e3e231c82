// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "timelineview.h"

#include "palette.h"
#include "plandocument.h"
#include "strategymarks.h"
#include "util/format.h"
#include "viewexport.h"

#include <QFileInfo>
#include <QImage>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace {
constexpr int kMargin = 8; // outer margin
constexpr int kLabelWidth = 168; // label column; the memory curve uses the same so plots line up
constexpr int kRightMargin = 22; // room for the vertical scroll bar
constexpr int kTick = 4;
} // namespace

TimelineView::TimelineView(PlanDocument* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
    , m_scrollBar(new QScrollBar(Qt::Vertical, this))
{
    QFont f = font();
    f.setPointSizeF(9);
    setFont(f);
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    m_scrollBar->hide();
    connect(m_scrollBar, &QScrollBar::valueChanged, this, qOverload<>(&QWidget::update));
    connect(document, &PlanDocument::workloadChanged, this, &TimelineView::onDataChanged);
    connect(document, &PlanDocument::planChanged, this, &TimelineView::onDataChanged);
    connect(document, &PlanDocument::strategyFactsChanged, this, &TimelineView::onDataChanged);
    connect(document, &PlanDocument::visibleStepsChanged, this, qOverload<>(&QWidget::update));
    connect(document, &PlanDocument::cursorChanged, this, qOverload<>(&QWidget::update));
    connect(document, &PlanDocument::hoverChanged, this, qOverload<>(&QWidget::update));
    connect(document, &PlanDocument::selectionChanged, this, [this](int buffer) {
        if (buffer >= 0)
            revealBuffer(buffer);
        update();
    });
}

void TimelineView::onDataChanged()
{
    rebuild();
    updateScrollBar();
    update();
}

TimelineView::Frame TimelineView::frameFor(QSize size) const
{
    const QFontMetrics fm(font());
    const int line = fm.height();
    Frame f;
    f.caption = QRect(kMargin, kMargin, size.width() - 2 * kMargin, line + 4);
    const int axisHeight = kTick + 2 + line + 2 + line + 2;
    const int top = f.caption.bottom() + 1 + 6;
    const int bottom = size.height() - kMargin - axisHeight;
    const int left = kMargin + kLabelWidth;
    const int right = size.width() - kRightMargin;
    f.plot = QRect(QPoint(left, top), QPoint(std::max(left + 10, right - 1), std::max(top + 10, bottom - 1)));
    f.labels = QRect(QPoint(kMargin, top), QPoint(left - 1, f.plot.bottom()));
    f.axis = QRect(QPoint(left, f.plot.bottom() + 1), QPoint(f.plot.right(), size.height() - kMargin - 1));
    f.time
        = TimeAxis { m_document->firstVisibleStep(), m_document->lastVisibleStep(), f.plot.left(), f.plot.right() + 1 };
    return f;
}

int TimelineView::scrollOffset() const { return m_scrollBar->isVisible() ? m_scrollBar->value() : 0; }

void TimelineView::setScrollOffset(int pixels) { m_scrollBar->setValue(pixels); }

int TimelineView::contentHeight(const Frame&) const { return 0; }

int TimelineView::rowCount() const { return 0; }

int TimelineView::paintKindLegend(QPainter& painter, const QRect& area) const
{
    return paintSwatches(painter, area, bufferLegend(*m_document->workload(), BufferColoring::Kind));
}

int TimelineView::paintSwatches(QPainter& painter, const QRect& area, std::vector<LegendSwatch> entries) const
{
    // Right-aligned row of swatches in the given order: ■ input  ■ activation ... Short of room, the
    // entries with the fewest buffers drop out first, so the fill of most of the plot keeps its entry.
    const QFontMetrics fm(font());
    std::vector<int> widths;
    int needed = 0;
    for (const auto& e : entries) {
        widths.push_back(fm.horizontalAdvance(e.text) + 28);
        needed += widths.back();
    }
    while (!entries.empty() && needed > area.width()) {
        const auto fewest = std::min_element(entries.begin(), entries.end(),
            [](const LegendSwatch& a, const LegendSwatch& b) { return a.count < b.count; });
        const auto k = static_cast<std::size_t>(fewest - entries.begin());
        needed -= widths[k];
        entries.erase(fewest);
        widths.erase(widths.begin() + static_cast<std::ptrdiff_t>(k));
    }
    int x = area.right();
    for (std::size_t i = entries.size(); i-- > 0;) {
        const int w = widths[i] - 28;
        x -= w;
        painter.setPen(ViewPalette::axisText());
        painter.drawText(QRect(x, area.top(), w, area.height()), Qt::AlignVCenter | Qt::AlignLeft, entries[i].text);
        x -= 14;
        painter.fillRect(QRect(x, area.center().y() - 5, 10, 10), entries[i].color);
        x -= 14;
    }
    return area.right() - x;
}

int TimelineView::heightForAllRows(int width) const
{
    if (rowCount() == 0)
        return 0;
    constexpr int kProbe = 1000;
    const int chrome = kProbe - frameFor(QSize(width, kProbe)).plot.height();
    // With a one-pixel plot every row takes its smallest height.
    return chrome + contentHeight(frameFor(QSize(width, chrome + 1)));
}

void TimelineView::revealBuffer(int) { }

int TimelineView::paintLegend(QPainter&, const QRect&, const Frame&) const { return 0; }

int TimelineView::paintDenseLegend(QPainter& painter, const QRect& area) const
{
    const QFontMetrics fm(font());
    const QString text = QStringLiteral("buffers under a pixel");
    const int w = fm.horizontalAdvance(text);
    if (area.width() < w + 20)
        return 0;
    painter.fillRect(QRect(area.right() - w - 14, area.center().y() - 5, 10, 10), ViewPalette::denseFill());
    painter.setPen(ViewPalette::axisText());
    painter.drawText(QRect(area.right() - w, area.top(), w, area.height()), Qt::AlignVCenter, text);
    return w + 14;
}

QString TimelineView::fitName(const QFontMetrics& metrics, const QString& name, int width)
{
    if (width <= 0)
        return {};
    const QString elided = elideName(metrics, name, width);
    return elided.size() >= std::min<qsizetype>(8, name.size()) ? elided : QString();
}

QString TimelineView::elideName(const QFontMetrics& metrics, const QString& name, int width)
{
    if (metrics.horizontalAdvance(name) <= width)
        return name;
    // Exported names are paths that share long prefixes and end in "_output_0": the end of the path
    // tells buffers apart, the suffix does not (the tooltip keeps the whole name).
    QString shown = name;
    if (shown.endsWith(QLatin1String("_output_0")) && shown.size() > 9)
        shown.chop(9);
    // A path component that the next one repeats ("/layer1/layer1.0/conv1") says nothing more.
    if (shown.startsWith(QLatin1Char('/'))) {
        const QStringList parts = shown.split(QLatin1Char('/'), Qt::SkipEmptyParts);
        QStringList kept;
        for (qsizetype i = 0; i < parts.size(); ++i)
            if (i + 1 == parts.size() || !parts[i + 1].startsWith(parts[i]))
                kept << parts[i];
        shown = kept.join(QLatin1Char('/'));
    }
    // Cut in the middle: the start says which part of the model (enc1, dec1), the end which op.
    return metrics.elidedText(shown, Qt::ElideMiddle, width);
}

void TimelineView::paintLabels(QPainter&, const Frame&) const { }

QString TimelineView::emptyText() const { return QStringLiteral("No plan yet"); }

void TimelineView::updateScrollBar()
{
    const Frame f = frame();
    const int content = m_document->hasPlan() ? contentHeight(f) : 0;
    const int page = f.plot.height();
    if (content <= page) {
        m_scrollBar->hide();
        m_scrollBar->setValue(0);
        return;
    }
    m_scrollBar->setRange(0, content - page);
    m_scrollBar->setPageStep(page);
    m_scrollBar->setSingleStep(QFontMetrics(font()).height() + 4);
    m_scrollBar->setGeometry(f.plot.right() + 4, f.plot.top(), kRightMargin - 6, f.plot.height());
    m_scrollBar->show();
}

bool TimelineView::hasHighlight() const
{
    return m_document->selectedBuffer() >= 0 || m_document->hoveredBuffer() >= 0;
}

bool TimelineView::isHighlighted(int buffer) const
{
    return buffer >= 0 && (buffer == m_document->selectedBuffer() || buffer == m_document->hoveredBuffer());
}

void TimelineView::paintOutline(QPainter& painter, const QRectF& rect, bool selected)
{
    painter.save();
    painter.setBrush(Qt::NoBrush);
    const double width = selected ? 2.0 : 1.5;
    painter.setPen(
        QPen(selected ? ViewPalette::outline() : QColor(0x333333), width, selected ? Qt::SolidLine : Qt::DashLine));
    // Keep a thin rect visible: at least 3 px wide and tall.
    QRectF r = rect;
    if (r.width() < 3)
        r.adjust(-(3 - r.width()) / 2, 0, (3 - r.width()) / 2, 0);
    if (r.height() < 3)
        r.adjust(0, -(3 - r.height()) / 2, 0, (3 - r.height()) / 2);
    painter.drawRect(r.adjusted(width / 2, width / 2, -width / 2, -width / 2));
    painter.restore();
}

void TimelineView::render(QPainter& painter, QSize size) const
{
    const Frame f = frameFor(size);
    painter.fillRect(QRect(QPoint(0, 0), size), ViewPalette::background());
    painter.setFont(font());
    const QFontMetrics fm(font());

    // Caption: the title on the left, whole when it takes at most half the line; the legend right of
    // it in what is left (its entries drop out when short of room), the title elided only past half.
    QFont bold = font();
    bold.setBold(true);
    const int titleWidth = QFontMetrics(bold).horizontalAdvance(caption());
    int legendWidth = 0;
    if (m_document->hasPlan())
        legendWidth = paintLegend(painter, f.caption.adjusted(std::min(titleWidth + 24, f.caption.width() / 2), 0, 0, 0), f);
    painter.setPen(ViewPalette::axisText());
    painter.setFont(bold);
    const int titleSpace = f.caption.width() - (legendWidth > 0 ? legendWidth + 24 : 0);
    painter.drawText(f.caption, Qt::AlignLeft | Qt::AlignVCenter,
        QFontMetrics(bold).elidedText(caption(), Qt::ElideRight, titleSpace));
    painter.setFont(font());

    painter.fillRect(f.plot, ViewPalette::plotBackground());
    if (!m_document->hasPlan()) {
        painter.setPen(ViewPalette::axisText());
        painter.drawText(f.plot, Qt::AlignCenter, emptyText());
        painter.setPen(ViewPalette::gridLine());
        painter.drawRect(f.plot.adjusted(0, 0, -1, -1));
        return;
    }

    // Vertical grid at the step ticks, under the content.
    painter.setPen(QPen(ViewPalette::gridLine(), 1));
    for (double t : stepTicks(f)) {
        if (t < f.time.first - 1e-9 || t > f.time.last + 1e-9)
            continue;
        const double x = std::floor(f.time.stepToX(t)) + 0.5;
        painter.drawLine(QPointF(x, f.plot.top()), QPointF(x, f.plot.bottom() + 1));
    }

    painter.save();
    painter.setClipRect(f.plot);
    paintCursorBand(painter, f);
    paintPlot(painter, f);
    painter.restore();

    painter.save();
    // Half a line of slack above and below, so the end labels of a value axis are not cut.
    painter.setClipRect(f.labels.adjusted(-8, -fm.height() / 2 - 2, 0, fm.height() / 2 + 2));
    paintLabels(painter, f);
    painter.restore();

    painter.setPen(QPen(QColor(0xC4C8CE), 1));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(QRectF(f.plot).adjusted(0.5, 0.5, -0.5, -0.5));
    paintAxis(painter, f);
    paintCursor(painter, f);
    paintRowsShown(painter, f);
}

void TimelineView::paintRowsShown(QPainter& painter, const Frame& f) const
{
    // A window has its scroll bar to say rows are cut off; a picture of the view says it in words.
    const int rows = rowCount(), content = contentHeight(f);
    if (rows == 0 || content <= f.plot.height() || painter.device() == static_cast<const QPaintDevice*>(this))
        return;
    // A row counts as shown when at least half of it is (its label is drawn whole).
    const double rowHeight = double(content) / rows;
    const int first = int(std::lround(scrollOffset() / rowHeight));
    const int last = std::min(rows, int(std::lround((scrollOffset() + f.plot.height()) / rowHeight)));
    const QString text = QStringLiteral("rows %1–%2 of %3 shown").arg(first + 1).arg(last).arg(rows);
    const QFontMetrics fm(font());
    QRect box(0, 0, fm.horizontalAdvance(text) + 12, fm.height() + 4);
    box.moveBottomRight(f.plot.bottomRight() - QPoint(4, 4));
    painter.setPen(QPen(QColor(0xC4C8CE), 1));
    painter.setBrush(ViewPalette::background());
    painter.drawRect(box);
    painter.setPen(ViewPalette::axisText());
    painter.drawText(box, Qt::AlignCenter, text);
}

std::vector<double> TimelineView::stepTicks(const Frame& f) const
{
    // As many as the widest label allows; the grid lines sit on the same steps.
    const int maxLabel = QFontMetrics(font()).horizontalAdvance(QString::number(static_cast<int>(f.time.last))) + 24;
    return niceTicks(std::floor(f.time.first), f.time.last, std::max(2, f.plot.width() / maxLabel), 1);
}

void TimelineView::paintAxis(QPainter& painter, const Frame& f) const
{
    const QFontMetrics fm(font());
    painter.fillRect(f.axis, ViewPalette::background());
    painter.setPen(ViewPalette::axisText());
    const double pxPerStep = f.time.pixelsPerStep();
    const bool centred = centreStepLabels(pxPerStep);
    const auto ticks = stepTicks(f);
    int lastRight = f.axis.left() - 1000;
    const QRectF flag = cursorFlag(f);
    for (double t : ticks) {
        if (t < f.time.first - 1e-9 || t > f.time.last + 1e-9)
            continue;
        const double x = std::floor(f.time.stepToX(t)) + 0.5;
        painter.drawLine(QPointF(x, f.axis.top()), QPointF(x, f.axis.top() + kTick));
        const double labelX = centred ? f.time.stepToX(t + 0.5) : x;
        if (labelX > f.axis.right() + 1)
            continue;
        const QString text = QString::number(static_cast<long long>(t));
        const int w = fm.horizontalAdvance(text);
        QRect r(static_cast<int>(std::lround(labelX - w / 2.0)), f.axis.top() + kTick + 2, w, fm.height());
        r.moveLeft(std::clamp(r.left(), f.axis.left() - w / 2, f.axis.right() - w + 4));
        if (r.left() < lastRight + 8 || (!flag.isEmpty() && QRectF(r).adjusted(-4, 0, 4, 0).intersects(flag)))
            continue; // would touch the previous label or the cursor's flag
        painter.drawText(r, Qt::AlignCenter, text);
        lastRight = r.right();
    }
    QRect title(f.axis.left(), f.axis.top() + kTick + 2 + fm.height() + 2, f.axis.width(), fm.height());
    painter.drawText(title, Qt::AlignHCenter | Qt::AlignTop, QStringLiteral("step"));
}

QRectF TimelineView::cursorFlag(const Frame& f) const
{
    const core::Step cursor = m_document->cursorStep();
    if (cursor < 0 || cursor + 1 < f.time.first || cursor > f.time.last)
        return {};
    const QFontMetrics fm(font());
    const QString text = QString::number(cursor);
    const double x = std::floor(f.time.stepToX(cursor + 0.5)) + 0.5;
    QRectF flag(x - fm.horizontalAdvance(text) / 2.0 - 4, f.axis.top() + kTick + 1, fm.horizontalAdvance(text) + 8,
        fm.height() + 2);
    flag.moveLeft(std::clamp(flag.left(), double(f.axis.left()), double(f.axis.right()) - flag.width()));
    return flag;
}

void TimelineView::paintCursorBand(QPainter& painter, const Frame& f) const
{
    const core::Step cursor = m_document->cursorStep();
    if (cursor < 0)
        return;
    const double x0 = f.time.stepToX(cursor), x1 = f.time.stepToX(cursor + 1);
    if (x1 - x0 >= 4)
        painter.fillRect(QRectF(x0, f.plot.top(), x1 - x0, f.plot.height()), QColor(0xFCEBEB));
}

void TimelineView::paintCursor(QPainter& painter, const Frame& f) const
{
    const QRectF flag = cursorFlag(f);
    if (flag.isEmpty())
        return;
    const core::Step cursor = m_document->cursorStep();
    painter.save();
    painter.setClipRect(f.plot.united(f.axis));
    const double x = std::floor(f.time.stepToX(cursor + 0.5)) + 0.5;
    painter.setPen(QPen(ViewPalette::cursorLine(), 1.5));
    painter.drawLine(QPointF(x, f.plot.top()), QPointF(x, f.plot.bottom() + kTick + 1));
    painter.setPen(Qt::NoPen);
    painter.setBrush(ViewPalette::cursorLine());
    painter.drawRoundedRect(flag, 3, 3);
    painter.setPen(Qt::white);
    painter.drawText(flag, Qt::AlignCenter, QString::number(cursor));
    painter.restore();
}

void TimelineView::paintBounded(QPainter& painter, const QRectF& rect)
{
    painter.fillRect(rect, QBrush(QColor(255, 255, 255, 210), Qt::Dense6Pattern));
}

int TimelineView::paintBoundedLegend(QPainter& painter, const QRect& area) const
{
    const QFontMetrics fm(font());
    const QString text = QStringLiteral("size is an upper bound");
    const int w = fm.horizontalAdvance(text);
    if (area.width() < w + 20)
        return 0;
    const QRect swatch(area.right() - w - 18, area.center().y() - 6, 12, 12);
    painter.fillRect(swatch, ViewPalette::kindColor(core::TensorKind::Activation));
    paintBounded(painter, swatch);
    painter.setPen(ViewPalette::axisText());
    painter.drawText(QRect(area.right() - w, area.top(), w, area.height()), Qt::AlignVCenter, text);
    return w + 18;
}

QString TimelineView::bufferToolTip(const PlanDocument* document, int buffer)
{
    const core::Workload* workload = document->workload();
    if (!workload || buffer < 0 || buffer >= static_cast<int>(workload->problem.buffers.size()))
        return {};
    const core::Buffer& b = workload->problem.buffers[buffer];
    QString text = QStringLiteral("<b>%1</b><br/>%2 · steps [%3, %4)<br/>size %5")
                       .arg(QString::fromStdString(b.name).toHtmlEscaped(),
                           QString::fromUtf8(core::kindName(b.kind).data(), core::kindName(b.kind).size()))
                       .arg(b.lifetime.start)
                       .arg(b.lifetime.end)
                       .arg(QString::fromStdString(core::formatBytes(b.size)));
    if (const core::Plan* plan = document->plan()) {
        text += QStringLiteral(" · offset %1").arg(QString::fromStdString(core::formatBytes(plan->offsets[buffer])));
        if (buffer < static_cast<int>(plan->colors.size()) && plan->colors[buffer] >= 0)
            text += QStringLiteral(" · slot %1").arg(plan->colors[buffer]);
    }
    if (b.tensors.size() > 1) {
        QStringList names;
        for (std::size_t i = 0; i < b.tensors.size() && i < 6; ++i) {
            QString name = QString::fromStdString(b.tensors[i]).toHtmlEscaped();
            if (i < b.tensorOffsets.size() && b.tensorOffsets[i] > 0) // a Concat input in its slice
                name += QStringLiteral(" at +%1").arg(QString::fromStdString(core::formatBytes(b.tensorOffsets[i])));
            names << name;
        }
        if (b.tensors.size() > 6)
            names << QStringLiteral("…");
        text += QStringLiteral("<br/>tensors: ") + names.join(QStringLiteral(", "));
    }
    if (buffer < static_cast<int>(document->boundedBuffers().size()) && document->boundedBuffers()[buffer])
        text += QStringLiteral("<br/><i>size is an upper bound: the shape depends on the data</i>");
    // What strategies did to this buffer, one line each, naming the strategy.
    if (const StrategyFacts* facts = document->strategyFacts(); facts && buffer < static_cast<int>(facts->notes.size()))
        for (const auto& note : facts->notes[static_cast<std::size_t>(buffer)])
            text += QStringLiteral("<br/><i>%1</i>").arg(QString::fromStdString(note).toHtmlEscaped());
    return text;
}

bool TimelineView::exportImage(const QString& path, QString* error)
{
    // A view that was never laid out still has Qt's placeholder size: use the size hint then.
    QSize s = size();
    if (!(isVisible() || testAttribute(Qt::WA_Resized)) || s.width() < 200 || s.height() < 120)
        s = sizeHint();
    return exportPainting(
        path, s, caption(), [this, s](QPainter& painter) { render(painter, s); }, error);
}

void TimelineView::zoomSteps(PlanDocument* document, double anchor, double factor)
{
    const double first = document->firstVisibleStep(), last = document->lastVisibleStep();
    document->setVisibleSteps(anchor - (anchor - first) * factor, anchor + (last - anchor) * factor);
}

void TimelineView::moveCursor(PlanDocument* document, int delta)
{
    const core::Step steps = document->steps();
    if (steps == 0)
        return;
    core::Step cursor = document->cursorStep();
    if (cursor < 0)
        cursor = static_cast<core::Step>(std::ceil(document->firstVisibleStep()));
    else
        cursor += delta;
    cursor = std::clamp<core::Step>(cursor, 0, steps - 1);
    document->setCursorStep(cursor);
    const double first = document->firstVisibleStep(), last = document->lastVisibleStep();
    if (cursor < first)
        document->setVisibleSteps(cursor, cursor + (last - first));
    else if (cursor + 1 > last)
        document->setVisibleSteps(cursor + 1 - (last - first), cursor + 1);
}

int TimelineView::labelColumnRight() { return kMargin + kLabelWidth; }

int TimelineView::rightMarginWidth() { return kRightMargin; }

void TimelineView::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    render(painter, size());
}

void TimelineView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    updateScrollBar();
}

void TimelineView::wheelEvent(QWheelEvent* event)
{
    const Frame f = frame();
    const QPointF pos = event->position();
    const QPoint delta = event->angleDelta();
    const bool scrollable = m_scrollBar->isVisible();
    if (scrollable && (event->modifiers() & Qt::ShiftModifier || f.labels.contains(pos.toPoint()))) {
        const int dy = delta.y() != 0 ? delta.y() : delta.x();
        setScrollOffset(scrollOffset() - dy * m_scrollBar->singleStep() * 3 / 120);
        event->accept();
        return;
    }
    const double first = f.time.first, last = f.time.last, span = f.time.span();
    if (std::abs(delta.x()) > std::abs(delta.y())) {
        const double shift = -delta.x() / 120.0 * span * 0.1;
        m_document->setVisibleSteps(first + shift, last + shift);
    } else if (delta.y() != 0) {
        double anchor = f.time.xToStep(pos.x());
        if (!f.plot.contains(pos.toPoint()) && !f.axis.contains(pos.toPoint()))
            anchor = (first + last) / 2;
        zoomSteps(m_document, anchor, std::pow(0.8, delta.y() / 120.0));
    }
    event->accept();
}

void TimelineView::setCursorFromX(const Frame& f, double x)
{
    const double step = f.time.xToStep(std::clamp(x, double(f.plot.left()), double(f.plot.right())));
    m_document->setCursorStep(static_cast<core::Step>(std::floor(std::max(0.0, step))));
}

void TimelineView::mousePressEvent(QMouseEvent* event)
{
    const Frame f = frame();
    const QPointF pos = event->position();
    m_pressPos = pos;
    m_pressFirst = f.time.first;
    m_pressLast = f.time.last;
    m_pressScroll = scrollOffset();
    m_clearOnRelease = false;
    if (!m_document->hasPlan())
        return;
    if (event->button() == Qt::MiddleButton) {
        m_drag = Drag::Pan;
    } else if (event->button() == Qt::LeftButton) {
        if (f.axis.contains(pos.toPoint())) {
            m_drag = Drag::Cursor;
            setCursorFromX(f, pos.x());
        } else if (const int buffer = bufferAt(f, pos); buffer >= 0) {
            m_document->selectBuffer(buffer);
            m_drag = Drag::None;
        } else if (f.plot.contains(pos.toPoint())) {
            m_drag = Drag::Pan;
            m_clearOnRelease = true;
        }
    }
    event->accept();
}

void TimelineView::mouseMoveEvent(QMouseEvent* event)
{
    const QPointF pos = event->position();
    if (m_drag == Drag::Pan) {
        const Frame f = frame();
        const QPointF d = pos - m_pressPos;
        if (std::abs(d.x()) + std::abs(d.y()) > 3)
            m_clearOnRelease = false;
        const double shift = -d.x() / f.time.pixelsPerStep();
        m_document->setVisibleSteps(m_pressFirst + shift, m_pressLast + shift);
        if (m_scrollBar->isVisible())
            setScrollOffset(m_pressScroll - static_cast<int>(d.y()));
        setCursor(Qt::ClosedHandCursor);
        return;
    }
    if (m_drag == Drag::Cursor) {
        setCursorFromX(frame(), pos.x());
        return;
    }
    updateHover(pos, event->globalPosition().toPoint());
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event)
{
    if (m_drag == Drag::Pan && m_clearOnRelease && event->button() == Qt::LeftButton)
        m_document->selectBuffer(-1);
    m_drag = Drag::None;
    unsetCursor();
    updateHover(event->position(), event->globalPosition().toPoint());
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton && !frame().axis.contains(event->position().toPoint()))
        m_document->fitVisibleSteps();
}

void TimelineView::keyPressEvent(QKeyEvent* event)
{
    switch (event->key()) {
    case Qt::Key_Left:
    case Qt::Key_Right:
        moveCursor(m_document, event->key() == Qt::Key_Left ? -1 : 1);
        event->accept();
        return;
    case Qt::Key_F:
    case Qt::Key_Home:
        m_document->fitVisibleSteps();
        event->accept();
        return;
    case Qt::Key_Escape:
        m_document->selectBuffer(-1);
        event->accept();
        return;
    default:
        break;
    }
    QWidget::keyPressEvent(event);
}

void TimelineView::leaveEvent(QEvent* event)
{
    m_document->hoverBuffer(-1);
    QWidget::leaveEvent(event);
}

void TimelineView::updateHover(QPointF pos, QPoint globalPos)
{
    const int buffer = m_document->hasPlan() ? bufferAt(frame(), pos) : -1;
    const bool changed = buffer != m_document->hoveredBuffer();
    m_document->hoverBuffer(buffer);
    if (buffer < 0)
        QToolTip::hideText();
    else if (changed)
        QToolTip::showText(globalPos, bufferToolTip(m_document, buffer), this);
}
