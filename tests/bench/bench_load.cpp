// Load benchmark: MB/s and peak RSS per stage (read, parse, tree, insert, index) for each trace,
// then the query latencies SPEC.md sets targets for. Not a test: it prints figures.
//   bench_load [--threads N] TRACE [TRACE...]
#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "session/session.h"
#include "src/readers/pipeline.h"

namespace {

// Peak resident set since the last reset, in MB (VmHWM; reset by writing 5 to clear_refs).
double peak_rss_mb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}
// User + system seconds of every thread of this process so far.
double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

double time_query(sqlite3* db, const std::string& sql) {
  auto t0 = std::chrono::steady_clock::now();
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr);
  while (sqlite3_step(s) == SQLITE_ROW) {
  }
  sqlite3_finalize(s);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string scalar(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr);
  std::string v =
      sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0) ? (const char*)sqlite3_column_text(s, 0) : "NULL";
  sqlite3_finalize(s);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: bench_load TRACE [TRACE...]\n");
    return 2;
  }
  int first = 1;
  if (argc > 3 && std::string(argv[1]) == "--threads") {  // bench_load --threads N TRACE...
    tlsql::set_load_threads(std::stoul(argv[2]));
    first = 3;
  }
  for (int a = first; a < argc; ++a) {
    tlsql::Session session;
    sqlite3* db = session.db();
    reset_peak();
    double stage_peak[4] = {}, stage_cpu[4] = {};
    int k = 0;
    tlsql::LoadStats st;
    const double cpu0 = cpu_seconds();
    try {
      tlsql::LoadOptions opt;
      opt.stage_done = [&](const char*) {
        stage_cpu[k] = cpu_seconds();
        stage_peak[k++] = peak_rss_mb();
        reset_peak();
      };
      st = session.load(argv[a], opt);
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}\n", e.what());
      return 1;
    }
    auto t0 = std::chrono::steady_clock::now();
    session.finish();
    double index_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double index_peak = peak_rss_mb();
    double mb = st.json_bytes / 1e6, total = st.total_s + index_s;
    fmt::print("{}: {:.1f} MB JSON ({:.1f} MB on disk), {} events\n", st.path, mb, st.file_bytes / 1e6, st.events);
    fmt::print("  {:<8} {:>8} {:>10} {:>14} {:>8}\n", "stage", "s", "MB/s", "peak RSS MB", "CPU s");
    const char* names[] = {"read", "parse", "tree", "insert"};
    double secs[] = {st.read_s, st.parse_s, st.tree_s, st.insert_s};
    // CPU seconds of the process (every thread) between the stages' ends; read and parse overlap
    // (the reader feeds the parse), so parse's is from read's end.
    for (int i = 0; i < 4; ++i)
      fmt::print("  {:<8} {:>8.3f} {:>10.0f} {:>14.0f} {:>8.3f}\n", names[i], secs[i], mb / secs[i], stage_peak[i],
                 stage_cpu[i] - (i ? stage_cpu[i - 1] : cpu0));
    fmt::print("  {:<8} {:>8.3f} {:>10.0f} {:>14.0f}\n", "index", index_s, mb / index_s, index_peak);
    fmt::print("  (of parse: {:.3f} s the scanner's own, serial work: {:.0f}% of the total)\n", st.scan_s,
               100 * st.scan_s / total);
    fmt::print("  (chunks: {}, {} of them read and counted by the parse threads; {} wrong guesses re-cut)\n", st.chunks,
               st.chunks_guessed, st.wrong_guesses);
    double peak = std::max({stage_peak[0], stage_peak[1], stage_peak[2], stage_peak[3], index_peak});
    fmt::print("  {:<8} {:>8.3f} {:>10.0f} {:>14.0f}   ({:.2f}x the JSON size)\n", "total", total, mb / total, peak,
               peak / mb);
    // Tree walks of one uid in the middle of the trace (until issue 4's table-valued functions
    // land, the same walks as recursive CTEs): each must cost O(answer), not O(trace).
    int64_t mid = st.events / 2;
    std::string kern = scalar(db, fmt::format("SELECT min(uid) FROM kernel WHERE uid >= {}", mid));
    std::string op = scalar(db, fmt::format("SELECT launcher FROM kernel WHERE uid = {}", kern));
    fmt::print("  query ms: count(*) FROM kernel {:.2f}\n", time_query(db, "SELECT count(*) FROM kernel"));
    fmt::print(
        "  query ms: children {:.3f}, ancestors {:.3f}, descendants {:.3f}, launched {:.3f}\n",
        time_query(db,
                   fmt::format("SELECT uid FROM event WHERE parent = (SELECT parent FROM event WHERE uid = {})", op)),
        time_query(db, fmt::format("WITH RECURSIVE a(u) AS (SELECT parent FROM event WHERE uid = {} UNION ALL "
                                   "SELECT e.parent FROM event e JOIN a ON e.uid = a.u) SELECT count(*) FROM a",
                                   kern)),
        time_query(db, fmt::format("WITH RECURSIVE d(u) AS (SELECT {} UNION ALL SELECT e.uid FROM event e "
                                   "JOIN d ON e.parent = d.u) SELECT count(*) FROM d",
                                   op)),
        time_query(db, fmt::format("WITH RECURSIVE d(u) AS (SELECT {} UNION ALL SELECT e.uid FROM event e "
                                   "JOIN d ON e.parent = d.u) SELECT count(*) FROM d JOIN event g ON g.uid = d.u "
                                   "WHERE g.kind IN ('kernel', 'memcpy', 'memset')",
                                   op)));
  }
  return 0;
}
