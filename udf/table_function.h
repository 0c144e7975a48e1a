// A table-valued function written once: its columns and hidden arguments are one list each, from
// which the CREATE TABLE declaration, the registry's argument list ("(uid [, schema])"), the
// plan (xBestIndex) and the argument messages are made; the function only produces its rows.
//
//   struct Children {                                   // children(uid [, schema])
//     struct Row { int64_t uid; };
//     static constexpr TableArgument arguments[] = {{"arg_uid", "uid", true}, {"arg_schema", "schema"}};
//     static auto columns() {
//       return std::to_array<TableColumn<Children, Row>>({
//           {"uid", "INTEGER", [](sqlite3_context* c, Children&, const Row& r) { result(c, r.uid); }},
//       });
//     }
//     std::vector<Row> rows(const TableCall& call);     // throws FunctionError for a mistake
//   };
//   ... table_function<Children>("children", "table: the direct children of uid")  // the registry row
//
// The Impl object lives as long as the cursor (one scan), so rows may point into what rows()
// kept in it (a cached tree, a diff) and a column may be computed only when read. Optional:
// `static constexpr double cost = ..., estimated_rows = ...;` for the plan with every required
// argument given; `static constexpr bool direct_only = true;` for a function that must not run
// from a view or trigger in a file (without one the plan costs 1e12, and the scan says which is missing).
// Errors: what rows() throws becomes the statement's error as `fn(args): message` (a message that
// already names the function is kept as it is), as for scalar functions (sql_function.h).
#pragma once

#include <sqlite3.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "src/sqlite_vtab.h"
#include "udf/registry.h"
#include "udf/sql_function.h"

namespace tlsql {

// A hidden argument: its column name, the name messages and the argument list use, and whether
// the function needs it.
struct TableArgument {
  const char* column;
  const char* name;
  bool required = false;
};

template <class Impl, class Row>
struct TableColumn {
  using RowType = Row;
  const char* name;
  const char* type;  // the declared type; "" for none
  void (*get)(sqlite3_context*, Impl&, const Row&);
  // Hidden: out of SELECT *, declared after the arguments (the list's hidden columns come last).
  bool hidden = false;
};

// What a scan of the function was called with.
struct TableCall {
  sqlite3* db;
  const char* name;  // the function's
  void* data;        // the registry row's user_data
  std::span<const TableArgument> arguments;
  sqlite3_value* given[8] = {};  // per argument, nullptr when not given
  sqlite3_value* arg(size_t k) const { return k < 8 ? given[k] : nullptr; }
  // A slot the cursor keeps from one call to the next of the statement's run (a lateral join calls
  // once per outer row): what a call worked out that holds for the run (kept_for_run).
  std::shared_ptr<void>* run = nullptr;
};

// Results of a column, by type: an empty optional is NULL.
inline void result(sqlite3_context* c, int64_t v) { sqlite3_result_int64(c, v); }
inline void result(sqlite3_context* c, int v) { sqlite3_result_int64(c, v); }
inline void result(sqlite3_context* c, double v) { sqlite3_result_double(c, v); }
inline void result(sqlite3_context* c, std::string_view v) {
  sqlite3_result_text(c, v.data(), (int)v.size(), SQLITE_TRANSIENT);
}
inline void result(sqlite3_context* c, const char* v) { v ? result(c, std::string_view(v)) : sqlite3_result_null(c); }
inline void result(sqlite3_context* c, const std::string& v) { result(c, std::string_view(v)); }
template <class T>
void result(sqlite3_context* c, const std::optional<T>& v) {
  v ? result(c, *v) : sqlite3_result_null(c);
}

// A column that is a member of the row: {"uid", "INTEGER", field<&Row::uid>}.
template <auto member>
void field(sqlite3_context* c, auto&, const auto& row) {
  result(c, row.*member);
}

// What the registry hands the module as its client data: the function's name and user data.
struct TableInfo {
  const char* name;
  void* data;
};

// Rows 0 .. n-1 as a container, for a function whose rows are positions in what it keeps.
struct Positions {
  size_t n = 0;
  size_t size() const { return n; }
  size_t operator[](size_t i) const { return i; }
};

namespace table_detail {

struct Table : sqlite3_vtab {
  Table(sqlite3* connection, void* aux, int, const char* const*)
      : sqlite3_vtab{}, db(connection), info(static_cast<const TableInfo*>(aux)) {}
  sqlite3* db;
  const TableInfo* info;
};
// The table of a function that runs SQL of its own or is costly: usable only from SQL the user
// types, never from a view or trigger in a file (src/sqlite_vtab.h, docs/security.md).
struct DirectOnlyTable : Table {
  using Table::Table;
  static constexpr bool direct_only = true;
};

// A registry row's client data, kept for the life of the program: in a container that is never
// destroyed (a connection may outlive static destructors in a host; and a leak checker sees it
// reachable from a global).
const TableInfo* keep_table_info(const char* name, void* data);
// "(uid [, schema])": required arguments as they are, optional ones in brackets.
std::string signature(std::span<const TableArgument> arguments);
// Visible columns, then the arguments, then the hidden columns: (name, type, hidden).
std::string declaration(std::span<const std::tuple<const char*, const char*, bool>> columns,
                        std::span<const TableArgument> arguments);
// Each argument given (an = constraint on its column, from `first` on) goes to xFilter in order,
// idxNum bit k set when argument k is; a plan where an argument's value is not known yet (a table
// joined later) is refused, so that SQLite picks one where it is. A plan without every required
// argument costs 1e12 (the scan then says which is missing).
int best_index(sqlite3_index_info* info, int first, std::span<const TableArgument> arguments, double cost, double rows);
// `fn(args): message` unless the message already names the function.
std::string message(const char* name, std::span<const TableArgument> arguments, std::string_view what);

template <class Impl>
constexpr double cost() {
  if constexpr (requires { Impl::cost; })
    return Impl::cost;
  else
    return 1e3;
}
template <class Impl>
constexpr double estimated_rows() {  // (0: SQLite's default)
  if constexpr (requires { Impl::estimated_rows; })
    return Impl::estimated_rows;
  else
    return 0;
}
template <class Impl>
constexpr const char* ordered_by() {
  if constexpr (requires { Impl::ordered_by; })
    return Impl::ordered_by;
  else
    return nullptr;
}

template <class Impl>
using TableOf = std::conditional_t < requires {
  Impl::direct_only;
}
, DirectOnlyTable, Table > ;

template <class Impl>
struct Cursor : VtabCursor<TableOf<Impl>> {
  using VtabCursor<TableOf<Impl>>::table;
  using VtabCursor<TableOf<Impl>>::error;
  using Row = typename std::decay_t<decltype(Impl::columns()[0])>::RowType;
  static const auto& columns() {
    static const auto c = Impl::columns();
    return c;
  }
  static constexpr int kColumns = (int)std::tuple_size_v<std::decay_t<decltype(Impl::columns())>>;
  static constexpr int kArguments = (int)std::size(Impl::arguments);
  static int visible() {  // (the hidden ones come after)
    static const int n = [] {
      int v = 0;
      while (v < kColumns && !columns()[(size_t)v].hidden) ++v;
      return v;
    }();
    return n;
  }

