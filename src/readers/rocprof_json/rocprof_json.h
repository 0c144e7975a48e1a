// rocprofv3's JSON result (`rocprofv3 --output-format json`: one top-level "rocprofiler-sdk-tool"
// array). The document holds its names apart from the records that use them (kernel_symbols, the
// strings tables), so the scan reads it whole, resolves every record and writes each one as a
// Kineto event; the Kineto parser (src/readers/kineto_json) then parses those chunks on both
// threads. Times stay exact: rocprofv3's integer ns are written as decimal µs with three digits,
// which the Kineto parser turns back into the same ns. docs/formats.md says what maps to what.
#pragma once

#include "src/readers/reader.h"

namespace tlsql::rocprof_json {

// Claims a JSON object whose first key is "rocprofiler-sdk-tool".
bool claims(std::string_view head);

extern const ReaderFormat format;

}  // namespace tlsql::rocprof_json
