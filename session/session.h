// The tlsql library: a session is one SQLite connection with tlsql's SQL surface registered and
// the traces loaded into it (the `tlsql` binary is a thin shell over this).
#pragma once

#include <sqlite3.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "session/report.h"
#include "src/db_writer.h"
#include "src/event_table.h"
#include "src/loader.h"

namespace tlsql {

class Session {
 public:
  // An in-memory database for loading traces, or a saved database opened read-write.
  explicit Session(const std::string& saved_db = "");
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  sqlite3* db() const { return db_; }
  // For a saved database: how many of its views (and tables it lacks a column of) differ from this
  // build's, replaced for this session by temp views of this build's SQL (docs/schema.md, "Saved
  // databases from other builds"); 0 when it matches, or for loaded traces.
  int stale_views() const { return stale_views_; }

  // Loads a trace into `opt.schema` (main, or a schema made by attach_empty). Throws LoadError.
  LoadStats load(const std::string& path, const LoadOptions& opt = {});
  // --capture: reads a capture trace, or a folder of them with TraceLens's execution_details.json
  // (batch size and mode per file); graph replays in the traces loaded into main after it are
  // attributed to the graphs they hold (docs/inference.md). Throws LoadError.
  void add_captures(const std::string& path);
  // Creates the event table, views and indexes of `schema`; call after its last load.
  void finish(const std::string& schema = "main");
  // A file of a directory being loaded into `schema` that was skipped, and why: no trace
  // (NotATrace's message: check file_not_a_trace) or a link trace_files does not follow
  // (folder_link_skipped). finish() writes each as a health row (count 1, trace NULL).
  void skip_file(const std::string& schema, const std::string& check, const std::string& why) {
    skipped_[schema].emplace_back(check, why);
  }
  // `.attach FILE AS NAME`: a saved database, or a trace loaded into a fresh in-memory schema.
  // Throws LoadError / SqlError.
  void attach(const std::string& file, const std::string& name, const LoadOptions& opt = {});
  // The two halves of attaching a trace, for callers that load it themselves (with progress):
  // an empty in-memory schema, and its removal if the load fails.
  void begin_attach(const std::string& name);
  void abandon_attach(const std::string& name);
  // Writes the main schema to `path` as a saved database, atomically. Throws SqlError.
  void save(const std::string& path) const;

  // A second connection that reads what this one's main schema holds, so that read-only reports
  // can run on another thread at the same time (the HTML report): main's tables copied into it
  // (sqlite3_serialize: small, the event table is virtual and its rows stay in the store both
  // read), the same stores; share_perf_tables gives it the perf tables computed here. nullptr
  // where it could answer differently: main is a saved file, the user's perf models are set, or
  // the temp schema holds anything of the user's (a temp view would shadow main's here only).
  // Close it before this session.
  class Twin {
   public:
    explicit Twin(sqlite3* db) : db_(db) {}
    ~Twin();
    Twin(const Twin&) = delete;
    Twin& operator=(const Twin&) = delete;
    sqlite3* db() const { return db_; }

   private:
    sqlite3* db_;
  };
  std::unique_ptr<Twin> twin();

 private:
  bool schema_taken(const std::string& name);  // a trace of this session is attached under `name`

  sqlite3* db_ = nullptr;
  static int use_current_views(sqlite3* db);
  int stale_views_ = 0;
  bool saved_ = false;                   // main is a saved database file: never written to
  StoreRegistry stores_;                 // read by the connection's virtual tables: ~Session closes db_ first
  std::vector<CapturedGraph> captured_;  // from add_captures; their strings live in main's store
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> skipped_;  // skip_file: (check, why)
  // Per schema, the statements its loads write with (~Session drops them before closing db_).
  std::map<std::string, std::unique_ptr<TraceWriter>> writers_;
};

// Writes `trace_path` (loaded as trace 0 of `session`) to `out_path` with kernel_flop /
// kernel_num_gb added to the args of every kernel and op tlsql has numbers for.
void augment_trace(Session& session, const std::string& trace_path, const std::string& out_path);

// Registers tlsql's functions and modules on a connection (`stores` may be empty), and the
// report_NAME tables, whose errors give `hints` (the binary's by default).
void register_sql(sqlite3* db, StoreRegistry* stores, void (*destroy_stores)(void*) = nullptr,
                  const ReportHints& hints = shell_report_hints());

// True if `path` starts with the SQLite file header and no reader claims it (an Nsight Systems export
// is a trace to load): a database to open or attach.
bool is_sqlite_file(const std::string& path);
// The trace files `path` names: itself, or for a directory (one trace per rank, as
// torch.profiler's tensorboard_trace_handler writes them) its *.json and *.json.gz files in name
// order, not its subdirectories. Throws LoadError for a directory without any.
// A symbolic link in the directory is followed only to a file inside it that no other entry
// names: a link out of it would copy what it points to (~/.ssh, another project's trace) into a
// saved database, which travels, and a link to a sibling would load that trace twice. Each link
// skipped goes into `skipped` ("DIR/x.json: a link to a file outside the directory"); a link
// named itself (`tlsql DIR/x.json`) is the user's choice and loads.
std::vector<std::string> trace_files(const std::string& path, std::vector<std::string>* skipped = nullptr);
// Throws LoadError unless `name` may name a schema: letters, digits and _ (not first a digit), and
// not main / temp. Schema names are spliced into SQL text, so nothing else is let through.
void check_schema_name(const std::string& name);
// Throws LoadError naming `path` unless `schema` holds a database tlsql saved.
void require_tlsql_database(sqlite3* db, const std::string& schema, const std::string& path);
// A fleet database (`tlsql fleet`, docs/fleet.md): main holds a fleet_meta table. It holds per-rank
// summaries, no events; only the reports written for it ("fleet.db: " summaries) read it.
bool is_fleet_database(sqlite3* db);
// Throws LoadError naming `path` unless every fleet table `tlsql fleet` writes is a plain table.
void require_fleet_database(sqlite3* db, const std::string& path);

}  // namespace tlsql
