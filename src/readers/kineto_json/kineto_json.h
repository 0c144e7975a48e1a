// The Kineto / Chrome trace-event JSON format: a top-level object with a traceEvents array (its
// other keys kept as the trace's metadata) or a bare array of events. trace_scanner cuts the
// array into chunks of whole events; json_reader parses each with simdjson (built per CPU target).
#pragma once

#include "src/readers/reader.h"

namespace tlsql::kineto_json {

// Claims a text whose first byte after a UTF-8 byte order mark and whitespace is '{' or '['.
bool claims(std::string_view head);

extern const ReaderFormat format;

}  // namespace tlsql::kineto_json
