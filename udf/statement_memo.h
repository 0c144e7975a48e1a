// A scalar function's memo for one run of one statement: what its calls work out from arguments
// that do not change from row to row (the schema an argument names, the connection's cached
// objects for it), worked out on the statement's first call and read by the calls after it.
//
// It is SQLite's auxiliary data under a negative index (sqlite3_set_auxdata(ctx, code, ...)),
// which every function of the statement shares under that code and SQLite frees when the statement
// is reset or finalized. sqlite3.h does not document negative indexes; SQLite's source does
// ("Undocumented behavior" in vdbeapi.c; its own JSON functions keep their parse cache that way
// since 3.45), and tests/unit/statement_memo_test.cpp checks it on the SQLite tlsql is built with.
// Where SQLite keeps nothing (a SQLite without it, no memory, a function called while a query is
// planned), statement_memo returns nullptr and the caller works its answer out per call, as it
// did before: slower, never different.
//
// What a memo keeps may not hold for the whole run: between two steps of a statement its host may
// run others on the connection (DETACH, ATTACH, a reload with tlsql_load, registering the functions
// again) and another connection may write a saved database. So a memo of what a schema argument
// names keeps what the schema held then (schema_identity) and checks it on every call, keeps the
// connection's objects shared (alive even where the connection's cache lets them go), and works a
// db:TOKEN out per call (an ATTACH may make it name another schema). Between runs SQLite frees it.
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>
#include <vector>

namespace tlsql {

// One code per kind of memo (negative: SQLite's indexes of arguments are 0 and up).
enum StatementMemoCode : int {
  kSchemaTreeMemo = -5101,  // tree_access.h: tree_arg
  kGpuClassesMemo = -5102,  // gpu_class_schema.h: gpu_classes_arg
  kPerfRowMemo = -5103,     // perf_table.cpp: last_row_table's checked answers
};

// The statement's memo of type T under `code`, made empty on the first call; nullptr where SQLite
// keeps none.
template <class T>
T* statement_memo(sqlite3_context* ctx, StatementMemoCode code) {
  if (auto* memo = static_cast<T*>(sqlite3_get_auxdata(ctx, code))) return memo;
  // SQLite may free it at once (it then keeps nothing): read back what it kept.
  sqlite3_set_auxdata(ctx, code, new T(), [](void* p) { delete static_cast<T*>(p); });
  return static_cast<T*>(sqlite3_get_auxdata(ctx, code));
}

// Values kept per text of one argument (SQL NULL and an absent argument are one key of their
// own): a function's schema argument, whose text is most often the same on every row. Holds at
// most 16 keys (a statement passing a column of schema names reads the rest per call).
template <class Value>
class ArgMemo {
 public:
  // The value kept for `arg`'s text (nullptr: the argument is absent), else nullptr.
  Value* find(sqlite3_value* arg) {
    const Key k = key(arg);
    for (auto& e : entries_)
      if (e.null == k.null && e.text == k.text) return &e.value;
    return nullptr;
  }
  // Keeps `value` for `arg`'s text (replacing what was kept for it); nullptr when 16 are kept.
  Value* put(sqlite3_value* arg, Value value) {
    if (Value* kept = find(arg)) return &(*kept = std::move(value));
    if (entries_.size() >= 16) return nullptr;
    const Key k = key(arg);
    entries_.push_back({k.null, std::string(k.text), std::move(value)});
    return &entries_.back().value;
  }

 private:
  struct Key {
    bool null;
    std::string_view text;
  };
  static Key key(sqlite3_value* arg) {
    const unsigned char* t = arg ? sqlite3_value_text(arg) : nullptr;
    if (!t) return {true, {}};
    return {false, std::string_view(reinterpret_cast<const char*>(t), (size_t)sqlite3_value_bytes(arg))};
  }
  struct Entry {
    bool null;
    std::string text;
    Value value;
  };
  std::vector<Entry> entries_;
};

}  // namespace tlsql
