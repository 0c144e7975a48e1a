// The kit every scalar and aggregate function shares: its arguments read one way, its errors in
// one format (`fn(args): message`), and the exception barrier. register_sql_functions (registry.h)
// registers each function's callbacks behind the barrier, so a function may simply throw: a
// FunctionError (the message after `fn(args): `), a SqlError or any std::exception becomes the
// statement's error with that prefix, std::bad_alloc SQLite's "out of memory"; nothing thrown
// crosses SQLite's C frames (the tlsql shell, Python's sqlite3, the sqlite3 shell all call
// through them). Table-valued functions have the same barrier in src/sqlite_vtab.h.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tlsql {

struct SqlFunction;

// A function's mistake or failure, said after the `fn(args): ` prefix the barrier writes.
struct FunctionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The SqlFunction a callback runs for (set by register_sql_functions) and its user_data.
const SqlFunction& called_function(sqlite3_context* ctx);
void* function_data(sqlite3_context* ctx);

// `fn(args): message`, where args is the function's argument list as the registry writes it
// ("(uid [, schema])"). A message already naming the function (it starts with "fn(" or "fn:") is
// kept as it is.
std::string function_message(const SqlFunction& f, std::string_view message);
std::string function_message(std::string_view name, std::string_view arguments, std::string_view message);

// The barrier around one callback: calls `body`, and turns what it throws into the result's error.
template <class Body>
void function_barrier(sqlite3_context* ctx, const SqlFunction& f, Body&& body) noexcept {
  try {
    body();
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(ctx);
  } catch (const std::exception& e) {
    const std::string m = function_message(f, e.what());
    sqlite3_result_error(ctx, m.c_str(), (int)m.size());
  } catch (...) {
    const std::string m = function_message(f, "unknown error");
    sqlite3_result_error(ctx, m.c_str(), (int)m.size());
  }
}

// Argument readers: a value of the wrong type throws FunctionError naming the argument (`what`).
// NULL is std::nullopt for the optional forms.
std::optional<int64_t> optional_int_arg(sqlite3_value* v, std::string_view what);
int64_t int_arg(sqlite3_value* v, std::string_view what);
std::optional<double> optional_number_arg(sqlite3_value* v, std::string_view what);
std::optional<std::string> optional_text_arg(sqlite3_value* v);
std::string text_arg(sqlite3_value* v, std::string_view what);

}  // namespace tlsql
