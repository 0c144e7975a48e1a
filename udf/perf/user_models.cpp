#include "udf/perf/user_models.h"

#include <fmt/format.h>

#include <atomic>
#include <mutex>

#include "src/sql_names.h"
#include "udf/connection_cache.h"

namespace tlsql {

namespace {

std::mutex g_mutex;
uint64_t g_generation = 0;  // under g_mutex
// Connections with models (or with models published in a transaction not yet seen to end): while
// there are none (the usual case), user_models() answers without the lock (the perf functions ask
// on every call).
std::atomic<int> g_with_models{0};

// A connection's models: a part of its state (connection_cache.h), closed with the connection.
struct Models {
  std::shared_ptr<const UserModels> current;
  ChangesSeen published;  // in a write transaction: read again once it ends (a ROLLBACK fires no trigger)
  bool counted() const { return current || published.in_write(); }  // (in g_with_models)
  // Marks the models as read now, and `models` (given) as what they are, keeping this
  // connection's place in g_with_models. Under g_mutex.
  void mark(sqlite3* db, std::shared_ptr<const UserModels>* models = nullptr) {
    const bool before = counted();
    if (models) current = std::move(*models);
    published.mark(db);
    g_with_models += (counted() ? 1 : 0) - (before ? 1 : 0);
  }
  ~Models() {
    if (counted()) --g_with_models;
  }
};

void publish(sqlite3* db, std::shared_ptr<UserModels> models) {  // under g_mutex
  auto* mine = connection_part<Models>(db, "user_models");
  if (!mine) return;
  if (models->by_name.empty())
    models = nullptr;
  else
    models->generation = ++g_generation;
  std::shared_ptr<const UserModels> now = std::move(models);
  mine->mark(db, &now);
}

// The expressions of one model, each as a column over the op's columns.
std::string columns(const UserModel& m) {
  auto expr = [](const std::string& e, const char* fallback) { return e.empty() ? std::string(fallback) : e; };
  // (each on lines of its own: a formula may end in a -- comment)
  return fmt::format("(\n{}\n), (\n{}\n), (\n{}\n)", expr(m.flops, "NULL"), expr(m.bytes, "NULL"),
                     expr(m.dtype, "input_types ->> '$[0]'"));
}

}  // namespace

// The table's models, each formula compiled once (the error names the op); nullptr and `error` set
// when one does not.
std::shared_ptr<UserModels> read_models(sqlite3* db, std::string& error) {
  auto models = std::make_shared<UserModels>();
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT name, category, flops, bytes, matrix, dtype FROM temp.perf_model_user", -1, &s,
                         nullptr) != SQLITE_OK) {
    error = sqlite3_errmsg(db);
    sqlite3_finalize(s);
    return nullptr;
  }
  auto text = [&](int c) {
    const unsigned char* t = sqlite3_column_text(s, c);
    return t ? std::string((const char*)t) : std::string();
  };
  while (sqlite3_step(s) == SQLITE_ROW) {
    UserModel m{text(1).empty() ? "other" : text(1), text(2), text(3), text(5), sqlite3_column_int(s, 4) != 0};
    models->by_name[text(0)] = std::move(m);
  }
  sqlite3_finalize(s);
  for (const auto& [name, m] : models->by_name) {
    sqlite3_stmt* check = nullptr;
    const std::string sql = fmt::format(
        "SELECT {} FROM (SELECT NULL AS name, NULL AS input_dims, NULL AS input_types, NULL AS input_strides, "
        "NULL AS concrete_inputs, NULL AS args)",
        columns(m));
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &check, nullptr) != SQLITE_OK) {
      error = fmt::format("perf_model_user '{}': {}", name, sqlite3_errmsg(db));
      sqlite3_finalize(check);
      return nullptr;
    }
    sqlite3_finalize(check);
  }
  return models;
}

// tlsql_perf_models_changed(): called by the table's triggers. Reads the table again, checks that
// every formula compiles (the error fails the statement), and publishes it.
void perf_models_changed_fn(sqlite3_context* ctx, int, sqlite3_value**) {
  sqlite3* db = sqlite3_context_db_handle(ctx);
  std::string error;
  std::shared_ptr<UserModels> models = read_models(db, error);
  if (!models) return sqlite3_result_error(ctx, error.c_str(), -1);
  std::lock_guard<std::mutex> lock(g_mutex);
  publish(db, std::move(models));
  sqlite3_result_null(ctx);
}

