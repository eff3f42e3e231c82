// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "qcp.h" // first: QCustomPlot's header needs Qt's foreach

#include "phasebands.h"

#include "palette.h"

#include <QFontMetrics>

#include <algorithm>
#include <functional>

PhaseBands::PhaseBands(QCustomPlot* plot)
    : m_plot(plot)
{
}

namespace {
// Which phases get a band: one level in, and the outermost ones with nothing inside them. `phases`
// is ordered by begin, outer before inner (core::placeAnnotations).
std::vector<const core::TracePhase*> drawn(const std::vector<core::TracePhase>& phases, bool outermostOnly)
{
    std::vector<const core::TracePhase*> out;
    for (std::size_t i = 0; i < phases.size(); ++i) {
        const auto& p = phases[i];
        if (p.depth > (outermostOnly ? 0 : 1))
            continue;
        if (!outermostOnly && p.depth == 0) {
            const bool hasInner = i + 1 < phases.size() && phases[i + 1].depth > 0 && phases[i + 1].begin <= p.end;
            if (hasInner)
                continue;
        }
        out.push_back(&p);
    }
    return out;
}
} // namespace

void PhaseBands::set(const std::vector<core::TracePhase>& phases, const StepClock& clock)
{
    for (const Band& band : m_bands) {
        m_plot->removeItem(band.rect);
        m_plot->removeItem(band.label);
    }
    m_bands.clear();
    auto chosen = drawn(phases, false);
    if (chosen.size() > kMostBands)
        chosen = drawn(phases, true);
    if (chosen.size() > kMostBands)
        return;
    for (const core::TracePhase* p : chosen) {
        // A tint per name, the same wherever the name recurs; a point annotation gets a one-step band.
        QColor tint = ViewPalette::indexColor(static_cast<int>(std::hash<std::string> {}(p->name) % 10));
        tint.setAlpha(34);
        const double begin = clock.key(static_cast<double>(p->begin));
        const double end = clock.key(static_cast<double>(std::max(p->end, p->begin + 1)));
        auto* rect = new QCPItemRect(m_plot);
        rect->setLayer(QStringLiteral("background"));
        rect->topLeft->setTypeX(QCPItemPosition::ptPlotCoords);
        rect->bottomRight->setTypeX(QCPItemPosition::ptPlotCoords);
        rect->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
        rect->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
        rect->topLeft->setCoords(begin, 0.0);
        rect->bottomRight->setCoords(end, 1.0);
        rect->setPen(Qt::NoPen);
        rect->setBrush(tint);
        rect->setSelectable(false);
        auto* label = new QCPItemText(m_plot);
        label->setLayer(QStringLiteral("background"));
        label->position->setTypeX(QCPItemPosition::ptPlotCoords);
        label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        label->position->setCoords(begin, 1.0);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        label->setPadding(QMargins(3, 1, 3, 2));
        label->setText(QString::fromStdString(p->name) + (p->cut ? QStringLiteral(" (cut)") : QString()));
        QColor text = tint;
        text.setAlpha(255);
        label->setColor(text.darker(190));
        label->setClipToAxisRect(true);
        label->setSelectable(false);
        m_bands.push_back({ rect, label, begin, end });
    }
}

void PhaseBands::fit(int plotPixels)
{
    const QCPRange range = m_plot->xAxis->range();
    const double perStep = range.size() > 0 ? plotPixels / range.size() : 0;
    const QFontMetrics metrics(m_bands.empty() ? QFont() : m_bands.front().label->font());
    for (const Band& band : m_bands) {
        const double visible = std::min(band.end, range.upper) - std::max(band.begin, range.lower);
        const double pixels = std::max(visible, 0.0) * perStep;
        band.label->setVisible(pixels >= metrics.horizontalAdvance(band.label->text()) + 8);
    }
}

QStringList PhaseBands::names() const
{
    QStringList out;
    for (const Band& band : m_bands)
        out << band.label->text();
    return out;
}

int PhaseBands::labelsShown() const
{
    return static_cast<int>(std::count_if(m_bands.begin(), m_bands.end(), [](const Band& b) { return b.label->visible(); }));
}
