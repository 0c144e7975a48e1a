// Nsight Systems' SQLite export (`nsys export --type sqlite`). The first format read from a
// database: its scan opens its own read-only, immutable connection (open_foreign_database), pulls
// the rows of the tables it knows with SQL and writes each as a Kineto event, which the Kineto
// parser (src/readers/kineto_json) reads on both threads, as rocprof_json does. Tables and columns
// are found by name, so an export of another schema version loads what its known tables give
// (health says what was not read). docs/formats.md says what maps to what.
#pragma once

#include "src/readers/reader.h"

namespace tlsql::nsys_sqlite {

// A database with a CUPTI_ACTIVITY_KIND_KERNEL table (every export of a run that traced CUDA).
bool claims_database(const std::set<std::string>& tables);

extern const ReaderFormat format;

}  // namespace tlsql::nsys_sqlite
