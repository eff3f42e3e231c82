// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <QSize>
#include <QString>

#include <functional>

class QPainter;

// Writes a painting as PNG/JPEG/BMP or SVG by suffix; used by every view's exportImage.
bool exportPainting(
    const QString& path, QSize size, const QString& title, const std::function<void(QPainter&)>& paint, QString* error);
// Rewrites the font families QSvgGenerator wrote into the SVG file at `path` (Qt's alias "Sans Serif",
// which no browser knows) to the family the text was drawn with, then the CSS generic ("DejaVu Sans,
// sans-serif"). False when the file cannot be read or written back.
bool portableSvgFonts(const QString& path);
