#include "csv_trace.h"

#include "file_io.h"
#include "import_limits.h"
#include "ranges.h"
#include "trace_json.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <vector>

namespace streamscope {

namespace {

void appendField(std::string& out, std::string_view s)
{
    if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
        out += s;
        return;
    }
    out += '"';
    for (char c : s) {
        if (c == '"')
            out += '"';
        out += c;
    }
    out += '"';
}

// Splits RFC 4180 records; a record ends at CRLF or LF outside quotes. Tolerates a missing final line end.
class CsvReader {
public:
    CsvReader(std::string_view text, std::string file) : m_text(text), m_file(std::move(file))
    {
        if (m_text.substr(0, 3) == "\xef\xbb\xbf")
            m_pos = 3;
    }
    bool atEnd() const { return m_pos >= m_text.size(); }
    int row() const { return m_row; }

    // The next record's fields, or an Error naming the row.
    Result<std::vector<std::string>> next()
    {
        ++m_row;
        std::vector<std::string> fields;
        std::string field;
        bool quoted = false, wasQuoted = false;
        for (;;) {
            if (m_pos >= m_text.size()) {
                if (quoted)
                    return Error{m_file, "row " + std::to_string(m_row), "a quoted field is not closed"};
                fields.push_back(std::move(field));
                return fields;
            }
            const char c = m_text[m_pos++];
            if (quoted) {
                if (c == '"') {
                    if (m_pos < m_text.size() && m_text[m_pos] == '"') {
                        field += '"';
                        ++m_pos;
                    } else {
                        quoted = false;
                    }
                } else {
                    field += c;
                }
                continue;
            }
            if (c == '"') {
                if (!field.empty() || wasQuoted)
                    return Error{m_file, where(fields.size()), "a double quote inside a field that is not quoted"};
                quoted = wasQuoted = true;
            } else if (c == ',') {
                fields.push_back(std::move(field));
                field.clear();
                wasQuoted = false;
            } else if (c == '\n' || c == '\r') {
                if (c == '\r' && m_pos < m_text.size() && m_text[m_pos] == '\n')
                    ++m_pos;
                fields.push_back(std::move(field));
                return fields;
            } else {
                if (wasQuoted)
                    return Error{m_file, where(fields.size()), "text after the closing double quote of a field"};
                field += c;
            }
        }
    }

private:
    std::string where(size_t fieldsBefore) const
    {
        return "row " + std::to_string(m_row) + ", field " + std::to_string(fieldsBefore + 1);
    }

    std::string_view m_text;
    std::string m_file;
    size_t m_pos = 0;
    int m_row = 0;
};

std::optional<int64_t> parseInt(const std::string& s)
{
    int64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size())
        return std::nullopt;
    return v;
}

} // namespace

std::string traceToCsv(const Trace& input)
{
    const Trace* tp = &input;
    Trace copy;
    if (!input.finalized()) {
        copy = input;
        copy.finalize();
        tp = &copy;
    }
    const Trace& t = *tp;
    const size_t n = t.spanCount();
    // The host thread that launched each GPU span, from the launch arrows.
    std::vector<uint32_t> launcher(n, 0xffffffffu);
    for (const Flow& f : t.flows)
        if (f.kind == FlowKind::Launch && launcher[f.to] == 0xffffffffu)
            launcher[f.to] = t.spans.track[f.from];

    std::string out;
    out.reserve(64 + n * 80);
    out += kCsvHeader;
    out += "\r\n";
    for (size_t i = 0; i < n; ++i) {
        // Ranges are written on the host thread or stream they annotate; the import puts them on lanes again.
        const Track& own = t.tracks[t.spans.track[i]];
        const bool ranges = own.kind == TrackKind::Ranges && own.parent >= 0 && size_t(own.parent) < t.tracks.size();
        const Track& tr = ranges ? t.tracks[size_t(own.parent)] : own;
        if (tr.kind == TrackKind::Stream) {
            appendInt(out, tr.device);
            out += ',';
            appendField(out, tr.name);
            out += ',';
            if (launcher[i] != 0xffffffffu)
                appendField(out, t.tracks[launcher[i]].name);
        } else {
            out += ",,";
            appendField(out, tr.name);
        }
        out += ',';
        out += toString(t.spans.kind[i]);
        out += ',';
        appendField(out, t.spanName(uint32_t(i)));
        out += ',';
        appendInt(out, t.spans.start[i]);
        out += ',';
        appendInt(out, t.spans.end[i]);
        out += ',';
        appendInt(out, t.spans.bytesOf(i));
        out += "\r\n";
    }
    return out;
}

