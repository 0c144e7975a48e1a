// tlsql: load PyTorch profiler traces into SQLite and answer SQL about them.
#include <fmt/format.h>
#include <malloc.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string_view>
#include <tuple>

#include "repl/shell.h"
#include "session/session.h"
#include "src/event_store.h"
#include "src/input.h"
#include "src/output_file.h"
#include "src/readers/pipeline.h"

#if defined(__SANITIZE_ADDRESS__)
// LeakSanitizer (the sanitizer build): fontconfig, which cairo's text goes through, keeps its
// font cache for the life of the process and never frees it. Nothing of tlsql's is suppressed.
extern "C" const char* __lsan_default_suppressions() { return "leak:libfontconfig.so\n"; }
extern "C" const char* __lsan_default_options() { return "print_suppressions=0"; }
#endif

namespace {

// A GB load writes ~2 GB of fresh memory (the store, its text, the perf arrays) once, page by
// page: on 4 KiB pages the kernel's page faults take a quarter of the load and most of a report's
// time after it (docs/performance.md, "Huge pages", has the measurements).
// Where transparent huge pages are given only on request ("madvise", the common default), glibc
// requests them for its large allocations when the tunable glibc.malloc.hugetlb=1 is set, and
// tunables are read only at startup: so the process starts itself once more with it set. A
// GLIBC_TUNABLES that already names hugetlb (hugetlb=0 turns this off) is left as the user set it;
// when /proc/self/exe cannot be run, tlsql goes on as it is.
// Only when the traces the command loads (its TRACE arguments, the files tlsql loads from a
// folder, --diff, --capture) hold kHugeFrom bytes or more, or one is a stream (a pipe or FIFO:
// `<(zcat big.json.gz)`, whose size is not known): glibc's huge pages round its heaps and partly
// used blocks up to 2 MiB, a fixed 1-6 MiB that is a small input's largest cost past its rows (a
// 24 MB Nsight export saved: peak 72.5-72.8 MiB without, 73.4-78.1 with, its .db 73.1 MiB),
// while the faults they save grow with the input (on this VM a few ms at that size; where 4 KiB
// faults are dear, 1-3.5 s per fresh GB measured, up to ~0.1-0.3 s). A large trace opened later
// from the prompt gets 4 KiB pages; GLIBC_TUNABLES=glibc.malloc.hugetlb=1 gives huge pages always.
constexpr uint64_t kHugeFrom = 32u << 20;
bool large_input(const std::vector<std::string>& paths) {
  uint64_t sum = 0;
  for (const std::string& path : paths) {
    if (path.empty()) continue;
    std::vector<std::string> files;
    try {
      files = tlsql::trace_files(path);  // (a folder: the traces tlsql loads from it)
    } catch (const std::exception&) {
      continue;  // (the load says why)
    }
    for (const std::string& f : files) {
      const std::optional<uint64_t> bytes = tlsql::estimated_input_bytes(f);
      if (!bytes) return true;
      if ((sum += *bytes) >= kHugeFrom) return true;
    }
  }
  return false;
}
void restart_with_huge_pages(char** argv, const std::vector<std::string>& inputs) {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(thp, modes);
  if (modes.find("[madvise]") == std::string::npos) return;  // "always" gives them anyway, "never" never
  const char* old = getenv("GLIBC_TUNABLES");
  std::string tunables = old ? old : "";
  if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) return;
  if (!large_input(inputs)) return;  // (after the cheap checks: the restarted process stops above)
  tunables += std::string(tunables.empty() ? "" : ":") + "glibc.malloc.hugetlb=1";
  if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Not restarted: nothing changes but the environment, which is put back.
  if (old)
    setenv("GLIBC_TUNABLES", old, 1);
  else
    unsetenv("GLIBC_TUNABLES");
}