  // What rows() returns: a vector, or any sized container indexed by position (a span of what the
  // function keeps, positions counted without storing them).
  using Rows = std::decay_t<decltype(std::declval<Impl&>().rows(std::declval<const TableCall&>()))>;
  std::optional<Impl> impl;
  Rows rows{};
  size_t at = 0;
  std::shared_ptr<void> run;  // TableCall::run

  static std::string declaration() {
    std::vector<std::tuple<const char*, const char*, bool>> cols;
    for (const auto& c : columns()) cols.emplace_back(c.name, c.type, c.hidden);
    return table_detail::declaration(cols, Impl::arguments);
  }
  static int best_index(TableOf<Impl>&, sqlite3_index_info* info) {
    // Rows that come in the order of one column: ORDER BY it needs no sort.
    if (const char* by = ordered_by<Impl>(); by && info->nOrderBy == 1 && !info->aOrderBy[0].desc &&
                                             info->aOrderBy[0].iColumn >= 0 && info->aOrderBy[0].iColumn < visible() &&
                                             std::string_view(columns()[(size_t)info->aOrderBy[0].iColumn].name) == by)
      info->orderByConsumed = 1;
    return table_detail::best_index(info, visible(), Impl::arguments, cost<Impl>(), estimated_rows<Impl>());
  }
  int filter(int plan, int, sqlite3_value** argv) {
    const Table& t = table();
    rows = Rows{};
    at = 0;
    TableCall call{t.db, t.info->name, t.info->data, Impl::arguments};
    call.run = &run;
    int given = 0;
    for (size_t k = 0; k < std::size(Impl::arguments) && k < 8; ++k) {
      if (plan & (1 << k)) call.given[k] = argv[given++];
      if (Impl::arguments[k].required && !call.given[k])
        return error(message(call.name, Impl::arguments,
                             std::string("the ") + Impl::arguments[k].name + " argument is missing"));
    }
    try {
      impl.emplace();
      rows = impl->rows(call);
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      return error(message(call.name, Impl::arguments, e.what()));
    }
    return SQLITE_OK;
  }
  bool eof() const { return at >= rows.size(); }
  void next() { ++at; }
  void column(sqlite3_context* ctx, int col) {
    if (col < visible()) return columns()[(size_t)col].get(ctx, *impl, rows[at]);
    if (col < visible() + kArguments) return sqlite3_result_null(ctx);  // (an argument's column)
    columns()[(size_t)(col - kArguments)].get(ctx, *impl, rows[at]);
  }
  sqlite3_int64 rowid() const { return (sqlite3_int64)at; }
};

}  // namespace table_detail

// The module of table function Impl; its client data is a TableInfo.
template <class Impl>
const sqlite3_module* table_module() {
  return vtab_module<table_detail::Cursor<Impl>>();
}

// The registry row of table function Impl named `name`.
template <class Impl>
SqlFunction table_function(const char* name, const char* help, void* data = nullptr) {
  static_assert(std::size(Impl::arguments) <= 8, "at most 8 arguments");
  const TableInfo* info = table_detail::keep_table_info(name, data);
  static const std::string args = table_detail::signature(Impl::arguments);
  SqlFunction f{name, args.c_str(), help, SqlFunction::table};
  f.module = table_module<Impl>();
  f.user_data = const_cast<TableInfo*>(info);
  return f;
}

}  // namespace tlsql
