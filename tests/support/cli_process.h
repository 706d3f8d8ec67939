// Runs the built streamscope-cli (STREAMSCOPE_CLI) for end-to-end tests: its exit code and output. A crash is never an
// acceptable answer, whatever the input: it reads as exit -2.
#pragma once

#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace streamscope::testing {

struct CliResult {
    int code = -1;
    QString out;
    QString err;
    QString describe() const
    {
        return QStringLiteral("exit %1\n--- stdout:\n%2\n--- stderr:\n%3").arg(code).arg(out, err);
    }
};

inline CliResult runCli(const QStringList& args,
                        const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment(),
                        const QString& workingDirectory = {})
{
    QProcess p;
    p.setProcessEnvironment(env);
    if (!workingDirectory.isEmpty())
        p.setWorkingDirectory(workingDirectory);
    p.start(QStringLiteral(STREAMSCOPE_CLI), args);
    CliResult r;
    if (!p.waitForStarted(10000)) {
        r.err = QStringLiteral("could not start ") + QStringLiteral(STREAMSCOPE_CLI);
        return r;
    }
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("timed out");
        return r;
    }
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    return r;
}

} // namespace streamscope::testing
