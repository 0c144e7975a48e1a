#include "udf/sql_function.h"

#include <fmt/format.h>

#include "udf/registry.h"

namespace tlsql {

const SqlFunction& called_function(sqlite3_context* ctx) {
  return *static_cast<const SqlFunction*>(sqlite3_user_data(ctx));
}

void* function_data(sqlite3_context* ctx) { return called_function(ctx).user_data; }

std::string function_message(std::string_view name, std::string_view arguments, std::string_view message) {
  // (a message that already names the function: "fn(uid): ...", "fn: ...")
  if (message.size() > name.size() && message.substr(0, name.size()) == name &&
      (message[name.size()] == '(' || message[name.size()] == ':'))
    return std::string(message);
  return fmt::format("{}{}: {}", name, arguments, message);
}

std::string function_message(const SqlFunction& f, std::string_view message) {
  return function_message(f.name, f.arguments, message);
}

std::optional<int64_t> optional_int_arg(sqlite3_value* v, std::string_view what) {
  switch (sqlite3_value_numeric_type(v)) {
    case SQLITE_NULL: return std::nullopt;
    case SQLITE_INTEGER: return sqlite3_value_int64(v);
    default: throw FunctionError(fmt::format("{} must be an integer", what));
  }
}

int64_t int_arg(sqlite3_value* v, std::string_view what) {
  if (auto i = optional_int_arg(v, what)) return *i;
  throw FunctionError(fmt::format("{} must be an integer, not NULL", what));
}

std::optional<double> optional_number_arg(sqlite3_value* v, std::string_view what) {
  switch (sqlite3_value_numeric_type(v)) {
    case SQLITE_NULL: return std::nullopt;
    case SQLITE_INTEGER:
    case SQLITE_FLOAT: return sqlite3_value_double(v);
    default: throw FunctionError(fmt::format("{} must be a number", what));
  }
}

std::optional<std::string> optional_text_arg(sqlite3_value* v) {
  const unsigned char* t = sqlite3_value_text(v);
  if (!t) return std::nullopt;
  return std::string((const char*)t, (size_t)sqlite3_value_bytes(v));
}

std::string text_arg(sqlite3_value* v, std::string_view what) {
  if (auto t = optional_text_arg(v)) return std::move(*t);
  throw FunctionError(fmt::format("{} must be text, not NULL", what));
}

}  // namespace tlsql
