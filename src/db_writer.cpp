#include "db_writer.h"

#include "kind.h"
#include "sql_assets.h"
#include "sqlite_util.h"

namespace tlsql {

void exec_sql(sqlite3* db, std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  if (sqlite3_exec(db, s.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    throw SqlError(msg);
  }
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v3(db, sql.data(), (int)sql.size(), SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) != SQLITE_OK)
    throw SqlError(sqlite3_errmsg(db));
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw SqlError(sqlite3_errmsg(db_));
}

void create_schema(sqlite3* db) {
  exec_sql(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY;");
  exec_sql(db, sql_asset("schema"));
}

void next_ids(sqlite3* db, int64_t& trace_id, int64_t& uid_base) {
  Statement s(db, "SELECT (SELECT coalesce(max(id) + 1, 0) FROM trace), (SELECT coalesce(max(uid) + 1, 0) FROM event)");
  s.step();
  trace_id = sqlite3_column_int64(s.get(), 0);
  uid_base = sqlite3_column_int64(s.get(), 1);
}

namespace {

void bind_int(sqlite3_stmt* s, int col, int64_t v) {
  if (v == kNull) sqlite3_bind_null(s, col);
  else sqlite3_bind_int64(s, col, v);
}
void bind_text(sqlite3_stmt* s, int col, std::string_view v, bool present = true) {
  if (!present) sqlite3_bind_null(s, col);
  else sqlite3_bind_text(s, col, v.data(), (int)v.size(), SQLITE_STATIC);
}
void bind_scalar(sqlite3_stmt* s, int col, const Scalar& v) {
  if (v.type == Scalar::integer) sqlite3_bind_int64(s, col, v.i);
  else if (v.type == Scalar::text) bind_text(s, col, v.s);
  else sqlite3_bind_null(s, col);
}

}  // namespace

void write_trace(sqlite3* db, const TraceRecord& rec, const ParsedTrace& trace,
                 const std::vector<LaunchLink>& launches, const Health& health) {
  exec_sql(db, "BEGIN");
  try {
    {
      Statement ins(db, "INSERT INTO event(uid, trace, kind, cat, name, ph, pid, tid, ts, dur, end, parent, depth, step,"
                        " stream, device, correlation, external_id, seq, fwd, flow_id, args)"
                        " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
      sqlite3_stmt* s = ins.get();
      static char phases[256][2];
      for (int c = 0; c < 256; ++c) phases[c][0] = (char)c, phases[c][1] = 0;
      const int64_t base = rec.uid_base;
      for (size_t i = 0; i < trace.events.size(); ++i) {
        const Event& e = trace.events[i];
        sqlite3_bind_int64(s, 1, base + (int64_t)i);
        sqlite3_bind_int64(s, 2, rec.id);
        bind_text(s, 3, kind_name(e.kind));
        bind_text(s, 4, e.cat, e.has_cat);
        bind_text(s, 5, e.name, e.has_name);
        bind_text(s, 6, std::string_view(phases[(unsigned char)e.ph], 1), e.ph != 0);
        bind_scalar(s, 7, e.pid);
        bind_scalar(s, 8, e.tid);
        bind_int(s, 9, e.ts);
        bind_int(s, 10, e.dur);
        bind_int(s, 11, e.end());
        bind_int(s, 12, e.parent >= 0 ? base + e.parent : kNull);
        sqlite3_bind_int(s, 13, e.depth);
        bind_int(s, 14, e.step);
        bind_int(s, 15, e.stream);
        bind_int(s, 16, e.device);
        bind_int(s, 17, e.correlation);
        bind_int(s, 18, e.external_id);
        bind_int(s, 19, e.seq);
        bind_int(s, 20, e.fwd >= 0 ? base + e.fwd : kNull);
        bind_scalar(s, 21, e.flow_id);
        bind_text(s, 22, e.args, e.has_args);
        ins.step();
        ins.reset();
      }
    }
    {
      Statement ins(db, "INSERT INTO launch_link(gpu, runtime, launcher) VALUES(?,?,?)");
      for (const LaunchLink& l : launches) {
        sqlite3_bind_int64(ins.get(), 1, rec.uid_base + l.gpu);
        sqlite3_bind_int64(ins.get(), 2, rec.uid_base + l.runtime);
        sqlite3_bind_int64(ins.get(), 3, rec.uid_base + l.launcher);
        ins.step();
        ins.reset();
      }
    }
    {
      Statement ins(db, "INSERT INTO trace(id, path, uid_base, events, bytes, metadata) VALUES(?,?,?,?,?,?)");
      sqlite3_bind_int64(ins.get(), 1, rec.id);
      bind_text(ins.get(), 2, rec.path);
      sqlite3_bind_int64(ins.get(), 3, rec.uid_base);
      sqlite3_bind_int64(ins.get(), 4, (int64_t)trace.events.size());
      sqlite3_bind_int64(ins.get(), 5, (int64_t)rec.bytes);
      bind_text(ins.get(), 6, trace.metadata, !trace.bare_array);
      ins.step();
    }
    {
      Statement ins(db, "INSERT INTO health(trace, \"check\", count, example_uid, detail) VALUES(?,?,?,?,?)");
      for (const auto& [check, row] : health.rows()) {
        sqlite3_bind_int64(ins.get(), 1, rec.id);
        bind_text(ins.get(), 2, check);
        sqlite3_bind_int64(ins.get(), 3, row.count);
        bind_int(ins.get(), 4, row.example >= 0 ? rec.uid_base + row.example : kNull);
        bind_text(ins.get(), 5, row.detail);
        ins.step();
        ins.reset();
      }
    }
    std::string post = std::string(sql_asset("post_load"));
    // @trace is the only parameter of post_load.sql; substitute it textually (an integer).
    for (size_t p; (p = post.find("@trace")) != std::string::npos;) post.replace(p, 6, std::to_string(rec.id));
    exec_sql(db, post);
    exec_sql(db, "COMMIT");
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

void set_load_ms(sqlite3* db, int64_t trace_id, double ms) {
  Statement s(db, "UPDATE trace SET load_ms = ? WHERE id = ?");
  sqlite3_bind_double(s.get(), 1, ms);
  sqlite3_bind_int64(s.get(), 2, trace_id);
  s.step();
}

void finish_schema(sqlite3* db) {
  exec_sql(db, sql_asset("indexes"));
  exec_sql(db, sql_asset("views"));
  exec_sql(db, "ANALYZE");
}

}  // namespace tlsql
