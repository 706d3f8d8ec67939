// The binary native trace format (docs/TRACE.md "Binary format"): the trace's columns as they are in memory, each
// a block of the file, optionally compressed with zstd, behind a header and a block directory; the run info,
// scenario, settings and tracks as an embedded native JSON trace without spans. Written for files named *.sstrace
// and by `convert --to streamscope-binary`; read wherever a trace is opened (the format is recognized by its magic
// number). It opens at the speed of the disk where the JSON format parses at about 65 MB/s (docs/PERFORMANCE.md).
#pragma once

#include "result.h"
#include "trace.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace streamscope {

// The first 8 bytes of every binary trace: a non-ASCII byte first, so that no text format is mistaken for it.
inline constexpr std::string_view kBinaryTraceMagic{"\x89SSTRACE", 8};
// The version written; versions 1 (times whole, every span's details), 2 (the columns as TimeColumn and SpanColumns
// hold them) and 3 (version 2 whose columns of multi-byte entries may be stored shuffled: Codec::ZstdShuffled) are
// read.
inline constexpr uint32_t kBinaryTraceVersion = 3;
inline constexpr uint32_t kBinaryTraceOldestVersion = 1;
// The file name ending that selects the binary format where a trace is saved without a format named.
inline constexpr std::string_view kBinaryTraceExtension = ".sstrace";

// From this many spans on, the window's Save Trace As proposes the binary format: such a trace's JSON takes seconds
// to parse (docs/PERFORMANCE.md), its binary file a fraction of a second.
inline constexpr size_t kBinaryTraceSuggestedSpans = 1'000'000;

struct BinaryTraceOptions {
    // Compress each column with zstd (level 1: about as fast as the disk); ignored where zstd is not built in.
    bool compress = true;
    // Compressed columns of multi-byte entries stored shuffled (version 3); false: as version 2, which StreamScope
    // builds before version 3 read.
    bool shuffle = true;
};

// Whether this build reads and writes zstd-compressed blocks (libzstd was found). Without it, files are written
// uncompressed and a compressed file is refused with a message that says so.
bool binaryTraceCompressionSupported();
bool looksLikeBinaryTrace(std::string_view prefix);
// Whether `path` names a binary trace by its ending (*.sstrace, any case).
bool hasBinaryTraceExtension(std::string_view path);

std::string traceToBinary(const Trace& trace, const BinaryTraceOptions& options = {});
// The whole file in memory (the fuzz harness, gzip-compressed files); `file` names it in errors.
Result<Trace> parseBinaryTrace(std::string_view bytes, const std::string& file);
// Memory-maps the file where it can (else reads it), reporting progress per block (import_progress.h).
Result<Trace> loadBinaryTraceFile(const std::string& path);

} // namespace streamscope
