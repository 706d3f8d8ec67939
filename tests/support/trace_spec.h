// Traces written as one line of text, for the core tests.
#pragma once

#include "trace.h"

#include <QString>
#include <QStringList>

#include <map>
#include <string>

namespace streamscope::testing {

// A trace from spans "track:kind:start:end:name" (ns) and flows "from>to:kind" (span names). Tracks are made on
// first use: a name starting with 'h' is a host thread, any other a stream; "s2/1" is on device 1.
inline Trace traceOf(const QString& spans, const QString& flows = {})
{
    Trace t;
    std::map<QString, uint32_t> tracks;
    for (const QString& item : spans.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const QStringList f = item.split(QLatin1Char(':'));
        const QStringList trackAndDevice = f[0].split(QLatin1Char('/'));
        auto it = tracks.find(f[0]);
        if (it == tracks.end()) {
            Track tr;
            tr.name = trackAndDevice[0].toStdString();
            tr.kind = tr.name[0] == 'h' ? TrackKind::HostThread : TrackKind::Stream;
            tr.device = trackAndDevice.size() > 1 ? trackAndDevice[1].toInt() : 0;
            it = tracks.emplace(f[0], t.addTrack(tr)).first;
        }
        const auto kind = spanKindFromString(f[1].toStdString());
        if (!kind)
            qFatal("bad span kind in test spec: %s", qPrintable(f[1]));
        const std::string name = f.size() > 4 ? f[4].toStdString() : f[1].toStdString();
        t.addSpan({it->second, *kind, name, f[2].toLongLong(), f[3].toLongLong()});
    }
    auto byName = [&t](const QString& name) {
        for (uint32_t i = 0; i < t.spanCount(); ++i)
            if (t.spanName(i) == name.toStdString())
                return i;
        qFatal("no span named %s in test spec", qPrintable(name));
        return uint32_t(0);
    };
    for (const QString& item : flows.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const QStringList f = item.split(QLatin1Char(':'));
        const QStringList ends = f[0].split(QLatin1Char('>'));
        t.addFlow(byName(ends[0]), byName(ends[1]), *flowKindFromString(f[1].toStdString()));
    }
    t.finalize();
    return t;
}

inline Trace traceOf(const char* spans, const char* flows = "")
{
    return traceOf(QString::fromUtf8(spans), QString::fromUtf8(flows));
}

} // namespace streamscope::testing