Result<Trace> parseCsvTrace(std::string_view text, const std::string& file)
{
    CsvReader reader(text, file);
    auto header = reader.next();
    if (!header)
        return header.error();
    std::string joined;
    for (size_t i = 0; i < header->size(); ++i)
        joined += (i ? "," : "") + (*header)[i];
    if (joined != kCsvHeader)
        return Error{file, "row 1", "not a StreamScope CSV: the header must be " + std::string(kCsvHeader)};

    Trace t;
    t.info.source = TraceSource::Imported;
    t.info.backend = "csv";
    std::map<std::pair<int, std::string>, uint32_t> streams;
    std::map<std::string, uint32_t> threads;
    std::set<int> devices;
    while (!reader.atEnd()) {
        auto fields = reader.next();
        if (!fields)
            return fields.error();
        const std::string row = "row " + std::to_string(reader.row());
        auto& f = *fields;
        if (f.size() == 1 && f[0].empty())
            continue; // an empty line
        if (f.size() != 8)
            return Error{file, row,
                         "expected 8 fields (" + std::string(kCsvHeader) + "), found " + std::to_string(f.size())};
        const auto kind = spanKindFromString(f[3]);
        if (!kind)
            return Error{file, row + ", kind", "unknown span kind \"" + f[3] + "\""};
        const auto start = parseInt(f[5]);
        if (!start)
            return Error{file, row + ", start_ns", "must be an integer (nanoseconds), not \"" + f[5] + "\""};
        const auto end = parseInt(f[6]);
        if (!end)
            return Error{file, row + ", end_ns", "must be an integer (nanoseconds), not \"" + f[6] + "\""};
        if (*end < *start)
            return Error{file, row + ", end_ns", "end before start (" + f[6] + " < " + f[5] + ")"};
        const auto bytes = f[7].empty() ? std::optional<int64_t>(0) : parseInt(f[7]);
        if (!bytes)
            return Error{file, row + ", bytes", "must be an integer, not \"" + f[7] + "\""};
        if (*bytes < 0)
            return Error{file, row + ", bytes", "must not be negative, got " + f[7]};
        uint32_t track;
        if (!f[0].empty() || !f[1].empty()) {
            const auto device = f[0].empty() ? std::optional<int64_t>(-1) : parseInt(f[0]);
            if (!device || *device < -1 || *device > (1 << 20))
                return Error{file, row + ", device", "must be a device index, not \"" + f[0] + "\""};
            const auto key = std::make_pair(int(*device), f[1]);
            auto it = streams.find(key);
            if (it == streams.end()) {
                if (t.tracks.size() >= kMaxImportedTracks)
                    return Error{file, row + ", stream", tooManyTracksMessage()};
                if (*device >= 0 && devices.insert(int(*device)).second && devices.size() > kMaxImportedDevices)
                    return Error{file, row + ", device", tooManyDevicesMessage()};
                Track tr;
                tr.kind = TrackKind::Stream;
                tr.name = f[1];
                tr.device = int(*device);
                it = streams.emplace(key, t.addTrack(std::move(tr))).first;
            }
            track = it->second;
        } else {
            auto it = threads.find(f[2]);
            if (it == threads.end()) {
                if (t.tracks.size() >= kMaxImportedTracks)
                    return Error{file, row + ", thread", tooManyTracksMessage()};
                Track tr;
                tr.kind = TrackKind::HostThread;
                tr.name = f[2];
                it = threads.emplace(f[2], t.addTrack(std::move(tr))).first;
            }
            track = it->second;
        }
        SpanInit s;
        s.track = track;
        s.kind = *kind;
        s.name = f[4];
        s.start = *start;
        s.end = *end;
        s.bytes = *bytes;
        t.addSpan(s);
    }
    for (int d : devices)
        t.info.devices.push_back({d, {}, {}});
    t.finalize();
    placeRangesOnTracks(t);
    return t;
}

Result<Trace> loadCsvTraceFile(const std::string& path)
{
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    return parseCsvTrace(*text, path);
}

} // namespace streamscope