bool has_perf_model(const UserModels* user, std::string_view name) {
  const UserModel* u = user ? user->find(name) : nullptr;
  return u ? !(u->flops.empty() && u->bytes.empty()) : has_perf_model(name);
}

std::string op_category(const UserModels* user, std::string_view name) {
  const UserModel* u = user ? user->find(name) : nullptr;
  return u ? u->category : op_category(name);
}

void install_user_models(sqlite3* db) {
  sqlite3_exec(db,
               "CREATE TEMP TABLE IF NOT EXISTS perf_model_user(name TEXT PRIMARY KEY, category TEXT, flops TEXT, "
               "bytes TEXT, matrix INTEGER NOT NULL DEFAULT 0, dtype TEXT);"
               "CREATE TEMP TRIGGER IF NOT EXISTS perf_model_user_insert AFTER INSERT ON perf_model_user "
               "BEGIN SELECT tlsql_perf_models_changed(); END;"
               "CREATE TEMP TRIGGER IF NOT EXISTS perf_model_user_update AFTER UPDATE ON perf_model_user "
               "BEGIN SELECT tlsql_perf_models_changed(); END;"
               "CREATE TEMP TRIGGER IF NOT EXISTS perf_model_user_delete AFTER DELETE ON perf_model_user "
               "BEGIN SELECT tlsql_perf_models_changed(); END;",
               nullptr, nullptr, nullptr);
}

std::shared_ptr<const UserModels> user_models(sqlite3* db) {
  if (g_with_models.load(std::memory_order_relaxed) == 0) return nullptr;
  Models* mine = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    mine = connection_part<Models>(db, "user_models");
    if (!mine) return nullptr;
    // Published inside a transaction since ended (a ROLLBACK may have taken the rows back): read
    // again, once. Marked first, so that a call the read makes (a perf function in what the table
    // reads) and the calls after a read that fails (the table dropped) do not read again.
    if (!mine->published.in_write() || sqlite3_txn_state(db, nullptr) == SQLITE_TXN_WRITE) return mine->current;
    mine->mark(db);
  }
  std::string error;                                            // (models that fail now stay as they were published)
  std::shared_ptr<UserModels> models = read_models(db, error);  // (SQL: not under the lock)
  std::lock_guard<std::mutex> lock(g_mutex);
  if (models) publish(db, std::move(models));
  return mine->current;
}

bool apply_user_models(sqlite3* db, const std::string& schema, const UserModels& models,
                       const std::function<void(int64_t, OpPerf)>& found, std::string& error) {
  for (const auto& [name, m] : models.by_name) {
    // One statement per model: SQLite finds the op's rows (by name) and evaluates the formulas.
    sqlite3_stmt* s = nullptr;
    const std::string sql = fmt::format(
        "SELECT uid, {} FROM (SELECT uid, name, input_dims, input_types, input_strides, concrete_inputs, args "
        "FROM {}.event WHERE kind = 'cpu_op' AND name = ?1)",
        columns(m), schema_sql(db, schema));
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      error = fmt::format("perf_model_user '{}': {}", name, sqlite3_errmsg(db));
      sqlite3_finalize(s);
      return false;
    }
    sqlite3_bind_text(s, 1, name.data(), (int)name.size(), SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      OpPerf p;
      auto num = [&](int c) {
        return sqlite3_column_type(s, c) == SQLITE_NULL ? std::nullopt
                                                        : std::optional<double>(sqlite3_column_double(s, c));
      };
      p.flops = num(1), p.bytes = num(2);
      const unsigned char* dt = sqlite3_column_text(s, 3);
      p.dtype = dt ? (const char*)dt : "";
      p.matrix = m.matrix;
      found(sqlite3_column_int64(s, 0), std::move(p));
    }
    if (rc != SQLITE_DONE) error = fmt::format("perf_model_user '{}': {}", name, sqlite3_errmsg(db));
    sqlite3_finalize(s);
    if (!error.empty()) return false;
  }
  return true;
}

}  // namespace tlsql
