// .replay UID and .export-replay FILE.json|FILE.zip [WHERE ...]: the REPL side of replay (the
// work happens in the replay worker; see src/replay_client.h).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>

#include "repl/modules.h"
#include "repl/shell.h"
#include "repl/zip_bundle.h"
#include "src/output_file.h"
#include "src/sqlite_util.h"
#include "udf/replay/replay_client.h"
#include "udf/replay/replay_functions.h"

namespace tlsql {

using nlohmann::json;

namespace {

std::string us(double v) { return fmt::format("{:.2f} µs", v); }

const char* const kBundleReadme = R"(# Replay bundle written by tlsql

`replay_ir.json` holds the ops below in TraceLens's EventReplay IR: each entry is
`{"op_name", "replay_ir": {"list_pos_args", "list_kwargs"}, "count", "uids"}`, where every argument is
`{"arg_name", "arg_type", "value"}` and a tensor is `{"shape", "dtype", "strides", "init"}`. `count` is
how many ops of the trace had exactly this IR; `uids` names them in the trace (tlsql's event uid).

Replay every op alone, without the model:

    tlsql-replay replay_ir.json                  # cuda when LibTorch has a GPU, else cpu
    tlsql-replay replay_ir.json --device cuda --iters 200 --warmup 20 --filter 'addmm|conv'

Each op's tensors are made with empty_strided(shape, strides, dtype) and filled with random normal
values (integer tensors: random values in [0, smallest floating dimension), so indices stay valid);
scalars, lists and flags are the recorded values. tlsql-replay prints the arguments, the mean time
and a summary. TraceLens's own replay script reads the same file.

Ops:
)";

// Writes `data` to `path` atomically; `.zip` paths get a bundle with a README.
void write_output(const std::string& path, const std::string& ir_text, const std::string& listing) {
  bool zip_it = path.size() > 4 && path.compare(path.size() - 4, 4, ".zip") == 0;
  if (!zip_it) return write_file_atomic(path, ir_text);
  const auto write_zip = reinterpret_cast<WriteZip>(module_symbol(kZipLibrary, kZipEntry, "a .zip bundle"));
  TempFile tmp(path);
  const std::string readme = kBundleReadme + listing;
  write_zip(tmp.path(), {{"replay_ir.json", ir_text}, {"README.md", readme}}, path);
  tmp.commit();
}

}  // namespace

void Shell::replay_command(int64_t uid, const std::string& device, int iters, int warmup) {
  std::string why;
  auto ir = replay_ir_of(db(), "main", uid, why);
  if (!ir) throw std::runtime_error(fmt::format(".replay {}: {}", uid, why));
  // Before a replay that may take minutes: where it runs, and on a CPU that it will be slow (an op
  // the trace shows at 10 µs on a GPU can take a minute there, most of it in the warm-up).
  std::string on = device;
  if (on.empty()) {
    json d = ReplayClient::instance().request({{"op", "device"}});
    on = d.value("device", "");
  }
  if (!quiet && on == "cpu")
    say(stderr,
        fmt::format("replaying {} (uid {}) on CPU{}: expect it to be much slower than on a GPU ({} warm-up + {} "
                    "iterations; .replay UID cpu N W sets them; Ctrl-C stops it)\n",
                    (*ir)["op_name"].get<std::string>(), uid, device.empty() ? " (this LibTorch has no CUDA)" : "",
                    warmup, iters));
  const auto t0 = std::chrono::steady_clock::now();
  // On a terminal, a progress line while it runs (rewritten in place, cleared at the end).
  const bool show = !quiet && isatty(STDERR_FILENO);
  auto progress = [&](int done, int total) {
    if (!show) return;
    std::fputs("\r", stderr);  // (the line's own control character; the op name goes through say)
    say(stderr, fmt::format("  {}: {} of {} calls", (*ir)["op_name"].get<std::string>(), done, total));
  };
  json r = ReplayClient::instance().request(
      {{"op", "run"}, {"ir", *ir}, {"device", device}, {"warmup", warmup}, {"iters", iters}}, 600, progress);
  if (show) fmt::print(stderr, "\r\033[K");
  if (!r.value("ok", false)) throw std::runtime_error(fmt::format(".replay {}: {}", uid, r.value("error", "")));
  emit(fmt::format("{} (uid {}) replayed on {} ({}), {} iterations after {} warm-up\n{}",
                   (*ir)["op_name"].get<std::string>(), uid, r.value("device", ""), r.value("timer", ""), iters, warmup,
                   r.value("arguments", "")));
  std::string shapes;
  for (const auto& s : r["output_shapes"]) shapes += (shapes.empty() ? "" : ", ") + s.dump();
  emit(fmt::format("Output shapes: {}\n", shapes.empty() ? "(none)" : shapes));
  emit(fmt::format("Replayed: mean {}, median {}, min {} ({:.1f} s in all)\n", us(r["mean_us"].get<double>()),
                   us(r["median_us"].get<double>()), us(r["min_us"].get<double>()),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
  Statement s(db(), "SELECT gpu_time(?1), (SELECT count(*) FROM launched(?1)), dur FROM event WHERE uid = ?1");
  sqlite3_bind_int64(s.get(), 1, uid);
  if (s.step()) {
    int64_t kernels = sqlite3_column_int64(s.get(), 1);
    std::string gpu =
        kernels ? fmt::format("GPU time {} ({} GPU events), ", us(sqlite3_column_double(s.get(), 0) / 1e3), kernels)
                : std::string("no GPU work, ");
    emit(fmt::format("Traced:   {}CPU duration {}\n", gpu, us(sqlite3_column_double(s.get(), 2) / 1e3)));
  }
}

void Shell::export_replay(const std::string& path, const std::string& where) {
  std::string sql = "SELECT uid FROM op WHERE " +
                    (where.empty() ? std::string("uid IN (SELECT uid FROM counted_op)") : "(" + where + ")") +
                    " ORDER BY uid";
  Statement s(db(), sql);
  std::vector<int64_t> uids;
  while (s.step()) uids.push_back(sqlite3_column_int64(s.get(), 0));
  std::vector<json> entries;
  std::map<std::string, size_t> index;
  std::map<std::string, int> skipped;  // reason -> ops
  for (int64_t uid : uids) {
    std::string why;
    auto ir = replay_ir_of(db(), "main", uid, why);
    if (!ir) {
      ++skipped[why.substr(0, why.find(';'))];
      continue;
    }
    std::string key = ir->dump();
    auto [it, fresh] = index.emplace(key, entries.size());
    if (fresh) {
      (*ir)["count"] = 0;
      (*ir)["uids"] = json::array();
      entries.push_back(*ir);
    }
    json& e = entries[it->second];
    e["count"] = e["count"].get<int>() + 1;
    e["uids"].push_back(uid);
  }
  std::string listing;
  for (const auto& e : entries)
    listing += fmt::format("- {} ×{} (uid {})\n", e["op_name"].get<std::string>(), e["count"].get<int>(),
                           e["uids"][0].get<int64_t>());
  std::string text = "[\n";  // one op per line
  for (size_t i = 0; i < entries.size(); ++i) text += entries[i].dump() + (i + 1 < entries.size() ? ",\n" : "\n");
  write_output(path, text + "]\n", listing);
  int n_skipped = 0;
  for (auto& [why, n] : skipped) n_skipped += n;
  say(stderr,
      fmt::format("wrote {}: {} distinct ops from {} ops; {} skipped\n", path, entries.size(), uids.size(), n_skipped));
  for (auto& [why, n] : skipped) say(stderr, fmt::format("  {} skipped: {}\n", n, why));
}

}  // namespace tlsql
