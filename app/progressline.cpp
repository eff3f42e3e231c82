// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "progressline.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

ProgressLine::ProgressLine(std::string what, int unit)
    : m_what(std::move(what))
    , m_unit(std::max(unit, 1))
    , m_terminal(isatty(STDERR_FILENO) == 1)
    , m_start(std::chrono::steady_clock::now())
    , m_last(m_start)
{
}

ProgressLine::~ProgressLine()
{
    finish();
}

void ProgressLine::update(int done, int total)
{
    if (!m_terminal || total <= 0)
        return;
    const auto now = std::chrono::steady_clock::now();
    if (m_drawn && done < total && now - m_last < std::chrono::milliseconds(200))
        return;
    m_last = now;
    const double elapsed = std::chrono::duration<double>(now - m_start).count();
    const int passes = (total + m_unit - 1) / m_unit;
    const int pass = std::min(done / m_unit + 1, passes);
    const int op = done - (pass - 1) * m_unit;
    std::string line = "\r" + m_what + ": op " + std::to_string(op) + " of " + std::to_string(m_unit);
    if (passes > 1)
        line += " · pass " + std::to_string(pass) + " of " + std::to_string(passes);
    line += " · " + std::to_string(int(100.0 * done / total)) + "%";
    if (done > 0 && elapsed > 1.0) {
        const double left = elapsed * double(total - done) / double(done);
        char estimate[64];
        std::snprintf(estimate, sizeof estimate, left < 90 ? " · about %.0f s left" : " · about %.0f min left", left < 90 ? left : left / 60);
        line += estimate;
    }
    std::fprintf(stderr, "%s\033[K", line.c_str());
    std::fflush(stderr);
    m_drawn = true;
}

void ProgressLine::finish()
{
    if (m_drawn) {
        std::fprintf(stderr, "\r\033[K");
        std::fflush(stderr);
        m_drawn = false;
    }
}
