// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Small helpers MainWindow's source files share (mainwindow.cpp, mainwindowsetup.cpp,
// mainwindowfiles.cpp); not part of the window's interface.

#include "planners/planner.h"

#include <QFileInfo>
#include <QSettings>
#include <QString>

namespace mainwindow {

// Planners that read PlanOptions::timeLimitSeconds; the time-limit control is enabled only for them.
inline bool plannerUsesTimeLimit(const QString& name) { return name == QLatin1String("exact"); }

// The planner combo's entry for a memory snapshot's own placement (core::Workload::recorded): shown
// only while a snapshot is open; choosing it displays where the allocator put each buffer.
// QSettings key of the planner the Studio opens with, and that planner (default: core::kDefaultPlanner).
inline QString plannerSettingsKey() { return QStringLiteral("planner"); }
inline QString savedPlannerName()
{
    return QSettings().value(plannerSettingsKey(), QString::fromUtf8(core::kDefaultPlanner.data(), qsizetype(core::kDefaultPlanner.size()))).toString();
}

inline QString recordedPlannerName() { return QStringLiteral("as recorded"); }

// What the title and messages call a model: "example:cnn" as is, a file by its name.
inline QString displayName(const QString& spec)
{
    return spec.startsWith(QLatin1String("example:")) ? spec : QFileInfo(spec).fileName();
}

} // namespace mainwindow
