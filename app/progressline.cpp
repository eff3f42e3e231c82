// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "progressline.h"

#include "util/progresstext.h"

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
    const std::string line = "\r" + m_what + ": " + core::progressText(done, total, m_unit, elapsed);
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
