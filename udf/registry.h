// The one list of the SQL functions tlsql adds, made by the functions themselves (TLSQL_FUNCTIONS). Registration on a
// connection, the shell's .help and the queryable table tlsql_functions(name, arguments, kind, help) all read it, so a
// function cannot exist without its help line or be documented without existing.
#pragma once

#include <sqlite3.h>

#include <string>
#include <vector>

#include "src/sqlite_vtab.h"

namespace tlsql {

struct SqlFunction {
  enum Kind { scalar, aggregate, table };
  const char* name;
  const char* arguments;  // as the user writes them: "(uid [, schema])"
  const char* help;       // one line
  Kind kind = scalar;
  int min_args = 1, max_args = 1;                                // scalar and aggregate
  int flags = SQLITE_UTF8 | SQLITE_INNOCUOUS;                    // without INNOCUOUS it is registered DIRECTONLY
  void (*fn)(sqlite3_context*, int, sqlite3_value**) = nullptr;  // scalar; aggregate: step
  void (*final)(sqlite3_context*) = nullptr;                     // aggregate
  const sqlite3_module* module = nullptr;                        // table (eponymous virtual table)
  void* user_data = nullptr;  // a callback reads it with function_data(ctx) (sql_function.h)
};

// Functions register themselves: a family file (udf/FAMILY/NAME.cpp) ends with
//
//   TLSQL_FUNCTIONS(my_functions);     // std::vector<SqlFunction> my_functions() { return {...}; }
//
// and nothing else lists it: the build compiles every .cpp of a family folder (CMakeLists.txt,
// TLSQL_UDF_FAMILIES) into libtlsql.so, whose static initializers run before main() or, for the
// extension, before dlopen returns. The registrar only records the list function; the lists are
// built on first use (sql_functions()), never during static initialization, so no file depends on
// another's initializers having run. .help lists families in TLSQL_UDF_FAMILIES order, then files
// by name, then each list in its own order.
//   TLSQL_FUNCTIONS(my_functions, my_setup);  // also runs my_setup(db) on each connection after
//                                             // every function is registered (perf/user_models.cpp)
struct FunctionRegistration {
  std::string file;  // "stats/trace_kinds.cpp": the family folder and the file that registered
  std::vector<SqlFunction> (*list)() = nullptr;
  void (*setup)(sqlite3*) = nullptr;
};
struct RegisterFunctions {
  RegisterFunctions(const char* family, const char* file, std::vector<SqlFunction> (*list)(),
                    void (*setup)(sqlite3*) = nullptr) noexcept;
};
// Every registration, in .help order.
const std::vector<FunctionRegistration>& function_registrations();

#ifdef TLSQL_UDF_FAMILY  // defined by the build for the files of udf/FAMILY/ only
#define TLSQL_FUNCTIONS(...) \
  static const ::tlsql::RegisterFunctions tlsql_function_registrar_ { TLSQL_UDF_FAMILY, __FILE__, __VA_ARGS__ }
#endif

const std::vector<SqlFunction>& sql_functions();

// xBestIndex of a table-valued function whose arguments are its hidden columns [first, first +
// count): each argument given (an = constraint) goes to xFilter, in column order, and idxNum has
// bit k set when argument k was given. A plan where an argument's value is not known yet (it comes
// from a table joined later) is refused, so that SQLite picks one where it is; without the first
// argument the plan costs more (xFilter then reports the mistake).
int hidden_args_best_index(sqlite3_index_info* info, int first, int count);

// Registers every function, and the tlsql_functions table, on `db`.
void register_sql_functions(sqlite3* db);

// Registers one function on `db`, its callbacks behind the exception barrier (sql_function.h).
// `f` must outlive the connection (it is the callbacks' user data).
void register_sql_function(sqlite3* db, const SqlFunction& f);

}  // namespace tlsql
