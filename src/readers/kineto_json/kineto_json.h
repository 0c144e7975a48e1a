// The Kineto / Chrome trace-event JSON format: a top-level object with a traceEvents array (its
// other keys kept as the trace's metadata) or a bare array of events. trace_scanner cuts the
// array into chunks of whole events; json_reader parses each with simdjson (built per CPU target).
#pragma once

#include "src/readers/reader.h"

namespace tlsql::kineto_json {

// Claims a text whose first byte after a UTF-8 byte order mark and whitespace is '{' or '['.
bool claims(std::string_view head);

extern const ReaderFormat format;

// A parser of chunks of Kineto events (text "[" event "," ... "]"), for readers that translate
// their format into Kineto events in their scan (src/readers/memory_timeline) and for the records
// src/readers/event_records.h parses as text; `path` names the file in messages.
std::unique_ptr<ChunkParser> event_parser(const RowSink& sink, const std::string& path);

}  // namespace tlsql::kineto_json
