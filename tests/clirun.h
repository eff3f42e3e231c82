// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Runs the memplan command line (MEMPLAN_CLI, set by tests/CMakeLists.txt) for the test suites that
// check its output and exit codes.

#include <QProcess>
#include <QString>
#include <QStringList>

struct CliRun {
    int exitCode = -1; // -2: timed out (killed), -3: crashed
    QString out, err;
};

inline CliRun memplan(const QStringList& arguments, int timeoutMs = 300000)
{
    QProcess process;
    process.start(QStringLiteral(MEMPLAN_CLI), arguments);
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        return { -2, {}, QStringLiteral("timed out") };
    }
    return { process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -3,
        QString::fromUtf8(process.readAllStandardOutput()), QString::fromUtf8(process.readAllStandardError()) };
}
