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

// Runs `program` with `arguments` in `environment` (by default the test's own).
inline CliRun runProgram(const QString& program, const QStringList& arguments,
    const QProcessEnvironment& environment = QProcessEnvironment::systemEnvironment(), int timeoutMs = 300000)
{
    QProcess process;
    process.setProcessEnvironment(environment);
    process.start(program, arguments);
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        return { -2, {}, QStringLiteral("timed out") };
    }
    return { process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -3,
        QString::fromUtf8(process.readAllStandardOutput()), QString::fromUtf8(process.readAllStandardError()) };
}

inline CliRun memplan(const QStringList& arguments, int timeoutMs = 300000)
{
    return runProgram(QStringLiteral(MEMPLAN_CLI), arguments, QProcessEnvironment::systemEnvironment(), timeoutMs);
}
