// SQLite's virtual-table interface, written once. Every table tlsql serves (the event table and
// the table-valued functions) is a Cursor class; vtab_module<Cursor>() is the sqlite3_module whose
// C callbacks call its members, so each table writes only what is its own: its columns, its plan,
// how a scan starts and what a row holds.
//
// A Cursor derives from VtabCursor<Table> and has
//   static std::string declaration();                  // "CREATE TABLE x(...)" (or the Table's
//                                                      // declaration() member, for columns it finds)
//   static int best_index(Table&, sqlite3_index_info*);
//   int filter(int plan, int argc, sqlite3_value** argv);  // starts a scan; error(...) on failure
//   bool eof() const;  void next();
//   void column(sqlite3_context*, int col);  sqlite3_int64 rowid() const;
// and its Table derives from sqlite3_vtab, built as Table(db, aux, argc, argv) for each connection
// and schema (a constructor that throws refuses the table, with its message). An exception thrown
// by filter, next or column becomes the statement's error too (a saved database's tree is read
// through SQL, which throws), so nothing thrown crosses SQLite's C frames.
#pragma once

#include <sqlite3.h>

#include <exception>
#include <memory>
#include <new>
#include <string>

namespace tlsql {

// A table's error: `msg` as the virtual table's message; returns SQLITE_ERROR.
inline int vtab_error(sqlite3_vtab* v, const std::string& msg) {
  sqlite3_free(v->zErrMsg);
  v->zErrMsg = sqlite3_mprintf("%s", msg.c_str());
  return SQLITE_ERROR;
}

// The usual Table: the connection, for a cursor's queries and caches; `aux` is left to the module.
struct ConnectionTable : sqlite3_vtab {
  ConnectionTable(sqlite3* connection, void*, int, const char* const*) : sqlite3_vtab{}, db(connection) {}
  sqlite3* db;
};

template <class Table>
struct VtabCursor : sqlite3_vtab_cursor {
  using TableType = Table;
  VtabCursor() : sqlite3_vtab_cursor{} {}
  Table& table() const { return *static_cast<Table*>(pVtab); }
  int error(const std::string& msg) const { return vtab_error(pVtab, msg); }
};

namespace vtab_detail {

template <class Cursor>
struct Callbacks {
  using Table = typename Cursor::TableType;
  static int connect(sqlite3* db, void* aux, int argc, const char* const* argv, sqlite3_vtab** out, char** err) {
    try {
      auto table = std::make_unique<Table>(db, aux, argc, argv);
      std::string declaration;
      if constexpr (requires(const Table& t) { t.declaration(); })
        declaration = table->declaration();  // columns of its own (a report's)
      else
        declaration = Cursor::declaration();
      if (int rc = sqlite3_declare_vtab(db, declaration.c_str()); rc != SQLITE_OK) return rc;
      // A table only reads, and reads nothing outside its connection: safe in triggers and views;
      // one that runs SQL of its own on the connection says so (Table::direct_only) and is usable
      // only from SQL the user types (docs/security.md).
      if constexpr (requires { Table::direct_only; })
        sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
      else
        sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
      *out = table.release();
      return SQLITE_OK;
    } catch (const std::bad_alloc&) {
      return SQLITE_NOMEM;
    } catch (const std::exception& e) {
      *err = sqlite3_mprintf("%s", e.what());
      return SQLITE_ERROR;
    }
  }
  static int disconnect(sqlite3_vtab* v) {
    delete static_cast<Table*>(v);
    return SQLITE_OK;
  }
  // The barrier: what `body` throws becomes the table's error (std::bad_alloc SQLite's own).
  template <class Body>
  static int guarded(sqlite3_vtab* v, Body&& body) noexcept {
    try {
      return body();
    } catch (const std::bad_alloc&) {
      return SQLITE_NOMEM;
    } catch (const std::exception& e) {
      return vtab_error(v, e.what());
    } catch (...) {
      return vtab_error(v, "unknown error");
    }
  }
  static int best_index(sqlite3_vtab* v, sqlite3_index_info* info) {
    return guarded(v, [&] { return Cursor::best_index(*static_cast<Table*>(v), info); });
  }
  static int open(sqlite3_vtab* v, sqlite3_vtab_cursor** out) {
    return guarded(v, [&] {
      *out = new Cursor();
      return SQLITE_OK;
    });
  }
  static int close(sqlite3_vtab_cursor* c) {
    delete static_cast<Cursor*>(c);
    return SQLITE_OK;
  }
  static int filter(sqlite3_vtab_cursor* c, int plan, const char*, int argc, sqlite3_value** argv) {
    return guarded(c->pVtab, [&] { return static_cast<Cursor*>(c)->filter(plan, argc, argv); });
  }
  static int next(sqlite3_vtab_cursor* c) {
    return guarded(c->pVtab, [&] {
      static_cast<Cursor*>(c)->next();
      return SQLITE_OK;
    });
  }
  static int eof(sqlite3_vtab_cursor* c) { return static_cast<const Cursor*>(c)->eof(); }
  static int column(sqlite3_vtab_cursor* c, sqlite3_context* ctx, int col) {
    try {
      static_cast<Cursor*>(c)->column(ctx, col);
    } catch (const std::bad_alloc&) {
      sqlite3_result_error_nomem(ctx);
    } catch (const std::exception& e) {
      sqlite3_result_error(ctx, e.what(), -1);
    } catch (...) {
      sqlite3_result_error(ctx, "unknown error", -1);
    }
    return SQLITE_OK;
  }
  static int rowid(sqlite3_vtab_cursor* c, sqlite3_int64* out) {
    *out = static_cast<const Cursor*>(c)->rowid();
    return SQLITE_OK;
  }
  static constexpr sqlite3_module module(bool creatable) {
    sqlite3_module m{};
    m.xCreate = creatable ? connect : nullptr;
    m.xConnect = connect;
    m.xBestIndex = best_index;
    m.xDisconnect = disconnect;
    m.xDestroy = creatable ? disconnect : nullptr;
    m.xOpen = open;
    m.xClose = close;
    m.xFilter = filter;
    m.xNext = next;
    m.xEof = eof;
    m.xColumn = column;
    m.xRowid = rowid;
    return m;
  }
};

}  // namespace vtab_detail

// The module of Cursor's table. Eponymous-only by default (no xCreate: a table-valued function
// used in FROM without CREATE VIRTUAL TABLE); `creatable` also lets CREATE VIRTUAL TABLE make one.
template <class Cursor, bool creatable = false>
const sqlite3_module* vtab_module() {
  static constexpr sqlite3_module m = vtab_detail::Callbacks<Cursor>::module(creatable);
  return &m;
}

}  // namespace tlsql
