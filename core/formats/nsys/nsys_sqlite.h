// Nsight Systems SQLite exports (nsys export --type sqlite): kernels, memcpys and memsets per device and stream,
// CUDA API calls per host thread, launch arrows joined by correlation id, sync and event arrows from the
// synchronization records. Built only where SQLite3 was found at configure time (STREAMSCOPE_HAVE_SQLITE); without
// it every function here returns an error that says so. docs/FORMATS.md has the mapping.
#pragma once

#include "result.h"
#include "trace.h"

#include <string>

namespace streamscope {

// Whether this build reads SQLite databases.
bool nsysSqliteSupported();

// What reading one export may cost. A database is a program as much as data: its views and virtual tables can
// run without end or return rows without end, so the rows read and the time spent inside SQLite are bounded.
struct NsysLimits {
    int64_t maxRows = 10'000'000; // rows read from all tables together (each is at most a span)
    int maxQuerySeconds = 30;     // time inside SQLite, all queries together
};

Result<Trace> loadNsysSqliteFile(const std::string& path, const NsysLimits& limits = {});

// Runs SQL statements on a database, creating it if needed: for tests and tools that build small exports from the
// documented schema.
Status executeSqlScript(const std::string& databasePath, const std::string& sql);

} // namespace streamscope
