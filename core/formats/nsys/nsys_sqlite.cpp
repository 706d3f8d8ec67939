// Compiled only when SQLite3 is found (core/CMakeLists.txt); trace_formats.cpp has the stand-ins otherwise.
#include "nsys_sqlite.h"

#include "chrome_trace.h"
#include "import_limits.h"
#include "trace_formats.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

namespace streamscope {

namespace {

// Thrown inside the reader only; loadNsysSqliteFile turns it into an Error value.
struct DbError {
    std::string where;
    std::string message;
};

// What the database may cost to read: views and virtual tables run code of the file's choosing, and a table may be
// of any size, so every query shares one budget of rows and of time inside SQLite.
struct QueryBudget {
    NsysLimits limits;
    int64_t rows = 0;                                  // rows returned so far, all queries together
    std::chrono::steady_clock::duration spent{};       // time inside sqlite3_step so far
    std::chrono::steady_clock::time_point stepStarted; // of the step under way
    bool overTime = false;
};

class Database {
public:
    explicit Database(const std::string& path, bool write = false, const NsysLimits& limits = {})
    {
        m_budget.limits = limits;
        const int flags = write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
        if (sqlite3_open_v2(path.c_str(), &m_db, flags, nullptr) != SQLITE_OK) {
            const std::string msg = m_db ? sqlite3_errmsg(m_db) : "cannot open the database";
            throw DbError{{}, msg};
        }
        if (!write) {
            // The schema is the file's: its views and triggers may call only functions that are safe anywhere.
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA
            sqlite3_db_config(m_db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
#endif
#ifdef SQLITE_DBCONFIG_DEFENSIVE
            sqlite3_db_config(m_db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
#endif
            sqlite3_progress_handler(m_db, 10000, &Database::progress, &m_budget);
        }
    }
    ~Database()
    {
        sqlite3_close(m_db);
    }
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    sqlite3* get() const
    {
        return m_db;
    }
    QueryBudget& budget()
    {
        return m_budget;
    }

    std::set<std::string> tables();
    std::set<std::string> columns(const std::string& table);

private:
    // Called by SQLite every 10000 virtual-machine steps: a nonzero answer interrupts the query.
    static int progress(void* p)
    {
        auto* b = static_cast<QueryBudget*>(p);
        const auto now = std::chrono::steady_clock::now();
        if (b->spent + (now - b->stepStarted) > std::chrono::seconds(b->limits.maxQuerySeconds))
            b->overTime = true;
        return b->overTime ? 1 : 0;
    }

    sqlite3* m_db = nullptr;
    QueryBudget m_budget;
};

class Statement {
public:
    Statement(Database& db, const std::string& sql, std::string where) : m_where(std::move(where))
    {
        if (sqlite3_prepare_v2(db.get(), sql.c_str(), int(sql.size()), &m_stmt, nullptr) != SQLITE_OK)
            throw DbError{m_where, sqlite3_errmsg(db.get())};
        m_db = &db;
    }
    ~Statement() { sqlite3_finalize(m_stmt); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    bool step()
    {
        QueryBudget& b = m_db->budget();
        b.stepStarted = std::chrono::steady_clock::now();
        const int rc = sqlite3_step(m_stmt);
        b.spent += std::chrono::steady_clock::now() - b.stepStarted;
        if (b.overTime)
            throw DbError{m_where,
                          "reading the database took more than " + std::to_string(b.limits.maxQuerySeconds)
                              + " s inside SQLite (a view that does not end, or a table far too large?); "
                                "the limit is "
                              + std::to_string(b.limits.maxQuerySeconds) + " s"};
        if (rc == SQLITE_ROW) {
            if (++b.rows > b.limits.maxRows)
                throw DbError{m_where,
                              "more than " + std::to_string(b.limits.maxRows)
                                  + " rows read from the database; the limit is " + std::to_string(b.limits.maxRows)};
            return true;
        }
        if (rc == SQLITE_DONE)
            return false;
        throw DbError{m_where, sqlite3_errmsg(m_db->get())};
    }
    bool isNull(int col) const { return sqlite3_column_type(m_stmt, col) == SQLITE_NULL; }
    int64_t integer(int col) const { return sqlite3_column_int64(m_stmt, col); }
    int64_t integerOr(int col, int64_t fallback) const { return isNull(col) ? fallback : integer(col); }
    std::string text(int col) const
    {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, col));
        return p ? std::string(p, size_t(sqlite3_column_bytes(m_stmt, col))) : std::string();
    }
    // An integer column that must hold an integer: "CUPTI_ACTIVITY_KIND_KERNEL row 12: start is not an integer".
    int64_t required(int col, const char* name, int64_t rowid) const
    {
        if (sqlite3_column_type(m_stmt, col) != SQLITE_INTEGER)
            throw DbError{m_where + " row " + std::to_string(rowid),
                          std::string(name) + (isNull(col) ? " is missing (NULL)" : " is not an integer")};
        return integer(col);
    }

private:
    Database* m_db = nullptr;
    sqlite3_stmt* m_stmt = nullptr;
    std::string m_where;
};

std::set<std::string> Database::tables()
{
    std::set<std::string> out;
    Statement st(*this, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')", "sqlite_master");
    while (st.step())
        out.insert(st.text(0));
    return out;
}

std::set<std::string> Database::columns(const std::string& table)
{
    std::set<std::string> out;
    Statement st(*this, "PRAGMA table_info(\"" + table + "\")", table);
    while (st.step())
        out.insert(st.text(1));
    return out;
}

// CUpti_ActivityMemcpyKind as Nsight exports it (ENUM_CUDA_MEMCPY_OPER).
const char* copyKindText(int64_t k)
{
    static const char* const names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD",
                                        "DtoA",    "DtoD", "HtoH", "PtoP", "HtoD", "DtoH", "DtoD"};
    return k >= 0 && k < int64_t(std::size(names)) ? names[k] : "Unknown";
}

SpanKind copyKind(int64_t k)
{
    switch (k) {
    case 1:  // HtoD
    case 3:  // HtoA
    case 9:  // HtoH: over the host link like an upload
    case 11: // unified memory HtoD
        return SpanKind::MemcpyH2D;
    case 2:  // DtoH
    case 4:  // AtoH
    case 12: // unified memory DtoH
        return SpanKind::MemcpyD2H;
    case 10: return SpanKind::MemcpyP2P;
    default: return SpanKind::MemcpyD2D; // DtoD, arrays on the device, unknown
    }
}

// ENUM_CUDA_MEM_KIND.
const char* memoryKindText(int64_t k)
{
    static const char* const names[] = {"Pageable", "Pinned",        "Device",        "Array",
                                        "Managed",  "Device Static", "Managed Static"};
    return k >= 0 && k < int64_t(std::size(names)) ? names[k] : "Unknown";
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": Nsight keeps the API version in the name.
std::string apiName(std::string name)
{
    const size_t v = name.rfind("_v");
    if (v != std::string::npos && v + 2 < name.size()
        && std::all_of(name.begin() + long(v) + 2, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
        name.resize(v);
    return name;
}

// A serialized global id: the process in bits 24..47, the thread in bits 0..23.
int64_t pidOf(int64_t globalId)
{
    return (globalId >> 24) & 0xffffff;
}
int64_t tidOf(int64_t globalId)
{
    return globalId & 0xffffff;
}

class Importer {
public:
    Importer(const std::string& path, const NsysLimits& limits) : m_path(path), m_db(path, false, limits) {}

    Trace run()
    {
        m_tables = m_db.tables();
        const bool any = has("CUPTI_ACTIVITY_KIND_KERNEL") || has("CUPTI_ACTIVITY_KIND_MEMCPY")
            || has("CUPTI_ACTIVITY_KIND_MEMSET") || has("CUPTI_ACTIVITY_KIND_RUNTIME");
        if (!any)
            throw DbError{{},
                          "an SQLite database without CUDA activity tables (CUPTI_ACTIVITY_KIND_KERNEL, "
                          "_MEMCPY, _MEMSET, _RUNTIME): not an Nsight Systems export, or a report without "
                          "CUDA trace (profile with nsys profile --trace=cuda)"};
        // Correlation ids are per process; older exports have no globalPid on the GPU tables, then one scope.
        m_scoped = !has("CUPTI_ACTIVITY_KIND_KERNEL") || m_db.columns("CUPTI_ACTIVITY_KIND_KERNEL").count("globalPid");
        m_t.info.source = TraceSource::Imported;
        m_t.info.backend = "nsys";
        readStrings();
        readRunInfo();
        readThreadNames();
        readKernels();
        readMemcpys();
        readMemsets();
        readRuntime();
        readSynchronization();
        orderTracks();
        for (const Flow& f : m_deps.flows())
            m_t.addFlow(f.from, f.to, f.kind);
        m_t.finalize();
        return std::move(m_t);
    }

private:
    bool has(const std::string& table) const { return m_tables.count(table) != 0; }

    // A column expression, or a stand-in where this export's version has no such column.
    std::string col(const std::set<std::string>& cols, const std::string& name, const std::string& fallback) const
    {
        return cols.count(name) ? "\"" + name + "\"" : fallback;
    }

    void readStrings()
    {
        if (!has("StringIds"))
            return;
        Statement st(m_db, "SELECT id, value FROM StringIds", "StringIds");
        while (st.step())
            m_strings.emplace(st.integer(0), st.text(1));
    }

    const std::string* lookup(int64_t id, const std::string& where, int64_t rowid) const
    {
        auto it = m_strings.find(id);
        if (it == m_strings.end())
            throw DbError{where + " row " + std::to_string(rowid),
                          "name id " + std::to_string(id) + " is not in StringIds"};
        return &it->second;
    }

    void readRunInfo()
    {
        if (has("TARGET_INFO_GPU")) {
            const auto cols = m_db.columns("TARGET_INFO_GPU");
            const std::string sql = "SELECT " + col(cols, "cuDevice", col(cols, "id", "0")) + ", "
                + col(cols, "name", "''") + ", " + col(cols, "smCount", "NULL") + ", "
                + col(cols, "totalMemory", "NULL") + ", " + col(cols, "computeMajor", "NULL") + ", "
                + col(cols, "computeMinor", "NULL") + ", " + col(cols, "asyncEngines", "NULL") + ", "
                + col(cols, "l2CacheSize", "NULL") + ", " + col(cols, "busLocation", "NULL") + ", "
                + col(cols, "maxShmemPerSm", "NULL") + ", " + col(cols, "maxRegistersPerSm", "NULL")
                + " FROM TARGET_INFO_GPU";
            Statement st(m_db, sql, "TARGET_INFO_GPU");
            std::set<int64_t> seen;
            int64_t row = 0;
            while (st.step()) {
                ++row;
                const int64_t index = st.integerOr(0, 0);
                if (const std::string problem = deviceIndexProblem(index); !problem.empty())
                    throw DbError{"TARGET_INFO_GPU row " + std::to_string(row), problem};
                if (!seen.insert(index).second)
                    continue;
                if (seen.size() > kMaxImportedDevices)
                    throw DbError{"TARGET_INFO_GPU row " + std::to_string(row), tooManyDevicesMessage()};
                DeviceInfo d;
                d.index = int(index);
                d.name = st.text(1);
                const auto add = [&](const char* key, int c) {
                    if (!st.isNull(c))
                        d.properties.emplace_back(key, st.text(c));
                };
                add("sm_count", 2);
                add("memory_bytes", 3);
                if (!st.isNull(4) && !st.isNull(5))
                    d.properties.emplace_back("compute_capability", st.text(4) + "." + st.text(5));
                add("async_engine_count", 6);
                add("l2_cache_bytes", 7);
                add("pci_bus_id", 8);
                add("shared_memory_per_sm", 9);
                add("registers_per_sm", 10);
                m_t.info.devices.push_back(std::move(d));
            }
        }
        if (has("TARGET_INFO_SESSION_START_TIME") && m_db.columns("TARGET_INFO_SESSION_START_TIME").count("utcTime")) {
            Statement st(m_db, "SELECT utcTime FROM TARGET_INFO_SESSION_START_TIME", "TARGET_INFO_SESSION_START_TIME");
            if (st.step())
                m_t.info.date = st.text(0);
        }
        // The session's start on the wall clock: the report's times count from it. merge aligns the reports of a
        // job's ranks by it (foreign_ranks.h).
        if (has("TARGET_INFO_SESSION_START_TIME")
            && m_db.columns("TARGET_INFO_SESSION_START_TIME").count("utcEpochNs")) {
            Statement st(m_db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME",
                         "TARGET_INFO_SESSION_START_TIME");
            if (st.step() && !st.isNull(0))
                m_t.info.settings.emplace_back("session_start_utc_ns", std::to_string(st.integer(0)));
        }
        if (has("TARGET_INFO_SYSTEM_ENV")) {
            const auto cols = m_db.columns("TARGET_INFO_SYSTEM_ENV");
            if (cols.count("name") && cols.count("value")) {
                Statement st(m_db, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'",
                             "TARGET_INFO_SYSTEM_ENV");
                if (st.step())
                    m_t.info.host = st.text(0);
            }
        }
        if (has("META_DATA_EXPORT")) {
            Statement st(m_db, "SELECT name, value FROM META_DATA_EXPORT", "META_DATA_EXPORT");
            while (st.step())
                m_t.info.settings.emplace_back(st.text(0), st.text(1));
        }
    }

    void readThreadNames()
    {
        if (has("ThreadNames")) {
            Statement st(m_db, "SELECT nameId, globalTid FROM ThreadNames", "ThreadNames");
            while (st.step()) {
                auto it = m_strings.find(st.integer(0));
                if (it != m_strings.end() && !st.isNull(1))
                    m_threadNames[st.integer(1)] = it->second;
            }
        }
    }

    uint32_t streamTrack(int64_t process, int64_t device, int64_t stream, const std::string& where)
    {
        const std::tuple<int64_t, int64_t, int64_t> key{process, device, stream};
        auto it = m_streamTracks.find(key);
        if (it != m_streamTracks.end())
            return it->second;
        if (const std::string problem = deviceIndexProblem(device); !problem.empty())
            throw DbError{where, problem};
        if (m_devices.insert(device).second && m_devices.size() > kMaxImportedDevices)
            throw DbError{where, tooManyDevicesMessage()};
        checkTrackCount(where);
        Track tr;
        tr.kind = TrackKind::Stream;
        tr.device = int(device);
        tr.id = stream;
        tr.name = "stream " + std::to_string(stream);
        const uint32_t index = m_t.addTrack(std::move(tr));
        m_trackProcess.resize(m_t.tracks.size(), 0);
        m_trackProcess[index] = process;
        m_streamTracks.emplace(key, index);
        return index;
    }

    void checkTrackCount(const std::string& where) const
    {
        if (m_t.tracks.size() >= kMaxImportedTracks)
            throw DbError{where, tooManyTracksMessage()};
    }

    uint32_t threadTrack(int64_t globalTid, const std::string& where)
    {
        auto it = m_threadTracks.find(globalTid);
        if (it != m_threadTracks.end())
            return it->second;
        checkTrackCount(where);
        Track tr;
        tr.kind = TrackKind::HostThread;
        tr.device = -1;
        tr.id = tidOf(globalTid);
        auto name = m_threadNames.find(globalTid);
        tr.name = name != m_threadNames.end() && !name->second.empty() ? name->second
                                                                       : "thread " + std::to_string(tidOf(globalTid));
        const uint32_t index = m_t.addTrack(std::move(tr));
        m_trackProcess.resize(m_t.tracks.size(), 0);
        m_trackProcess[index] = pidOf(globalTid);
        m_threadTracks.emplace(globalTid, index);
        return index;
    }

    // Reads start, end, deviceId, streamId, correlationId, globalPid (columns 1..6 after rowid) of a GPU table.
    struct GpuRow {
        int64_t rowid, start, end, device, stream, correlation, process;
    };
    GpuRow gpuRow(const Statement& st, const std::string& table)
    {
        GpuRow r;
        r.rowid = st.integer(0);
        r.start = st.required(1, "start", r.rowid);
        r.end = st.required(2, "end", r.rowid);
        r.device = st.required(3, "deviceId", r.rowid);
        r.stream = st.required(4, "streamId", r.rowid);
        r.correlation = st.integerOr(5, -1);
        r.process = m_scoped ? pidOf(st.integerOr(6, 0)) : 0;
        if (r.end < r.start)
            throw DbError{table + " row " + std::to_string(r.rowid),
                          "end before start (" + std::to_string(r.end) + " < " + std::to_string(r.start) + ")"};
        return r;
    }

    std::string gpuColumns(const std::set<std::string>& cols) const
    {
        return "rowid, \"start\", \"end\", " + col(cols, "deviceId", "0") + ", " + col(cols, "streamId", "0") + ", "
            + col(cols, "correlationId", "NULL") + ", " + col(cols, "globalPid", "NULL");
    }

    uint32_t addGpuSpan(const std::string& table, const GpuRow& r, SpanKind kind, const std::string& name,
                        int64_t bytes, Dim3 grid, Dim3 block)
    {
        SpanInit s;
        s.track = streamTrack(r.process, r.device, r.stream, table + " row " + std::to_string(r.rowid));
        s.kind = kind;
        s.name = name;
        s.start = r.start;
        s.end = r.end;
        s.bytes = bytes;
        s.grid = grid;
        s.block = block;
        const uint32_t span = m_t.addSpan(s);
        m_deps.gpuOp(r.process, r.correlation, span, r.device, r.stream, r.start, r.end);
        return span;
    }

    void readKernels()
    {
        const std::string table = "CUPTI_ACTIVITY_KIND_KERNEL";
        if (!has(table))
            return;
        const auto cols = m_db.columns(table);
        const std::string name = col(cols, "demangledName", col(cols, "shortName", col(cols, "mangledName", "NULL")));
        const std::string sql = "SELECT " + gpuColumns(cols) + ", " + name + ", " + col(cols, "gridX", "0") + ", "
            + col(cols, "gridY", "0") + ", " + col(cols, "gridZ", "0") + ", " + col(cols, "blockX", "0") + ", "
            + col(cols, "blockY", "0") + ", " + col(cols, "blockZ", "0") + " FROM " + table;
        Statement st(m_db, sql, table);
        while (st.step()) {
            const GpuRow r = gpuRow(st, table);
            const std::string* n = st.isNull(7) ? &m_unnamedKernel : lookup(st.integer(7), table, r.rowid);
            const auto dim = [&](int c) { return uint32_t(std::clamp<int64_t>(st.integerOr(c, 0), 0, UINT32_MAX)); };
            addGpuSpan(table, r, SpanKind::Kernel, *n, 0, Dim3{dim(8), dim(9), dim(10)},
                       Dim3{dim(11), dim(12), dim(13)});
        }
    }

    void readMemcpys()
    {
        const std::string table = "CUPTI_ACTIVITY_KIND_MEMCPY";
        if (!has(table))
            return;
        const auto cols = m_db.columns(table);
        const std::string sql = "SELECT " + gpuColumns(cols) + ", " + col(cols, "bytes", "0") + ", "
            + col(cols, "copyKind", "0") + ", " + col(cols, "srcKind", "NULL") + ", " + col(cols, "dstKind", "NULL")
            + " FROM " + table;
        Statement st(m_db, sql, table);
        while (st.step()) {
            const GpuRow r = gpuRow(st, table);
            const int64_t kind = st.integerOr(8, 0);
            std::string name = std::string("Memcpy ") + copyKindText(kind);
            if (!st.isNull(9) && !st.isNull(10))
                name +=
                    std::string(" (") + memoryKindText(st.integer(9)) + " -> " + memoryKindText(st.integer(10)) + ")";
            addGpuSpan(table, r, copyKind(kind), name, st.integerOr(7, 0), Dim3{0, 0, 0}, Dim3{0, 0, 0});
        }
    }

    void readMemsets()
    {
        const std::string table = "CUPTI_ACTIVITY_KIND_MEMSET";
        if (!has(table))
            return;
        const auto cols = m_db.columns(table);
        const std::string sql = "SELECT " + gpuColumns(cols) + ", " + col(cols, "bytes", "0") + ", "
            + col(cols, "memKind", "NULL") + " FROM " + table;
        Statement st(m_db, sql, table);
        while (st.step()) {
            const GpuRow r = gpuRow(st, table);
            const std::string name =
                st.isNull(8) ? std::string("Memset") : std::string("Memset (") + memoryKindText(st.integer(8)) + ")";
            addGpuSpan(table, r, SpanKind::Memset, name, st.integerOr(7, 0), Dim3{0, 0, 0}, Dim3{0, 0, 0});
        }
    }

    void readRuntime()
    {
        const std::string table = "CUPTI_ACTIVITY_KIND_RUNTIME";
        if (!has(table))
            return;
        const auto cols = m_db.columns(table);
        const std::string sql = "SELECT rowid, \"start\", \"end\", " + col(cols, "globalTid", "0") + ", "
            + col(cols, "correlationId", "NULL") + ", " + col(cols, "nameId", "NULL") + " FROM " + table;
        Statement st(m_db, sql, table);
        std::unordered_map<int64_t, std::string> names; // nameId -> name without the version suffix
        while (st.step()) {
            const int64_t rowid = st.integer(0);
            const int64_t start = st.required(1, "start", rowid);
            const int64_t end = st.required(2, "end", rowid);
            if (end < start)
                throw DbError{table + " row " + std::to_string(rowid),
                              "end before start (" + std::to_string(end) + " < " + std::to_string(start) + ")"};
            const int64_t gtid = st.integerOr(3, 0);
            const int64_t nameId = st.required(5, "nameId", rowid);
            auto it = names.find(nameId);
            if (it == names.end())
                it = names.emplace(nameId, apiName(*lookup(nameId, table, rowid))).first;
            SpanInit s;
            s.track = threadTrack(gtid, table + " row " + std::to_string(rowid));
            s.kind = it->second.find("Synchronize") != std::string::npos ? SpanKind::Sync : SpanKind::ApiCall;
            s.name = it->second;
            s.start = start;
            s.end = end;
            const uint32_t span = m_t.addSpan(s);
            m_deps.apiCall(m_scoped ? pidOf(gtid) : 0, st.integerOr(4, -1), span, start);
        }
    }

    void readSynchronization()
    {
        const std::string table = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
        if (!has(table))
            return;
        // Which stream recorded each event, where the export has CUDA event records.
        struct Record {
            int64_t time, device, stream;
        };
        std::map<std::pair<int64_t, int64_t>, std::vector<Record>> records; // (process, eventId)
        const std::string events = "CUPTI_ACTIVITY_KIND_CUDA_EVENT";
        if (has(events)) {
            const auto cols = m_db.columns(events);
            if (cols.count("eventId") && cols.count("streamId") && cols.count("correlationId")) {
                const std::string sql = "SELECT eventId, streamId, correlationId, " + col(cols, "deviceId", "0") + ", "
                    + col(cols, "globalPid", "NULL") + " FROM " + events;
                Statement st(m_db, sql, events);
                while (st.step()) {
                    const int64_t process = m_scoped ? pidOf(st.integerOr(4, 0)) : 0;
                    const auto call = m_deps.findCall(process, st.integerOr(2, -1));
                    if (!call)
                        continue;
                    records[{process, st.integerOr(0, -1)}].push_back(
                        {call->start, st.integerOr(3, 0), st.integerOr(1, 0)});
                }
                for (auto& [k, v] : records)
                    std::sort(v.begin(), v.end(), [](const Record& a, const Record& b) { return a.time < b.time; });
            }
        }
        const auto cols = m_db.columns(table);
        const std::string sql = "SELECT " + gpuColumns(cols) + ", " + col(cols, "syncType", "0") + ", "
            + col(cols, "eventId", "NULL") + " FROM " + table;
        Statement st(m_db, sql, table);
        while (st.step()) {
            const GpuRow r = gpuRow(st, table);
            const int64_t type = st.integerOr(7, 0);
            const auto call = m_deps.findCall(r.process, r.correlation);
            // The record of the event that was current when the wait began.
            const auto recordBefore = [&](int64_t time) -> const Record* {
                if (st.isNull(8))
                    return nullptr;
                auto it = records.find({r.process, st.integer(8)});
                if (it == records.end())
                    return nullptr;
                // The last record at or before the time (records are sorted by time).
                const auto after = std::upper_bound(it->second.begin(), it->second.end(), time,
                                                    [](int64_t t, const Record& rec) { return t < rec.time; });
                return after == it->second.begin() ? nullptr : &*(after - 1);
            };
            const int64_t when = call ? call->start : r.start;
            switch (type) {
            case 1: // event synchronize
                if (const Record* rec = recordBefore(when); rec && call)
                    m_deps.eventSync(r.process, rec->device, rec->stream, rec->time, *call);
                break;
            case 2: // stream wait event
                if (const Record* rec = recordBefore(when))
                    m_deps.streamWait(r.process, r.device, r.stream, when, rec->stream, rec->time);
                break;
            case 3: // stream synchronize
                if (call)
                    m_deps.streamSync(r.process, r.device, r.stream, *call);
                break;
            case 4: // context synchronize
                if (call)
                    m_deps.contextSync(r.process, r.device, *call);
                break;
            default: break;
            }
        }
    }

    // Host threads first (by process, then thread), then streams by (device, stream id); where GPU work of more than
    // one process shares a device, stream names say which process.
    void orderTracks()
    {
        const size_t n = m_t.tracks.size();
        std::vector<uint32_t> order(n);
        for (uint32_t i = 0; i < n; ++i)
            order[i] = i;
        std::stable_sort(order.begin(), order.end(), [this](uint32_t a, uint32_t b) {
            const Track& x = m_t.tracks[a];
            const Track& y = m_t.tracks[b];
            if (x.kind != y.kind)
                return x.kind == TrackKind::HostThread;
            if (x.kind == TrackKind::Stream && x.device != y.device)
                return x.device < y.device;
            if (m_trackProcess[a] != m_trackProcess[b])
                return m_trackProcess[a] < m_trackProcess[b];
            return x.id < y.id;
        });
        std::set<int64_t> gpuProcesses;
        std::set<int64_t> hostProcesses;
        for (uint32_t i = 0; i < n; ++i)
            (m_t.tracks[i].kind == TrackKind::Stream ? gpuProcesses : hostProcesses).insert(m_trackProcess[i]);
        std::vector<Track> tracks;
        std::vector<uint32_t> newIndex(n);
        for (uint32_t i = 0; i < n; ++i) {
            newIndex[order[i]] = i;
            Track tr = m_t.tracks[order[i]];
            // Rows of several processes are told apart by their pid (two processes' main threads share a name).
            if ((tr.kind == TrackKind::Stream ? gpuProcesses : hostProcesses).size() > 1)
                tr.name += " (pid " + std::to_string(m_trackProcess[order[i]]) + ")";
            tracks.push_back(std::move(tr));
        }
        m_t.tracks = std::move(tracks);
        for (auto& tr : m_t.spans.track)
            tr = newIndex[tr];
        std::set<int> devices;
        for (const auto& tr : m_t.tracks)
            if (tr.kind == TrackKind::Stream && tr.device >= 0)
                devices.insert(tr.device);
        for (const DeviceInfo& di : m_t.info.devices)
            devices.erase(di.index);
        for (int d : devices)
            m_t.info.devices.push_back({d, {}, {}});
        std::sort(m_t.info.devices.begin(), m_t.info.devices.end(),
                  [](const DeviceInfo& a, const DeviceInfo& b) { return a.index < b.index; });
    }

    std::string m_path;
    Database m_db;
    std::set<std::string> m_tables;
    bool m_scoped = true;
    Trace m_t;
    std::unordered_map<int64_t, std::string> m_strings;
    std::unordered_map<int64_t, std::string> m_threadNames;
    std::map<std::tuple<int64_t, int64_t, int64_t>, uint32_t> m_streamTracks;
    std::unordered_map<int64_t, uint32_t> m_threadTracks;
    std::vector<int64_t> m_trackProcess;
    std::set<int64_t> m_devices; // of the stream tracks
    CudaDependencies m_deps;
    const std::string m_unnamedKernel = "kernel";
};

} // namespace

bool nsysSqliteSupported()
{
    return true;
}

Result<Trace> loadNsysSqliteFile(const std::string& path, const NsysLimits& limits)
{
    try {
        Importer importer(path, limits);
        return importer.run();
    } catch (const DbError& e) {
        return Error{path, e.where, e.message};
    } catch (const std::bad_alloc&) {
        return Error{path, {}, "out of memory while reading the database"};
    }
}

Status executeSqlScript(const std::string& databasePath, const std::string& sql)
{
    try {
        Database db(databasePath, true);
        char* message = nullptr;
        if (sqlite3_exec(db.get(), sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
            const std::string text = message ? message : "SQL error";
            sqlite3_free(message);
            return Error{databasePath, {}, text};
        }
        return Status::success();
    } catch (const DbError& e) {
        return Error{databasePath, e.where, e.message};
    }
}

} // namespace streamscope
