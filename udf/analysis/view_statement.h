// A statement over one of tlsql's views in a schema, for the analyses that read what a view
// decides (trace_counters.cpp's series, idle_breakdown.cpp's steps) rather than decide it again.
#pragma once

#include <memory>
#include <string_view>

#include "src/sqlite_util.h"
#include "udf/tree/tree_access.h"

namespace tlsql {

// `sql` prepared with `{v}` standing for the schema whose `view` this session reads and `{s}` for
// the events' schema (its tables). Main's views are this build's, except in a saved database
// written by another build: the session then has this build's views in temp, shadowing the file's
// (Session::use_current_views), and they must be read from there, as the reports' unqualified
// names do, never from the file's older (or missing) definition. Both names quoted by
// src/sql_names.h.
std::unique_ptr<Statement> view_statement(EventSource& events, const char* view, std::string_view sql);

}  // namespace tlsql
