// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "helptexts.h"

#include "palette.h"

#include "exec/executor.h"

#include <QAction>
#include <QMenu>
#include <QMainWindow>
#include <QMenuBar>
#include <QSet>

namespace {

QString swatch(const QColor& color)
{
    return QStringLiteral("<span style=\"background-color:%1\">&nbsp;&nbsp;&nbsp;&nbsp;</span>").arg(color.name());
}

QString withoutAmpersand(QString text)
{
    return text.remove(QLatin1Char('&'));
}

} // namespace

QString shortcutsHtml(const QMainWindow* window)
{
    QString rows;
    QSet<const QAction*> listed;
    const auto row = [&rows, &listed](const QString& where, const QAction* action) {
        if (action->shortcut().isEmpty() || listed.contains(action))
            return;
        listed.insert(action);
        rows += QStringLiteral("<tr><td>%1</td><td>%2</td><td><b>%3</b></td></tr>")
                    .arg(withoutAmpersand(where), withoutAmpersand(action->text()), action->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped());
    };
    for (const QAction* top : window->menuBar()->actions())
        if (const QMenu* menu = top->menu())
            for (const QAction* action : menu->actions())
                row(top->text(), action);
    for (const QAction* action : window->findChildren<QAction*>())
        row(QStringLiteral("Toolbar"), action);
    return QStringLiteral("<table cellspacing=\"4\"><tr><th align=\"left\">Where</th><th align=\"left\">Action</th>"
                          "<th align=\"left\">Keys</th></tr>")
        + rows + QStringLiteral("</table>");
}

QString legendHtml()
{
    QString rows;
    for (int k = 0; k < core::kKindCount; ++k) {
        const auto kind = core::TensorKind(k);
        rows += QStringLiteral("<tr><td>%1</td><td>%2</td></tr>").arg(swatch(ViewPalette::kindColor(kind)), QString::fromUtf8(core::kindName(kind).data(), qsizetype(core::kindName(kind).size())));
    }
    rows += QStringLiteral("<tr><td>%1</td><td>the step cursor</td></tr>").arg(swatch(ViewPalette::cursorLine()));
    rows += QStringLiteral("<tr><td>%1</td><td>outline of the selected buffer</td></tr>").arg(swatch(ViewPalette::outline()));
    rows += QStringLiteral("<tr><td>%1</td><td>buffers narrower than a pixel, merged</td></tr>").arg(swatch(ViewPalette::denseFill()));
    return QStringLiteral("<p>Lifetime bars, arena layout and coloring colour each buffer by its tensor's kind "
                          "(or by module or category where the view says so):</p><table cellspacing=\"4\">")
        + rows + QStringLiteral("</table>");
}

QString aboutHtml()
{
    return QStringLiteral("<b>MemPlan Studio %1</b><p>Plans how a neural network's tensors share one memory arena and shows "
                          "lifetimes, arena layout, coloring and the memory curve.</p><p>Qt %2 · CPU executor kernels: %3</p>")
        .arg(QStringLiteral(MEMPLAN_VERSION), QString::fromLatin1(qVersion()), QString::fromStdString(core::cpuKernelLibrary()));
}
