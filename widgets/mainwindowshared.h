// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Small helpers MainWindow's source files share (mainwindow.cpp, mainwindowsetup.cpp,
// mainwindowfiles.cpp); not part of the window's interface.

#include <QFileInfo>
#include <QString>

namespace mainwindow {

// Planners that read PlanOptions::timeLimitSeconds; the time-limit control is enabled only for them.
inline bool plannerUsesTimeLimit(const QString& name) { return name == QLatin1String("exact"); }

// What the title and messages call a model: "example:cnn" as is, a file by its name.
inline QString displayName(const QString& spec)
{
    return spec.startsWith(QLatin1String("example:")) ? spec : QFileInfo(spec).fileName();
}

} // namespace mainwindow
