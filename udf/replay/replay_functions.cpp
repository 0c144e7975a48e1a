#include "udf/replay/replay_functions.h"

#include <fmt/format.h>

#include "src/terminal.h"
#include "udf/registry.h"
#include "udf/replay/replay_client.h"
#include "udf/tree/tree_access.h"

namespace tlsql {

using nlohmann::json;

std::optional<json> replay_ir_of(sqlite3* db, const std::string& schema, int64_t uid, std::string& why) {
  // The event's name, kind and args, through the schema's EventSource (its caller resolved the
  // schema). A step's error (an interrupt) is the caller's.
  std::unique_ptr<EventSource> own;
  EventSource* events = tree_for(db, schema, own);
  std::unique_ptr<Statement> st;
  try {
    if (events->ok()) st = events->statement("SELECT name, kind, args FROM {s}.event WHERE uid = ?");
  } catch (const SqlError&) {
  }
  if (!st) {
    why = fmt::format("no tlsql event table in schema '{}'", schema);
    return std::nullopt;
  }
  sqlite3_bind_int64(st->get(), 1, uid);
  std::string name, kind, args;
  const bool found = st->step();
  if (found) {
    auto text = [&](int i) {
      return sqlite3_column_text(st->get(), i) ? (const char*)sqlite3_column_text(st->get(), i) : "";
    };
    name = text(0), kind = text(1), args = text(2);
  }
  st.reset();  // no statement stays open while the worker runs
  if (!found) {
    why = fmt::format("no event has uid {}", uid);
    return std::nullopt;
  }
  if (kind != "cpu_op") {
    why = fmt::format("event {} is a {}, not a cpu_op", uid, kind);
    return std::nullopt;
  }
  json a = json::parse(args.empty() ? "{}" : args, nullptr, false);
  json resp =
      ReplayClient::instance().request({{"op", "ir"}, {"name", name}, {"args", a.is_object() ? a : json::object()}});
  if (!resp.value("ok", false)) {
    why = resp.value("error", std::string("unknown error"));
    return std::nullopt;
  }
  return resp["ir"];
}

namespace {

// NULL, and the reason on stderr (the row goes on; SQL has no warnings).
void null_because(sqlite3_context* ctx, const char* fn, int64_t uid, const std::string& why) {
  say(stderr, fmt::format("{}({}): {}\n", fn, uid, why));  // (the worker's reason quotes op names)
  sqlite3_result_null(ctx);
}

void replay_ir_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  int64_t uid;
  if (!uid_arg(ctx, argv[0], "replay_ir", uid)) return;
  std::string why, schema = schema_arg(sqlite3_context_db_handle(ctx), argc > 1 ? argv[1] : nullptr);
  auto ir = replay_ir_of(sqlite3_context_db_handle(ctx), schema, uid, why);
  if (!ir && why.rfind("no tlsql event table", 0) == 0)
    return sqlite3_result_error(ctx, ("replay_ir: " + why).c_str(), -1);
  if (!ir) return null_because(ctx, "replay_ir", uid, why);
  std::string text = ir->dump();
  sqlite3_result_text(ctx, text.c_str(), -1, SQLITE_TRANSIENT);
}

void replay_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  int64_t uid;
  if (!uid_arg(ctx, argv[0], "replay", uid)) return;
  std::string device = argc > 1 && sqlite3_value_text(argv[1]) ? (const char*)sqlite3_value_text(argv[1]) : "";
  int iters = argc > 2 ? sqlite3_value_int(argv[2]) : 100, warmup = argc > 3 ? sqlite3_value_int(argv[3]) : 10;
  if (device != "" && device != "cuda" && device != "cpu")
    return sqlite3_result_error(ctx, "replay(uid, device, iters): device must be 'cuda' or 'cpu'", -1);
  if (iters < 1 || warmup < 0)
    return sqlite3_result_error(ctx, "replay(uid, device, iters, warmup): iters >= 1 and warmup >= 0", -1);
  std::string why;
  auto ir = replay_ir_of(sqlite3_context_db_handle(ctx), "main", uid, why);
  if (!ir && why.rfind("no tlsql event table", 0) == 0)
    return sqlite3_result_error(ctx, ("replay: " + why).c_str(), -1);
  if (!ir) return null_because(ctx, "replay", uid, why);
  json r = ReplayClient::instance().request(
      {{"op", "run"}, {"ir", *ir}, {"device", device}, {"warmup", warmup}, {"iters", iters}});
  if (!r.value("ok", false)) return null_because(ctx, "replay", uid, r.value("error", std::string("unknown error")));
  sqlite3_result_double(ctx, r["mean_us"].get<double>());
}

}  // namespace

std::vector<SqlFunction> replay_functions() {
  SqlFunction ir{"replay_ir", "(uid [, schema])",
                 "the op's replay IR (TraceLens EventReplay JSON); NULL + reason if none"};
  ir.max_args = 2, ir.flags = SQLITE_UTF8, ir.fn = replay_ir_fn;
  SqlFunction run{"replay", "(uid [, device [, iters [, warmup]]])",
                  "mean µs of the op re-run alone through LibTorch (device 'cuda' / 'cpu'; 100 iters, 10 warm-up)"};
  run.max_args = 4, run.flags = SQLITE_UTF8, run.fn = replay_fn;
  return {ir, run};
}
TLSQL_FUNCTIONS(replay_functions);

}  // namespace tlsql