// malloc's settings for a load's memory (docs/performance.md, twelfth and twenty-second sections),
// each left as it is where the user set it (GLIBC_TUNABLES, or glibc's older MALLOC_..._ variables):
// - One arena for every thread. The load's stages run on its threads in turn (the parse, the tree
//   stage, the perf pass), and with an arena per thread the scratch one stage freed on a worker's
//   arena was neither given back nor reused by the next stage's allocations on another: resident
//   twice, and every page of the new allocations a fresh fault. The threads' hot loops do not
//   allocate (~0.06 mallocs an event on the 200 MB control), so one arena's lock costs nothing
//   measurable; the 200 MB control's load took 12,000 faults with an arena a thread, 2,500 with one.
// - A fixed mmap threshold. glibc raises it to the size of each large block freed (up to 32 MiB),
//   after which blocks of that size stay in the heap once freed; fixed, every block over it is a
//   mapping of its own, given back when freed: glibc's starting 128 KiB, for the least memory. For a
//   large load (the process restarted with malloc's huge pages, above, or the user asked for them) 4
//   MiB: at 128 KiB every scratch array of a few MB of the tree stage and the perf pass was a fresh
//   mapping, each 4 KiB page of it a fault (~10-15 us each on a VM); at 4 MiB they are reused from
//   the heap, stage after stage. A small input's faults are a few ms, and its peak is what counts.
// - The store's args blocks take 2 MiB pages where malloc does (src/event_store.h).
void tune_memory() {
  const char* tunables = getenv("GLIBC_TUNABLES");
  auto user_set = [&](const char* tunable, const char* variable) {
    return (tunables && std::strstr(tunables, tunable)) || getenv(variable);
  };
  // malloc takes huge pages where the last hugetlb named holds a number over 0 (glibc reads an
  // empty or malformed value as 0)
  bool huge = false;
  constexpr std::string_view kHugetlb = "glibc.malloc.hugetlb=";
  std::string_view rest = tunables ? tunables : "";
  while (!rest.empty()) {
    const size_t colon = std::min(rest.find(':'), rest.size());
    const std::string_view one = rest.substr(0, colon);
    rest.remove_prefix(std::min(colon + 1, rest.size()));
    if (one.substr(0, kHugetlb.size()) != kHugetlb) continue;
    const std::string_view value = one.substr(kHugetlb.size());
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    huge = ec == std::errc() && end == value.data() + value.size() && n > 0;
  }
  tlsql::TextArena::use_huge_pages(huge);
  if (!user_set("glibc.malloc.arena_max", "MALLOC_ARENA_MAX")) mallopt(M_ARENA_MAX, 1);
  if (!user_set("glibc.malloc.mmap_threshold", "MALLOC_MMAP_THRESHOLD_"))
    mallopt(M_MMAP_THRESHOLD, huge ? 4 << 20 : 128 << 10);
}

// `tlsql fleet ...` (docs/fleet.md): the fleet layer is Python on Dask (Debian's python3-distributed,
// so Debian's /usr/bin/python3, not whatever python3 comes first on PATH). Its workers run this
// binary on each rank, so it gets this binary's path. The script is found from where the binary
// is: installed (PREFIX/bin/tlsql -> PREFIX/share/tlsql/fleet) or in a build tree (the source's).
int run_fleet(int argc, char** argv) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    fmt::print(stderr, "tlsql fleet: error: cannot find this binary's path: {}\n", ec.message());
    return 1;
  }
  std::string script;
  for (const std::filesystem::path& p : {self.parent_path().parent_path() / TLSQL_FLEET_INSTALLED / "tlsql_fleet.py",
                                         std::filesystem::path(TLSQL_SOURCE_DIR) / "fleet" / "tlsql_fleet.py"})
    if (std::filesystem::is_regular_file(p, ec)) {
      script = p.string();
      break;
    }
  if (script.empty()) {
    fmt::print(stderr, "tlsql fleet: error: fleet/tlsql_fleet.py is neither installed beside {} nor in {}\n",
               self.string(), TLSQL_SOURCE_DIR);
    return 1;
  }
  std::vector<std::string> args = {"/usr/bin/python3", script, "--tlsql", self.string()};
  for (int i = 2; i < argc; ++i) args.emplace_back(argv[i]);
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  execv(cargs[0], cargs.data());
  fmt::print(stderr, "tlsql fleet: error: cannot run /usr/bin/python3: {} (apt-get install python3-distributed)\n",
             strerror(errno));
  return 1;
}

