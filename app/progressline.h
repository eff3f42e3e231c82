// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// A progress line on the terminal for long CLI work ("running x.onnx: op 37 of 122 · pass 3 of 11 ·
// 42% · about 3 s left", core::progressText), on standard error and only when that is a terminal,
// so pipes and logs stay clean.
// Redrawn at most five times a second; finish() (or the destructor) clears it.

#include <chrono>
#include <string>

class ProgressLine {
public:
    // `what` leads the line ("running resnet50.onnx"); `unit` is how many units one pass holds
    // (the schedule's ops), so a count over several passes reads as op i of n, pass k of N.
    ProgressLine(std::string what, int unit);
    ~ProgressLine();
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;

    bool shown() const { return m_terminal; }
    // `done` of `total` units so far; cheap when nothing is redrawn.
    void update(int done, int total);
    void finish();

private:
    std::string m_what;
    int m_unit = 1;
    bool m_terminal = false, m_drawn = false;
    std::chrono::steady_clock::time_point m_start, m_last;
};
