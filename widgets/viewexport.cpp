// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "viewexport.h"

#include <QFile>
#include <QFileInfo>
#include <QFont>
#include <QFontInfo>
#include <QHash>
#include <QImage>
#include <QPainter>
#include <QRegularExpression>
#include <QSvgGenerator>

bool exportPainting(
    const QString& path, QSize size, const QString& title, const std::function<void(QPainter&)>& paint, QString* error)
{
    auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("svg")) {
        QSvgGenerator generator;
        generator.setFileName(path);
        generator.setSize(size);
        generator.setViewBox(QRect(QPoint(0, 0), size));
        generator.setTitle(title);
        // Same resolution as the screen, so point-sized text has the size it has in the widget (the default is 72).
        generator.setResolution(QImage(1, 1, QImage::Format_ARGB32).logicalDpiY());
        generator.setDescription(QStringLiteral("MemPlan Studio"));
        QPainter painter;
        if (!painter.begin(&generator))
            return fail(QStringLiteral("%1: cannot write the SVG file").arg(path));
        paint(painter);
        painter.end();
        if (QFileInfo(path).size() <= 0)
            return fail(QStringLiteral("%1: the SVG file is empty").arg(path));
        return portableSvgFonts(path) || fail(QStringLiteral("%1: cannot write the SVG file").arg(path));
    }
    if (suffix == QLatin1String("png") || suffix == QLatin1String("jpg") || suffix == QLatin1String("jpeg")
        || suffix == QLatin1String("bmp")) {
        QImage image(size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        {
            QPainter painter(&image);
            paint(painter);
        }
        if (!image.save(path))
            return fail(QStringLiteral("%1: cannot write the image file").arg(path));
        return true;
    }
    return fail(QStringLiteral("%1: unknown image format '%2'; use .png or .svg").arg(path, suffix));
}

bool portableSvgFonts(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return false;
    QString svg = QString::fromUtf8(file.readAll());
    file.close();
    static const QRegularExpression family(QStringLiteral("font-family=\"([^\",]*)\""));
    QHash<QString, QString> portable; // the families seen, each resolved once
    QString out;
    out.reserve(svg.size() + svg.size() / 16);
    qsizetype last = 0;
    for (auto it = family.globalMatch(svg); it.hasNext();) {
        const QRegularExpressionMatch match = it.next();
        const QString name = match.captured(1);
        auto found = portable.find(name);
        if (found == portable.end()) {
            const QString drawn = QFontInfo(QFont(name)).family();
            found = portable.insert(name, drawn.isEmpty() ? QStringLiteral("sans-serif") : QStringLiteral("%1, sans-serif").arg(drawn));
        }
        out += QStringView(svg).mid(last, match.capturedStart(1) - last);
        out += *found;
        last = match.capturedEnd(1);
    }
    if (last == 0)
        return true; // no text
    out += QStringView(svg).mid(last);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    return file.write(out.toUtf8()) >= 0;
}
