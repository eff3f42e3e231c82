// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The one place that includes QCustomPlot: it still uses `foreach`, which QT_NO_FOREACH forbids.
// Qt defines `foreach` (or not) in the first Qt header a file includes, so include this header
// before any other Qt header (first line of the .cpp), and only from .cpp files.
#ifdef QT_NO_FOREACH
#undef QT_NO_FOREACH
#endif
#include <qcustomplot.h>
