// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// The Help menu's texts, built from what they describe so they stay true: the shortcuts from the
// menu bar's actions, the colours from the views' palette.

#include <QString>

class QMainWindow;

// Every action of the window that has a shortcut, as an HTML table: where it is (its menu, else
// "Toolbar"), the action, the keys.
QString shortcutsHtml(const QMainWindow* window);
// The views' colours: one swatch per tensor kind, and the chrome (step cursor, selection, merged
// sub-pixel buffers), as HTML.
QString legendHtml();
// Version of the Studio, Qt and the CPU executor's kernel library, as HTML.
QString aboutHtml();
