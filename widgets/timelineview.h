// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "buffercolors.h"
#include "timeaxis.h"

#include <QPointF>
#include <QRect>
#include <QWidget>

#include <vector>

#include <functional>

class PlanDocument;
class QPainter;
class QScrollBar;

// Shared frame of the hand-painted Studio views (lifetime bars, arena layout, coloring): a caption
// line, a label column on the left, the plot, and the step axis strip at the bottom, all on the
// document's shared time axis. Implements the common behaviour once: wheel zoom around the mouse,
// drag to pan (left on empty space, or middle), double-click / F / Home to fit, hover and click to
// hover/select a buffer, click or drag on the axis strip to set the step cursor, Left/Right to move
// it, an optional vertical scroll bar for row-based views, and PNG/SVG export of the same painting.
// Subclasses precompute geometry in rebuild() (called on workload/plan change, never per paint).
class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(PlanDocument* document, QWidget* parent = nullptr);

    PlanDocument* document() const { return m_document; }

    // Writes the view as PNG (or JPEG/BMP) or SVG, chosen by the file suffix. Renders at the
    // widget's size, or sizeHint() when it has never been laid out.
    bool exportImage(const QString& path, QString* error = nullptr);

    QSize sizeHint() const override { return { 1000, 380 }; }
    QSize minimumSizeHint() const override { return { 360, 160 }; }

    // Pixel layout of the view at a given size; public so tests can aim at a buffer.
    struct Frame {
        QRect caption; // one text line on top: title left, legend right
        QRect labels; // column left of the plot: row labels or the value axis
        QRect plot; // buffers
        QRect axis; // step axis strip under the plot
        TimeAxis time; // steps <-> x over plot
    };
    Frame frameFor(QSize size) const;
    Frame frame() const { return frameFor(size()); }
    int scrollOffset() const; // vertical scroll of row-based views, pixels
    // Buffer under a widget position, or -1.
    int bufferUnder(QPointF pos) const { return bufferAt(frame(), pos); }

    // Shared with the memory curve: a tooltip for one buffer (name, kind, lifetime, size, offset).
    static QString bufferToolTip(const PlanDocument* document, int buffer);
    // Zooms the shared time axis by `factor` (< 1: in) keeping step `anchor` in place.
    static void zoomSteps(PlanDocument* document, double anchor, double factor);
    // Moves the step cursor by `delta` steps (from the first visible step when unset) and keeps it in view.
    static void moveCursor(PlanDocument* document, int delta);
    // Width of the label column left of every plot, so stacked views line up on the time axis.
    static int labelColumnRight();
    static int rightMarginWidth(); // right of every plot: room for a scroll bar
    // `name` in `width`: whole when it fits, else without an exporter's "_output_0" and elided at its
    // start, where exported paths repeat themselves.
    static QString elideName(const QFontMetrics& metrics, const QString& name, int width);
    // Widget height at `width` that shows every row of a row-based view at the smallest row height
    // (0 for a view without rows), for exports that should not cut rows off.
    int heightForAllRows(int width) const;

protected:
    virtual void rebuild() = 0;
    virtual QString caption() const = 0;
    // Paints a legend right-aligned in `area` (the caption line) of a painting laid out as `frame`,
    // and returns the width it used.
    virtual int paintLegend(QPainter& painter, const QRect& area, const Frame& frame) const;
    virtual void paintPlot(QPainter& painter, const Frame& frame) const = 0; // clipped to frame.plot
    virtual void paintLabels(QPainter& painter, const Frame& frame) const; // clipped to frame.labels
    virtual int bufferAt(const Frame& frame, QPointF pos) const = 0; // pos anywhere in the widget
    virtual int contentHeight(const Frame& frame) const; // > plot height: show a vertical scroll bar
    virtual int rowCount() const; // rows of a row-based view (contentHeight spreads over them); 0 otherwise
    virtual void revealBuffer(int buffer); // selection changed elsewhere: scroll to it
    virtual QString emptyText() const;

    // Highlight state shared by the subclasses.
    bool hasHighlight() const;
    bool isHighlighted(int buffer) const;
    // Paints the selection (2 px) or hover (1 px) outline around `rect`.
    static void paintOutline(QPainter& painter, const QRectF& rect, bool selected);
    // Stipples a buffer whose size is an upper bound (PlanDocument::boundedBuffers).
    static void paintBounded(QPainter& painter, const QRectF& rect);
    // Swatches of the buffer kinds present, right-aligned in `area`, as many as fit; the width used.
    int paintKindLegend(QPainter& painter, const QRect& area) const;
    // `entries` as swatches, right-aligned in `area`; those covering the fewest buffers drop out
    // first when they do not all fit; the width used.
    int paintSwatches(QPainter& painter, const QRect& area, std::vector<LegendSwatch> entries) const;
    // The legend entry for the grey of buffers too small to draw one by one (merged where they lie),
    // right-aligned in `area`; the width it used (0: no room).
    int paintDenseLegend(QPainter& painter, const QRect& area) const;
    // The legend entry for stippled buffers, right-aligned in `area`; the width it used (0: no room).
    int paintBoundedLegend(QPainter& painter, const QRect& area) const;
    // elideName, or empty when too little of the name would remain to read.
    static QString fitName(const QFontMetrics& metrics, const QString& name, int width);
    static constexpr double kDim = 0.3; // how far buffers that are not highlighted fade towards white
    void setScrollOffset(int pixels);
    void updateScrollBar();
    void render(QPainter& painter, QSize size) const;

    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    void onDataChanged();
    void paintAxis(QPainter& painter, const Frame& frame) const;
    std::vector<double> stepTicks(const Frame& frame) const; // labelled steps; the grid lines sit on them
    void paintCursor(QPainter& painter, const Frame& frame) const;
    void paintCursorBand(QPainter& painter, const Frame& frame) const;
    void paintRowsShown(QPainter& painter, const Frame& frame) const; // pictures: which rows a cut-off view shows
    QRectF cursorFlag(const Frame& frame) const; // the step label on the axis strip; empty without cursor
    void setCursorFromX(const Frame& frame, double x);
    void updateHover(QPointF pos, QPoint globalPos);

    enum class Drag { None, Pan, Cursor };
    PlanDocument* m_document;
    QScrollBar* m_scrollBar;
    Drag m_drag = Drag::None;
    QPointF m_pressPos;
    double m_pressFirst = 0;
    double m_pressLast = 0;
    int m_pressScroll = 0;
    bool m_clearOnRelease = false;
};