// What the process is doing, for the one line a bad_alloc gets (main).
const char* doing = "starting";

int tlsql_main(int argc, char** argv) {
  CLI::App app{
      "tlsql: SQL over PyTorch profiler traces (Kineto JSON, .json or .json.gz; rocprofv3 JSON; Nsight Systems "
      "SQLite exports; or a saved .db)"};
  app.set_version_flag("--version", "tlsql " TLSQL_VERSION);
  std::vector<std::string> traces, commands, scripts, reports, captures;
  std::string out_db, augment, diff, html, overlay, models, rules;
  bool bail = false, quiet = false;
  std::string mode_flag;
  app.add_option("TRACE", traces,
                 "trace files (Kineto .json / .json.gz, rocprofv3 *_results.json, nsys .sqlite exports), directories "
                 "of them (one trace per rank), or one saved .db");
  auto* c_opt = app.add_option("-c", commands, "run SQL (statements and dot-commands) and exit; may be repeated")
                    ->allow_extra_args(false);
  auto* f_opt = app.add_option("-f", scripts, "run a script file and exit; may be repeated (-c and -f run in order)")
                    ->allow_extra_args(false)
                    ->check(CLI::ExistingFile);
  auto* o_opt =
      app.add_option("-o", out_db, "save the loaded database to FILE.db (reopen it later with `tlsql FILE.db`)");
  app.add_option("--report", reports, "run a canned report and exit (--report list: what there is); may be repeated")
      ->allow_extra_args(false);
  app.add_option("--diff", diff,
                 "load OTHER (a trace or saved .db) as schema `other` and run the diff report (or --report NAME)");
  app.add_option("--capture", captures,
                 "a trace recorded while CUDA / HIP graphs were captured, or a folder of them (vLLM, SGLang; "
                 "TraceLens's execution_details.json read when there): graph replays in TRACE are attributed to the "
                 "ops that captured them (docs/inference.md); may be repeated")
      ->allow_extra_args(false);
  auto* augment_opt =
      app.add_option("--augment", augment,
                     "write the trace to FILE.json with kernel_flop / kernel_num_gb in the args of each kernel and op");
  auto* html_opt =
      app.add_option("--html", html,
                     "write a self-contained HTML report (summary, timeline, ops, kernels, roofline and timeline "
                     "pictures; with --diff the diff) to FILE and exit");
  auto* overlay_opt = app.add_option(
      "--overlay", overlay,
      "write the trace to FILE.json with its critical path marked, for Perfetto (after -c / -f: "
      "@annotation, @instance, @rank as the critical_path report takes them; @counters "
      "'queue_length,memory_bw' or 'all' adds those counter tracks, @critical_path 0 leaves the path out)");
  app.add_option("--models", models,
                 "run FILE's SQL first: rows of perf_model_user, your own FLOPs / bytes formulas per op name "
                 "(docs/perf_models.md)")
      ->check(CLI::ExistingFile);
  app.add_option("--rules", rules,
                 "run FILE's SQL after loading, before -o saves: rows of kernel_rule, your own kernel classes "
                 "(docs/reports.md \"Kernel classes\"); they travel in the saved database")
      ->check(CLI::ExistingFile);
  app.add_flag("--bail", bail, "stop at the first error");
  app.add_flag("-q", quiet, "no banner or load summary");
  for (const std::string& m : tlsql::mode_names())
    if (m != "html")  // (--html FILE writes the HTML report; `.mode html` prints table rows)
      app.add_flag_callback(
          "--" + m, [&mode_flag, m] { mode_flag = m; }, "output mode " + m);
  size_t threads = 0;
  auto* threads_opt =
      app.add_option("--threads", threads,
                     "threads that read a trace (default: every CPU tlsql may run on; fewer on a shared machine)")
          ->check(CLI::Range(size_t{1}, size_t{1024}));
  int wrap = 0;
  app.add_option("--wrap", wrap, "aligned modes: wrap cells wider than N columns (0: only to fit the terminal)")
      ->check(CLI::NonNegativeNumber);
  app.footer(
      "Default output: box on a terminal, csv when piped. With no -c/-f, SQL is read from stdin when it\n"
      "is not a terminal, else an interactive prompt opens. Exit code 1 if loading or any statement failed.\n"
      "tlsql fleet RANKS... -o fleet.db: one rank per Dask task, their summaries in fleet.db (tlsql fleet --help).");
  // Help and --version exit 0; any other argument error is one line and exit 1, like every error.
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    tlsql::say(stderr, fmt::format("tlsql: error: {} (tlsql --help)\n", e.what()));
    return 1;
  }

  if (threads_opt->count()) tlsql::set_load_threads(threads);

  // An output option given names a file, even an empty name: `-o ""` is an error (refuse_input
  // says so), not an option left out.
  const bool save = o_opt->count() > 0, write_augment = augment_opt->count() > 0, write_html = html_opt->count() > 0,
             write_overlay = overlay_opt->count() > 0;
  const bool tty_in = isatty(STDIN_FILENO), tty_out = isatty(STDOUT_FILENO);
  bool open_saved = traces.size() == 1 && tlsql::is_sqlite_file(traces[0]);
  for (size_t i = 0; i < traces.size() && !open_saved; ++i)
    if (tlsql::is_sqlite_file(traces[i])) {
      tlsql::say(stderr,
                 fmt::format("tlsql: error: {}: a saved database can only be opened on its own, not with traces\n",
                             traces[i]));
      return 1;
    }

  std::vector<std::string> inputs = traces;
  inputs.push_back(diff);
  inputs.insert(inputs.end(), captures.begin(), captures.end());
  restart_with_huge_pages(argv, inputs);
  tlsql::Shell shell;
  shell.quiet = quiet;
  auto read_file = [&shell](const std::string& path) {
    try {
      return tlsql::read_input_file(path);
    } catch (const std::bad_alloc&) {
      throw;  // (one line from main's own catch: "out of memory while ...")
    } catch (const std::exception& e) {
      shell.complain(e.what());
      return std::string();
    }
  };
  doing = "loading the traces";
  try {
    shell.session = std::make_unique<tlsql::Session>(open_saved ? traces[0] : "");
    if (int n = shell.session->stale_views())
      fmt::print(stderr,
                 "tlsql: {}: saved by another tlsql build: {} of its definitions (views, health's columns) differ "
                 "from this build's, which this session uses instead (the file is unchanged; load the trace again "
                 "with -o to update it)\n",
                 traces[0], n);
    for (const std::string& c : captures) shell.session->add_captures(c);
    if (!open_saved) {
      tlsql::ReadBuffers reuse;  // (the traces load one after another: see Shell::load)
      for (const std::string& path : traces) shell.load(path, "main", traces.size() > 1 ? &reuse : nullptr);
    }
    shell.session->finish();
    if (!diff.empty()) {
      if (tlsql::is_sqlite_file(diff))
        shell.session->attach(diff, "other");
      else
        shell.attach_trace(diff, "other");
    }
    if (!rules.empty()) {  // after the load, before the save: the rules travel in the database
      shell.run_script(read_file(rules), rules);
      if (shell.failed()) {
        shell.close_output();
        return 1;
      }
    }
    if (save) shell.save(out_db);
    if (write_augment) {
      if (traces.size() != 1 || open_saved) throw std::runtime_error("--augment takes exactly one trace file");
      tlsql::augment_trace(*shell.session, traces[0], augment);
    }
  } catch (const std::bad_alloc&) {
    throw;  // (main says it)
  } catch (const std::exception& e) {
    tlsql::say(stderr, fmt::format("tlsql: error: {}\n", e.what()));  // (load errors quote file names)
    return 1;
  }

  shell.output.mode = tty_out ? tlsql::OutputMode::box : tlsql::OutputMode::csv;
  if (!mode_flag.empty()) shell.output.mode = *tlsql::parse_mode(mode_flag);
  shell.output.wrap = wrap;
  shell.bail = bail;

  doing = "running the SQL";
  if (!models.empty()) {  // before anything reads a perf number; a formula that fails stops the run
    std::string text;
    try {
      text = tlsql::read_sidecar(models, "a --models file (perf_model_user rows)");
    } catch (const tlsql::LoadError& e) {
      fmt::print(stderr, "tlsql: error: {}\n", e.what());
      return 1;
    }
    shell.run_script(text, models);
    if (shell.failed()) {
      shell.close_output();
      return 1;
    }
  }
  // -c and -f in the order they came on the command line, then the reports: --report each,
  // and with --diff and nothing else to run, the diff report (what --diff promises).
  std::vector<std::pair<std::string, std::string>> runs;  // (text, source)
  size_t next_c = 0, next_f = 0;
  for (const CLI::Option* o : app.parse_order()) {
    if (o == c_opt && next_c < commands.size()) runs.emplace_back(commands[next_c++], "-c");
    if (o == f_opt && next_f < scripts.size()) {
      runs.emplace_back(read_file(scripts[next_f]), scripts[next_f]);
      ++next_f;
    }
  }
  if (!diff.empty() && runs.empty() && reports.empty() && !write_html) reports.push_back("diff");
  for (const std::string& r : reports) runs.emplace_back(r == "list" ? ".reports" : ".report " + r, "--report");

  bool batch = !runs.empty() || write_html || write_overlay;
  for (const auto& [text, source] : runs) {
    if (shell.stop()) break;
    shell.run_script(text, source);
  }
  // The files written after the runs: the HTML report, the overlaid trace.
  for (auto [file, given, write] : {std::tuple{&html, write_html, &tlsql::Shell::html_command},
                                    {&overlay, write_overlay, &tlsql::Shell::overlay_command}}) {
    if (!given || shell.stop()) continue;
    // The overlay draws the path the critical_path report asked for with the same parameters:
    // when that report failed, its error has been said, and there is nothing to draw.
    if (file == &overlay && shell.report_failed("critical_path")) continue;
    doing = file == &html ? "writing the HTML report" : "writing the overlay";
    try {
      (shell.*write)(*file);
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      tlsql::say(stderr, fmt::format("tlsql: error: {}\n", e.what()));
      return 1;
    }
  }
  if (!batch) {
    if (tty_in) {
      shell.interactive();
    } else if (save && !traces.empty() && std::cin.peek() == EOF) {
      // `tlsql trace.json -o trace.db < /dev/null`: nothing to run.
    } else {
      std::stringstream ss;
      ss << std::cin.rdbuf();
      shell.run_script(ss.str(), "-");
    }
  }
  shell.close_output();
  return shell.exit_code();
}

}  // namespace

// Every exception ends here as one line and exit 1, never std::terminate's abort: a bad_alloc (a
// memory or address-space limit reached: `ulimit -v`, a cgroup) says what was being done.
int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "fleet") return run_fleet(argc, argv);
  tune_memory();
  try {
    return tlsql_main(argc, argv);
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "tlsql: error: out of memory while {}\n", doing);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tlsql: error: {}\n", e.what());
  }
  return 1;
}
